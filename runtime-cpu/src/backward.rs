//! The reverse pass: replays the tape backwards with one `match`, accumulating lane-wide
//! adjoints for every slot that depends on a differentiated input.

use crate::kernels::elementwise::{self, Side};
use crate::kernels::linalg::{col, col_mut};
use crate::kernels::lu::LuScratch;
use crate::kernels::{broadcast, linalg_grad as lg, Gate, Gated, Ungated};
use crate::mask::Masks;
use crate::payload::Payloads;
use crate::tape::{Entry, LinalgOp, Rec, Tape};
use crate::value::{MaskId, Slot};
use shared_ir::{Real, Shape};

const NONE: usize = usize::MAX;

/// Lane-wide adjoints of the active slots of a run.
#[derive(Debug, Default)]
pub struct Adjoints<R> {
    offsets: Vec<usize>,
    data: Vec<R>,
    lanes: usize,
}

/// Work space of the reverse pass, kept between runs.
#[derive(Debug, Default)]
pub struct Scratch<R> {
    a: Vec<R>,
    b: Vec<R>,
    y: Vec<R>,
    tmp: Vec<R>,
    lu: LuScratch<R>,
}

impl<R: Real> Adjoints<R> {
    /// Gives every active slot a zeroed adjoint of `len x lanes` numbers.
    pub fn prepare(&mut self, pay: &Payloads<R>) {
        self.lanes = pay.lanes();
        self.offsets.clear();
        let mut next = 0usize;
        for info in pay.slots() {
            if info.active {
                self.offsets.push(next);
                next += info.shape.len() * self.lanes;
            } else {
                self.offsets.push(NONE);
            }
        }
        self.data.clear();
        self.data.resize(next, R::ZERO);
    }

    /// The adjoint of a slot (lane-wide, element-major), if it has one.
    pub fn get(&self, s: Slot, shape: Shape) -> Option<&[R]> {
        let o = self.offsets[s.0 as usize];
        (o != NONE).then(|| &self.data[o..o + shape.len() * self.lanes])
    }

    /// The adjoint of a slot, mutably (for seeding).
    pub fn get_mut(&mut self, s: Slot, shape: Shape) -> Option<&mut [R]> {
        let o = self.offsets[s.0 as usize];
        (o != NONE).then(|| &mut self.data[o..o + shape.len() * self.lanes])
    }

    /// The adjoint of input slot `input` mutably, with the adjoint of the later slot `out`.
    #[inline(always)]
    fn pair(
        &mut self,
        input: Slot,
        n_in: usize,
        out: Slot,
        n_out: usize,
    ) -> Option<(&mut [R], &[R])> {
        let oi = self.offsets[input.0 as usize];
        let oo = self.offsets[out.0 as usize];
        if oi == NONE || oo == NONE {
            return None;
        }
        debug_assert!(oi < oo, "operands precede results");
        let (lo, hi) = self.data.split_at_mut(oo);
        Some((
            &mut lo[oi..oi + n_in * self.lanes],
            &hi[..n_out * self.lanes],
        ))
    }
}

/// Runs the reverse pass over `tape`. Seed the result's adjoint before calling.
pub fn backward<R: Real>(
    tape: &Tape,
    pay: &Payloads<R>,
    masks: &Masks,
    adj: &mut Adjoints<R>,
    scratch: &mut Scratch<R>,
) {
    for entry in tape.entries.iter().rev() {
        if entry.mask == MaskId::ALL {
            step(entry, tape, pay, masks, adj, scratch, Ungated);
        } else {
            step(
                entry,
                tape,
                pay,
                masks,
                adj,
                scratch,
                Gated(masks.get(entry.mask)),
            );
        }
    }
}

fn step<R: Real, G: Gate>(
    entry: &Entry,
    tape: &Tape,
    pay: &Payloads<R>,
    masks: &Masks,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
) {
    match entry.rec {
        Rec::Unary { op, out, a } => {
            let n = pay.info(out).shape.len();
            if let Some((da, g)) = adj.pair(a, n, out, n) {
                let lanes = pay.lanes();
                for e in 0..n {
                    elementwise::unary_grad(
                        op,
                        col_mut(da, e, lanes),
                        col(g, e, lanes),
                        pay.col(a, e),
                        pay.col(out, e),
                        gate,
                    );
                }
            }
        }
        Rec::Binary { op, out, a, b } => {
            let n = pay.info(out).shape.len();
            let lanes = pay.lanes();
            for (side, x) in [(Side::Left, a), (Side::Right, b)] {
                let nx = pay.info(x).shape.len();
                if let Some((dx, g)) = adj.pair(x, nx, out, n) {
                    for e in 0..n {
                        let (ea, eb) = (elem(pay, a, e), elem(pay, b, e));
                        let ex = if nx == 1 { 0 } else { e };
                        elementwise::binary_grad(
                            op,
                            side,
                            col_mut(dx, ex, lanes),
                            col(g, e, lanes),
                            pay.col(a, ea),
                            pay.col(b, eb),
                            pay.col(out, e),
                            gate,
                        );
                    }
                }
            }
        }
        Rec::Select { out, cond, a, b } => {
            let n = pay.info(out).shape.len();
            let lanes = pay.lanes();
            let c = masks.get(cond);
            for (x, take) in [(a, true), (b, false)] {
                if let Some((dx, g)) = adj.pair(x, n, out, n) {
                    for e in 0..n {
                        let (d, g) = (col_mut(dx, e, lanes), col(g, e, lanes));
                        for l in 0..lanes {
                            d[l] += gate.pass(l, if c[l] == take { g[l] } else { R::ZERO });
                        }
                    }
                }
            }
        }
        Rec::Pack { out, start, count } => {
            let n = pay.info(out).shape.len();
            let lanes = pay.lanes();
            let mut first = 0usize;
            for &p in &tape.aux[start as usize..(start + count) as usize] {
                let np = pay.info(p).shape.len();
                if let Some((dp, g)) = adj.pair(p, np, out, n) {
                    for e in 0..np {
                        let (d, g) = (col_mut(dp, e, lanes), col(g, first + e, lanes));
                        for l in 0..lanes {
                            d[l] += gate.pass(l, g[l]);
                        }
                    }
                }
                first += np;
            }
        }
        Rec::Extract { out, src, first } => {
            let n = pay.info(out).shape.len();
            let ns = pay.info(src).shape.len();
            let lanes = pay.lanes();
            if let Some((ds, g)) = adj.pair(src, ns, out, n) {
                for e in 0..n {
                    let (d, g) = (col_mut(ds, first as usize + e, lanes), col(g, e, lanes));
                    for l in 0..lanes {
                        d[l] += gate.pass(l, g[l]);
                    }
                }
            }
        }
        Rec::Linalg { op, out, a, b } => linalg_step(op, out, a, b, pay, adj, s, gate),
    }
}

/// The element of operand `x` that meets element `e` of the result (scalars broadcast).
#[inline(always)]
fn elem<R: Real>(pay: &Payloads<R>, x: Slot, e: usize) -> usize {
    if pay.info(x).shape.is_scalar() {
        0
    } else {
        e
    }
}

/// A primal operand at full lane width: borrowed if per lane, broadcast into `buf` if uniform.
fn wide<'a, R: Real>(pay: &'a Payloads<R>, x: Slot, buf: &'a mut Vec<R>) -> &'a [R] {
    let data = pay.get(x);
    if pay.info(x).lanes || pay.lanes() == 1 {
        data
    } else {
        broadcast(buf, data, pay.lanes())
    }
}

fn dims(shape: Shape) -> (usize, usize) {
    match shape {
        Shape::Scalar => (1, 1),
        Shape::Vector(n) => (n as usize, 1),
        Shape::Matrix(r, c) => (r as usize, c as usize),
    }
}

#[allow(clippy::too_many_arguments)]
fn linalg_step<R: Real, G: Gate>(
    op: LinalgOp,
    out: Slot,
    a: Slot,
    b: Slot,
    pay: &Payloads<R>,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
) {
    let l = pay.lanes();
    let sa = pay.info(a).shape;
    let (ma, ka) = dims(sa);
    let na = sa.len();
    let no = pay.info(out).shape.len();
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
    let sb = if two {
        pay.info(b).shape
    } else {
        Shape::Scalar
    };
    let nb = sb.len();
    let Scratch {
        a: ba,
        b: bb,
        y: by,
        tmp,
        lu,
    } = s;
    let av = wide(pay, a, ba);
    let bv = if two { wide(pay, b, bb) } else { &[][..] };
    let yv = wide(pay, out, by);
    if let Some((da, g)) = adj.pair(a, na, out, no) {
        match op {
            LinalgOp::Dot => lg::dot(da, g, bv, na, l, gate),
            LinalgOp::Vsum => lg::vsum(da, g, na, l, gate),
            LinalgOp::Norm => lg::norm(da, g, av, yv, na, l, gate),
            LinalgOp::Normalize => lg::normalize(da, g, av, yv, na, l, false, tmp, gate),
            LinalgOp::NormalizeProtected => lg::normalize(da, g, av, yv, na, l, true, tmp, gate),
            LinalgOp::Cross => lg::cross(da, g, bv, true, l, gate),
            LinalgOp::Matvec => lg::matvec_matrix(da, g, bv, ma, ka, l, gate),
            LinalgOp::Matmul => lg::matmul_left(da, g, bv, ma, ka, dims(sb).1, l, gate),
            LinalgOp::Transpose => lg::transpose(da, g, ma, ka, l, gate),
            LinalgOp::Trace => lg::trace(da, g, ma, ka, l, gate),
            LinalgOp::Outer => lg::outer(da, g, bv, na, nb, true, l, gate),
            LinalgOp::Det => lg::det(da, g, av, yv, ma, l, lu, gate),
            LinalgOp::Logdet => lg::logdet(da, g, av, ma, l, lu, gate),
            LinalgOp::Inv => lg::inv(da, g, yv, ma, l, tmp, gate),
            LinalgOp::Solve => lg::solve(da, g, av, yv, ma, dims(sb).1, true, l, lu, gate),
        }
    }
    if !two {
        return;
    }
    if let Some((db, g)) = adj.pair(b, nb, out, no) {
        match op {
            LinalgOp::Dot => lg::dot(db, g, av, nb, l, gate),
            LinalgOp::Cross => lg::cross(db, g, av, false, l, gate),
            LinalgOp::Matvec => lg::matvec_vector(db, g, av, ma, ka, l, gate),
            LinalgOp::Matmul => lg::matmul_right(db, g, av, ma, ka, dims(sb).1, l, gate),
            LinalgOp::Outer => lg::outer(db, g, av, na, nb, false, l, gate),
            LinalgOp::Solve => lg::solve(db, g, av, yv, ma, dims(sb).1, false, l, lu, gate),
            _ => {}
        }
    }
}
