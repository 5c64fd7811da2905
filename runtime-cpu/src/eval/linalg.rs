//! Vector and matrix primitives: their operands checked against the op table
//! (`shared_ir::linalg`), then the op made through the one numeric-op path (`emit`).

use super::{EResult, Machine};
use crate::builtin::Builtin;
use crate::code::NodeId;
use crate::error::Error;
use crate::ops::OpError;
use crate::tape::LinalgOp;
use crate::value::{Slot, Value};
use shared_ir::{BinaryOp, Operand, Real, Shape, ShapeFault};

impl<R: Real> Machine<'_, R> {
    /// The slot of operand `k` of `op`, or the error of an operand that is not a number or
    /// not of the kind the op takes (`shared_ir::linalg` holds the rule).
    fn operand(&self, v: Value, op: &str, rule: Operand, node: NodeId) -> EResult<Slot> {
        let Value::Num(s) = v else {
            return Err(self.type_error(op, "a number", v, node));
        };
        match rule.check(self.s.pay.info(s).shape()) {
            Ok(()) => Ok(s),
            Err(fault) => Err(self.fault(op, fault, v, node)),
        }
    }

    #[cold]
    fn fault(&self, op: &str, fault: ShapeFault, v: Value, node: NodeId) -> super::Stop {
        match fault {
            ShapeFault::Kind(expected) => self.type_error(op, expected, v, node),
            ShapeFault::Size(message) => self.fail(Error::Shape {
                op: op.to_string(),
                message,
                span: self.span(node),
            }),
        }
    }

    /// A vector or matrix primitive called as a value (`(map det ms)`): its op, or `vlen` or
    /// `scale`.
    pub(crate) fn apply_linalg(
        &mut self,
        b: Builtin,
        a0: Value,
        a1: Value,
        node: NodeId,
    ) -> EResult<Value> {
        match b.linalg(self.code.protected_ops) {
            Some(op) => self.linalg(op, a0, a1, node),
            None if b == Builtin::Vlen => self.vlen(a0, node),
            None if b == Builtin::Scale => self.scale(a0, a1, node),
            None => unreachable!("{b:?} is not a vector or matrix primitive"),
        }
    }

    /// A vector or matrix op: the operands checked against the op's rule in order, the
    /// result's shape from the same rule, then the op.
    pub(crate) fn linalg(
        &mut self,
        op: LinalgOp,
        a0: Value,
        a1: Value,
        node: NodeId,
    ) -> EResult<Value> {
        // Operands that fit: the op layer checks their kinds and sizes by the op's rule.
        let a1 = if op.binary() { a1 } else { a0 };
        if let (Value::Num(a), Value::Num(c)) = (a0, a1) {
            // The step budget pays for the op's work before it runs.
            let (sa, sc) = (self.s.pay.info(a).shape(), self.s.pay.info(c).shape());
            self.charge(work(op, sa, sc).saturating_sub(1), node)?;
            match self.numbers().linalg(op, a, c) {
                Ok(out) => return Ok(Value::Num(out)),
                Err(OpError::Memory) => return Err(self.memory_error(Some(node))),
                Err(OpError::Shape(_)) => {}
            }
        }
        // Else the first fault in order: each operand a number of the kind the op takes,
        // then their sizes.
        let name = op.name();
        let a = self.operand(a0, name, op.operand(0), node)?;
        let c = if op.binary() {
            self.operand(a1, name, op.operand(1), node)?
        } else {
            a
        };
        match self.numbers().linalg(op, a, c) {
            Ok(out) => Ok(Value::Num(out)),
            Err(OpError::Memory) => Err(self.memory_error(Some(node))),
            Err(OpError::Shape(fault)) => Err(self.fault(name, fault, a1, node)),
        }
    }

    /// `vlen`: the length of a vector or the rows of a matrix, a constant.
    fn vlen(&mut self, a0: Value, node: NodeId) -> EResult<Value> {
        let a = self.operand(a0, Builtin::Vlen.name(), Operand::Tensor, node)?;
        let n = match self.s.pay.info(a).shape() {
            Shape::Vector(n) | Shape::Matrix(n, _) => n,
            Shape::Scalar => 1,
        };
        match self.s.pay.push_scalar(R::from_f64(f64::from(n)), false) {
            Some(s) => Ok(Value::Num(s)),
            None => Err(self.memory_error(Some(node))),
        }
    }

    /// `scale s X`: a number times a tensor.
    pub(crate) fn scale(&mut self, a0: Value, a1: Value, node: NodeId) -> EResult<Value> {
        let name = Builtin::Scale.name();
        let Value::Num(s) = a0 else {
            return Err(self.type_error(name, "a number", a0, node));
        };
        if !self.s.pay.info(s).is_scalar() {
            let expected = "a number as its first argument";
            return Err(self.type_error(name, expected, a0, node));
        }
        if !matches!(a1, Value::Num(_)) {
            return Err(self.type_error(name, "a number", a1, node));
        }
        self.binary(BinaryOp::Mul, a0, a1, node)
    }
}

/// The multiply-adds (or elements) of `op` on operands of shapes `a` and `c`, what the step
/// budget charges it: `matmul` of n x k by k x m costs n k m, a factorisation n^3.
fn work(op: LinalgOp, a: Shape, c: Shape) -> u64 {
    let dims = |s: Shape| match s {
        Shape::Scalar => (1u64, 1u64),
        Shape::Vector(n) => (u64::from(n), 1),
        Shape::Matrix(n, m) => (u64::from(n), u64::from(m)),
    };
    let ((n, k), (_, m)) = (dims(a), dims(c));
    match op {
        LinalgOp::Matmul => n.saturating_mul(k).saturating_mul(m),
        LinalgOp::Outer => n.saturating_mul(dims(c).0),
        LinalgOp::Det | LinalgOp::Logdet | LinalgOp::Inv | LinalgOp::Solve => {
            n.saturating_mul(n).saturating_mul(n.max(1))
        }
        _ => (a.len() as u64).max(c.len() as u64),
    }
}
