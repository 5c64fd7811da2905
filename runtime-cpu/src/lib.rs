//! The canonical ndvm interpreter.
//!
//! A program of the object language (a Scheme subset with vectors and matrices) is read and
//! decoded once into a [`Program`]; a [`Session`] then walks it over a batch of lanes, each
//! input bound to one value for every lane or to one value per lane, and returns the value and
//! exact reverse-mode gradients on every lane. Structure (tags, symbols, environments, control)
//! is kept apart from numbers, which live in dense per-lane payload buffers, and the tape
//! records numeric operations only.
//!
//! ```
//! use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session};
//!
//! let program = Program::parse("(* a (exp (- 0 (* b x))))").unwrap();
//! let bindings = Bindings::new()
//!     .scalar("a", 2.0)
//!     .scalar("b", 0.5)
//!     .lanes("x", vec![0.0, 1.0, 2.0])
//!     .unwrap();
//! let options = RunOptions { grad: GradSpec::Some(vec!["a".into()]), ..Default::default() };
//! let out = Session::<f64>::new().run(&program, &bindings, &options).cloned().unwrap();
//! assert_eq!(out.lanes, 3);
//! assert_eq!(out.values[0].as_ref().unwrap().as_number(), Some(2.0));
//! // d/da on each lane is exp(-b x); summed over lanes for the uniform input.
//! let g = out.grad("a").unwrap();
//! assert!((g.per_lane[1] - (-0.5f64).exp()).abs() < 1e-12);
//! ```
//!
//! | file | what |
//! | --- | --- |
//! | `syntax/` | reader: tokens, spans, interned names |
//! | `decode/` | decoder: names resolved to slots, derived forms lowered |
//! | `code.rs` | the decoded node tree |
//! | `builtin.rs` | the primitives and their arities |
//! | `value.rs` | the structural value word |
//! | `payload.rs` | the dense per-lane number arena |
//! | `mask.rs` | lane masks |
//! | `heap.rs` | pairs and closures |
//! | `eval/` | the evaluator |
//! | `regions/` | the executor of per-lane ops: at once, or collected for a region device |
//! | `ops/` | the numeric-op layer of both front ends: an op made once (`Numbers`), and the CPU forward of every op (`compute`) |
//! | `kernels/` | numeric kernels over lanes, forward and reverse |
//! | `tape.rs`, `backward/` | the reverse tape and its replay (`backward/resolved.rs`: a kept walk's, resolved once) |
//! | `program.rs`, `bindings.rs`, `session.rs` | the public API |
//! | `print.rs` | per-lane results in Scheme syntax |
//! | `schedule.rs` | the multicore scheduler: independent jobs across worker threads, in index order |
//!
//! | `arena.rs` | `Arena`: the payloads, masks, tape and reverse pass of a walk behind one narrow interface, for a second front end |
//!
//! A second front end (the bytecode VM of `runtime-vm`) builds on [`Arena`] and the op layer's
//! [`Numbers`], with none of the reader, evaluator or kernels; the arena, masks, tape and
//! reverse pass themselves stay private.
#![forbid(unsafe_code)]

// First, so that its `lanes!` is seen by the modules after it.
#[macro_use]
mod kernels;
mod arena;
mod backward;
mod bindings;
pub mod builtin;
pub mod code;
pub mod decode;
mod error;
mod eval;
mod heap;
mod mask;
mod ops;
mod payload;
mod print;
mod program;
mod regions;
pub mod schedule;
mod session;
pub mod syntax;
mod tape;
mod value;

pub use arena::Arena;
pub use bindings::{Binding, Bindings, Tensor};
pub use decode::DecodeOptions;
pub use error::{Error, Origin, Result};
pub use eval::Limits;
pub use ops::{Numbers, OpError};
pub use payload::SlotInfo;
pub use print::{number as format_number, LaneValue};
pub use program::Program;
pub use regions::RegionCounts;
pub use session::{GradSpec, Gradient, Outcome, RunOptions, Session, DEFAULT_LANE_BLOCK};
pub use shared_ir::{LinalgOp, Real, Shape};
pub use syntax::Span;
pub use value::{MaskId, Slot, Value};

#[cfg(test)]
mod sizes {
    //! The sizes of the hot path's records, pinned: a change shows here first.
    use std::mem::size_of;

    #[test]
    fn hot_path_records_keep_their_sizes() {
        // A decoded node: its kind and up to three operands.
        assert_eq!(size_of::<crate::code::Node>(), 20);
        // A slot's description (data and adjoint offsets, rows, columns with the flags).
        assert_eq!(size_of::<crate::payload::SlotInfo>(), 16);
        // A tape record with its lanes' mask.
        assert_eq!(size_of::<crate::tape::Rec>(), 20);
        assert_eq!(size_of::<crate::tape::Entry>(), 24);
        // The structural value word.
        assert_eq!(size_of::<crate::Value>(), 8);
        // An error: kept off the hot path (a walk returns a zero-sized stop).
        assert_eq!(size_of::<crate::Error>(), 72);
    }
}
