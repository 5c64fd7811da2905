//! A program read as an expression tree for export: names resolved to Python identifiers, the
//! derived forms (`cond`, `when`, `and`, `let*`, `begin`, internal `define`) written out, and
//! every form no target can express refused with its line and column.

use super::ExportError;
use runtime_cpu::syntax::{read, DatumId, DatumKind, Forms, Interner};
use std::collections::{HashMap, HashSet};

/// An expression of the exported program.
#[derive(Clone, Debug, PartialEq)]
pub enum Ex {
    /// A number.
    Num(f64),
    /// `#t` or `#f`.
    Bool(bool),
    /// A variable: an input, a local or a function, by its Python name.
    Var(String),
    /// A primitive applied to its arguments.
    Prim(&'static str, Vec<Ex>),
    /// `(if c t e)`.
    If(Box<Ex>, Box<Ex>, Box<Ex>),
    /// Sequential bindings, then the body.
    Let(Vec<(String, Ex)>, Box<Ex>),
    /// A function (its Python name, parameters and body), defined then the rest evaluated.
    Def(String, Vec<String>, Box<Ex>, Box<Ex>),
    /// A call of a function value.
    Call(Box<Ex>, Vec<Ex>),
    /// `(loop ((x e) ...) body)`: its variables (Python names, initial values) and body.
    Loop(Vec<(String, Ex)>, Box<Ex>),
    /// `(recur e ...)` of the innermost loop.
    Recur(Vec<Ex>),
}

/// The primitives an export knows, with their argument counts (`usize::MAX`: any, at least
/// the first number).
const PRIMS: &[(&str, usize, usize)] = &[
    ("+", 0, usize::MAX),
    ("-", 1, usize::MAX),
    ("*", 0, usize::MAX),
    ("/", 1, usize::MAX),
    ("min", 1, usize::MAX),
    ("max", 1, usize::MAX),
    ("pow", 2, 2),
    ("expt", 2, 2),
    ("modulo", 2, 2),
    ("remainder", 2, 2),
    ("sin", 1, 1),
    ("cos", 1, 1),
    ("exp", 1, 1),
    ("log", 1, 1),
    ("sqrt", 1, 1),
    ("abs", 1, 1),
    ("=", 2, usize::MAX),
    ("<", 2, usize::MAX),
    (">", 2, usize::MAX),
    ("<=", 2, usize::MAX),
    (">=", 2, usize::MAX),
    ("not", 1, 1),
    ("vec", 0, usize::MAX),
    ("mat", 0, usize::MAX),
    ("eye", 1, 1),
    ("zeros", 1, 2),
    ("ones", 1, 2),
    ("iota", 1, 1),
    ("ref", 2, 3),
    ("dot", 2, 2),
    ("vsum", 1, 1),
    ("vlen", 1, 1),
    ("norm", 1, 1),
    ("normalize", 1, 1),
    ("cross", 2, 2),
    ("matvec", 2, 2),
    ("matmul", 2, 2),
    ("transpose", 1, 1),
    ("trace", 1, 1),
    ("outer", 2, 2),
    ("scale", 2, 2),
    ("det", 1, 1),
    ("logdet", 1, 1),
    ("inv", 1, 1),
    ("solve", 2, 2),
    ("list", 0, usize::MAX),
    ("cons", 2, 2),
    ("car", 1, 1),
    ("cdr", 1, 1),
    ("null?", 1, 1),
    ("pair?", 1, 1),
];

/// What a name means where it is read.
#[derive(Clone, Debug)]
enum Meaning {
    /// A local value or function, by its Python name.
    Local(String),
    /// A local function being defined: calling it from its own body is recursion.
    Defining,
    /// A name a body defines further on: read before its definition.
    Later,
}

/// The tree of a program, and its inputs (their names in the language, in order of first use,
/// with their Python names).
pub struct Lowered {
    /// The program's value.
    pub body: Ex,
    /// `(name, python_name)` of each input.
    pub inputs: Vec<(String, String)>,
}

struct Lower<'a> {
    source: &'a str,
    forms: Forms,
    names: Interner,
    scopes: Vec<HashMap<String, Meaning>>,
    inputs: Vec<(String, String)>,
    used: HashSet<String>,
    loops: usize,
}

/// Reads `source` as an export tree.
pub fn lower(source: &str) -> Result<Lowered, ExportError> {
    let mut names = Interner::default();
    let forms = read(source, &mut names).map_err(|e| ExportError {
        form: String::new(),
        line: None,
        column: None,
        message: format!("the program does not read: {e}"),
    })?;
    if let Some(at) = too_deep(&forms, runtime_cpu::decode::NESTING_LIMIT) {
        let span = forms.get(at).span;
        let (line, column) = span.line_col(source);
        return Err(ExportError {
            form: source[(span.start as usize).min(source.len())..]
                .chars()
                .take(60)
                .collect(),
            line: Some(line),
            column: Some(column),
            message: format!(
                "forms nested more than {} deep",
                runtime_cpu::decode::NESTING_LIMIT
            ),
        });
    }
    let mut l = Lower {
        source,
        forms,
        names,
        scopes: vec![HashMap::new()],
        inputs: Vec::new(),
        used: HashSet::new(),
        loops: 0,
    };
    let top = l.forms.top.clone();
    let body = l.body(&top)?;
    Ok(Lowered {
        body,
        inputs: l.inputs,
    })
}

/// The first datum nested deeper than `limit` (lists, brackets and quotes each a level),
/// found without recursion.
fn too_deep(forms: &Forms, limit: usize) -> Option<DatumId> {
    let mut stack: Vec<(DatumId, usize)> = forms.top.iter().map(|&d| (d, 1)).collect();
    while let Some((d, depth)) = stack.pop() {
        if depth > limit {
            return Some(d);
        }
        match forms.get(d).kind {
            DatumKind::Quote(inner) => stack.push((inner, depth + 1)),
            _ => stack.extend(forms.items(d).iter().map(|&c| (c, depth + 1))),
        }
    }
    None
}

/// Python's keywords and the names the exported code uses itself.
const RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "np", "jnp", "jax", "lax", "torch", "sympy", "math", "program", "inputs",
    "range", "float", "tuple",
];

impl Lower<'_> {
    fn error(&self, at: DatumId, message: impl Into<String>) -> ExportError {
        let span = self.forms.get(at).span;
        let (line, column) = span.line_col(self.source);
        let text = &self.source[(span.start as usize).min(self.source.len())
            ..(span.end as usize).min(self.source.len())];
        let form: String = text.chars().take(60).collect();
        ExportError {
            form,
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// A fresh Python identifier for the language name `name`.
    fn fresh(&mut self, name: &str) -> String {
        let mut base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, 'v');
        }
        if base.starts_with('_') {
            base.insert(0, 'v');
        }
        let mut out = base.clone();
        let mut k = 1;
        while RESERVED.contains(&out.as_str()) || self.used.contains(&out) {
            out = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(out.clone());
        out
    }

    fn symbol(&self, at: DatumId) -> Option<&str> {
        match self.forms.get(at).kind {
            DatumKind::Symbol(s) => Some(self.names.name(s)),
            _ => None,
        }
    }

    fn lookup(&self, name: &str) -> Option<&Meaning> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn bind(&mut self, name: &str, meaning: Meaning) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), meaning);
        }
    }

    /// A body: internal (or top-level) `define`s first, then expressions; the value is the
    /// last one's.
    fn body(&mut self, items: &[DatumId]) -> Result<Ex, ExportError> {
        self.scopes.push(HashMap::new());
        let out = self.body_in_scope(items);
        self.scopes.pop();
        out
    }

    fn body_in_scope(&mut self, items: &[DatumId]) -> Result<Ex, ExportError> {
        let Some((&last, rest)) = items.split_last() else {
            return Err(ExportError {
                form: String::new(),
                line: None,
                column: None,
                message: "an empty body".into(),
            });
        };
        if self.head(last) == Some("define") {
            return Err(self.error(last, "a body must end with an expression, not a `define`"));
        }
        // A body's definitions are in scope over the whole body: a name read before its
        // definition is refused (it would otherwise read an outer binding of the name).
        for &d in rest {
            if self.head(d) == Some("define") {
                if let Some(n) = self.defined_name(d) {
                    self.bind(&n, Meaning::Later);
                }
            }
        }
        let mut steps: Vec<Step> = Vec::new();
        for &d in rest {
            // An expression before the last has no effect (the language has no mutation).
            if self.head(d) == Some("define") {
                steps.push(self.define(d)?);
            }
        }
        let mut value = self.expr(last)?;
        for s in steps.into_iter().rev() {
            value = match s {
                Step::Value(name, e) => Ex::Let(vec![(name, e)], Box::new(value)),
                Step::Fn(name, params, body) => {
                    Ex::Def(name, params, Box::new(body), Box::new(value))
                }
            };
        }
        Ok(value)
    }

    /// The name a `define` defines.
    fn defined_name(&self, at: DatumId) -> Option<String> {
        let target = *self.forms.items(at).get(1)?;
        let name = self.symbol(target).or_else(|| {
            let sig = self.forms.items(target);
            sig.first().and_then(|&d| self.symbol(d))
        })?;
        Some(name.to_string())
    }

    fn head(&self, at: DatumId) -> Option<&str> {
        match self.forms.get(at).kind {
            DatumKind::List { len, .. } if len > 0 => self.symbol(self.forms.items(at)[0]),
            _ => None,
        }
    }

    /// `(define x e)` or `(define (f x ...) body...)`.
    fn define(&mut self, at: DatumId) -> Result<Step, ExportError> {
        let items = self.forms.items(at).to_vec();
        if items.len() < 3 {
            return Err(self.error(at, "bad `define` form"));
        }
        if let Some(name) = self.symbol(items[1]).map(str::to_string) {
            let e = self.expr(items[2])?;
            let py = self.fresh(&name);
            self.bind(&name, Meaning::Local(py.clone()));
            return Ok(Step::Value(py, e));
        }
        let sig = self.forms.items(items[1]).to_vec();
        let Some(name) = sig
            .first()
            .and_then(|&d| self.symbol(d))
            .map(str::to_string)
        else {
            return Err(self.error(at, "bad `define` form"));
        };
        let py = self.fresh(&name);
        self.bind(&name, Meaning::Defining);
        let (params, body) = self.function(&sig[1..], &items[2..])?;
        self.bind(&name, Meaning::Local(py.clone()));
        Ok(Step::Fn(py, params, body))
    }

    /// A function's parameters and body.
    fn function(
        &mut self,
        params: &[DatumId],
        body: &[DatumId],
    ) -> Result<(Vec<String>, Ex), ExportError> {
        self.scopes.push(HashMap::new());
        let mut names = Vec::new();
        for &p in params {
            let Some(n) = self.symbol(p).map(str::to_string) else {
                self.scopes.pop();
                return Err(self.error(p, "a parameter must be a name"));
            };
            let py = self.fresh(&n);
            self.bind(&n, Meaning::Local(py.clone()));
            names.push(py);
        }
        // A loop of an enclosing function cannot be continued from inside this one.
        let loops = std::mem::take(&mut self.loops);
        let out = self.body(body);
        self.loops = loops;
        self.scopes.pop();
        Ok((names, out?))
    }

    fn expr(&mut self, at: DatumId) -> Result<Ex, ExportError> {
        let d = *self.forms.get(at);
        match d.kind {
            DatumKind::Number(x) => Ok(Ex::Num(x)),
            DatumKind::Bool(b) => Ok(Ex::Bool(b)),
            DatumKind::Symbol(s) => {
                let name = self.names.name(s).to_string();
                self.name(at, &name)
            }
            DatumKind::Quote(q) => match self.forms.get(q).kind {
                DatumKind::Number(x) => Ok(Ex::Num(x)),
                DatumKind::Bool(b) => Ok(Ex::Bool(b)),
                DatumKind::List { .. } => self.quoted_list(q),
                DatumKind::Bracket { .. } => {
                    let items = self.forms.items(q).to_vec();
                    self.call_prim(q, "vec", items)
                }
                _ => Err(self.error(
                    at,
                    "quoted data other than numbers and lists of them cannot be exported",
                )),
            },
            DatumKind::Bracket { .. } => {
                let items = self.forms.items(at).to_vec();
                let rows = items
                    .iter()
                    .all(|&i| matches!(self.forms.get(i).kind, DatumKind::Bracket { .. }));
                let prim = if rows && !items.is_empty() {
                    "mat"
                } else {
                    "vec"
                };
                self.call_prim(at, prim, items)
            }
            DatumKind::List { len: 0, .. } => Err(self.error(at, "`()` is not an expression")),
            DatumKind::List { .. } => self.form(at),
        }
    }

    fn name(&mut self, at: DatumId, name: &str) -> Result<Ex, ExportError> {
        match self.lookup(name) {
            Some(Meaning::Local(py)) => Ok(Ex::Var(py.clone())),
            Some(Meaning::Defining) => Err(self.error(
                at,
                format!("`{name}` refers to itself: recursion cannot be exported"),
            )),
            Some(Meaning::Later) => Err(self.error(
                at,
                format!(
                    "`{name}` is used before its definition: define it first (a forward or \
                     mutual reference cannot be exported)"
                ),
            )),
            None if PRIMS.iter().any(|p| p.0 == name) => Err(self.error(
                at,
                format!("the primitive `{name}` used as a value cannot be exported"),
            )),
            None => {
                if let Some((_, py)) = self.inputs.iter().find(|(n, _)| n == name) {
                    return Ok(Ex::Var(py.clone()));
                }
                let py = self.fresh(name);
                self.inputs.push((name.to_string(), py.clone()));
                Ok(Ex::Var(py))
            }
        }
    }

    fn form(&mut self, at: DatumId) -> Result<Ex, ExportError> {
        let items = self.forms.items(at).to_vec();
        let head = self.symbol(items[0]).map(str::to_string);
        let args = &items[1..];
        let local = head.as_deref().is_some_and(|h| self.lookup(h).is_some());
        match head.as_deref() {
            Some(h) if !local => match h {
                "quote" => match args {
                    [q] => match self.forms.get(*q).kind {
                        DatumKind::Number(x) => Ok(Ex::Num(x)),
                        DatumKind::Bool(b) => Ok(Ex::Bool(b)),
                        DatumKind::List { .. } => self.quoted_list(*q),
                        _ => Err(self.error(
                            at,
                            "quoted data other than numbers and lists of them cannot be exported",
                        )),
                    },
                    _ => Err(self.error(at, "bad `quote` form")),
                },
                "if" => match args {
                    [c, t, e] => Ok(Ex::If(
                        Box::new(self.expr(*c)?),
                        Box::new(self.expr(*t)?),
                        Box::new(self.expr(*e)?),
                    )),
                    [_, _] => Err(self.error(
                        at,
                        "an `if` without an else branch (its value is #f there) cannot be exported",
                    )),
                    _ => Err(self.error(at, "bad `if` form")),
                },
                "cond" => self.cond(at, args),
                "when" | "unless" => Err(self.error(
                    at,
                    format!("`{h}` (its value is #f where it does not run) cannot be exported"),
                )),
                "and" | "or" => {
                    let mut xs = Vec::new();
                    for &a in args {
                        xs.push(self.expr(a)?);
                    }
                    if xs.is_empty() {
                        return Ok(Ex::Bool(h == "and"));
                    }
                    if let Some(i) = xs.iter().position(|x| !is_test(x)) {
                        // On values other than tests, `and` and `or` return one of the values.
                        return Err(self.error(
                            args[i],
                            format!(
                                "`{h}` of a value that is not a test (a comparison, `not`, \
                                     `and`, `or`, `#t`, `#f`) cannot be exported: ndvm returns \
                                     the value itself"
                            ),
                        ));
                    }
                    // Nested `if`s: each test runs only where the ones before it leave it to.
                    let last = xs.pop().expect("at least one");
                    Ok(xs.into_iter().rev().fold(last, |acc, x| {
                        if h == "and" {
                            Ex::If(Box::new(x), Box::new(acc), Box::new(Ex::Bool(false)))
                        } else {
                            Ex::If(Box::new(x), Box::new(Ex::Bool(true)), Box::new(acc))
                        }
                    }))
                }
                "begin" => {
                    let Some(&last) = args.last() else {
                        return Err(self.error(at, "bad `begin` form"));
                    };
                    self.expr(last)
                }
                "let" => self.let_form(at, args, false),
                "let*" => self.let_form(at, args, true),
                "letrec" | "letrec*" => self.letrec(at, args),
                "lambda" => {
                    let [params, body @ ..] = args else {
                        return Err(self.error(at, "bad `lambda` form"));
                    };
                    if !matches!(self.forms.get(*params).kind, DatumKind::List { .. }) {
                        return Err(self.error(at, "rest parameters cannot be exported"));
                    }
                    let ps = self.forms.items(*params).to_vec();
                    let (names, body) = self.function(&ps, body)?;
                    let f = self.fresh("fn");
                    Ok(Ex::Def(
                        f.clone(),
                        names,
                        Box::new(body),
                        Box::new(Ex::Var(f)),
                    ))
                }
                "define" => Err(self.error(at, "a `define` here cannot be exported")),
                "loop" => self.loop_form(at, args),
                "recur" => {
                    if self.loops == 0 {
                        return Err(self.error(at, "`recur` outside any `loop`"));
                    }
                    let mut xs = Vec::new();
                    for &a in args {
                        xs.push(self.expr(a)?);
                    }
                    Ok(Ex::Recur(xs))
                }
                _ => {
                    if PRIMS.iter().any(|p| p.0 == h) {
                        self.call_prim(at, h, args.to_vec())
                    } else {
                        Err(self.error(
                            at,
                            format!(
                                "`{h}` cannot be exported (lists, symbols, predicates and \
                                     procedures as data have no counterpart there)"
                            ),
                        ))
                    }
                }
            },
            _ => {
                let f = self.expr(items[0])?;
                let mut xs = Vec::new();
                for &a in args {
                    xs.push(self.expr(a)?);
                }
                Ok(Ex::Call(Box::new(f), xs))
            }
        }
    }

    /// A quoted list of numbers and booleans (`'()`, `'(1 2)`).
    fn quoted_list(&mut self, at: DatumId) -> Result<Ex, ExportError> {
        let mut xs = Vec::new();
        for &d in self.forms.items(at) {
            xs.push(match self.forms.get(d).kind {
                DatumKind::Number(x) => Ex::Num(x),
                DatumKind::Bool(b) => Ex::Bool(b),
                _ => {
                    return Err(self.error(
                        d,
                        "quoted data other than numbers and lists of them cannot be exported",
                    ))
                }
            });
        }
        Ok(Ex::Prim("list", xs))
    }

    fn call_prim(
        &mut self,
        at: DatumId,
        name: &str,
        args: Vec<DatumId>,
    ) -> Result<Ex, ExportError> {
        let Some(&(prim, lo, hi)) = PRIMS.iter().find(|p| p.0 == name) else {
            return Err(self.error(at, format!("`{name}` cannot be exported")));
        };
        if args.len() < lo || args.len() > hi {
            return Err(self.error(at, format!("`{name}`: {} arguments", args.len())));
        }
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            xs.push(self.expr(a)?);
        }
        Ok(Ex::Prim(prim, xs))
    }

    fn cond(&mut self, at: DatumId, clauses: &[DatumId]) -> Result<Ex, ExportError> {
        let Some((&first, rest)) = clauses.split_first() else {
            return Err(self.error(
                at,
                "a `cond` without an `else` (its value is #f where no clause holds) cannot be \
                 exported",
            ));
        };
        let items = self.forms.items(first).to_vec();
        if items.is_empty() {
            return Err(self.error(first, "bad `cond` clause"));
        }
        if self.symbol(items[0]) == Some("else") {
            return self.body(&items[1..]);
        }
        if items.len() == 1 {
            return Err(self.error(first, "a `(test)` clause cannot be exported"));
        }
        let test = self.expr(items[0])?;
        let then = self.body(&items[1..])?;
        let other = self.cond(at, rest)?;
        Ok(Ex::If(Box::new(test), Box::new(then), Box::new(other)))
    }

    /// The `(x e)` pairs of a binding list.
    fn bindings(&self, at: DatumId) -> Result<Vec<(String, DatumId)>, ExportError> {
        let mut out = Vec::new();
        for &b in self.forms.items(at) {
            let pair = self.forms.items(b);
            match (pair, pair.first().and_then(|&n| self.symbol(n))) {
                ([_, e], Some(n)) => out.push((n.to_string(), *e)),
                _ => return Err(self.error(b, "a binding must be `(name expression)`")),
            }
        }
        Ok(out)
    }

    fn let_form(
        &mut self,
        at: DatumId,
        args: &[DatumId],
        sequential: bool,
    ) -> Result<Ex, ExportError> {
        let [list, body @ ..] = args else {
            return Err(self.error(at, "bad `let` form"));
        };
        if self.symbol(*list).is_some() {
            return Err(self.error(
                at,
                "a named `let` cannot be exported (write it as `loop` and `recur`)",
            ));
        }
        let pairs = self.bindings(*list)?;
        let mut bound = Vec::new();
        self.scopes.push(HashMap::new());
        for (n, e) in &pairs {
            // A parallel `let` evaluates every init outside the new names.
            let saved = if sequential { None } else { self.scopes.pop() };
            let v = self.expr(*e);
            if let Some(s) = saved {
                self.scopes.push(s);
            }
            let py = self.fresh(n);
            bound.push((n.clone(), py.clone(), v?));
            if sequential {
                self.bind(n, Meaning::Local(py));
            }
        }
        if !sequential {
            for (n, py, _) in &bound {
                self.bind(n, Meaning::Local(py.clone()));
            }
        }
        let out = self.body(body);
        self.scopes.pop();
        Ok(Ex::Let(
            bound.into_iter().map(|(_, py, v)| (py, v)).collect(),
            Box::new(out?),
        ))
    }

    /// `letrec` whose inits are all `lambda`s that do not call one another: local functions.
    fn letrec(&mut self, at: DatumId, args: &[DatumId]) -> Result<Ex, ExportError> {
        let [list, body @ ..] = args else {
            return Err(self.error(at, "bad `letrec` form"));
        };
        let pairs = self.bindings(*list)?;
        self.scopes.push(HashMap::new());
        for (n, _) in &pairs {
            self.bind(n, Meaning::Later);
        }
        let mut defs = Vec::new();
        for (n, e) in &pairs {
            if self.head(*e) != Some("lambda") {
                self.scopes.pop();
                return Err(self.error(
                    *e,
                    "a `letrec` init other than a `lambda` cannot be exported",
                ));
            }
            let items = self.forms.items(*e).to_vec();
            let py = self.fresh(n);
            self.bind(n, Meaning::Defining);
            let ps = self.forms.items(items[1]).to_vec();
            let f = self.function(&ps, &items[2..]);
            let (params, fbody) = match f {
                Ok(v) => v,
                Err(e) => {
                    self.scopes.pop();
                    return Err(e);
                }
            };
            self.bind(n, Meaning::Local(py.clone()));
            defs.push((py, params, fbody));
        }
        let out = self.body(body);
        self.scopes.pop();
        let mut value = out?;
        for (py, params, fbody) in defs.into_iter().rev() {
            value = Ex::Def(py, params, Box::new(fbody), Box::new(value));
        }
        Ok(value)
    }

    fn loop_form(&mut self, at: DatumId, args: &[DatumId]) -> Result<Ex, ExportError> {
        let [list, body @ ..] = args else {
            return Err(self.error(at, "bad `loop` form"));
        };
        let pairs = self.bindings(*list)?;
        let mut inits = Vec::new();
        for (_, e) in &pairs {
            inits.push(self.expr(*e)?);
        }
        self.scopes.push(HashMap::new());
        let mut vars = Vec::new();
        for ((n, _), init) in pairs.iter().zip(inits) {
            let py = self.fresh(n);
            self.bind(n, Meaning::Local(py.clone()));
            vars.push((py, init));
        }
        self.loops += 1;
        let out = self.body(body);
        self.loops -= 1;
        self.scopes.pop();
        let out = out?;
        check_tail(&out, vars.len(), false).map_err(|m| self.error(at, m))?;
        Ok(Ex::Loop(vars, Box::new(out)))
    }
}

/// Whether `e` is a test: a boolean wherever it is evaluated.
pub fn is_test(e: &Ex) -> bool {
    match e {
        Ex::Bool(_) => true,
        Ex::Prim(p, _) => matches!(
            *p,
            "=" | "<" | ">" | "<=" | ">=" | "not" | "and" | "or" | "null?" | "pair?"
        ),
        Ex::If(_, t, f) => is_test(t) && is_test(f),
        Ex::Let(_, body) => is_test(body),
        _ => false,
    }
}

/// A loop body's `recur`s: only in tail position, each with one argument per variable.
fn check_tail(e: &Ex, arity: usize, inner: bool) -> Result<(), String> {
    match e {
        Ex::Recur(args) => {
            if inner {
                return Err("`recur` is not in tail position of its `loop`".into());
            }
            if args.len() != arity {
                return Err(format!(
                    "`recur` with {} arguments in a loop of {arity} variables",
                    args.len()
                ));
            }
            args.iter().try_for_each(|a| check_tail(a, arity, true))
        }
        Ex::If(c, t, f) => {
            check_tail(c, arity, true)?;
            check_tail(t, arity, inner)?;
            check_tail(f, arity, inner)
        }
        Ex::Let(bs, body) => {
            bs.iter()
                .try_for_each(|(_, v)| check_tail(v, arity, true))?;
            check_tail(body, arity, inner)
        }
        Ex::Def(_, _, fbody, rest) => {
            check_tail(fbody, arity, true)?;
            check_tail(rest, arity, inner)
        }
        Ex::Prim(_, xs) => xs.iter().try_for_each(|x| check_tail(x, arity, true)),
        Ex::Call(f, xs) => {
            check_tail(f, arity, true)?;
            xs.iter().try_for_each(|x| check_tail(x, arity, true))
        }
        // An inner loop's own recurs are its own; its inits are not in tail position.
        Ex::Loop(vars, _) => vars
            .iter()
            .try_for_each(|(_, v)| check_tail(v, arity, true)),
        Ex::Num(_) | Ex::Bool(_) | Ex::Var(_) => Ok(()),
    }
}

enum Step {
    Value(String, Ex),
    Fn(String, Vec<String>, Ex),
}
