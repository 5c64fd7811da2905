//! Replay: a session run again on new numbers of the same layout replays the last walk's trace
//! where the walk's decisions come out the same, and walks afresh where they do not. Either way
//! the outcome is a fresh session's, bit for bit: values, gradients per lane and summed, node
//! visits and walks. Checked for the conformance suite, the programs built to diverge, the
//! paper's corpus, and programs whose branches, loop trips and indices follow the numbers.

use ndvm_tests::devices::suite_inputs;
use ndvm_tests::divergent::{divergent, Divergent};
use ndvm_tests::{fuzz_records, suite, SplitMix};
use runtime_cpu::{Bindings, GradSpec, Outcome, Program, RunOptions, Session};

/// An outcome as text that tells apart every bit of its numbers (NaN as NaN).
fn fingerprint(out: &Outcome) -> String {
    let bits = |xs: &[f64]| -> Vec<u64> {
        xs.iter()
            .map(|x| if x.is_nan() { 1 } else { x.to_bits() })
            .collect()
    };
    let mut s = format!(
        "lanes {} steps {} walks {}\n",
        out.lanes, out.steps, out.walks
    );
    for v in &out.values {
        s += &format!("{v:?}\n");
    }
    for g in &out.grads {
        s += &format!(
            "{} {:?} {} {:?} {:?}\n",
            g.name,
            g.shape,
            g.uniform,
            bits(&g.per_lane),
            bits(&g.sum)
        );
    }
    s
}

/// Runs `program` on each of `runs` in one session and in fresh ones, and asserts that every
/// outcome is the same; returns how many of the reused session's runs replayed.
fn check(name: &str, program: &Program, runs: &[Bindings], grad: &GradSpec) -> u64 {
    let opts = RunOptions {
        grad: grad.clone(),
        ..RunOptions::default()
    };
    let mut reused = Session::<f64>::new();
    for (k, b) in runs.iter().enumerate() {
        let want = Session::<f64>::new()
            .run(program, b, &opts)
            .map(fingerprint);
        let got = reused.run(program, b, &opts).map(fingerprint);
        match (want, got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{name}: run {k} in a reused session"),
            (Err(w), Err(g)) => assert_eq!(w, g, "{name}: run {k}"),
            (w, g) => panic!("{name}: run {k}: fresh {w:?}, reused {g:?}"),
        }
    }
    reused.replayed()
}

/// `count` bindings of `inputs` (name, low, high), each per lane over `lanes` lanes when
/// `lanes > 0`, else uniform; over `base`. An input whose name starts with `n` is a whole
/// number (the draw rounded down).
fn draws(
    inputs: &[(String, f64, f64)],
    base: &Bindings,
    lanes: usize,
    count: usize,
    seed: u64,
) -> Vec<Bindings> {
    let mut rng = SplitMix(seed);
    (0..count)
        .map(|_| {
            let mut b = base.clone();
            for (n, lo, hi) in inputs {
                let whole = n.starts_with('n');
                let mut draw = || {
                    let x = rng.uniform(*lo, *hi);
                    if whole {
                        x.floor()
                    } else {
                        x
                    }
                };
                b = if lanes == 0 {
                    b.scalar(n, draw())
                } else {
                    let col = (0..lanes).map(|_| draw()).collect();
                    b.lanes(n, col).expect("one lane count")
                };
            }
            b
        })
        .collect()
}

#[test]
fn suite_programs_replay_as_fresh_sessions_run() {
    for p in suite() {
        let program = Program::parse(&p.src).expect("parses");
        let (inputs, uniform) = suite_inputs(&p);
        for (i, lanes) in [0usize, 1, 7, 64].into_iter().enumerate() {
            let runs = draws(&inputs, &uniform, lanes, 6, 40 + i as u64);
            // Numbers change, decisions do not (the suite's branches sit far from its inputs):
            // every run after the first replays.
            let hits = check(&p.name, &program, &runs, &GradSpec::All);
            assert_eq!(hits, 5, "{}: replays at {lanes} lanes", p.name);
            check(&p.name, &program, &runs, &GradSpec::None);
        }
    }
}

#[test]
fn divergent_programs_replay_as_fresh_sessions_run() {
    for Divergent {
        name,
        program,
        inputs,
    } in divergent()
    {
        for (i, lanes) in [0usize, 1, 5, 64].into_iter().enumerate() {
            let runs = draws(&inputs, &Bindings::new(), lanes, 8, 90 + i as u64);
            check(name, &program, &runs, &GradSpec::All);
        }
    }
}

#[test]
fn corpus_programs_replay_as_fresh_sessions_run() {
    for r in fuzz_records() {
        let Ok(program) = Program::parse(&r.src) else {
            continue;
        };
        let inputs: Vec<(String, f64, f64)> = r
            .params
            .iter()
            .map(|(n, x)| (n.clone(), x - 0.5 * x.abs() - 0.1, x + 0.5 * x.abs() + 0.1))
            .collect();
        let name = format!("corpus {}", r.id);
        for (i, lanes) in [0usize, 3].into_iter().enumerate() {
            let runs = draws(&inputs, &Bindings::new(), lanes, 5, r.id * 7 + i as u64);
            check(&name, &program, &runs, &GradSpec::All);
        }
    }
}

/// Programs whose decisions follow the numbers: a uniform branch, a loop's trip count, an
/// index, a per-lane test, a test that fails on some lanes only: runs alternate between
/// inputs that decide one way and the other, and repeat, so that both hits and misses occur.
#[test]
fn decisions_that_change_between_runs_walk_again() {
    let cases: &[ndvm_tests::divergent::Case] = &[
        ("branch", "(if (> a 0.0) (* a a b) (sin (* a b)))", &[("a", -1.0, 1.0), ("b", 0.5, 2.0)]),
        (
            "trip_count",
            "(loop ((y a) (k 0)) (if (< y 1.0) (* b (+ y k)) (recur (* y 0.5) (+ k 1))))",
            &[("a", 1.0, 40.0), ("b", 0.5, 2.0)],
        ),
        (
            "index",
            "(let ((v (vec a (* 2.0 a) (* b a)))) (* b (ref v (if (> b 1.0) 2 (if (> b 0.7) 1 0)))))",
            &[("a", 0.5, 2.0), ("b", 0.5, 1.5)],
        ),
        ("size", "(vsum (scale a (ones (if (> b 1.0) 3 2))))", &[("a", 0.5, 2.0), ("b", 0.5, 1.5)]),
        (
            "index_input",
            "(* a (ref (vec a b (* a b)) n))",
            &[("a", 0.5, 2.0), ("b", 0.5, 1.5), ("n", 0.0, 3.0)],
        ),
        ("size_input", "(vsum (scale a (iota n)))", &[("a", 0.5, 2.0), ("n", 1.0, 4.0)]),
        (
            // Without gradients, a long loop gives back its dead slots as it runs (the live
            // ones move down), which a replay cannot redo: such a walk is not kept.
            "long_loop",
            "(loop ((y a) (s 0.0) (k 0)) (if (= k 6000) (+ y s) (recur (* y 0.999) (+ s (* b y)) (+ k 1))))",
            &[("a", 0.5, 2.0), ("b", 0.5, 1.5)],
        ),
        (
            "failing_lanes",
            "(if (> a 0.5) (ref (vec a b) 5) (* a b))",
            &[("a", 0.0, 1.0), ("b", 0.5, 2.0)],
        ),
        (
            "kinds",
            "(if (> a 0.5) (list a b) (* a b))",
            &[("a", 0.0, 1.0), ("b", 0.5, 2.0)],
        ),
    ];
    for &(name, src, ranges) in cases {
        let program = Program::parse(src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let inputs: Vec<(String, f64, f64)> = ranges
            .iter()
            .map(|&(n, lo, hi)| (n.to_string(), lo, hi))
            .collect();
        for (i, lanes) in [0usize, 1, 4, 64].into_iter().enumerate() {
            let mut runs = draws(&inputs, &Bindings::new(), lanes, 12, 7 + i as u64);
            // Each binding twice in a row: the second of a pair replays the first.
            runs = runs.into_iter().flat_map(|b| [b.clone(), b]).collect();
            let hits = check(name, &program, &runs, &GradSpec::All);
            // On one lane each walk is one walk that succeeds (but where it fails): the second
            // run of each pair replays the first, and a first one replays too where it decides
            // as the run before it did; the others miss.
            if lanes <= 1 && !matches!(name, "failing_lanes" | "kinds") {
                assert!(
                    (12..24).contains(&hits),
                    "{name} at {lanes} lanes: {hits} replays"
                );
            }
            check(name, &program, &runs, &GradSpec::None);
        }
    }
}

/// A replay is bit for bit the walk it replays, so an optimiser's loop of runs on one
/// session (the case replay is for) gives a fresh session's outcome at every step, including
/// when another program's run comes between.
#[test]
fn another_program_between_runs_does_not_confuse_a_replay() {
    let a = Program::parse("(* x (exp (* k t)))").expect("parses");
    let b = Program::parse("(+ x (* k t t))").expect("parses");
    let opts = RunOptions {
        grad: GradSpec::All,
        ..RunOptions::default()
    };
    let mut reused = Session::<f64>::new();
    let mut rng = SplitMix(5);
    for step in 0..20 {
        let x = Bindings::new()
            .scalar("x", rng.uniform(0.5, 2.0))
            .scalar("k", rng.uniform(-1.0, 1.0))
            .lanes("t", (0..9).map(|i| i as f64 * 0.25).collect())
            .expect("lanes");
        let p = if step % 5 == 4 { &b } else { &a };
        let want = fingerprint(Session::<f64>::new().run(p, &x, &opts).expect("runs"));
        let got = fingerprint(reused.run(p, &x, &opts).expect("runs"));
        assert_eq!(want, got, "step {step}");
    }
}

/// A device attached after a walk was kept decides the next run: it walks (and the device
/// runs its regions), as in a fresh session with that device.
#[test]
fn a_device_attached_after_a_kept_walk_runs_the_next_run() {
    use runtime_gpu::region::TwinRegions;
    let program = Program::parse("(* x (exp (* k x)))").expect("parses");
    let opts = RunOptions {
        grad: GradSpec::All,
        ..RunOptions::default()
    };
    let bind = |k: f64| {
        Bindings::new()
            .scalar("k", k)
            .lanes("x", (0..64).map(|i| i as f64 / 64.0).collect())
            .expect("lanes")
    };
    let mut reused = Session::<f32>::new();
    reused.run(&program, &bind(0.5), &opts).expect("runs");
    reused.set_device(Some(Box::new(TwinRegions::<f32>::new())));
    let got = fingerprint(reused.run(&program, &bind(0.7), &opts).expect("runs"));
    let mut fresh = Session::<f32>::new();
    fresh.set_device(Some(Box::new(TwinRegions::<f32>::new())));
    let want = fingerprint(fresh.run(&program, &bind(0.7), &opts).expect("runs"));
    assert_eq!(reused.replayed(), 0);
    assert_eq!(want, got);
    assert_eq!(reused.region_counts(), fresh.region_counts());
}

/// A session keeps the places of its inputs among the bindings while the bindings' names stay
/// as they were (their numbers rewritten in place, or a clone); bindings whose names moved (a
/// name bound before the inputs, a binding replaced by one of another kind) are looked up
/// again, and every run still gives a fresh session's outcome.
#[test]
fn inputs_are_found_again_when_the_names_move() {
    let program = Program::parse("(+ (* a x) (* b (sin x)))").expect("parses");
    let base = Bindings::new()
        .scalar("a", 2.0)
        .scalar("b", 0.5)
        .scalar("x", 1.5);
    let mut rewritten = base.clone();
    for (name, v) in [("a", -3.0), ("b", 4.0), ("x", 0.25)] {
        rewritten.numbers_mut(name).expect("bound").3[0] = v;
    }
    let runs = vec![
        base.clone(),
        rewritten.clone(),
        // A name sorted before every input moves each input one place on.
        base.clone().scalar("_", 9.0),
        rewritten.clone().scalar("_", 9.0).scalar("aa", 7.0),
        // The same numbers, `x` now per lane: another layout.
        base.clone()
            .lanes("x", vec![1.5, -0.5, 2.0])
            .expect("binds"),
        base.clone()
            .lanes("x", vec![0.1, 0.2, 0.3])
            .expect("binds")
            .lanes("_", vec![5.0, 6.0, 7.0])
            .expect("binds"),
        base,
    ];
    // Equal bindings are equal however they were built.
    assert!(rewritten != runs[0]);
    assert_eq!(
        Bindings::new().scalar("a", 1.0),
        Bindings::new().scalar("a", 1.0)
    );
    for grad in [GradSpec::All, GradSpec::Some(vec!["x".into(), "a".into()])] {
        check("moving names", &program, &runs, &grad);
    }
    // A missing input is an error naming it, and the next run finds its inputs again.
    let opts = RunOptions::default();
    let mut s = Session::<f64>::new();
    s.run(&program, &runs[1], &opts).expect("runs");
    let missing = Bindings::new().scalar("a", 1.0).scalar("x", 1.0);
    let err = s.run(&program, &missing, &opts).expect_err("b is unbound");
    assert!(err.to_string().contains('b'), "{err}");
    let again = s
        .run(&program, &runs[1], &opts)
        .expect("runs")
        .values
        .clone();
    let fresh = Session::<f64>::new()
        .run(&program, &runs[1], &opts)
        .expect("runs")
        .values
        .clone();
    assert_eq!(format!("{again:?}"), format!("{fresh:?}"));
}

/// A session keeps its outcome's gradients sized while the program, the bindings' names, the
/// lanes and the gradients asked stay as they were, and sizes them again when the gradients
/// asked change (more, fewer, another order, none) or a lane fails: each run gives a fresh
/// session's outcome, gradient names, shapes and sums included.
#[test]
fn gradients_asked_differently_between_runs() {
    let program = Program::parse("(+ (* a x) (* (dot v v) (sqrt (- x b))))").expect("parses");
    let base = Bindings::new()
        .scalar("a", 2.0)
        .scalar("b", 0.5)
        .uniform("v", runtime_cpu::Tensor::vector(vec![1.0, -2.0]))
        .lanes("x", vec![1.5, 0.75, 3.0, 2.0])
        .expect("binds");
    let mut moved = base.clone();
    moved.numbers_mut("x").expect("bound").3[1] = 0.25;
    moved.numbers_mut("a").expect("bound").3[0] = -1.0;
    let some = |names: &[&str]| GradSpec::Some(names.iter().map(|n| n.to_string()).collect());
    let asks = [
        GradSpec::All,
        GradSpec::All,
        some(&["b"]),
        some(&["b"]),
        some(&["x", "v", "a"]),
        some(&["v", "x", "a"]),
        GradSpec::None,
        some(&["a", "a", "v"]),
        GradSpec::All,
    ];
    let mut reused = Session::<f64>::new();
    for (k, grad) in asks.iter().enumerate() {
        // Every other run over numbers that put a lane below `b` (a NaN gradient there).
        let b = if k % 2 == 0 { &base } else { &moved };
        let opts = RunOptions {
            grad: grad.clone(),
            ..RunOptions::default()
        };
        let want = fingerprint(Session::<f64>::new().run(&program, b, &opts).expect("runs"));
        let got = fingerprint(reused.run(&program, b, &opts).expect("runs"));
        assert_eq!(want, got, "run {k} ({grad:?})");
    }
}
