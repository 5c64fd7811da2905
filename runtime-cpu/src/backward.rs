//! The reverse pass: replays the tape backwards with one `match`, accumulating lane-wide
//! adjoints for every slot that depends on a differentiated input.

use crate::kernels::elementwise::{self, Side, View};
use crate::kernels::linalg::{col, col_mut};
use crate::kernels::lu::LuScratch;
use crate::kernels::{broadcast, linalg_grad as lg, Gate, Gated, Ungated, Width};
use crate::mask::Masks;
use crate::ops::dims;
use crate::payload::{Col, Payloads, SlotInfo, NO_ADJOINT};
use crate::tape::{Entry, LinalgOp, Rec, Tape};
use crate::value::{MaskId, Slot};
use shared_ir::{BinaryOp, Real, Shape};

/// Lane-wide adjoints of the active slots of a run.
///
/// Each active slot's adjoint lives at its [`SlotInfo::adj`], laid out as the slot was made.
/// Between reverse passes every number in `data` is zero: the pass zeroes a result's adjoint
/// once the record that made the result has consumed it, and the caller zeroes the inputs'
/// adjoints after reading them ([`Adjoints::take_clean`]). So a pass never zero-fills memory.
#[derive(Debug, Default)]
pub struct Adjoints<R> {
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

/// Zeroes a short run of numbers without a call into `memset`.
#[inline(always)]
fn zero<R: Real>(xs: &mut [R]) {
    if xs.len() <= 4 {
        for x in xs {
            *x = R::ZERO;
        }
    } else {
        xs.fill(R::ZERO);
    }
}

impl<R: Real> Adjoints<R> {
    /// Makes room for the adjoint of every active slot of `pay` (all zero).
    pub fn prepare(&mut self, pay: &Payloads<R>) {
        self.lanes = pay.lanes();
        let next = pay.adjoint_len();
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
    fn clear(&mut self, info: &SlotInfo) {
        let o = info.adj();
        if o != NO_ADJOINT {
            zero(&mut self.data[o..o + info.n() * self.lanes]);
        }
    }

    /// Copies a slot's adjoint into `out` (as f64) and zeroes it; zeros when it has none.
    pub fn take_clean(&mut self, info: &SlotInfo, out: &mut Vec<f64>) {
        out.clear();
        out.resize(info.n() * self.lanes, 0.0);
        self.take_into(info, out);
    }

    /// Copies a slot's adjoint into `out` (as f64; `out` as long as the adjoint) and zeroes
    /// it; zeros when it has none.
    pub fn take_into(&mut self, info: &SlotInfo, out: &mut [f64]) {
        let o = info.adj();
        if o == NO_ADJOINT {
            out.fill(0.0);
            return;
        }
        if let [d] = out {
            // One number (one lane of a scalar): no loop.
            *d = self.data[o].to_f64();
            self.data[o] = R::ZERO;
            return;
        }
        let src = &mut self.data[o..o + out.len()];
        for (d, a) in out.iter_mut().zip(src.iter_mut()) {
            *d = a.to_f64();
            *a = R::ZERO;
        }
    }

    /// The adjoint of a slot, mutably (for seeding).
    pub fn get_mut(&mut self, info: &SlotInfo) -> Option<&mut [R]> {
        let o = info.adj();
        (o != NO_ADJOINT).then(|| &mut self.data[o..o + info.n() * self.lanes])
    }

    /// The adjoints of the operands `a` and `b` (distinct slots; `None` for one without) and
    /// of their later result `out`, mutably; `None` when the result has none.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn operands(
        &mut self,
        a: &SlotInfo,
        b: &SlotInfo,
        out: &SlotInfo,
    ) -> Option<(Option<&mut [R]>, Option<&mut [R]>, &mut [R])> {
        let (oa, ob, oo) = (a.adj(), b.adj(), out.adj());
        if oo == NO_ADJOINT {
            return None;
        }
        let l = self.lanes;
        let (na, nb) = (a.n() * l, b.n() * l);
        let (lo, hi) = self.data.split_at_mut(oo);
        let g = &mut hi[..out.n() * l];
        let (da, db) = match (oa != NO_ADJOINT, ob != NO_ADJOINT) {
            (true, true) if oa < ob => {
                let (x, y) = lo.split_at_mut(ob);
                (Some(&mut x[oa..oa + na]), Some(&mut y[..nb]))
            }
            (true, true) => {
                let (x, y) = lo.split_at_mut(oa);
                (Some(&mut y[..na]), Some(&mut x[ob..ob + nb]))
            }
            (true, false) => (Some(&mut lo[oa..oa + na]), None),
            (false, true) => (None, Some(&mut lo[ob..ob + nb])),
            (false, false) => (None, None),
        };
        Some((da, db, g))
    }

    /// The adjoint of input slot `input` mutably, with the adjoint of the later slot `out`.
    #[inline(always)]
    fn pair(&mut self, input: &SlotInfo, out: &SlotInfo) -> Option<(&mut [R], &[R])> {
        let (oi, oo) = (input.adj(), out.adj());
        if oi == NO_ADJOINT || oo == NO_ADJOINT {
            return None;
        }
        debug_assert!(oi < oo, "operands precede results");
        let (lo, hi) = self.data.split_at_mut(oo);
        Some((
            &mut lo[oi..oi + input.n() * self.lanes],
            &hi[..out.n() * self.lanes],
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
        }
    })
}

/// Replays one record, then zeroes the adjoint of its result.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
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
    match entry.rec {
        Rec::Unary { op, out, a } => {
            let (io, ia) = (pay.info(out), pay.info(a));
            if W::ONE && io.is_scalar() {
                // One lane, one number: no views, no loops.
                let d = pay.data();
                let (x, y) = (d[ia.offset()], d[io.offset()]);
                if io.adj() != NO_ADJOINT {
                    let g = adj.data[io.adj()];
                    adj.data[io.adj()] = R::ZERO;
                    if ia.adj() != NO_ADJOINT {
                        adj.data[ia.adj()] += gate.pass(0, g * op.derivative(x, y));
                    }
                }
                return;
            }
            let n = io.n();
            if let Some((da, g)) = adj.pair(&ia, &io) {
                let (va, vy) = (view(pay, &ia), view(pay, &io));
                elementwise::unary_grad(op, da, g, va, vy, n, w, gate);
            }
            adj.clear(&io);
        }
        Rec::Trig { out, a, d, .. } => {
            let (io, ia, id) = (pay.info(out), pay.info(a), pay.info(d));
            if let Some((da, g)) = adj.pair(&ia, &io) {
                let dv = pay.get_info(&id);
                // Element by element, a run of lanes each (the lane of each number for the
                // gate: lane 0 at one lane).
                lanes!(l, {
                    let rows = da.chunks_exact_mut(l).zip(g.chunks_exact(l));
                    for ((da, g), dv) in rows.zip(dv.chunks_exact(l)) {
                        for lane in 0..l {
                            da[lane] += gate.pass(lane, g[lane] * dv[lane]);
                        }
                    }
                })
            }
            adj.clear(&io);
        }
        Rec::Binary { op, out, a, b } => {
            let (io, ia, ib) = (pay.info(out), pay.info(a), pay.info(b));
            if W::ONE && io.is_scalar() {
                let d = pay.data();
                let (x, y, z) = (d[ia.offset()], d[ib.offset()], d[io.offset()]);
                if io.adj() != NO_ADJOINT {
                    let g = adj.data[io.adj()];
                    adj.data[io.adj()] = R::ZERO;
                    let (dx, dy) = op.partials(x, y, z);
                    if ia.adj() != NO_ADJOINT {
                        adj.data[ia.adj()] += gate.pass(0, g * dx);
                    }
                    if ib.adj() != NO_ADJOINT {
                        adj.data[ib.adj()] += gate.pass(0, g * dy);
                    }
                }
                return;
            }
            let n = io.n();
            // No operand broadcast and no operand twice: both operands in one pass that clears
            // the result's adjoint (the ops whose partials are a few instructions, inlined into
            // the pass). On one number a lane, or at one lane, every number in one run.
            let cheap = matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div
            ) && ia.is_scalar() == io.is_scalar()
                && ib.is_scalar() == io.is_scalar()
                && (ia.adj() != ib.adj() || ia.adj() == NO_ADJOINT);
            if cheap && (n == 1 || W::ONE) {
                let ca = flat_col(pay, &ia, W::ONE);
                let (cb, cy) = (flat_col(pay, &ib, W::ONE), flat_col(pay, &io, W::ONE));
                if let Some((da, db, g)) = adj.operands(&ia, &ib, &io) {
                    elementwise::binary_grad_both(op, da, db, g, ca, cb, cy, W::ONE, gate);
                }
                return;
            }
            let (va, vb, vy) = (view(pay, &ia), view(pay, &ib), view(pay, &io));
            if cheap {
                // Several elements at several lanes: a run of lanes at a time.
                if let Some((da, db, g)) = adj.operands(&ia, &ib, &io) {
                    elementwise::binary_grad_by_element(op, da, db, g, va, vb, vy, l, gate);
                }
                return;
            }
            for (side, x) in [(Side::Left, &ia), (Side::Right, &ib)] {
                if let Some((dx, g)) = adj.pair(x, &io) {
                    elementwise::binary_grad(op, side, dx, g, va, vb, vy, n, w, gate);
                }
            }
            adj.clear(&io);
        }
        Rec::Select { out, cond, a, b } => {
            let io = pay.info(out);
            let n = io.n();
            let c = masks.get(cond);
            for (x, take) in [(a, true), (b, false)] {
                lanes!(l, {
                    if let Some((dx, g)) = adj.pair(&pay.info(x), &io) {
                        for e in 0..n {
                            let (d, g) = (col_mut(dx, e, w), col(g, e, w));
                            for lane in 0..l {
                                d[lane] += gate
                                    .pass(lane, if c[lane] == take { g[lane] } else { R::ZERO });
                            }
                        }
                    }
                })
            }
            adj.clear(&io);
        }
        Rec::Pack { out, start, count } => {
            let io = pay.info(out);
            let mut first = 0usize;
            for &p in &tape.aux[start as usize..(start + count) as usize] {
                let ip = pay.info(p);
                let np = ip.n();
                lanes!(l, {
                    if let Some((dp, g)) = adj.pair(&ip, &io) {
                        for e in 0..np {
                            let (d, g) = (col_mut(dp, e, w), col(g, first + e, w));
                            for lane in 0..l {
                                d[lane] += gate.pass(lane, g[lane]);
                            }
                        }
                    }
                });
                first += np;
            }
            adj.clear(&io);
        }
        Rec::Extract { out, src, first } => {
            let io = pay.info(out);
            let n = io.n();
            lanes!(l, {
                if let Some((ds, g)) = adj.pair(&pay.info(src), &io) {
                    for e in 0..n {
                        let (d, g) = (col_mut(ds, first as usize + e, w), col(g, e, w));
                        for lane in 0..l {
                            d[lane] += gate.pass(lane, g[lane]);
                        }
                    }
                }
            });
            adj.clear(&io);
        }
        Rec::Linalg { op, out, a, b } => {
            let io = pay.info(out);
            linalg_step(op, &io, a, b, pay, adj, s, gate, w);
            adj.clear(&io);
        }
    }
}

/// A slot's numbers in a line, when each is one lane's (or every lane is one): per lane, or
/// one number for every lane.
#[inline(always)]
fn flat_col<'p, R: Real>(pay: &'p Payloads<R>, info: &SlotInfo, one_lane: bool) -> Col<'p, R> {
    let d = pay.get_info(info);
    if one_lane || info.lanes() {
        Col::Lanes(d)
    } else {
        Col::Uniform(d[0])
    }
}

/// A slot as an elementwise kernel sees it.
#[inline(always)]
fn view<'p, R: Real>(pay: &'p Payloads<R>, info: &SlotInfo) -> View<'p, R> {
    View {
        data: pay.get_info(info),
        lanes: info.lanes(),
        scalar: info.is_scalar(),
    }
}

/// A primal operand at full lane width: borrowed if per lane, broadcast into `buf` if uniform.
#[inline(always)]
fn wide<'a, R: Real>(pay: &'a Payloads<R>, info: &SlotInfo, buf: &'a mut Vec<R>) -> &'a [R] {
    let data = pay.get_info(info);
    if info.lanes() || pay.lanes() == 1 {
        data
    } else {
        broadcast(buf, data, pay.lanes())
    }
}

#[allow(clippy::too_many_arguments)]
fn linalg_step<R: Real, G: Gate, W: Width>(
    op: LinalgOp,
    io: &SlotInfo,
    a: Slot,
    b: Slot,
    pay: &Payloads<R>,
    adj: &mut Adjoints<R>,
    s: &mut Scratch<R>,
    gate: G,
    w: W,
) {
    let ia = pay.info(a);
    let sa = ia.shape();
    let (ma, ka) = dims(sa);
    let na = sa.len();
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
    let sb = if two { ib.shape() } else { Shape::Scalar };
    let nb = sb.len();
    let Scratch {
        a: ba,
        b: bb,
        y: by,
        tmp,
        lu,
    } = s;
    let av = wide(pay, &ia, ba);
    let bv = if two { wide(pay, &ib, bb) } else { &[][..] };
    let yv = wide(pay, io, by);
    if let Some((da, g)) = adj.pair(&ia, io) {
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
    if let Some((db, g)) = adj.pair(&ib, io) {
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
