//! Symbol interning: every name is mapped once to a small integer.

use std::collections::HashMap;

/// An interned name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(pub u32);

/// The table of interned names.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    ids: HashMap<String, Symbol>,
    names: Vec<String>,
}

impl Interner {
    /// Interns `name`, returning its symbol.
    pub fn intern(&mut self, name: &str) -> Symbol {
        if let Some(&s) = self.ids.get(name) {
            return s;
        }
        let s = Symbol(self.names.len() as u32);
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), s);
        s
    }

    /// The symbol for `name`, if it was interned.
    pub fn get(&self, name: &str) -> Option<Symbol> {
        self.ids.get(name).copied()
    }

    /// The text of a symbol.
    pub fn name(&self, s: Symbol) -> &str {
        &self.names[s.0 as usize]
    }
}

impl Interner {
    /// Number of interned names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}
