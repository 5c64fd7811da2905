//! The reverse pass: replays the tape backwards with one `match`, accumulating lane-wide
//! adjoints for every slot that depends on a differentiated input.

use crate::kernels::elementwise::{self, Side, View};
use crate::kernels::linalg::{col, col_mut};
use crate::kernels::lu::LuScratch;
use crate::kernels::{broadcast, linalg_grad as lg, Gate, Gated, Ungated, Width};
use crate::mask::Masks;
use crate::payload::Payloads;
use crate::tape::{Entry, LinalgOp, Rec, Tape};
use crate::value::{MaskId, Slot};
use shared_ir::{Real, Shape};

const NONE: usize = usize::MAX;

/// Lane-wide adjoints of the active slots of a run.
///
/// Between reverse passes every number in `data` is zero: the pass zeroes a result's adjoint
/// once the record that made the result has consumed it, and the caller zeroes the inputs'
/// adjoints after reading them ([`Adjoints::take_clean`]). So a pass never zero-fills memory.
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
        if self.data.len() < next {
            self.data.resize(next, R::ZERO);
        }
        debug_assert!(
            self.data.iter().all(|&x| x == R::ZERO),
            "adjoints left dirty"
        );
    }

    /// Zeroes a slot's adjoint.
    #[inline(always)]
    fn clear(&mut self, s: Slot, n: usize) {
        let o = self.offsets[s.0 as usize];
        if o != NONE {
            self.data[o..o + n * self.lanes].fill(R::ZERO);
        }
    }

    /// Copies a slot's adjoint into `out` (as f64) and zeroes it; zeros when it has none.
    pub fn take_clean(&mut self, s: Slot, shape: Shape, out: &mut Vec<f64>) {
        out.clear();
        let n = shape.len() * self.lanes;
        let o = self.offsets[s.0 as usize];
        if o == NONE {
            out.resize(n, 0.0);
            return;
        }
        out.extend(self.data[o..o + n].iter().map(|x| x.to_f64()));
        self.data[o..o + n].fill(R::ZERO);
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
    crate::with_width!(pay.lanes(), w => {
        for entry in tape.entries.iter().rev() {
            if entry.mask == MaskId::ALL {
                step(entry, tape, pay, masks, adj, scratch, Ungated, w);
            } else {
                let gate = Gated(masks.get(entry.mask));
                step(entry, tape, pay, masks, adj, scratch, gate, w);
            }
            let out = entry.rec.out();
            adj.clear(out, pay.info(out).shape.len());
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn step<R: Real, G: Gate, W: Width>(
    entry: &Entry,
    tape: &Tape,
    pay: &Payloads<R>,
    masks: &Masks,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
    w: W,
) {
    let l = w.get();
    if l == 1 && gate.keep(0) {
        // One lane: scalar records need no lane loops.
        match entry.rec {
            Rec::Unary { op, out, a } => {
                if let (Some(x), Some(y)) = (pay.scalar(a), pay.scalar(out)) {
                    if let Some((da, g)) = adj.pair(a, 1, out, 1) {
                        da[0] += g[0] * op.derivative(x, y);
                    }
                    return;
                }
            }
            Rec::Binary { op, out, a, b } => {
                if let (Some(x), Some(y), Some(z)) = (pay.scalar(a), pay.scalar(b), pay.scalar(out))
                {
                    let (dx, dy) = op.partials(x, y, z);
                    if let Some((da, g)) = adj.pair(a, 1, out, 1) {
                        da[0] += g[0] * dx;
                    }
                    if let Some((db, g)) = adj.pair(b, 1, out, 1) {
                        db[0] += g[0] * dy;
                    }
                    return;
                }
            }
            _ => {}
        }
    }
    match entry.rec {
        Rec::Unary { op, out, a } => {
            let n = pay.info(out).shape.len();
            if let Some((da, g)) = adj.pair(a, n, out, n) {
                elementwise::unary_grad(op, da, g, view(pay, a), view(pay, out), n, w, gate);
            }
        }
        Rec::Binary { op, out, a, b } => {
            let n = pay.info(out).shape.len();
            let (va, vb, vy) = (view(pay, a), view(pay, b), view(pay, out));
            for (side, x) in [(Side::Left, a), (Side::Right, b)] {
                let nx = pay.info(x).shape.len();
                if let Some((dx, g)) = adj.pair(x, nx, out, n) {
                    elementwise::binary_grad(op, side, dx, g, va, vb, vy, n, w, gate);
                }
            }
        }
        Rec::Select { out, cond, a, b } => {
            let n = pay.info(out).shape.len();
            let c = masks.get(cond);
            for (x, take) in [(a, true), (b, false)] {
                if let Some((dx, g)) = adj.pair(x, n, out, n) {
                    for e in 0..n {
                        let (d, g) = (col_mut(dx, e, w), col(g, e, w));
                        for lane in 0..l {
                            d[lane] +=
                                gate.pass(lane, if c[lane] == take { g[lane] } else { R::ZERO });
                        }
                    }
                }
            }
        }
        Rec::Pack { out, start, count } => {
            let n = pay.info(out).shape.len();
            let mut first = 0usize;
            for &p in &tape.aux[start as usize..(start + count) as usize] {
                let np = pay.info(p).shape.len();
                if let Some((dp, g)) = adj.pair(p, np, out, n) {
                    for e in 0..np {
                        let (d, g) = (col_mut(dp, e, w), col(g, first + e, w));
                        for lane in 0..l {
                            d[lane] += gate.pass(lane, g[lane]);
                        }
                    }
                }
                first += np;
            }
        }
        Rec::Extract { out, src, first } => {
            let n = pay.info(out).shape.len();
            let ns = pay.info(src).shape.len();
            if let Some((ds, g)) = adj.pair(src, ns, out, n) {
                for e in 0..n {
                    let (d, g) = (col_mut(ds, first as usize + e, w), col(g, e, w));
                    for lane in 0..l {
                        d[lane] += gate.pass(lane, g[lane]);
                    }
                }
            }
        }
        Rec::Linalg { op, out, a, b } => linalg_step(op, out, a, b, pay, adj, s, gate, w),
    }
}

/// A slot as an elementwise kernel sees it.
#[inline(always)]
fn view<R: Real>(pay: &Payloads<R>, x: Slot) -> View<'_, R> {
    let info = pay.info(x);
    View {
        data: pay.get(x),
        lanes: info.lanes,
        scalar: info.shape.is_scalar(),
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
fn linalg_step<R: Real, G: Gate, W: Width>(
    op: LinalgOp,
    out: Slot,
    a: Slot,
    b: Slot,
    pay: &Payloads<R>,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
    w: W,
) {
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
            LinalgOp::Dot => lg::dot(da, g, bv, na, w, gate),
            LinalgOp::Vsum => lg::vsum(da, g, na, w, gate),
            LinalgOp::Norm => lg::norm(da, g, av, yv, na, w, gate),
            LinalgOp::Normalize => lg::normalize(da, g, av, yv, na, w, false, tmp, gate),
            LinalgOp::NormalizeProtected => lg::normalize(da, g, av, yv, na, w, true, tmp, gate),
            LinalgOp::Cross => lg::cross(da, g, bv, true, w, gate),
            LinalgOp::Matvec => lg::matvec_matrix(da, g, bv, ma, ka, w, tmp, gate),
            LinalgOp::Matmul => lg::matmul_left(da, g, bv, ma, ka, dims(sb).1, w, tmp, gate),
            LinalgOp::Transpose => lg::transpose(da, g, ma, ka, w, gate),
            LinalgOp::Trace => lg::trace(da, g, ma, ka, w, gate),
            LinalgOp::Outer => lg::outer(da, g, bv, na, nb, true, w, tmp, gate),
            LinalgOp::Det => lg::det(da, g, av, yv, ma, w, lu, gate),
            LinalgOp::Logdet => lg::logdet(da, g, av, ma, w, lu, gate),
            LinalgOp::Inv => lg::inv(da, g, yv, ma, w, tmp, gate),
            LinalgOp::Solve => lg::solve(da, g, av, yv, ma, dims(sb).1, true, w, lu, gate),
        }
    }
    if !two {
        return;
    }
    if let Some((db, g)) = adj.pair(b, nb, out, no) {
        match op {
            LinalgOp::Dot => lg::dot(db, g, av, nb, w, gate),
            LinalgOp::Cross => lg::cross(db, g, av, false, w, gate),
            LinalgOp::Matvec => lg::matvec_vector(db, g, av, ma, ka, w, tmp, gate),
            LinalgOp::Matmul => lg::matmul_right(db, g, av, ma, ka, dims(sb).1, w, tmp, gate),
            LinalgOp::Outer => lg::outer(db, g, av, na, nb, false, w, tmp, gate),
            LinalgOp::Solve => lg::solve(db, g, av, yv, ma, dims(sb).1, false, w, lu, gate),
            _ => {}
        }
    }
}
