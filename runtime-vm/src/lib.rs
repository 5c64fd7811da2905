//! A second front end on the ndvm runtime: a differentiable stack bytecode VM.
//!
//! Where `runtime-cpu`'s evaluator walks a tree of decoded Scheme, this VM runs a linear
//! instruction stream over an operand stack. It shares none of that evaluator or its reader:
//! it uses only the runtime's narrow interface for a second front end: `runtime_cpu::Arena`
//! (the payload arena, the lane masks, the tape and the reverse pass of a walk) and the
//! numeric-op layer it makes every op through (`runtime_cpu::Numbers`, as the evaluator's
//! ops are made). So it inherits the same exact
//! reverse-mode gradients, the same per-lane batching (one walk serves every lane) and the same
//! lane-masked divergence.
//!
//! ```
//! use runtime_cpu::Bindings;
//! use runtime_vm::{Grad, Options, Program, Vm};
//!
//! // exp(-a x) cos(w x) + b
//! let prog = Program::parse(
//!     "load a\nload x\nmul\nneg\nexp\nload w\nload x\nmul\ncos\nmul\nload b\nadd",
//! )
//! .unwrap();
//! let bindings = Bindings::new()
//!     .scalar("a", 0.3)
//!     .scalar("w", 2.0)
//!     .scalar("b", 0.7)
//!     .lanes("x", vec![1.5, 0.0])
//!     .unwrap();
//! let opts = Options { grad: Grad::All, ..Default::default() };
//! let out = Vm::<f64>::new().run(&prog, &bindings, &opts).cloned().unwrap();
//! assert!((out.value(0)[0] - 0.068753).abs() < 1e-6);
//! assert_eq!(out.value(1)[0], 1.7);
//! assert_eq!(out.grad("b").unwrap().per_lane, vec![1.0, 1.0]);
//! ```
//!
//! The assembly language is documented in `docs/vm.md`.
//!
//! | file | what |
//! | --- | --- |
//! | `op.rs` | the instruction set and an assembled program |
//! | `asm.rs` | the assembler and its stack-discipline checks |
//! | `exec.rs` | the executor: one `match` per instruction, loops, divergent branches |
//! | `numeric.rs` | instructions on payloads: shared kernels, shared tape records |
//! | `run.rs` | binding inputs, lane blocks, the reverse pass, per-lane results |
//! | `error.rs` | the error type |
#![forbid(unsafe_code)]

mod asm;
mod error;
mod exec;
mod numeric;
mod op;
mod run;

pub use error::{Error, Pos, Result};
pub use exec::Limits;
pub use op::{Const, Op, Program};
pub use run::{Grad, Gradient, Options, Outcome, Vm, DEFAULT_LANE_BLOCK};
