//! The value and operation contract shared by every ndvm runtime.
//!
//! `shared-ir` owns what the CPU interpreter and a GPU backend must agree on: the payload number
//! type ([`Real`]), the elementwise operation set with forward and derivative rules side by side
//! ([`UnaryOp`], [`BinaryOp`], [`CompareOp`]), the vector and matrix ops with their shape rules
//! and work ([`LinalgOp`], in [`linalg`]), and tensor shapes ([`Shape`]); and the [`region`]
//! format in which the numeric work of a walk goes to a device, with the cost model that
//! decides where it runs. It depends on no runtime, so either runtime can be built and tested
//! without the other.
//!
//! ```
//! use shared_ir::{BinaryOp, UnaryOp};
//! let y = UnaryOp::Exp.apply(0.0f64);
//! assert_eq!(y, 1.0);
//! assert_eq!(BinaryOp::Mul.partials(2.0f64, 3.0, 6.0), (3.0, 2.0));
//! ```
#![deny(unsafe_code)]

pub mod linalg;
mod op;
mod real;
pub mod region;
mod shape;
pub mod vmath;

pub use linalg::{LinalgOp, Operand, ShapeFault};
pub use op::{pow, BinaryOp, CompareOp, UnaryOp};
pub use real::Real;
pub use shape::Shape;
