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
use shared_ir::{Real, Shape};

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
    let Scratch {
        a: buf_a,
        b: buf_b,
        c: buf_c,
        lu,
    } = scratch;
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
            let (ia, io) = (pay.info(a), pay.info(out));
            let ib = op.binary().then(|| pay.info(b));
            let l = if io.lanes() { lanes } else { 1 };
            let (inputs, o) = pay.split(out);
            let av: &[R] = if ia.lanes() || l == 1 {
                inputs.get(a)
            } else {
                broadcast(buf_a, inputs.get(a), l)
            };
            let bv: &[R] = match ib {
                Some(i) if i.lanes() || l == 1 => inputs.get(b),
                Some(_) => broadcast(buf_b, inputs.get(b), l),
                None => &[],
            };
            let (m, kk) = dims(ia.shape());
            let (bm, bn) = ib.map_or((0, 0), |i| dims(i.shape()));
            let na = ia.n();
            crate::with_width!(l, w => match op {
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
                LinalgOp::Solve => {
                    let cols = if ib.is_some_and(|i| matches!(i.shape(), Shape::Matrix(..))) { bn } else { 1 };
                    k::solve(o, av, bv, m, cols, w, lu)
                }
            });
        }
    }
}
