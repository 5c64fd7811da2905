//! `ndvm search` end to end: the built binary on small generated data sets.

mod common;
use common::Tmp;

use runtime_cpu::{Bindings, Program, RunOptions, Session};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PROPOSER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/search/perturb_proposer.py"
);

/// `y = 2.5 x sin(v) + 0.5`, with the rows `from..to` of a fixed sequence.
fn formula_csv(from: usize, to: usize) -> String {
    let mut s = String::from("x,v,y\n");
    for i in from..to {
        let x = -2.0 + 4.0 * ((i * 37) % 101) as f64 / 100.0;
        let v = 0.1 + 3.0 * ((i * 53) % 97) as f64 / 96.0;
        let y = 2.5 * x * v.sin() + 0.5;
        s.push_str(&format!("{x},{v},{y}\n"));
    }
    s
}

fn ndvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .arg("search")
        .args(args)
        .output()
        .expect("the ndvm binary runs")
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
    serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("valid JSON")
}

/// A small search's settings: two islands of 40 (a test adds a seed and a limit).
const SMALL: [&str; 4] = ["--islands", "2", "--population", "40"];

fn small(tmp: &Tmp, extra: &[&str]) -> Value {
    small_seeded(tmp, "3", extra)
}

fn best(v: &Value) -> &Value {
    v["front"]
        .as_array()
        .unwrap()
        .iter()
        .min_by(|a, b| {
            a["train_loss"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["train_loss"].as_f64().unwrap())
        })
        .expect("a front")
}

/// A search with the small settings but its own seed.
fn small_seeded(tmp: &Tmp, seed: &str, extra: &[&str]) -> Value {
    let train = tmp.file("train.csv", &formula_csv(0, 200));
    let test = tmp.file("test.csv", &formula_csv(200, 300));
    let test_arg = format!("test={test}");
    let mut args = vec!["--data", &train, "--target", "y", "--test", &test_arg];
    args.extend(SMALL);
    args.extend(["--seed", seed]);
    args.extend(extra);
    json(&args)
}

#[test]
fn a_small_known_formula_is_found() {
    // A search is stochastic: one seed in a few ends in a polynomial that approximates the
    // formula to 1e-11. Two of three seeds must find it exactly.
    let tmp = Tmp::new("cli-search");
    let mut found = 0;
    for seed in ["1", "2", "3"] {
        let v = small_seeded(&tmp, seed, &["--max-evals", "4000"]);
        let b = best(&v);
        if b["tests"]["test"]["nmse"].as_f64().unwrap() < 1e-12 {
            found += 1;
        }
        assert_eq!(v["summary"]["evaluations"], 4000);
        assert_eq!(v["summary"]["stopped"], "max-evals");
        let s = &v["summary"];
        assert!(s["distinct_skeletons"].as_u64().unwrap() > 500, "{s}");
        assert!(s["cache_hits"].as_u64().unwrap() > 0, "{s}");
    }
    assert!(found >= 2, "found by {found} of 3 seeds");
}

#[test]
fn the_front_is_the_same_at_one_and_two_threads() {
    let tmp = Tmp::new("cli-search");
    let one = small(&tmp, &["--max-evals", "1500", "--threads", "1"]);
    let two = small(&tmp, &["--max-evals", "1500", "--threads", "2"]);
    assert_eq!(one["front"], two["front"]);
    assert_eq!(one["summary"]["threads"], 1);
    assert_eq!(two["summary"]["threads"], 2);
}

/// Reads a CSV of numbers into columns by name.
fn columns(path: &str) -> Vec<(String, Vec<f64>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let names: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for l in lines {
        for (c, x) in cols.iter_mut().zip(l.split(',')) {
            c.push(x.parse().unwrap());
        }
    }
    names.into_iter().zip(cols).collect()
}

#[test]
fn every_reported_program_gives_the_reported_nmse() {
    let tmp = Tmp::new("cli-search");
    let v = small(&tmp, &["--max-evals", "1200"]);
    let cols = columns(&tmp.path("test.csv"));
    let y = &cols[2].1;
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let var = y.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / y.len() as f64;
    let front = v["front"].as_array().unwrap();
    assert!(front.len() >= 3, "{front:?}");
    for m in front {
        let program = Program::parse(m["src"].as_str().unwrap()).unwrap();
        let mut b = Bindings::new();
        for (name, col) in &cols[..2] {
            b = b.lanes(name, col.clone()).unwrap();
        }
        for (name, x) in m["params"].as_object().unwrap() {
            b = b.scalar(name, x.as_f64().unwrap());
        }
        let out = Session::<f64>::new()
            .run(&program, &b, &RunOptions::default())
            .cloned()
            .unwrap();
        let mse = out
            .values
            .iter()
            .zip(y)
            .map(|(f, t)| (f.as_ref().unwrap().as_number().unwrap() - t).powi(2))
            .sum::<f64>()
            / y.len() as f64;
        let reported = m["tests"]["test"]["nmse"].as_f64().unwrap();
        let nmse = mse / var;
        assert!(
            (nmse - reported).abs() <= 1e-9 * reported.max(1e-300) + 1e-300,
            "{}: {nmse} against {reported}",
            m["src"]
        );
        let r2 = m["tests"]["test"]["r2"].as_f64().unwrap();
        assert!((r2 - (1.0 - reported)).abs() < 1e-12);
    }
    // The command line gives the same value for one member as the runtime does.
    let m = &front[front.len() / 2];
    let prog = tmp.file("member.scm", m["src"].as_str().unwrap());
    let mut args = vec![
        "run".to_string(),
        prog,
        "--lanes".into(),
        tmp.path("test.csv"),
        "--format".into(),
        "json".into(),
    ];
    for (name, x) in m["params"].as_object().unwrap() {
        args.push("--bind".into());
        args.push(format!("{name}={}", x.as_f64().unwrap()));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["value"].as_array().unwrap().len(), 100);
}

/// The lines the example proposer received, as JSON.
fn received(log: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn answer<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no answer for {id}"))
}

#[test]
fn the_protocol_answers_every_line_including_bad_ones() {
    let tmp = Tmp::new("cli-search");
    let log = tmp.path("proposer.log");
    let cmd = format!("python3 {PROPOSER} --malformed --rounds 3 --log {log}");
    let v = small(
        &tmp,
        &["--proposer", &cmd, "--proposer-only", "--budget", "60"],
    );
    let lines = received(&log);
    let task = &lines[0]["task"];
    assert_eq!(task["inputs"], serde_json::json!(["x", "v"]));
    assert_eq!(task["target"], "y");
    assert_eq!(task["rows"], 200);
    assert_eq!(task["tests"], serde_json::json!(["test"]));
    let not_json = lines.iter().find(|l| {
        l["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a JSON line"))
    });
    assert!(not_json.is_some(), "{lines:?}");
    assert!(answer(&lines, "no-src")["error"]
        .as_str()
        .unwrap()
        .contains("no `src`"));
    assert!(answer(&lines, "unparseable")["error"]
        .as_str()
        .unwrap()
        .contains("does not parse"));
    let runaway = answer(&lines, "runaway")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        runaway.contains("step budget") || runaway.contains("memory limit"),
        "{runaway}"
    );
    let t = answer(&lines, "template-1");
    assert!(t["error"].is_null(), "{t}");
    assert!(t["train_loss"].as_f64().unwrap() > 0.0);
    assert!(t["params"]["a"].is_number() && t["params"]["b"].is_number());
    assert!(t["tests"]["test"]["nmse"].is_number());
    assert!(lines.iter().filter(|l| l.get("front").is_some()).count() >= 3);
    let p = &v["summary"]["proposer"];
    assert_eq!(p["bad_lines"], 3, "{p}");
    assert!(p["ended"].as_str().unwrap().contains("exited"), "{p}");
    assert_eq!(v["summary"]["stopped"], "proposer");
    assert!(!v["front"].as_array().unwrap().is_empty());
}

#[test]
fn a_proposer_that_crashes_or_hangs_is_reported_and_the_search_goes_on() {
    let tmp = Tmp::new("cli-search");
    // Crashes after its first front: the built-in proposer carries on to the end of the budget.
    let crash = format!("python3 {PROPOSER} --crash-after 1");
    let v = small(&tmp, &["--proposer", &crash, "--budget", "6"]);
    let p = &v["summary"]["proposer"];
    assert!(
        p["ended"].as_str().unwrap().contains("exit status: 3"),
        "{p}"
    );
    assert!(p["lines"].as_u64().unwrap() > 0, "{p}");
    assert_eq!(v["summary"]["stopped"], "budget");

    let hang = format!("python3 {PROPOSER} --hang-after 1");
    let start = Instant::now();
    let v = small(
        &tmp,
        &[
            "--proposer",
            &hang,
            "--proposer-only",
            "--proposer-timeout",
            "1",
            "--budget",
            "60",
        ],
    );
    let p = &v["summary"]["proposer"];
    assert!(
        p["ended"]
            .as_str()
            .unwrap()
            .contains("sent nothing for 1.0 s"),
        "{p}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(v["summary"]["evaluations"].as_u64().unwrap() > 0);
}

fn wait_for(path: &Path, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn ctrl_c_stops_cleanly_and_writes_the_front() {
    let tmp = Tmp::new("cli-search");
    let train = tmp.file("train.csv", &formula_csv(0, 200));
    let out = tmp.path("out");
    let log = tmp.path("started.log");
    // The proposer's first line in its log says the search has started.
    let cmd = format!("python3 {PROPOSER} --log {log}");
    let child = Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args([
            "search", "--data", &train, "--target", "y", "--budget", "120", "--out", &out,
        ])
        .args(["--proposer", &cmd, "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for(Path::new(&log), Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let v: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(v["summary"]["stopped"], "interrupted");
    let front = std::fs::read_to_string(Path::new(&out).join("front.jsonl")).unwrap();
    assert!(front.lines().count() >= 1);
    for f in ["front.csv", "front.svg", "progress.svg", "checkpoint.json"] {
        assert!(Path::new(&out).join(f).exists(), "{f}");
    }
}

#[test]
fn resume_continues_a_checkpoint_to_the_same_front() {
    let tmp = Tmp::new("cli-search");
    // The first generation is 2 x 40 candidates, each later one 2 x 20.
    let whole = small(&tmp, &["--max-evals", "880"]);
    let dir = tmp.path("run");
    let first = small(&tmp, &["--max-evals", "480", "--out", &dir]);
    assert_eq!(first["summary"]["evaluations"], 480);
    let train = tmp.path("train.csv");
    let test = format!("test={}", tmp.path("test.csv"));
    let resumed = json(&[
        "--data",
        &train,
        "--target",
        "y",
        "--test",
        &test,
        "--resume",
        &dir,
        "--max-evals",
        "880",
    ]);
    assert_eq!(resumed["summary"]["evaluations"], 880);
    assert_eq!(resumed["front"], whole["front"]);
}

#[test]
fn bad_data_is_a_clear_error_naming_file_row_and_column() {
    let tmp = Tmp::new("cli-search");
    let cases = [
        (
            "x,y\n1,2\n3,4\n",
            "z",
            "no column `z` (the target); the columns are x, y",
        ),
        (
            "x,y\n1,2\nabc,4\n",
            "y",
            ":3: column `x`: `abc` is not a number",
        ),
        ("x,y\n1,2\n,4\n3,5\n", "y", ":3: column `x` is empty"),
        ("x,y\n1,2\n3,nan\n", "y", ":3: column `y` is NaN"),
        ("x,y\n1,2\n", "y", "1 row(s); at least 2 are needed"),
        (
            "x,y\n1,2\n3,2\n",
            "y",
            "the target `y` is the same (2) on every row",
        ),
        ("y\n1\n2\n", "y", "no inputs"),
    ];
    for (k, (text, target, want)) in cases.iter().enumerate() {
        let f = tmp.file(&format!("bad{k}.csv"), text);
        let out = ndvm(&["--data", &f, "--target", target, "--max-evals", "10"]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {e}");
        assert!(
            e.contains(want) && e.contains(&format!("bad{k}.csv")),
            "{text:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn the_readme_first_command_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme.split("```sh\n").nth(1).unwrap();
    let first = block.lines().next().unwrap();
    let args: Vec<&str> = first
        .strip_prefix("cargo run --release -p harness -- search ")
        .expect("the README opens with a search")
        .split_whitespace()
        .collect();
    // The same search, bounded by a count instead of the clock.
    let mut kept = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "--budget" {
            it.next();
        } else {
            kept.push(*a);
        }
    }
    kept.extend(["--max-evals", "300", "--islands", "1"]);
    let out = Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .current_dir(&root)
        .arg("search")
        .args(&kept)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Pareto front") && text.contains("id NMSE"),
        "{text}"
    );
}

#[test]
fn seed_programs_start_the_search() {
    let tmp = Tmp::new("cli-search");
    // The formula itself, with other constants, and a program outside the grammar.
    let seeds = tmp.file(
        "seeds.jsonl",
        "{\"src\": \"(+ b (* a x (sin v)))\", \"init\": {\"a\": 1.0, \"b\": 0.0}}\n\
         {\"src\": \"(if (> x 0) (* k x) (* k v))\"}\n",
    );
    let v = small(&tmp, &["--seed-programs", &seeds, "--max-evals", "100"]);
    let b = best(&v);
    assert!(b["tests"]["test"]["nmse"].as_f64().unwrap() < 1e-20, "{b}");
    let bad = tmp.file("bad.jsonl", "{\"src\": \"(+ a\"}\n");
    let train = tmp.file("train.csv", &formula_csv(0, 200));
    let out = ndvm(&["--data", &train, "--target", "y", "--seed-programs", &bad]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad.jsonl:1: does not parse"),
        "{}",
        stderr(&out)
    );
}
