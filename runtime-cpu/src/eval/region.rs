//! The evaluator's side of the region seam: every per-lane numeric op goes through
//! [`Machine::exec`] to the executor ([`crate::regions::Regions`]), which runs it now or
//! records it for the device; before the walk reads a per-lane number the pending region is
//! flushed. A device failure becomes the walk's fault here.

use super::{EResult, Fault, Machine, Stop};
use crate::error::Error;
use crate::regions::DeviceStop;
use crate::tape::Rec;
use crate::value::{Slot, Value};
use shared_ir::Real;

impl<R: Real> Machine<'_, R> {
    /// Runs `rec` (whose result slot is allocated) now, or records it when the walk records
    /// and its result is per lane. A pack's parts are in `State::parts`.
    #[inline(always)]
    pub(crate) fn exec(&mut self, rec: Rec, lanes_out: bool) {
        let st = &mut *self.s;
        let (pay, masks, scratch, parts) = (&mut st.pay, &st.masks, &mut st.scratch, &st.parts);
        st.regions.exec(pay, masks, scratch, rec, parts, lanes_out);
    }

    /// Runs the pending region, if any, and makes the numbers of `slots` readable on the
    /// host: the region runs on the device when it wants it (its results stay there, but for
    /// those of `slots`), else on the CPU kernels (after reading back what the device holds).
    pub(crate) fn flush_for(&mut self, slots: &[Slot]) -> EResult<()> {
        self.flush()?;
        let st = &mut *self.s;
        let r = st.regions.read_slots(&mut st.pay, slots);
        r.map_err(|e| self.device_stop(e))
    }

    /// Runs what is pending at the end of a walk and makes its value `v` readable on the host.
    pub(crate) fn finish(&mut self, v: Value) -> EResult<Value> {
        match v {
            Value::Num(s) => self.flush_for(&[s])?,
            _ => {
                self.flush()?;
                let st = &mut *self.s;
                let r = st.regions.sync_host(&mut st.pay);
                r.map_err(|e| self.device_stop(e))?;
            }
        }
        Ok(v)
    }

    /// Runs the pending region, if any: on the device when it wants it, else on the CPU.
    pub(crate) fn flush(&mut self) -> EResult<()> {
        let st = &mut *self.s;
        let r = st.regions.flush(&mut st.pay, &st.masks, &mut st.scratch);
        r.map_err(|e| self.device_stop(e))
    }

    #[cold]
    fn device_stop(&mut self, e: DeviceStop) -> Stop {
        match e {
            DeviceStop::Retry => self.stop(Fault::Retry),
            DeviceStop::Fail(message) => self.fail(Error::Device { message }),
        }
    }
}
