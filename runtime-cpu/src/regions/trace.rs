//! A walk's numeric work kept for replay. While the executor traces, every op it runs, every
//! uniform number the op layer computes in place, and every number the walk read to decide
//! its way (a comparison's outcome, a structural integer) is appended to a [`Trace`], in
//! order. Replaying the trace on new input numbers of the same layout redoes the numeric work
//! alone, kernel after kernel into the same slots, and checks each decision: where every
//! decision comes out as it did, the walk would have taken the same way through the program,
//! made the same slots, masks, tape and value, so the replay leaves the numbers (and so the
//! gradients) it would have, bit for bit, without walking. Where one does not, the replay
//! stops and the session walks again.

use crate::kernels::elementwise::{self, View};
use crate::mask::Masks;
use crate::ops::{compute, linalg, LinalgStep, Scratch};
use crate::payload::{Col, Payloads, SlotInfo};
use crate::tape::Rec;
use crate::value::{MaskId, Slot};
use shared_ir::{BinaryOp, CompareOp, Real, UnaryOp};

/// Steps a trace may hold; a walk doing more is not traced (about 6 MB of steps).
pub(crate) const MAX_STEPS: usize = 1 << 18;

/// One step of a trace.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Step {
    /// An op whose kernel ran (a pack's parts index [`Trace::parts`]).
    Op(Rec),
    /// A uniform number computed in place by the op layer: arena offsets of the result and
    /// the operand.
    Unary { op: UnaryOp, out: u32, a: u32 },
    /// As [`Step::Unary`], of two operands.
    Binary {
        op: BinaryOp,
        out: u32,
        a: u32,
        b: u32,
    },
    /// A comparison of two uniform numbers, which came out `expect`.
    Bool {
        op: CompareOp,
        a: u32,
        b: u32,
        expect: bool,
    },
    /// A comparison of per-lane numbers, which made the lanes of `mask`.
    Mask {
        op: CompareOp,
        a: Slot,
        b: Slot,
        mask: MaskId,
    },
    /// A structural integer read from `s` under `mask` (a size or an index): it was `x`.
    Index { s: Slot, mask: MaskId, x: f64 },
    /// [`Step::Op`] of an elementwise op of one operand, its slots resolved: `n` elements,
    /// arena offsets, and the operands' [`Form`]s.
    Map1 {
        op: UnaryOp,
        form: u8,
        n: u32,
        out: u32,
        a: u32,
    },
    /// [`Step::Op`] of a vector or matrix op, resolved: [`Trace::linalg`]'s entry.
    Linalg(u32),
    /// [`Step::Map1`] of one number a lane, at several lanes: one row of lanes.
    Row1 {
        op: UnaryOp,
        form: u8,
        out: u32,
        a: u32,
    },
    /// [`Step::Map2`] of one number a lane, at several lanes: one row of lanes.
    Row2 {
        op: BinaryOp,
        form: u8,
        out: u32,
        a: u32,
        b: u32,
    },
    /// As [`Step::Map1`], of two operands.
    Map2 {
        op: BinaryOp,
        form: u8,
        n: u32,
        out: u32,
        a: u32,
        b: u32,
    },
}

/// Bits of a resolved elementwise step's `form`.
mod form {
    /// The result is per lane.
    pub const OUT_LANES: u8 = 1;
    /// The first operand is per lane.
    pub const A_LANES: u8 = 2;
    /// The first operand is a scalar (broadcast to every element).
    pub const A_SCALAR: u8 = 4;
    /// The second operand is per lane.
    pub const B_LANES: u8 = 8;
    /// The second operand is a scalar.
    pub const B_SCALAR: u8 = 16;
}

/// An operand of a resolved step as the kernel sees it, from `data` (the numbers before the
/// result), its offset, the step's `n` and lane width `w`, and its lanes and scalar bits.
#[inline(always)]
fn operand<R>(data: &[R], at: u32, n: usize, w: usize, lanes: bool, scalar: bool) -> View<'_, R> {
    let len = if scalar { 1 } else { n } * if lanes { w } else { 1 };
    View {
        data: &data[at as usize..at as usize + len],
        lanes: lanes && w > 1,
        scalar,
    }
}

/// An operand of one element at `w` lanes: its numbers at `at` in `data`, per lane
/// (`lanes`) or one for every lane.
#[inline(always)]
fn lane_col<R: Copy>(data: &[R], at: u32, w: usize, lanes: bool) -> Col<'_, R> {
    let at = at as usize;
    if lanes {
        Col::Lanes(&data[at..at + w])
    } else {
        Col::Uniform(data[at])
    }
}

/// The steps of one walk, in order.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    steps: Vec<Step>,
    /// The parts of the traced packs.
    parts: Vec<Slot>,
    /// The vector and matrix ops of [`Step::Linalg`].
    linalg: Vec<LinalgStep>,
    /// True while a walk is traced.
    on: bool,
    /// Set when the traced walk did something a replay cannot redo (it moved live numbers,
    /// or made too many steps).
    broken: bool,
}

impl Trace {
    /// Starts tracing a walk (`on`), or stops tracing.
    pub(crate) fn begin(&mut self, on: bool) {
        self.steps.clear();
        self.parts.clear();
        self.linalg.clear();
        self.on = on;
        self.broken = false;
    }

    /// True when the walk traced since [`Trace::begin`] can be replayed.
    pub(crate) fn complete(&self) -> bool {
        self.on && !self.broken
    }

    /// Ends tracing; what was traced is kept.
    pub(crate) fn end(&mut self) {
        self.on = false;
    }

    /// True while a walk is traced.
    #[inline(always)]
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// The traced walk did something a replay cannot redo.
    pub(crate) fn abandon(&mut self) {
        if self.on {
            self.broken = true;
            self.steps.clear();
            self.parts.clear();
        }
    }

    /// Appends `step` while tracing.
    #[inline(always)]
    pub(crate) fn push(&mut self, step: Step) {
        if self.on && !self.broken {
            if self.steps.len() == MAX_STEPS {
                self.abandon();
                return;
            }
            self.steps.push(step);
        }
    }

    /// Appends the op `rec` that just ran (`parts`: a pack's parts) while tracing.
    #[inline(always)]
    pub(crate) fn op(&mut self, rec: Rec, parts: &[Slot]) {
        if !self.on || self.broken {
            return;
        }
        let rec = match rec {
            Rec::Pack { out, start, count } => {
                let first = self.parts.len() as u32;
                let range = start as usize..(start + count) as usize;
                self.parts.extend_from_slice(&parts[range]);
                Rec::Pack {
                    out,
                    start: first,
                    count,
                }
            }
            other => other,
        };
        self.push(Step::Op(rec));
    }

    /// Resolves the elementwise ops' slots to arena offsets, so that their replay reads no
    /// slot description.
    pub(crate) fn resolve<R: Real>(&mut self, pay: &Payloads<R>) {
        let lanes = |i: &SlotInfo, w: usize| i.lanes() && w > 1;
        for step in &mut self.steps {
            *step = match *step {
                Step::Op(Rec::Unary { op, out, a }) => {
                    let (io, ia) = (pay.info(out), pay.info(a));
                    let w = if io.lanes() { pay.lanes() } else { 1 };
                    let mut f = if io.lanes() { form::OUT_LANES } else { 0 };
                    f |= if lanes(&ia, w) { form::A_LANES } else { 0 };
                    if w > 1 && ia.n() == 1 {
                        let (out, a) = (io.offset() as u32, ia.offset() as u32);
                        Step::Row1 {
                            op,
                            form: f,
                            out,
                            a,
                        }
                    } else {
                        Step::Map1 {
                            op,
                            form: f,
                            n: ia.n() as u32,
                            out: io.offset() as u32,
                            a: ia.offset() as u32,
                        }
                    }
                }
                Step::Op(Rec::Binary { op, out, a, b }) => {
                    let (io, ia, ib) = (pay.info(out), pay.info(a), pay.info(b));
                    let w = if io.lanes() { pay.lanes() } else { 1 };
                    let mut f = if io.lanes() { form::OUT_LANES } else { 0 };
                    f |= if lanes(&ia, w) { form::A_LANES } else { 0 };
                    f |= if ia.is_scalar() { form::A_SCALAR } else { 0 };
                    f |= if lanes(&ib, w) { form::B_LANES } else { 0 };
                    f |= if ib.is_scalar() { form::B_SCALAR } else { 0 };
                    let (out, a, b) = (io.offset() as u32, ia.offset() as u32, ib.offset() as u32);
                    if w > 1 && io.n() == 1 {
                        Step::Row2 {
                            op,
                            form: f,
                            out,
                            a,
                            b,
                        }
                    } else {
                        let n = io.n() as u32;
                        Step::Map2 {
                            op,
                            form: f,
                            n,
                            out,
                            a,
                            b,
                        }
                    }
                }
                Step::Op(Rec::Linalg { op, out, a, b }) => {
                    self.linalg.push(LinalgStep::of(pay, op, out, a, b));
                    Step::Linalg(self.linalg.len() as u32 - 1)
                }
                other => other,
            };
        }
    }

    /// Redoes the traced numeric work over the arena, whose inputs hold new numbers of the
    /// traced layout. False at the first decision that comes out differently (the arena's
    /// numbers are then partly new, partly old, and a walk must start afresh).
    pub(crate) fn replay<R: Real>(
        &self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
    ) -> bool {
        let l = pay.lanes();
        for step in &self.steps {
            match *step {
                Step::Map1 {
                    op,
                    form: f,
                    n,
                    out,
                    a,
                } => {
                    let (n, w) = (n as usize, if f & form::OUT_LANES != 0 { l } else { 1 });
                    let (before, o) = pay.data_mut().split_at_mut(out as usize);
                    let va = operand(before, a, n, w, f & form::A_LANES != 0, false);
                    crate::with_width!(w, lw => elementwise::unary(op, &mut o[..n * w], va, n, lw));
                }
                Step::Map2 {
                    op,
                    form: f,
                    n,
                    out,
                    a,
                    b,
                } => {
                    let (n, w) = (n as usize, if f & form::OUT_LANES != 0 { l } else { 1 });
                    let (before, o) = pay.data_mut().split_at_mut(out as usize);
                    let va = operand(
                        before,
                        a,
                        n,
                        w,
                        f & form::A_LANES != 0,
                        f & form::A_SCALAR != 0,
                    );
                    let vb = operand(
                        before,
                        b,
                        n,
                        w,
                        f & form::B_LANES != 0,
                        f & form::B_SCALAR != 0,
                    );
                    crate::with_width!(w, lw => elementwise::binary(op, &mut o[..n * w], va, vb, n, lw));
                }
                Step::Row1 {
                    op,
                    form: f,
                    out,
                    a,
                } => {
                    let (before, o) = pay.data_mut().split_at_mut(out as usize);
                    let ca = lane_col(before, a, l, f & form::A_LANES != 0);
                    elementwise::unary_row(op, &mut o[..l], ca);
                }
                Step::Row2 {
                    op,
                    form: f,
                    out,
                    a,
                    b,
                } => {
                    let (before, o) = pay.data_mut().split_at_mut(out as usize);
                    let ca = lane_col(before, a, l, f & form::A_LANES != 0);
                    let cb = lane_col(before, b, l, f & form::B_LANES != 0);
                    elementwise::binary_row(op, &mut o[..l], ca, cb);
                }
                Step::Linalg(k) => linalg(pay, scratch, &self.linalg[k as usize]),
                Step::Op(rec) => compute(pay, masks, scratch, &rec, &self.parts),
                Step::Unary { op, out, a } => {
                    let d = pay.data_mut();
                    d[out as usize] = op.apply(d[a as usize]);
                }
                Step::Binary { op, out, a, b } => {
                    let d = pay.data_mut();
                    d[out as usize] = op.apply(d[a as usize], d[b as usize]);
                }
                Step::Bool { op, a, b, expect } => {
                    let d = pay.data();
                    if op.apply(d[a as usize], d[b as usize]) != expect {
                        return false;
                    }
                }
                Step::Mask { op, a, b, mask } => {
                    let (ca, cb) = (pay.col(a, 0), pay.col(b, 0));
                    let bits = masks.get(mask);
                    if (0..bits.len()).any(|l| op.apply(ca.at(l), cb.at(l)) != bits[l]) {
                        return false;
                    }
                }
                Step::Index { s, mask, x } => {
                    let data = pay.get(s);
                    let same = match pay.scalar(s) {
                        Some(y) => y.to_f64() == x,
                        None => {
                            let active = masks.get(mask);
                            data.iter()
                                .zip(active)
                                .all(|(y, &on)| !on || y.to_f64() == x)
                        }
                    };
                    if !same {
                        return false;
                    }
                }
            }
        }
        true
    }
}
