//! Payload arithmetic: elementwise ops with scalar broadcast, comparisons, and the records
//! they leave on the tape.

use super::{EResult, Machine};
use crate::code::NodeId;
use crate::error::Error;
use crate::payload::SlotInfo;
use crate::tape::Rec;
use crate::value::{Slot, Value};
use shared_ir::{BinaryOp, CompareOp, Real, Shape, UnaryOp};

impl<R: Real> Machine<'_, R> {
    /// A new slot, or the memory-limit error pointing at `node`.
    #[inline]
    pub(crate) fn alloc_slot(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
        node: Option<NodeId>,
    ) -> EResult<Slot> {
        match self.s.pay.alloc(shape, lanes, active) {
            Some(s) => Ok(s),
            None => Err(self.memory_error(node)),
        }
    }

    /// A new slot and its description, or the memory-limit error pointing at `node`.
    #[inline]
    pub(crate) fn alloc_info(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
        node: NodeId,
    ) -> EResult<(Slot, SlotInfo)> {
        match self.s.pay.alloc_info(shape, lanes, active) {
            Some(s) => Ok(s),
            None => Err(self.memory_error(Some(node))),
        }
    }

    /// The one way a tensor or per-lane op is made: its result allocated (`shape`, per lane
    /// when `lanes`), its kernel run (now, or in the pending region) and, when it depends on a
    /// differentiated input and a tape is recorded, its record taped. `rec` builds the record
    /// from the result slot.
    #[inline(always)]
    pub(crate) fn emit(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
        node: NodeId,
        rec: impl FnOnce(Slot) -> Rec,
    ) -> EResult<Slot> {
        let (out, io) = self.alloc_info(shape, lanes, active, node)?;
        let rec = rec(out);
        self.exec(rec, io.lanes());
        if active && self.taping {
            self.s.tape.push(rec, self.mask);
        }
        Ok(out)
    }

    /// A uniform scalar result `x` of an op; `rec` (from the result slot) is taped when it
    /// depends on a differentiated input and a tape is recorded.
    #[inline(always)]
    fn emit_scalar(
        &mut self,
        x: R,
        active: bool,
        node: NodeId,
        rec: impl FnOnce(Slot) -> Rec,
    ) -> EResult<Slot> {
        let Some(out) = self.s.pay.push_scalar(x, active) else {
            return Err(self.memory_error(Some(node)));
        };
        if active && self.taping {
            self.s.tape.push(rec(out), self.mask);
        }
        Ok(out)
    }

    #[cold]
    pub(crate) fn memory_error(&self, node: Option<NodeId>) -> super::Stop {
        self.fail(Error::MemoryLimit {
            limit_mb: (self.limits.max_memory as u64).div_ceil(1 << 20),
            span: node.map(|n| self.span(n)),
        })
    }

    /// The slot of a numeric value, or a type error naming `op`.
    #[inline(always)]
    pub(crate) fn num(&self, v: Value, op: &str, node: NodeId) -> EResult<Slot> {
        match v {
            Value::Num(s) => Ok(s),
            other => Err(self.type_error(op, "a number", other, node)),
        }
    }

    #[cold]
    pub(crate) fn type_error(
        &self,
        op: &str,
        expected: &'static str,
        got: Value,
        node: NodeId,
    ) -> super::Stop {
        self.fail(Error::Type {
            op: op.to_string(),
            expected,
            got: self.describe(got),
            span: self.span(node),
        })
    }

    /// An elementwise function of one value.
    pub(crate) fn unary(&mut self, op: UnaryOp, v: Value, node: NodeId) -> EResult<Value> {
        let Value::Num(a) = v else {
            return Err(self.type_error(
                crate::builtin::Builtin::Unary(op).name(),
                "a number",
                v,
                node,
            ));
        };
        let ia = self.s.pay.info(a);
        let rec = |out| Rec::Unary { op, out, a };
        let out = if ia.is_uniform_scalar() {
            let x = self.s.pay.data()[ia.offset()];
            self.emit_scalar(op.apply(x), ia.active(), node, rec)?
        } else {
            self.emit(ia.shape(), ia.lanes(), ia.active(), node, rec)?
        };
        Ok(Value::Num(out))
    }

    /// The shape of `a op b` with scalar broadcast, or a shape error.
    pub(crate) fn broadcast_shape(
        &self,
        op: &str,
        a: Shape,
        b: Shape,
        node: NodeId,
    ) -> EResult<Shape> {
        if a == b || b.is_scalar() {
            Ok(a)
        } else if a.is_scalar() {
            Ok(b)
        } else {
            Err(self.fail(Error::Shape {
                op: op.to_string(),
                message: format!("cannot combine {a} with {b} elementwise"),
                span: self.span(node),
            }))
        }
    }

    /// An elementwise function of two values; a scalar broadcasts against a tensor.
    #[inline]
    pub(crate) fn binary(
        &mut self,
        op: BinaryOp,
        x: Value,
        y: Value,
        node: NodeId,
    ) -> EResult<Value> {
        let (Value::Num(a), Value::Num(b)) = (x, y) else {
            return Err(self.binary_type_error(op, x, y, node));
        };
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        let active = ia.active() || ib.active();
        let rec = |out| Rec::Binary { op, out, a, b };
        let out = if ia.is_uniform_scalar() && ib.is_uniform_scalar() {
            let d = self.s.pay.data();
            let (p, q) = (d[ia.offset()], d[ib.offset()]);
            self.emit_scalar(op.apply(p, q), active, node, rec)?
        } else {
            let shape = self.broadcast_shape(op.name(), ia.shape(), ib.shape(), node)?;
            self.emit(shape, ia.lanes() || ib.lanes(), active, node, rec)?
        };
        Ok(Value::Num(out))
    }

    #[cold]
    fn binary_type_error(&self, op: BinaryOp, x: Value, y: Value, node: NodeId) -> super::Stop {
        let bad = if matches!(x, Value::Num(_)) { y } else { x };
        self.type_error(op.name(), "a number", bad, node)
    }

    /// A comparison of two numbers: a boolean, per lane when either side is per lane.
    pub(crate) fn compare(
        &mut self,
        op: CompareOp,
        x: Value,
        y: Value,
        node: NodeId,
    ) -> EResult<Value> {
        let a = self.num(x, op.name(), node)?;
        let b = self.num(y, op.name(), node)?;
        let (ia, ib) = (self.s.pay.info(a), self.s.pay.info(b));
        if !ia.is_scalar() || !ib.is_scalar() {
            let got = if ia.is_scalar() {
                ib.shape()
            } else {
                ia.shape()
            };
            return Err(self.fail(Error::Type {
                op: op.name().to_string(),
                expected: "numbers",
                got: got.to_string(),
                span: self.span(node),
            }));
        }
        if let (Some(p), Some(q)) = (self.s.pay.scalar(a), self.s.pay.scalar(b)) {
            return Ok(Value::Bool(op.apply(p, q)));
        }
        self.flush_for(&[a, b])?;
        let s = &mut *self.s;
        let (ca, cb) = (s.pay.col(a, 0), s.pay.col(b, 0));
        let lanes = s.pay.lanes();
        let m = s
            .masks
            .push_from((0..lanes).map(|l| op.apply(ca.at(l), cb.at(l))));
        Ok(Value::LaneBool(m))
    }
}
