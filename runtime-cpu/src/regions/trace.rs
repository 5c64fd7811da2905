//! A walk's numeric work kept for replay. While the executor traces, every op it runs, every
//! uniform number the op layer computes in place, and every number the walk read to decide
//! its way (a comparison's outcome, a structural integer) is appended to a [`Trace`], in
//! order. Replaying the trace on new input numbers of the same layout redoes the numeric work
//! alone, kernel after kernel into the same slots, and checks each decision: where every
//! decision comes out as it did, the walk would have taken the same way through the program,
//! made the same slots, masks, tape and value, so the replay leaves the numbers (and so the
//! gradients) it would have, bit for bit, without walking. Where one does not, the replay
//! stops and the session walks again.

use crate::mask::Masks;
use crate::ops::{compute, Scratch};
use crate::payload::Payloads;
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
}

/// The steps of one walk, in order.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    steps: Vec<Step>,
    /// The parts of the traced packs.
    parts: Vec<Slot>,
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
        if !self.on {
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

    /// Redoes the traced numeric work over the arena, whose inputs hold new numbers of the
    /// traced layout. False at the first decision that comes out differently (the arena's
    /// numbers are then partly new, partly old, and a walk must start afresh).
    pub(crate) fn replay<R: Real>(
        &self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
    ) -> bool {
        for step in &self.steps {
            match *step {
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
