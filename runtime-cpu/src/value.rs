//! The structural value word. Numbers never live here: a number is a handle to a payload slot.

use crate::builtin::Builtin;
use crate::syntax::Symbol;

/// Index of a payload slot (a number, vector or matrix, uniform or one per lane).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(pub u32);

/// Index of a lane mask (a boolean per lane).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MaskId(pub u32);

impl MaskId {
    /// The mask with every lane set.
    pub const ALL: MaskId = MaskId(0);
}

/// A value: a small `Copy` word. Everything that varies per lane is behind a handle.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Value {
    /// The empty list `'()`.
    Nil,
    /// A boolean, the same on every lane.
    Bool(bool),
    /// A boolean that differs per lane (the result of comparing lane data).
    LaneBool(MaskId),
    /// A number, vector or matrix.
    Num(Slot),
    /// A quoted symbol.
    Sym(Symbol),
    /// A pair in the heap.
    Pair(u32),
    /// A closure in the heap.
    Closure(u32),
    /// A primitive used as a value.
    Builtin(Builtin),
    /// The value of a `letrec` variable before its initialiser has run.
    Unassigned,
}

impl Value {
    /// The kind of value, in words, for error messages.
    pub fn kind(self) -> &'static str {
        match self {
            Value::Nil => "the empty list",
            Value::Bool(_) | Value::LaneBool(_) => "a boolean",
            Value::Num(_) => "a number",
            Value::Sym(_) => "a symbol",
            Value::Pair(_) => "a pair",
            Value::Closure(_) | Value::Builtin(_) => "a procedure",
            Value::Unassigned => "an unassigned variable",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_word_stays_small() {
        assert_eq!(std::mem::size_of::<Value>(), 8);
    }
}
