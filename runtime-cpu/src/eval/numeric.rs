//! Payload arithmetic: elementwise ops with scalar broadcast and comparisons, made through the
//! numeric-op layer (`ops::Numbers`), with the walk's errors for its faults.

use super::{EResult, Machine};
use crate::code::NodeId;
use crate::error::Error;
use crate::ops::{Numbers, OpError};
use crate::regions::Step;
use crate::tape::Rec;
use crate::value::{MaskId, Slot, Value};
use shared_ir::{BinaryOp, CompareOp, Real, Shape, ShapeFault, UnaryOp};

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

    /// The numeric-op layer over this walk's arena, masks, tape and executor, under the
    /// current lanes.
    #[inline(always)]
    pub(crate) fn numbers(&mut self) -> Numbers<'_, R> {
        self.numbers_under(self.mask)
    }

    /// [`Machine::numbers`], its ops taped under `mask`.
    #[inline(always)]
    pub(crate) fn numbers_under(&mut self, mask: MaskId) -> Numbers<'_, R> {
        let st = &mut *self.s;
        Numbers::with_regions(
            &mut st.pay,
            &st.masks,
            &mut st.scratch,
            &mut st.tape,
            &mut st.regions,
            &st.parts,
            self.taping,
            mask,
        )
    }

    /// A tensor or per-lane op made through the op layer ([`Numbers::emit`]); an error
    /// points at `node`.
    #[inline(always)]
    pub(crate) fn emit(
        &mut self,
        shape: Shape,
        lanes: bool,
        active: bool,
        node: NodeId,
        rec: impl FnOnce(Slot) -> Rec,
    ) -> EResult<Slot> {
        let r = self.numbers().emit(shape, lanes, active, rec);
        r.map_err(|e| self.op_error("", e, node))
    }

    /// An op layer's error as the walk's, pointing at `node`.
    #[cold]
    pub(crate) fn op_error(&self, op: &str, e: OpError, node: NodeId) -> super::Stop {
        match e {
            OpError::Memory => self.memory_error(Some(node)),
            OpError::Shape(ShapeFault::Size(message)) => self.fail(Error::Shape {
                op: op.to_string(),
                message,
                span: self.span(node),
            }),
            OpError::Shape(ShapeFault::Kind(expected)) => self.fail(Error::Shape {
                op: op.to_string(),
                message: format!("needs {expected}"),
                span: self.span(node),
            }),
        }
    }

    #[cold]
    pub(crate) fn memory_error(&self, node: Option<NodeId>) -> super::Stop {
        self.fail(Error::MemoryLimit {
            limit_mb: (self.limits.max_memory as u64).div_ceil(1 << 20),
            span: node.map(|n| self.span(n)),
        })
    }

    /// Charges the step budget for an elementwise op whose result is `out`, a step an element
    /// beyond the one its node's visit paid: a tensor op costs what it computes.
    #[inline(always)]
    pub(crate) fn charge_elements(&mut self, out: Slot, node: NodeId) -> EResult<()> {
        let n = self.s.pay.info(out).shape().len() as u64;
        if n > 1 {
            self.charge(n - 1, node)?;
        }
        Ok(())
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
        match self.numbers().unary(op, a) {
            Ok(out) => {
                self.charge_elements(out, node)?;
                Ok(Value::Num(out))
            }
            Err(e) => Err(self.op_error(op.name(), e, node)),
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
        match self.numbers().binary(op, a, b) {
            Ok(out) => {
                self.charge_elements(out, node)?;
                Ok(Value::Num(out))
            }
            Err(e) => Err(self.op_error(op.name(), e, node)),
        }
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
            let expect = op.apply(p, q);
            self.s.regions.trace.push(Step::Bool {
                op,
                a: ia.offset() as u32,
                b: ib.offset() as u32,
                expect,
            });
            return Ok(Value::Bool(expect));
        }
        self.flush_for(&[a, b])?;
        let s = &mut *self.s;
        let (ca, cb) = (s.pay.col(a, 0), s.pay.col(b, 0));
        let lanes = s.pay.lanes();
        let mask = s
            .masks
            .push_from((0..lanes).map(|l| op.apply(ca.at(l), cb.at(l))));
        s.regions.trace.push(Step::Mask { op, a, b, mask });
        Ok(Value::LaneBool(mask))
    }
}
