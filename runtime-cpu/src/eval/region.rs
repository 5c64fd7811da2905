//! Numeric regions: every per-lane numeric op goes through [`Machine::exec`], which runs its
//! kernel now or, when the walk defers (a region device is attached), appends it to the
//! pending region. [`Machine::flush`] runs the pending region, on the device when its cost
//! model wants it and on the CPU kernels otherwise, before the walk reads a per-lane number
//! (a comparison or an index on lane data) and at the end of the walk. Uniform numbers are
//! always computed at once: they cannot depend on a pending result.

use super::{EResult, Fault, Machine, State, Stop};
use crate::error::Error;
use crate::ops::{compute, dims};
use crate::payload::{SlotInfo, NO_ADJOINT};
use crate::tape::{LinalgOp, Rec};
use crate::value::{Slot, Value};
use shared_ir::region::{
    encode_op, is_wide, MaskBits, OpRecord, Opcode, Region, RegionStats, MAX_LANE_WIDTH, NO_ADJ,
    SLOT_WORDS,
};
use shared_ir::Real;

/// Numbers a record computes per lane, counting the inner loop of a product and n^3 for a
/// factorisation: the cost model's measure, and the longest loop one invocation runs.
pub(crate) fn work<R: Real>(st: &State<R>, rec: &Rec) -> u64 {
    let len = |s: Slot| st.pay.info(s).n() as u64;
    match *rec {
        Rec::Linalg { op, out, a, b } => {
            let (m, k) = dims(st.pay.info(a).shape);
            let (m, k) = (m as u64, k as u64);
            let w = match op {
                LinalgOp::Dot | LinalgOp::Vsum | LinalgOp::Norm | LinalgOp::Transpose => len(a),
                LinalgOp::Normalize | LinalgOp::NormalizeProtected => 2 * len(a),
                LinalgOp::Trace => m.min(k),
                LinalgOp::Cross => 3,
                // Each result element is a sum over the inner dimension.
                LinalgOp::Matvec | LinalgOp::Matmul => len(out) * k,
                LinalgOp::Outer => len(out),
                LinalgOp::Solve => m * m * (m + dims(st.pay.info(b).shape).1 as u64),
                LinalgOp::Det | LinalgOp::Logdet | LinalgOp::Inv => m * m * m,
            };
            w.max(1)
        }
        Rec::Pack { out, count, .. } => len(out) + u64::from(count),
        Rec::Unary { out, .. }
        | Rec::Binary { out, .. }
        | Rec::Select { out, .. }
        | Rec::Extract { out, .. } => len(out),
    }
}

/// The loop one GPU invocation runs alone for a record whose elements a lane's invocations
/// share: every element where a broadcast scalar's adjoint is summed, every part of a pack;
/// else 1.
fn serial_loop<R: Real>(st: &State<R>, rec: &Rec) -> u64 {
    let len = |s: Slot| st.pay.info(s).n() as u64;
    match *rec {
        Rec::Binary { out, a, b, .. } if len(a) == 1 || len(b) == 1 => len(out),
        Rec::Pack { count, .. } => u64::from(count),
        _ => 1,
    }
}

/// The largest square matrix a record factors (0 when it factors none).
fn factor_size<R: Real>(st: &State<R>, rec: &Rec) -> usize {
    match *rec {
        Rec::Linalg { op, a, b, .. } if op.factors() => {
            let n = dims(st.pay.info(a).shape).0;
            if op == LinalgOp::Solve {
                n.max(dims(st.pay.info(b).shape).1)
            } else {
                n
            }
        }
        _ => 0,
    }
}

/// Appends the slot-table words of every slot not yet in `region`.
pub(crate) fn encode_slots(region: &mut Region, infos: &[SlotInfo]) {
    let done = region.slots.len() / SLOT_WORDS;
    for i in &infos[done..] {
        let (r, c) = dims(i.shape);
        let adj = if i.adj == NO_ADJOINT {
            NO_ADJ
        } else {
            i.adj as u32
        };
        region.slots.extend_from_slice(&[
            i.offset as u32,
            i.len,
            u32::from(i.lanes),
            adj,
            r as u32,
            c as u32,
        ]);
    }
}

/// Appends `rec`, run under `mask`, to `region`'s ops; a pack's parts go to the aux list.
pub(crate) fn encode_rec(region: &mut Region, rec: &Rec, mask: u32, parts: &[Slot]) {
    let mut r = OpRecord {
        mask,
        ..OpRecord::default()
    };
    match *rec {
        Rec::Unary { op, out, a } => {
            (r.opcode, r.sub, r.out, r.a) = (Opcode::Unary, op.code(), out.0, a.0);
        }
        Rec::Binary { op, out, a, b } => {
            (r.opcode, r.sub, r.out, r.a, r.b) = (Opcode::Binary, op.code(), out.0, a.0, b.0);
        }
        Rec::Select { out, cond, a, b } => {
            (r.opcode, r.out, r.a, r.b, r.extra) = (Opcode::Select, out.0, a.0, b.0, cond.0);
        }
        Rec::Pack { out, start, count } => {
            let first = region.aux.len() as u32;
            region.aux.extend(
                parts[start as usize..(start + count) as usize]
                    .iter()
                    .map(|s| s.0),
            );
            (r.opcode, r.out, r.extra, r.count) = (Opcode::Pack, out.0, first, count);
        }
        Rec::Extract { out, src, first } => {
            (r.opcode, r.out, r.a, r.extra) = (Opcode::Extract, out.0, src.0, first);
        }
        Rec::Linalg { op, out, a, b } => {
            (r.opcode, r.sub, r.out, r.a, r.b) = (Opcode::Linalg, op.code(), out.0, a.0, b.0);
        }
    }
    encode_op(&r, &mut region.ops);
}

/// The size of a list of records, for the cost model (`reverse`: as the reverse pass).
pub(crate) fn stats<R: Real>(
    st: &State<R>,
    recs: impl Iterator<Item = Rec>,
    reverse: bool,
) -> RegionStats {
    let mut s = RegionStats {
        lanes: st.pay.lanes(),
        data_len: st.pay.top(),
        adj_len: st.pay.adjoint_len(),
        ..RegionStats::default()
    };
    for rec in recs {
        let (opcode, sub, out) = kind(&rec);
        let len = st.pay.info(out).len;
        let wide = is_wide(opcode, sub, len, reverse);
        let w = work(st, &rec);
        // A wide op's work is shared by up to `MAX_LANE_WIDTH` invocations of its lane, but
        // for the loop one of them runs alone.
        let per_invocation = if wide {
            w.div_ceil(MAX_LANE_WIDTH).max(serial_loop(st, &rec))
        } else {
            w
        };
        s.add(w, wide, u64::from(len), per_invocation);
        s.largest_factor = s.largest_factor.max(factor_size(st, &rec));
    }
    s
}

/// A record's opcode, sub-op and result.
fn kind(rec: &Rec) -> (Opcode, u32, Slot) {
    match *rec {
        Rec::Unary { op, out, .. } => (Opcode::Unary, op.code(), out),
        Rec::Binary { op, out, .. } => (Opcode::Binary, op.code(), out),
        Rec::Select { out, .. } => (Opcode::Select, 0, out),
        Rec::Pack { out, .. } => (Opcode::Pack, 0, out),
        Rec::Extract { out, .. } => (Opcode::Extract, 0, out),
        Rec::Linalg { op, out, .. } => (Opcode::Linalg, op.code(), out),
    }
}

/// Results of the region a range of host numbers to upload may span (they are overwritten on
/// the device), so that a region interleaved with small host values needs few copies.
const UPLOAD_GAP: usize = 1024;

/// Fills `st.upload` with the ranges of the arena the host wrote since the device's last
/// call: the slots from `st.synced` on, less the results of the pending records when
/// `pending` (the device computes those).
pub(crate) fn upload_ranges<R: Real>(st: &mut State<R>, pending: bool) {
    let State {
        pay,
        upload,
        computed,
        synced,
        pending: recs,
        ..
    } = st;
    let infos = pay.slot_infos();
    let first = (*synced).min(infos.len());
    let lanes = pay.lanes();
    computed.clear();
    computed.resize(infos.len() - first, false);
    if pending {
        for rec in recs.iter() {
            let out = kind(rec).2 .0 as usize;
            if out >= first {
                computed[out - first] = true;
            }
        }
    }
    upload.clear();
    for (info, &skip) in infos[first..].iter().zip(computed.iter()) {
        let n = info.stored(lanes);
        if skip || n == 0 {
            continue;
        }
        let r = info.offset..info.offset + n;
        match upload.last_mut() {
            Some(last) if r.start - last.end <= UPLOAD_GAP => last.end = r.end,
            _ => upload.push(r),
        }
    }
}

/// The numbers the host wrote since the device's last call, for the cost model: those of the
/// slots from `st.synced` on, less the pending results. Costs one step per pending record, so
/// that a walk that keeps its regions on the CPU does not pay for the ranges.
pub(crate) fn host_numbers<R: Real>(st: &State<R>) -> usize {
    let from = st
        .pay
        .slot_infos()
        .get(st.synced)
        .map_or(st.pay.top(), |i| i.offset);
    let lanes = st.pay.lanes();
    let computed: usize = st
        .pending
        .iter()
        .map(|r| st.pay.info(kind(r).2).stored(lanes))
        .sum();
    (st.pay.top() - from).saturating_sub(computed)
}

/// Reads the device's results the host does not have (`st.stale`) into the arena.
pub(crate) fn read_stale<R: Real>(st: &mut State<R>) -> Result<(), String> {
    let r = std::mem::replace(&mut st.stale, 0..0);
    read_back(st, r)
}

/// Reads numbers `r` of the arena back from the device.
fn read_back<R: Real>(st: &mut State<R>, r: std::ops::Range<usize>) -> Result<(), String> {
    if r.is_empty() {
        return Ok(());
    }
    let device = st
        .device
        .as_mut()
        .ok_or("the device that holds the results is gone")?;
    device.read(r.start, &mut st.pay.data_mut()[r])
}

impl<R: Real> State<R> {
    /// The device failed with `message`: true when the session goes on without it (`auto`;
    /// from then on the walk computes at once on the CPU), false when the walk must fail.
    pub(crate) fn falls_back(&mut self, message: &str) -> bool {
        let back = self.device_failed || self.device.as_mut().is_some_and(|d| d.fall_back(message));
        if back {
            self.device_failed = true;
            self.defer = false;
        }
        back
    }
}

impl<R: Real> Machine<'_, R> {
    /// Runs `rec` (whose result slot is allocated) now, or defers it when the walk defers and
    /// its result is per lane. A pack's parts are in `State::parts`.
    #[inline(always)]
    pub(crate) fn exec(&mut self, rec: Rec, lanes_out: bool) {
        let st = &mut *self.s;
        if st.defer && lanes_out {
            let rec = match rec {
                Rec::Pack { out, start, count } => {
                    let first = st.pending_aux.len() as u32;
                    st.pending_aux
                        .extend_from_slice(&st.parts[start as usize..(start + count) as usize]);
                    Rec::Pack {
                        out,
                        start: first,
                        count,
                    }
                }
                other => other,
            };
            st.pending.push(rec);
            return;
        }
        let (pay, masks, scratch) = (&mut st.pay, &st.masks, &mut st.scratch);
        if let Rec::Pack { .. } = rec {
            compute(pay, masks, scratch, &rec, &st.parts);
        } else {
            compute(pay, masks, scratch, &rec, &[]);
        }
    }

    /// Runs the pending region, if any, and makes the numbers of `slots` readable on the
    /// host: the region runs on the device when it wants it (its results stay there, but for
    /// those of `slots`), else on the CPU kernels (after reading back what the device holds).
    pub(crate) fn flush_for(&mut self, slots: &[Slot]) -> EResult<()> {
        self.flush()?;
        let st = &mut *self.s;
        if st.stale.is_empty() {
            return Ok(());
        }
        let lanes = st.pay.lanes();
        for &s in slots {
            let info = st.pay.info(s);
            let lo = info.offset.max(st.stale.start);
            let hi = (info.offset + info.stored(lanes)).min(st.stale.end);
            if let Err(message) = read_back(st, lo..hi.max(lo)) {
                return Err(self.device_failed(message));
            }
        }
        Ok(())
    }

    /// Runs what is pending at the end of a walk and makes its value `v` readable on the host.
    pub(crate) fn finish(&mut self, v: Value) -> EResult<Value> {
        match v {
            Value::Num(s) => self.flush_for(&[s])?,
            _ => {
                self.flush()?;
                self.sync_host()?;
            }
        }
        Ok(v)
    }

    /// Reads back every number the device holds that the host has not.
    pub(crate) fn sync_host(&mut self) -> EResult<()> {
        match read_stale(self.s) {
            Ok(()) => Ok(()),
            Err(message) => Err(self.device_failed(message)),
        }
    }

    /// The device failed after computing numbers the walk needs: the walk runs again on the
    /// CPU when the device falls back (`auto`), else it fails.
    #[cold]
    fn device_failed(&mut self, message: String) -> Stop {
        self.s.stale = 0..0;
        if self.s.falls_back(&message) {
            return self.stop(Fault::Retry);
        }
        self.fail(Error::Device { message })
    }

    /// Runs the pending region, if any: on the device when it wants it, else on the CPU.
    pub(crate) fn flush(&mut self) -> EResult<()> {
        if self.s.pending.is_empty() {
            return Ok(());
        }
        let st = &mut *self.s;
        let mut stats = stats(st, st.pending.iter().copied(), false);
        let on_device = st.device.is_some() && {
            stats.upload = host_numbers(st);
            stats.download = st.pay.lanes();
            st.device.as_mut().is_some_and(|d| d.wants(&stats))
        };
        if on_device {
            upload_ranges(st, true);
            encode_slots(&mut st.region, st.pay.slot_infos());
            st.region.ops.clear();
            st.region.aux.clear();
            st.region.lanes = st.pay.lanes() as u32;
            for rec in &st.pending {
                encode_rec(&mut st.region, rec, 0, &st.pending_aux);
            }
            let top = st.pay.top();
            let masks = if st.pending.iter().any(|r| matches!(r, Rec::Select { .. })) {
                st.masks.bits()
            } else {
                MaskBits::default()
            };
            let device = st.device.as_mut().expect("checked above");
            let r = device.forward(&st.region, &masks, &st.pay.data()[..top], &st.upload);
            match r {
                Ok(()) => {
                    let infos = st.pay.slot_infos();
                    let from = infos.get(st.synced).map_or(top, |i| i.offset);
                    st.stale = if st.stale.is_empty() {
                        from..top
                    } else {
                        st.stale.start..top
                    };
                    st.synced = infos.len();
                    st.region_stats.device_regions += 1;
                }
                Err(message) => {
                    if !st.falls_back(&message) {
                        st.pending.clear();
                        st.pending_aux.clear();
                        return Err(self.fail(Error::Device { message }));
                    }
                    self.cpu_region()?;
                }
            }
        } else {
            self.cpu_region()?;
        }
        let st = &mut *self.s;
        st.region_stats.ops += stats.ops as u64;
        st.pending.clear();
        st.pending_aux.clear();
        Ok(())
    }

    /// Runs the pending region with the CPU kernels, after reading back what the device holds.
    fn cpu_region(&mut self) -> EResult<()> {
        if let Err(stop) = self.sync_host() {
            self.s.pending.clear();
            self.s.pending_aux.clear();
            return Err(stop);
        }
        run_on_cpu(self.s);
        Ok(())
    }
}

/// Runs the pending region with the CPU kernels.
fn run_on_cpu<R: Real>(st: &mut State<R>) {
    let pending = std::mem::take(&mut st.pending);
    let aux = std::mem::take(&mut st.pending_aux);
    for rec in &pending {
        compute(&mut st.pay, &st.masks, &mut st.scratch, rec, &aux);
    }
    st.region_stats.cpu_regions += 1;
    st.pending = pending;
    st.pending_aux = aux;
}
