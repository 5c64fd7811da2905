//! Lane decomposition: a batched run equals, lane by lane, single-lane runs on each lane's
//! inputs, for every conformance program and for programs built to diverge.

use ndvm_tests::divergent::{divergent, Divergent};
use ndvm_tests::{suite, SplitMix};
use runtime_cpu::{Bindings, GradSpec, LaneValue, Program, RunOptions, Session, Tensor};

fn ulps_apart(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a == b {
        return 0;
    }
    let (x, y) = (a.to_bits() as i64, b.to_bits() as i64);
    (x - y).unsigned_abs()
}

fn same(a: &LaneValue, b: &LaneValue) -> bool {
    match (a, b) {
        (LaneValue::Number(x), LaneValue::Number(y)) => ulps_apart(*x, *y) <= 4,
        (LaneValue::Tensor(s, x), LaneValue::Tensor(t, y)) => {
            s == t && x.iter().zip(y).all(|(p, q)| ulps_apart(*p, *q) <= 4)
        }
        (a, b) => a == b,
    }
}

/// Runs `program` batched over `lanes` random lanes and once per lane, and compares.
fn check(
    name: &str,
    program: &Program,
    inputs: &[(String, f64, f64)],
    uniform: &Bindings,
    lanes: usize,
    seed: u64,
) {
    let mut rng = SplitMix(seed);
    let columns: Vec<(String, Vec<f64>)> = inputs
        .iter()
        .map(|(n, lo, hi)| {
            (
                n.clone(),
                (0..lanes).map(|_| rng.uniform(*lo, *hi)).collect(),
            )
        })
        .collect();
    let mut batched = uniform.clone();
    for (n, col) in &columns {
        batched = batched.lanes(n, col.clone()).expect("same lane count");
    }
    let opts = RunOptions {
        grad: GradSpec::Some(columns.iter().map(|(n, _)| n.clone()).collect()),
        ..Default::default()
    };
    let mut session = Session::<f64>::new();
    let out = session
        .run(program, &batched, &opts)
        .cloned()
        .expect("bound");
    assert_eq!(out.lanes, lanes);
    for l in 0..lanes {
        let mut single = uniform.clone();
        for (n, col) in &columns {
            single = single.scalar(n, col[l]);
        }
        let one = session.run(program, &single, &opts).expect("bound");
        match (&out.values[l], &one.values[0]) {
            (Ok(a), Ok(b)) => assert!(
                same(a, b),
                "{name} B={lanes} lane {l}: {a:?} vs single {b:?}"
            ),
            (Err(a), Err(b)) => assert_eq!(a, b, "{name} B={lanes} lane {l}"),
            (a, b) => panic!("{name} B={lanes} lane {l}: batched {a:?} vs single {b:?}"),
        }
        if out.values[l].is_err() {
            continue;
        }
        for g in &out.grads {
            let gb = g.per_lane[l];
            let gs = one.grad(&g.name).expect("same inputs").per_lane[0];
            assert!(
                ulps_apart(gb, gs) <= 4,
                "{name} B={lanes} lane {l} d/d{}: {gb} vs single {gs}",
                g.name
            );
        }
    }
}

#[test]
fn suite_programs_decompose_into_single_lanes() {
    for p in suite() {
        let program = Program::parse(&p.src).expect("parses");
        // Per-lane inputs vary each scalar input by up to 20% around its reference value.
        let inputs: Vec<(String, f64, f64)> = p
            .scalars
            .iter()
            .map(|(n, x)| (n.clone(), (x * 0.8).min(x * 1.2), (x * 0.8).max(x * 1.2)))
            .collect();
        let mut uniform = runtime_cpu::Bindings::new();
        if let Some((n, r, c, d)) = &p.matrix {
            uniform = uniform.uniform(n, Tensor::matrix(*r, *c, d.clone()).expect("matrix"));
        }
        if inputs.is_empty() {
            continue;
        }
        for (i, &lanes) in [1usize, 7, 64, 1000].iter().enumerate() {
            if p.name == "kalman2d_T80" && lanes == 1000 {
                check(&p.name, &program, &inputs, &uniform, 200, 99);
                continue;
            }
            check(&p.name, &program, &inputs, &uniform, lanes, 7 + i as u64);
        }
    }
}

#[test]
fn divergent_programs_decompose_into_single_lanes() {
    for Divergent {
        name,
        program,
        inputs,
    } in divergent()
    {
        for (i, &lanes) in [1usize, 7, 64, 1000].iter().enumerate() {
            check(
                name,
                &program,
                &inputs,
                &Bindings::new(),
                lanes,
                1234 + i as u64,
            );
        }
    }
}

#[test]
fn a_nan_lane_never_reaches_another_lane() {
    // Lane 1 takes the sqrt of a negative number in the branch it does not take; its gradient
    // and every other lane's must be exact, and the summed gradient finite.
    let p = Program::parse("(if (> x 0.0) (* a (sqrt x)) (* a x))").unwrap();
    let b = Bindings::new()
        .scalar("a", 2.0)
        .lanes("x", vec![4.0, -1.0, 9.0])
        .unwrap();
    let opts = RunOptions {
        grad: GradSpec::All,
        ..Default::default()
    };
    let out = Session::<f64>::new().run(&p, &b, &opts).cloned().unwrap();
    let ga = out.grad("a").unwrap();
    let gx = out.grad("x").unwrap();
    assert_eq!(ga.per_lane, vec![2.0, -1.0, 3.0]);
    assert_eq!(gx.per_lane, vec![0.5, 2.0, 1.0 / 3.0]);
    assert_eq!(ga.sum, vec![4.0]);
    let p = Program::parse("(+ (sqrt x) (* a x))").unwrap();
    let out = Session::<f64>::new().run(&p, &b, &opts).cloned().unwrap();
    let ga = out.grad("a").unwrap();
    assert_eq!(ga.per_lane[0], 4.0);
    assert_eq!(ga.per_lane[2], 9.0);
    assert!(out.values[1]
        .as_ref()
        .unwrap()
        .as_number()
        .unwrap()
        .is_nan());
}

#[test]
fn a_failed_lane_has_nan_gradients_in_a_reused_session() {
    // One session: every lane succeeds, then lane 1 fails (an error, not a NaN), then every
    // lane succeeds again. No gradient of an earlier run survives on the failed lane, and
    // vector inputs (several numbers a lane) behave alike.
    let p = Program::parse("(if (> x 0.0) (* a (dot v v) x) (car 1.0))").unwrap();
    let opts = RunOptions {
        grad: GradSpec::All,
        ..Default::default()
    };
    let bind = |xs: Vec<f64>| {
        Bindings::new()
            .scalar("a", 2.0)
            .lanes("x", xs)
            .unwrap()
            .lane_tensors(
                "v",
                runtime_cpu::Shape::Vector(2),
                vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            )
            .unwrap()
    };
    let mut s = Session::<f64>::new();
    let first = s
        .run(&p, &bind(vec![1.0, 2.0, 3.0]), &opts)
        .cloned()
        .unwrap();
    assert!(first.values.iter().all(|v| v.is_ok()));
    let out = s
        .run(&p, &bind(vec![1.0, -2.0, 3.0]), &opts)
        .cloned()
        .unwrap();
    assert!(out.values[1].is_err());
    for g in &out.grads {
        let n = g.shape.len().max(1);
        assert!(
            g.per_lane[n..2 * n].iter().all(|x| x.is_nan()),
            "{}",
            g.name
        );
        assert!(g.per_lane[..n].iter().all(|x| x.is_finite()), "{}", g.name);
        assert!(g.sum.iter().all(|x| x.is_finite()), "{}", g.name);
    }
    let ga = &out.grad("a").unwrap().per_lane;
    assert_eq!((ga[0], ga[2]), (5.0, 183.0));
    let again = s
        .run(&p, &bind(vec![1.0, 2.0, 3.0]), &opts)
        .cloned()
        .unwrap();
    for (g, h) in again.grads.iter().zip(&first.grads) {
        assert_eq!(g.per_lane, h.per_lane);
        assert_eq!(g.sum, h.sum);
    }
}

#[test]
fn lane_blocks_give_the_same_results_as_one_walk() {
    let p = Program::parse(
        "(loop ((y x) (k 0)) (if (< y 1.0) (+ y (* a k)) (recur (* y 0.5 a) (+ k 1))))",
    )
    .unwrap();
    let mut rng = SplitMix(5);
    let xs: Vec<f64> = (0..300).map(|_| rng.uniform(1.0, 100.0)).collect();
    let b = Bindings::new().scalar("a", 0.9).lanes("x", xs).unwrap();
    let mut session = Session::<f64>::new();
    let whole = session
        .run(
            &p,
            &b,
            &RunOptions {
                grad: GradSpec::All,
                ..Default::default()
            },
        )
        .cloned()
        .unwrap();
    let blocked = session
        .run(
            &p,
            &b,
            &RunOptions {
                grad: GradSpec::All,
                lane_block: 64,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(blocked.walks, 5);
    for l in 0..300 {
        assert_eq!(whole.values[l], blocked.values[l]);
    }
    assert_eq!(whole.grads, blocked.grads);
}

#[test]
fn sixty_five_thousand_lanes_run_in_one_batch() {
    let p = Program::parse("(if (< x 0.5) (* a (exp x)) (sin (* a x)))").unwrap();
    let lanes = 65_536;
    let mut rng = SplitMix(65_536);
    let xs: Vec<f64> = (0..lanes).map(|_| rng.uniform(0.0, 1.0)).collect();
    let b = Bindings::new()
        .scalar("a", 1.3)
        .lanes("x", xs.clone())
        .unwrap();
    // One walk over every lane (no blocking).
    let opts = RunOptions {
        grad: GradSpec::All,
        lane_block: 0,
        ..Default::default()
    };
    let mut session = Session::<f64>::new();
    let out = session.run(&p, &b, &opts).cloned().unwrap();
    assert_eq!(out.lanes, lanes);
    assert_eq!(out.walks, 1);
    for l in (0..lanes).step_by(4099) {
        let one = session
            .run(
                &p,
                &Bindings::new().scalar("a", 1.3).scalar("x", xs[l]),
                &opts,
            )
            .unwrap();
        assert_eq!(out.values[l], one.values[0], "lane {l}");
        assert_eq!(
            out.grad("a").unwrap().per_lane[l],
            one.grad("a").unwrap().per_lane[0],
            "lane {l}"
        );
        assert_eq!(
            out.grad("x").unwrap().per_lane[l],
            one.grad("x").unwrap().per_lane[0],
            "lane {l}"
        );
    }
}
