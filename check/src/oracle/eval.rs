//! The oracle's evaluator: plain recursion over the analysed expressions, one lane at a time,
//! with environments as chains of boxed frames.

use super::num::Scalar;
use super::reader::Datum;
use super::syntax::{Analysed, Body, Expr, Lambda, Prim, Sym, Top};
use super::value::{Closure, Env, Frame, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Evaluation steps one run may take before it is stopped (programs that run forever).
pub const MAX_STEPS: u64 = 2_000_000;
/// Nested evaluations one run may make.
pub const MAX_DEPTH: usize = 100_000;

/// How an evaluation stops early.
#[derive(Debug)]
pub enum Stop<N> {
    /// An error, with its message (`Kind: text`).
    Error(String),
    /// `recur` with the new loop values, caught by the innermost loop.
    Recur(Vec<Value<N>>),
}

/// Result of an evaluation.
pub type Res<N, T = Value<N>> = Result<T, Stop<N>>;

/// An error result.
pub fn fail<N, T>(msg: impl Into<String>) -> Res<N, T> {
    Err(Stop::Error(msg.into()))
}

/// How close the evaluation came to a discontinuity of the program (a comparison, `min`/`max`,
/// `abs`, `modulo`/`remainder` changing its outcome).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margins {
    /// The smallest step along the current derivative direction that would change a decision,
    /// to first order (infinite when nothing depends on that direction).
    pub flip: f64,
    /// The smallest decision margin relative to the size of the numbers compared: `|a - b| /
    /// (1 + |a| + |b|)`.
    pub rel: f64,
}

impl Default for Margins {
    fn default() -> Self {
        Margins {
            flip: f64::INFINITY,
            rel: f64::INFINITY,
        }
    }
}

/// One evaluation of a program on one lane.
pub struct Interp<'p, N> {
    pub(super) prog: &'p Analysed,
    globals: RefCell<Vec<Option<Value<N>>>>,
    inputs: Vec<Option<Value<N>>>,
    margins: Cell<Margins>,
    steps: Cell<u64>,
    depth: Cell<usize>,
}

impl<'p, N: Scalar> Interp<'p, N> {
    /// An evaluation with `inputs[s]` bound for each input name `s`.
    pub fn new(prog: &'p Analysed, inputs: Vec<Option<Value<N>>>) -> Self {
        Interp {
            prog,
            globals: RefCell::new(vec![None; prog.globals]),
            inputs,
            margins: Cell::new(Margins::default()),
            steps: Cell::new(0),
            depth: Cell::new(0),
        }
    }

    /// The margins seen so far.
    pub fn margins(&self) -> Margins {
        self.margins.get()
    }

    /// Records a decision that compares `a` with `b`. Comparisons of two integers (loop
    /// counters against their bounds) are exact in any precision and are not recorded.
    pub fn note(&self, a: N, b: N) {
        let (x, y) = (a.val(), b.val());
        let integral = |t: f64| t.fract() == 0.0 && t.abs() < 1e12;
        let diff = a - b;
        if integral(x) && integral(y) && diff.der() == 0.0 {
            return;
        }
        let mut m = self.margins.get();
        let v = diff.val().abs();
        let d = diff.der().abs();
        if d > 0.0 {
            m.flip = m.flip.min(v / d);
        }
        m.rel = m.rel.min(v / (1.0 + x.abs() + y.abs()));
        self.margins.set(m);
    }

    /// Records a decision whose flip distance and relative margin are already known.
    pub fn note_raw(&self, flip: f64, rel: f64) {
        let mut m = self.margins.get();
        m.flip = m.flip.min(flip);
        m.rel = m.rel.min(rel);
        self.margins.set(m);
    }

    /// Runs the top-level forms; the value of the last one.
    pub fn run(&self) -> Result<Value<N>, String> {
        let mut last = None;
        for f in &self.prog.forms {
            let r = match f {
                Top::Define(s, e) => self.eval(e, &None).map(|v| {
                    self.globals.borrow_mut()[*s as usize] = Some(v);
                    Value::Sym(self.prog.names[*s as usize].clone())
                }),
                Top::Expr(e) => self.eval(e, &None),
            };
            match r {
                Ok(v) => last = Some(v),
                Err(Stop::Error(m)) => return Err(m),
                Err(Stop::Recur(_)) => return Err("RecurOutsideLoop".into()),
            }
        }
        last.ok_or_else(|| "EmptyProgram".into())
    }

    fn name(&self, s: Sym) -> &str {
        &self.prog.names[s as usize]
    }

    fn lookup(&self, s: Sym, env: &Env<N>) -> Res<N> {
        let mut cur = env;
        while let Some(f) = cur {
            if let Some(i) = f.names.iter().rposition(|&n| n == s) {
                return match &f.vals.borrow()[i] {
                    Some(v) => Ok(v.clone()),
                    None => fail(format!(
                        "UsedBeforeDefinition: `{}` is used before its definition",
                        self.name(s)
                    )),
                };
            }
            cur = &f.parent;
        }
        fail(format!("UnboundName: local `{}`", self.name(s)))
    }

    /// Evaluates `e` in `env`.
    pub fn eval(&self, e: &Expr, env: &Env<N>) -> Res<N> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return fail("StepBudget: the oracle's step budget is exhausted");
        }
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            return fail("DepthLimit: the oracle's depth limit is exceeded");
        }
        self.depth.set(depth);
        let r = stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.eval_inner(e, env));
        self.depth.set(depth - 1);
        r
    }

    fn eval_inner(&self, e: &Expr, env: &Env<N>) -> Res<N> {
        match e {
            Expr::Num(x) => Ok(Value::Num(N::cst(*x))),
            Expr::Bool(b) => Ok(Value::Bool(*b)),
            Expr::Quote(d) => self.quoted(d),
            Expr::Local(s) => self.lookup(*s, env),
            Expr::Global(s) => match &self.globals.borrow()[*s as usize] {
                Some(v) => Ok(v.clone()),
                None => fail(format!(
                    "UsedBeforeDefinition: `{}` is used before its definition",
                    self.name(*s)
                )),
            },
            Expr::Input(s) => match &self.inputs[*s as usize] {
                Some(v) => Ok(v.clone()),
                None => fail(format!("UnboundName: unbound name `{}`", self.name(*s))),
            },
            Expr::PrimRef(p) => Ok(Value::Prim(*p)),
            Expr::If(c, a, b) => {
                if self.eval(c, env)?.truthy() {
                    self.eval(a, env)
                } else {
                    match b {
                        Some(b) => self.eval(b, env),
                        None => Ok(Value::Bool(false)),
                    }
                }
            }
            Expr::Cond(clauses) => {
                for c in clauses {
                    match &c.test {
                        None => return self.seq(&c.body, env),
                        Some(t) => {
                            let v = self.eval(t, env)?;
                            if v.truthy() {
                                return if c.body.is_empty() {
                                    Ok(v)
                                } else {
                                    self.seq(&c.body, env)
                                };
                            }
                        }
                    }
                }
                Ok(Value::Bool(false))
            }
            Expr::When(unless, c, body) => {
                if self.eval(c, env)?.truthy() != *unless {
                    self.seq(body, env)
                } else {
                    Ok(Value::Bool(false))
                }
            }
            Expr::And(xs) => {
                let mut v = Value::Bool(true);
                for x in xs {
                    v = self.eval(x, env)?;
                    if !v.truthy() {
                        return Ok(v);
                    }
                }
                Ok(v)
            }
            Expr::Or(xs) => {
                let mut v = Value::Bool(false);
                for x in xs {
                    v = self.eval(x, env)?;
                    if v.truthy() {
                        return Ok(v);
                    }
                }
                Ok(v)
            }
            Expr::Begin(xs) => self.seq(xs, env),
            Expr::Let(bs, body) => {
                let vals = bs
                    .iter()
                    .map(|(_, x)| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                let env = frame(bs.iter().map(|b| b.0).collect(), vals, env);
                self.body(body, &env)
            }
            Expr::NamedLet(s, inits, lam) => {
                let args = inits
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                let f = Rc::new(Frame {
                    names: vec![*s],
                    vals: RefCell::new(vec![None]),
                    parent: env.clone(),
                });
                let env = Some(f.clone());
                let clo = Value::Closure(Rc::new(Closure {
                    lambda: lam.clone(),
                    env,
                }));
                f.vals.borrow_mut()[0] = Some(clo.clone());
                self.apply(&clo, args)
            }
            Expr::LetStar(bs, body) => {
                let mut env = env.clone();
                for (s, x) in bs {
                    let v = self.eval(x, &env)?;
                    env = frame(vec![*s], vec![v], &env);
                }
                self.body(body, &env)
            }
            Expr::Letrec(bs, body) => {
                let f = Rc::new(Frame {
                    names: bs.iter().map(|b| b.0).collect(),
                    vals: RefCell::new(vec![None; bs.len()]),
                    parent: env.clone(),
                });
                let env = Some(f.clone());
                for (i, (_, x)) in bs.iter().enumerate() {
                    let v = self.eval(x, &env)?;
                    f.vals.borrow_mut()[i] = Some(v);
                }
                self.body(body, &env)
            }
            Expr::Lambda(lam) => Ok(Value::Closure(Rc::new(Closure {
                lambda: lam.clone(),
                env: env.clone(),
            }))),
            Expr::Loop(bs, body) => {
                let mut vals = bs
                    .iter()
                    .map(|(_, x)| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                let names: Vec<Sym> = bs.iter().map(|b| b.0).collect();
                loop {
                    let inner = frame(names.clone(), vals, env);
                    match self.body(body, &inner) {
                        Err(Stop::Recur(next)) => vals = next,
                        other => return other,
                    }
                    let steps = self.steps.get() + 1;
                    self.steps.set(steps);
                    if steps > MAX_STEPS {
                        return fail("StepBudget: the oracle's step budget is exhausted");
                    }
                }
            }
            Expr::Recur(xs) => {
                let vals = xs
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                Err(Stop::Recur(vals))
            }
            Expr::CallPrim(p, xs) => {
                let args = xs
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                self.prim(*p, args)
            }
            Expr::Call(f, xs) => {
                let f = self.eval(f, env)?;
                let args = xs
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<Res<N, Vec<_>>>()?;
                self.apply(&f, args)
            }
        }
    }

    fn seq(&self, xs: &[Expr], env: &Env<N>) -> Res<N> {
        let mut v = Value::Bool(false);
        for x in xs {
            v = self.eval(x, env)?;
        }
        Ok(v)
    }

    fn body(&self, b: &Body, env: &Env<N>) -> Res<N> {
        if b.defines.is_empty() {
            return self.seq(&b.forms, env);
        }
        let f = Rc::new(Frame {
            names: b.defines.iter().map(|d| d.0).collect(),
            vals: RefCell::new(vec![None; b.defines.len()]),
            parent: env.clone(),
        });
        let env = Some(f.clone());
        for (i, (_, x)) in b.defines.iter().enumerate() {
            let v = self.eval(x, &env)?;
            f.vals.borrow_mut()[i] = Some(v);
        }
        self.seq(&b.forms, &env)
    }

    /// Calls a procedure value.
    pub fn apply(&self, f: &Value<N>, args: Vec<Value<N>>) -> Res<N> {
        match f {
            Value::Closure(c) => {
                let lam: &Lambda = &c.lambda;
                if lam.params.len() != args.len() {
                    let name = lam.name.map_or("#<procedure>", |s| self.name(s));
                    return fail(format!(
                        "ArityMismatch: `{name}` expects {} argument(s), got {}",
                        lam.params.len(),
                        args.len()
                    ));
                }
                let env = frame(lam.params.clone(), args, &c.env);
                self.body(&lam.body, &env)
            }
            Value::Prim(p) => {
                let (lo, hi) = p.arity();
                if args.len() < lo || args.len() > hi {
                    return fail(format!(
                        "ArityMismatch: `{}` expects {lo} argument(s), got {}",
                        p.name(),
                        args.len()
                    ));
                }
                self.prim(*p, args)
            }
            other => fail(format!("NotCallable: cannot call {}", other.kind())),
        }
    }

    fn quoted(&self, d: &Datum) -> Res<N> {
        Ok(match d {
            Datum::Num(x) => Value::Num(N::cst(*x)),
            Datum::Bool(b) => Value::Bool(*b),
            Datum::Sym(s) => Value::Sym(s.clone()),
            Datum::List(items) => {
                let mut v = Value::Nil;
                for x in items.iter().rev() {
                    v = Value::Pair(Rc::new((self.quoted(x)?, v)));
                }
                v
            }
            Datum::Brackets(items) => {
                let vals = items
                    .iter()
                    .map(|x| self.quoted(x))
                    .collect::<Res<N, Vec<_>>>()?;
                self.prim(Prim::Brackets, vals)?
            }
        })
    }
}

fn frame<N>(names: Vec<Sym>, vals: Vec<Value<N>>, parent: &Env<N>) -> Env<N> {
    Some(Rc::new(Frame {
        names,
        vals: RefCell::new(vals.into_iter().map(Some).collect()),
        parent: parent.clone(),
    }))
}
