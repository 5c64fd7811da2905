//! Regression tests for bugs found in the runtime, each named after the bug.

use runtime_cpu::{Bindings, GradSpec, Limits, Program, RunOptions, Session};

fn steps_allowed(limit: u64, src: &str) -> bool {
    let p = Program::parse(src).unwrap();
    let opts = RunOptions {
        limits: Limits {
            max_steps: limit,
            ..Default::default()
        },
        ..Default::default()
    };
    Session::<f64>::new()
        .run(&p, &Bindings::new(), &opts)
        .cloned()
        .unwrap()
        .values[0]
        .is_ok()
}

#[test]
fn step_budget_allows_exactly_its_steps() {
    // One binary node is one step.
    assert!(steps_allowed(1, "(+ 1 2)"));
    assert!(!steps_allowed(0, "(+ 1 2)"));
}

#[test]
fn repeated_gradient_names_are_counted_once() {
    let p = Program::parse("(* a x)").unwrap();
    let b = Bindings::new().scalar("a", 2.0).scalar("x", 3.0);
    let opts = RunOptions {
        grad: GradSpec::Some(vec!["a".into(), "a".into()]),
        ..Default::default()
    };
    let out = Session::<f64>::new().run(&p, &b, &opts).cloned().unwrap();
    assert_eq!(out.grads.len(), 1);
    assert_eq!(out.grads[0].per_lane, vec![3.0]);
}

#[test]
fn a_leading_byte_order_mark_is_ignored() {
    let p = Program::parse("\u{feff}(+ 1 2)").unwrap();
    let out = Session::<f64>::new()
        .run(&p, &Bindings::new(), &RunOptions::default())
        .cloned()
        .unwrap();
    assert_eq!(out.values[0].as_ref().unwrap().as_number(), Some(3.0));
}

#[test]
fn numbers_inside_lists_print_in_the_run_precision() {
    let p = Program::parse("(list 1 0.1)").unwrap();
    let out = Session::<f32>::new()
        .run(&p, &Bindings::new(), &RunOptions::default())
        .cloned()
        .unwrap();
    assert_eq!(out.values[0].as_ref().unwrap().to_scheme(), "(1 0.1)");
}

#[test]
fn adjoints_are_clean_after_every_run() {
    // The arena is zeroed by each pass as it goes; a second run must see no stale adjoints.
    let p = Program::parse("(let ((y (* a x))) (+ (* y y) (sin y)))").unwrap();
    let b = Bindings::new()
        .scalar("a", 0.7)
        .lanes("x", vec![0.5, 1.5, -2.0])
        .unwrap();
    let opts = RunOptions {
        grad: GradSpec::All,
        ..Default::default()
    };
    let mut s = Session::<f64>::new();
    let first = s.run(&p, &b, &opts).cloned().unwrap();
    let second = s.run(&p, &b, &opts).unwrap();
    assert_eq!(first.grads, second.grads);
}

#[test]
fn memory_limit_without_a_form_has_no_span() {
    let p = Program::parse("(+ a 1)").unwrap();
    let b = Bindings::new().lanes("a", vec![1.0; 1000]).unwrap();
    let opts = RunOptions {
        limits: Limits {
            max_memory: 64,
            ..Default::default()
        },
        ..Default::default()
    };
    let out = Session::<f64>::new().run(&p, &b, &opts).cloned().unwrap();
    let e = out.common_error().expect("every lane fails");
    assert!(
        matches!(e, runtime_cpu::Error::MemoryLimit { span: None, .. }),
        "{e:?}"
    );
}

#[test]
fn seeds_weight_each_lanes_gradient() {
    let p = Program::parse("(* a x)").unwrap();
    let b = Bindings::new()
        .scalar("a", 2.0)
        .lanes("x", vec![1.0, 2.0, 3.0])
        .unwrap();
    let opts = RunOptions {
        grad: GradSpec::All,
        seed: Some(vec![0.5, 0.0, -1.0]),
        ..Default::default()
    };
    let out = Session::<f64>::new().run(&p, &b, &opts).cloned().unwrap();
    assert_eq!(out.grad("a").unwrap().per_lane, vec![0.5, 0.0, -3.0]);
    assert_eq!(out.grad("a").unwrap().sum, vec![-2.5]);
    assert_eq!(out.grad("x").unwrap().per_lane, vec![1.0, 0.0, -2.0]);
}

#[test]
fn a_session_finds_each_input_again_when_the_bindings_change() {
    // A session remembers where the last run found each input; a run whose bindings hold other
    // names (so the same input sits at another place) must still read the right ones.
    let p = Program::parse("(- a b)").unwrap();
    let opts = RunOptions {
        grad: GradSpec::Some(vec!["b".into()]),
        ..Default::default()
    };
    let mut s = Session::<f64>::new();
    let value = |s: &mut Session<f64>, b: &Bindings| {
        let out = s.run(&p, b, &opts).unwrap();
        let v = out.values[0].as_ref().unwrap().as_number().unwrap();
        (v, out.grad("b").unwrap().sum[0])
    };
    let two = Bindings::new().scalar("a", 1.0).scalar("b", 2.0);
    assert_eq!(value(&mut s, &two), (-1.0, -1.0));
    // "aa" sorts between "a" and "b", so "b" moves from the second place to the third.
    let three = two.clone().scalar("aa", 5.0);
    assert_eq!(value(&mut s, &three), (-1.0, -1.0));
    let swapped = Bindings::new().scalar("a", 2.0).scalar("b", 1.0);
    assert_eq!(value(&mut s, &swapped), (1.0, -1.0));
    let missing = Bindings::new().scalar("a", 1.0).scalar("c", 2.0);
    assert!(s.run(&p, &missing, &opts).is_err());
    assert_eq!(value(&mut s, &two), (-1.0, -1.0));
}
