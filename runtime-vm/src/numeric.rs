//! Payload arithmetic for the executor: each instruction checks its operands' shapes,
//! allocates its result slot in the shared payload arena, runs the runtime's forward of the op
//! (`runtime_cpu::ops::compute`) and leaves the shared tape record.

use crate::error::Result;
use crate::exec::Machine;
use runtime_cpu::payload::SlotInfo;
use runtime_cpu::tape::{LinalgOp, Rec};
use runtime_cpu::{MaskId, Slot};
use shared_ir::{BinaryOp, Real, Shape, UnaryOp};

impl<R: Real> Machine<'_, R> {
    /// Runs `rec`'s kernel now (its result slot is allocated): the runtime's one CPU forward
    /// of every op ([`runtime_cpu::ops::compute`]).
    #[inline(always)]
    fn compute(&mut self, rec: &Rec) {
        let s = &mut *self.s;
        runtime_cpu::ops::compute(&mut s.pay, &s.masks, &mut s.scratch, rec, &[]);
    }

    /// A new slot and its description, charged against the memory limit.
    #[inline]
    pub fn alloc(&mut self, shape: Shape, lanes: bool, active: bool) -> Result<(Slot, SlotInfo)> {
        let slot = self.s.pay.alloc_info(shape, lanes, active);
        let Some((s, info)) = slot else {
            return Err(self.memory_error());
        };
        let numbers = info.stored(self.s.pay.lanes());
        self.charge(std::mem::size_of::<SlotInfo>() + numbers * std::mem::size_of::<R>())?;
        Ok((s, info))
    }

    /// `op` of one value, element by element.
    pub fn unary(&mut self, op: UnaryOp, a: Slot) -> Result<Slot> {
        let ia = self.s.pay.info(a);
        let out = if ia.is_uniform_scalar() {
            let x = self.s.pay.data()[ia.offset()];
            self.charge(std::mem::size_of::<SlotInfo>() + std::mem::size_of::<R>())?;
            match self.s.pay.push_scalar(op.apply(x), ia.active()) {
                Some(s) => s,
                None => return Err(self.memory_error()),
            }
        } else {
            let (out, _) = self.alloc(ia.shape(), ia.lanes(), ia.active())?;
            self.compute(&Rec::Unary { op, out, a });
            out
        };
        if ia.active() && self.taping {
            self.record(Rec::Unary { op, out, a })?;
        }
        Ok(out)
    }

    /// `a op b`, element by element; a scalar broadcasts against a vector.
    pub fn binary(&mut self, op: BinaryOp, a: Slot, b: Slot) -> Result<Slot> {
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        let active = ia.active() || ib.active();
        let out = if ia.is_uniform_scalar() && ib.is_uniform_scalar() {
            let d = self.s.pay.data();
            let y = op.apply(d[ia.offset()], d[ib.offset()]);
            self.charge(std::mem::size_of::<SlotInfo>() + std::mem::size_of::<R>())?;
            match self.s.pay.push_scalar(y, active) {
                Some(s) => s,
                None => return Err(self.memory_error()),
            }
        } else {
            let shape = if ia.shape() == ib.shape() || ib.is_scalar() {
                ia.shape()
            } else if ia.is_scalar() {
                ib.shape()
            } else {
                let name = crate::op::Op::Binary(op).name();
                return Err(self.shape_error(
                    name,
                    format!(
                        "cannot combine {} with {} element by element",
                        ia.shape(),
                        ib.shape()
                    ),
                ));
            };
            let (out, _) = self.alloc(shape, ia.lanes() || ib.lanes(), active)?;
            self.compute(&Rec::Binary { op, out, a, b });
            out
        };
        if active && self.taping {
            self.record(Rec::Binary { op, out, a, b })?;
        }
        Ok(out)
    }

    /// The dot product of two vectors of one length.
    pub fn dot(&mut self, a: Slot, b: Slot) -> Result<Slot> {
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        match (ia.shape(), ib.shape()) {
            (Shape::Vector(n), Shape::Vector(m)) if n == m => {}
            (x, y) => {
                return Err(self.shape_error(
                    "dot",
                    format!("needs two vectors of one length, got {x} and {y}"),
                ))
            }
        }
        let active = ia.active() || ib.active();
        let (out, _) = self.alloc(Shape::Scalar, ia.lanes() || ib.lanes(), active)?;
        let rec = Rec::Linalg {
            op: LinalgOp::Dot,
            out,
            a,
            b,
        };
        self.compute(&rec);
        if active && self.taping {
            self.record(rec)?;
        }
        Ok(out)
    }

    /// Lane by lane, `a` where `cond` is set and `b` elsewhere (the merge after a divergent
    /// branch).
    pub fn select(&mut self, cond: MaskId, a: Slot, b: Slot) -> Result<Slot> {
        if a == b {
            return Ok(a);
        }
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        if ia.shape() != ib.shape() {
            return Err(self.shape_error(
                "branch",
                format!(
                    "its blocks leave values of different shapes in one stack place ({} and {}), \
                     which lanes cannot merge",
                    ia.shape(),
                    ib.shape()
                ),
            ));
        }
        let active = ia.active() || ib.active();
        let (out, _) = self.alloc(ia.shape(), true, active)?;
        self.compute(&Rec::Select { out, cond, a, b });
        if active && self.taping {
            self.record(Rec::Select { out, cond, a, b })?;
        }
        Ok(out)
    }
}
