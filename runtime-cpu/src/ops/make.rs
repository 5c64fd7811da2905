//! Making a numeric op: its result's shape from the op's rule, its result slot in the arena,
//! its kernel run (at once, or recorded into a region by the evaluator's executor) and, when
//! an operand depends on a differentiated input and a tape is recorded, its tape record. The
//! evaluator (`eval/numeric.rs`, `eval/linalg.rs`) and the bytecode VM make every numeric op
//! through [`Numbers`], so an op has one path whichever front end runs it.

use super::compute::{compute, Scratch};
use crate::mask::Masks;
use crate::payload::{Payloads, SlotInfo};
use crate::regions::{Regions, Step};
use crate::tape::{Rec, Tape};
use crate::value::{MaskId, Slot};
use shared_ir::{BinaryOp, LinalgOp, Real, Shape, ShapeFault, UnaryOp};

/// Why an op was not made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    /// Its result would cross the memory limit.
    Memory,
    /// Its operands do not fit it.
    Shape(ShapeFault),
}

/// What an op reads and writes: the payload arena, the lane masks, the kernels' scratch and
/// the tape, with the lanes it runs under.
pub struct Numbers<'a, R> {
    pay: &'a mut Payloads<R>,
    masks: &'a Masks,
    scratch: &'a mut Scratch<R>,
    tape: &'a mut Tape,
    /// The evaluator's executor, which may record per-lane ops into a region; without it
    /// every kernel runs at once.
    regions: Option<&'a mut Regions<R>>,
    /// The parts of a pack (indexed by its record).
    parts: &'a [Slot],
    taping: bool,
    mask: MaskId,
}

impl<'a, R: Real> Numbers<'a, R> {
    /// Ops whose kernels run at once, taped under `mask` when `taping` (the bytecode VM).
    #[inline(always)]
    pub(crate) fn eager(
        pay: &'a mut Payloads<R>,
        masks: &'a Masks,
        scratch: &'a mut Scratch<R>,
        tape: &'a mut Tape,
        taping: bool,
        mask: MaskId,
    ) -> Self {
        Numbers {
            pay,
            masks,
            scratch,
            tape,
            regions: None,
            parts: &[],
            taping,
            mask,
        }
    }

    /// Ops whose per-lane kernels go through the executor `regions` (the evaluator).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn with_regions(
        pay: &'a mut Payloads<R>,
        masks: &'a Masks,
        scratch: &'a mut Scratch<R>,
        tape: &'a mut Tape,
        regions: &'a mut Regions<R>,
        parts: &'a [Slot],
        taping: bool,
        mask: MaskId,
    ) -> Self {
        Numbers {
            regions: Some(regions),
            parts,
            ..Self::eager(pay, masks, scratch, tape, taping, mask)
        }
    }

    /// The one way a tensor or per-lane op is made: its result allocated (`shape`, per lane
    /// when `lanes`), its kernel run, and its record (built by `rec` from the result slot)
    /// taped when it is `active` and a tape is recorded.
    #[inline(always)]
    pub(crate) fn emit(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
        rec: impl FnOnce(Slot) -> Rec,
    ) -> Result<Slot, OpError> {
        let Some((out, io)) = self.pay.alloc_info(shape, lanes, active) else {
            return Err(OpError::Memory);
        };
        self.run(rec(out), io.lanes(), active);
        Ok(out)
    }

    /// Runs the record `rec` of a result allocated per lane when `lanes` (through the region
    /// executor when there is one) and tapes it when it is `active` and a tape is recorded.
    #[inline(always)]
    fn run(&mut self, rec: Rec, lanes: bool, active: bool) {
        match &mut self.regions {
            Some(r) => r.exec(self.pay, self.masks, self.scratch, rec, self.parts, lanes),
            None => compute(self.pay, self.masks, self.scratch, &rec, self.parts),
        }
        if active && self.taping {
            self.tape.push(rec, self.mask);
        }
    }

    /// A uniform scalar result `x`, its record taped as [`Numbers::emit`] does.
    #[inline(always)]
    fn scalar(
        &mut self,
        x: R,
        active: bool,
        rec: impl FnOnce(Slot) -> Rec,
    ) -> Result<Slot, OpError> {
        let Some(out) = self.pay.push_scalar(x, active) else {
            return Err(OpError::Memory);
        };
        if active && self.taping {
            self.tape.push(rec(out), self.mask);
        }
        Ok(out)
    }

    /// Appends the step `step` makes of the uniform result `out`'s offset to the executor's
    /// trace, while it traces.
    #[inline(always)]
    fn trace(&mut self, step: impl FnOnce(u32) -> Step, out: Slot) {
        if let Some(r) = self.regions.as_deref_mut() {
            if r.trace.on() {
                r.trace.push(step(self.pay.info(out).offset() as u32));
            }
        }
    }

    /// `op` of `a`, element by element (a uniform scalar computed in place).
    #[inline]
    pub fn unary(&mut self, op: UnaryOp, a: Slot) -> Result<Slot, OpError> {
        let ia = self.pay.info(a);
        let rec = |out| Rec::Unary { op, out, a };
        let trig = matches!(op, UnaryOp::Sin | UnaryOp::Cos)
            && ia.active()
            && self.taping
            && (ia.lanes() || self.pay.lanes() == 1)
            && self.regions.as_deref().is_none_or(|r| r.device().is_none());
        if trig && !ia.is_uniform_scalar() {
            return self.trig(op, a, ia);
        }
        if ia.is_uniform_scalar() {
            let x = self.pay.data()[ia.offset()];
            let out = self.scalar(op.apply(x), ia.active(), rec)?;
            self.trace(
                |o| Step::Unary {
                    op,
                    out: o,
                    a: ia.offset() as u32,
                },
                out,
            );
            Ok(out)
        } else {
            self.emit(ia.shape(), ia.lanes(), ia.active(), rec)
        }
    }

    /// `sin` or `cos` of `a` (described by `ia`), taped with its derivative ([`Rec::Trig`]).
    fn trig(&mut self, op: UnaryOp, a: Slot, ia: SlotInfo) -> Result<Slot, OpError> {
        let (shape, lanes) = (ia.shape(), ia.lanes());
        let Some((out, io)) = self.pay.alloc_info(shape, lanes, true) else {
            return Err(OpError::Memory);
        };
        let Some((d, _)) = self.pay.alloc_info(shape, lanes, false) else {
            return Err(OpError::Memory);
        };
        self.run(Rec::Trig { op, out, a, d }, io.lanes(), true);
        Ok(out)
    }

    /// `a op b`, element by element; a scalar broadcasts against a tensor.
    #[inline]
    pub fn binary(&mut self, op: BinaryOp, a: Slot, b: Slot) -> Result<Slot, OpError> {
        let (ia, ib) = (self.pay.info(a), self.pay.info(b));
        let active = ia.active() || ib.active();
        let rec = |out| Rec::Binary { op, out, a, b };
        if ia.is_uniform_scalar() && ib.is_uniform_scalar() {
            let d = self.pay.data();
            let (p, q) = (d[ia.offset()], d[ib.offset()]);
            let out = self.scalar(op.apply(p, q), active, rec)?;
            self.trace(
                |o| Step::Binary {
                    op,
                    out: o,
                    a: ia.offset() as u32,
                    b: ib.offset() as u32,
                },
                out,
            );
            return Ok(out);
        }
        let (sa, sb) = (ia.shape(), ib.shape());
        let shape = if sa == sb || sb.is_scalar() {
            sa
        } else if sa.is_scalar() {
            sb
        } else {
            let message = format!("cannot combine {sa} with {sb} elementwise");
            return Err(OpError::Shape(ShapeFault::Size(message)));
        };
        self.emit(shape, ia.lanes() || ib.lanes(), active, rec)
    }

    /// Lane by lane, `a` where `cond` is set and `b` elsewhere: the merge of two branches'
    /// values of one shape, per lane.
    #[inline]
    pub fn select(&mut self, cond: MaskId, a: Slot, b: Slot) -> Result<Slot, OpError> {
        let (ia, ib) = (self.pay.info(a), self.pay.info(b));
        if ia.shape() != ib.shape() {
            let message = format!("cannot merge {} with {}", ia.shape(), ib.shape());
            return Err(OpError::Shape(ShapeFault::Size(message)));
        }
        let active = ia.active() || ib.active();
        self.emit(ia.shape(), true, active, |out| Rec::Select {
            out,
            cond,
            a,
            b,
        })
    }

    /// The vector or matrix op `op` of `a` (and `b`, for the ops of two operands; else `b` is
    /// not read): its operands checked and its result shaped by the op's rule
    /// ([`LinalgOp::result`]).
    #[inline]
    pub fn linalg(&mut self, op: LinalgOp, a: Slot, b: Slot) -> Result<Slot, OpError> {
        let b = if op.binary() { b } else { a };
        let (ia, ib) = (self.pay.info(a), self.pay.info(b));
        let shape = op.result(ia.shape(), ib.shape()).map_err(OpError::Shape)?;
        let lanes = ia.lanes() || ib.lanes();
        let active = ia.active() || ib.active();
        self.emit(shape, lanes, active, |out| Rec::Linalg { op, out, a, b })
    }
}
