//! Binding, procedure, definition, list and loop productions. Every recursion and loop runs a
//! fixed, small number of times here (the lane-dependent ones are in `divergent.rs`), and its
//! state evolves by contractions so that it stays bounded.

use super::core::{Gen, Var, E};
use super::Family;

/// Parameter bound of generated procedures: arguments are scaled to fit it.
pub(super) const P: f64 = 3.0;

impl Gen {
    /// An argument of a generated procedure, scaled to its parameter bound.
    pub fn arg(&mut self, d: u32) -> E {
        let e = self.num(d);
        self.tame(e, P)
    }

    /// `let`, `let*`, `letrec`, named `let` and internal definitions.
    pub fn let_num(&mut self, d: u32) -> E {
        self.mark(Family::Let);
        let sub = d - 1;
        match self.below(6) {
            0 | 1 => {
                let k = 1 + self.below(3);
                let mut binds = Vec::new();
                for _ in 0..k {
                    let name = self.fresh("t");
                    binds.push((name, self.num(sub)));
                }
                let vars = binds.iter().map(|(n, e)| Var::num(n, e.b)).collect();
                let body = self.with(vars, |g| g.num(sub));
                let bs: Vec<String> = binds
                    .iter()
                    .map(|(n, e)| format!("({n} {})", e.s))
                    .collect();
                E::new(format!("(let ({}) {})", bs.join(" "), body.s), body.b)
            }
            2 => {
                let depth = self.scope.len();
                let mut bs = Vec::new();
                for _ in 0..1 + self.below(3) {
                    let name = self.fresh("t");
                    let e = self.num(sub);
                    bs.push(format!("({name} {})", e.s));
                    self.scope.push(Var::num(&name, e.b));
                }
                let body = self.num(sub);
                self.scope.truncate(depth);
                E::new(format!("(let* ({}) {})", bs.join(" "), body.s), body.b)
            }
            3 => {
                self.mark(Family::Lambda);
                let (f, p, n) = (self.fresh("f"), self.fresh("p"), self.fresh("n"));
                let init = self.arg(sub);
                let (c, k) = self.contraction();
                let s = init.b.max(k / (1.0 - c));
                let count = {
                    let n = 1 + self.below(5);
                    self.cap(n)
                };
                let upd = self.with(vec![Var::state(&p, s), Var::num(&n, count as f64)], |g| {
                    g.repeat(count as f64, |g| g.update(&p, c, k, sub))
                });
                let kw = if self.chance(0.5) {
                    "letrec"
                } else {
                    "letrec*"
                };
                E::new(
                    format!(
                        "({kw} (({f} (lambda ({p} {n}) (if (< {n} 1) {p} ({f} {upd} (- {n} 1)))))) ({f} {} {count}))",
                        init.s
                    ),
                    s,
                )
            }
            4 => {
                let (lp, i, sv) = (self.fresh("lp"), self.fresh("i"), self.fresh("s"));
                let init = self.num(sub);
                let (c, k) = self.contraction();
                let s = init.b.max(k / (1.0 - c));
                let count = {
                    let n = 1 + self.below(5);
                    self.cap(n)
                };
                let upd = self.with(vec![Var::state(&sv, s), Var::num(&i, count as f64)], |g| {
                    g.repeat(count as f64, |g| g.update(&sv, c, k, sub))
                });
                E::new(
                    format!(
                        "(let {lp} (({i} 0) ({sv} {})) (if (>= {i} {count}) {sv} ({lp} (+ {i} 1) {upd})))",
                        init.s
                    ),
                    s,
                )
            }
            _ => {
                let (t, g, q) = (self.fresh("t"), self.fresh("g"), self.fresh("q"));
                let a = self.arg(sub);
                let inner = self.with(vec![Var::num(&t, a.b), Var::num(&q, P)], |g| {
                    g.repeat(2.0, |g| g.num(sub))
                });
                let inner = self.tame(inner, P);
                let b = self.with(vec![Var::num(&t, a.b)], |g| g.arg(sub));
                E::new(
                    format!(
                        "(let (({t} {})) (define ({g} {q}) {}) (+ ({g} {}) ({g} {t})))",
                        a.s, inner.s, b.s
                    ),
                    2.0 * inner.b,
                )
            }
        }
    }

    /// `lambda`, closures and higher-order calls.
    pub fn lambda_num(&mut self, d: u32) -> E {
        self.mark(Family::Lambda);
        let sub = d - 1;
        match self.below(8) {
            0 => {
                let (p1, p2) = (self.fresh("p"), self.fresh("p"));
                let (a, b) = (self.num(sub), self.num(sub));
                let body = self.with(vec![Var::num(&p1, a.b), Var::num(&p2, b.b)], |g| g.num(sub));
                E::new(
                    format!("((lambda ({p1} {p2}) {}) {} {})", body.s, a.s, b.s),
                    body.b,
                )
            }
            1 => {
                self.mark(Family::Let);
                let (f, p) = (self.fresh("f"), self.fresh("p"));
                let body = self.with(vec![Var::num(&p, P)], |g| g.repeat(2.0, |g| g.num(sub)));
                let (a, b) = (self.arg(sub), self.arg(sub));
                E::new(
                    format!(
                        "(let (({f} (lambda ({p}) {}))) (+ ({f} {}) ({f} {})))",
                        body.s, a.s, b.s
                    ),
                    2.0 * body.b,
                )
            }
            2 => {
                self.mark(Family::Let);
                let (t, f, p) = (self.fresh("t"), self.fresh("f"), self.fresh("p"));
                let a = self.num(sub);
                let body = self.with(vec![Var::num(&t, a.b), Var::num(&p, P)], |g| g.num(sub));
                let b = self.with(vec![Var::num(&t, a.b)], |g| g.arg(sub));
                E::new(
                    format!(
                        "(let* (({t} {}) ({f} (lambda ({p}) {}))) ({f} {}))",
                        a.s, body.s, b.s
                    ),
                    body.b,
                )
            }
            3 => {
                self.mark(Family::Define);
                let twice = self.helper("twice", |h| format!("(define ({h} g z) (g (g z)))"));
                let p = self.fresh("p");
                let body = self.with(vec![Var::num(&p, P)], |g| g.num(sub));
                let body = self.tame(body, P);
                let a = self.arg(sub);
                E::new(
                    format!("({twice} (lambda ({p}) {}) {})", body.s, a.s),
                    body.b,
                )
            }
            4 => {
                self.mark(Family::Let);
                let (mk, p1, p2) = (self.fresh("mk"), self.fresh("p"), self.fresh("p"));
                let body = self.with(vec![Var::num(&p1, P), Var::num(&p2, P)], |g| g.num(sub));
                let (a, b) = (self.arg(sub), self.arg(sub));
                E::new(
                    format!(
                        "(let (({mk} (lambda ({p1}) (lambda ({p2}) {})))) (({mk} {}) {}))",
                        body.s, a.s, b.s
                    ),
                    body.b,
                )
            }
            5 => {
                self.mark(Family::Let);
                let f = self.fresh("f");
                let a = self.num(sub);
                let (prim, a, b) = match self.below(4) {
                    0 => ("sin", self.tame(a, 4.0), 1.0),
                    1 => ("cos", self.tame(a, 4.0), 1.0),
                    2 => ("abs", a.clone(), a.b),
                    _ => ("-", a.clone(), a.b),
                };
                self.mark(Family::Math);
                E::new(format!("(let (({f} {prim})) ({f} {}))", a.s), b)
            }
            6 => {
                self.mark(Family::List);
                let p = self.fresh("p");
                let e1 = self.with(vec![Var::num(&p, P)], |g| g.num(sub));
                let e2 = self.with(vec![Var::num(&p, P)], |g| g.num(sub));
                let a = self.arg(sub);
                let pick = if self.chance(0.5) {
                    "car"
                } else {
                    "(lambda (l) (car (cdr l)))"
                };
                E::new(
                    format!(
                        "(({pick} (list (lambda ({p}) {}) (lambda ({p}) {}))) {})",
                        e1.s, e2.s, a.s
                    ),
                    e1.b.max(e2.b),
                )
            }
            _ => {
                let (g, z, p) = (self.fresh("g"), self.fresh("z"), self.fresh("p"));
                let body = self.with(vec![Var::num(&p, P)], |g| g.repeat(2.0, |g| g.num(sub)));
                let body = self.tame(body, P);
                let a = self.arg(sub);
                E::new(
                    format!(
                        "((lambda ({g} {z}) ({g} ({g} {z}))) (lambda ({p}) {}) {})",
                        body.s, a.s
                    ),
                    body.b,
                )
            }
        }
    }

    /// Top-level definitions: plain, recursive, mutually recursive, with internal definitions,
    /// and defined values.
    pub fn define_num(&mut self, d: u32) -> E {
        self.mark(Family::Define);
        let sub = d - 1;
        let f = self.fresh("f");
        if self.chance(0.15) && !self.busy() {
            // Deep, non-tail recursion: each level adds a bounded term.
            let n = self.fresh("n");
            let depth = {
                let n = 10 + self.below(40);
                self.cap(n)
            };
            let term = self.isolated(vec![Var::num(&n, depth as f64)], |g| {
                let e = g.repeat(depth as f64, |g| g.num(sub));
                g.tame(e, 4.0)
            });
            let (c, _) = self.lit_in(0.05, 0.3);
            self.defines.push(format!(
                "(define ({f} {n}) (if (< {n} 1) 0 (+ (* {c} (sin {})) ({f} (- {n} 1)))))",
                term.s
            ));
            return E::new(format!("({f} {depth})"), depth as f64 * 0.3);
        }
        match self.below(6) {
            0 => {
                let (p1, p2) = (self.fresh("p"), self.fresh("p"));
                let body = self.isolated(vec![Var::num(&p1, P), Var::num(&p2, P)], |g| g.num(sub));
                self.defines
                    .push(format!("(define ({f} {p1} {p2}) {})", body.s));
                let (a, b) = (self.arg(sub), self.arg(sub));
                E::new(format!("({f} {} {})", a.s, b.s), body.b)
            }
            1 | 2 => {
                let (p, n) = (self.fresh("p"), self.fresh("n"));
                let (c, k) = self.contraction();
                let s = P.max(k / (1.0 - c));
                let count = {
                    let n = 1 + self.below(6);
                    self.cap(n)
                };
                let (upd, base) = self.isolated(vec![Var::state(&p, s), Var::num(&n, 6.0)], |g| {
                    g.repeat(count as f64, |g| {
                        let upd = g.update(&p, c, k, sub);
                        let base = g.num(sub);
                        (upd, g.tame(base, P))
                    })
                });
                let (text, b) = if self.chance(0.5) {
                    (
                        format!("(define ({f} {p} {n}) (if (< {n} 1) {p} ({f} {upd} (- {n} 1))))"),
                        s,
                    )
                } else {
                    let (c2, _) = self.lit_in(0.2, 0.9);
                    (
                        format!(
                            "(define ({f} {p} {n}) (if (< {n} 1) {} (+ (* {c2} {p}) ({f} {upd} (- {n} 1)))))",
                            base.s
                        ),
                        base.b + 6.0 * s,
                    )
                };
                self.defines.push(text);
                let a = self.arg(sub);
                E::new(format!("({f} {} {count})", a.s), b)
            }
            3 => {
                let g2 = self.fresh("f");
                let (p, n) = (self.fresh("p"), self.fresh("n"));
                let (c, k) = self.contraction();
                let s = P.max(k / (1.0 - c));
                let count = {
                    let n = 1 + self.below(6);
                    self.cap(n)
                };
                let (u1, u2) = self.isolated(vec![Var::state(&p, s), Var::num(&n, 6.0)], |g| {
                    g.repeat(count as f64, |g| {
                        (g.update(&p, c, k, sub), g.update(&p, c, k, sub))
                    })
                });
                self.defines.push(format!(
                    "(define ({f} {p} {n}) (if (< {n} 1) {p} ({g2} {u1} (- {n} 1))))"
                ));
                self.defines.push(format!(
                    "(define ({g2} {p} {n}) (if (< {n} 1) (- {p}) ({f} {u2} (- {n} 1))))"
                ));
                let a = self.arg(sub);
                E::new(format!("({f} {} {count})", a.s), s)
            }
            4 => {
                self.mark(Family::Let);
                let (p, g, q) = (self.fresh("p"), self.fresh("g"), self.fresh("q"));
                let (inner, outer) = self.isolated(vec![Var::num(&p, P)], |gen| {
                    let inner = gen.with(vec![Var::num(&q, P)], |gen| gen.num(sub));
                    let inner = gen.tame(inner, P);
                    let outer = gen.arg(sub);
                    (inner, outer)
                });
                self.defines.push(format!(
                    "(define ({f} {p}) (define ({g} {q}) {}) (+ ({g} {p}) ({g} {})))",
                    inner.s, outer.s
                ));
                let a = self.arg(sub);
                E::new(format!("({f} {})", a.s), 2.0 * inner.b)
            }
            _ => {
                let e = self.isolated(Vec::new(), |g| g.num(sub));
                self.defines.push(format!("(define {f} {})", e.s));
                let v = Var::num(&f, e.b);
                self.globals.push(v.clone());
                self.scope.push(v);
                let body = self.num(sub);
                E::new(format!("(+ {f} {})", body.s), e.b + body.b)
            }
        }
    }
}
