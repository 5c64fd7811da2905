//! Payload arithmetic for the executor: each instruction's op is made by the runtime's
//! numeric-op layer (`runtime_cpu::Numbers`, through `runtime_cpu::Arena`: the shape rule, the result slot, the
//! forward kernel, the tape record), the same path the evaluator's ops take; this file adds
//! the executor's memory accounting and its errors.

use crate::error::Result;
use crate::exec::Machine;
use runtime_cpu::{LinalgOp, MaskId, Numbers, OpError, Real, Shape, Slot, SlotInfo};
use shared_ir::{BinaryOp, ShapeFault, UnaryOp};

impl<R: Real> Machine<'_, R> {
    /// A new slot and its description, charged against the memory limit.
    #[inline]
    pub fn alloc(&mut self, shape: Shape, lanes: bool, active: bool) -> Result<(Slot, SlotInfo)> {
        let slot = self.s.arena.alloc(shape, lanes, active);
        let Some((s, info)) = slot else {
            return Err(self.memory_error());
        };
        let numbers = info.stored(self.s.arena.lanes());
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
        let (made, bytes) = self.s.arena.make(self.taping, self.mask, f);
        match made {
            Ok(out) => {
                self.charge(bytes)?;
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
        let (x, y) = (self.s.arena.info(a).shape(), self.s.arena.info(b).shape());
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
        let (ia, ib) = (self.s.arena.info(a), self.s.arena.info(b));
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
        self.make("branch", |n| n.select(cond, a, b))
    }
}
