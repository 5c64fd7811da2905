//! Errors in the user's program, kept apart from errors of the host.

use crate::syntax::Span;
use thiserror::Error;

/// Everything that can go wrong with a program: reading it, decoding it, binding its inputs or
/// evaluating it. Each variant that points at a form carries its [`Span`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The file holds no form.
    #[error("the program is empty: it has no form to evaluate")]
    EmptyProgram,
    /// An opening bracket is never closed.
    #[error("unbalanced parentheses: this `{open}` is never closed")]
    Unclosed {
        /// The opening character.
        open: char,
        /// Where it opens.
        span: Span,
    },
    /// A closing bracket with no opening one.
    #[error("unbalanced parentheses: `{close}` closes nothing")]
    UnexpectedClose {
        /// The closing character.
        close: char,
        /// Where it is.
        span: Span,
    },
    /// `(` closed by `]` or `[` closed by `)`.
    #[error("mismatched brackets: expected `{expected}` but found `{found}`")]
    MismatchedClose {
        /// The closer that would match.
        expected: char,
        /// The closer found.
        found: char,
        /// Where it is.
        span: Span,
    },
    /// A token the language does not have.
    #[error("unknown token `{token}`: {hint}")]
    UnknownToken {
        /// The token text.
        token: String,
        /// What the language accepts instead.
        hint: &'static str,
        /// Where it is.
        span: Span,
    },
    /// A special form used with the wrong shape.
    #[error("bad `{form}` form: {message}")]
    BadForm {
        /// The special form's keyword.
        form: &'static str,
        /// What is wrong.
        message: String,
        /// The offending form.
        span: Span,
    },
    /// A name that is not bound to anything callable in operator position.
    #[error("unknown operator `{name}`")]
    UnknownOperator {
        /// The name.
        name: String,
        /// Where it is called.
        span: Span,
    },
    /// `recur` outside the tail position of its `loop`.
    #[error("`recur` is not in tail position of its `loop`")]
    RecurNotInTail {
        /// The `recur` form.
        span: Span,
    },
    /// `recur` with no enclosing `loop` (in the same function).
    #[error("`recur` outside any `loop`")]
    RecurOutsideLoop {
        /// The `recur` form.
        span: Span,
    },
    /// A call with the wrong number of arguments.
    #[error("`{name}` expects {expected} argument(s), got {got}")]
    ArityMismatch {
        /// The callee.
        name: String,
        /// The accepted counts, in words.
        expected: String,
        /// The count given.
        got: usize,
        /// The call.
        span: Span,
    },
    /// Forms nested deeper than the decoder accepts.
    #[error("forms nested more than {limit} deep")]
    NestingTooDeep {
        /// The nesting limit.
        limit: usize,
        /// The form where the limit was crossed.
        span: Span,
    },
    /// A free variable with no binding.
    #[error(
        "unbound name `{name}`: bind it as an input (--bind {name}=VALUE or a --lanes column)"
    )]
    UnboundName {
        /// The name.
        name: String,
        /// Its first use.
        span: Span,
    },
    /// A `letrec` or internal `define` variable read before its initialiser ran.
    #[error("`{name}` is used before its definition has been evaluated")]
    UsedBeforeDefinition {
        /// The name.
        name: String,
        /// The use.
        span: Span,
    },
    /// An operation applied to a value of the wrong kind.
    #[error("`{op}` expects {expected}, got {got}")]
    Type {
        /// The operation.
        op: String,
        /// What it accepts.
        expected: &'static str,
        /// What it was given.
        got: String,
        /// The call.
        span: Span,
    },
    /// Tensor shapes that do not fit together.
    #[error("`{op}`: {message}")]
    Shape {
        /// The operation.
        op: String,
        /// What does not fit.
        message: String,
        /// The call.
        span: Span,
    },
    /// An argument outside what the operation accepts (an index out of range, say).
    #[error("`{op}`: {message}")]
    Domain {
        /// The operation.
        op: String,
        /// What is out of range.
        message: String,
        /// The call.
        span: Span,
    },
    /// A structural argument (an index, a size) that differs between lanes.
    #[error("`{op}`: {what} must be the same on every lane, but it differs between lanes")]
    LaneVarying {
        /// The operation.
        op: String,
        /// The argument.
        what: &'static str,
        /// The call.
        span: Span,
    },
    /// Calling something that is not a procedure.
    #[error("cannot call {got}: it is not a procedure")]
    NotCallable {
        /// What was called.
        got: String,
        /// The call.
        span: Span,
    },
    /// The step budget ran out: the program runs too long or forever.
    #[error("step budget of {limit} steps exhausted (the program runs too long or forever; raise it with --max-steps)")]
    StepBudget {
        /// The budget.
        limit: u64,
        /// The form being evaluated when it ran out.
        span: Span,
    },
    /// The run was stopped from outside (a deadline passed, a signal came).
    #[error("the run was stopped before it finished (a deadline passed or a signal came)")]
    Cancelled {
        /// The form being evaluated when it stopped (none when it stopped before the walk).
        span: Option<Span>,
    },
    /// Nested evaluation deeper than the depth limit.
    #[error(
        "recursion deeper than the limit of {limit} nested evaluations (`ndvm run --max-depth` raises it)"
    )]
    DepthLimit {
        /// The limit.
        limit: u32,
        /// The form being entered.
        span: Span,
    },
    /// The payload arena outgrew its memory limit.
    #[error("payload memory limit of {limit_mb} MB exceeded (raise it with --max-memory-mb)")]
    MemoryLimit {
        /// The limit in MB (rounded up).
        limit_mb: u64,
        /// The form that allocated, if the limit was crossed inside the program.
        span: Option<Span>,
    },
    /// A gradient was asked of a result that is not one number per lane.
    #[error("cannot take a gradient: the program's value is {got}, not a number")]
    NotDifferentiable {
        /// The value's kind.
        got: String,
    },
    /// A broken invariant of the runtime itself (a bug to report), kept from becoming a panic.
    #[error("internal error of the runtime (please report it): {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
    /// The device running the walk's numeric regions failed (a lost device, a buffer over
    /// its limits); every lane of the walk fails.
    #[error("device error: {message}")]
    Device {
        /// What the device reported.
        message: String,
    },
    /// A problem with the inputs handed to the program (not with the program itself).
    #[error("input `{name}`: {message}")]
    Binding {
        /// The input.
        name: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The span of the form the error points at, if it points at one.
    pub fn span(&self) -> Option<Span> {
        use Error::*;
        match self {
            Unclosed { span, .. }
            | UnexpectedClose { span, .. }
            | MismatchedClose { span, .. }
            | UnknownToken { span, .. }
            | BadForm { span, .. }
            | UnknownOperator { span, .. }
            | RecurNotInTail { span }
            | RecurOutsideLoop { span }
            | ArityMismatch { span, .. }
            | NestingTooDeep { span, .. }
            | UnboundName { span, .. }
            | UsedBeforeDefinition { span, .. }
            | Type { span, .. }
            | Shape { span, .. }
            | Domain { span, .. }
            | LaneVarying { span, .. }
            | NotCallable { span, .. }
            | StepBudget { span, .. }
            | DepthLimit { span, .. } => Some(*span),
            MemoryLimit { span, .. } | Cancelled { span } => *span,
            EmptyProgram
            | NotDifferentiable { .. }
            | Binding { .. }
            | Internal { .. }
            | Device { .. } => None,
        }
    }

    /// True for errors that depend on the whole batch rather than on one lane's path (budgets
    /// and limits, and a failed device), which therefore fail every lane of a run.
    pub fn is_resource_limit(&self) -> bool {
        matches!(
            self,
            Error::StepBudget { .. }
                | Error::Cancelled { .. }
                | Error::DepthLimit { .. }
                | Error::MemoryLimit { .. }
                | Error::Device { .. }
        )
    }
}

/// Where an error comes from ([`Error::origin`]): the user's program, the inputs handed to it,
/// or the machine running it. Front ends report the three apart: a program error points at a
/// form, an input error names the input, a host error is not the user's to fix in the program.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// Reading, decoding or evaluating the program: parse, unbound name, type, arity, shape,
    /// domain, a value that cannot be differentiated, and the step, depth and memory limits the
    /// program runs into.
    Program,
    /// The inputs bound to the program (one missing, or of the wrong shape or lane count) or
    /// the gradients asked of it.
    Inputs,
    /// The host: a failed device, or a broken invariant of the runtime (a bug).
    Host,
}

impl Error {
    /// Whether the program, its inputs or the host is at fault.
    pub fn origin(&self) -> Origin {
        match self {
            // An unbound name is an input the program reads and the caller did not bind.
            Error::Binding { .. } | Error::UnboundName { .. } => Origin::Inputs,
            Error::Device { .. } | Error::Internal { .. } | Error::Cancelled { .. } => Origin::Host,
            _ => Origin::Program,
        }
    }
}

/// Result with the crate's [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_inputs_and_host_errors_are_told_apart() {
        let span = Span { start: 0, end: 1 };
        let program = [
            Error::EmptyProgram,
            Error::StepBudget { limit: 1, span },
            Error::NotDifferentiable {
                got: "a pair".into(),
            },
        ];
        for e in program {
            assert_eq!(e.origin(), Origin::Program, "{e}");
        }
        let inputs = [
            Error::Binding {
                name: "x".into(),
                message: "missing".into(),
            },
            Error::UnboundName {
                name: "x".into(),
                span,
            },
        ];
        for e in inputs {
            assert_eq!(e.origin(), Origin::Inputs, "{e}");
        }
        for e in [
            Error::Device {
                message: "lost".into(),
            },
            Error::Internal {
                message: "bug".into(),
            },
        ] {
            assert_eq!(e.origin(), Origin::Host, "{e}");
        }
    }
}
