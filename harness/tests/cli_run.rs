//! `ndvm run` end to end: the built binary on temporary files.

mod common;
use common::Tmp;

use serde_json::Value;
use std::process::{Command, Output};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");

fn ndvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .arg("run")
        .args(args)
        .output()
        .expect("the ndvm binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs and expects exit 0 and JSON on stdout.
fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = ndvm(&all);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("valid JSON")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn scalar_with_every_gradient_in_text() {
    let t = Tmp::new("cli-run");
    let p = t.file("lin.scm", "(+ (* alpha x) beta)\n");
    let out = ndvm(&[
        &p, "--bind", "alpha=2", "--bind", "x=1.5", "--bind", "beta=1", "--grad",
    ]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        ["value: 4", "d/dalpha: 1.5", "d/dx: 2", "d/dbeta: 1"]
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn scalar_with_every_gradient_in_json() {
    let t = Tmp::new("cli-run");
    let p = t.file("lin.scm", "(+ (* alpha x) beta)\n");
    let v = json(&[
        &p, "--bind", "alpha=2", "--bind", "x=1.5", "--bind", "beta=1", "--grad",
    ]);
    assert_eq!(v["lanes"], 1);
    assert_eq!(num(&v["value"][0]), 4.0);
    assert_eq!(num(&v["grad"]["alpha"][0]), 1.5);
    assert_eq!(num(&v["grad"]["beta"][0]), 1.0);
    assert_eq!(num(&v["grad"]["x"][0]), 2.0);
    assert_eq!(num(&v["grad_sum"]["alpha"]), 1.5);
    assert_eq!(v["lane_errors"], serde_json::json!([null]));
    // Some names only; without --grad, none.
    let v = json(&[
        &p, "--bind", "alpha=2", "--bind", "x=1.5", "--bind", "beta=1", "--grad=x",
    ]);
    assert_eq!(v["grad"].as_object().unwrap().len(), 1);
    let v = json(&[
        &p, "--bind", "alpha=2", "--bind", "x=1.5", "--bind", "beta=1",
    ]);
    assert!(v["grad"].as_object().unwrap().is_empty());
}

#[test]
fn lanes_from_csv() {
    let t = Tmp::new("cli-run");
    let p = t.file("lin.scm", "(+ (* alpha x) beta)");
    let lanes = t.file("lanes.csv", "x,alpha\n1,2\n-1,3\n2.5,4\n");
    let v = json(&[&p, "--lanes", &lanes, "--bind", "beta=1", "--grad"]);
    assert_eq!(v["lanes"], 3);
    let values: Vec<f64> = v["value"].as_array().unwrap().iter().map(num).collect();
    assert_eq!(values, [3.0, -2.0, 11.0]);
    let dx: Vec<f64> = v["grad"]["x"].as_array().unwrap().iter().map(num).collect();
    assert_eq!(dx, [2.0, 3.0, 4.0]);
    assert_eq!(num(&v["grad_sum"]["beta"]), 3.0);

    let out = ndvm(&[&p, "--lanes", &lanes, "--bind", "beta=1", "--grad=beta"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with("lane  value  d/dbeta\n0     3      1\n"),
        "{text}"
    );
    assert!(text.contains("3 lanes; 0 failed"), "{text}");
    assert!(text.contains("d/dbeta summed over lanes: 3"), "{text}");
}

#[test]
fn kalman_with_a_matrix_from_csv() {
    let prog = format!("{EXAMPLES}/kalman2d_T80.scm");
    let obs = format!("obs=@{EXAMPLES}/kalman2d_obs.csv");
    let args: Vec<&str> = vec![
        &prog, "--bind", "q=0.05", "--bind", "r=0.1", "--bind", &obs, "--grad", "q,r",
    ];
    let v = json(&args);
    assert!(close(num(&v["value"][0]), 831.2209637, 1e-6), "{v}");
    assert!(close(num(&v["grad"]["q"][0]), -3458.669, 1e-6), "{v}");
    assert!(close(num(&v["grad"]["r"][0]), -7529.31, 1e-6), "{v}");

    let out = ndvm(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("value: 831.22096"),
        "{}",
        stdout(&out)
    );

    // Every input, including the matrix: one 80x2 array per lane.
    let mut all = args[..7].to_vec();
    all.push("--grad");
    let v = json(&all);
    let g = &v["grad"]["obs"][0];
    assert_eq!(g.as_array().unwrap().len(), 80);
    assert_eq!(g[0].as_array().unwrap().len(), 2);
    assert_eq!(v["grad_sum"]["obs"], *g);
}

#[test]
fn single_precision() {
    let prog = format!("{EXAMPLES}/kalman2d_T80.scm");
    let obs = format!("obs=@{EXAMPLES}/kalman2d_obs.csv");
    let v = json(&[
        &prog,
        "--bind",
        "q=0.05",
        "--bind",
        "r=0.1",
        "--bind",
        &obs,
        "--grad",
        "q,r",
        "--precision",
        "f32",
    ]);
    assert!(close(num(&v["value"][0]), 831.2209637, 1e-4), "{v}");
    assert!(close(num(&v["grad"]["q"][0]), -3458.669, 1e-3), "{v}");
    let t = Tmp::new("cli-run");
    let p = t.file("tenth.scm", "(* 0.1 x)");
    let out = ndvm(&[&p, "--bind", "x=1", "--precision", "f32", "--grad"]);
    assert_eq!(stdout(&out), "value: 0.1\nd/dx: 0.1\n");
}

#[test]
fn non_finite_and_protected_ops_in_json() {
    let t = Tmp::new("cli-run");
    let inf = t.file("inf.scm", "(/ 1.0 0.0)");
    assert_eq!(json(&[&inf])["value"][0], "inf");
    let ninf = t.file("ninf.scm", "(/ -1.0 0.0)");
    assert_eq!(json(&[&ninf])["value"][0], "-inf");
    let nan = t.file("nan.scm", "(sqrt (- 0 1.0))");
    assert_eq!(json(&[&nan])["value"][0], "nan");
    let protected = json(&[&nan, "--protected-ops"]);
    assert!(
        close(num(&protected["value"][0]), 1e-4, 1e-12),
        "{protected}"
    );
    let out = ndvm(&[&nan]);
    assert_eq!(stdout(&out), "value: +nan.0\n");
}

#[test]
fn non_numeric_result_prints_as_scheme() {
    let t = Tmp::new("cli-run");
    let p = t.file("list.scm", "(list 1 'a)");
    assert_eq!(json(&[&p])["value"][0], "(1 a)");
    assert_eq!(stdout(&ndvm(&[&p])), "value: (1 a)\n");
    let v = t.file("vec.scm", "(vec 1 x 2.5)");
    assert_eq!(
        json(&[&v, "--bind", "x=-3"])["value"],
        serde_json::json!([[1.0, -3.0, 2.5]])
    );
}

#[test]
fn program_error_points_at_the_source() {
    let t = Tmp::new("cli-run");
    let p = t.file("bad.scm", "(+ 1\n   (frobnicate 2 3))\n");
    let out = ndvm(&[&p]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: unknown operator `frobnicate`"),
        "{err}"
    );
    assert!(err.contains(&format!("{p}:2:5")), "{err}");
    assert!(err.contains("   (frobnicate 2 3))"), "{err}");
    assert!(err.contains("    ^^^^^^^^^^\n"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn runtime_error_on_every_lane_is_a_program_error() {
    let t = Tmp::new("cli-run");
    let p = t.file("car.scm", ";; a comment\n(car x)");
    let out = ndvm(&[&p, "--bind", "x=1", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{p}:2:1")),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn unbound_input_names_it() {
    let t = Tmp::new("cli-run");
    let p = t.file("lin.scm", "(+ (* alpha x) beta)");
    let out = ndvm(&[&p, "--bind", "alpha=2", "--bind", "beta=1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("unbound name `x`"), "{err}");
    assert!(err.contains(&format!("{p}:1:13")), "{err}");
}

#[test]
fn empty_program() {
    let t = Tmp::new("cli-run");
    let p = t.file("empty.scm", "  ;; nothing\n");
    let out = ndvm(&[&p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the program is empty"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn some_lanes_fail() {
    let t = Tmp::new("cli-run");
    let p = t.file("car.scm", "(if (< x 0) (car x) x)");
    let lanes = t.file("x.csv", "x\n1\n-1\n2\n");
    let v = json(&[&p, "--lanes", &lanes, "--grad"]);
    assert_eq!(v["value"][0], 1.0);
    assert_eq!(v["value"][1], Value::Null);
    assert_eq!(v["value"][2], 2.0);
    assert_eq!(v["grad"]["x"], serde_json::json!([1.0, null, 1.0]));
    assert_eq!(v["lane_errors"][0], Value::Null);
    assert_eq!(v["lane_errors"][2], Value::Null);
    let e = &v["lane_errors"][1];
    assert!(e["message"].as_str().unwrap().contains("car"), "{e}");
    assert_eq!(
        (e["line"].clone(), e["column"].clone()),
        (1.into(), 13.into())
    );

    let out = ndvm(&[&p, "--lanes", &lanes]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("\n1     error: `car` expects"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("warning: 1 of 3 lanes failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn long_tables_are_cut() {
    let t = Tmp::new("cli-run");
    let p = t.file("s.scm", "(if (< x 0) (car x) (* a x))");
    let mut csv = String::from("x\n");
    for i in 0..1000 {
        csv.push_str(&format!("{}\n", i as f64 - 3.0));
    }
    let lanes = t.file("x.csv", &csv);
    let out = ndvm(&[
        &p,
        "--lanes",
        &lanes,
        "--bind",
        "a=2",
        "--grad",
        "--lane-block",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1 + 10 + 1 + 5 + 2, "{text}");
    assert!(text.contains("\n... (985 lanes not shown)\n"), "{text}");
    assert!(text.contains("\n999   1992   2     996\n"), "{text}");
    assert!(text.contains("1000 lanes; 3 failed\n"), "{text}");
    let sum: f64 = (3..1000).map(|i| (i - 3) as f64).sum();
    assert!(
        text.contains(&format!(
            "d/da summed over the 997 lanes that succeeded: {sum}"
        )),
        "{text}"
    );
}

#[test]
fn matrices_from_csv_files() {
    let t = Tmp::new("cli-run");
    let p = t.file("m.scm", "m");
    let row = t.file("row.csv", "a,b,c\n1,2,3\n");
    assert_eq!(
        json(&[&p, "--bind", &format!("m=@{row}")])["value"],
        serde_json::json!([[[1.0, 2.0, 3.0]]])
    );
    let col = t.file("col.csv", "1\n2\n");
    assert_eq!(
        json(&[&p, "--bind", &format!("m=@{col}")])["value"],
        serde_json::json!([[[1.0], [2.0]]])
    );
    let bad = t.file("bad.csv", "1,2\n3,x\n");
    let out = ndvm(&[&p, "--bind", &format!("m=@{bad}")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("{bad}:2: column 2")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn usage_and_file_errors_exit_2() {
    let t = Tmp::new("cli-run");
    let p = t.file("lin.scm", "(+ (* alpha x) beta)");
    let lanes = t.file("x.csv", "x,alpha\n1,2\n3,oops\n");
    let good = t.file("good.csv", "x\n1\n2\n");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![t.0.join("missing.scm").display().to_string()],
            "cannot read",
        ),
        (
            vec![p.clone(), "--bind".into(), "x=abc".into()],
            "not a number",
        ),
        (
            vec![p.clone(), "--bind".into(), "x=@nope.csv".into()],
            "nope.csv",
        ),
        (
            vec![
                p.clone(),
                "--lanes".into(),
                lanes.clone(),
                "--bind".into(),
                "beta=1".into(),
            ],
            "lane 1, input `alpha`",
        ),
        (
            vec![
                p.clone(),
                "--lanes".into(),
                good.clone(),
                "--bind".into(),
                "x=1".into(),
            ],
            "bound both",
        ),
        (
            vec![
                p.clone(),
                "--bind".into(),
                "x=1".into(),
                "--bind".into(),
                "x=2".into(),
            ],
            "bound twice",
        ),
        (
            vec![
                p.clone(),
                "--bind".into(),
                "alpha=1".into(),
                "--bind".into(),
                "x=1".into(),
                "--bind".into(),
                "beta=1".into(),
                "--grad=zeta".into(),
            ],
            "zeta",
        ),
        (vec![p.clone(), "--precision".into(), "f16".into()], "f16"),
    ];
    for (args, needle) in cases {
        let out = ndvm(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn output_to_a_file() {
    let t = Tmp::new("cli-run");
    let p = t.file("one.scm", "(+ 1 2)");
    let dest = t.0.join("out.json");
    let out = ndvm(&[&p, "--format", "json", "--out", dest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&dest).unwrap()).unwrap();
    assert_eq!(v["value"][0], 3.0);
}

#[test]
fn ten_megabyte_program() {
    let t = Tmp::new("cli-run");
    let mut src = String::with_capacity(11 << 20);
    while src.len() < 6 << 20 {
        src.push_str(";; a long comment line that pads the file to several megabytes\n");
    }
    let mut i = 0;
    while src.len() < 10 << 20 {
        src.push_str(&format!("(define v{i} (* x {i}.0))\n"));
        i += 1;
    }
    src.push_str("v3\n(+ v7 (car x))");
    let p = t.file("big.scm", &src);
    let start = std::time::Instant::now();
    let out = ndvm(&[&p, "--bind", "x=2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let last = src.lines().count();
    assert!(err.contains(&format!("big.scm:{last}:7")), "{err}");
    assert!(err.lines().count() < 10, "{err}");
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
}

#[test]
fn every_lane_failing_differently_exits_1_with_the_results() {
    let t = Tmp::new("cli-run");
    let p = t.file("both.scm", "(if (< x 0) (car x) (cdr x))");
    let lanes = t.file("x.csv", "x\n-1\n1\n");
    let out = ndvm(&[&p, "--lanes", &lanes, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(v["lane_errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("car"));
    assert!(v["lane_errors"][1]["message"]
        .as_str()
        .unwrap()
        .contains("cdr"));
    assert!(stderr(&out).contains("every one of the 2 lanes failed"));
}
