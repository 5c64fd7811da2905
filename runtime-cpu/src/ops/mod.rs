//! The numeric-op layer, shared by both front ends (the evaluator's walk and the bytecode VM).
//!
//! | file | what |
//! | --- | --- |
//! | `make.rs` | [`Numbers`]: an op made once: its result's shape from its rule, its slot, its kernel run, its tape record |
//! | `compute.rs` | [`compute`]: the one CPU forward of every op record |
//!
//! The rules an op's operands must meet live beside the op's definition: `shared_ir::op` for
//! the elementwise ops, `shared_ir::linalg` for the vector and matrix ops.

mod compute;
mod make;

pub use compute::{compute, Scratch};
pub(crate) use compute::{dims, linalg, LinalgStep};
pub use make::{Numbers, OpError};
