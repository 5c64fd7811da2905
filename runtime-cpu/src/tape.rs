//! The reverse tape: a `Copy` record per numeric operation on a value that depends on a
//! differentiated input. Structural operations record nothing.

use crate::value::{MaskId, Slot};
use shared_ir::{BinaryOp, UnaryOp};

pub use shared_ir::LinalgOp;

/// One recorded operation.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Rec {
    /// Elementwise unary.
    Unary {
        /// The op.
        op: UnaryOp,
        /// Result.
        out: Slot,
        /// Operand.
        a: Slot,
    },
    /// `sin` or `cos` of a per-lane operand (or at one lane) with its derivative kept: `d`
    /// (made right after `out`, of its layout) holds `cos` of the operand for `sin`, `-sin` for
    /// `cos`, computed in the same pass, which the reverse pass reads instead of computing it.
    Trig {
        /// `Sin` or `Cos`.
        op: UnaryOp,
        /// Result.
        out: Slot,
        /// Operand.
        a: Slot,
        /// The derivative.
        d: Slot,
    },
    /// Elementwise binary with scalar broadcast.
    Binary {
        /// The op.
        op: BinaryOp,
        /// Result.
        out: Slot,
        /// First operand.
        a: Slot,
        /// Second operand.
        b: Slot,
    },
    /// Lane-wise merge of two branch values: `cond ? a : b`.
    Select {
        /// Result.
        out: Slot,
        /// Lanes that take `a`.
        cond: MaskId,
        /// Value where `cond` is set.
        a: Slot,
        /// Value elsewhere.
        b: Slot,
    },
    /// Concatenation of the parts `aux[start..start+count]` (building a vector or matrix).
    Pack {
        /// Result.
        out: Slot,
        /// First part in [`Tape::aux`].
        start: u32,
        /// Number of parts.
        count: u32,
    },
    /// A contiguous run of elements of `src` starting at element `first` (`ref`).
    Extract {
        /// Result.
        out: Slot,
        /// The vector or matrix.
        src: Slot,
        /// First element taken.
        first: u32,
    },
    /// A vector or matrix op (`b` unused for one-operand ops).
    Linalg {
        /// The op.
        op: LinalgOp,
        /// Result.
        out: Slot,
        /// First operand.
        a: Slot,
        /// Second operand.
        b: Slot,
    },
}

/// A record and the lanes that were active when it ran.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Entry {
    /// The operation.
    pub rec: Rec,
    /// Active lanes; [`MaskId::ALL`] when every lane was active.
    pub mask: MaskId,
}

/// The tape of one run.
#[derive(Debug, Default)]
pub struct Tape {
    /// Records in execution order.
    pub entries: Vec<Entry>,
    /// Operand lists of `Pack` records.
    pub aux: Vec<Slot>,
}

impl Tape {
    /// Empties the tape, keeping its memory.
    pub fn reset(&mut self) {
        self.entries.clear();
        self.aux.clear();
    }

    /// Records on the tape.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Records an operation run under `mask`.
    #[inline(always)]
    pub fn push(&mut self, rec: Rec, mask: MaskId) {
        self.entries.push(Entry { rec, mask });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_stay_small() {
        assert!(std::mem::size_of::<Entry>() <= 24);
    }
}
