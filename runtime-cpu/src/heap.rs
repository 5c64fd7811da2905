//! The structural heap of a run: pairs and closures in write-once arenas.

use crate::value::Value;

/// A closure: a lambda and the values it captured.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Closure {
    /// Index into the program's lambdas.
    pub lambda: u32,
    /// First captured value in [`Heap::captured`].
    pub start: u32,
    /// Number of captured values.
    pub len: u32,
    /// Frame base where the closure was made (`u32::MAX` for a merged closure): `letrec`
    /// completes the captures of closures made in its own frame.
    pub home: u32,
}

/// Pairs and closures.
#[derive(Debug, Default)]
pub struct Heap {
    /// `(car, cdr)` of every pair.
    pub pairs: Vec<(Value, Value)>,
    /// Every closure.
    pub closures: Vec<Closure>,
    /// Captured values of all closures.
    pub captured: Vec<Value>,
}

impl Heap {
    /// Empties the heap, keeping its memory.
    pub fn reset(&mut self) {
        self.pairs.clear();
        self.closures.clear();
        self.captured.clear();
    }

    /// Allocates a pair.
    #[inline]
    pub fn cons(&mut self, car: Value, cdr: Value) -> Value {
        self.pairs.push((car, cdr));
        Value::Pair((self.pairs.len() - 1) as u32)
    }

    /// The closure with this index.
    #[inline(always)]
    pub fn closure(&self, c: u32) -> Closure {
        self.closures[c as usize]
    }

    /// Captured value `i` of closure `c`.
    #[inline(always)]
    pub fn capture(&self, c: u32, i: u32) -> Value {
        let cl = self.closures[c as usize];
        self.captured[(cl.start + i) as usize]
    }
}
