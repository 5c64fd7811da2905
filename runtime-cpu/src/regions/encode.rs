//! A walk's records as a region: the slot table and op words of `shared_ir::region`, and the
//! sizes the device's cost model weighs.

use crate::ops::dims;
use crate::payload::{Payloads, SlotInfo, NO_ADJOINT};
use crate::tape::{LinalgOp, Rec};
use crate::value::Slot;
use shared_ir::region::{
    encode_op, is_wide, OpRecord, Opcode, Region, RegionStats, MAX_LANE_WIDTH, NO_ADJ, SLOT_WORDS,
};
use shared_ir::Real;

/// Numbers a record computes per lane ([`LinalgOp::work`] for the vector and matrix ops): the
/// cost model's measure, and the longest loop one invocation runs.
fn work<R: Real>(pay: &Payloads<R>, rec: &Rec) -> u64 {
    let len = |s: Slot| pay.info(s).n() as u64;
    match *rec {
        Rec::Linalg { op, out, a, b } => {
            let shape = |s: Slot| pay.info(s).shape();
            op.work(shape(a), shape(b), shape(out))
        }
        Rec::Pack { out, count, .. } => len(out) + u64::from(count),
        Rec::Unary { out, .. }
        | Rec::Trig { out, .. }
        | Rec::Binary { out, .. }
        | Rec::Select { out, .. }
        | Rec::Extract { out, .. } => len(out),
    }
}

/// The loop one GPU invocation runs alone for a record whose elements a lane's invocations
/// share: every element where a broadcast scalar's adjoint is summed, every part of a pack;
/// else 1.
fn serial_loop<R: Real>(pay: &Payloads<R>, rec: &Rec) -> u64 {
    let len = |s: Slot| pay.info(s).n() as u64;
    match *rec {
        Rec::Binary { out, a, b, .. } if len(a) == 1 || len(b) == 1 => len(out),
        Rec::Pack { count, .. } => u64::from(count),
        _ => 1,
    }
}

/// The largest square matrix a record factors (0 when it factors none).
fn factor_size<R: Real>(pay: &Payloads<R>, rec: &Rec) -> usize {
    match *rec {
        Rec::Linalg { op, a, b, .. } if op.factors() => {
            let n = dims(pay.info(a).shape()).0;
            if op == LinalgOp::Solve {
                n.max(dims(pay.info(b).shape()).1)
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
        let (r, c) = dims(i.shape());
        let adj = if i.adj() == NO_ADJOINT {
            NO_ADJ
        } else {
            i.adj() as u32
        };
        region.slots.extend_from_slice(&[
            i.offset() as u32,
            i.elements(),
            u32::from(i.lanes()),
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
        // A region's device computes `sin` and `cos` (and their derivatives) itself.
        Rec::Unary { op, out, a } | Rec::Trig { op, out, a, .. } => {
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
    pay: &Payloads<R>,
    recs: impl Iterator<Item = Rec>,
    reverse: bool,
) -> RegionStats {
    let mut s = RegionStats {
        lanes: pay.lanes(),
        data_len: pay.top(),
        adj_len: pay.adjoint_len(),
        ..RegionStats::default()
    };
    for rec in recs {
        let (opcode, sub, out) = kind(&rec);
        let len = pay.info(out).elements();
        let wide = is_wide(opcode, sub, len, reverse);
        let w = work(pay, &rec);
        // A wide op's work is shared by up to `MAX_LANE_WIDTH` invocations of its lane, but
        // for the loop one of them runs alone.
        let per_invocation = if wide {
            w.div_ceil(MAX_LANE_WIDTH).max(serial_loop(pay, &rec))
        } else {
            w
        };
        s.add(w, wide, u64::from(len), per_invocation);
        s.largest_factor = s.largest_factor.max(factor_size(pay, &rec));
    }
    s
}

/// A record's opcode, sub-op and result.
pub(crate) fn kind(rec: &Rec) -> (Opcode, u32, Slot) {
    match *rec {
        Rec::Unary { op, out, .. } | Rec::Trig { op, out, .. } => (Opcode::Unary, op.code(), out),
        Rec::Binary { op, out, .. } => (Opcode::Binary, op.code(), out),
        Rec::Select { out, .. } => (Opcode::Select, 0, out),
        Rec::Pack { out, .. } => (Opcode::Pack, 0, out),
        Rec::Extract { out, .. } => (Opcode::Extract, 0, out),
        Rec::Linalg { op, out, .. } => (Opcode::Linalg, op.code(), out),
    }
}
