//! The reverse pass on the device: the tape as a region, run backwards from the seed over
//! the values the device already holds.

use super::encode::{encode_rec, encode_slots, stats};
use super::Regions;
use crate::mask::Masks;
use crate::payload::Payloads;
use crate::tape::Tape;
use shared_ir::Real;

impl<R: Real> Regions<R> {
    /// Whether the walk just recorded should run its reverse pass on the device: it recorded,
    /// its tape is not empty, and the device's cost model wants it.
    pub(crate) fn wants_reverse(&mut self, tape: &Tape, pay: &Payloads<R>) -> bool {
        if !self.defer || tape.entries.is_empty() {
            return false;
        }
        let mut stats = stats(pay, tape.entries.iter().map(|e| e.rec), true);
        if self.device.is_some() {
            stats.upload = self.host_numbers(pay);
            // At most the adjoints of the inputs, the first of the arena.
            stats.download = pay.adjoint_len().min(pay.lanes() * 64);
        }
        self.device.as_mut().is_some_and(|d| d.wants(&stats))
    }

    /// Runs `tape` backwards on the device from the adjoint at `seed.0`, seeded per lane with
    /// `seed.1`, and returns the first `read` numbers of the adjoint arena (laid out as the
    /// CPU's: element `e` of a slot's adjoint on lane `l` at `adj + e * lanes + l`).
    pub(crate) fn reverse(
        &mut self,
        tape: &Tape,
        pay: &Payloads<R>,
        masks: &Masks,
        seed: (usize, &[R]),
        read: usize,
    ) -> Result<Vec<R>, String> {
        encode_slots(&mut self.region, pay.slot_infos());
        self.region.ops.clear();
        self.region.aux.clear();
        self.region.lanes = pay.lanes() as u32;
        for e in &tape.entries {
            encode_rec(&mut self.region, &e.rec, e.mask.0, &tape.aux);
        }
        let bits = masks.bits();
        let top = pay.top();
        self.upload_ranges(pay, false);
        let device = self
            .device
            .as_mut()
            .ok_or("no device to run the reverse pass")?;
        let adj = device.reverse(
            &self.region,
            &bits,
            &pay.data()[..top],
            &self.upload,
            pay.adjoint_len(),
            seed,
            read,
        )?;
        self.counts.device_reverse += 1;
        Ok(adj)
    }
}
