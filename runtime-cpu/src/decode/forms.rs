//! Special forms: `quote if cond when unless and or begin let let* letrec letrec* lambda define
//! loop recur`.

use super::scope::{FnScope, LoopCtx};
use super::Decoder;
use crate::code::{LambdaInfo, Node, NodeId};
use crate::error::{Error, Result};
use crate::syntax::{DatumId, DatumKind, Symbol};
use crate::value::Value;

impl<'a> Decoder<'a> {
    /// A parenthesised form: a special form or a call.
    pub(crate) fn combination(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        let head = items[0];
        let Some(s) = self.symbol(head) else {
            return self.call(d, tail);
        };
        if self.kw.is_soft(s) && self.is_bound(s) {
            // `loop` and `recur` are ordinary names where the program binds them.
            return self.call(d, tail);
        }
        let kw = &self.kw;
        let s = Some(s);
        if s == kw.quote {
            self.arity_exact("quote", d, 1)?;
            return self.quoted(items[1]);
        }
        if s == kw.r#if {
            return self.if_form(d, tail);
        }
        if s == kw.cond {
            return self.cond_form(d, tail);
        }
        if s == kw.when || s == kw.unless {
            return self.when_form(d, tail, s == kw.unless);
        }
        if s == kw.and || s == kw.or {
            let args = &items[1..];
            return self.and_or(d, args, tail, s == kw.and);
        }
        if s == kw.begin {
            if items.len() < 2 {
                return Err(self.bad("begin", "needs at least one expression", d));
            }
            return self.seq(&items[1..], tail);
        }
        if s == kw.r#let {
            return self.let_form(d, tail);
        }
        if s == kw.let_star {
            return self.let_star_form(d, tail);
        }
        if s == kw.letrec || s == kw.letrec_star {
            return self.letrec_form(d, tail);
        }
        if s == kw.lambda {
            if items.len() < 3 {
                return Err(self.bad("lambda", "expected (lambda (params...) body...)", d));
            }
            return self.lambda(items[1], &items[2..], None, d);
        }
        if s == kw.define {
            return Err(self.bad(
                "define",
                "`define` is only allowed at the top level or at the start of a body",
                d,
            ));
        }
        if s == kw.r#loop {
            return self.loop_form(d);
        }
        if s == kw.recur {
            return self.recur_form(d, tail);
        }
        if s == kw.r#else {
            return Err(self.bad(
                "else",
                "`else` is only allowed as the last clause of `cond`",
                d,
            ));
        }
        self.call(d, tail)
    }

    fn arity_exact(&self, form: &'static str, d: DatumId, n: usize) -> Result<()> {
        if self.items(d).len() != n + 1 {
            return Err(self.bad(form, format!("expects {n} subform(s)"), d));
        }
        Ok(())
    }

    fn if_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        if !(3..=4).contains(&items.len()) {
            return Err(self.bad("if", "expected (if test then [else])", d));
        }
        let test = self.expr(items[1], false)?;
        let then = self.expr(items[2], tail)?;
        let other = match items.get(3) {
            Some(&e) => self.expr(e, tail)?,
            None => self.node(Node::Const(Value::Bool(false)), self.span(d)),
        };
        Ok(self.node(Node::If { test, then, other }, self.span(d)))
    }

    fn cond_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let clauses = &self.items(d)[1..];
        let span = self.span(d);
        let mut acc = self.node(Node::Const(Value::Bool(false)), span);
        for (i, &clause) in clauses.iter().enumerate().rev() {
            let parts = match self.kind(clause) {
                DatumKind::List { len, .. } if len > 0 => self.items(clause),
                _ => return Err(self.bad("cond", "each clause must be (test body...)", clause)),
            };
            if self.symbol(parts[0]).is_some() && self.symbol(parts[0]) == self.kw.r#else {
                if i != clauses.len() - 1 {
                    return Err(self.bad("cond", "`else` must be the last clause", clause));
                }
                if parts.len() < 2 {
                    return Err(self.bad("cond", "`else` needs a body", clause));
                }
                acc = self.seq(&parts[1..], tail)?;
                continue;
            }
            if parts.len() == 1 {
                // (test): the value of the test where it is true.
                let temp = self.scope().reserve(1);
                let test = self.expr(parts[0], false)?;
                acc = self.or_node(temp, test, acc, self.span(clause));
                continue;
            }
            let test = self.expr(parts[0], false)?;
            let then = self.seq(&parts[1..], tail)?;
            acc = self.node(
                Node::If {
                    test,
                    then,
                    other: acc,
                },
                self.span(clause),
            );
        }
        Ok(acc)
    }

    fn when_form(&mut self, d: DatumId, tail: bool, unless: bool) -> Result<NodeId> {
        let items = self.items(d);
        let form = if unless { "unless" } else { "when" };
        if items.len() < 3 {
            return Err(self.bad(form, format!("expected ({form} test body...)"), d));
        }
        let test = self.expr(items[1], false)?;
        let body = self.seq(&items[2..], tail)?;
        let none = self.node(Node::Const(Value::Bool(false)), self.span(d));
        let (then, other) = if unless { (none, body) } else { (body, none) };
        Ok(self.node(Node::If { test, then, other }, self.span(d)))
    }

    fn and_or(&mut self, d: DatumId, args: &[DatumId], tail: bool, and: bool) -> Result<NodeId> {
        let span = self.span(d);
        let Some((&last, init)) = args.split_last() else {
            return Ok(self.node(Node::Const(Value::Bool(and)), span));
        };
        // The temporary of `or` is reserved first so that no subform's locals share its slot.
        let temp = self.scope().reserve(1);
        let mut acc = self.expr(last, tail)?;
        for &a in init.iter().rev() {
            let test = self.expr(a, false)?;
            acc = if and {
                let f = self.node(Node::Const(Value::Bool(false)), span);
                self.node(
                    Node::If {
                        test,
                        then: acc,
                        other: f,
                    },
                    span,
                )
            } else {
                self.or_node(temp, test, acc, span)
            };
        }
        Ok(acc)
    }

    /// `test` where it is true, else `other`: binds the test to the temporary `slot`.
    fn or_node(
        &mut self,
        slot: u32,
        test: NodeId,
        other: NodeId,
        span: crate::syntax::Span,
    ) -> NodeId {
        let t1 = self.node(Node::Local(slot), span);
        let t2 = self.node(Node::Local(slot), span);
        let branch = self.node(
            Node::If {
                test: t1,
                then: t2,
                other,
            },
            span,
        );
        self.node(
            Node::Bind {
                slot,
                init: test,
                body: branch,
            },
            span,
        )
    }

    /// A sequence of expressions; the last is in tail position.
    pub(crate) fn seq(&mut self, items: &[DatumId], tail: bool) -> Result<NodeId> {
        let last = items.len() - 1;
        let mut ids = Vec::with_capacity(items.len());
        for (i, &e) in items.iter().enumerate() {
            ids.push(self.expr(e, tail && i == last)?);
        }
        if ids.len() == 1 {
            return Ok(ids[0]);
        }
        let span = self.span(items[0]).to(self.span(items[last]));
        let l = self.list(&ids);
        Ok(self.node(Node::Seq(l), span))
    }

    /// Parses `((name init) ...)`.
    fn bindings(&self, form: &'static str, d: DatumId) -> Result<Vec<(Symbol, DatumId, DatumId)>> {
        if !matches!(self.kind(d), DatumKind::List { .. }) {
            return Err(self.bad(form, "expected a list of bindings ((name value) ...)", d));
        }
        let mut out: Vec<(Symbol, DatumId, DatumId)> = Vec::new();
        for &b in self.items(d) {
            let parts = self.items(b);
            if !matches!(self.kind(b), DatumKind::List { .. }) || parts.len() != 2 {
                return Err(self.bad(form, "each binding must be (name value)", b));
            }
            let name = self.binder(form, parts[0])?;
            out.push((name, parts[1], b));
        }
        Ok(out)
    }

    fn no_duplicates(&self, form: &'static str, names: &[(Symbol, DatumId)]) -> Result<()> {
        for (i, (n, d)) in names.iter().enumerate() {
            if names[..i].iter().any(|(m, _)| m == n) {
                return Err(self.bad(form, format!("`{}` is bound twice", self.name_of(*n)), *d));
            }
        }
        Ok(())
    }

    fn let_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        if items.len() >= 2 && self.symbol(items[1]).is_some() {
            return self.named_let(d, tail);
        }
        if items.len() < 3 {
            return Err(self.bad("let", "expected (let ((name value) ...) body...)", d));
        }
        let binds = self.bindings("let", items[1])?;
        let names: Vec<_> = binds.iter().map(|&(n, _, b)| (n, b)).collect();
        self.no_duplicates("let", &names)?;
        let mark = self.scope().mark();
        let slot = self.scope().reserve(binds.len() as u32);
        let mut inits = Vec::with_capacity(binds.len());
        for &(_, init, _) in &binds {
            inits.push(self.expr(init, false)?);
        }
        for (i, &(name, _, _)) in binds.iter().enumerate() {
            self.scope().bind(name, slot + i as u32);
        }
        let body = self.body("let", &items[2..], tail, d)?;
        self.scope().release(mark);
        let span = self.span(d);
        Ok(match inits.len() {
            0 => body,
            1 => self.node(
                Node::Bind {
                    slot,
                    init: inits[0],
                    body,
                },
                span,
            ),
            _ => {
                let inits = self.list(&inits);
                self.node(Node::Let { slot, inits, body }, span)
            }
        })
    }

    /// `(let name ((v init) ...) body...)`: a local recursive procedure called at once.
    fn named_let(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        if items.len() < 4 {
            return Err(self.bad("let", "expected (let name ((var init) ...) body...)", d));
        }
        let name = self.binder("let", items[1])?;
        let binds = self.bindings("let", items[2])?;
        let mark = self.scope().mark();
        let slot = self.scope().reserve(1);
        let mut args = Vec::with_capacity(binds.len());
        for &(_, init, _) in &binds {
            args.push(self.expr(init, false)?);
        }
        self.scope().bind(name, slot);
        let params: Vec<Symbol> = binds.iter().map(|&(n, _, _)| n).collect();
        let names: Vec<_> = binds.iter().map(|&(n, _, b)| (n, b)).collect();
        self.no_duplicates("let", &names)?;
        let lambda = self.lambda_with(&params, &items[3..], Some(name), d)?;
        let span = self.span(d);
        let f = self.node(Node::Local(slot), span);
        let args = self.list(&args);
        let call = self.node(Node::Call { f, args }, span);
        let _ = tail;
        let inits = self.list(&[lambda]);
        self.scope().release(mark);
        Ok(self.node(
            Node::Letrec {
                slot,
                inits,
                body: call,
            },
            span,
        ))
    }

    fn let_star_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        if items.len() < 3 {
            return Err(self.bad("let*", "expected (let* ((name value) ...) body...)", d));
        }
        let binds = self.bindings("let*", items[1])?;
        let mark = self.scope().mark();
        let mut steps = Vec::with_capacity(binds.len());
        for &(name, init, b) in &binds {
            let init = self.expr(init, false)?;
            let slot = self.scope().reserve(1);
            self.scope().bind(name, slot);
            steps.push((slot, init, b));
        }
        let mut body = self.body("let*", &items[2..], tail, d)?;
        self.scope().release(mark);
        for &(slot, init, b) in steps.iter().rev() {
            let span = self.span(b).to(self.span(d));
            body = self.node(Node::Bind { slot, init, body }, span);
        }
        Ok(body)
    }

    fn letrec_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let items = self.items(d);
        if items.len() < 3 {
            return Err(self.bad("letrec", "expected (letrec ((name value) ...) body...)", d));
        }
        let binds = self.bindings("letrec", items[1])?;
        let names: Vec<_> = binds.iter().map(|&(n, _, b)| (n, b)).collect();
        self.no_duplicates("letrec", &names)?;
        let mark = self.scope().mark();
        let slot = self.scope().reserve(binds.len() as u32);
        for (i, &(name, _, _)) in binds.iter().enumerate() {
            self.scope().bind(name, slot + i as u32);
        }
        let mut inits = Vec::with_capacity(binds.len());
        for &(name, init, _) in &binds {
            inits.push(self.named_expr(init, name)?);
        }
        let body = self.body("letrec", &items[2..], tail, d)?;
        self.scope().release(mark);
        let inits = self.list(&inits);
        Ok(self.node(Node::Letrec { slot, inits, body }, self.span(d)))
    }

    /// An init expression; a lambda is given the binding's name.
    fn named_expr(&mut self, init: DatumId, name: Symbol) -> Result<NodeId> {
        let parts = self.items(init);
        if matches!(self.kind(init), DatumKind::List { .. })
            && parts.len() >= 3
            && self.symbol(parts[0]).is_some()
            && self.symbol(parts[0]) == self.kw.lambda
            && !self.is_lexical(self.symbol(parts[0]).expect("checked"))
        {
            return self.lambda(parts[1], &parts[2..], Some(name), init);
        }
        self.expr(init, false)
    }

    /// A body: internal `define`s (scoped over the whole body, like `letrec*`) then expressions.
    pub(crate) fn body(
        &mut self,
        form: &'static str,
        items: &[DatumId],
        tail: bool,
        whole: DatumId,
    ) -> Result<NodeId> {
        let mut defines = Vec::new();
        let mut exprs = Vec::new();
        for &e in items {
            match self.definition_name(e)? {
                Some(_) if !exprs.is_empty() => {
                    return Err(self.bad(
                        "define",
                        "internal definitions must come before the body's expressions",
                        e,
                    ));
                }
                Some((name, _)) => defines.push((name, e)),
                None => exprs.push(e),
            }
        }
        if exprs.is_empty() {
            return Err(self.bad(
                form,
                "the body has no expression after its definitions",
                whole,
            ));
        }
        if defines.is_empty() {
            return self.seq(&exprs, tail);
        }
        let names: Vec<_> = defines.iter().map(|&(n, e)| (n, e)).collect();
        self.no_duplicates("define", &names)?;
        let mark = self.scope().mark();
        let slot = self.scope().reserve(defines.len() as u32);
        for (i, &(name, _)) in defines.iter().enumerate() {
            self.scope().bind(name, slot + i as u32);
        }
        let mut inits = Vec::with_capacity(defines.len());
        for &(name, e) in &defines {
            inits.push(self.define_value(e, name)?);
        }
        let body = self.seq(&exprs, tail)?;
        self.scope().release(mark);
        let inits = self.list(&inits);
        Ok(self.node(Node::Letrec { slot, inits, body }, self.span(whole)))
    }

    /// The value of `(define name e)` or `(define (name params...) body...)`.
    pub(crate) fn define_value(&mut self, d: DatumId, name: Symbol) -> Result<NodeId> {
        let items = self.items(d);
        let target = items[1];
        match self.kind(target) {
            DatumKind::List { .. } => {
                if items.len() < 3 {
                    return Err(self.bad("define", "the procedure has no body", d));
                }
                let params = &self.items(target)[1..];
                let params = self.params(params)?;
                self.lambda_with(&params, &items[2..], Some(name), d)
            }
            _ => {
                if items.len() != 3 {
                    return Err(self.bad("define", "expected (define name value)", d));
                }
                self.named_expr(items[2], name)
            }
        }
    }

    /// Top-level `define`: a store into its global.
    pub(crate) fn top_define(&mut self, d: DatumId) -> Result<NodeId> {
        let (name, _) = self.definition_name(d)?.expect("caller checked");
        let init = self.define_value(d, name)?;
        let global = self.globals[&name];
        Ok(self.node(Node::Define { global, init }, self.span(d)))
    }

    fn params(&self, ds: &[DatumId]) -> Result<Vec<Symbol>> {
        let mut out = Vec::with_capacity(ds.len());
        for &p in ds {
            let s = self.binder("lambda", p)?;
            if out.contains(&s) {
                return Err(self.bad(
                    "lambda",
                    format!("parameter `{}` appears twice", self.name_of(s)),
                    p,
                ));
            }
            out.push(s);
        }
        Ok(out)
    }

    /// `(lambda params body...)`.
    pub(crate) fn lambda(
        &mut self,
        params: DatumId,
        body: &[DatumId],
        name: Option<Symbol>,
        whole: DatumId,
    ) -> Result<NodeId> {
        if !matches!(self.kind(params), DatumKind::List { .. }) {
            return Err(self.bad(
                "lambda",
                "parameters must be a list of names (rest parameters are not supported)",
                params,
            ));
        }
        let params = self.params(self.items(params))?;
        self.lambda_with(&params, body, name, whole)
    }

    fn lambda_with(
        &mut self,
        params: &[Symbol],
        body: &[DatumId],
        name: Option<Symbol>,
        whole: DatumId,
    ) -> Result<NodeId> {
        let mut scope = FnScope::default();
        let first = scope.reserve(params.len() as u32);
        for (i, &p) in params.iter().enumerate() {
            scope.bind(p, first + i as u32);
        }
        self.fns.push(scope);
        let body = self.body("lambda", body, false, whole);
        let scope = self.fns.pop().expect("pushed above");
        let body = body?;
        let id = self.code.lambdas.len() as u32;
        self.code.lambdas.push(LambdaInfo {
            name,
            params: params.len() as u32,
            frame: scope.max_slot,
            body,
            captures: scope.captures.iter().map(|&(_, c)| c).collect(),
            span: self.span(whole),
        });
        Ok(self.node(Node::Lambda(id), self.span(whole)))
    }

    fn loop_form(&mut self, d: DatumId) -> Result<NodeId> {
        let items = self.items(d);
        if items.len() < 3 {
            return Err(self.bad("loop", "expected (loop ((var init) ...) body...)", d));
        }
        let binds = self.bindings("loop", items[1])?;
        let names: Vec<_> = binds.iter().map(|&(n, _, b)| (n, b)).collect();
        self.no_duplicates("loop", &names)?;
        let mark = self.scope().mark();
        let slot = self.scope().reserve(binds.len() as u32);
        let mut inits = Vec::with_capacity(binds.len());
        for &(_, init, _) in &binds {
            inits.push(self.expr(init, false)?);
        }
        for (i, &(name, _, _)) in binds.iter().enumerate() {
            self.scope().bind(name, slot + i as u32);
        }
        self.scope().loops.push(LoopCtx {
            slot,
            arity: binds.len() as u32,
        });
        let body = self.body("loop", &items[2..], true, d);
        self.scope().loops.pop();
        let body = body?;
        self.scope().release(mark);
        let inits = self.list(&inits);
        Ok(self.node(Node::Loop { slot, inits, body }, self.span(d)))
    }

    fn recur_form(&mut self, d: DatumId, tail: bool) -> Result<NodeId> {
        let span = self.span(d);
        let Some(&ctx) = self.scope().loops.last() else {
            return Err(Error::RecurOutsideLoop { span });
        };
        if !tail {
            return Err(Error::RecurNotInTail { span });
        }
        let args = &self.items(d)[1..];
        if args.len() != ctx.arity as usize {
            return Err(Error::ArityMismatch {
                name: "recur".into(),
                expected: format!("{} (the loop's variables)", ctx.arity),
                got: args.len(),
                span,
            });
        }
        let mut ids = Vec::with_capacity(args.len());
        for &a in args {
            ids.push(self.expr(a, false)?);
        }
        let args = self.list(&ids);
        Ok(self.node(
            Node::Recur {
                slot: ctx.slot,
                args,
            },
            span,
        ))
    }
}
