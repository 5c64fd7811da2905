//! ODE discovery (`ndvm search --time`): systems recovered from noisy, irregular trajectories,
//! exact gradients through the integrator, determinism, blow-ups and bad data.

use harness::ode::data::Trajectory;
use harness::ode::program::{integrate, Output, System};
use harness::ode::shoot::{FitOptions, Shooting};
use harness::rng::SplitMix;
use ndvm_check::oracle::{Input, Oracle};
use runtime_cpu::{Bindings, GradSpec, Limits, Program, RunOptions, Session, Tensor};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fine RK4 solution of `f` from `x0`, sampled at `times` (written here, apart from the
/// runtime's integrator).
fn solve(f: &dyn Fn(&[f64]) -> Vec<f64>, x0: &[f64], times: &[f64]) -> Vec<Vec<f64>> {
    let mut x = x0.to_vec();
    let mut t = times[0];
    let mut out = vec![x.clone()];
    for &next in &times[1..] {
        let n = ((next - t) / 1e-3).ceil().max(1.0) as usize;
        let h = (next - t) / n as f64;
        for _ in 0..n {
            let add = |x: &[f64], k: &[f64], c: f64| -> Vec<f64> {
                x.iter().zip(k).map(|(a, b)| a + c * b).collect()
            };
            let k1 = f(&x);
            let k2 = f(&add(&x, &k1, h / 2.0));
            let k3 = f(&add(&x, &k2, h / 2.0));
            let k4 = f(&add(&x, &k3, h));
            for i in 0..x.len() {
                x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
        }
        t = next;
        out.push(x.clone());
    }
    out
}

/// Irregular times on [0, end]: gaps drawn between 0.5 and 1.5 times `gap`.
fn irregular(end: f64, gap: f64, rng: &mut SplitMix) -> Vec<f64> {
    let mut t = vec![0.0];
    while *t.last().unwrap() < end {
        let last = *t.last().unwrap();
        t.push(last + gap * rng.uniform(0.5, 1.5));
    }
    t
}

/// How trajectories are sampled: times on `[0, end]` about `gap` apart, multiplicative noise
/// `noise`, draws seeded by `seed`.
struct Sampling {
    end: f64,
    gap: f64,
    noise: f64,
    seed: u64,
}

/// A CSV of trajectories `run,t,states...` from `starts`.
fn write_csv(
    path: &Path,
    states: &[&str],
    f: &dyn Fn(&[f64]) -> Vec<f64>,
    starts: &[Vec<f64>],
    s: Sampling,
) {
    let Sampling {
        end,
        gap,
        noise,
        seed,
    } = s;
    let mut rng = SplitMix(seed);
    let mut text = format!("run,t,{}\n", states.join(","));
    for (r, x0) in starts.iter().enumerate() {
        let t = irregular(end, gap, &mut rng);
        let xs = solve(f, x0, &t);
        for (tk, x) in t.iter().zip(xs) {
            let cells: Vec<String> = x
                .iter()
                .map(|v| format!("{}", v * (1.0 + noise * rng.normal())))
                .collect();
            text.push_str(&format!("r{r},{tk},{}\n", cells.join(",")));
        }
    }
    std::fs::write(path, text).unwrap();
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndvm-ode-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ndvm(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ndvm"))
        .args(args)
        .output()
        .expect("runs ndvm")
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "ndvm failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The front's members as (complexity, train R^2, test R^2 of `test`).
fn members(v: &Value, test: &str) -> Vec<(u64, f64, f64)> {
    v["front"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["complexity"].as_u64().unwrap(),
                m["train"]["r2"].as_f64().unwrap_or(f64::NEG_INFINITY),
                m["tests"][test]["r2"].as_f64().unwrap_or(f64::NEG_INFINITY),
            )
        })
        .collect()
}

#[test]
fn a_logistic_law_is_recovered_from_noisy_irregular_trajectories() {
    let d = dir("logistic");
    let f = |x: &[f64]| vec![0.8 * x[0] * (1.0 - x[0] / 5.0)];
    let (train, test) = (d.join("train.csv"), d.join("test.csv"));
    write_csv(
        &train,
        &["x"],
        &f,
        &[vec![0.3], vec![7.0]],
        Sampling {
            end: 8.0,
            gap: 0.1,
            noise: 0.01,
            seed: 1,
        },
    );
    write_csv(
        &test,
        &["x"],
        &f,
        &[vec![1.5]],
        Sampling {
            end: 8.0,
            gap: 0.1,
            noise: 0.0,
            seed: 2,
        },
    );
    let out = ndvm(&[
        "search",
        "--data",
        train.to_str().unwrap(),
        "--time",
        "t",
        "--target",
        "x",
        "--trajectory",
        "run",
        "--autonomous",
        "--test",
        &format!("later={}", test.display()),
        "--max-evals",
        "3000",
        "--seed",
        "1",
        "--threads",
        "2",
        "--format",
        "json",
    ]);
    let v = json_of(&out);
    let m = members(&v, "later");
    // The logistic law has 5 nodes (c x (1 - x / K) reads as 5 to 7 depending on its form).
    assert!(
        m.iter()
            .any(|&(c, tr, te)| c <= 7 && tr > 0.999 && te > 0.999),
        "{m:?}"
    );
    let first = &v["front"][0];
    assert!(first["initial"]["r0"]["x"].is_number(), "{first}");
    assert!(first["initial"]["r1"]["x"].is_number(), "{first}");
    // `--select best` (the default) marks one member, the one the JSON's `selected` names.
    let front = v["front"].as_array().unwrap();
    let picked: Vec<&Value> = front.iter().filter(|m| m["selected"] == true).collect();
    assert_eq!(picked.len(), 1, "{front:?}");
    assert_eq!(v["selected"]["criterion"], "best");
    assert_eq!(v["selected"]["complexity"], picked[0]["complexity"]);
    let lowest = front
        .iter()
        .map(|m| m["train_loss"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(picked[0]["train_loss"].as_f64().unwrap() <= 1.5 * lowest);
    let out = ndvm(&[
        "search",
        "--data",
        train.to_str().unwrap(),
        "--time",
        "t",
        "--target",
        "x",
        "--early-stop",
        "1e-6",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--early-stop"), "{err}");
    // Options of the search that ODE discovery does not take are refused, not ignored.
    for (flag, value) in [("--units", "x=m"), ("--weights", "x"), ("--loss", "l1")] {
        let out = ndvm(&[
            "search",
            "--data",
            train.to_str().unwrap(),
            "--time",
            "t",
            "--target",
            "x",
            flag,
            value,
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{flag}: {err}");
    }
}

#[test]
fn a_damped_oscillator_is_recovered_and_the_run_is_the_same_on_one_and_two_threads() {
    let d = dir("oscillator");
    let f = |x: &[f64]| vec![x[1], -2.0 * x[0] - 0.3 * x[1]];
    let (train, test) = (d.join("train.csv"), d.join("test.csv"));
    write_csv(
        &train,
        &["x", "v"],
        &f,
        &[vec![1.0, 0.0], vec![-0.5, 1.0]],
        Sampling {
            end: 10.0,
            gap: 0.08,
            noise: 0.01,
            seed: 3,
        },
    );
    write_csv(
        &test,
        &["x", "v"],
        &f,
        &[vec![0.2, -1.0]],
        Sampling {
            end: 10.0,
            gap: 0.08,
            noise: 0.0,
            seed: 4,
        },
    );
    let run = |threads: &str| {
        json_of(&ndvm(&[
            "search",
            "--data",
            train.to_str().unwrap(),
            "--time",
            "t",
            "--target",
            "x,v",
            "--trajectory",
            "run",
            "--autonomous",
            "--test",
            &format!("later={}", test.display()),
            "--max-evals",
            "3000",
            "--seed",
            "2",
            "--threads",
            threads,
            "--format",
            "json",
        ]))
    };
    let one = run("1");
    let m = members(&one, "later");
    // x' = v (1 node), v' = a x + b v (7 nodes).
    assert!(
        m.iter()
            .any(|&(c, tr, te)| c <= 9 && tr > 0.999 && te > 0.999),
        "{m:?}"
    );
    // The third stage bred systems of its own.
    assert!(
        one["summary"]["systems_evolved"].as_u64() > Some(0),
        "{}",
        one["summary"]
    );
    let two = run("2");
    assert_eq!(
        one["front"], two["front"],
        "the front depends on the thread count"
    );
    assert_eq!(
        one["summary"]["systems_fitted"], two["summary"]["systems_fitted"],
        "the work depends on the thread count"
    );
}

/// The shooting program's value and gradients on one lane: the runtime against the oracle
/// (dual numbers) and central finite differences.
#[test]
fn gradients_through_the_integrator_match_the_oracle_and_finite_differences() {
    let sys = System {
        states: vec!["x".into(), "y".into()],
        inputs: vec![],
        time: "t".into(),
        rhs: vec![
            "(- (* a x) (* b (* x y)))".into(),
            "(+ (- (* c y)) (* 0.5 (* x y)) (* 0.1 (sin t)))".into(),
        ],
        params: vec!["a".into(), "b".into(), "c".into()],
    };
    let src = integrate(&sys, Output::Shooting);
    let program = Program::parse(&src).unwrap();
    let oracle = Oracle::parse(&src).unwrap();
    let steps = vec![0.05, 0.07, 0.04, 0.06, 0.05, 0.0];
    // A lane of segment 1 reporting state `y` at a continuity point: it starts at `z` and is
    // compared with the next segment's start `q`.
    let inputs = |a: f64, z: &[f64]| -> Vec<(&'static str, Input)> {
        vec![
            ("a", Input::scalar(a)),
            ("b", Input::scalar(0.6)),
            ("c", Input::scalar(0.9)),
            ("%s0", Input::scalar(z[0])),
            ("%s1", Input::scalar(z[1])),
            ("%q0", Input::scalar(0.7)),
            ("%q1", Input::scalar(0.8)),
            ("%hs", Input::vector(steps.clone())),
            ("%n", Input::scalar(5.0)),
            ("%t0", Input::scalar(0.3)),
            ("%e0", Input::scalar(0.0)),
            ("%e1", Input::scalar(1.0)),
            ("%w", Input::scalar(3.0)),
        ]
    };
    let bind = |ins: &[(&str, Input)]| {
        let mut b = Bindings::new();
        for (n, v) in ins {
            b = if v.data.len() == 1 && v.shape.is_none() {
                b.scalar(n, v.data[0])
            } else {
                b.uniform(n, Tensor::vector(v.data.clone()))
            };
        }
        b
    };
    let z0 = [1.2, 1.1];
    let ins = inputs(1.3, &z0);
    let mut s = Session::<f64>::new();
    let opts = RunOptions {
        grad: GradSpec::Some(vec![
            "a".into(),
            "b".into(),
            "c".into(),
            "%s0".into(),
            "%s1".into(),
            "%q1".into(),
        ]),
        limits: Limits::default(),
        ..Default::default()
    };
    let out = s.run(&program, &bind(&ins), &opts).unwrap().clone();
    let value = out.values[0].as_ref().unwrap().as_number().unwrap();
    let o = oracle.gradient(&ins).unwrap();
    let oracle_value = match o.value {
        ndvm_check::oracle::Output::Number(v) => v,
        other => panic!("{other:?}"),
    };
    assert!(
        (value - oracle_value).abs() < 1e-12,
        "{value} {oracle_value}"
    );
    let names = oracle.inputs().to_vec();
    let oracle_grad = |name: &str| o.grads[names.iter().position(|n| n == name).unwrap()].clone();
    for name in ["a", "b", "c", "%s0", "%s1", "%q1"] {
        let mine = &out.grad(name).unwrap().per_lane;
        let theirs = oracle_grad(name);
        for (x, y) in mine.iter().zip(&theirs) {
            assert!(
                (x - y).abs() <= 1e-10 * (1.0 + y.abs()),
                "{name}: {mine:?} {theirs:?}"
            );
        }
    }
    // Central differences in `a` and in the segment's start of `y`.
    let at = |a: f64, z: &[f64]| -> f64 {
        let mut s = Session::<f64>::new();
        let o = s
            .run(&program, &bind(&inputs(a, z)), &RunOptions::default())
            .unwrap();
        o.values[0].as_ref().unwrap().as_number().unwrap()
    };
    let h = 1e-6;
    let fd_a = (at(1.3 + h, &z0) - at(1.3 - h, &z0)) / (2.0 * h);
    let ga = out.grad("a").unwrap().per_lane[0];
    assert!((fd_a - ga).abs() < 1e-6 * (1.0 + ga.abs()), "{fd_a} {ga}");
    let (mut up, mut down) = (z0, z0);
    up[1] += h;
    down[1] -= h;
    let fd_z = (at(1.3, &up) - at(1.3, &down)) / (2.0 * h);
    let gz = out.grad("%s1").unwrap().per_lane[0];
    assert!((fd_z - gz).abs() < 1e-6 * (1.0 + gz.abs()), "{fd_z} {gz}");
    // Against the next segment's start, the residual moves by minus the weight.
    assert_eq!(out.grad("%q1").unwrap().per_lane[0], -3.0);
}

#[test]
fn a_system_that_blows_up_fails_its_fit_and_nothing_else() {
    // x' = a x^2 from x = 1 leaves every bound before t = 1 / a.
    let sys = System {
        states: vec!["x".into()],
        inputs: vec![],
        time: "t".into(),
        rhs: vec!["(* a (* x x))".into()],
        params: vec!["a".into()],
    };
    let t: Vec<f64> = (0..50).map(|k| f64::from(k) * 0.1).collect();
    let tr = Trajectory {
        name: "0".into(),
        x: vec![t.iter().map(|&s| 1.0 + s).collect()],
        t,
        u: vec![],
    };
    let opts = FitOptions {
        max_step: 0.1,
        ..Default::default()
    };
    let shooting = Shooting::new(&sys, std::slice::from_ref(&tr), &opts).unwrap();
    let err = shooting
        .fit(&mut Session::new(), &[40.0], None, &opts)
        .unwrap_err();
    assert!(err.contains("not finite"), "{err}");
    // A step budget too small for the walk is an error too, not a panic.
    let tight = FitOptions {
        limits: Limits {
            max_steps: 100,
            ..Limits::default()
        },
        ..opts
    };
    let err = shooting
        .fit(&mut Session::new(), &[0.1], None, &tight)
        .unwrap_err();
    assert!(err.contains("step"), "{err}");
}

#[test]
fn bad_trajectories_are_errors_that_name_the_file_the_line_and_the_column() {
    let d = dir("bad");
    let case = |name: &str, text: &str, extra: &[&str]| -> String {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        let mut args = vec![
            "search",
            "--data",
            p.to_str().unwrap(),
            "--time",
            "t",
            "--target",
            "x,y",
            "--max-evals",
            "10",
        ];
        args.extend_from_slice(extra);
        let out = ndvm(&args);
        assert_eq!(out.status.code(), Some(2), "{name}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = case("order.csv", "t,x,y\n0,1,2\n0.5,1,2\n0.4,1,2\n", &[]);
    assert!(
        e.contains("order.csv:4") && e.contains("`t`") && e.contains("increase"),
        "{e}"
    );
    let e = case(
        "one.csv",
        "k,t,x,y\na,0,1,2\na,1,2,3\nb,0,1,2\n",
        &["--trajectory", "k"],
    );
    assert!(
        e.contains("one.csv:4") && e.contains("trajectory `b`") && e.contains("one row"),
        "{e}"
    );
    let e = case("word.csv", "t,x,y\n0,1,2\n1,two,3\n", &[]);
    assert!(
        e.contains("word.csv:3") && e.contains("`x`") && e.contains("not a number"),
        "{e}"
    );
    let e = case("col.csv", "t,x,z\n0,1,2\n1,2,3\n", &[]);
    assert!(e.contains("no column `y`"), "{e}");
    let e = case("nan.csv", "t,x,y\n0,1,2\n1,nan,3\n", &[]);
    assert!(
        e.contains("nan.csv:3") && e.contains("`x`") && e.contains("finite"),
        "{e}"
    );
}

#[test]
fn seeded_systems_are_fitted_and_one_that_blows_up_is_recorded() {
    let d = dir("seeds");
    let f = |x: &[f64]| vec![x[1], -2.0 * x[0] - 0.3 * x[1]];
    let train = d.join("train.csv");
    write_csv(
        &train,
        &["x", "v"],
        &f,
        &[vec![1.0, 0.0]],
        Sampling {
            end: 8.0,
            gap: 0.1,
            noise: 0.0,
            seed: 5,
        },
    );
    let seeds = d.join("seeds.jsonl");
    std::fs::write(
        &seeds,
        concat!(
            r#"{"src": {"x": "v", "v": "(- (* a x) (* b v))"}, "init": {"a": -1, "b": 1}}"#,
            "\n",
            r#"{"src": ["(* 40 (* x (* x x)))", "(* 40 (* v (* v v)))"]}"#,
            "\n"
        ),
    )
    .unwrap();
    let run = |file: &Path| {
        ndvm(&[
            "search",
            "--data",
            train.to_str().unwrap(),
            "--time",
            "t",
            "--target",
            "x,v",
            "--autonomous",
            "--seed-programs",
            file.to_str().unwrap(),
            "--max-evals",
            "100",
            "--threads",
            "2",
            "--format",
            "json",
        ])
    };
    let v = json_of(&run(&seeds));
    let summary = &v["summary"];
    assert!(
        summary["systems_failed"].as_u64().unwrap() >= 1,
        "{summary}"
    );
    assert!(
        !summary["failures"].as_array().unwrap().is_empty(),
        "{summary}"
    );
    let m = members(&v, "none");
    assert!(m.iter().any(|&(c, tr, _)| c <= 9 && tr > 0.999999), "{m:?}");
    // A seed that is not a system of these states is an error naming the line.
    let bad = d.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"src\": {\"x\": \"v\"}}\n{\"src\": {\"q\": \"v\"}}\n",
    )
    .unwrap();
    let out = run(&bad);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("bad.jsonl:1") && e.contains("`src.v`"), "{e}");
}

/// The outside proposer with systems: every line answered in order (bad ones with their
/// error), its systems fitted and on the front, the front sent after each batch.
#[test]
fn an_outside_proposer_of_systems_is_answered_line_by_line() {
    let d = dir("proposer");
    // Lotka-Volterra: the example proposer's quadratic systems hold it.
    let f = |x: &[f64]| vec![x[0] * (1.0 - 0.5 * x[1]), x[1] * (-0.8 + 0.4 * x[0])];
    let train = d.join("train.csv");
    write_csv(
        &train,
        &["x", "y"],
        &f,
        &[vec![1.5, 1.0]],
        Sampling {
            end: 10.0,
            gap: 0.1,
            noise: 0.0,
            seed: 9,
        },
    );
    let log = d.join("proposer.log");
    let _ = std::fs::remove_file(&log);
    let proposer = format!(
        "python3 {}/../examples/ode/system_proposer.py --malformed --rounds 3 --log {}",
        env!("CARGO_MANIFEST_DIR"),
        log.display()
    );
    let v = json_of(&ndvm(&[
        "search",
        "--data",
        train.to_str().unwrap(),
        "--time",
        "t",
        "--target",
        "x,y",
        "--autonomous",
        "--proposer",
        &proposer,
        "--proposer-only",
        "--budget",
        "60",
        "--threads",
        "2",
        "--format",
        "json",
    ]));
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let task = &lines[0]["task"];
    assert_eq!(task["mode"], "ode");
    assert_eq!(task["states"], serde_json::json!(["x", "y"]));
    assert_eq!(task["reads"], serde_json::json!(["x", "y"]));
    let answer = |id: &str| {
        lines
            .iter()
            .find(|l| l["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}: {lines:?}"))
    };
    let error = |id: &str| answer(id)["error"].as_str().unwrap_or("").to_string();
    assert!(
        error("missing-state").contains("`src.y`"),
        "{}",
        error("missing-state")
    );
    assert!(
        error("unparseable").contains("is not a program"),
        "{}",
        error("unparseable")
    );
    assert!(!error("blows-up").is_empty());
    assert!(lines.iter().any(|l| l["error"]
        .as_str()
        .is_some_and(|e| e.contains("not a JSON line"))));
    // The quadratic system fits the data: its answer carries the member's fields.
    let quad = answer("first-1");
    assert!(quad["error"].is_null(), "{quad}");
    assert!(quad["train"]["r2"].as_f64().unwrap() > 0.99, "{quad}");
    assert!(quad["equations"]["x"]["infix"].is_string());
    assert!(quad["initial"].is_object() && quad["params"].is_object());
    assert!(lines.iter().filter(|l| l.get("front").is_some()).count() >= 3);
    let s = &v["summary"];
    assert_eq!(s["proposer"]["bad_lines"], 3, "{s}");
    assert_eq!(s["stopped"], "proposer", "{s}");
    assert!(s["systems_outside"].as_u64().unwrap() >= 6, "{s}");
    assert_eq!(s["proposals"], 0, "{s}");
    let m = members(&v, "none");
    assert!(m.iter().any(|&(_, tr, _)| tr > 0.999), "{m:?}");
}

/// `--out` keeps a checkpoint that `--resume` continues: the third stage goes on from its
/// islands (the same systems from two copies of one checkpoint), nothing on the earlier front
/// is lost, and other data or a settings flag is refused.
#[test]
fn a_search_resumed_from_its_checkpoint_goes_on_and_loses_nothing() {
    let d = dir("resume");
    let f = |x: &[f64]| vec![x[1], -1.5 * x[0] - 0.2 * x[1]];
    let train = d.join("train.csv");
    write_csv(
        &train,
        &["x", "v"],
        &f,
        &[vec![1.0, 0.0]],
        Sampling {
            end: 8.0,
            gap: 0.1,
            noise: 0.0,
            seed: 3,
        },
    );
    let first = d.join("first");
    let _ = std::fs::remove_dir_all(&first);
    let search = |extra: &[&str]| {
        let mut a = vec![
            "search",
            "--data",
            train.to_str().unwrap(),
            "--time",
            "t",
            "--target",
            "x,v",
            "--max-evals",
            "200",
            "--threads",
            "2",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        ndvm(&a)
    };
    let v = json_of(&search(&[
        "--autonomous",
        "--seed",
        "4",
        "--out",
        first.to_str().unwrap(),
    ]));
    let checkpoint: Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("checkpoint.json")).unwrap())
            .unwrap();
    assert_eq!(checkpoint["mode"], "ode");
    assert_eq!(checkpoint["generation"], 4);
    let copy = d.join("copy");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(first.join("checkpoint.json"), copy.join("checkpoint.json")).unwrap();
    let a = json_of(&search(&["--resume", first.to_str().unwrap()]));
    let b = json_of(&search(&["--resume", copy.to_str().unwrap()]));
    assert_eq!(
        a["front"], b["front"],
        "resuming one checkpoint twice differs"
    );
    let before = v["summary"]["systems_fitted"].as_u64().unwrap();
    assert!(
        a["summary"]["systems_fitted"].as_u64().unwrap() > before,
        "{}",
        a["summary"]
    );
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("checkpoint.json")).unwrap())
            .unwrap();
    assert_eq!(again["generation"], 8);
    // Every member of the earlier front is on the new one or beaten by one no larger.
    let front = |v: &Value| -> Vec<(u64, f64)> {
        v["front"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["complexity"].as_u64().unwrap(),
                    m["train_loss"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let now = front(&a);
    for (c, l) in front(&v) {
        assert!(
            now.iter().any(|&(c2, l2)| c2 <= c && l2 <= l),
            "({c}, {l}) lost: {now:?}"
        );
    }
    // A settings flag, or other data, is refused.
    let out = search(&["--resume", first.to_str().unwrap(), "--segment", "4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--segment would change them"));
    let other = d.join("other.csv");
    // The same file without its last row.
    let text = std::fs::read_to_string(&train).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    std::fs::write(&other, rows[..rows.len() - 1].join("\n") + "\n").unwrap();
    let out = ndvm(&[
        "search",
        "--data",
        other.to_str().unwrap(),
        "--time",
        "t",
        "--target",
        "x,v",
        "--resume",
        first.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("made on other data"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
