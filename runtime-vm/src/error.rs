//! The VM's one error type. Errors in the user's assembly or run (syntax, stack discipline,
//! shapes, limits, bindings) are all here; the VM has no host errors.

use shared_ir::Shape;
use std::fmt;

/// A 1-based line and column in the assembly text.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Everything that can go wrong assembling or running a program.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The assembly text is malformed or breaks the stack discipline.
    #[error("{pos}: {message}\n{:>5} | {text}", .pos.line)]
    Syntax {
        /// Where.
        pos: Pos,
        /// What is wrong.
        message: String,
        /// The offending line, as written.
        text: String,
    },
    /// A `load`ed input has no binding.
    #[error("input `{name}` is not bound (first loaded at {pos})")]
    Unbound {
        /// The input.
        name: String,
        /// Its first `load`.
        pos: Pos,
    },
    /// A binding or option is unusable (an unknown gradient name, a bad lane count).
    #[error("{name}: {message}")]
    Binding {
        /// The input or option.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// An instruction met operands of the wrong shape.
    #[error("{pos}: `{op}`: {message}")]
    Shape {
        /// The instruction's mnemonic.
        op: &'static str,
        /// Where it is.
        pos: Pos,
        /// What is wrong.
        message: String,
    },
    /// The run executed more instructions than allowed.
    #[error("step limit of {limit} instructions reached (at {pos})")]
    StepLimit {
        /// The limit.
        limit: u64,
        /// The instruction that crossed it.
        pos: Pos,
    },
    /// The run needed more memory than allowed.
    #[error("memory limit of {limit_mb} MB reached (at {pos})")]
    MemoryLimit {
        /// The limit in MB.
        limit_mb: u64,
        /// The instruction that crossed it.
        pos: Pos,
    },
    /// Gradients were asked of a result that is not a number.
    #[error("cannot differentiate: the result is {shape}, not a number")]
    NotDifferentiable {
        /// The result's shape.
        shape: Shape,
    },
}

impl Error {
    /// The position the error points at, if any.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            Error::Syntax { pos, .. }
            | Error::Unbound { pos, .. }
            | Error::Shape { pos, .. }
            | Error::StepLimit { pos, .. }
            | Error::MemoryLimit { pos, .. } => Some(*pos),
            _ => None,
        }
    }
}

/// The VM's result type.
pub type Result<T> = std::result::Result<T, Error>;
