//! `ndvm vm` end to end: the built binary on the workload files and on temporary files.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

const VM_EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/vm");

fn example(name: &str) -> String {
    format!("{VM_EXAMPLES}/{name}")
}

/// A file in this test process's own temporary directory (named by its process id).
fn tmp_file(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ndvm-cli-vm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_string()
}

fn ndvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .arg("vm")
        .args(args)
        .output()
        .expect("the ndvm binary runs")
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = ndvm(&all);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("valid JSON")
}

fn num(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
fn the_four_workloads() {
    let w1 = json(&[
        &example("w1.asm"),
        "--bind=a=0.3",
        "--bind=x=1.5",
        "--bind=w=2",
        "--bind=b=0.7",
        "--grad",
    ]);
    assert!((num(&w1["value"][0]) - 0.068753).abs() < 5e-7);
    assert_eq!(num(&w1["grad"]["b"][0]), 1.0);
    let w2 = json(&[
        &example("w2.asm"),
        "--bind=x0=0.4",
        "--bind=r=3.2",
        "--grad=r",
    ]);
    assert!((num(&w2["value"][0]) - 0.513102).abs() < 5e-7);
    assert!(w2["grad"]["x0"].is_null());
    let w3 = json(&[
        &example("w3.asm"),
        "--bind=g=1",
        "--bind=a=2",
        "--bind=x=1.5",
        "--bind=b=3",
        "--grad",
    ]);
    assert_eq!(num(&w3["value"][0]), 3.0);
    assert_eq!(num(&w3["grad"]["x"][0]), 2.0);
    let w4 = json(&[
        &example("w4.asm"),
        "--bind=m0=[1,2,-1]",
        "--bind=m1=[.5,-.5,2]",
        "--bind=m2=[-1,1,.5]",
        "--bind=v=[1,.5,-2]",
        "--grad=v",
    ]);
    assert_eq!(num(&w4["value"][0]), -1.25);
    assert_eq!(w4["grad"]["v"][0], serde_json::json!([0.5, 2.5, 1.5]));
}

#[test]
fn lanes_from_a_file_diverge_per_lane() {
    let lanes = tmp_file("w3_lanes.csv", "g,x\n1,1.5\n0,1.5\n1,0\n0,3\n");
    let out = json(&[
        &example("w3.asm"),
        "--lanes",
        &lanes,
        "--bind=a=2",
        "--bind=b=3",
        "--grad",
        "--precision",
        "f32",
    ]);
    assert_eq!(out["lanes"], 4);
    assert_eq!(out["value"], serde_json::json!([3.0, 2.0, 0.0, 1.0]));
    assert_eq!(out["grad"]["a"], serde_json::json!([1.5, 0.0, 0.0, 0.0]));
    assert_eq!(num(&out["grad_sum"]["a"]), 1.5);
    let text = ndvm(&[
        &example("w3.asm"),
        "--lanes",
        &lanes,
        "--bind=a=2",
        "--bind=b=3",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("4 lanes; 0 failed"), "{text}");
}

#[test]
fn errors_show_where_and_exit_1_or_2() {
    let bad = tmp_file("bad.asm", "load x\n  exp\nmull\n");
    let out = ndvm(&[&bad, "--bind=x=1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.asm:3:1: unknown instruction `mull`"),
        "{err}"
    );
    assert!(err.contains("    3 | mull"), "{err}");

    let shape = tmp_file("shape.asm", "load u\nload x\ndot\n");
    let out = ndvm(&[&shape, "--bind=u=[1,2]", "--bind=x=3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shape.asm:3:1: `dot`: needs two vectors"),
        "{err}"
    );

    let out = ndvm(&[&shape, "--bind=u=[1,2]"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("input `x` is not bound"));

    let out = ndvm(&[&example("w1.asm"), "--bind=a=1", "--grad=zz"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ndvm(&[&example("nope.asm")]);
    assert_eq!(out.status.code(), Some(2));
    let out = ndvm(&[&shape, "--bind=u=[1,"]);
    assert_eq!(out.status.code(), Some(2));

    let forever = tmp_file(
        "forever.asm",
        "push 1\nloop 4294967295\nloop 4294967295\nend\nend\n",
    );
    let out = ndvm(&[&forever, "--max-steps", "1000"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step limit of 1000 instructions"), "{err}");
}
