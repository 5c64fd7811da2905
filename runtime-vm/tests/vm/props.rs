//! Random assembly text: the VM never panics or hangs, whatever it is given, and a program
//! that runs gives every lane of a batch what a one-lane run on that lane's inputs gives.

use proptest::prelude::*;
use runtime_cpu::{Bindings, Shape, Tensor};
use runtime_vm::{Grad, Limits, Options, Program, Vm};

/// Code that leaves one value on the stack, well formed by construction.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (-3.0f64..3.0).prop_map(|x| format!("push {x}")),
        Just("push [1 -2 0.5]".to_string()),
        prop::sample::select(vec!["load x", "load y", "load g", "load v"]).prop_map(String::from),
    ];
    leaf.prop_recursive(5, 40, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["neg", "exp", "log", "sin", "cos"])
            )
                .prop_map(|(a, op)| format!("{a}\n{op}")),
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec!["add", "sub", "mul", "div", "dot"])
            )
                .prop_map(|(a, b, op)| format!("{a}\n{b}\n{op}")),
            (inner.clone(), prop::sample::select(vec!["add", "mul"]))
                .prop_map(|(a, op)| format!("{a}\ndup\n{op}")),
            (
                inner.clone(),
                0u32..4,
                prop::sample::select(vec!["dup\nmul", "sin", "push 0.5\nmul", "load y\nadd"])
            )
                .prop_map(|(a, n, body)| format!("{a}\nloop {n}\n{body}\nend")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(s, a, b)| format!("{s}\nbranch\n{a}\nelse\n{b}\nend")),
            // A branch consuming a value from below it.
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, s, b)| format!("{a}\n{s}\nbranch\nneg\nelse\n{b}\nmul\nend")),
        ]
    })
}

/// A program: well formed, or with one line replaced by something that may break it.
fn program() -> impl Strategy<Value = String> {
    let junk = prop::sample::select(vec![
        "push",
        "add 1",
        "mull",
        "push [1",
        "load 3",
        "loop -1",
        "; c",
        "",
        "end",
        "else",
        "branch",
        "loop 4294967295",
        "dup",
        "add",
    ]);
    (
        expr(),
        prop::option::of((any::<prop::sample::Index>(), junk)),
    )
        .prop_map(|(src, edit)| {
            let Some((at, junk)) = edit else { return src };
            let mut lines: Vec<&str> = src.lines().collect();
            let i = at.index(lines.len());
            lines[i] = junk;
            lines.join("\n")
        })
}

fn bindings(lanes: &[(f64, f64, f64)]) -> Bindings {
    let col = |f: fn(&(f64, f64, f64)) -> f64| lanes.iter().map(f).collect::<Vec<_>>();
    let mut b = Bindings::new().uniform("v", Tensor::vector(vec![0.5, 1.0, -1.5]));
    if lanes.len() == 1 {
        let (x, y, g) = lanes[0];
        b = b.scalar("x", x).scalar("y", y).scalar("g", g);
    } else {
        b = b
            .lanes("x", col(|l| l.0))
            .and_then(|b| b.lanes("y", col(|l| l.1)))
            .and_then(|b| b.lanes("g", col(|l| l.2)))
            .expect("equal lane counts");
    }
    b
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn never_panics_and_lanes_decompose(
        src in program(),
        lanes in prop::collection::vec((-2.0f64..2.0, -2.0f64..2.0, prop::sample::select(vec![0.0, 1.0])), 2..5),
    ) {
        let Ok(prog) = Program::parse(&src) else { return Ok(()) };
        let opts = Options {
            grad: Grad::All,
            limits: Limits { max_steps: 20_000, max_memory: 8 << 20 },
            ..Default::default()
        };
        let mut vm = Vm::<f64>::new();
        let Ok(batch) = vm.run(&prog, &bindings(&lanes), &opts).cloned() else { return Ok(()) };
        for (l, lane) in lanes.iter().enumerate() {
            // Each lane took one of the paths the batch took, so it runs too.
            let one = vm.run(&prog, &bindings(std::slice::from_ref(lane)), &opts);
            prop_assert!(one.is_ok(), "{}\nlane {}: {:?}", src, l, one);
            let one = one.unwrap();
            prop_assert_eq!(one.shape, batch.shape);
            let n = batch.shape.len();
            for (&a, &b) in batch.values[l * n..(l + 1) * n].iter().zip(&one.values) {
                prop_assert!(same(a, b), "{}\nlane {}", src, l);
            }
            for g in &batch.grads {
                let k = g.shape.len();
                let single = &one.grad(&g.name).unwrap().per_lane;
                for (&a, &b) in g.per_lane[l * k..(l + 1) * k].iter().zip(single) {
                    prop_assert!(same(a, b), "{}\nlane {} d/d{}: {} vs {}", src, l, g.name, a, b);
                }
            }
            prop_assert!(batch.shape == Shape::Scalar || batch.grads.is_empty());
        }
    }
}
