//! Co-search replay of the paper's damped-oscillator stream: agreement with the reference fits,
//! byte-identical output for any thread count, and a hostile stream that runs to the end.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ndvm(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("ndvm runs")
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ndvm-cosearch-{}-{name}", std::process::id()))
}

const STREAM: &str = "data/cosearch/damped_oscillator_candidates.jsonl";
const TASK: &str = "data/cosearch/damped_oscillator.csv";
const INITS: &str = "data/cosearch/damped_oscillator_inits.jsonl";
const REFERENCE: &str = "data/cosearch/damped_oscillator_reference_fits.jsonl";

#[test]
fn protected_f32_replay_reproduces_the_papers_fits() {
    let out = ndvm(&[
        "cosearch",
        "--stream",
        STREAM,
        "--data",
        TASK,
        "--inits",
        INITS,
        "--max-fits",
        "4940",
        "--threads",
        "2",
        "--protected-ops",
        "--precision",
        "f32",
        "--reference",
        REFERENCE,
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let a = &json["agreement"];
    let (agree, compared) = (
        a["agree"].as_u64().unwrap(),
        a["compared"].as_u64().unwrap(),
    );
    assert_eq!(compared, 4940);
    assert!(
        agree as f64 >= 0.97 * compared as f64,
        "{agree} of {compared} agree"
    );
    assert_eq!(a["reference_successes"], 25);
    assert_eq!(a["successes_matched"], 25);
    assert_eq!(json["summary"]["distinct_successful_skeletons"], 5);
}

#[test]
fn thread_counts_give_byte_identical_fits() {
    let mut files = Vec::new();
    for threads in ["1", "2", "4"] {
        let path = tmp(&format!("fits-{threads}.jsonl"));
        let out = ndvm(&[
            "cosearch",
            "--stream",
            STREAM,
            "--data",
            TASK,
            "--inits",
            INITS,
            "--max-fits",
            "600",
            "--threads",
            threads,
            "--out",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        files.push(std::fs::read(&path).unwrap());
        assert!(
            path.with_extension("svg").exists(),
            "a plot next to the fits"
        );
    }
    assert_eq!(
        files[0]
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
        600
    );
    assert_eq!(files[0], files[1]);
    assert_eq!(files[0], files[2]);
}

#[test]
fn a_hostile_stream_runs_to_the_end_with_every_failure_recorded() {
    let stream = tmp("hostile.jsonl");
    let lines = [
        r#"{"src": "(* a (exp (* b x)))", "params": ["a", "b"], "skeleton": "ok"}"#,
        r#"{"src": "this is not json"#,
        r#"{"src": "(* a (exp (* b x)", "params": ["a", "b"]}"#,
        r#"{"src": "(loop ((k 0)) (recur (+ k a)))", "params": ["a"]}"#,
        r#"{"src": "(sqrt (- 0 (* a a) 1))", "params": ["a"]}"#,
        r#"{"src": "(frobnicate a x)", "params": ["a"]}"#,
        r#"{"src": "(* a (+ x z))", "params": ["a"]}"#,
        r#"{"src": "(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1))))) (* a (f 1000000))", "params": ["a"]}"#,
    ];
    std::fs::write(&stream, lines.join("\n")).unwrap();
    let out_path = tmp("hostile-fits.jsonl");
    let out = ndvm(&[
        "cosearch",
        "--stream",
        stream.to_str().unwrap(),
        "--data",
        TASK,
        "--max-fits",
        "16",
        "--threads",
        "2",
        "--max-steps",
        "100000",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 16);
    for r in &records {
        let index = r["index"].as_u64().unwrap();
        let error = r["error"].as_str().unwrap_or("");
        match index {
            0 => assert!(r["held_r2"].is_number(), "{r}"),
            1 => assert!(error.contains("malformed"), "{r}"),
            2 => assert!(error.contains("does not parse"), "{r}"),
            3 => assert!(error.contains("step budget"), "{r}"),
            4 => assert!(error.contains("non-finite"), "{r}"),
            5 => assert!(error.contains("unknown operator"), "{r}"),
            6 => assert!(error.contains("unbound name `z`"), "{r}"),
            // A million-deep recursion stops at the step budget or the depth limit, whichever first.
            7 => assert!(
                error.contains("recursion deeper") || error.contains("step budget"),
                "{r}"
            ),
            _ => unreachable!(),
        }
    }
}
