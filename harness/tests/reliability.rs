//! What a proposer, a file, a signal or a failed write does to a command: never a crash, a wrong
//! answer, a lost front or a budget that does not bind. Each test here failed before its fix.

mod common;
use common::Tmp;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const UNRULY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/search/unruly_proposer.py"
);

fn ndvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args(args)
        .output()
        .expect("the ndvm binary runs")
}

/// `ndvm search` of column `y` of `data`, with `extra` flags.
fn search(data: &str, extra: &[&str]) -> Output {
    let mut args = vec!["search", "--data", data, "--target", "y"];
    args.extend(extra);
    ndvm(&args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that `out` exited with `code` and says `says` on standard error.
fn fails(out: &Output, code: i32, says: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert!(stderr(out).contains(says), "{}", stderr(out));
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

/// `y = 3 sin(1.3 x)` on 120 rows.
fn sine_csv() -> String {
    let mut s = String::from("x,y\n");
    for i in 0..120 {
        let x = -3.0 + 6.0 * i as f64 / 119.0;
        s.push_str(&format!("{x},{}\n", 3.0 * (1.3 * x).sin()));
    }
    s
}

/// The answers (not the task, not the fronts) a proposer logged, in order.
fn answers(log: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("task").is_none() && v.get("front").is_none())
        .collect()
}

/// A proposer-only search over `data` whose proposer sends `lines` one at a time; the
/// answers, and the search's JSON output.
fn replay_lines(tmp: &Tmp, data: &str, lines: &[String], extra: &[&str]) -> (Vec<Value>, Value) {
    let file = tmp.file(&format!("lines-{}.jsonl", rand_tag()), &lines.join("\n"));
    let log = tmp.path(&format!("log-{}.jsonl", rand_tag()));
    let cmd = format!("python3 {UNRULY} --lines {file} --log {log}");
    let mut args = vec![
        "search",
        "--data",
        data,
        "--target",
        "y",
        "--proposer",
        &cmd,
        "--proposer-only",
        "--budget",
        "60",
        "--format",
        "json",
    ];
    args.extend(extra);
    let out = ndvm(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (answers(&log), json_of(&out))
}

fn rand_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn a_chain_of_quotes_is_an_error_not_a_crash() {
    let tmp = Tmp::new("reliability");
    for n in [12_000, 30_000, 200_000] {
        let q = tmp.file("q.scm", &format!("{}x", "'".repeat(n)));
        let out = ndvm(&["run", &q]);
        fails(&out, 1, "nested more than 10000");
    }
    // Within the limit, the quoted datum is the value.
    let q = tmp.file("q.scm", &format!("{}x", "'".repeat(50)));
    let out = ndvm(&["run", &q]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn export_of_deep_nesting_is_a_result_or_an_error_not_a_crash() {
    let tmp = Tmp::new("reliability");
    let nested = |n: usize| format!("{}x{}", "(sin ".repeat(n), ")".repeat(n));
    let p = tmp.file("deep.scm", &nested(9_999));
    for to in ["numpy", "jax", "torch", "sympy", "latex"] {
        let out = ndvm(&["export", &p, "--to", to]);
        assert_eq!(out.status.code(), Some(0), "--to {to}: {}", stderr(&out));
    }
    let p = tmp.file("deeper.scm", &nested(50_000));
    let out = ndvm(&["export", &p, "--to", "numpy"]);
    fails(&out, 1, "nested more than 10000");
}

#[test]
fn a_proposer_line_of_any_depth_is_answered_and_the_search_goes_on() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let chain = format!("{}x", "'".repeat(30_000));
    let deep = format!("(+ a {}x{})", "(sin ".repeat(20_000), ")".repeat(20_000));
    let lines = [
        serde_json::json!({"src": chain, "id": "quotes"}).to_string(),
        serde_json::json!({"src": deep, "id": "deep"}).to_string(),
        serde_json::json!({"src": "(* a (sin (* b x)))", "init": {"a": 2.0, "b": 1.2}, "id": "good"})
            .to_string(),
    ];
    let (got, v) = replay_lines(&tmp, &data, &lines, &[]);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got[0]["error"].as_str().unwrap().contains("nested"),
        "{}",
        got[0]
    );
    assert!(
        got[1]["error"].as_str().unwrap().contains("nested"),
        "{}",
        got[1]
    );
    assert!(got[2]["error"].is_null(), "{}", got[2]);
    assert!(!v["front"].as_array().unwrap().is_empty());
}

#[test]
fn a_candidate_with_its_own_start_is_fitted_from_it_on_any_island() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let line = |b: f64, id: &str| {
        serde_json::json!({"src": "(* a (sin (* b x)))", "init": {"a": 1.0, "b": b}, "id": id})
            .to_string()
    };
    // From b = 1 alone: the true frequency.
    let (alone, _) = replay_lines(&tmp, &data, &[line(1.0, "near")], &["--islands", "1"]);
    let near = alone[0]["train_loss"].as_f64().unwrap();
    assert!(near < 1e-10, "{}", alone[0]);
    // From b = 40 first, then from b = 1, then b = 1 again on the other island: the answers
    // from b = 1 are the one above, not the cached fit from b = 40.
    let lines = [
        line(40.0, "far"),
        line(1.0, "near"),
        line(1.0, "near-again"),
    ];
    for islands in ["1", "2"] {
        let (got, _) = replay_lines(&tmp, &data, &lines, &["--islands", islands]);
        assert_eq!(got.len(), 3, "{got:?}");
        for a in &got[1..] {
            assert_eq!(
                a["train_loss"], alone[0]["train_loss"],
                "islands {islands}: {a}"
            );
            assert_eq!(a["params"], alone[0]["params"], "islands {islands}: {a}");
        }
    }
}

#[test]
fn a_failed_write_still_prints_the_front_and_exits_non_zero() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let out_dir = tmp.path("out");
    let child = Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args(["search", "--data", &data, "--target", "y", "--budget", "4"])
        .args(["--out", &out_dir, "--format", "json", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The output directory becomes a file while the search runs: nothing can be written.
    let dir = Path::new(&out_dir);
    let start = Instant::now();
    while !dir.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::write(dir, "not a directory").unwrap();
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(3), "{}", stderr(&done));
    let v = json_of(&done);
    assert!(!v["front"].as_array().unwrap().is_empty(), "{v}");
    assert!(stderr(&done).contains("cannot"), "{}", stderr(&done));
}

#[test]
fn resume_refuses_other_data_and_settings_it_would_ignore() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let dir = tmp.path("run");
    let first = search(
        &data,
        &["--max-evals", "200", "--out", &dir, "--format", "json"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // A resumed search of `data` to 300 candidates, with `extra` flags.
    let resume = |data: &str, extra: &[&str]| {
        let mut args = vec![
            "search",
            "--data",
            data,
            "--target",
            "y",
            "--resume",
            &dir,
            "--max-evals",
            "300",
        ];
        args.extend(extra);
        ndvm(&args)
    };
    // The same header and row count, other values.
    let other = tmp.file("other.csv", &sine_csv().replacen("-3,", "-2.5,", 1));
    fails(&resume(&other, &[]), 2, "other data");
    let out = resume(&data, &["--seed", "9", "--ops", "add,mul"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--seed") && err.contains("--ops"), "{err}");
    // The same data and no settings: it goes on.
    let out = resume(&data, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out)["summary"]["evaluations"], 300);
}

#[test]
fn one_huge_matmul_counts_what_it_computes_and_the_budget_binds() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let huge = "(+ a (vsum (matmul (ones 2000 2000) (ones 2000 2000))))";
    let lines = [serde_json::json!({"src": huge, "id": "huge"}).to_string()];
    let start = Instant::now();
    let (got, _) = replay_lines(&tmp, &data, &lines, &[]);
    assert!(
        got[0]["error"].as_str().unwrap().contains("step budget"),
        "{}",
        got[0]
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );

    // The co-search replay of a stream of them: each fit fails at its first walk, and the
    // budget binds (before, each walk took 16 s and the replay ran on past a minute).
    let stream = tmp.file(
        "stream.jsonl",
        &(0..3)
            .map(|_| {
                let src = "(+ (* a x) (vsum (matmul (ones 2000 2000) (ones 2000 2000))))";
                serde_json::json!({"src": src, "params": ["a"]}).to_string()
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let csv = tmp.file("task.csv", "x,y,split\n1,2,train\n2,4,train\n3,6,holdout\n");
    let fits = tmp.path("fits.jsonl");
    let start = Instant::now();
    let out = ndvm(&[
        "cosearch",
        "--stream",
        &stream,
        "--data",
        &csv,
        "--budget",
        "2",
        "--threads",
        "1",
        "--out",
        &fits,
    ]);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        took < Duration::from_secs(4),
        "cosearch --budget 2 took {took:?}"
    );
    let records = std::fs::read_to_string(&fits).unwrap();
    let first: Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
    assert!(
        first["error"].as_str().unwrap().contains("step budget"),
        "{first}"
    );
}

#[test]
fn the_budget_binds_with_costly_candidates_in_flight() {
    let tmp = Tmp::new("reliability");
    // 2,000 rows; each candidate's walks do a 400 x 400 product per row (1.6e5 steps of the
    // default budget of 1e6, 3.2e8 multiply-adds a walk), and a proposer keeps them coming.
    let mut csv = String::from("x,y\n");
    for i in 0..2000 {
        let x = i as f64 / 2000.0;
        csv.push_str(&format!("{x},{}\n", 2.0 * x));
    }
    let data = tmp.file("line.csv", &csv);
    // A poor model (it oscillates 25,000 times over the data), so that it never reaches the
    // front, whose refit at the end would walk it again.
    let heavy = "(* a (sin (vsum (matvec (ones 400 400) (* x (ones 400))))))";
    let lines: Vec<String> = (0..200)
        .map(|k| serde_json::json!({"src": heavy, "init": {"a": k as f64}, "id": k}).to_string())
        .collect();
    let file = tmp.file("heavy.jsonl", &lines.join("\n"));
    let cmd = format!("python3 {UNRULY} --lines {file}");
    let start = Instant::now();
    let out = search(
        &data,
        &[
            "--proposer",
            &cmd,
            "--budget",
            "3",
            "--threads",
            "2",
            "--format",
            "json",
        ],
    );
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out)["summary"]["stopped"], "budget");
    // B + max(1 s, 10%), and the time to start the process and read the data.
    assert!(
        took < Duration::from_millis(4500),
        "--budget 3 took {took:?}"
    );
}

#[test]
fn sigterm_stops_the_search_with_the_front_and_checkpoint_written() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    let out_dir = tmp.path("out");
    let child = Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args([
            "search", "--data", &data, "--target", "y", "--budget", "120",
        ])
        .args(["--out", &out_dir, "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let start = Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(json_of(&done)["summary"]["stopped"], "interrupted");
    for f in ["front.jsonl", "checkpoint.json"] {
        assert!(Path::new(&out_dir).join(f).exists(), "{f}");
    }
}

#[test]
fn a_proposer_stream_is_bounded_and_every_line_is_counted() {
    let tmp = Tmp::new("reliability");
    let data = tmp.file("sine.csv", &sine_csv());
    // A line of 3 MB: dropped as it is read, answered, counted.
    let long = serde_json::json!({"src": "(* a x)", "pad": "z".repeat(3 << 20), "id": "long"});
    let (got, v) = replay_lines(&tmp, &data, &[long.to_string()], &[]);
    assert!(
        got[0]["error"].as_str().unwrap().contains("longer than"),
        "{}",
        got[0]
    );
    assert_eq!(v["summary"]["proposer"]["too_long"], 1, "{}", v["summary"]);
    // A flood of 3000 lines of 4 KB against a queue of 64 and a short budget: every line read
    // is answered or counted as unanswered.
    let log = tmp.path("flood.log");
    let cmd = format!("python3 {UNRULY} --flood 3000 --log {log}");
    let out = search(
        &data,
        &[
            "--proposer",
            &cmd,
            "--budget",
            "3",
            "--proposer-queue",
            "64",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let p = &json_of(&out)["summary"]["proposer"];
    let (lines, answered, unanswered) = (
        p["lines"].as_u64().unwrap(),
        p["answered"].as_u64().unwrap(),
        p["unanswered"].as_u64().unwrap(),
    );
    assert!(lines > 0 && lines <= 3000, "{p}");
    assert_eq!(answered + unanswered, lines, "{p}");
}

#[test]
fn calibrate_refuses_bad_bounds_and_names_the_row_of_a_nan() {
    let tmp = Tmp::new("reliability");
    let model = tmp.file("m.scm", "(* a x)");
    let csv = tmp.file("d.csv", "x,y\n1,2\n2,4\n");
    for clamp in ["a=5:1", "a=nan:", "a=:nan"] {
        let out = ndvm(&[
            "calibrate",
            &model,
            "--data",
            &csv,
            "--target",
            "y",
            "--params",
            "a",
            "--clamp",
            clamp,
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--clamp {clamp}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("--clamp"), "{}", stderr(&out));
    }
    for (flag, value) in [("--lr", "-1"), ("--restarts", "0")] {
        let arg = format!("{flag}={value}");
        let out = ndvm(&["calibrate", &model, "--data", &csv, "--target", "y", &arg]);
        fails(&out, 2, flag);
    }
    let nan = tmp.file("nan.csv", "x,y\n1,2\n2,NaN\n");
    let out = ndvm(&["calibrate", &model, "--data", &nan, "--target", "y"]);
    fails(&out, 2, "row 3, column `y`");
}

#[test]
fn messages_say_what_is_wrong_and_where() {
    let tmp = Tmp::new("reliability");
    let p = tmp.file("r.scm", "(ref (vec 1 2) 1e18)");
    let out = ndvm(&["run", &p]);
    assert!(stderr(&out).contains("must be below"), "{}", stderr(&out));
    let data = tmp.file("sine.csv", &sine_csv());
    let out = search(&data, &["--budget", "1e12"]);
    assert!(stderr(&out).contains("at most 1e9"), "{}", stderr(&out));
    for (flag, v) in [
        ("--islands", "0"),
        ("--population", "0"),
        ("--max-memory-mb", "0"),
        ("--restarts", "0"),
    ] {
        fails(&search(&data, &[flag, v]), 2, flag);
    }
    let bytes = b"x,y\n1,2\n2,\xff\n";
    let path = tmp.path("latin1.csv");
    std::fs::write(&path, bytes).unwrap();
    let out = search(&path, &[]);
    assert!(
        stderr(&out).contains("latin1.csv:3:3: the file is not UTF-8"),
        "{}",
        stderr(&out)
    );
    let deep = tmp.file("deep.scm", "(define (f n) (+ 1 (f n))) (f 1)");
    let out = ndvm(&["run", &deep]);
    assert!(
        stderr(&out).contains("ndvm run --max-depth"),
        "{}",
        stderr(&out)
    );
}
