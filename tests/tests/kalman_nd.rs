//! The D-dimensional Kalman example (`examples/kalman_nd.scm`) computes the GPU ceiling
//! kernel's likelihood: it matches the kernel's CPU twin, and its gradients match central
//! finite differences of itself.

use ndvm_tests::close;
use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session};
use runtime_gpu::ceiling::{noise, noise_population, CeilingConfig, CeilingPlan, CeilingProblem};
use runtime_gpu::{cpu_twin, DeviceLimits};

fn program() -> Program {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/kalman_nd.scm");
    Program::parse(&std::fs::read_to_string(path).expect("the example")).expect("parses")
}

fn nll(p: &Program, d: usize, q: f64, r: f64, grad: bool) -> (f64, Vec<f64>) {
    let b = Bindings::new()
        .scalar("d", d as f64)
        .scalar("q", q)
        .scalar("r", r);
    let opts = RunOptions {
        grad: if grad {
            GradSpec::Some(vec!["q".into(), "r".into()])
        } else {
            GradSpec::None
        },
        ..Default::default()
    };
    let out = Session::<f64>::new()
        .run(p, &b, &opts)
        .cloned()
        .expect("bound");
    let v = out.values[0]
        .as_ref()
        .expect("runs")
        .as_number()
        .expect("a number");
    (v, out.grads.iter().map(|g| g.sum[0]).collect())
}

#[test]
fn the_example_matches_the_ceiling_kernels_cpu_twin() {
    let p = program();
    for d in [2, 5, 8, 16] {
        let cfg = CeilingConfig::new(d, 3);
        let plan = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()).expect("plan");
        let problem = CeilingProblem::<f64>::new(d, cfg.steps);
        let twin = cpu_twin::population(&problem, &plan, &noise_population(0..3));
        for (g, want) in twin.iter().enumerate() {
            let (q, r) = noise(g);
            let (got, _) = nll(&p, d, q, r, false);
            assert!(
                close(got, *want, 1e-10),
                "d={d} g={g}: {got} vs twin {want}"
            );
        }
    }
}

#[test]
fn the_examples_gradients_match_finite_differences() {
    let p = program();
    let (q, r) = (0.05, 0.1);
    let (_, g) = nll(&p, 6, q, r, true);
    let h = 1e-6;
    let fq = (nll(&p, 6, q + h, r, false).0 - nll(&p, 6, q - h, r, false).0) / (2.0 * h);
    let fr = (nll(&p, 6, q, r + h, false).0 - nll(&p, 6, q, r - h, false).0) / (2.0 * h);
    assert!(close(g[0], fq, 1e-6), "d/dq {} vs {fq}", g[0]);
    assert!(close(g[1], fr, 1e-6), "d/dr {} vs {fr}", g[1]);
}
