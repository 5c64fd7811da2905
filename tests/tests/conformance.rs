//! The 34 conformance programs against the reference values and gradients.

use ndvm_tests::{close, suite};
use runtime_cpu::{GradSpec, Program, RunOptions, Session};

#[test]
fn suite_values_and_gradients_match_the_reference() {
    let mut failures = Vec::new();
    let mut session = Session::<f64>::new();
    for p in suite() {
        let program = match Program::parse(&p.src) {
            Ok(pr) => pr,
            Err(e) => {
                failures.push(format!("{}: parse error {e}", p.name));
                continue;
            }
        };
        let opts = RunOptions {
            grad: GradSpec::All,
            ..Default::default()
        };
        let out = match session.run(&program, &p.bindings(), &opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {e}", p.name));
                continue;
            }
        };
        let v = match &out.values[0] {
            Ok(v) => v.as_number().unwrap_or(f64::NAN),
            Err(e) => {
                failures.push(format!("{}: error {e}", p.name));
                continue;
            }
        };
        println!("{}: value {v}", p.name);
        if let Some(r) = p.value {
            if !close(v, r, 1e-4) {
                failures.push(format!("{}: value {v} vs reference {r}", p.name));
            }
        }
        for (name, r) in &p.grads {
            let g = out.grad(name).map(|g| g.per_lane[0]).unwrap_or(f64::NAN);
            if !close(g, *r, 2e-3) {
                failures.push(format!("{}: d/d{name} {g} vs reference {r}", p.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
