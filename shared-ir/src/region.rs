//! Numeric regions: the numeric work of a walk as data, for a device to run.
//!
//! The structural walk (CPU) collects the numeric operations on per-lane values into a
//! *region* until it needs a number back (a comparison on lane data, an index, the end of the
//! walk). A region is a list of fixed-size op records over *slots* (dense per-lane buffers in
//! one data arena) and is run by an interpreter compiled once (WGSL on a GPU, or the CPU
//! kernels), never by code generated per program. The reverse pass is a region too: the tape's
//! records, replayed backwards under their lane masks.
//!
//! Layout of one slot ([`SLOT_WORDS`] `u32`s): data offset, elements per lane, 1 when the slot
//! holds one value per lane (element `e` of lane `l` at `offset + e * lanes + l`; else at
//! `offset + e`), the offset of its lane-wide adjoint ([`NO_ADJ`] when it has none; element
//! `e` of lane `l` at `adj + e * lanes + l`), rows and columns (a vector is `n x 1`, a scalar
//! `1 x 1`).
//!
//! Layout of one op ([`OP_WORDS`] `u32`s): opcode, sub-op, result slot, operands `a` and `b`,
//! an extra word (the mask of a select, the first element of an extract, the first part of a
//! pack in the aux list), the lane mask the op ran under (reverse only; mask 0 is every lane),
//! and the part count of a pack.
//!
//! ```
//! use shared_ir::region::{decode_op, encode_op, OpRecord, Opcode};
//! use shared_ir::UnaryOp;
//! let rec = OpRecord { opcode: Opcode::Unary, sub: UnaryOp::Exp.code(), out: 7, a: 3, ..OpRecord::default() };
//! let mut words = Vec::new();
//! encode_op(&rec, &mut words);
//! assert_eq!(decode_op(&words), Some(rec));
//! ```

pub use crate::linalg::LinalgOp;
use crate::op::{BinaryOp, UnaryOp};
use std::ops::Range;

/// `u32`s per slot in a slot table.
pub const SLOT_WORDS: usize = 6;
/// `u32`s per op record.
pub const OP_WORDS: usize = 8;
/// The adjoint offset of a slot without an adjoint.
pub const NO_ADJ: u32 = u32::MAX;

impl UnaryOp {
    /// The op's number in region records (its index in [`UnaryOp::ALL`]).
    pub fn code(self) -> u32 {
        self as u32
    }
}

impl BinaryOp {
    /// The op's number in region records (its index in [`BinaryOp::ALL`]).
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// What an op record does.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub enum Opcode {
    /// `out = f(a)` elementwise; `sub` is a [`UnaryOp::code`].
    #[default]
    Unary = 0,
    /// `out = f(a, b)` elementwise with scalar broadcast; `sub` is a [`BinaryOp::code`].
    Binary = 1,
    /// `out = mask ? a : b` lane by lane; `extra` is the mask.
    Select = 2,
    /// `out` = the concatenation of `count` parts listed in the aux list from `extra`.
    Pack = 3,
    /// `out` = elements `extra..` of `a`.
    Extract = 4,
    /// A vector or matrix op; `sub` is a [`LinalgOp::code`].
    Linalg = 5,
}

impl Opcode {
    fn from_u32(x: u32) -> Option<Opcode> {
        Some(match x {
            0 => Opcode::Unary,
            1 => Opcode::Binary,
            2 => Opcode::Select,
            3 => Opcode::Pack,
            4 => Opcode::Extract,
            5 => Opcode::Linalg,
            _ => return None,
        })
    }
}

/// One op record, unpacked.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OpRecord {
    /// What it does.
    pub opcode: Opcode,
    /// The unary, binary or linalg op.
    pub sub: u32,
    /// Result slot.
    pub out: u32,
    /// First operand slot.
    pub a: u32,
    /// Second operand slot.
    pub b: u32,
    /// Mask of a select, first element of an extract, first aux entry of a pack.
    pub extra: u32,
    /// The lanes the op ran under (reverse records); 0 is every lane.
    pub mask: u32,
    /// Parts of a pack.
    pub count: u32,
}

/// Appends `rec` to `words` in the record layout.
#[inline]
pub fn encode_op(rec: &OpRecord, words: &mut Vec<u32>) {
    words.extend_from_slice(&[
        rec.opcode as u32,
        rec.sub,
        rec.out,
        rec.a,
        rec.b,
        rec.extra,
        rec.mask,
        rec.count,
    ]);
}

/// The record at the start of `words`, if it is one.
pub fn decode_op(words: &[u32]) -> Option<OpRecord> {
    let w = words.get(..OP_WORDS)?;
    Some(OpRecord {
        opcode: Opcode::from_u32(w[0])?,
        sub: w[1],
        out: w[2],
        a: w[3],
        b: w[4],
        extra: w[5],
        mask: w[6],
        count: w[7],
    })
}

/// A region ready for a device: the slot table, the op records, the pack parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Lanes of the walk.
    pub lanes: u32,
    /// [`SLOT_WORDS`] per slot, every slot of the walk so far.
    pub slots: Vec<u32>,
    /// [`OP_WORDS`] per op.
    pub ops: Vec<u32>,
    /// Slots of pack parts.
    pub aux: Vec<u32>,
}

impl Region {
    /// Empties the region, keeping its memory.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.ops.clear();
        self.aux.clear();
    }

    /// Number of op records.
    pub fn len(&self) -> usize {
        self.ops.len() / OP_WORDS
    }

    /// True when there is no op.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// Lane masks for a reverse region: `words_per_mask` `u32`s per mask, lane `l` of mask `m` in
/// bit `l % 32` of word `m * words_per_mask + l / 32`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MaskBits {
    /// Words per mask.
    pub words_per_mask: u32,
    /// The bits.
    pub words: Vec<u32>,
}

/// The size of a region, as the cost model sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionStats {
    /// Op records.
    pub ops: usize,
    /// Numbers computed per lane: results' elements, the inner loops of products, n^3 for a
    /// factorisation.
    pub work: u64,
    /// Lanes of the walk.
    pub lanes: usize,
    /// Numbers in the data arena.
    pub data_len: usize,
    /// Numbers in the adjoint arena (reverse regions).
    pub adj_len: usize,
    /// The largest square matrix an op factors (0 when none does).
    pub largest_factor: usize,
    /// The longest loop one invocation runs for one op: an op's numbers per lane, or for a
    /// wide op, its share of them among [`MAX_LANE_WIDTH`] invocations (or the loop one
    /// invocation runs alone: the elements a broadcast scalar's adjoint sums, a pack's parts).
    pub heaviest: u64,
    /// Work of the ops a device runs wide (see [`is_wide`]).
    pub wide_work: u64,
    /// Result elements of the wide ops, summed (with `wide_ops`, their mean width).
    pub wide_elements: u64,
    /// Wide ops.
    pub wide_ops: usize,
    /// Numbers the host sends the device before the region runs.
    pub upload: usize,
    /// Numbers the host reads back after it.
    pub download: usize,
}

impl RegionStats {
    /// Adds one op of `work` numbers per lane with an `out_len`-element result, whose longest
    /// loop in one invocation is `per_invocation` iterations.
    pub fn add(&mut self, work: u64, wide: bool, out_len: u64, per_invocation: u64) {
        self.ops += 1;
        self.work += work;
        self.heaviest = self.heaviest.max(per_invocation);
        if wide {
            self.wide_work += work;
            self.wide_elements += out_len;
            self.wide_ops += 1;
        }
    }
}

/// The most invocations of one lane that share an op's elements on a device.
pub const MAX_LANE_WIDTH: u64 = 64;

/// Result elements from which the cost model counts an elementwise or product op as *wide*:
/// its elements are shared by several invocations of each lane (up to [`MAX_LANE_WIDTH`]), so
/// that a batch of large vectors and matrices fills a GPU even at few lanes.
pub const WIDE_MIN_ELEMENTS: u32 = 16;

/// Whether an op of `opcode` (and `sub`) with an `out_len`-element result runs wide, forward
/// (`reverse` false) or in the reverse pass. Reductions (`dot`, `vsum`, `norm`, `trace`),
/// `normalize`, `cross` and the factorisations run on one invocation per lane; so does a pack
/// in the reverse pass (its parts may repeat, and two invocations would add to one adjoint).
pub fn is_wide(opcode: Opcode, sub: u32, out_len: u32, reverse: bool) -> bool {
    out_len >= WIDE_MIN_ELEMENTS && shares_elements(opcode, sub, reverse)
}

/// Whether a device may share an op's elements among several invocations of a lane, forward
/// (`reverse` false) or in the reverse pass: elementwise ops, select, extract, a pack forward,
/// and matvec, matmul, transpose and outer. The rest must run on one invocation per lane.
pub fn shares_elements(opcode: Opcode, sub: u32, reverse: bool) -> bool {
    match opcode {
        Opcode::Unary | Opcode::Binary | Opcode::Select | Opcode::Extract => true,
        Opcode::Pack => !reverse,
        Opcode::Linalg => matches!(
            LinalgOp::ALL.get(sub as usize),
            Some(LinalgOp::Matmul | LinalgOp::Matvec | LinalgOp::Transpose | LinalgOp::Outer)
        ),
    }
}

/// A region device's error, in words (the caller adds where it happened).
pub type DeviceResult<T> = Result<T, String>;

/// A device that runs regions.
///
/// The device keeps its own copy of the data arena through a walk. Each call sends the
/// numbers the host wrote since the device's previous call of the walk (`upload`: ranges of
/// `data`, in numbers; on a new walk, everything the host wrote since it began), and a forward
/// call leaves its results on the device: the host reads back with [`RegionDevice::read`]
/// only the numbers it needs (a comparison's operands, the walk's result), so the
/// intermediate values of a long region never cross the bus.
pub trait RegionDevice<R>: Send + std::fmt::Debug {
    /// A short description for logs and errors.
    fn describe(&self) -> String;

    /// Walks of fewer lanes never collect regions for this device ([`RegionDevice::defer_at`]
    /// is not asked): asked once, when the device is attached.
    fn min_lanes(&self) -> usize {
        1
    }

    /// Whether a walk over `lanes` lanes should collect regions for this device at all (a
    /// device that can never pay its dispatch at this width says no, and the walk computes
    /// at once on the CPU).
    fn defer_at(&mut self, lanes: usize) -> bool;

    /// Whether the device should run a region of this size (the cost model's decision). A
    /// device that cannot run it (a matrix too large, a buffer over its limits) says no.
    fn wants(&mut self, stats: &RegionStats) -> bool;

    /// The device failed with `error`: true to run this region (and the walk's later work) on
    /// the CPU instead (a user who asked for `auto`), false to fail the walk.
    fn fall_back(&mut self, error: &str) -> bool {
        let _ = error;
        false
    }

    /// Runs `region` forward: computes the result slots of its ops in the device's copy of
    /// the arena, after copying the `upload` ranges of `data` there. `masks` holds the lane
    /// masks its selects read (empty when it has none).
    fn forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[R],
        upload: &[Range<usize>],
    ) -> DeviceResult<()>;

    /// Copies `out.len()` numbers of the device's arena, from number `from` on, into `out`.
    fn read(&mut self, from: usize, out: &mut [R]) -> DeviceResult<()>;

    /// Runs `region` (the tape, in execution order) backwards from the seeded adjoint
    /// `(seed_offset, seeds)` (one per lane) and returns the first `read` numbers of the
    /// adjoint arena of `adj_len` numbers. The values are the device's copy of the arena,
    /// after copying the `upload` ranges of `data` there.
    #[allow(clippy::too_many_arguments)]
    fn reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[R],
        upload: &[Range<usize>],
        adj_len: usize,
        seed: (usize, &[R]),
        read: usize,
    ) -> DeviceResult<Vec<R>>;
}

/// What a device costs, measured on the machine: the terms of the cost model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegionCosts {
    /// One dispatch round trip (encode, submit, wait), microseconds.
    pub dispatch_us: f64,
    /// Host-to-device bandwidth, GiB/s.
    pub upload_gib_per_s: f64,
    /// Device-to-host bandwidth, GiB/s.
    pub download_gib_per_s: f64,
    /// Device time per number of region work and lane, nanoseconds, measured with the
    /// device full (its throughput).
    pub device_ns_per_work: f64,
    /// Device time of one step of a region (an op, or one turn of an invocation's loop
    /// over an op's elements) with too few lanes to fill the device, nanoseconds: the latency
    /// each step pays however few lanes run it.
    pub device_step_ns: f64,
    /// CPU time per number of region work, nanoseconds.
    pub cpu_ns_per_work: f64,
}

impl RegionCosts {
    /// Estimated device seconds for a region of this size in `dispatches` dispatches, moving
    /// its `upload` and `download` numbers (4 bytes each). Each number of work costs the
    /// device's throughput per lane, but no less than one step's latency: per number for work
    /// run one invocation per lane, per number over the op's mean width for wide work (whose
    /// elements a lane's invocations share).
    pub fn device_seconds(&self, s: &RegionStats, dispatches: u64) -> f64 {
        let gib = |numbers: usize| numbers as f64 * 4.0 / f64::from(1u32 << 30);
        let per_number = s.lanes as f64 * self.device_ns_per_work;
        let narrow = (s.work - s.wide_work) as f64 * per_number.max(self.device_step_ns);
        let width = (s.wide_elements as f64 / s.wide_ops.max(1) as f64).max(1.0);
        let wide = s.wide_work as f64 * per_number.max(self.device_step_ns / width);
        dispatches as f64 * self.dispatch_us * 1e-6
            + gib(s.upload) / self.upload_gib_per_s.max(1e-9)
            + gib(s.download) / self.download_gib_per_s.max(1e-9)
            + (narrow + wide) * 1e-9
    }

    /// Estimated CPU seconds for the same region.
    pub fn cpu_seconds(&self, s: &RegionStats) -> f64 {
        (s.work * s.lanes as u64) as f64 * self.cpu_ns_per_work * 1e-9
    }

    /// True when some region at `lanes` lanes could run faster on the device: a number of
    /// wide work (on results of up to 1024 elements) costs less there.
    pub fn can_pay_at(&self, lanes: usize) -> bool {
        let lanes = lanes as f64;
        (lanes * self.device_ns_per_work).max(self.device_step_ns / 1024.0)
            < self.cpu_ns_per_work * lanes
    }

    /// True when the device is expected to run a region of this size faster.
    pub fn prefer_device(&self, s: &RegionStats, dispatches: u64) -> bool {
        self.device_seconds(s, dispatches) < self.cpu_seconds(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let rec = OpRecord {
            opcode: Opcode::Pack,
            sub: 0,
            out: 9,
            a: 0,
            b: 0,
            extra: 4,
            mask: 2,
            count: 3,
        };
        let mut w = Vec::new();
        encode_op(&rec, &mut w);
        assert_eq!(w.len(), OP_WORDS);
        assert_eq!(decode_op(&w), Some(rec));
        w[0] = 99;
        assert_eq!(decode_op(&w), None);
    }

    #[test]
    fn codes_are_indices() {
        for (i, op) in UnaryOp::ALL.iter().enumerate() {
            assert_eq!(op.code() as usize, i);
        }
        for (i, op) in BinaryOp::ALL.iter().enumerate() {
            assert_eq!(op.code() as usize, i);
        }
        for (i, op) in LinalgOp::ALL.iter().enumerate() {
            assert_eq!(op.code() as usize, i);
        }
    }

    #[test]
    fn the_cost_model_prefers_the_device_only_for_large_work() {
        let c = RegionCosts {
            dispatch_us: 50.0,
            upload_gib_per_s: 8.0,
            download_gib_per_s: 4.0,
            device_ns_per_work: 0.01,
            device_step_ns: 40.96,
            cpu_ns_per_work: 1.0,
        };
        // `numbers` moved each way.
        let stats = |ops: usize, work: u64, lanes: usize, numbers: usize| RegionStats {
            ops,
            work,
            lanes,
            upload: numbers,
            download: numbers,
            ..RegionStats::default()
        };
        // One lane, a few ops: the dispatch dominates.
        assert!(!c.prefer_device(&stats(20, 40, 1, 256), 1));
        // 65,536 lanes of a long region: the device wins.
        assert!(c.prefer_device(&stats(2000, 20_000, 65_536, 16 << 20), 2));
        // ... unless it must move every number it computes each way (the whole arena).
        assert!(!c.prefer_device(&stats(2000, 20_000, 65_536, 20_000 << 16), 2));
        // 16 lanes of narrow work cost as much as a full device (4096 lanes): the CPU wins;
        // the same work wide over 1024-element results fills the device.
        let mut wide = stats(200, 200 * 1024 * 32, 16, 1 << 18);
        assert!(!c.prefer_device(&wide, 200));
        (wide.wide_work, wide.wide_elements, wide.wide_ops) = (wide.work, 200 * 1024, 200);
        assert!(c.prefer_device(&wide, 200));
        assert!(c.can_pay_at(64) && !c.can_pay_at(0));
    }
}
