//! The paper's randomized corpus (seed 1234, 200 programs): forward values and gradients
//! against the stored reference, and gradients against central finite differences of our own
//! forward.

use ndvm_tests::{close, fuzz_records};
use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session};

fn bind(params: &[(String, f64)]) -> Bindings {
    params
        .iter()
        .fold(Bindings::new(), |b, (n, x)| b.scalar(n, *x))
}

fn value(session: &mut Session<f64>, p: &Program, params: &[(String, f64)]) -> f64 {
    let out = session
        .run(p, &bind(params), &RunOptions::default())
        .expect("bound");
    out.values[0]
        .as_ref()
        .expect("runs")
        .as_number()
        .expect("a number")
}

#[test]
fn corpus_matches_reference_and_finite_differences() {
    let records = fuzz_records();
    assert_eq!(records.len(), 200);
    let mut session = Session::<f64>::new();
    let mut failures = Vec::new();
    for r in &records {
        let p = Program::parse(&r.src).unwrap_or_else(|e| panic!("program {}: {e}", r.id));
        let opts = RunOptions {
            grad: GradSpec::All,
            ..Default::default()
        };
        let out = session
            .run(&p, &bind(&r.params), &opts)
            .cloned()
            .expect("bound");
        let v = out.values[0]
            .as_ref()
            .expect("runs")
            .as_number()
            .expect("a number");
        if !close(v, r.value, 1e-4) {
            failures.push(format!("{}: value {v} vs {} ({})", r.id, r.value, r.src));
        }
        for (name, reference) in &r.grads {
            let g = out.grad(name).map_or(0.0, |g| g.per_lane[0]);
            if !close(g, *reference, 2e-3) {
                failures.push(format!(
                    "{}: d/d{name} {g} vs {reference} ({})",
                    r.id, r.src
                ));
            }
            // Central finite difference of our own forward, in f64.
            let h = 1e-3;
            let shifted = |d: f64| -> Vec<(String, f64)> {
                r.params
                    .iter()
                    .map(|(n, x)| (n.clone(), if n == name { x + d } else { *x }))
                    .collect()
            };
            let fd = (value(&mut session, &p, &shifted(h)) - value(&mut session, &p, &shifted(-h)))
                / (2.0 * h);
            if (g - fd).abs() > 1e-2 + 5e-2 * fd.abs() {
                failures.push(format!(
                    "{}: d/d{name} {g} vs finite difference {fd} ({})",
                    r.id, r.src
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
