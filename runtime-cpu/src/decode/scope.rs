//! Lexical scopes during decoding: frame slots, closure captures and loop contexts.

use crate::code::CaptureFrom;
use crate::syntax::Symbol;

/// Where a name resolves to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A slot of the current frame.
    Local(u32),
    /// A capture of the current closure.
    Capture(u32),
    /// Not bound in any enclosing function.
    Free,
}

/// An enclosing `loop` that `recur` can target.
#[derive(Copy, Clone, Debug)]
pub struct LoopCtx {
    /// First slot of the loop variables.
    pub slot: u32,
    /// Number of loop variables.
    pub arity: u32,
}

/// One function being decoded (a lambda body, or the top level).
#[derive(Debug, Default)]
pub struct FnScope {
    /// Visible bindings, innermost last.
    locals: Vec<(Symbol, u32)>,
    /// Next free frame slot.
    pub next_slot: u32,
    /// Frame size so far.
    pub max_slot: u32,
    /// Variables copied from the enclosing function.
    pub captures: Vec<(Symbol, CaptureFrom)>,
    /// Enclosing loops of this function, innermost last.
    pub loops: Vec<LoopCtx>,
}

impl FnScope {
    /// Reserves `n` consecutive slots, returning the first.
    pub fn reserve(&mut self, n: u32) -> u32 {
        let s = self.next_slot;
        self.next_slot += n;
        self.max_slot = self.max_slot.max(self.next_slot);
        s
    }

    /// Makes `name` visible at `slot`.
    pub fn bind(&mut self, name: Symbol, slot: u32) {
        self.locals.push((name, slot));
    }

    /// A mark to restore with [`FnScope::release`] when a scope ends.
    pub fn mark(&self) -> (usize, u32) {
        (self.locals.len(), self.next_slot)
    }

    /// Ends the scopes opened since `mark`, freeing their slots for reuse.
    pub fn release(&mut self, mark: (usize, u32)) {
        self.locals.truncate(mark.0);
        self.next_slot = mark.1;
    }

    fn find_local(&self, name: Symbol) -> Option<u32> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, s)| s)
    }

    fn find_capture(&self, name: Symbol) -> Option<u32> {
        self.captures
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| i as u32)
    }
}

/// Resolves `name` in the innermost of `fns`, adding captures through every function between
/// the binding and the use (flat closure conversion).
pub fn resolve(fns: &mut [FnScope], name: Symbol) -> Resolved {
    let Some((current, outer)) = fns.split_last_mut() else {
        return Resolved::Free;
    };
    if let Some(s) = current.find_local(name) {
        return Resolved::Local(s);
    }
    if let Some(i) = current.find_capture(name) {
        return Resolved::Capture(i);
    }
    let from = match resolve(outer, name) {
        Resolved::Local(s) => CaptureFrom::Local(s),
        Resolved::Capture(i) => CaptureFrom::Capture(i),
        Resolved::Free => return Resolved::Free,
    };
    current.captures.push((name, from));
    Resolved::Capture((current.captures.len() - 1) as u32)
}
