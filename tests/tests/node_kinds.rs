//! Calls decoded into node kinds of their own (constant tensors with literal sizes, `scale`,
//! `ref`) behave exactly as the general primitive call they replace.

use runtime_cpu::builtin::Builtin;
use runtime_cpu::code::Node;
use runtime_cpu::{Bindings, Program, RunOptions, Session, Shape};

fn nodes(src: &str) -> Vec<Node> {
    Program::parse(src).unwrap().code().nodes.clone()
}

/// The printed value, or the error's message with its span.
fn run(src: &str) -> String {
    let p = Program::parse(src).unwrap();
    let out = Session::<f64>::new()
        .run(&p, &Bindings::new(), &RunOptions::default())
        .cloned()
        .unwrap();
    match &out.values[0] {
        Ok(v) => v.to_scheme(),
        Err(e) => format!("{e} at {:?}", e.span()),
    }
}

#[test]
fn literal_sizes_make_a_tensor_node() {
    for (src, b, shape) in [
        ("(eye 2)", Builtin::Eye, Shape::Matrix(2, 2)),
        ("(zeros 3)", Builtin::Zeros, Shape::Vector(3)),
        ("(ones 2 3)", Builtin::Ones, Shape::Matrix(2, 3)),
        ("(iota 0)", Builtin::Iota, Shape::Vector(0)),
    ] {
        let n = nodes(src);
        assert!(n.contains(&Node::Tensor(b, shape)), "{src}: {n:?}");
        assert!(
            !n.iter().any(|n| matches!(n, Node::Prim(..))),
            "{src}: {n:?}"
        );
    }
}

#[test]
fn other_sizes_stay_general_calls() {
    for src in [
        "(eye 2.5)",
        "(eye -1)",
        "(let ((n 2)) (eye n))",
        "(zeros 16777216)",
        "(ones 1 #t)",
    ] {
        let n = nodes(src);
        assert!(
            !n.iter().any(|n| matches!(n, Node::Tensor(..))),
            "{src}: {n:?}"
        );
    }
}

#[test]
fn a_tensor_node_gives_the_general_calls_value() {
    for (lit, var) in [
        ("(eye 3)", "(let ((n 3)) (eye n))"),
        ("(zeros 2 2)", "(let ((n 2)) (zeros n 2))"),
        ("(ones 2)", "(let ((n 2)) (ones n))"),
        ("(iota 4)", "(let ((n 4)) (iota n))"),
        ("(iota 0)", "(let ((n 0)) (iota n))"),
    ] {
        assert_eq!(run(lit), run(var), "{lit}");
    }
    // Each evaluation makes a fresh tensor, as the general call does.
    assert_eq!(run("(let ((f (lambda () (eye 2)))) (eq? (f) (f)))"), "#f");
}

#[test]
fn bad_sizes_give_the_same_errors() {
    assert!(run("(eye 2.5)").contains("the size must be a non-negative integer, got 2.5"));
    assert!(run("(eye -1)").contains("the size must be a non-negative integer, got -1"));
    assert!(run("(zeros 1 #t)").contains("number"));
    assert!(run("(zeros 20000 20000)").contains("too large"));
}

#[test]
fn ref_and_scale_decode_to_their_own_nodes() {
    assert!(nodes("(ref (iota 3) 1)")
        .iter()
        .any(|n| matches!(n, Node::Ref(..))));
    assert!(nodes("(scale 2 (iota 3))")
        .iter()
        .any(|n| matches!(n, Node::Scale(..))));
    assert_eq!(run("(ref (iota 3) 1)"), "1");
    assert_eq!(run("(ref (ones 2 3) 1)"), "[1 1 1]");
    assert_eq!(run("(ref (eye 3) 2 2)"), "1");
    assert_eq!(run("(scale 2 (iota 3))"), "[0 2 4]");
}

#[test]
fn ref_and_scale_errors_name_the_call() {
    let e = run("(ref (iota 3) 3)");
    assert!(e.contains("ref") && e.contains('3'), "{e}");
    let e = run("(ref (iota 3) 0 1)");
    assert!(e.contains("a matrix"), "{e}");
    let e = run("(ref 1 0)");
    assert!(e.contains("a vector or a matrix"), "{e}");
    let e = run("(ref (eye 2) 0 2)");
    assert!(e.contains("column"), "{e}");
    let e = run("(scale (iota 2) 3)");
    assert!(e.contains("scale") && e.contains("a number"), "{e}");
}
