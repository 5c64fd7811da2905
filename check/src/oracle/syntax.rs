//! From data to expressions: special forms recognised, names resolved lexically (local, then
//! top-level definition, then primitive, otherwise input), arities of primitives called by
//! name and the placement of `recur` checked, as `docs/language.md` sections 3 and 4 describe.

pub use super::prim::Prim;
use super::reader::Datum;
use std::collections::HashMap;
use std::rc::Rc;

/// An interned name.
pub type Sym = u32;

const KEYWORDS: &[&str] = &[
    "quote", "if", "cond", "else", "when", "unless", "begin", "let", "let*", "letrec", "letrec*",
    "lambda", "define", "loop", "recur", "and", "or",
];

/// A body: internal definitions (evaluated first, in order) and then the other forms.
#[derive(Debug)]
pub struct Body {
    /// `(define x e)`, in order.
    pub defines: Vec<(Sym, Expr)>,
    /// The other forms; the last one gives the value.
    pub forms: Vec<Expr>,
}

/// A `lambda`.
#[derive(Debug)]
pub struct Lambda {
    /// The name it is defined under, for printing.
    pub name: Option<Sym>,
    /// Parameters.
    pub params: Vec<Sym>,
    /// Body.
    pub body: Body,
}

/// A `cond` clause; `test` is `None` for `else`.
#[derive(Debug)]
pub struct Clause {
    /// The test.
    pub test: Option<Expr>,
    /// The body (empty for a `(test)` clause).
    pub body: Vec<Expr>,
}

/// A resolved expression.
#[derive(Debug)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// Quoted data.
    Quote(Rc<Datum>),
    /// A local binding.
    Local(Sym),
    /// A top-level definition.
    Global(Sym),
    /// An input (free name).
    Input(Sym),
    /// A primitive used as a value.
    PrimRef(Prim),
    /// `if`; the else branch is optional.
    If(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    /// `cond`.
    Cond(Vec<Clause>),
    /// `when` (false) or `unless` (true) with its test and body.
    When(bool, Box<Expr>, Vec<Expr>),
    /// `and`.
    And(Vec<Expr>),
    /// `or`.
    Or(Vec<Expr>),
    /// `begin`.
    Begin(Vec<Expr>),
    /// `let`.
    Let(Vec<(Sym, Expr)>, Box<Body>),
    /// Named `let`.
    NamedLet(Sym, Vec<Expr>, Rc<Lambda>),
    /// `let*`.
    LetStar(Vec<(Sym, Expr)>, Box<Body>),
    /// `letrec`, `letrec*`.
    Letrec(Vec<(Sym, Expr)>, Box<Body>),
    /// `lambda`.
    Lambda(Rc<Lambda>),
    /// `loop`.
    Loop(Vec<(Sym, Expr)>, Box<Body>),
    /// `recur`.
    Recur(Vec<Expr>),
    /// A primitive called by name.
    CallPrim(Prim, Vec<Expr>),
    /// Any other call.
    Call(Box<Expr>, Vec<Expr>),
}

/// A top-level form.
#[derive(Debug)]
pub enum Top {
    /// `(define x e)`.
    Define(Sym, Expr),
    /// An expression.
    Expr(Expr),
}

/// The analysed program.
#[derive(Debug)]
pub struct Analysed {
    /// Top-level forms.
    pub forms: Vec<Top>,
    /// Every interned name.
    pub names: Vec<Rc<str>>,
    /// Inputs in order of first use.
    pub inputs: Vec<Sym>,
    /// Number of interned names.
    pub globals: usize,
    /// `sqrt`, `log` and `normalize` clamp their argument to at least 1e-8.
    pub protected: bool,
}

struct Analyser {
    ids: HashMap<Rc<str>, Sym>,
    names: Vec<Rc<str>>,
    top: Vec<bool>,
    inputs: Vec<Sym>,
    scopes: Vec<Vec<Sym>>,
}

/// Where `recur` may appear: tail position of a loop body (with its arity) in this procedure.
#[derive(Clone, Copy)]
struct Tail {
    tail: bool,
    loop_arity: Option<usize>,
}

type R<T> = Result<T, String>;

fn bad<T>(form: &str, why: &str) -> R<T> {
    Err(format!("BadForm: bad `{form}` form: {why}"))
}

impl Analyser {
    fn intern(&mut self, n: &str) -> Sym {
        if let Some(&s) = self.ids.get(n) {
            return s;
        }
        let s = self.names.len() as Sym;
        let rc: Rc<str> = n.into();
        self.ids.insert(rc.clone(), s);
        self.names.push(rc);
        self.top.push(false);
        s
    }

    fn binder(&mut self, d: &Datum, form: &str) -> R<Sym> {
        match d {
            Datum::Sym(n) if KEYWORDS.contains(&&**n) => bad(form, &format!("`{n}` is a keyword")),
            Datum::Sym(n) => Ok(self.intern(n)),
            _ => bad(form, "expected a name"),
        }
    }

    fn is_local(&self, s: Sym) -> bool {
        self.scopes.iter().any(|f| f.contains(&s))
    }

    fn name(&mut self, n: &str) -> R<Expr> {
        if KEYWORDS.contains(&n) {
            return bad(n, "a keyword cannot be used as a value");
        }
        let s = self.intern(n);
        if self.is_local(s) {
            Ok(Expr::Local(s))
        } else if self.top[s as usize] {
            Ok(Expr::Global(s))
        } else if let Some(p) = Prim::from_name(n) {
            Ok(Expr::PrimRef(p))
        } else {
            if !self.inputs.contains(&s) {
                self.inputs.push(s);
            }
            Ok(Expr::Input(s))
        }
    }

    fn bindings(&mut self, d: &Datum, form: &str, t: Tail) -> R<Vec<(Sym, Expr)>> {
        let Datum::List(items) = d else {
            return bad(form, "expected a list of bindings");
        };
        let mut out = Vec::new();
        for b in items {
            match b {
                Datum::List(kv) if kv.len() == 2 => {
                    let s = self.binder(&kv[0], form)?;
                    let e = self.expr(&kv[1], Tail { tail: false, ..t })?;
                    out.push((s, e));
                }
                _ => return bad(form, "a binding must be (name expr)"),
            }
        }
        Ok(out)
    }

    fn no_dups(names: &[Sym], form: &str) -> R<()> {
        for (i, a) in names.iter().enumerate() {
            if names[..i].contains(a) {
                return bad(form, "a name is bound twice");
            }
        }
        Ok(())
    }

    /// A body in a new scope that already holds `bound`.
    fn body(&mut self, forms: &[Datum], bound: Vec<Sym>, form: &str, t: Tail) -> R<Body> {
        let mut defined = Vec::new();
        for f in forms {
            if let Some((s, _)) = self.define_head(f)? {
                if defined.contains(&s) {
                    return bad("define", "a name is defined twice in one body");
                }
                defined.push(s);
            }
        }
        let mut scope = bound;
        scope.extend(&defined);
        self.scopes.push(scope);
        let result = self.body_in_scope(forms, form, t);
        self.scopes.pop();
        result
    }

    fn body_in_scope(&mut self, forms: &[Datum], form: &str, t: Tail) -> R<Body> {
        let n_exprs = forms.iter().filter(|f| !is_define(f)).count();
        if n_exprs == 0 {
            return bad(form, "the body needs a form that is not a definition");
        }
        let mut body = Body {
            defines: Vec::new(),
            forms: Vec::new(),
        };
        let mut seen = 0;
        for f in forms {
            if let Some((s, init)) = self.define_head(f)? {
                let e = self.define_init(s, init, f)?;
                body.defines.push((s, e));
            } else {
                seen += 1;
                let tail = Tail {
                    tail: t.tail && seen == n_exprs,
                    ..t
                };
                body.forms.push(self.expr(f, tail)?);
            }
        }
        Ok(body)
    }

    /// For `(define x e)` or `(define (f p...) body...)`: the name and the rest.
    fn define_head<'d>(&mut self, f: &'d Datum) -> R<Option<(Sym, &'d Datum)>> {
        let Datum::List(items) = f else {
            return Ok(None);
        };
        if items.first().and_then(Datum::as_sym) != Some("define") {
            return Ok(None);
        }
        if items.len() < 3 {
            return bad(
                "define",
                "expected (define name expr) or (define (name param...) body...)",
            );
        }
        let name = match &items[1] {
            Datum::List(sig) if !sig.is_empty() => &sig[0],
            d => d,
        };
        Ok(Some((self.binder(name, "define")?, f)))
    }

    fn define_init(&mut self, s: Sym, f: &Datum, _whole: &Datum) -> R<Expr> {
        let Datum::List(items) = f else {
            unreachable!("checked by define_head")
        };
        match &items[1] {
            Datum::List(sig) => {
                let lam = self.lambda(Some(s), &sig[1..], &items[2..])?;
                Ok(Expr::Lambda(lam))
            }
            _ => {
                if items.len() != 3 {
                    return bad("define", "(define name expr) takes one expression");
                }
                self.expr(
                    &items[2],
                    Tail {
                        tail: false,
                        loop_arity: None,
                    },
                )
            }
        }
    }

    fn lambda(&mut self, name: Option<Sym>, params: &[Datum], body: &[Datum]) -> R<Rc<Lambda>> {
        let ps = params
            .iter()
            .map(|p| self.binder(p, "lambda"))
            .collect::<R<Vec<_>>>()?;
        Self::no_dups(&ps, "lambda")?;
        let b = self.body(
            body,
            ps.clone(),
            "lambda",
            Tail {
                tail: true,
                loop_arity: None,
            },
        )?;
        Ok(Rc::new(Lambda {
            name,
            params: ps,
            body: b,
        }))
    }

    fn seq(&mut self, items: &[Datum], t: Tail) -> R<Vec<Expr>> {
        let n = items.len();
        items
            .iter()
            .enumerate()
            .map(|(i, d)| {
                self.expr(
                    d,
                    Tail {
                        tail: t.tail && i + 1 == n,
                        ..t
                    },
                )
            })
            .collect()
    }

    fn expr(&mut self, d: &Datum, t: Tail) -> R<Expr> {
        match d {
            Datum::Num(x) => Ok(Expr::Num(*x)),
            Datum::Bool(b) => Ok(Expr::Bool(*b)),
            Datum::Sym(n) => self.name(n),
            Datum::Brackets(items) => {
                let args = self.seq(items, Tail { tail: false, ..t })?;
                Ok(Expr::CallPrim(Prim::Brackets, args))
            }
            Datum::List(items) => self.list(items, t),
        }
    }

    fn list(&mut self, items: &[Datum], t: Tail) -> R<Expr> {
        let Some(head) = items.first() else {
            return bad("()", "an empty combination");
        };
        let nt = Tail { tail: false, ..t };
        if let Datum::Sym(k) = head {
            if KEYWORDS.contains(&&**k) {
                return self.special(k, items, t);
            }
        }
        let args = self.seq(&items[1..], nt)?;
        match head {
            Datum::Sym(n) => match self.name(n)? {
                Expr::PrimRef(p) => {
                    let (lo, hi) = p.arity();
                    if args.len() < lo || args.len() > hi {
                        return Err(format!(
                            "ArityMismatch: `{n}` expects {lo} argument(s), got {}",
                            args.len()
                        ));
                    }
                    Ok(Expr::CallPrim(p, args))
                }
                Expr::Input(_) => Err(format!("UnknownOperator: unknown operator `{n}`")),
                f => Ok(Expr::Call(Box::new(f), args)),
            },
            Datum::Num(_) | Datum::Bool(_) | Datum::Brackets(_) => {
                Err(format!("NotCallable: cannot call `{head}`"))
            }
            Datum::List(_) => Ok(Expr::Call(Box::new(self.expr(head, nt)?), args)),
        }
    }

    fn special(&mut self, k: &str, items: &[Datum], t: Tail) -> R<Expr> {
        let nt = Tail { tail: false, ..t };
        let rest = &items[1..];
        match k {
            "quote" => match rest {
                [d] => Ok(Expr::Quote(Rc::new(d.clone()))),
                _ => bad(k, "expected one datum"),
            },
            "if" => match rest {
                [c, a] => Ok(Expr::If(
                    Box::new(self.expr(c, nt)?),
                    Box::new(self.expr(a, t)?),
                    None,
                )),
                [c, a, b] => Ok(Expr::If(
                    Box::new(self.expr(c, nt)?),
                    Box::new(self.expr(a, t)?),
                    Some(Box::new(self.expr(b, t)?)),
                )),
                _ => bad(k, "expected (if test then [else])"),
            },
            "cond" => {
                let mut clauses = Vec::new();
                for (i, c) in rest.iter().enumerate() {
                    let Datum::List(parts) = c else {
                        return bad(k, "a clause must be a list");
                    };
                    let Some(first) = parts.first() else {
                        return bad(k, "an empty clause");
                    };
                    if first.as_sym() == Some("else") {
                        if i + 1 != rest.len() || parts.len() < 2 {
                            return bad(k, "`else` must be last and have a body");
                        }
                        clauses.push(Clause {
                            test: None,
                            body: self.seq(&parts[1..], t)?,
                        });
                    } else {
                        let test = self.expr(first, nt)?;
                        clauses.push(Clause {
                            test: Some(test),
                            body: self.seq(&parts[1..], t)?,
                        });
                    }
                }
                Ok(Expr::Cond(clauses))
            }
            "when" | "unless" => {
                if rest.len() < 2 {
                    return bad(k, "expected a test and a body");
                }
                let c = self.expr(&rest[0], nt)?;
                Ok(Expr::When(
                    k == "unless",
                    Box::new(c),
                    self.seq(&rest[1..], t)?,
                ))
            }
            "and" => Ok(Expr::And(self.seq(rest, t)?)),
            "or" => Ok(Expr::Or(self.seq(rest, t)?)),
            "begin" => {
                if rest.is_empty() || rest.iter().any(is_define) {
                    return bad(k, "needs forms and no definitions");
                }
                Ok(Expr::Begin(self.seq(rest, t)?))
            }
            "let" | "let*" | "letrec" | "letrec*" | "loop" => self.binding_form(k, rest, t),
            "lambda" => match rest {
                [Datum::List(ps), body @ ..] if !body.is_empty() => {
                    Ok(Expr::Lambda(self.lambda(None, ps, body)?))
                }
                _ => bad(k, "expected (lambda (param...) body...)"),
            },
            "define" => bad(
                k,
                "a definition is allowed only at the top level or in a body",
            ),
            "recur" => {
                let Some(arity) = t.loop_arity else {
                    return Err("RecurOutsideLoop: `recur` outside any `loop`".into());
                };
                if !t.tail {
                    return Err(
                        "RecurNotInTail: `recur` is not in tail position of its `loop`".into(),
                    );
                }
                if rest.len() != arity {
                    return Err(format!(
                        "ArityMismatch: `recur` expects {arity} argument(s), got {}",
                        rest.len()
                    ));
                }
                Ok(Expr::Recur(self.seq(rest, nt)?))
            }
            _ => bad(k, "`else` outside `cond`"),
        }
    }

    fn binding_form(&mut self, k: &str, rest: &[Datum], t: Tail) -> R<Expr> {
        if let (Some(Datum::Sym(name)), "let") = (rest.first(), k) {
            // Named let: a procedure `name` called at once; the inits do not see `name`.
            if rest.len() < 3 {
                return bad(k, "expected (let name ((x e) ...) body...)");
            }
            let nt = Tail { tail: false, ..t };
            let bs = self.bindings(&rest[1], k, nt)?;
            let s = self.binder(&rest[0], k)?;
            let _ = name;
            let params: Vec<Sym> = bs.iter().map(|b| b.0).collect();
            Self::no_dups(&params, k)?;
            self.scopes.push(vec![s]);
            let body = self.body(
                &rest[2..],
                params.clone(),
                k,
                Tail {
                    tail: true,
                    loop_arity: None,
                },
            );
            self.scopes.pop();
            let lam = Rc::new(Lambda {
                name: Some(s),
                params,
                body: body?,
            });
            return Ok(Expr::NamedLet(
                s,
                bs.into_iter().map(|b| b.1).collect(),
                lam,
            ));
        }
        if rest.len() < 2 {
            return bad(k, "expected bindings and a body");
        }
        match k {
            "let" | "loop" => {
                let bs = self.bindings(&rest[0], k, t)?;
                let names: Vec<Sym> = bs.iter().map(|b| b.0).collect();
                Self::no_dups(&names, k)?;
                let bt = if k == "loop" {
                    Tail {
                        tail: true,
                        loop_arity: Some(names.len()),
                    }
                } else {
                    t
                };
                let body = Box::new(self.body(&rest[1..], names, k, bt)?);
                Ok(if k == "loop" {
                    Expr::Loop(bs, body)
                } else {
                    Expr::Let(bs, body)
                })
            }
            "let*" => {
                let Datum::List(items) = &rest[0] else {
                    return bad(k, "expected bindings");
                };
                let mut bs = Vec::new();
                let depth = self.scopes.len();
                let mut result = Ok(());
                for b in items {
                    let one = self.bindings(&Datum::List(vec![b.clone()]), k, t);
                    match one {
                        Ok(mut v) => {
                            let (s, e) = v.pop().expect("one binding");
                            self.scopes.push(vec![s]);
                            bs.push((s, e));
                        }
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                let body = result.and_then(|_| self.body(&rest[1..], Vec::new(), k, t));
                self.scopes.truncate(depth);
                Ok(Expr::LetStar(bs, Box::new(body?)))
            }
            _ => {
                let Datum::List(items) = &rest[0] else {
                    return bad(k, "expected bindings");
                };
                let mut names = Vec::new();
                for b in items {
                    match b {
                        Datum::List(kv) if kv.len() == 2 => names.push(self.binder(&kv[0], k)?),
                        _ => return bad(k, "a binding must be (name expr)"),
                    }
                }
                Self::no_dups(&names, k)?;
                self.scopes.push(names);
                let bs = self.bindings(&rest[0], k, Tail { tail: false, ..t });
                let body = bs.and_then(|bs| Ok((bs, self.body(&rest[1..], Vec::new(), k, t)?)));
                self.scopes.pop();
                let (bs, body) = body?;
                Ok(Expr::Letrec(bs, Box::new(body)))
            }
        }
    }
}

fn is_define(d: &Datum) -> bool {
    matches!(d, Datum::List(items) if items.first().and_then(Datum::as_sym) == Some("define"))
}

/// Analyses a whole program.
pub fn analyse(forms: &[Datum]) -> R<Analysed> {
    if forms.is_empty() {
        return Err("EmptyProgram: the program is empty".into());
    }
    let mut a = Analyser {
        ids: HashMap::new(),
        names: Vec::new(),
        top: Vec::new(),
        inputs: Vec::new(),
        scopes: Vec::new(),
    };
    for f in forms {
        if let Some((s, _)) = a.define_head(f)? {
            a.top[s as usize] = true;
        }
    }
    let mut out = Vec::new();
    let top_tail = Tail {
        tail: false,
        loop_arity: None,
    };
    for f in forms {
        if let Some((s, _)) = a.define_head(f)? {
            out.push(Top::Define(s, a.define_init(s, f, f)?));
        } else {
            out.push(Top::Expr(a.expr(f, top_tail)?));
        }
    }
    Ok(Analysed {
        forms: out,
        globals: a.names.len(),
        protected: false,
        names: a.names,
        inputs: a.inputs,
    })
}
