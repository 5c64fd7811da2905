//! The session's region device: attaching one, its counts, and the reverse pass run there
//! with the gradients read from the adjoints it returns.

use super::{Engine, Gradient, Input, Session};
use crate::payload::NO_ADJOINT;
use crate::regions::RegionCounts;
use crate::value::Slot;
use shared_ir::region::RegionDevice;
use shared_ir::Real;

impl<R: Real> Session<R> {
    /// Attaches a device that runs the numeric regions of walks (or detaches it with `None`).
    /// With a device, per-lane numeric work is collected into regions that the device runs
    /// when its cost model says so; results are the same up to the device's arithmetic.
    pub fn set_device(&mut self, device: Option<Box<dyn RegionDevice<R>>>) {
        self.engine.state.regions.attach(device);
        // The last walk ran without this device: the next run walks.
        self.engine.forget_trace();
    }

    /// The attached region device.
    pub fn device(&self) -> Option<&dyn RegionDevice<R>> {
        self.engine.state.regions.device()
    }

    /// How many regions ran on the device and on the CPU, over the session's life.
    pub fn region_counts(&self) -> RegionCounts {
        self.engine.state.regions.counts()
    }
}

impl<R: Real> Engine<R> {
    /// The reverse pass on the device, and the gradients read from the adjoints it returns.
    pub(super) fn reverse_on_device(
        &mut self,
        result: Slot,
        group: &[usize],
        inputs: &[Input],
        seed: Option<&[f64]>,
        grads: &mut [Gradient],
    ) -> std::result::Result<(), String> {
        let st = &mut self.state;
        let l = group.len();
        let res = st.pay.info(result);
        let slots = &self.pools.slots;
        let mut read = 0usize;
        for (inp, &slot) in inputs.iter().zip(slots) {
            let info = st.pay.info(slot);
            if inp.grad.is_some() && info.adj() != NO_ADJOINT {
                read = read.max(info.adj() + info.n() * l);
            }
        }
        let adj = if res.adj() == NO_ADJOINT || read == 0 {
            // Nothing reaches a differentiated input: every gradient is zero.
            Vec::new()
        } else {
            let seeds: Vec<R> = match seed {
                None => vec![R::ONE; l],
                Some(w) => group.iter().map(|&lane| R::from_f64(w[lane])).collect(),
            };
            st.regions
                .reverse(&st.tape, &st.pay, &st.masks, (res.adj(), &seeds), read)?
        };
        for (inp, &slot) in inputs.iter().zip(slots) {
            let Some(k) = inp.grad else { continue };
            let info = st.pay.info(slot);
            let g = &mut grads[k];
            let n = g.shape.len();
            for e in 0..n {
                for (i, &lane) in group.iter().enumerate() {
                    g.per_lane[lane * n + e] = if info.adj() == NO_ADJOINT || adj.is_empty() {
                        0.0
                    } else {
                        adj[info.adj() + e * l + i].to_f64()
                    };
                }
            }
        }
        Ok(())
    }
}
