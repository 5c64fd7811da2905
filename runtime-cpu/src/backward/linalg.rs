//! The reverse of a vector or matrix record, from its slots resolved once: the walk's reverse
//! pass resolves each record as it meets it, a replay's resolves them when the trace is kept.

use super::{Adjoints, Scratch};
use crate::kernels::{broadcast, linalg_grad as lg, Gate, Width};
use crate::ops::dims;
use crate::payload::{Payloads, SlotInfo, NO_ADJOINT};
use crate::tape::LinalgOp;
use crate::value::Slot;
use shared_ir::Real;

/// A primal operand of a record: its numbers in the arena, and whether they are read as they
/// are (per lane, or at one lane) or broadcast to every lane first.
#[derive(Copy, Clone, Debug)]
struct Operand {
    at: u32,
    len: u32,
    wide: bool,
}

impl Operand {
    fn of<R: Real>(pay: &Payloads<R>, info: &SlotInfo) -> Operand {
        Operand {
            at: info.offset() as u32,
            len: info.stored(pay.lanes()) as u32,
            wide: info.lanes() || pay.lanes() == 1,
        }
    }

    /// The operand at full lane width: borrowed if per lane, broadcast into `buf` if uniform.
    #[inline(always)]
    fn read<'a, R: Real>(&self, pay: &'a Payloads<R>, buf: &'a mut Vec<R>) -> &'a [R] {
        let data = &pay.data()[self.at as usize..(self.at + self.len) as usize];
        if self.wide {
            data
        } else {
            broadcast(buf, data, pay.lanes())
        }
    }
}

/// A vector or matrix record with its slots resolved: the operands' and the result's numbers
/// and adjoints (offsets, [`NO_ADJOINT`] for none) and the operands' sizes.
#[derive(Copy, Clone, Debug)]
pub(crate) struct LinalgBack {
    op: LinalgOp,
    /// True for an op of two operands.
    two: bool,
    a: Operand,
    b: Operand,
    y: Operand,
    /// Adjoint offsets of `a`, `b` and the result.
    adj: [usize; 3],
    /// Elements per lane of `a`, `b` and the result.
    n: [u32; 3],
    /// Rows and columns of `a`, columns of `b`.
    ma: u32,
    ka: u32,
    kb: u32,
}

impl LinalgBack {
    /// Resolves the record `op` of result `out` and operands `a` and `b` (`b` unused by ops of
    /// one operand).
    #[inline(always)]
    pub(crate) fn of<R: Real>(
        op: LinalgOp,
        out: Slot,
        a: Slot,
        b: Slot,
        pay: &Payloads<R>,
    ) -> LinalgBack {
        let (io, ia) = (pay.info(out), pay.info(a));
        let two = !matches!(
            op,
            LinalgOp::Vsum
                | LinalgOp::Norm
                | LinalgOp::Normalize
                | LinalgOp::NormalizeProtected
                | LinalgOp::Transpose
                | LinalgOp::Trace
                | LinalgOp::Det
                | LinalgOp::Logdet
                | LinalgOp::Inv
        );
        let ib = pay.info(if two { b } else { a });
        let (ma, ka) = dims(ia.shape());
        let (nb, kb) = if two {
            (ib.n(), dims(ib.shape()).1)
        } else {
            (1, 1)
        };
        LinalgBack {
            op,
            two,
            a: Operand::of(pay, &ia),
            b: Operand::of(pay, &ib),
            y: Operand::of(pay, &io),
            adj: [ia.adj(), if two { ib.adj() } else { NO_ADJOINT }, io.adj()],
            n: [ia.n() as u32, nb as u32, io.n() as u32],
            ma: ma as u32,
            ka: ka as u32,
            kb: kb as u32,
        }
    }
}

/// Replays the resolved record `k`, then zeroes the adjoint of its result.
#[inline(always)]
pub(crate) fn step<R: Real, G: Gate, W: Width>(
    k: &LinalgBack,
    pay: &Payloads<R>,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
    w: W,
) {
    run(k, pay, adj, s, gate, w);
    adj.clear_at(k.adj[2], k.n[2] as usize);
}

#[inline(never)]
fn run<R: Real, G: Gate, W: Width>(
    k: &LinalgBack,
    pay: &Payloads<R>,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
    w: W,
) {
    let (op, two) = (k.op, k.two);
    let (ma, ka, kb) = (k.ma as usize, k.ka as usize, k.kb as usize);
    let [na, nb, ny] = k.n.map(|n| n as usize);
    let [oa, ob, oy] = k.adj;
    let Scratch {
        a: ba,
        b: bb,
        y: by,
        tmp,
        lu,
    } = s;
    let av = k.a.read(pay, ba);
    let bv = if two { k.b.read(pay, bb) } else { &[][..] };
    let yv = k.y.read(pay, by);
    if let Some((da, g)) = adj.pair_at(oa, na, oy, ny) {
        match op {
            LinalgOp::Dot => lg::dot(da, g, bv, na, w, gate),
            LinalgOp::Vsum => lg::vsum(da, g, na, w, gate),
            LinalgOp::Norm => lg::norm(da, g, av, yv, na, w, gate),
            LinalgOp::Normalize => lg::normalize(da, g, av, yv, na, w, false, tmp, gate),
            LinalgOp::NormalizeProtected => lg::normalize(da, g, av, yv, na, w, true, tmp, gate),
            LinalgOp::Cross => lg::cross(da, g, bv, true, w, gate),
            LinalgOp::Matvec => lg::matvec_matrix(da, g, bv, ma, ka, w, tmp, gate),
            LinalgOp::Matmul => lg::matmul_left(da, g, bv, ma, ka, kb, w, tmp, gate),
            LinalgOp::Transpose => lg::transpose(da, g, ma, ka, w, gate),
            LinalgOp::Trace => lg::trace(da, g, ma, ka, w, gate),
            LinalgOp::Outer => lg::outer(da, g, bv, na, nb, true, w, tmp, gate),
            LinalgOp::Det => lg::det(da, g, av, yv, ma, w, lu, gate),
            LinalgOp::Logdet => lg::logdet(da, g, av, ma, w, lu, gate),
            LinalgOp::Inv => lg::inv(da, g, yv, ma, w, tmp, gate),
            LinalgOp::Solve => lg::solve(da, g, av, yv, ma, kb, true, w, lu, gate),
        }
    }
    if !two {
        return;
    }
    if let Some((db, g)) = adj.pair_at(ob, nb, oy, ny) {
        match op {
            LinalgOp::Dot => lg::dot(db, g, av, nb, w, gate),
            LinalgOp::Cross => lg::cross(db, g, av, false, w, gate),
            LinalgOp::Matvec => lg::matvec_vector(db, g, av, ma, ka, w, tmp, gate),
            LinalgOp::Matmul => lg::matmul_right(db, g, av, ma, ka, kb, w, tmp, gate),
            LinalgOp::Outer => lg::outer(db, g, av, na, nb, false, w, tmp, gate),
            LinalgOp::Solve => lg::solve(db, g, av, yv, ma, kb, false, w, lu, gate),
            _ => {}
        }
    }
}
