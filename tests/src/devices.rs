//! Comparing a session that hands its numeric regions to a device (the GPU, or the region
//! interpreter's CPU twin) with one on the CPU kernels, lane by lane: the bodies the
//! cross-device tests (`gpu_regions.rs`, `region_twin.rs`) share.

use crate::{close, SplitMix, SuiteProgram};
use runtime_cpu::{Bindings, GradSpec, LaneValue, Program, RunOptions, Session, Tensor};

/// `uniform` plus each input of `inputs` drawn per lane from its range.
pub fn lane_bindings(
    inputs: &[(String, f64, f64)],
    uniform: &Bindings,
    lanes: usize,
    seed: u64,
) -> Bindings {
    let mut rng = SplitMix(seed);
    let mut b = uniform.clone();
    for (n, lo, hi) in inputs {
        let col: Vec<f64> = (0..lanes).map(|_| rng.uniform(*lo, *hi)).collect();
        b = b.lanes(n, col).expect("same lane count");
    }
    b
}

/// A suite program's scalar inputs as per-lane ranges (up to 10% around the reference), and
/// its matrix input bound uniform.
pub fn suite_inputs(p: &SuiteProgram) -> (Vec<(String, f64, f64)>, Bindings) {
    let inputs = p
        .scalars
        .iter()
        .map(|(n, x)| (n.clone(), (x * 0.9).min(x * 1.1), (x * 0.9).max(x * 1.1)))
        .collect();
    let mut uniform = Bindings::new();
    if let Some((n, r, c, d)) = &p.matrix {
        uniform = uniform.uniform(n, Tensor::matrix(*r, *c, d.clone()).expect("matrix"));
    }
    (inputs, uniform)
}

fn same_value(a: &LaneValue, b: &LaneValue, rtol: f64) -> bool {
    match (a, b) {
        (LaneValue::Number(x), LaneValue::Number(y)) => close(*x, *y, rtol),
        (LaneValue::Tensor(s, x), LaneValue::Tensor(t, y)) => {
            s == t && x.iter().zip(y).all(|(p, q)| close(*p, *q, rtol))
        }
        (a, b) => a == b,
    }
}

/// Runs `program` on the CPU and on `session` (whose device `device` names in the messages)
/// and returns the differences past `rtol`, values and gradients (empty when they agree).
pub fn compare_devices(
    name: &str,
    device: &str,
    rtol: f64,
    program: &Program,
    b: &Bindings,
    grad: &[String],
    session: &mut Session<f32>,
) -> Vec<String> {
    let opts = RunOptions {
        grad: GradSpec::Some(grad.to_vec()),
        lane_block: 0,
        ..Default::default()
    };
    let want = Session::<f32>::new()
        .run(program, b, &opts)
        .cloned()
        .expect("bound");
    let got = session.run(program, b, &opts).expect("bound");
    let mut bad = Vec::new();
    for l in 0..want.lanes {
        match (&got.values[l], &want.values[l]) {
            (Ok(x), Ok(y)) if same_value(x, y, rtol) => {}
            (Err(x), Err(y)) if x == y => continue,
            (x, y) => {
                bad.push(format!(
                    "{name} B={} lane {l}: {device} {x:?} cpu {y:?}",
                    want.lanes
                ));
                continue;
            }
        }
        for g in &want.grads {
            let n = g.shape.len();
            let h = got.grad(&g.name).expect("same inputs");
            for e in 0..n {
                let (x, y) = (h.per_lane[l * n + e], g.per_lane[l * n + e]);
                if !close(x, y, rtol) {
                    bad.push(format!(
                        "{name} B={} lane {l} d/d{}[{e}]: {device} {x} cpu {y}",
                        want.lanes, g.name
                    ));
                }
            }
        }
    }
    bad
}
