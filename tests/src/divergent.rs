//! Programs whose lanes take different paths, shared by the lane-decomposition and the
//! cross-device tests.

/// A named program and the range each of its inputs is drawn from, per lane.
pub type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, f64, f64)],
);

/// Programs whose lanes take different paths: branches, loop trip counts, recursion depth,
/// NaN on some lanes, and branches returning different kinds of values.
pub const DIVERGENT: &[Case] = &[
    ("branch", "(if (< x 0.5) (* x x a) (sin (* a x)))", &[("x", 0.0, 1.0), ("a", 0.5, 2.0)]),
    (
        "nested_branch",
        "(cond ((< x 0.3) (* a x)) ((< x 0.6) (exp (* a x))) (else (let ((y (* x x))) (/ y a))))",
        &[("x", 0.0, 1.0), ("a", 0.5, 2.0)],
    ),
    (
        "loop_trip_count",
        "(loop ((y x) (k 0)) (if (< y 1.0) (+ y (* a k)) (recur (* y 0.5 a) (+ k 1))))",
        &[("x", 1.0, 200.0), ("a", 0.8, 1.2)],
    ),
    (
        "loop_branch_in_body",
        "(loop ((y x) (s 0.0) (k 0)) (if (= k 6) s (recur (if (< y 0.5) (* y 1.7) (* y a)) (+ s (* y y)) (+ k 1))))",
        &[("x", 0.0, 1.0), ("a", 0.3, 0.9)],
    ),
    (
        "recursion_depth",
        "(define (f y n) (if (< y 1.0) (* n y a) (f (/ y 2.0) (+ n 1)))) (f x 1)",
        &[("x", 0.5, 300.0), ("a", 0.5, 2.0)],
    ),
    ("nan_lane_masked", "(if (> x 0.0) (sqrt x) (* a x))", &[("x", -1.0, 1.0), ("a", 0.5, 2.0)]),
    ("nan_lane_value", "(+ (sqrt x) (* a x))", &[("x", -1.0, 1.0), ("a", 0.5, 2.0)]),
    ("divide_by_zero_masked", "(if (= x 0.0) a (/ a x))", &[("x", -2.0, 2.0), ("a", 0.5, 2.0)]),
    ("split_kinds", "(if (< x 0.0) 'negative (* a x))", &[("x", -1.0, 1.0), ("a", 0.5, 2.0)]),
    (
        "split_then_arith",
        "(let ((v (if (< x 0.0) (list a x) (* a x)))) (if (pair? v) (* (car v) (car (cdr v))) (+ v 1.0)))",
        &[("x", -1.0, 1.0), ("a", 0.5, 2.0)],
    ),
    (
        "matrix_branch",
        "(let ((M (mat (vec a x) (vec x 2.0)))) (if (> (det M) 0.0) (logdet M) (trace (inv M))))",
        &[("x", -2.0, 2.0), ("a", 0.5, 2.0)],
    ),
];

/// A program of [`DIVERGENT`], parsed, with its inputs' ranges.
pub struct Divergent {
    /// Its name.
    pub name: &'static str,
    /// The program.
    pub program: runtime_cpu::Program,
    /// Each input's name and the range it is drawn from, per lane.
    pub inputs: Vec<(String, f64, f64)>,
}

/// The programs of [`DIVERGENT`], parsed (a program that does not parse panics with its name).
pub fn divergent() -> Vec<Divergent> {
    DIVERGENT
        .iter()
        .map(|&(name, src, ranges)| Divergent {
            name,
            program: runtime_cpu::Program::parse(src).unwrap_or_else(|e| panic!("{name}: {e}")),
            inputs: ranges
                .iter()
                .map(|&(n, lo, hi)| (n.to_string(), lo, hi))
                .collect(),
        })
        .collect()
}
