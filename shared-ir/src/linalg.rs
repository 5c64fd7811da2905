//! The vector and matrix ops, each defined once: its name, its operands, its shape rule, its
//! work per lane and its number in region records. The CPU forward (`runtime-cpu`'s
//! `ops::compute`) and reverse (`backward.rs`, `kernels/linalg_grad.rs`) dispatch on it with one
//! `match` each; the region interpreter (`shaders/wgsl/region.wgsl`) switches on
//! [`LinalgOp::code`], and the tests of its CPU twin check every case of that switch against
//! this table.
//!
//! ```
//! use shared_ir::{LinalgOp, Shape};
//! let out = LinalgOp::Matvec.result(Shape::Matrix(2, 3), Shape::Vector(3));
//! assert_eq!(out.ok(), Some(Shape::Vector(2)));
//! assert!(LinalgOp::Matvec.result(Shape::Matrix(2, 3), Shape::Vector(2)).is_err());
//! ```

use crate::shape::Shape;

/// A vector or matrix operation with its own adjoint rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `dot a b`.
    Dot,
    /// `vsum a`.
    Vsum,
    /// `norm a`.
    Norm,
    /// `normalize a`.
    Normalize,
    /// `normalize a` with the protected clamp.
    NormalizeProtected,
    /// `cross a b`.
    Cross,
    /// `matvec A v`.
    Matvec,
    /// `matmul A B`.
    Matmul,
    /// `transpose A`.
    Transpose,
    /// `trace A`.
    Trace,
    /// `outer a b`.
    Outer,
    /// `det A`.
    Det,
    /// `logdet A`.
    Logdet,
    /// `inv A`.
    Inv,
    /// `solve A b`.
    Solve,
}

/// What an op takes as one operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A vector.
    Vector,
    /// A matrix.
    Matrix,
    /// A square matrix.
    Square,
    /// A vector or a matrix.
    Tensor,
}

/// Why operands do not fit an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeFault {
    /// An operand is not of the kind the op takes; what the op expected ("a vector").
    Kind(&'static str),
    /// The kinds fit but the sizes do not; what is wrong.
    Size(String),
}

/// Rows and columns of a shape (a vector is `n x 1`, a scalar `1 x 1`).
#[inline]
fn dims(s: Shape) -> (u64, u64) {
    match s {
        Shape::Scalar => (1, 1),
        Shape::Vector(n) => (u64::from(n), 1),
        Shape::Matrix(r, c) => (u64::from(r), u64::from(c)),
    }
}

impl Operand {
    /// Whether `shape` is of this kind.
    #[inline]
    pub fn check(self, shape: Shape) -> Result<(), ShapeFault> {
        match (self, shape) {
            (Operand::Vector, Shape::Vector(_))
            | (Operand::Matrix, Shape::Matrix(..))
            | (Operand::Tensor, Shape::Vector(_) | Shape::Matrix(..)) => Ok(()),
            (Operand::Square, Shape::Matrix(r, c)) if r == c => Ok(()),
            (Operand::Square, Shape::Matrix(r, c)) => Err(ShapeFault::Size(format!(
                "needs a square matrix, got a {r}x{c} matrix"
            ))),
            (Operand::Vector, _) => Err(ShapeFault::Kind("a vector")),
            (Operand::Matrix | Operand::Square, _) => Err(ShapeFault::Kind("a matrix")),
            (Operand::Tensor, _) => Err(ShapeFault::Kind("a vector or a matrix")),
        }
    }
}

impl LinalgOp {
    /// Every linalg op, in code order.
    pub const ALL: [LinalgOp; 15] = [
        LinalgOp::Dot,
        LinalgOp::Vsum,
        LinalgOp::Norm,
        LinalgOp::Normalize,
        LinalgOp::NormalizeProtected,
        LinalgOp::Cross,
        LinalgOp::Matvec,
        LinalgOp::Matmul,
        LinalgOp::Transpose,
        LinalgOp::Trace,
        LinalgOp::Outer,
        LinalgOp::Det,
        LinalgOp::Logdet,
        LinalgOp::Inv,
        LinalgOp::Solve,
    ];

    /// The op's number in region records (its index in [`LinalgOp::ALL`]).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The op's name in the object language.
    pub fn name(self) -> &'static str {
        match self {
            LinalgOp::Dot => "dot",
            LinalgOp::Vsum => "vsum",
            LinalgOp::Norm => "norm",
            LinalgOp::Normalize | LinalgOp::NormalizeProtected => "normalize",
            LinalgOp::Cross => "cross",
            LinalgOp::Matvec => "matvec",
            LinalgOp::Matmul => "matmul",
            LinalgOp::Transpose => "transpose",
            LinalgOp::Trace => "trace",
            LinalgOp::Outer => "outer",
            LinalgOp::Det => "det",
            LinalgOp::Logdet => "logdet",
            LinalgOp::Inv => "inv",
            LinalgOp::Solve => "solve",
        }
    }

    /// True for the ops of two operands.
    #[inline]
    pub fn binary(self) -> bool {
        matches!(
            self,
            LinalgOp::Dot
                | LinalgOp::Cross
                | LinalgOp::Matvec
                | LinalgOp::Matmul
                | LinalgOp::Outer
                | LinalgOp::Solve
        )
    }

    /// True for the ops that factor a square matrix (their cost grows as n^3 per lane).
    pub fn factors(self) -> bool {
        matches!(
            self,
            LinalgOp::Det | LinalgOp::Logdet | LinalgOp::Inv | LinalgOp::Solve
        )
    }

    /// What the op takes as operand `k` (0, or 1 for the ops of two).
    #[inline]
    pub fn operand(self, k: usize) -> Operand {
        use LinalgOp::*;
        match (self, k) {
            (Dot | Cross | Outer, _) | (Matvec, 1) => Operand::Vector,
            (Matvec | Matmul | Transpose | Trace, _) => Operand::Matrix,
            (Det | Logdet | Inv, _) | (Solve, 0) => Operand::Square,
            (Vsum | Norm | Normalize | NormalizeProtected | Solve, _) => Operand::Tensor,
        }
    }

    /// The shape of the result for operands of shapes `a` and `b` (`b` is not read by the
    /// ops of one operand), or why they do not fit: each operand's kind first, in order, then
    /// their sizes.
    #[inline]
    pub fn result(self, a: Shape, b: Shape) -> Result<Shape, ShapeFault> {
        use LinalgOp::*;
        self.operand(0).check(a)?;
        if self.binary() {
            self.operand(1).check(b)?;
        }
        let ((m, k), (bm, bn)) = (dims(a), dims(b));
        let size = |ok: bool, message: &dyn Fn() -> String| {
            if ok {
                Ok(())
            } else {
                Err(ShapeFault::Size(message()))
            }
        };
        let u = |x: u64| x as u32;
        Ok(match self {
            Dot => {
                size(m == bm, &|| {
                    format!("vectors of {m} and {bm} have different lengths")
                })?;
                Shape::Scalar
            }
            Vsum | Norm | Trace | Det | Logdet => Shape::Scalar,
            Normalize | NormalizeProtected => a,
            Cross => {
                size(m == 3 && bm == 3, &|| {
                    format!("needs two 3-vectors, got vectors of {m} and {bm}")
                })?;
                Shape::Vector(3)
            }
            Matvec => {
                size(k == bm, &|| {
                    format!("a {m}x{k} matrix cannot multiply a vector of {bm}")
                })?;
                Shape::Vector(u(m))
            }
            Matmul => {
                size(k == bm, &|| {
                    format!("a {m}x{k} matrix cannot multiply a {bm}x{bn} matrix")
                })?;
                Shape::Matrix(u(m), u(bn))
            }
            Transpose => Shape::Matrix(u(k), u(m)),
            Outer => Shape::Matrix(u(m), u(bm)),
            Inv => a,
            Solve => {
                size(bm == m, &|| {
                    format!("a {m}x{m} system cannot be solved for {b}")
                })?;
                b
            }
        })
    }

    /// Numbers the op computes per lane for operands of shapes `a` and `b` and a result of
    /// shape `out`, counting the inner loop of a product and n^3 for a factorisation (at
    /// least 1): the region cost model's measure, and the longest loop one GPU invocation
    /// runs for it.
    #[inline]
    pub fn work(self, a: Shape, b: Shape, out: Shape) -> u64 {
        use LinalgOp::*;
        let (m, k) = dims(a);
        let len = |s: Shape| s.len() as u64;
        let w = match self {
            Dot | Vsum | Norm | Transpose => len(a),
            Normalize | NormalizeProtected => 2 * len(a),
            Trace => m.min(k),
            Cross => 3,
            // Each result element is a sum over the inner dimension.
            Matvec | Matmul => len(out) * k,
            Outer => len(out),
            Solve => m * m * (m + dims(b).1),
            Det | Logdet | Inv => m * m * m,
        };
        w.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_takes_its_operands_in_order() {
        let v3 = Shape::Vector(3);
        let m23 = Shape::Matrix(2, 3);
        // The first operand's kind is checked before the second's.
        assert_eq!(
            LinalgOp::Matvec.result(Shape::Scalar, Shape::Scalar),
            Err(ShapeFault::Kind("a matrix"))
        );
        assert_eq!(
            LinalgOp::Matvec.result(m23, m23),
            Err(ShapeFault::Kind("a vector"))
        );
        // A non-square matrix fails its operand before the right-hand side is looked at.
        assert!(matches!(
            LinalgOp::Solve.result(m23, Shape::Scalar),
            Err(ShapeFault::Size(m)) if m == "needs a square matrix, got a 2x3 matrix"
        ));
        assert_eq!(LinalgOp::Matvec.result(m23, v3), Ok(Shape::Vector(2)));
        assert_eq!(
            LinalgOp::Matmul.result(m23, Shape::Matrix(3, 4)),
            Ok(Shape::Matrix(2, 4))
        );
        assert_eq!(LinalgOp::Transpose.result(m23, v3), Ok(Shape::Matrix(3, 2)));
        assert_eq!(
            LinalgOp::Outer.result(Shape::Vector(2), v3),
            Ok(Shape::Matrix(2, 3))
        );
        assert_eq!(
            LinalgOp::Solve.result(Shape::Matrix(3, 3), Shape::Matrix(3, 2)),
            Ok(Shape::Matrix(3, 2))
        );
        assert!(matches!(
            LinalgOp::Cross.result(Shape::Vector(2), v3),
            Err(ShapeFault::Size(m)) if m == "needs two 3-vectors, got vectors of 2 and 3"
        ));
    }

    #[test]
    fn every_op_has_an_arity_a_name_and_work() {
        for op in LinalgOp::ALL {
            assert_eq!(LinalgOp::ALL[op.code() as usize], op);
            assert!(!op.name().is_empty());
            let n = Shape::Matrix(4, 4);
            let b = if op.binary() {
                match op.operand(1) {
                    Operand::Vector => Shape::Vector(4),
                    _ => n,
                }
            } else {
                Shape::Scalar
            };
            let a = match op.operand(0) {
                Operand::Vector => Shape::Vector(if op == LinalgOp::Cross { 3 } else { 4 }),
                _ => n,
            };
            let b = if op == LinalgOp::Cross { a } else { b };
            let out = op.result(a, b).expect("operands that fit");
            assert!(op.work(a, b, out) >= 1, "{op:?}");
            if op.factors() {
                assert!(op.work(a, b, out) >= 64, "{op:?} factors a 4x4 matrix");
            }
        }
    }
}
