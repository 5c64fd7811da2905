//! Cutting a region into dispatches: runs of records for the interpreter, bounded by an
//! estimate of the loop visits one invocation makes, and each wide op on its own.

use shared_ir::region::{decode_op, is_wide, Opcode, Region, OP_WORDS, SLOT_WORDS};
use shared_ir::LinalgOp;

/// A run of records for one dispatch: `ops` by the interpreter (one invocation per lane), or
/// one wide op (`wide` invocations per lane; see [`shared_ir::region::is_wide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The records.
    pub ops: std::ops::Range<u32>,
    /// Invocations per lane of a wide op; 0 for the interpreter.
    pub wide: u32,
}

/// How a region's records are cut into dispatches: runs of records for the interpreter whose
/// estimated loop visits stay within the budget, and wide ops on their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlan {
    /// The dispatches, in execution order.
    pub chunks: Vec<Chunk>,
}

fn slot(region: &Region, s: u32) -> &[u32] {
    let b = s as usize * SLOT_WORDS;
    &region.slots[b..b + SLOT_WORDS]
}

/// An upper bound on the loop-header visits one invocation makes for record `i` of `region`
/// (forward or reverse; the reverse pass does at most twice the forward's loops plus one
/// factorisation).
pub fn op_visits(region: &Region, i: usize) -> u64 {
    let w = &region.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
    let len = |s: u32| u64::from(slot(region, s)[1]);
    let rows = |s: u32| u64::from(slot(region, s)[4]);
    let cols = |s: u32| u64::from(slot(region, s)[5]);
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
            let c = if op.binary() { cols(b).max(len(b)) } else { 1 };
            v += 4 * (m + 1) * (k + 1) * (c + 2) + 4 * len(a);
            if op.factors() || op == LinalgOp::Inv {
                let kk = m.max(c);
                v += 8 * m * (m + 2) * (2 * m + 2 * kk + 4) + 4 * m * m * (m + 1);
            }
        }
        _ => {}
    }
    v
}

/// Invocations per lane when record `i` runs wide (0 when it runs in the interpreter): its
/// result's elements, or for a product in the reverse pass, the larger operand's.
pub fn wide_width(region: &Region, i: usize, reverse: bool) -> u32 {
    let w = &region.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
    let Some(rec) = decode_op(w) else { return 0 };
    let len = |s: u32| slot(region, s)[1];
    if !is_wide(rec.opcode, rec.sub, len(rec.out), reverse) {
        return 0;
    }
    match (reverse, rec.opcode) {
        (true, Opcode::Linalg) => len(rec.a).max(if rec.sub == LinalgOp::Transpose.code() {
            0
        } else {
            len(rec.b)
        }),
        _ => len(rec.out),
    }
}

impl RegionPlan {
    /// Cuts `region` into dispatches: each wide op alone, and the records between them in
    /// chunks of at most `budget` estimated visits (a record over the budget alone).
    pub fn new(region: &Region, budget: u64, reverse: bool) -> Self {
        let n = region.len();
        let mut chunks = Vec::new();
        let (mut start, mut used) = (0usize, 0u64);
        let close = |chunks: &mut Vec<Chunk>, start: usize, end: usize| {
            if end > start {
                chunks.push(Chunk {
                    ops: start as u32..end as u32,
                    wide: 0,
                });
            }
        };
        for i in 0..n {
            let wide = wide_width(region, i, reverse);
            if wide > 0 {
                close(&mut chunks, start, i);
                chunks.push(Chunk {
                    ops: i as u32..i as u32 + 1,
                    wide,
                });
                (start, used) = (i + 1, 0);
                continue;
            }
            let v = op_visits(region, i) + 1;
            if used + v > budget && i > start {
                close(&mut chunks, start, i);
                (start, used) = (i, 0);
            }
            used += v;
        }
        close(&mut chunks, start, n);
        RegionPlan { chunks }
    }
}
