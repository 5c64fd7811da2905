//! Calls: primitive calls lowered to dedicated nodes, procedure calls, and quoted data.

use super::Decoder;
use crate::builtin::{self, Builtin};
use crate::code::{Node, NodeId, NO_NODE};
use crate::error::{Error, Result};
use crate::syntax::{DatumId, DatumKind, Span};
use crate::value::Value;
use shared_ir::{BinaryOp, Shape, UnaryOp};

/// Variadic arithmetic with at most this many arguments becomes a chain of binary nodes;
/// longer calls stay one flat node folded at run time (a chain would nest one level deeper
/// per argument).
const FOLD_LIMIT: usize = 8;

impl<'a> Decoder<'a> {
    /// Applies decode options to a primitive (the protected `sqrt` and `log`).
    pub(crate) fn adjust_builtin(&self, b: Builtin) -> Builtin {
        if !self.options.protected_ops {
            return b;
        }
        match b {
            Builtin::Unary(UnaryOp::Log) => Builtin::Unary(UnaryOp::LogProtected),
            Builtin::Unary(UnaryOp::Sqrt) => Builtin::Unary(UnaryOp::SqrtProtected),
            other => other,
        }
    }

    /// `(head args...)` where head is not a keyword.
    pub(crate) fn call(&mut self, d: DatumId, _tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        let head = items[0];
        let args = &items[1..];
        let span = self.span(d);
        match self.kind(head) {
            DatumKind::Symbol(s) => {
                let lexical = self.is_lexical(s);
                if !lexical && !self.globals_contains(s) {
                    let name = self.name_of(s).to_string();
                    return match Builtin::lookup(&name) {
                        Some(b) => self.builtin_call(b, &name, args, span),
                        None => Err(Error::UnknownOperator {
                            name,
                            span: self.span(head),
                        }),
                    };
                }
            }
            DatumKind::Number(_) | DatumKind::Bool(_) | DatumKind::Bracket { .. } => {
                return Err(Error::NotCallable {
                    got: format!("`{}`", self.datum_text(head)),
                    span,
                });
            }
            _ => {}
        }
        let f = self.expr(head, false)?;
        let mut ids = Vec::with_capacity(args.len());
        for &a in args {
            ids.push(self.expr(a, false)?);
        }
        let args = self.list(&ids);
        Ok(self.node(Node::Call { f, args }, span))
    }

    fn globals_contains(&self, s: crate::syntax::Symbol) -> bool {
        self.globals.contains_key(&s) && !self.code.globals[self.globals[&s] as usize].is_input
    }

    fn datum_text(&self, d: DatumId) -> String {
        match self.kind(d) {
            DatumKind::Number(x) => format!("{x}"),
            DatumKind::Bool(b) => (if b { "#t" } else { "#f" }).to_string(),
            DatumKind::Bracket { .. } => "[...]".to_string(),
            _ => "expression".to_string(),
        }
    }

    /// A call of primitive `b`, checked for arity and lowered to the fastest node.
    pub(crate) fn builtin_call(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[DatumId],
        span: Span,
    ) -> Result<NodeId> {
        let b = self.adjust_builtin(b);
        let arity = b.arity();
        if !arity.accepts(args.len()) {
            return Err(Error::ArityMismatch {
                name: name.to_string(),
                expected: arity.describe(),
                got: args.len(),
                span,
            });
        }
        if let Some(shape) = self.literal_shape(b, args) {
            return Ok(self.node(Node::Tensor(b, shape), span));
        }
        let mut ids = Vec::with_capacity(args.len());
        for &a in args {
            ids.push(self.expr(a, false)?);
        }
        let fold = |d: &mut Self, op: BinaryOp, ids: &[NodeId]| {
            let mut acc = ids[0];
            for &x in &ids[1..] {
                acc = d.node(Node::Binary(op, acc, x), span);
            }
            acc
        };
        let linalg = b
            .linalg(self.options.protected_ops)
            .filter(|op| ids.len() == 1 + usize::from(op.binary()));
        if let Some(op) = linalg {
            let node = Node::Linalg(op, ids[0], ids[ids.len() - 1]);
            return Ok(self.node(node, span));
        }
        Ok(match (b, ids.len()) {
            (Builtin::Add, 0) => self.constant(0.0, span),
            (Builtin::Mul, 0) => self.constant(1.0, span),
            (Builtin::Sub, 1) => self.node(Node::Unary(UnaryOp::Neg, ids[0]), span),
            (Builtin::Div, 1) => self.node(Node::Unary(UnaryOp::Recip, ids[0]), span),
            (
                Builtin::Add
                | Builtin::Sub
                | Builtin::Mul
                | Builtin::Div
                | Builtin::Min
                | Builtin::Max,
                n,
            ) if (2..=FOLD_LIMIT).contains(&n) => {
                let op = match b {
                    Builtin::Add => BinaryOp::Add,
                    Builtin::Sub => BinaryOp::Sub,
                    Builtin::Mul => BinaryOp::Mul,
                    Builtin::Div => BinaryOp::Div,
                    Builtin::Min => BinaryOp::Min,
                    _ => BinaryOp::Max,
                };
                fold(self, op, &ids)
            }
            (Builtin::Binary(op), 2) => self.node(Node::Binary(op, ids[0], ids[1]), span),
            (Builtin::Unary(op), 1) => self.node(Node::Unary(op, ids[0]), span),
            (Builtin::Compare(op), 2) => self.node(Node::Compare(op, ids[0], ids[1]), span),
            (Builtin::Scale, 2) => self.node(Node::Scale(ids[0], ids[1]), span),
            (Builtin::Ref, n) => {
                let j = if n == 3 { ids[2] } else { NO_NODE };
                self.node(Node::Ref(ids[0], ids[1], j), span)
            }
            _ => {
                let l = self.list(&ids);
                self.node(Node::Prim(b, l), span)
            }
        })
    }

    /// The shape of a constant-tensor call (`eye`, `zeros`, `ones`, `iota`) whose sizes are
    /// literal non-negative integers (below 2^24, so that they read the same in f32) and
    /// within the size limit; `None` for any other call, which is checked when it runs.
    fn literal_shape(&self, b: Builtin, args: &[DatumId]) -> Option<Shape> {
        if !matches!(
            b,
            Builtin::Eye | Builtin::Zeros | Builtin::Ones | Builtin::Iota
        ) {
            return None;
        }
        let mut sizes = [0u32; 2];
        for (size, &a) in sizes.iter_mut().zip(args) {
            let DatumKind::Number(x) = self.kind(a) else {
                return None;
            };
            if !(x >= 0.0 && x.fract() == 0.0 && x < f64::from(1u32 << 24)) {
                return None;
            }
            *size = x as u32;
        }
        let shape = match (b, args.len()) {
            (Builtin::Eye, _) => Shape::Matrix(sizes[0], sizes[0]),
            (_, 1) => Shape::Vector(sizes[0]),
            _ => Shape::Matrix(sizes[0], sizes[1]),
        };
        builtin::tensor_fits(shape).then_some(shape)
    }

    /// Quoted data: numbers, booleans, symbols, lists and brackets, built fresh by the program.
    pub(crate) fn quoted(&mut self, d: DatumId) -> Result<NodeId> {
        let span = self.span(d);
        match self.kind(d) {
            DatumKind::Number(x) => Ok(self.constant(x, span)),
            DatumKind::Bool(b) => Ok(self.node(Node::Const(Value::Bool(b)), span)),
            DatumKind::Symbol(s) => Ok(self.node(Node::Const(Value::Sym(s)), span)),
            DatumKind::List { len: 0, .. } => Ok(self.node(Node::Const(Value::Nil), span)),
            DatumKind::List { .. } | DatumKind::Bracket { .. } => {
                self.depth += 1;
                if self.depth > super::NESTING_LIMIT {
                    return Err(Error::NestingTooDeep {
                        limit: super::NESTING_LIMIT,
                        span,
                    });
                }
                let items = self.items(d);
                let mut ids = Vec::with_capacity(items.len());
                for &i in items {
                    let r = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.quoted(i));
                    ids.push(r?);
                }
                self.depth -= 1;
                let l = self.list(&ids);
                let b = if matches!(self.kind(d), DatumKind::List { .. }) {
                    Builtin::List
                } else {
                    Builtin::Bracket
                };
                Ok(self.node(Node::Prim(b, l), span))
            }
            DatumKind::Quote(inner) => {
                // `'x` is `(quote x)`: a level of nesting like any list's.
                self.depth += 1;
                if self.depth > super::NESTING_LIMIT {
                    return Err(Error::NestingTooDeep {
                        limit: super::NESTING_LIMIT,
                        span,
                    });
                }
                let quote = self.node(Node::Const(Value::Sym(self.quote_symbol(d)?)), span);
                let q = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.quoted(inner));
                self.depth -= 1;
                let q = q?;
                let l = self.list(&[quote, q]);
                Ok(self.node(Node::Prim(Builtin::List, l), span))
            }
        }
    }

    fn quote_symbol(&self, d: DatumId) -> Result<crate::syntax::Symbol> {
        self.kw_quote()
            .ok_or_else(|| self.bad("quote", "nested quotes need the symbol `quote`", d))
    }

    fn kw_quote(&self) -> Option<crate::syntax::Symbol> {
        self.kw.quote
    }
}
