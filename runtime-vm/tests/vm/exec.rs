//! Execution: blocks, divergence across lanes, shapes, lane blocks, limits and bindings.

use super::run;
use runtime_cpu::{Bindings, Shape, Tensor};
use runtime_vm::{Error, Grad, Limits, Options, Program, Vm};

fn lanes(name: &str, xs: &[f64]) -> Bindings {
    Bindings::new().lanes(name, xs.to_vec()).unwrap()
}

#[test]
fn dup_loops_and_nested_loops() {
    // x <- x * x, 2 x 3 times: x^(2^6).
    let out = run(
        "load x\nloop 2\nloop 3\ndup\nmul\nend\nend",
        &lanes("x", &[1.01, 0.5]),
    )
    .unwrap();
    for (l, x) in [1.01f64, 0.5].into_iter().enumerate() {
        let want = x.powi(64);
        assert!((out.values[l] - want).abs() <= 1e-14 * want);
        let g = out.grad("x").unwrap().per_lane[l];
        assert!((g - 64.0 * x.powi(63)).abs() <= 1e-12 * g.abs());
    }
    // load, loop, then twice: the inner loop, three trips of dup mul end, the outer end.
    assert_eq!(out.steps, 2 + 2 * (1 + 3 * 3 + 1));
}

#[test]
fn a_zero_trip_loop_skips_its_body() {
    let out = run("load x\nloop 0\nneg\nexp\nneg\nend", &lanes("x", &[2.0])).unwrap();
    assert_eq!(out.values, [2.0]);
    assert_eq!(out.grad("x").unwrap().per_lane, [1.0]);
}

#[test]
fn a_branch_may_consume_values_below_it() {
    // s x g: lanes with g != 0 add, the others subtract, both reading s and x from below.
    let src = "load s\nload x\nload g\nbranch\nadd\nelse\nsub\nend";
    let b = lanes("g", &[1.0, 0.0, 2.0, 0.0])
        .lanes("x", vec![1.0, 2.0, 3.0, 4.0])
        .unwrap()
        .scalar("s", 10.0);
    let out = run(src, &b).unwrap();
    assert_eq!(out.values, [11.0, 8.0, 13.0, 6.0]);
    assert_eq!(out.grad("x").unwrap().per_lane, [1.0, -1.0, 1.0, -1.0]);
    assert_eq!(out.grad("s").unwrap().per_lane, [1.0; 4]);
    assert_eq!(out.grad("s").unwrap().sum, [4.0]);
}

#[test]
fn nested_divergent_branches_and_a_loop_inside_one() {
    // g1 ? (g2 ? 2x : x^8) : -x, per lane.
    let src = "load x\nload g1\nbranch\n load g2\n branch\n  push 2\n  mul\n else\n  loop 3\n   dup\n   mul\n  end\n end\nelse\n neg\nend";
    let b = lanes("x", &[1.5, 1.5, 1.5, 1.5])
        .lanes("g1", vec![1.0, 1.0, 0.0, 0.0])
        .unwrap()
        .lanes("g2", vec![1.0, 0.0, 1.0, 0.0])
        .unwrap();
    let out = run(src, &b).unwrap();
    assert_eq!(out.values, [3.0, 1.5f64.powi(8), -1.5, -1.5]);
    let g = &out.grad("x").unwrap().per_lane;
    assert_eq!(g[0], 2.0);
    assert!((g[1] - 8.0 * 1.5f64.powi(7)).abs() < 1e-12);
    assert_eq!(&g[2..], [-1.0, -1.0]);
}

#[test]
fn a_uniform_selector_runs_one_block() {
    let out = run(
        "push 0\nbranch\nload x\nlog\nelse\nload x\nend",
        &lanes("x", &[-1.0]),
    )
    .unwrap();
    assert_eq!(out.values, [-1.0]);
    // Only `else` ran: no NaN from the log of -1 anywhere.
    assert_eq!(out.grad("x").unwrap().per_lane, [1.0]);
}

#[test]
fn vectors_broadcast_and_dot() {
    let b = Bindings::new()
        .uniform("u", Tensor::vector(vec![1.0, 2.0]))
        .lane_tensors("v", Shape::Vector(2), vec![3.0, 4.0, 5.0, 6.0])
        .unwrap();
    // (2 u + v) . u
    let out = run("load u\npush 2\nmul\nload v\nadd\nload u\ndot", &b).unwrap();
    assert_eq!(
        out.values,
        [2.0 + 3.0 + 2.0 * (4.0 + 4.0), 2.0 + 5.0 + 2.0 * (4.0 + 6.0)]
    );
    // d/du = 2 (2u + v) ... : 4u + v per lane.
    assert_eq!(out.grad("u").unwrap().per_lane, [7.0, 12.0, 9.0, 14.0]);
    assert_eq!(out.grad("u").unwrap().sum, [16.0, 26.0]);
    assert_eq!(out.grad("v").unwrap().per_lane, [1.0, 2.0, 1.0, 2.0]);
    let prog = Program::parse("push [1 2 3]\nexp\nload s\nmul").unwrap();
    let b = Bindings::new().scalar("s", 2.0);
    let out = Vm::<f64>::new()
        .run(&prog, &b, &Options::default())
        .cloned()
        .unwrap();
    assert_eq!(out.shape, Shape::Vector(3));
    assert_eq!(
        out.values,
        [2.0 * 1f64.exp(), 2.0 * 2f64.exp(), 2.0 * 3f64.exp()]
    );
}

#[test]
fn shape_errors_name_the_instruction() {
    let b = Bindings::new()
        .uniform("u", Tensor::vector(vec![1.0, 2.0]))
        .uniform("w", Tensor::vector(vec![1.0, 2.0, 3.0]));
    let cases = [
        (
            "load u\nload w\nadd",
            3,
            "cannot combine a vector of 2 with a vector of 3",
        ),
        ("load u\nload w\ndot", 3, "two vectors of one length"),
        ("push 1\nload u\ndot", 3, "two vectors of one length"),
        (
            "load u\nbranch\npush 1\nelse\npush 2\nend",
            2,
            "the selector must be a number",
        ),
    ];
    for (src, line, fragment) in cases {
        match run(src, &b) {
            Err(Error::Shape { pos, message, .. }) => {
                assert_eq!(pos.line, line, "{src}");
                assert!(message.contains(fragment), "{src}: {message}");
            }
            other => panic!("{src}: {other:?}"),
        }
    }
    // Blocks leaving different shapes where lanes diverge cannot merge.
    let b = lanes("g", &[0.0, 1.0]).uniform("u", Tensor::vector(vec![1.0, 2.0]));
    let e = run("load g\nbranch\nload u\nelse\npush 1\nend", &b).unwrap_err();
    assert!(e.to_string().contains("different shapes"), "{e}");
}

#[test]
fn gradients_need_a_number() {
    let b = Bindings::new().uniform("u", Tensor::vector(vec![1.0, 2.0]));
    let e = run("load u\nexp", &b).unwrap_err();
    assert_eq!(
        e,
        Error::NotDifferentiable {
            shape: Shape::Vector(2)
        }
    );
    let prog = Program::parse("load u\nexp").unwrap();
    let out = Vm::<f64>::new()
        .run(&prog, &b, &Options::default())
        .cloned()
        .unwrap();
    assert_eq!(out.values, [1f64.exp(), 2f64.exp()]);
}

#[test]
fn bindings_and_gradient_names() {
    let prog = Program::parse("load a\nload b\nmul").unwrap();
    let mut vm = Vm::<f64>::new();
    let e = vm.run(
        &prog,
        &Bindings::new().scalar("a", 1.0),
        &Options::default(),
    );
    assert!(matches!(e, Err(Error::Unbound { ref name, pos }) if name == "b" && pos.line == 2));
    let b = Bindings::new().scalar("a", 2.0).scalar("b", 3.0);
    let opts = Options {
        grad: Grad::Some(vec!["b".into(), "c".into()]),
        ..Default::default()
    };
    let e = vm.run(&prog, &b, &opts).unwrap_err();
    assert!(e.to_string().contains("its inputs are a, b"), "{e}");
    let opts = Options {
        grad: Grad::Some(vec!["b".into(), "b".into()]),
        ..Default::default()
    };
    let out = vm.run(&prog, &b, &opts).unwrap();
    assert_eq!(out.grads.len(), 1);
    assert_eq!(out.grad("b").unwrap().per_lane, [2.0]);
}

#[test]
fn lane_blocks_do_not_change_results() {
    let src = include_str!("../../../examples/vm/w3.asm");
    let prog = Program::parse(src).unwrap();
    let n = 1000usize;
    let g: Vec<f64> = (0..n).map(|l| (l % 3) as f64 - 1.0).collect();
    let x: Vec<f64> = (0..n).map(|l| 0.5 + l as f64 / n as f64).collect();
    let b = Bindings::new()
        .lanes("g", g)
        .and_then(|b| b.lanes("x", x))
        .unwrap()
        .scalar("a", 2.0)
        .scalar("b", 3.0);
    let mut vm = Vm::<f64>::new();
    let mut results = Vec::new();
    for block in [0, 1, 7, 256] {
        let opts = Options {
            grad: Grad::All,
            lane_block: block,
            ..Default::default()
        };
        let out = vm.run(&prog, &b, &opts).unwrap();
        assert_eq!(out.walks, if block == 0 { 1 } else { n.div_ceil(block) });
        results.push((out.values.clone(), out.grads.clone()));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn step_and_memory_limits_stop_runaway_programs() {
    let prog = Program::parse("push 1\nloop 4294967295\nloop 4294967295\nend\nend").unwrap();
    let opts = Options {
        limits: Limits {
            max_steps: 100_000,
            ..Limits::default()
        },
        ..Default::default()
    };
    let e = Vm::<f64>::new()
        .run(&prog, &Bindings::new(), &opts)
        .cloned()
        .unwrap_err();
    assert!(
        matches!(e, Error::StepLimit { limit: 100_000, pos } if pos.line == 4),
        "{e}"
    );
    // Work on a per-lane value allocates every step: the memory limit stops it first.
    let prog = Program::parse("load x\nloop 4294967295\nexp\nend").unwrap();
    let opts = Options {
        limits: Limits {
            max_steps: u64::MAX,
            max_memory: 1 << 20,
        },
        ..Default::default()
    };
    let b = lanes("x", &[0.0; 64]);
    let e = Vm::<f64>::new().run(&prog, &b, &opts).cloned().unwrap_err();
    assert!(matches!(e, Error::MemoryLimit { limit_mb: 1, .. }), "{e}");
    // The default limits stop the first program too.
    let e = Vm::<f64>::new()
        .run(
            &Program::parse("push 1\nloop 4294967295\nend").unwrap(),
            &Bindings::new(),
            &Options::default(),
        )
        .cloned()
        .unwrap_err();
    assert!(matches!(e, Error::StepLimit { .. }));
}

#[test]
fn a_session_is_reusable_after_errors() {
    let mut vm = Vm::<f64>::new();
    let good = Program::parse("load x\nexp").unwrap();
    let bad = Program::parse("load x\nload x\ndot").unwrap();
    let b = lanes("x", &[0.0, 1.0]);
    let opts = Options {
        grad: Grad::All,
        ..Default::default()
    };
    let fresh = vm.run(&good, &b, &opts).cloned().unwrap();
    for _ in 0..3 {
        assert!(vm.run(&bad, &b, &opts).is_err());
        assert!(vm.run(&bad, &b, &opts).is_err());
        let out = vm.run(&good, &b, &opts).unwrap();
        assert_eq!(out.grad("x").unwrap().per_lane, [1.0, 1f64.exp()]);
        assert_eq!(vm.run(&good, &b, &opts).unwrap(), &fresh);
        // A run with fewer lanes and no gradients reuses the same outcome's buffers.
        let one = vm
            .run(&good, &lanes("x", &[2.0]), &Options::default())
            .unwrap();
        assert_eq!(
            (one.values.as_slice(), one.grads.len()),
            ([2f64.exp()].as_slice(), 0)
        );
    }
}
