//! Cutting a region into dispatches: runs of records bounded by an estimate of the loop
//! visits one invocation makes, and the invocations per lane that share each op's elements.

use shared_ir::region::{
    decode_op, shares_elements, OpRecord, Opcode, Region, OP_WORDS, SLOT_WORDS,
};
use shared_ir::LinalgOp;
use std::ops::Range;

/// How a region's records are cut into dispatches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlan {
    /// The records of each dispatch, in execution order.
    pub chunks: Vec<Range<u32>>,
    /// Invocations per lane (a power of two, at most [`MAX_LANE_WIDTH`]).
    pub width: u32,
}

/// The shape words of a region's slot table.
struct Shapes<'r>(&'r Region);
impl Shapes<'_> {
    fn word(&self, s: u32, k: usize) -> u64 {
        u64::from(self.0.slots[s as usize * SLOT_WORDS + k])
    }
    fn len(&self, s: u32) -> u64 {
        self.word(s, 1)
    }
    fn rows(&self, s: u32) -> u64 {
        self.word(s, 4)
    }
    fn cols(&self, s: u32) -> u64 {
        self.word(s, 5)
    }
}

/// Record `i` of `region`, decoded.
fn record(region: &Region, i: usize) -> Option<OpRecord> {
    decode_op(&region.ops[i * OP_WORDS..(i + 1) * OP_WORDS])
}

/// An upper bound on the loop-header visits one invocation makes for record `i` of `region`
/// (forward or reverse; the reverse pass does at most twice the forward's loops plus one
/// factorisation).
pub fn op_visits(region: &Region, i: usize) -> u64 {
    let w = &region.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
    let sh = Shapes(region);
    let (len, rows, cols) = (|s| sh.len(s), |s| sh.rows(s), |s| sh.cols(s));
    let (out, a, b) = (w[2], w[3], w[4]);
    let mut v = 8 + 4 * len(out);
    match w[0] {
        x if x == Opcode::Pack as u32 => v += 4 * u64::from(w[7]) + 4 * len(out),
        x if x == Opcode::Linalg as u32 => {
            let (m, k) = (rows(a), cols(a));
            let op = LinalgOp::ALL
                .get(w[1] as usize)
                .copied()
                .unwrap_or(LinalgOp::Dot);
            // The loops nested deepest: over the result's elements, then a sum (the reverse
            // rules loop the same way, once per operand).
            let c = if op.binary() { cols(b).max(len(b)) } else { 1 };
            let nested = match op {
                LinalgOp::Matmul => (m + 1) * (k + 1) * (cols(b) + 1),
                LinalgOp::Outer => (len(a) + 1) * (len(b) + 1),
                _ if op.factors() || op == LinalgOp::Inv => (m + 1) * (k + 1) * (c + 2),
                _ => (m + 1) * (k + 1),
            };
            v += 4 * nested + 4 * len(a);
            if op.factors() || op == LinalgOp::Inv {
                let kk = m.max(c);
                v += 8 * m * (m + 2) * (2 * m + 2 * kk + 4) + 4 * m * m * (m + 1);
            }
        }
        _ => {}
    }
    v
}

/// The elements of record `i` a lane's invocations can share (1 when one invocation runs it):
/// its result's elements, or for a product in the reverse pass, the larger operand's.
pub fn shared_elements(region: &Region, i: usize, reverse: bool) -> u32 {
    let Some(rec) = record(region, i) else {
        return 1;
    };
    let sh = Shapes(region);
    let len = |s| u32::try_from(sh.len(s)).unwrap_or(u32::MAX);
    // The WGSL's rule.
    if !shares_elements(rec.opcode, rec.sub, reverse) {
        return 1;
    }
    match (reverse, rec.opcode) {
        (true, Opcode::Linalg) => len(rec.a).max(if rec.sub == LinalgOp::Transpose.code() {
            0
        } else {
            len(rec.b)
        }),
        _ => len(rec.out),
    }
    .max(1)
}

/// The loop visits of record `i` that one invocation of a lane makes alone even when the
/// lane's invocations share the record: a broadcast scalar's adjoint summed over the elements
/// (reverse), a pack's walk over its parts.
fn serial_visits(region: &Region, i: usize, reverse: bool) -> u64 {
    let sh = Shapes(region);
    let len = |s| sh.len(s);
    match record(region, i) {
        Some(r) if r.opcode == Opcode::Binary && reverse && (len(r.a) == 1 || len(r.b) == 1) => {
            4 * len(r.out)
        }
        Some(r) if r.opcode == Opcode::Pack => 4 * u64::from(r.count),
        _ => 0,
    }
}

/// The loop visits of record `i` that each of a lane's invocations with an element of it
/// makes whatever their number: a product's inner sums, run whole for each element (an upper
/// bound over the forward and reverse rules: the sums over k of a matvec and over m of its
/// vector's adjoint; over k, n and m of a matmul; over each operand of an outer product).
fn inner_visits(region: &Region, i: usize) -> u64 {
    let Some(r) = record(region, i).filter(|r| r.opcode == Opcode::Linalg) else {
        return 0;
    };
    let sh = Shapes(region);
    let (m, k) = (sh.rows(r.a), sh.cols(r.a));
    match LinalgOp::ALL.get(r.sub as usize) {
        Some(LinalgOp::Matvec) => 4 * (m + k + 2),
        Some(LinalgOp::Matmul) => 4 * (m + k + sh.cols(r.b) + 2),
        Some(LinalgOp::Outer) => 4 * (sh.len(r.a) + sh.len(r.b) + 2),
        _ => 0,
    }
}

/// An upper bound on the loop visits one of a lane's `width` invocations makes for record `i`
/// (with the interpreter's loop over the records).
pub fn dispatch_visits(region: &Region, i: usize, reverse: bool, width: u32) -> u64 {
    let v = op_visits(region, i) + 1;
    if shared_elements(region, i, reverse) <= 1 {
        return v;
    }
    // Each invocation runs its share of the elements, and for each the whole inner sum: with
    // more invocations than elements, that sum is the most it runs.
    let alone = serial_visits(region, i, reverse).min(v);
    (v - alone).div_ceil(u64::from(width.max(1))) + alone + inner_visits(region, i) + 8
}

/// Invocations per lane for `region`: at most enough to share its widest op's elements. On a
/// hardware adapter, no more than it takes to put [`FILL_INVOCATIONS`] to work (more lanes
/// fill the device by themselves). On a software driver, which runs every invocation on the
/// CPU, only as many as keep each one's loop over an op's elements within
/// [`SOFTWARE_OP_VISITS`].
pub fn lane_width(region: &Region, reverse: bool, software: bool) -> u32 {
    let (mut widest, mut longest) = (1u32, 0u64);
    for i in 0..region.len() {
        let shared = shared_elements(region, i, reverse);
        if shared > 1 {
            widest = widest.max(shared);
            longest = longest.max(op_visits(region, i));
        }
    }
    let elements = widest.next_power_of_two().min(MAX_LANE_WIDTH);
    let want = if software {
        longest.div_ceil(SOFTWARE_OP_VISITS).max(1) as u32
    } else {
        FILL_INVOCATIONS.div_ceil(region.lanes.max(1))
    };
    elements.min(want.next_power_of_two().min(MAX_LANE_WIDTH))
}

/// Invocations a region is spread over where it can be (when its lanes are fewer).
pub const FILL_INVOCATIONS: u32 = 65_536;
/// Loop visits an invocation may make for one op on a software driver before the op's
/// elements are shared by more invocations of its lane.
pub const SOFTWARE_OP_VISITS: u64 = 16_384;
/// The most invocations per lane (a lane's invocations are in one workgroup, of at least this
/// many).
pub const MAX_LANE_WIDTH: u32 = shared_ir::region::MAX_LANE_WIDTH as u32;

impl RegionPlan {
    /// Cuts `region` into dispatches of records whose estimated loop visits for one of a
    /// lane's `width` invocations stay within `budget` (a record over the budget alone).
    pub fn new(region: &Region, budget: u64, reverse: bool, width: u32) -> Self {
        let n = region.len();
        let mut chunks = Vec::new();
        let (mut start, mut used) = (0usize, 0u64);
        for i in 0..n {
            let v = dispatch_visits(region, i, reverse, width);
            if used + v > budget && i > start {
                chunks.push(start as u32..i as u32);
                (start, used) = (i, 0);
            }
            used += v;
        }
        if n > start {
            chunks.push(start as u32..n as u32);
        }
        RegionPlan { chunks, width }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared_ir::region::encode_op;

    /// A region of one linalg record `op` on per-lane slots a (rows x cols), b (rows x cols)
    /// and out (its length), every slot with an adjoint.
    fn one(op: LinalgOp, a: (u32, u32), b: (u32, u32), out: u32) -> Region {
        let mut region = Region {
            lanes: 1,
            ..Region::default()
        };
        let mut at = 0;
        for (r, c) in [a, b, (out, 1)] {
            region.slots.extend_from_slice(&[at, r * c, 1, at, r, c]);
            at += r * c;
        }
        let rec = OpRecord {
            opcode: Opcode::Linalg,
            sub: op.code(),
            out: 2,
            a: 0,
            b: 1,
            ..OpRecord::default()
        };
        encode_op(&rec, &mut region.ops);
        region
    }

    #[test]
    fn the_bound_holds_with_more_invocations_than_a_loop_has_elements() {
        // Loop visits counted from the WGSL's rules (each loop header once per turn and once
        // to leave), for the invocation with the most work, plus the loop over records.
        // matvec forward, a 2 x 64 matrix times a 64-vector, 64 invocations: invocation 0
        // has row 0 (1 + 1 visits of the row loop), with 65 of the sum's.
        let matvec = one(LinalgOp::Matvec, (2, 64), (64, 1), 2);
        assert!(dispatch_visits(&matvec, 0, false, 64) >= 68);
        // Backwards: dA over 128 elements (3 visits), dv over 64 (2, its one element with a
        // sum over 2 rows: 3).
        let counted = 3 + 2 + 3 + 1;
        assert!(dispatch_visits(&matvec, 0, true, 64) >= counted);
        // matmul backwards, (256 x 4) (4 x 1): dA over 1,024 elements with a sum over n = 1
        // (17 visits and 16 x 2), dB over 4 elements with a sum over m = 256 (2 and 257).
        let matmul = one(LinalgOp::Matmul, (256, 4), (4, 1), 256);
        let counted = 17 + 32 + 2 + 257 + 1;
        assert!(dispatch_visits(&matmul, 0, true, 64) >= counted);
        // outer backwards, 256 x 2: da over 256 with a sum over 2 (5 + 4 x 3), db over 2 with
        // a sum over 256 (2 + 257).
        let outer = one(LinalgOp::Outer, (256, 1), (2, 1), 512);
        let counted = 5 + 12 + 2 + 257 + 1;
        assert!(dispatch_visits(&outer, 0, true, 64) >= counted);
    }
}
