//! A program read and decoded once, and the inputs it needs.

use crate::code::Code;
use crate::decode::{decode, DecodeOptions};
use crate::error::Result;
use crate::syntax::{read, Interner, Span};
use std::sync::Arc;

/// A decoded program: run it any number of times, on any lanes, from any thread.
#[derive(Clone, Debug)]
pub struct Program {
    source: Arc<str>,
    code: Arc<Code>,
    inputs: Vec<(String, Span)>,
}

impl Program {
    /// Reads and decodes `source` with default options (IEEE `sqrt` and `log`).
    pub fn parse(source: &str) -> Result<Program> {
        Program::parse_with(source, DecodeOptions::default())
    }

    /// Reads and decodes `source`.
    pub fn parse_with(source: &str, options: DecodeOptions) -> Result<Program> {
        let mut names = Interner::default();
        let forms = read(source, &mut names)?;
        let code = decode(&forms, &names, options)?;
        let inputs = code
            .globals
            .iter()
            .filter(|g| g.is_input)
            .map(|g| (names.name(g.name).to_string(), g.span))
            .collect();
        Ok(Program {
            source: source.into(),
            code: Arc::new(code),
            inputs,
        })
    }

    /// The program's free variables: the inputs a run must bind, in order of first use.
    pub fn inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().map(|(n, _)| n.as_str())
    }

    /// Where an input is first used.
    pub fn input_span(&self, name: &str) -> Option<Span> {
        self.inputs.iter().find(|(n, _)| n == name).map(|&(_, s)| s)
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The decoded form.
    pub fn code(&self) -> &Code {
        &self.code
    }

    /// The decoded program, shared.
    pub(crate) fn code_shared(&self) -> &Arc<Code> {
        &self.code
    }
}
