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
            // Long enough for Python to start and send its first batch on a loaded machine.
            "--proposer-timeout",
            "3",
            "--budget",
            "60",
        ],
    );
    let p = &v["summary"]["proposer"];
    assert!(
        p["ended"]
            .as_str()
            .unwrap()
            .contains("sent nothing for 3.0 s"),
        "{p}"
    );
    assert!(start.elapsed() < Duration::from_secs(40));
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

#[test]
fn select_chooses_the_model_and_early_stop_ends_the_search() {
    let tmp = Tmp::new("cli-search");
    let mut fronts = Vec::new();
    for how in ["best", "accuracy", "score"] {
        let v = small(&tmp, &["--max-evals", "1500", "--select", how]);
        let front = v["front"].as_array().unwrap();
        let picked: Vec<usize> = (0..front.len())
            .filter(|&i| front[i]["selected"] == true)
            .collect();
        assert_eq!(picked.len(), 1, "{how}: {picked:?}");
        let i = picked[0];
        assert_eq!(v["selected"]["criterion"], how);
        assert_eq!(v["selected"]["complexity"], front[i]["complexity"]);
        // Each member's score: the drop of ln(loss) per node from the member before it.
        let loss = |j: usize| front[j]["train_loss"].as_f64().unwrap();
        let cx = |j: usize| front[j]["complexity"].as_f64().unwrap();
        let score: Vec<f64> = (0..front.len())
            .map(|j| match j {
                0 => 0.0,
                _ => (loss(j - 1).ln() - loss(j).ln()) / (cx(j) - cx(j - 1)),
            })
            .collect();
        for (j, s) in score.iter().enumerate() {
            let got = front[j]["score"].as_f64().unwrap();
            assert!((got - s).abs() <= 1e-9 * s.abs().max(1.0), "{j}: {got} {s}");
        }
        let lowest = (0..front.len()).map(loss).fold(f64::INFINITY, f64::min);
        let most = |keep: &dyn Fn(usize) -> bool| {
            (0..front.len())
                .filter(|&j| keep(j))
                .map(|j| score[j])
                .fold(f64::NEG_INFINITY, f64::max)
        };
        match how {
            "accuracy" => assert_eq!(loss(i), lowest),
            "score" => assert_eq!(score[i], most(&|_| true)),
            _ => {
                assert!(loss(i) <= 1.5 * lowest);
                assert_eq!(score[i], most(&|j| loss(j) <= 1.5 * lowest));
            }
        }
        let mut plain = v["front"].clone();
        for m in plain.as_array_mut().unwrap() {
            m.as_object_mut().unwrap().remove("selected");
        }
        fronts.push(plain);
    }
    // The choice does not change the search.
    assert!(fronts.windows(2).all(|w| w[0] == w[1]));

    // A loss any member reaches ends the search after its first generation; one no member
    // of one node can reach leaves it to --max-evals.
    let v = small(&tmp, &["--max-evals", "4000", "--early-stop", "1e30"]);
    assert_eq!(v["summary"]["stopped"], "early-stop");
    assert!(v["summary"]["evaluations"].as_u64().unwrap() < 4000);
    let v = small(&tmp, &["--max-evals", "1000", "--early-stop", "0@1"]);
    assert_eq!(v["summary"]["stopped"], "max-evals");
    let train = tmp.file("train.csv", &formula_csv(0, 50));
    for bad in ["1e-3@", "fast", "-1"] {
        let flag = format!("--early-stop={bad}");
        let out = ndvm(&["--data", &train, "--target", "y", &flag]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("--early-stop"), "{}", stderr(&out));
    }
    let out = ndvm(&[
        "--data",
        &train,
        "--target",
        "y",
        "--max-evals",
        "300",
        "--select",
        "score",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("* the model chosen by --select score"),
        "{text}"
    );
}

#[test]
fn weights_and_losses_are_fitted_and_bad_ones_are_clear_errors() {
    let tmp = Tmp::new("cli-search");
    // y = 2 x + 1, and rows 10..20 follow another line: weight 0 takes them out.
    let mut text = String::from("x,w,y\n");
    for i in 0..40 {
        let x = f64::from(i) * 0.25 - 3.0;
        let (w, y) = if (10..20).contains(&i) {
            (0.0, -x + 7.0)
        } else {
            (1.0, 2.0 * x + 1.0)
        };
        text.push_str(&format!("{x},{w},{y}\n"));
    }
    let train = tmp.file("weighted.csv", &text);
    let v = json(&[
        "--data",
        &train,
        "--target",
        "y",
        "--weights",
        "w",
        "--max-evals",
        "600",
        "--islands",
        "1",
        "--population",
        "30",
    ]);
    assert_eq!(v["summary"]["weighted"], true);
    assert_eq!(v["summary"]["loss"], "l2");
    let front = v["front"].as_array().unwrap();
    assert!(front
        .iter()
        .all(|m| !m["src"].as_str().unwrap().contains('w')));
    // The weighted rows are fitted exactly by the line.
    let best = front.last().unwrap();
    assert!(best["train_loss"].as_f64().unwrap() < 1e-20, "{best}");
    let v = json(&[
        "--data",
        &train,
        "--target",
        "y",
        "--inputs",
        "x",
        "--loss",
        "huber:0.5",
        "--max-evals",
        "300",
        "--islands",
        "1",
        "--population",
        "30",
    ]);
    assert_eq!(v["summary"]["loss"], "huber:0.5");
    assert_eq!(v["summary"]["weighted"], false);
    // A loss written in the object language: squared error of the logarithms.
    let mut text = String::from("x,y\n");
    for i in 0..40 {
        let x = 0.5 + f64::from(i) * 0.1;
        text.push_str(&format!("{x},{}\n", 2.0 * x + 1.0));
    }
    let positive = tmp.file("positive.csv", &text);
    let log_loss = "(square (- (log f) (log y)))";
    let v = json(&[
        "--data",
        &positive,
        "--target",
        "y",
        "--loss",
        log_loss,
        "--max-evals",
        "600",
        "--islands",
        "1",
        "--population",
        "30",
    ]);
    assert_eq!(v["summary"]["loss"], log_loss);
    let front = v["front"].as_array().unwrap();
    assert!(
        front
            .iter()
            .any(|m| m["train_loss"].as_f64().unwrap() < 1e-20),
        "{front:?}"
    );

    // Rows of weight 0 are not fitted on, at the end either: a program not finite there
    // (sqrt of x < 0) keeps its place on the front.
    let mut text = String::from("x,w,y\n");
    for i in 0..30 {
        let x = f64::from(i) * 0.2 - 2.0;
        let (w, y) = if x < 0.0 {
            (0.0, 5.0)
        } else {
            (1.0, 2.0 * x.sqrt())
        };
        text.push_str(&format!("{x},{w},{y}\n"));
    }
    let masked = tmp.file("masked.csv", &text);
    let seeds = tmp.file("sqrt.jsonl", "{\"src\": \"(* c (sqrt x))\"}\n");
    let v = json(&[
        "--data",
        &masked,
        "--target",
        "y",
        "--weights",
        "w",
        "--seed-programs",
        &seeds,
        "--max-evals",
        "200",
        "--islands",
        "1",
        "--population",
        "20",
    ]);
    let front = v["front"].as_array().unwrap();
    assert!(
        front
            .iter()
            .any(|m| m["train_loss"].as_f64().unwrap() < 1e-20),
        "{front:?}"
    );

    // Poisson: the program is the log of the rate; the front reports the rate, exp of it, and
    // scores it so on a test set.
    let mut text = String::from("x,y\n");
    for i in 0..40 {
        let x = f64::from(i) * 0.08;
        text.push_str(&format!("{x},{}\n", (0.5 + 0.8 * x).exp()));
    }
    let rates = tmp.file("rates.csv", &text);
    let test_arg = format!("t={rates}");
    let v = json(&[
        "--data",
        &rates,
        "--target",
        "y",
        "--loss",
        "poisson",
        "--test",
        &test_arg,
        "--max-evals",
        "600",
        "--islands",
        "1",
        "--population",
        "30",
    ]);
    assert_eq!(v["summary"]["loss"], "poisson");
    let front = v["front"].as_array().unwrap();
    assert!(front
        .iter()
        .all(|m| m["src"].as_str().unwrap().starts_with("(exp ")));
    let exact = front
        .iter()
        .find(|m| m["train_loss"].as_f64().unwrap() < 1e-20)
        .expect("the log-linear rate is found");
    assert!(
        exact["tests"]["t"]["nmse"].as_f64().unwrap() < 1e-12,
        "{exact}"
    );
    let negative = tmp.file("negative.csv", "x,y\n1,2\n2,-1\n3,4\n");
    let out = ndvm(&["--data", &negative, "--target", "y", "--loss", "poisson"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-1 on training row 2"),
        "{}",
        stderr(&out)
    );

    let bad_weight = tmp.file("bad.csv", "x,w,y\n1,1,2\n2,-1,4\n3,1,7\n");
    let zero = tmp.file("zero.csv", "x,w,y\n1,0,2\n2,0,4\n3,0,7\n");
    for (args, want) in [
        (
            vec!["--data", &bad_weight, "--weights", "w"],
            "bad.csv:3: the weight `w` is -1",
        ),
        (
            vec!["--data", &zero, "--weights", "w"],
            "the weight `w` is zero on every training row",
        ),
        (
            vec!["--data", &train, "--weights", "nope"],
            "no column `nope` (the weights)",
        ),
        (
            vec!["--data", &train, "--weights", "w", "--inputs", "x,w"],
            "`w` is the weights",
        ),
        (
            vec!["--data", &train, "--loss", "huber"],
            "huber needs its DELTA",
        ),
        (
            vec!["--data", &train, "--loss", "l3"],
            "not a loss of ndvm search",
        ),
        (
            vec!["--data", &train, "--loss", "(square y)"],
            "never reads `f`",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--target", "y"]);
        let out = ndvm(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
}

/// The atoms of a program's text: operators and leaves, in order, with the operators that
/// enclose each.
fn atoms(src: &str) -> Vec<(String, Vec<String>)> {
    let spaced = src.replace('(', " ( ").replace(')', " ) ");
    let (mut out, mut stack, mut opening) = (Vec::new(), Vec::<String>::new(), false);
    for tok in spaced.split_whitespace() {
        match tok {
            "(" => opening = true,
            ")" => {
                stack.pop();
            }
            t => {
                out.push((t.to_string(), stack.clone()));
                if opening {
                    stack.push(t.to_string());
                }
                opening = false;
            }
        }
    }
    out
}

#[test]
fn constraints_shape_the_front_and_weight_its_complexity() {
    let tmp = Tmp::new("cli-search");
    let v = small(
        &tmp,
        &[
            "--max-evals",
            "2000",
            "--no-share",
            "--iterate",
            "off",
            "--complexity-of",
            "sin=3",
            "--nested",
            "*=sin:0",
        ],
    );
    let front = v["front"].as_array().unwrap();
    assert!(!front.is_empty());
    for m in front {
        let src = m["src"].as_str().unwrap();
        let atoms = atoms(src);
        // No sin below a product: the exact formula (2.5 x sin(v) + 0.5) is out of reach.
        assert!(
            !atoms
                .iter()
                .any(|(a, above)| a == "sin" && above.iter().any(|o| o == "*")),
            "{src}"
        );
        let sins = atoms.iter().filter(|(a, _)| a == "sin").count();
        assert_eq!(
            m["complexity"].as_u64().unwrap() as usize,
            atoms.len() + 2 * sins,
            "{src}"
        );
    }
    let best = front.last().unwrap();
    assert!(
        best["tests"]["test"]["nmse"].as_f64().unwrap() > 1e-12,
        "{best}"
    );
    let train = tmp.file("train.csv", &formula_csv(0, 50));
    for (flag, value, want) in [
        ("--complexity-of", "tanh=2", "`tanh` is not an operator"),
        ("--constraints", "pow=(1)", "takes 2 argument(s)"),
        ("--nested", "sin", "expected OUTER=INNER:N"),
    ] {
        let out = ndvm(&["--data", &train, "--target", "y", flag, value]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
}

#[test]
fn several_targets_are_searched_in_one_run() {
    let tmp = Tmp::new("cli-search");
    let mut text = String::from("x,v,y1,y2\n");
    for i in 0..120 {
        let x = -2.0 + 4.0 * ((i * 37) % 101) as f64 / 100.0;
        let v = 0.1 + 3.0 * ((i * 53) % 97) as f64 / 96.0;
        text.push_str(&format!(
            "{x},{v},{},{}\n",
            2.5 * x * v.sin() + 0.5,
            x * v + 1.0
        ));
    }
    let train = tmp.file("two.csv", &text);
    let out_dir = std::path::PathBuf::from(tmp.path("fronts"));
    let v = json(&[
        "--data",
        &train,
        "--target",
        "y1,y2",
        "--max-evals",
        "1500",
        "--islands",
        "2",
        "--population",
        "40",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(v["summary"]["targets"], serde_json::json!(["y1", "y2"]));
    for t in ["y1", "y2"] {
        let front = v["fronts"][t].as_array().unwrap();
        assert!(!front.is_empty());
        // A target is never an input of another's programs.
        for m in front {
            let src = m["src"].as_str().unwrap();
            assert!(!src.contains("y1") && !src.contains("y2"), "{src}");
        }
        assert_eq!(front.iter().filter(|m| m["selected"] == true).count(), 1);
        assert_eq!(v["summary"]["per_target"][t]["evaluations"], 1500);
        assert!(out_dir.join(t).join("front.jsonl").exists());
    }
    // x v + 1 is found exactly.
    let y2 = v["fronts"]["y2"].as_array().unwrap();
    assert!(y2.iter().any(|m| m["train_loss"].as_f64().unwrap() < 1e-20));
    let out = ndvm(&[
        "--data",
        &train,
        "--target",
        "y1,y2",
        "--resume",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--resume takes one target"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn units_refuse_unbalanced_programs_and_mark_the_front() {
    let tmp = Tmp::new("cli-search");
    // a = 2 x / t^2 (m/s^2) from x (m) and t (s).
    let mut text = String::from("x,t,a\n");
    for i in 0..80 {
        let x = 0.5 + 3.0 * ((i * 37) % 101) as f64 / 100.0;
        let t = 0.5 + 2.0 * ((i * 53) % 97) as f64 / 96.0;
        text.push_str(&format!("{x},{t},{}\n", 2.0 * x / (t * t)));
    }
    let train = tmp.file("units.csv", &text);
    let base = [
        "--data",
        &train,
        "--target",
        "a",
        "--units",
        "x=m,t=s,a=m/s^2",
        "--max-evals",
        "2000",
        "--islands",
        "2",
        "--population",
        "40",
        "--no-share",
        "--iterate",
        "off",
    ];
    let v = json(&base);
    let front = v["front"].as_array().unwrap();
    assert!(front.iter().all(|m| m["units_ok"] == true), "{front:?}");
    assert!(
        front
            .iter()
            .any(|m| m["train_loss"].as_f64().unwrap() < 1e-20),
        "{front:?}"
    );
    let mut penalised = base.to_vec();
    penalised.extend(["--dimensional-penalty", "0"]);
    let v = json(&penalised);
    assert!(v["front"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["units_ok"].is_boolean()));
    for (units, want) in [
        ("x=ft", "`ft` is not an SI base unit"),
        ("q=m", "`q` is neither the target"),
    ] {
        let out = ndvm(&["--data", &train, "--target", "a", "--units", units]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
}
