//! The reverse pass: replays the tape backwards with one `match`, accumulating lane-wide
//! adjoints for every slot that depends on a differentiated input.

mod linalg;
mod resolved;

use linalg::LinalgBack;

pub(crate) use resolved::Resolved;

use crate::kernels::elementwise::{self, Side, View};
use crate::kernels::linalg::{col, col_mut};
use crate::kernels::lu::LuScratch;
use crate::kernels::{Gate, Gated, Ungated, Width};
use crate::mask::Masks;
use crate::payload::{Col, Payloads, SlotInfo, NO_ADJOINT};
use crate::tape::{Entry, Rec, Tape};
use crate::value::MaskId;
use shared_ir::{BinaryOp, Real, UnaryOp};

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
        self.clear_at(info.adj(), info.n());
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
        self.operands_at([a.adj(), b.adj(), out.adj()], [a.n(), b.n(), out.n()])
    }

    /// [`Adjoints::operands`] from the adjoints' offsets `at` and elements `n` (per lane) of
    /// `a`, `b` and `out`.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn operands_at(
        &mut self,
        at: [usize; 3],
        n: [usize; 3],
    ) -> Option<(Option<&mut [R]>, Option<&mut [R]>, &mut [R])> {
        let [oa, ob, oo] = at;
        if oo == NO_ADJOINT {
            return None;
        }
        let l = self.lanes;
        let (na, nb) = (n[0] * l, n[1] * l);
        let (lo, hi) = self.data.split_at_mut(oo);
        let g = &mut hi[..n[2] * l];
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
        self.pair_at(input.adj(), input.n(), out.adj(), out.n())
    }

    /// [`Adjoints::pair`] from the adjoints' offsets and elements per lane.
    #[inline(always)]
    fn pair_at(&mut self, oi: usize, ni: usize, oo: usize, no: usize) -> Option<(&mut [R], &[R])> {
        if oi == NO_ADJOINT || oo == NO_ADJOINT {
            return None;
        }
        debug_assert!(oi < oo, "operands precede results");
        let (lo, hi) = self.data.split_at_mut(oo);
        Some((&mut lo[oi..oi + ni * self.lanes], &hi[..no * self.lanes]))
    }

    /// Zeroes the adjoint at offset `o` (elements `n` per lane) when there is one.
    #[inline(always)]
    fn clear_at(&mut self, o: usize, n: usize) {
        if o != NO_ADJOINT {
            zero(&mut self.data[o..o + n * self.lanes]);
        }
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

/// One lane, one number: a unary record's reverse without views or loops. `at` holds the
/// operand's and the result's offsets, then their adjoints'.
#[inline(always)]
fn unary_one<R: Real, G: Gate>(op: UnaryOp, d: &[R], adj: &mut [R], at: [usize; 4], gate: G) {
    let [x, y, dx, dy] = at;
    let (x, y) = (d[x], d[y]);
    if dy != NO_ADJOINT {
        let g = adj[dy];
        adj[dy] = R::ZERO;
        if dx != NO_ADJOINT {
            adj[dx] += gate.pass(0, g * op.derivative(x, y));
        }
    }
}

/// One lane, one number: a binary record's reverse. `at` holds the operands' and the
/// result's offsets, `d_at` their adjoints'.
#[inline(always)]
fn binary_one<R: Real, G: Gate>(
    op: BinaryOp,
    d: &[R],
    adj: &mut [R],
    at: [usize; 3],
    d_at: [usize; 3],
    gate: G,
) {
    let (x, y, z) = (d[at[0]], d[at[1]], d[at[2]]);
    let [da, db, dz] = d_at;
    if dz != NO_ADJOINT {
        let g = adj[dz];
        adj[dz] = R::ZERO;
        let (dx, dy) = op.partials(x, y, z);
        if da != NO_ADJOINT {
            adj[da] += gate.pass(0, g * dx);
        }
        if db != NO_ADJOINT {
            adj[db] += gate.pass(0, g * dy);
        }
    }
}

/// The reverse of a unary record over views of its operand and result, then zeroing the
/// result's adjoint: `at` the two adjoints' offsets, `n` the result's elements per lane.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn unary_lanes<R: Real, G: Gate, W: Width>(
    op: UnaryOp,
    adj: &mut Adjoints<R>,
    at: [usize; 2],
    n: usize,
    va: View<'_, R>,
    vy: View<'_, R>,
    gate: G,
    w: W,
) {
    if let Some((da, g)) = adj.pair_at(at[0], n, at[1], n) {
        elementwise::unary_grad(op, da, g, va, vy, n, w, gate);
    }
    adj.clear_at(at[1], n);
}

/// The reverse of `sin` or `cos` from the derivative `dv` kept beside the result, then
/// zeroing the result's adjoint: `at` the operand's and the result's adjoint offsets, `n`
/// their elements per lane, `l` the lanes.
#[inline(always)]
fn trig<R: Real, G: Gate>(
    adj: &mut Adjoints<R>,
    at: [usize; 2],
    n: usize,
    dv: &[R],
    gate: G,
    l: usize,
) {
    if let Some((da, g)) = adj.pair_at(at[0], n, at[1], n) {
        // Element by element, a run of lanes each (the lane of each number for the gate:
        // lane 0 at one lane).
        lanes!(l, {
            let rows = da.chunks_exact_mut(l).zip(g.chunks_exact(l));
            for ((da, g), dv) in rows.zip(dv.chunks_exact(l)) {
                for lane in 0..l {
                    da[lane] += gate.pass(lane, g[lane] * dv[lane]);
                }
            }
        })
    }
    adj.clear_at(at[1], n);
}

/// The reverse of a binary record one operand at a time, then zeroing the result's adjoint:
/// `at` the operands' and the result's adjoint offsets, `n` their elements per lane, `views`
/// their numbers.
#[inline(always)]
fn binary_sides<R: Real, G: Gate, W: Width>(
    op: BinaryOp,
    adj: &mut Adjoints<R>,
    at: [usize; 3],
    n: [usize; 3],
    views: [View<'_, R>; 3],
    gate: G,
    w: W,
) {
    let [va, vb, vy] = views;
    for (side, k) in [(Side::Left, 0), (Side::Right, 1)] {
        if let Some((dx, g)) = adj.pair_at(at[k], n[k], at[2], n[2]) {
            elementwise::binary_grad(op, side, dx, g, va, vb, vy, n[2], w, gate);
        }
    }
    adj.clear_at(at[2], n[2]);
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
                let at = [ia.offset(), io.offset(), ia.adj(), io.adj()];
                unary_one(op, pay.data(), &mut adj.data, at, gate);
                return;
            }
            let (va, vy) = (view(pay, &ia), view(pay, &io));
            let at = [ia.adj(), io.adj()];
            unary_lanes(op, adj, at, io.n(), va, vy, gate, w);
        }
        Rec::Trig { out, a, d, .. } => {
            let (io, ia, id) = (pay.info(out), pay.info(a), pay.info(d));
            trig(
                adj,
                [ia.adj(), io.adj()],
                io.n(),
                pay.get_info(&id),
                gate,
                l,
            );
        }
        Rec::Binary { op, out, a, b } => {
            let (io, ia, ib) = (pay.info(out), pay.info(a), pay.info(b));
            if W::ONE && io.is_scalar() {
                let at = [ia.offset(), ib.offset(), io.offset()];
                let d_at = [ia.adj(), ib.adj(), io.adj()];
                binary_one(op, pay.data(), &mut adj.data, at, d_at, gate);
                return;
            }
            let n = io.n();
            // No operand broadcast and no operand twice: both operands in one pass that clears
            // the result's adjoint (the ops whose partials are a few instructions, inlined into
            // the pass). On one number a lane, or at one lane, every number in one run.
            let cheap = cheap(op, &ia, &ib, &io);
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
            let at = [ia.adj(), ib.adj(), io.adj()];
            let views = [va, vb, vy];
            binary_sides(op, adj, at, [ia.n(), ib.n(), n], views, gate, w);
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
            linalg::step(&LinalgBack::of(op, out, a, b, pay), pay, adj, s, gate, w);
        }
    }
}

/// True when a binary record's reverse may run both operands in one pass: an op whose
/// partials are a few instructions, no operand broadcast and no operand twice.
#[inline(always)]
fn cheap(op: BinaryOp, ia: &SlotInfo, ib: &SlotInfo, io: &SlotInfo) -> bool {
    matches!(
        op,
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div
    ) && ia.is_scalar() == io.is_scalar()
        && ib.is_scalar() == io.is_scalar()
        && (ia.adj() != ib.adj() || ia.adj() == NO_ADJOINT)
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
