//! The eager CPU forward of every numeric op: [`compute`] runs a tape record's kernel over the
//! lanes, reading its operands from the payload arena and writing its result slot. The
//! evaluator runs an op through it at once or, when a region device is attached, collects the
//! op and runs it later (through it, or on the device); the bytecode VM runs every op through
//! it. So each op's forward has one dispatch, shared by both front ends.

use crate::kernels::elementwise::{self, View};
use crate::kernels::lu::LuScratch;
use crate::kernels::{broadcast, linalg as k};
use crate::mask::Masks;
use crate::payload::{Col, Payloads};
use crate::tape::{LinalgOp, Rec};
use crate::value::Slot;
use shared_ir::{Real, Shape, UnaryOp};

/// Scratch buffers of the kernels (broadcast operands, a normalised vector, LU factors), kept
/// between ops so that nothing is allocated per op.
#[derive(Debug, Default)]
pub struct Scratch<R> {
    a: Vec<R>,
    b: Vec<R>,
    c: Vec<R>,
    lu: LuScratch<R>,
}

/// Rows and columns of a shape (a vector is `n x 1`).
pub(crate) fn dims(s: Shape) -> (usize, usize) {
    match s {
        Shape::Scalar => (1, 1),
        Shape::Vector(n) => (n as usize, 1),
        Shape::Matrix(r, c) => (r as usize, c as usize),
    }
}

/// Runs `rec`'s kernel on the CPU; its operands are computed. `parts` are the slots a pack
/// concatenates (`start`/`count` index into it). Inlined, so that where the op is known the
/// match folds away.
#[inline(always)]
pub fn compute<R: Real>(
    pay: &mut Payloads<R>,
    masks: &Masks,
    scratch: &mut Scratch<R>,
    rec: &Rec,
    parts: &[Slot],
) {
    let lanes = pay.lanes();
    match *rec {
        Rec::Unary { op, out, a } => {
            let (ia, io) = (pay.info(a), pay.info(out));
            let w = if io.lanes() { lanes } else { 1 };
            let (before, o) = pay.split_info(&io);
            let va = View {
                data: &before[ia.offset()..ia.offset() + ia.stored(w)],
                lanes: ia.lanes() && w > 1,
                scalar: false,
            };
            crate::with_width!(w, lw => elementwise::unary(op, o, va, ia.n(), lw));
        }
        Rec::Trig { op, out, a, d } => {
            let (ia, io, id) = (pay.info(a), pay.info(out), pay.info(d));
            let n = io.stored(lanes);
            let (lo, dd) = pay.data_mut().split_at_mut(id.offset());
            let (before, o) = lo.split_at_mut(io.offset());
            let (xs, o, dd) = (
                &before[ia.offset()..ia.offset() + n],
                &mut o[..n],
                &mut dd[..n],
            );
            if op == UnaryOp::Sin {
                R::sin_cos_slice(o, dd, xs);
            } else {
                R::sin_cos_slice(dd, o, xs);
                dd.iter_mut().for_each(|v| *v = -*v);
            }
        }
        Rec::Binary { op, out, a, b } => {
            let (ia, ib, io) = (pay.info(a), pay.info(b), pay.info(out));
            let w = if io.lanes() { lanes } else { 1 };
            let (before, o) = pay.split_info(&io);
            let va = View {
                data: &before[ia.offset()..ia.offset() + ia.stored(w)],
                lanes: ia.lanes() && w > 1,
                scalar: ia.is_scalar(),
            };
            let vb = View {
                data: &before[ib.offset()..ib.offset() + ib.stored(w)],
                lanes: ib.lanes() && w > 1,
                scalar: ib.is_scalar(),
            };
            crate::with_width!(w, lw => elementwise::binary(op, o, va, vb, io.n(), lw));
        }
        Rec::Select { out, cond, a, b } => {
            let n = pay.info(out).n();
            let c = masks.get(cond);
            let (inputs, o) = pay.split(out);
            for e in 0..n {
                let (ca, cb) = (inputs.col(a, e), inputs.col(b, e));
                let oc = &mut o[e * lanes..(e + 1) * lanes];
                for (l, slot) in oc.iter_mut().enumerate() {
                    *slot = if c[l] { ca.at(l) } else { cb.at(l) };
                }
            }
        }
        Rec::Pack { out, start, count } => {
            let w = if pay.info(out).lanes() { lanes } else { 1 };
            let (inputs, o) = pay.split(out);
            let mut e_out = 0usize;
            for &p in &parts[start as usize..(start + count) as usize] {
                for e in 0..inputs.info(p).n() {
                    let dst = &mut o[e_out * w..(e_out + 1) * w];
                    match inputs.col(p, e) {
                        Col::Lanes(src) => dst.copy_from_slice(src),
                        Col::Uniform(x) => dst.fill(x),
                    }
                    e_out += 1;
                }
            }
        }
        Rec::Extract { out, src, first } => {
            let io = pay.info(out);
            let w = if io.lanes() { lanes } else { 1 };
            let first = first as usize;
            let (inputs, o) = pay.split(out);
            let s = inputs.get(src);
            o.copy_from_slice(&s[first * w..(first + io.n()) * w]);
        }
        Rec::Linalg { op, out, a, b } => {
            let step = LinalgStep::of(pay, op, out, a, b);
            linalg(pay, scratch, &step);
        }
    }
}

/// A vector or matrix op with its slots resolved: where its numbers are, whether an operand is
/// broadcast to the lanes, and the sizes its kernel takes.
#[derive(Copy, Clone, Debug)]
pub(crate) struct LinalgStep {
    op: LinalgOp,
    /// The result's offset and length in the arena.
    out: u32,
    out_len: u32,
    /// The operands' offsets and lengths (`b`'s length 0 for an op of one operand).
    a: u32,
    a_len: u32,
    b: u32,
    b_len: u32,
    /// Bit 0: `a` is uniform under per-lane results (broadcast); bit 1: `b` is.
    wide: u8,
    /// The result's lane width.
    lanes: u32,
    /// Rows and columns of `a`, rows and columns of `b`, and the columns `solve` solves for.
    m: u32,
    k: u32,
    bm: u32,
    bn: u32,
    cols: u32,
}

impl LinalgStep {
    /// The op `op` of `a` (and `b`) into `out`, as the arena lays them out now.
    pub(crate) fn of<R: Real>(
        pay: &Payloads<R>,
        op: LinalgOp,
        out: Slot,
        a: Slot,
        b: Slot,
    ) -> Self {
        let (ia, io) = (pay.info(a), pay.info(out));
        let ib = op.binary().then(|| pay.info(b));
        let lanes = pay.lanes();
        let l = if io.lanes() { lanes } else { 1 };
        let (m, k) = dims(ia.shape());
        let (bm, bn) = ib.map_or((0, 0), |i| dims(i.shape()));
        let b_matrix = ib.is_some_and(|i| matches!(i.shape(), Shape::Matrix(..)));
        let wide =
            u8::from(!ia.lanes() && l > 1) | u8::from(ib.is_some_and(|i| !i.lanes() && l > 1)) << 1;
        LinalgStep {
            op,
            out: io.offset() as u32,
            out_len: io.stored(lanes) as u32,
            a: ia.offset() as u32,
            a_len: ia.stored(lanes) as u32,
            b: ib.map_or(0, |i| i.offset() as u32),
            b_len: ib.map_or(0, |i| i.stored(lanes) as u32),
            wide,
            lanes: l as u32,
            m: m as u32,
            k: k as u32,
            bm: bm as u32,
            bn: bn as u32,
            cols: if b_matrix { bn as u32 } else { 1 },
        }
    }
}

/// Runs a resolved vector or matrix op's kernel on the CPU.
#[inline(always)]
pub(crate) fn linalg<R: Real>(pay: &mut Payloads<R>, scratch: &mut Scratch<R>, st: &LinalgStep) {
    let Scratch {
        a: buf_a,
        b: buf_b,
        c: buf_c,
        lu,
    } = scratch;
    let l = st.lanes as usize;
    let (before, rest) = pay.data_mut().split_at_mut(st.out as usize);
    let o = &mut rest[..st.out_len as usize];
    let at = |x: u32, n: u32| &before[x as usize..(x + n) as usize];
    let av: &[R] = if st.wide & 1 != 0 {
        broadcast(buf_a, at(st.a, st.a_len), l)
    } else {
        at(st.a, st.a_len)
    };
    let bv: &[R] = if st.wide & 2 != 0 {
        broadcast(buf_b, at(st.b, st.b_len), l)
    } else {
        at(st.b, st.b_len)
    };
    let (m, kk, bm, bn) = (st.m as usize, st.k as usize, st.bm as usize, st.bn as usize);
    let na = m * kk;
    crate::with_width!(l, w => match st.op {
        LinalgOp::Dot => k::dot(o, av, bv, na, w),
        LinalgOp::Vsum => k::vsum(o, av, na, w),
        LinalgOp::Norm => k::norm(o, av, na, w),
        LinalgOp::Normalize => k::normalize(o, av, na, w, buf_c, false),
        LinalgOp::NormalizeProtected => k::normalize(o, av, na, w, buf_c, true),
        LinalgOp::Cross => k::cross(o, av, bv, w),
        LinalgOp::Matvec => k::matvec(o, av, bv, m, kk, w),
        LinalgOp::Matmul => k::matmul(o, av, bv, m, kk, bn, w),
        LinalgOp::Transpose => k::transpose(o, av, m, kk, w),
        LinalgOp::Trace => k::trace(o, av, m, kk, w),
        LinalgOp::Outer => k::outer(o, av, bv, na, bm, w),
        LinalgOp::Det => k::det(o, av, m, w, lu),
        LinalgOp::Logdet => k::logdet(o, av, m, w, lu),
        LinalgOp::Inv => k::inv(o, av, m, w, lu),
        LinalgOp::Solve => k::solve(o, av, bv, m, st.cols as usize, w, lu),
    });
}
