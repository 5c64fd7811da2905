//! Payload arithmetic for the executor: each instruction's op is made by the runtime's
//! numeric-op layer (`runtime_cpu::ops::Numbers`: the shape rule, the result slot, the
//! forward kernel, the tape record), the same path the evaluator's ops take; this file adds
//! the executor's memory accounting and its errors.

use crate::error::Result;
use crate::exec::Machine;
use runtime_cpu::ops::{Numbers, OpError};
use runtime_cpu::payload::SlotInfo;
use runtime_cpu::tape::{Entry, LinalgOp, Rec};
use runtime_cpu::{MaskId, Real, Shape, Slot};
use shared_ir::{BinaryOp, ShapeFault, UnaryOp};

impl<R: Real> Machine<'_, R> {
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

    /// Makes an op through the op layer (`op` names it in a shape error) and charges what it
    /// added to the arena and the tape against the memory limit.
    #[inline(always)]
    fn make(
        &mut self,
        op: &'static str,
        f: impl FnOnce(&mut Numbers<'_, R>) -> std::result::Result<Slot, OpError>,
    ) -> Result<Slot> {
        let st = &mut *self.s;
        let before = (
            st.pay.slot_infos().len(),
            st.pay.top(),
            st.tape.entries.len(),
        );
        let mut numbers = Numbers::eager(
            &mut st.pay,
            &st.masks,
            &mut st.scratch,
            &mut st.tape,
            self.taping,
            self.mask,
        );
        let made = f(&mut numbers);
        let st = &*self.s;
        let slots = st.pay.slot_infos().len() - before.0;
        let numbers = st.pay.top() - before.1;
        let records = st.tape.entries.len() - before.2;
        match made {
            Ok(out) => {
                self.charge(
                    slots * std::mem::size_of::<SlotInfo>()
                        + numbers * std::mem::size_of::<R>()
                        + records * std::mem::size_of::<Entry>(),
                )?;
                Ok(out)
            }
            Err(OpError::Memory) => Err(self.memory_error()),
            Err(OpError::Shape(ShapeFault::Size(message))) => Err(self.shape_error(op, message)),
            Err(OpError::Shape(ShapeFault::Kind(expected))) => {
                Err(self.shape_error(op, format!("needs {expected}")))
            }
        }
    }

    /// `op` of one value, element by element.
    pub fn unary(&mut self, op: UnaryOp, a: Slot) -> Result<Slot> {
        self.make(crate::op::Op::Unary(op).name(), |n| n.unary(op, a))
    }

    /// `a op b`, element by element; a scalar broadcasts against a vector.
    pub fn binary(&mut self, op: BinaryOp, a: Slot, b: Slot) -> Result<Slot> {
        self.make(crate::op::Op::Binary(op).name(), |n| n.binary(op, a, b))
    }

    /// The dot product of two vectors of one length.
    pub fn dot(&mut self, a: Slot, b: Slot) -> Result<Slot> {
        let (x, y) = (self.s.pay.info(a).shape(), self.s.pay.info(b).shape());
        if !matches!((x, y), (Shape::Vector(n), Shape::Vector(m)) if n == m) {
            let message = format!("needs two vectors of one length, got {x} and {y}");
            return Err(self.shape_error("dot", message));
        }
        self.make("dot", |n| n.linalg(LinalgOp::Dot, a, b))
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
        let rec = |out| Rec::Select { out, cond, a, b };
        self.make("branch", |n| n.emit(ia.shape(), true, active, rec))
    }
}
