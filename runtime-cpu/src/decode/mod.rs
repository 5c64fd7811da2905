//! The decoder: read data to [`Code`]. It resolves every name once (frame slot, closure capture,
//! global, primitive or input), lowers derived forms to a handful of node kinds, checks arities
//! of primitives and the tail position of `recur`, and collects constants.
//!
//! | file | what |
//! | --- | --- |
//! | `scope.rs` | frame slots, captures, loop contexts |
//! | `forms.rs` | special forms |
//! | `calls.rs` | primitive and procedure calls, quoted data |

mod calls;
mod forms;
mod scope;

use crate::code::{Code, GlobalInfo, List, Node, NodeId};
use crate::error::{Error, Result};
use crate::syntax::{DatumId, DatumKind, Forms, Interner, Span, Symbol};
use crate::value::{Slot, Value};
use scope::{resolve, FnScope, Resolved};
use std::collections::HashMap;

/// Forms nested deeper than this are rejected (the evaluator recurses once per level).
pub const NESTING_LIMIT: usize = 10_000;

/// Decoding options that change the meaning of primitives.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// `sqrt` and `log` clamp their argument to at least 1e-8, like the artifact runtime.
    pub protected_ops: bool,
}

pub(crate) struct Decoder<'a> {
    forms: &'a Forms,
    names: &'a Interner,
    options: DecodeOptions,
    code: Code,
    fns: Vec<FnScope>,
    globals: HashMap<Symbol, u32>,
    consts: HashMap<u64, u32>,
    depth: usize,
    kw: Keywords,
}

/// Special-form keywords, interned once.
struct Keywords {
    quote: Option<Symbol>,
    r#if: Option<Symbol>,
    cond: Option<Symbol>,
    r#else: Option<Symbol>,
    when: Option<Symbol>,
    unless: Option<Symbol>,
    begin: Option<Symbol>,
    r#let: Option<Symbol>,
    let_star: Option<Symbol>,
    letrec: Option<Symbol>,
    letrec_star: Option<Symbol>,
    lambda: Option<Symbol>,
    define: Option<Symbol>,
    r#loop: Option<Symbol>,
    recur: Option<Symbol>,
    and: Option<Symbol>,
    or: Option<Symbol>,
}

impl Keywords {
    fn new(names: &Interner) -> Keywords {
        Keywords {
            quote: names.get("quote"),
            r#if: names.get("if"),
            cond: names.get("cond"),
            r#else: names.get("else"),
            when: names.get("when"),
            unless: names.get("unless"),
            begin: names.get("begin"),
            r#let: names.get("let"),
            let_star: names.get("let*"),
            letrec: names.get("letrec"),
            letrec_star: names.get("letrec*"),
            lambda: names.get("lambda"),
            define: names.get("define"),
            r#loop: names.get("loop"),
            recur: names.get("recur"),
            and: names.get("and"),
            or: names.get("or"),
        }
    }

    /// `loop` and `recur`: keywords of this language that common Scheme code uses as
    /// names (`(let loop ((i 0)) ...)`); a binding of either shadows the keyword.
    fn is_soft(&self, s: Symbol) -> bool {
        Some(s) == self.r#loop || Some(s) == self.recur
    }

    /// A keyword that cannot be bound.
    fn is_reserved(&self, s: Symbol) -> bool {
        self.is_keyword(s) && !self.is_soft(s)
    }

    fn is_keyword(&self, s: Symbol) -> bool {
        [
            self.quote,
            self.r#if,
            self.cond,
            self.r#else,
            self.when,
            self.unless,
            self.begin,
            self.r#let,
            self.let_star,
            self.letrec,
            self.letrec_star,
            self.lambda,
            self.define,
            self.r#loop,
            self.recur,
            self.and,
            self.or,
        ]
        .contains(&Some(s))
    }
}

/// Decodes a read program.
pub fn decode(forms: &Forms, names: &Interner, options: DecodeOptions) -> Result<Code> {
    if forms.top.is_empty() {
        return Err(Error::EmptyProgram);
    }
    let mut d = Decoder {
        forms,
        names,
        options,
        code: Code::default(),
        fns: vec![FnScope::default()],
        globals: HashMap::new(),
        consts: HashMap::new(),
        depth: 0,
        kw: Keywords::new(names),
    };
    d.code.protected_ops = options.protected_ops;
    d.top_level()?;
    d.code.symbol_names = (0..names.len())
        .map(|i| names.name(Symbol(i as u32)).to_string())
        .collect();
    Ok(d.code)
}

impl<'a> Decoder<'a> {
    fn top_level(&mut self) -> Result<()> {
        let top = self.forms.top.clone();
        // Every top-level definition is a global visible from the start (mutual recursion).
        for &f in &top {
            if let Some((name, span)) = self.definition_name(f)? {
                if self.globals.contains_key(&name) {
                    continue;
                }
                let g = self.code.globals.len() as u32;
                self.code.globals.push(GlobalInfo {
                    name,
                    is_input: false,
                    span,
                });
                self.globals.insert(name, g);
            }
        }
        let mut items = Vec::with_capacity(top.len());
        let last = top.len() - 1;
        for (i, &f) in top.iter().enumerate() {
            let node = if self.definition_name(f)?.is_some() {
                self.top_define(f)?
            } else {
                self.expr(f, i == last)?
            };
            items.push(node);
        }
        let span = self.span(top[0]).to(self.span(top[last]));
        self.code.top = if items.len() == 1 {
            items[0]
        } else {
            let l = self.list(&items);
            self.node(Node::Seq(l), span)
        };
        self.code.top_frame = self.fns[0].max_slot;
        Ok(())
    }

    // ---- helpers shared by the form decoders ----

    pub(crate) fn span(&self, d: DatumId) -> Span {
        self.forms.get(d).span
    }

    pub(crate) fn kind(&self, d: DatumId) -> DatumKind {
        self.forms.get(d).kind
    }

    pub(crate) fn items(&self, d: DatumId) -> &'a [DatumId] {
        self.forms.items(d)
    }

    pub(crate) fn symbol(&self, d: DatumId) -> Option<Symbol> {
        match self.kind(d) {
            DatumKind::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn name_of(&self, s: Symbol) -> &str {
        self.names.name(s)
    }

    pub(crate) fn node(&mut self, n: Node, span: Span) -> NodeId {
        self.code.nodes.push(n);
        self.code.spans.push(span);
        (self.code.nodes.len() - 1) as NodeId
    }

    fn var_node(&mut self, n: Node, name: Symbol, span: Span) -> NodeId {
        let id = self.node(n, span);
        self.code.var_names.push((id, name));
        id
    }

    pub(crate) fn list(&mut self, ids: &[NodeId]) -> List {
        let start = self.code.lists.len() as u32;
        self.code.lists.extend_from_slice(ids);
        List {
            start,
            len: ids.len() as u32,
        }
    }

    pub(crate) fn constant(&mut self, x: f64, span: Span) -> NodeId {
        let next = self.code.consts.len() as u32;
        let i = *self.consts.entry(x.to_bits()).or_insert(next);
        if i == next {
            self.code.consts.push(x);
        }
        self.node(Node::Const(Value::Num(Slot(i))), span)
    }

    pub(crate) fn scope(&mut self) -> &mut FnScope {
        self.fns
            .last_mut()
            .expect("the top-level scope is never popped")
    }

    pub(crate) fn bad(&self, form: &'static str, message: impl Into<String>, d: DatumId) -> Error {
        Error::BadForm {
            form,
            message: message.into(),
            span: self.span(d),
        }
    }

    /// A name that may be bound: not a keyword.
    pub(crate) fn binder(&self, form: &'static str, d: DatumId) -> Result<Symbol> {
        match self.symbol(d) {
            Some(s) if self.kw.is_reserved(s) => Err(self.bad(
                form,
                format!("`{}` is a keyword and cannot be bound", self.name_of(s)),
                d,
            )),
            Some(s) => Ok(s),
            None => Err(self.bad(form, "expected a name", d)),
        }
    }

    /// Resolves a variable reference.
    pub(crate) fn variable(&mut self, s: Symbol, span: Span) -> Result<NodeId> {
        match resolve(&mut self.fns, s) {
            Resolved::Local(slot) => Ok(self.var_node(Node::Local(slot), s, span)),
            Resolved::Capture(i) => Ok(self.var_node(Node::Capture(i), s, span)),
            Resolved::Free => {
                if let Some(&g) = self.globals.get(&s) {
                    return Ok(self.var_node(Node::Global(g), s, span));
                }
                if let Some(b) = crate::builtin::Builtin::lookup(self.name_of(s)) {
                    let b = self.adjust_builtin(b);
                    return Ok(self.node(Node::Const(Value::Builtin(b)), span));
                }
                let g = self.code.globals.len() as u32;
                self.code.globals.push(GlobalInfo {
                    name: s,
                    is_input: true,
                    span,
                });
                self.globals.insert(s, g);
                Ok(self.var_node(Node::Global(g), s, span))
            }
        }
    }

    /// Whether `s` is bound here: a local, a capture or a top-level definition.
    pub(crate) fn is_bound(&mut self, s: Symbol) -> bool {
        self.is_lexical(s)
            || self
                .globals
                .get(&s)
                .is_some_and(|&g| !self.code.globals[g as usize].is_input)
    }

    /// Whether `s` names a local or captured variable here (which shadows primitives).
    pub(crate) fn is_lexical(&mut self, s: Symbol) -> bool {
        // Resolution adds captures as a side effect only when the name is found, which is
        // exactly when the caller will then reference it.
        !matches!(resolve(&mut self.fns, s), Resolved::Free)
    }

    /// Decodes an expression. `tail` is true in tail position of the innermost loop body.
    pub(crate) fn expr(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        self.depth += 1;
        if self.depth > NESTING_LIMIT {
            return Err(Error::NestingTooDeep {
                limit: NESTING_LIMIT,
                span: self.span(d),
            });
        }
        let r = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(d, tail));
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let span = self.span(d);
        match self.kind(d) {
            DatumKind::Number(x) => Ok(self.constant(x, span)),
            DatumKind::Bool(b) => Ok(self.node(Node::Const(Value::Bool(b)), span)),
            DatumKind::Symbol(s) => {
                if self.kw.is_keyword(s) && !(self.kw.is_soft(s) && self.is_bound(s)) {
                    return Err(self.bad(
                        "keyword",
                        format!("`{}` is a keyword, not a value", self.name_of(s)),
                        d,
                    ));
                }
                self.variable(s, span)
            }
            DatumKind::Quote(inner) => self.quoted(inner),
            DatumKind::Bracket { .. } => {
                let items = self.items(d);
                self.builtin_call(crate::builtin::Builtin::Bracket, "[...]", items, span)
            }
            DatumKind::List { len: 0, .. } => Err(self.bad(
                "()",
                "an empty combination `()` is not an expression; write '() for the empty list",
                d,
            )),
            DatumKind::List { .. } => self.combination(d, tail),
        }
    }

    /// `(define name e)` or `(define (name params...) body...)` at the top level.
    fn definition_name(&self, d: DatumId) -> Result<Option<(Symbol, Span)>> {
        let items = self.items(d);
        if !matches!(self.kind(d), DatumKind::List { .. })
            || items.is_empty()
            || self.symbol(items[0]) != self.kw.define
            || self.kw.define.is_none()
        {
            return Ok(None);
        }
        let target = items
            .get(1)
            .ok_or_else(|| self.bad("define", "expected (define name value)", d))?;
        let name_datum = match self.kind(*target) {
            DatumKind::List { len, .. } if len > 0 => self.items(*target)[0],
            _ => *target,
        };
        Ok(Some((self.binder("define", name_datum)?, self.span(d))))
    }
}
