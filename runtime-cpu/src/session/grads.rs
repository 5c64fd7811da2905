//! The gradients of a run: sized before the walks, summed (and NaN on failed lanes) after.

use super::{Gradient, Input};
use crate::bindings::{Binding, Bindings};
use crate::error::Error;
use crate::print::LaneValue;
use crate::program::Program;

/// Sizes `grads` for the gradients of `wrt` on `lanes` lanes: NaN on every lane until a walk
/// writes it, a zero sum.
#[inline(always)]
pub(super) fn prepare_grads(
    grads: &mut Vec<Gradient>,
    program: &Program,
    bindings: &Bindings,
    inputs: &[Input],
    wrt: &[u32],
    lanes: usize,
) {
    let code = program.code();
    grads.truncate(wrt.len());
    for (k, &i) in wrt.iter().enumerate() {
        let info = &code.globals[inputs[i as usize].global as usize];
        let w = code.symbol_names[info.name.0 as usize].as_str();
        let (shape, uniform) = match bindings.at(inputs[i as usize].binding as usize) {
            Binding::Uniform(t) => (t.shape, true),
            Binding::Lanes { shape, .. } => (*shape, false),
        };
        if k == grads.len() {
            grads.push(Gradient {
                name: String::new(),
                shape,
                uniform,
                per_lane: Vec::new(),
                sum: Vec::new(),
            });
        }
        let g = &mut grads[k];
        if g.name != w {
            g.name.clear();
            g.name.push_str(w);
        }
        (g.shape, g.uniform) = (shape, uniform);
        // Every lane that has a value has its gradient written by its walk, and every other
        // lane's is made NaN after the walks ([`sum_grads`]), so no number of an earlier run
        // survives.
        let (n, len) = (shape.len(), lanes * shape.len());
        if g.per_lane.len() != len {
            g.per_lane.clear();
            g.per_lane.resize(len, f64::NAN);
        }
        if g.sum.len() == 1 && n == 1 {
            g.sum[0] = 0.0;
        } else {
            g.sum.clear();
            g.sum.resize(n, 0.0);
        }
    }
}

/// Each element's sum over the lanes that have a value, in lane order; NaN on the other lanes.
#[inline(always)]
pub(super) fn sum_grads(grads: &mut [Gradient], values: &[std::result::Result<LaneValue, Error>]) {
    let every = values.iter().all(|v| v.is_ok());
    for g in grads {
        let n = g.shape.len();
        if !every && n > 0 {
            for (v, lane) in values.iter().zip(g.per_lane.chunks_exact_mut(n)) {
                if v.is_err() {
                    lane.fill(f64::NAN);
                }
            }
        }
        match g.shape.len() {
            0 => {}
            // One number per lane: summed in a register.
            1 => {
                let mut sum = g.sum[0];
                if every {
                    for &x in &g.per_lane {
                        sum += x;
                    }
                } else {
                    for (v, &x) in values.iter().zip(&g.per_lane) {
                        if v.is_ok() {
                            sum += x;
                        }
                    }
                }
                g.sum[0] = sum;
            }
            n => {
                for (v, lane) in values.iter().zip(g.per_lane.chunks_exact(n)) {
                    if every || v.is_ok() {
                        for (s, &x) in g.sum.iter_mut().zip(lane) {
                            *s += x;
                        }
                    }
                }
            }
        }
    }
}
