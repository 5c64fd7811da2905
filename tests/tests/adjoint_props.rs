//! Property tests: the adjoint rule of every primitive against central finite differences of
//! the runtime's own forward, over sampled in-domain inputs. Tensor results are reduced with a
//! fixed weighting input that is not differentiated, so every element's adjoint is exercised.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session, Shape, Tensor};

/// Finite-difference step, relative to `max(1, |x|)`.
const STEP: f64 = 1e-5;
/// `|g - fd| <= RTOL (1 + |g| + |f|) + EST |D(h) - D(2h)|`.
const RTOL: f64 = 1e-6;
/// Weight of the difference's own error estimate.
const EST: f64 = 10.0;

/// Sampled numbers, mapped into each primitive's domain.
#[derive(Debug, Clone)]
struct Sample(Vec<f64>);

impl Sample {
    fn at(&self, i: usize) -> f64 {
        self.0[i % self.0.len()]
    }
    /// In [-2, 2].
    fn any(&self, i: usize) -> Tensor {
        Tensor::scalar(2.0 * self.at(i))
    }
    /// In [0.3, 3].
    fn pos(&self, i: usize) -> Tensor {
        Tensor::scalar(0.3 + 1.35 * (self.at(i) + 1.0))
    }
    /// In [-2.5, -0.5] or [0.5, 2.5].
    fn nonzero(&self, i: usize) -> Tensor {
        let r = self.at(i);
        Tensor::scalar(r.signum() * (0.5 + 2.0 * r.abs()))
    }
    fn vector(&self, i: usize, n: usize) -> Tensor {
        Tensor::vector((0..n).map(|k| 1.5 * self.at(i + k)).collect())
    }
    fn matrix(&self, i: usize, r: usize, c: usize) -> Tensor {
        let d = (0..r * c).map(|k| self.at(i + k)).collect();
        Tensor::matrix(r, c, d).expect("sized")
    }
    /// Diagonally dominant n x n: well conditioned.
    fn dominant(&self, i: usize, n: usize) -> Tensor {
        let d = (0..n * n)
            .map(|k| {
                let r = self.at(i + k);
                if k / n == k % n {
                    2.0 + 0.5 * r
                } else {
                    0.3 * r
                }
            })
            .collect();
        Tensor::matrix(n, n, d).expect("sized")
    }
}

/// One primitive under test: program, inputs, and the inputs to differentiate.
struct Case {
    src: &'static str,
    inputs: Vec<(&'static str, Tensor)>,
    wrt: Vec<&'static str>,
}

fn case(src: &'static str, inputs: Vec<(&'static str, Tensor)>, wrt: &[&'static str]) -> Case {
    Case {
        src,
        inputs,
        wrt: wrt.to_vec(),
    }
}

/// Gradient of the program against Richardson-extrapolated central differences, every element
/// of every differentiated input.
fn check(c: &Case) -> Result<(), TestCaseError> {
    let program =
        Program::parse(c.src).map_err(|e| TestCaseError::fail(format!("{}: {e}", c.src)))?;
    let mut uniform = Bindings::new();
    for (n, t) in &c.inputs {
        uniform = uniform.uniform(n, t.clone());
    }
    let opts = RunOptions {
        grad: GradSpec::Some(c.wrt.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    };
    let mut session = Session::<f64>::new();
    let out = session
        .run(&program, &uniform, &opts)
        .cloned()
        .expect("bound");
    let f = out.values[0]
        .as_ref()
        .expect("runs")
        .as_number()
        .expect("a number");
    // Every perturbation of every element as one lane of one forward run.
    let mut points = Vec::new();
    for (k, (n, t)) in c.inputs.iter().enumerate() {
        if c.wrt.contains(n) {
            for e in 0..t.data.len() {
                points.push((k, e, STEP * t.data[e].abs().max(1.0)));
            }
        }
    }
    let steps = [1.0, -1.0, 2.0, -2.0];
    let mut lanes = Bindings::new();
    for (k, (n, t)) in c.inputs.iter().enumerate() {
        let mut data = Vec::new();
        for &(pk, pe, h) in &points {
            for m in steps {
                let start = data.len();
                data.extend_from_slice(&t.data);
                if pk == k {
                    data[start + pe] += m * h;
                }
            }
        }
        lanes = lanes.lane_tensors(n, t.shape, data).expect("whole lanes");
    }
    let fd = session
        .run(&program, &lanes, &RunOptions::default())
        .expect("bound");
    let val = |i: usize| {
        fd.values[i]
            .as_ref()
            .expect("runs")
            .as_number()
            .expect("a number")
    };
    for (p, &(k, e, h)) in points.iter().enumerate() {
        let d1 = (val(4 * p) - val(4 * p + 1)) / (2.0 * h);
        let d2 = (val(4 * p + 2) - val(4 * p + 3)) / (4.0 * h);
        let fdv = (4.0 * d1 - d2) / 3.0;
        let name = c.inputs[k].0;
        let g = out.grad(name).expect("asked for").per_lane[e];
        let bound = RTOL * (1.0 + g.abs() + f.abs()) + EST * (d1 - d2).abs();
        prop_assert!(
            (g - fdv).abs() <= bound,
            "{}: d/d{name}[{e}] = {g:e}, finite difference {fdv:e}; inputs {:?}",
            c.src,
            c.inputs
        );
    }
    Ok(())
}

fn scalar_cases(s: &Sample) -> Vec<Case> {
    let (a, b, c) = (s.any(0), s.any(1), s.any(2));
    let (p, nz, nz2) = (s.pos(3), s.nonzero(4), s.nonzero(5));
    let abc = || vec![("a", a.clone()), ("b", b.clone()), ("c", c.clone())];
    let mut v = vec![
        case("(+ a b c)", abc(), &["a", "b", "c"]),
        case("(- a b c)", abc(), &["a", "b", "c"]),
        case("(- a)", abc(), &["a"]),
        case("(* a b c)", abc(), &["a", "b", "c"]),
        case(
            "(/ a nz nz2)",
            vec![("a", a.clone()), ("nz", nz.clone()), ("nz2", nz2.clone())],
            &["a", "nz", "nz2"],
        ),
        case("(/ nz)", vec![("nz", nz.clone())], &["nz"]),
        case(
            "(pow p b)",
            vec![("p", p.clone()), ("b", b.clone())],
            &["p", "b"],
        ),
        case(
            "(expt p b)",
            vec![("p", p.clone()), ("b", b.clone())],
            &["p", "b"],
        ),
        case("(pow a 3)", vec![("a", a.clone())], &["a"]),
        case("(sin a)", abc(), &["a"]),
        case("(cos a)", abc(), &["a"]),
        case("(exp a)", abc(), &["a"]),
        case("(log p)", vec![("p", p.clone())], &["p"]),
        case("(sqrt p)", vec![("p", p.clone())], &["p"]),
    ];
    let (x, y, z) = (a.data[0], b.data[0], c.data[0]);
    // Kinks and jumps only away from their breaks.
    if (x - y).abs() > 0.05 && (x - z).abs() > 0.05 && (y - z).abs() > 0.05 {
        v.push(case("(min a b c)", abc(), &["a", "b", "c"]));
        v.push(case("(max a b c)", abc(), &["a", "b", "c"]));
    }
    if x.abs() > 0.05 {
        v.push(case("(abs a)", abc(), &["a"]));
    }
    let q = x / nz.data[0];
    if (q - q.round()).abs() > 0.02 {
        v.push(case(
            "(modulo a nz)",
            vec![("a", a.clone()), ("nz", nz.clone())],
            &["a", "nz"],
        ));
        v.push(case(
            "(remainder a nz)",
            vec![("a", a), ("nz", nz)],
            &["a", "nz"],
        ));
    }
    v
}

fn elementwise_cases(s: &Sample) -> Vec<Case> {
    let (u, v, w) = (s.vector(10, 3), s.vector(13, 3), s.vector(16, 3));
    let (a, m3, r23) = (s.any(6), s.dominant(20, 3), s.matrix(30, 2, 3));
    let (w3, w23) = (s.matrix(40, 3, 3), s.matrix(50, 2, 3));
    let vecs = || {
        vec![
            ("u", u.clone()),
            ("v", v.clone()),
            ("w", w.clone()),
            ("a", a.clone()),
        ]
    };
    let mats = || {
        vec![
            ("A", m3.clone()),
            ("W", w3.clone()),
            ("a", a.clone()),
            ("R", r23.clone()),
            ("V", w23.clone()),
        ]
    };
    let mut out = vec![
        case("(dot w (+ u v))", vecs(), &["u", "v"]),
        case("(dot w (- u a))", vecs(), &["u", "a"]),
        case("(dot w (* a u v))", vecs(), &["u", "v", "a"]),
        case("(dot w (/ u (+ 2 v)))", vecs(), &["u", "v"]),
        case("(dot w (/ (+ 2 v)))", vecs(), &["v"]),
        case("(dot w (- u))", vecs(), &["u"]),
        case("(dot w (sin u))", vecs(), &["u"]),
        case("(dot w (cos u))", vecs(), &["u"]),
        case("(dot w (exp u))", vecs(), &["u"]),
        case("(dot w (log (+ 2 u)))", vecs(), &["u"]),
        case("(dot w (sqrt (+ 2 u)))", vecs(), &["u"]),
        case("(dot w (pow (+ 2 u) v))", vecs(), &["u", "v"]),
        case("(dot w (expt (+ 2 u) a))", vecs(), &["u", "a"]),
        case("(vsum (* W (cos A)))", mats(), &["A"]),
        case("(vsum (* W (+ A a)))", mats(), &["A", "a"]),
        case("(vsum (* V (* R a)))", mats(), &["R", "a"]),
        case("(vsum (* W (/ a (+ 3 A))))", mats(), &["A", "a"]),
    ];
    let apart = u
        .data
        .iter()
        .zip(&v.data)
        .all(|(x, y)| (x - y).abs() > 0.05);
    if apart {
        out.push(case("(dot w (min u v))", vecs(), &["u", "v"]));
        out.push(case("(dot w (max u v))", vecs(), &["u", "v"]));
    }
    if u.data.iter().all(|x| x.abs() > 0.05) {
        out.push(case("(dot w (abs u))", vecs(), &["u"]));
    }
    out
}

fn structure_cases(s: &Sample) -> Vec<Case> {
    let (u, v, w) = (s.vector(10, 3), s.vector(13, 3), s.vector(16, 3));
    let (x2, a, b, c) = (s.vector(19, 2), s.any(6), s.any(7), s.any(8));
    let (m3, w3, w23) = (s.dominant(20, 3), s.matrix(40, 3, 3), s.matrix(50, 2, 3));
    let all = || {
        vec![
            ("u", u.clone()),
            ("v", v.clone()),
            ("w", w.clone()),
            ("x", x2.clone()),
            ("a", a.clone()),
            ("b", b.clone()),
            ("c", c.clone()),
            ("A", m3.clone()),
            ("W", w3.clone()),
            ("V", w23.clone()),
        ]
    };
    vec![
        case("(dot w (vec a b c))", all(), &["a", "b", "c"]),
        case("(dot w [a b c])", all(), &["a", "b", "c"]),
        case("(vsum (* V (mat u v)))", all(), &["u", "v"]),
        case("(vsum (* V [u v]))", all(), &["u", "v"]),
        case("(ref u 1)", all(), &["u"]),
        case("(ref A 1 2)", all(), &["A"]),
        case("(dot w (ref A 2))", all(), &["A"]),
        case("(dot u v)", all(), &["u", "v"]),
        case("(vsum u)", all(), &["u"]),
        case("(vsum A)", all(), &["A"]),
        case("(norm u)", all(), &["u"]),
        case("(norm A)", all(), &["A"]),
        case("(dot w (normalize u))", all(), &["u"]),
        case("(vsum (* W (normalize A)))", all(), &["A"]),
        case("(dot w (cross u v))", all(), &["u", "v"]),
        case("(dot w (scale a u))", all(), &["a", "u"]),
        case("(vsum (* W (scale a A)))", all(), &["a", "A"]),
        case("(vsum (* W (outer u v)))", all(), &["u", "v"]),
        case("(vsum (* V (outer x u)))", all(), &["x", "u"]),
        case("(car (cdr (list a (* b c))))", all(), &["a", "b", "c"]),
        case(
            "((lambda (f) (f (f a))) (lambda (t) (* b (sin t))))",
            all(),
            &["a", "b"],
        ),
    ]
}

fn linalg_cases(s: &Sample) -> Vec<Case> {
    let (u, w, x2) = (s.vector(10, 3), s.vector(16, 3), s.vector(19, 2));
    let (a2, a3, a4) = (s.dominant(60, 2), s.dominant(20, 3), s.dominant(70, 4));
    let (m3, r23, w3, w2, w23) = (
        s.matrix(30, 3, 3),
        s.matrix(35, 2, 3),
        s.matrix(40, 3, 3),
        s.matrix(45, 2, 2),
        s.matrix(50, 2, 3),
    );
    let all = || {
        vec![
            ("u", u.clone()),
            ("w", w.clone()),
            ("x", x2.clone()),
            ("B", a2.clone()),
            ("A", a3.clone()),
            ("D", a4.clone()),
            ("M", m3.clone()),
            ("R", r23.clone()),
            ("W", w3.clone()),
            ("Y", w2.clone()),
            ("V", w23.clone()),
        ]
    };
    vec![
        case("(dot x (matvec R u))", all(), &["R", "u"]),
        case("(dot w (matvec A u))", all(), &["A", "u"]),
        case("(vsum (* W (matmul A M)))", all(), &["A", "M"]),
        case("(vsum (* V (matmul B R)))", all(), &["B", "R"]),
        case("(vsum (* W (transpose M)))", all(), &["M"]),
        case("(dot w (matvec (transpose R) x))", all(), &["R", "x"]),
        case("(trace M)", all(), &["M"]),
        case("(trace R)", all(), &["R"]),
        case("(det B)", all(), &["B"]),
        case("(det A)", all(), &["A"]),
        case("(det D)", all(), &["D"]),
        case("(det (- A))", all(), &["A"]),
        case("(logdet B)", all(), &["B"]),
        case("(logdet A)", all(), &["A"]),
        case("(logdet D)", all(), &["D"]),
        case("(logdet (- A))", all(), &["A"]),
        case("(vsum (* Y (inv B)))", all(), &["B"]),
        case("(vsum (* W (inv A)))", all(), &["A"]),
        case("(dot w (solve A u))", all(), &["A", "u"]),
        case("(vsum (* W (solve A M)))", all(), &["A", "M"]),
        case("(dot x (solve B x))", all(), &["B", "x"]),
        case(
            "(vsum (* Y (solve B (matmul R (transpose R)))))",
            all(),
            &["B", "R"],
        ),
    ]
}

fn sample() -> impl Strategy<Value = Sample> {
    prop::collection::vec(-1.0f64..1.0, 80).prop_map(Sample)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn scalar_adjoints_match_finite_differences(s in sample()) {
        for c in scalar_cases(&s) {
            check(&c)?;
        }
    }

    #[test]
    fn elementwise_tensor_adjoints_match_finite_differences(s in sample()) {
        for c in elementwise_cases(&s) {
            check(&c)?;
        }
    }

    #[test]
    fn constructor_reduction_and_list_adjoints_match_finite_differences(s in sample()) {
        for c in structure_cases(&s) {
            check(&c)?;
        }
    }

    #[test]
    fn linear_algebra_adjoints_match_finite_differences(s in sample()) {
        for c in linalg_cases(&s) {
            check(&c)?;
        }
    }
}

#[test]
fn every_primitive_with_a_gradient_is_covered() {
    let s = Sample(vec![0.37; 80]);
    let text: String = [
        scalar_cases(&s),
        elementwise_cases(&s),
        structure_cases(&s),
        linalg_cases(&s),
    ]
    .iter()
    .flatten()
    .map(|c| c.src)
    .collect::<Vec<_>>()
    .join(" ");
    let mut all_cases = text.clone();
    // Kinked primitives appear for inputs away from their kinks.
    let apart = Sample(
        (0..80)
            .map(|i| ((i * 37 % 80) as f64 / 40.0) - 0.99)
            .collect(),
    );
    all_cases += &[scalar_cases(&apart), elementwise_cases(&apart)]
        .iter()
        .flatten()
        .map(|c| c.src)
        .collect::<Vec<_>>()
        .join(" ");
    for p in [
        "+",
        "-",
        "*",
        "/",
        "min",
        "max",
        "pow",
        "expt",
        "modulo",
        "remainder",
        "sin",
        "cos",
        "exp",
        "log",
        "sqrt",
        "abs",
        "vec",
        "mat",
        "[",
        "ref",
        "dot",
        "vsum",
        "norm",
        "normalize",
        "cross",
        "matvec",
        "matmul",
        "transpose",
        "trace",
        "outer",
        "scale",
        "det",
        "logdet",
        "inv",
        "solve",
        "car",
        "cdr",
        "list",
        "lambda",
    ] {
        let token = if p == "[" {
            "[".to_string()
        } else {
            format!("({p} ")
        };
        assert!(all_cases.contains(&token), "no property covers `{p}`");
    }
    assert_eq!(Shape::Vector(3).len(), 3);
}
