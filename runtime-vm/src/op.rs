//! The instruction set and an assembled program: a linear instruction stream whose block
//! instructions carry the indices of their partners, so the executor never searches.

use crate::error::Pos;
use shared_ir::{BinaryOp, Shape, UnaryOp};

/// One instruction. Jump targets are indices into [`Program::ops`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Op {
    /// Push constant `k` of [`Program::consts`].
    Push(u32),
    /// Push input `k` of [`Program::inputs`].
    Load(u32),
    /// Pop one value, push `op` of it, element by element (`neg exp log sin cos`).
    Unary(UnaryOp),
    /// Pop `b`, pop `a`, push `a op b`, element by element with scalar broadcast
    /// (`add sub mul div`).
    Binary(BinaryOp),
    /// Push the top value again.
    Dup,
    /// Pop two vectors of one length, push their dot product.
    Dot,
    /// Run the body up to `end` (an [`Op::EndLoop`]) `count` times.
    Loop {
        /// Trip count, the same on every lane.
        count: u32,
        /// Index of the matching [`Op::EndLoop`].
        end: u32,
    },
    /// End of a loop body.
    EndLoop {
        /// Index of the matching [`Op::Loop`].
        start: u32,
    },
    /// Pop a number; lanes where it is not zero run the *then* block, the others the *else*
    /// block (both, each under its lanes, when they differ).
    Branch {
        /// Index of the matching [`Op::Else`] (always present; an omitted `else` is empty).
        other: u32,
        /// Values below the branch's entry depth that the branches may consume.
        reach: u32,
    },
    /// Start of the *else* block.
    Else {
        /// Index of the matching [`Op::EndBranch`].
        end: u32,
    },
    /// End of a branch: per-lane results are merged.
    EndBranch,
}

impl Op {
    /// The mnemonic, as written in assembly.
    pub fn name(self) -> &'static str {
        match self {
            Op::Push(_) => "push",
            Op::Load(_) => "load",
            Op::Unary(op) => match op {
                UnaryOp::Neg => "neg",
                UnaryOp::Exp => "exp",
                UnaryOp::Log => "log",
                UnaryOp::Sin => "sin",
                UnaryOp::Cos => "cos",
                _ => op.name(),
            },
            Op::Binary(op) => match op {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul => "mul",
                BinaryOp::Div => "div",
                _ => op.name(),
            },
            Op::Dup => "dup",
            Op::Dot => "dot",
            Op::Loop { .. } => "loop",
            Op::EndLoop { .. } | Op::EndBranch => "end",
            Op::Branch { .. } => "branch",
            Op::Else { .. } => "else",
        }
    }
}

/// A constant of the program: a number or a vector, the same on every lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Const {
    /// Scalar or vector.
    pub shape: Shape,
    /// Its numbers.
    pub data: Vec<f64>,
}

/// An assembled program, checked for stack discipline. Make one with [`Program::parse`].
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub(crate) ops: Vec<Op>,
    pub(crate) pos: Vec<Pos>,
    pub(crate) consts: Vec<Const>,
    pub(crate) inputs: Vec<String>,
    pub(crate) input_pos: Vec<Pos>,
    pub(crate) max_depth: usize,
}

impl Program {
    /// Assembles `text` (see `docs/vm.md`).
    pub fn parse(text: &str) -> crate::Result<Program> {
        crate::asm::assemble(text)
    }

    /// The instruction stream.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Where instruction `pc` was written.
    pub fn pos(&self, pc: usize) -> Pos {
        self.pos[pc]
    }

    /// The constants `push` refers to.
    pub fn consts(&self) -> &[Const] {
        &self.consts
    }

    /// The names the program `load`s, in order of first use: its inputs.
    pub fn inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().map(String::as_str)
    }

    /// The deepest the operand stack gets (known before running).
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_stay_small() {
        assert!(std::mem::size_of::<Op>() <= 12);
    }
}
