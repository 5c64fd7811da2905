//! The independent oracle checked on its own against the artifact's stored references: the 34
//! conformance programs and the 200 programs of the paper's randomized corpus, values and
//! gradients (the references come from the artifact's PyTorch backend, in `float32`).

use ndvm_tests::oracle::value::scheme_tensor;
use ndvm_tests::oracle::{Input, Oracle, Output};
use ndvm_tests::{close, fuzz_records, suite};

/// Programs where IEEE `sqrt`/`log` deliberately differ from the artifact's clamped ones.
const CLAMPED: &[&str] = &["sqrt_clamp_neg", "log_clamp_neg"];

#[test]
fn oracle_matches_the_conformance_references() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for p in suite() {
        if CLAMPED.contains(&p.name.as_str()) {
            continue;
        }
        let o = Oracle::parse(&p.src).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let mut inputs: Vec<(&str, Input)> = p
            .scalars
            .iter()
            .map(|(n, x)| (n.as_str(), Input::scalar(*x)))
            .collect();
        if let Some((n, r, c, d)) = &p.matrix {
            inputs.push((n.as_str(), Input::matrix(*r, *c, d.clone())));
        }
        let g = o
            .gradient(&inputs)
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let Output::Number(v) = g.value else {
            panic!("{}: not a number", p.name)
        };
        if let Some(r) = p.value {
            checked += 1;
            if !close(v, r, 1e-4) {
                failures.push(format!("{}: value {v} vs reference {r}", p.name));
            }
        }
        for (name, r) in &p.grads {
            let k = o.inputs().iter().position(|n| n == name);
            let got = k.map_or(0.0, |k| g.grads[k][0]);
            if !close(got, *r, 2e-3) {
                failures.push(format!("{}: d/d{name} {got} vs reference {r}", p.name));
            }
        }
    }
    assert!(checked >= 30);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn oracle_matches_the_randomized_corpus_references() {
    let mut failures = Vec::new();
    for r in fuzz_records() {
        let o = Oracle::parse(&r.src).unwrap_or_else(|e| panic!("{}: {e}", r.id));
        let inputs: Vec<(&str, Input)> = r
            .params
            .iter()
            .map(|(n, x)| (n.as_str(), Input::scalar(*x)))
            .collect();
        let g = o
            .gradient(&inputs)
            .unwrap_or_else(|e| panic!("{}: {e}", r.id));
        let Output::Number(v) = g.value else {
            panic!("{}: not a number", r.id)
        };
        if !close(v, r.value, 1e-4) {
            failures.push(format!("{}: value {v} vs {} ({})", r.id, r.value, r.src));
        }
        for (name, reference) in &r.grads {
            let k = o.inputs().iter().position(|n| n == name);
            let got = k.map_or(0.0, |k| g.grads[k][0]);
            if !close(got, *reference, 2e-3) {
                failures.push(format!("{}: d/d{name} {got} vs {reference}", r.id));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn oracle_follows_the_reference_semantics() {
    let cases: &[(&str, &str)] = &[
        ("(modulo -7 2)", "1"),
        ("(remainder -7 2)", "-1"),
        ("(let ((+ *)) (+ 2 3))", "6"),
        ("(if #f 1)", "#f"),
        ("(cond ((+ 1 2)) (else 5))", "3"),
        ("(and)", "#t"),
        ("(or #f '())", "()"),
        ("(define (f n) (if (< n 1) 0 (+ n (f (- n 1))))) (f 4)", "10"),
        ("(define x 1)", "x"),
        ("(loop ((i 0) (s 0)) (if (= i 4) s (recur (+ i 1) (+ s i))))", "6"),
        ("(let lp ((i 3) (acc '())) (if (= i 0) acc (lp (- i 1) (cons i acc))))", "(1 2 3)"),
        ("(let* ((x 1) (x (+ x 1))) x)", "2"),
        ("(letrec ((ev (lambda (n) (if (= n 0) #t (od (- n 1))))) (od (lambda (n) (if (= n 0) #f (ev (- n 1)))))) (ev 7))", "#f"),
        ("(vlen [[1 2 3] [4 5 6]])", "2"),
        ("(ref [[1 2] [3 4]] 1)", "[3 4]"),
        ("(det [[1 2] [3 4]])", "-2"),
        ("(solve [[2 0] [0 4]] [2 2])", "[1 0.5]"),
        ("(trace [[1 2 3] [4 5 6]])", "6"),
        ("(min 3 1 2)", "1"),
        ("(eq? 1 1.0)", "#t"),
        ("(let ((f car)) (f '(a b)))", "a"),
        ("(number? [1 2])", "#f"),
        ("'[1 2]", "[1 2]"),
        ("(- 5)", "-5"),
        ("(/ 4)", "0.25"),
        ("(cross [1 0 0] [0 1 0])", "[0 0 1]"),
        ("(outer [1 2] [3 4 5])", "[[3 4 5] [6 8 10]]"),
        ("(define (g) (h)) (define (h) 2) (g)", "2"),
        ("(+ [1 2] 1)", "[2 3]"),
        ("(zeros 2 1)", "[[0] [0]]"),
    ];
    for (src, want) in cases {
        let o = Oracle::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let got = match o.eval(&[]).unwrap_or_else(|e| panic!("{src}: {e}")) {
            Output::Number(x) => format!("{x}"),
            Output::Tensor(s, d) => scheme_tensor(s, &d),
            Output::Other(s) => s,
        };
        assert_eq!(&got, want, "{src}");
    }
    for (src, kind) in [
        ("(car 1)", "Type"),
        ("(+ 'a 1)", "Type"),
        ("(f 1)", "UnknownOperator"),
        ("(sin)", "ArityMismatch"),
        ("(loop ((i 0)) (+ 1 (recur i)))", "RecurNotInTail"),
        ("(recur 1)", "RecurOutsideLoop"),
        ("(ref [1 2] 2)", "Domain"),
        ("(ref [1 2] 0.5)", "Domain"),
        ("(+ [1 2] [1 2 3])", "Shape"),
        ("(g) (define (g) 1)", "UsedBeforeDefinition"),
        ("(let ((x 1) (x 2)) x)", "BadForm"),
        ("((lambda (x) x))", "ArityMismatch"),
    ] {
        let err = Oracle::parse(src).and_then(|o| o.eval(&[])).expect_err(src);
        assert!(err.starts_with(kind), "{src}: {err}");
    }
}
