//! Vector and matrix primitives: shape checks, the forward kernels, and their tape records.

use super::{EResult, Machine};
use crate::builtin::Builtin;
use crate::code::NodeId;
use crate::error::Error;
use crate::tape::{LinalgOp, Rec};
use crate::value::{Slot, Value};
use shared_ir::{BinaryOp, Real, Shape};

/// A vector's length or a matrix's dimensions.
#[derive(Copy, Clone)]
enum Dims {
    Vec(usize),
    Mat(usize, usize),
}

impl<R: Real> Machine<'_, R> {
    fn dims(
        &self,
        v: Value,
        op: Builtin,
        expected: &'static str,
        node: NodeId,
    ) -> EResult<(Slot, Dims)> {
        let Value::Num(s) = v else {
            return Err(self.type_error(op.name(), "a number", v, node));
        };
        match self.s.pay.info(s).shape {
            Shape::Vector(n) => Ok((s, Dims::Vec(n as usize))),
            Shape::Matrix(r, c) => Ok((s, Dims::Mat(r as usize, c as usize))),
            Shape::Scalar => Err(self.type_error(op.name(), expected, v, node)),
        }
    }

    fn vector(&self, v: Value, op: Builtin, node: NodeId) -> EResult<(Slot, usize)> {
        match self.dims(v, op, "a vector", node)? {
            (s, Dims::Vec(n)) => Ok((s, n)),
            _ => Err(self.type_error(op.name(), "a vector", v, node)),
        }
    }

    fn matrix(&self, v: Value, op: Builtin, node: NodeId) -> EResult<(Slot, usize, usize)> {
        match self.dims(v, op, "a matrix", node)? {
            (s, Dims::Mat(r, c)) => Ok((s, r, c)),
            _ => Err(self.type_error(op.name(), "a matrix", v, node)),
        }
    }

    fn square(&self, v: Value, op: Builtin, node: NodeId) -> EResult<(Slot, usize)> {
        let (s, r, c) = self.matrix(v, op, node)?;
        if r != c {
            return Err(self.shape_error(
                op.name(),
                format!("needs a square matrix, got a {r}x{c} matrix"),
                node,
            ));
        }
        Ok((s, r))
    }

    #[cold]
    fn shape_error(&self, op: &str, message: String, node: NodeId) -> super::Stop {
        self.fail(Error::Shape {
            op: op.to_string(),
            message,
            span: self.span(node),
        })
    }

    /// Vector and matrix primitives.
    pub(crate) fn apply_linalg(
        &mut self,
        b: Builtin,
        a0: Value,
        a1: Value,
        node: NodeId,
    ) -> EResult<Value> {
        // The name only for errors, found when one is raised.
        let name = b;
        match b {
            Builtin::Dot => {
                let (a, n) = self.vector(a0, name, node)?;
                let (c, m) = self.vector(a1, name, node)?;
                if n != m {
                    return Err(self.shape_error(
                        name.name(),
                        format!("vectors of {n} and {m} have different lengths"),
                        node,
                    ));
                }
                self.run_linalg(LinalgOp::Dot, a, Some(c), Shape::Scalar, node)
            }
            Builtin::Vsum => {
                let (a, _) = self.dims(a0, name, "a vector or a matrix", node)?;
                self.run_linalg(LinalgOp::Vsum, a, None, Shape::Scalar, node)
            }
            Builtin::Vlen => {
                let (_, d) = self.dims(a0, name, "a vector or a matrix", node)?;
                let n = match d {
                    Dims::Vec(n) | Dims::Mat(n, _) => n,
                };
                match self.s.pay.push_scalar(R::from_f64(n as f64), false) {
                    Some(s) => Ok(Value::Num(s)),
                    None => Err(self.memory_error(Some(node))),
                }
            }
            Builtin::Norm => {
                let (a, _) = self.dims(a0, name, "a vector or a matrix", node)?;
                self.run_linalg(LinalgOp::Norm, a, None, Shape::Scalar, node)
            }
            Builtin::Normalize => {
                let (a, _) = self.dims(a0, name, "a vector or a matrix", node)?;
                let shape = self.s.pay.info(a).shape;
                let op = if self.code.protected_ops {
                    LinalgOp::NormalizeProtected
                } else {
                    LinalgOp::Normalize
                };
                self.run_linalg(op, a, None, shape, node)
            }
            Builtin::Cross => {
                let (a, n) = self.vector(a0, name, node)?;
                let (c, m) = self.vector(a1, name, node)?;
                if n != 3 || m != 3 {
                    return Err(self.shape_error(
                        name.name(),
                        format!("needs two 3-vectors, got vectors of {n} and {m}"),
                        node,
                    ));
                }
                self.run_linalg(LinalgOp::Cross, a, Some(c), Shape::Vector(3), node)
            }
            Builtin::Matvec => {
                let (a, r, c) = self.matrix(a0, name, node)?;
                let (v, n) = self.vector(a1, name, node)?;
                if c != n {
                    return Err(self.shape_error(
                        name.name(),
                        format!("a {r}x{c} matrix cannot multiply a vector of {n}"),
                        node,
                    ));
                }
                self.run_linalg(LinalgOp::Matvec, a, Some(v), Shape::Vector(r as u32), node)
            }
            Builtin::Matmul => {
                let (a, r, c) = self.matrix(a0, name, node)?;
                let (m, r2, c2) = self.matrix(a1, name, node)?;
                if c != r2 {
                    return Err(self.shape_error(
                        name.name(),
                        format!("a {r}x{c} matrix cannot multiply a {r2}x{c2} matrix"),
                        node,
                    ));
                }
                self.run_linalg(
                    LinalgOp::Matmul,
                    a,
                    Some(m),
                    Shape::Matrix(r as u32, c2 as u32),
                    node,
                )
            }
            Builtin::Transpose => {
                let (a, r, c) = self.matrix(a0, name, node)?;
                self.run_linalg(
                    LinalgOp::Transpose,
                    a,
                    None,
                    Shape::Matrix(c as u32, r as u32),
                    node,
                )
            }
            Builtin::Trace => {
                let (a, _, _) = self.matrix(a0, name, node)?;
                self.run_linalg(LinalgOp::Trace, a, None, Shape::Scalar, node)
            }
            Builtin::Outer => {
                let (a, n) = self.vector(a0, name, node)?;
                let (c, m) = self.vector(a1, name, node)?;
                self.run_linalg(
                    LinalgOp::Outer,
                    a,
                    Some(c),
                    Shape::Matrix(n as u32, m as u32),
                    node,
                )
            }
            Builtin::Scale => {
                let Value::Num(s) = a0 else {
                    return Err(self.type_error(name.name(), "a number", a0, node));
                };
                if !self.s.pay.info(s).shape.is_scalar() {
                    let expected = "a number as its first argument";
                    return Err(self.type_error(name.name(), expected, a0, node));
                }
                if !matches!(a1, Value::Num(_)) {
                    return Err(self.type_error(name.name(), "a number", a1, node));
                }
                self.binary(BinaryOp::Mul, a0, a1, node)
            }
            Builtin::Det | Builtin::Logdet | Builtin::Inv => {
                let (a, n) = self.square(a0, name, node)?;
                let (op, shape) = match b {
                    Builtin::Det => (LinalgOp::Det, Shape::Scalar),
                    Builtin::Logdet => (LinalgOp::Logdet, Shape::Scalar),
                    _ => (LinalgOp::Inv, Shape::Matrix(n as u32, n as u32)),
                };
                self.run_linalg(op, a, None, shape, node)
            }
            Builtin::Solve => {
                let (a, n) = self.square(a0, name, node)?;
                let (rhs, d) = self.dims(a1, name, "a vector or a matrix", node)?;
                let rows = match d {
                    Dims::Vec(m) | Dims::Mat(m, _) => m,
                };
                if rows != n {
                    let shape = self.s.pay.info(rhs).shape;
                    return Err(self.shape_error(
                        name.name(),
                        format!("a {n}x{n} system cannot be solved for {shape}"),
                        node,
                    ));
                }
                let shape = self.s.pay.info(rhs).shape;
                self.run_linalg(LinalgOp::Solve, a, Some(rhs), shape, node)
            }
            other => unreachable!("{other:?} is not a vector or matrix primitive"),
        }
    }

    /// Allocates the result, broadcasts uniform operands if the result is per lane, runs the
    /// kernel and records the op.
    fn run_linalg(
        &mut self,
        op: LinalgOp,
        a: Slot,
        b: Option<Slot>,
        shape: Shape,
        node: NodeId,
    ) -> EResult<Value> {
        let ia = self.s.pay.info(a);
        let ib = b.map(|b| self.s.pay.info(b));
        let lanes_out = ia.lanes || ib.is_some_and(|i| i.lanes);
        let active = ia.active || ib.is_some_and(|i| i.active);
        let b = b.unwrap_or(a);
        let out = self.emit(shape, lanes_out, active, node, |out| Rec::Linalg {
            op,
            out,
            a,
            b,
        })?;
        Ok(Value::Num(out))
    }
}
