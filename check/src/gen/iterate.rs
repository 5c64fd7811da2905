//! Lists built and consumed, and loops with a fixed trip count (`loop`/`recur`, closures
//! gathered in a loop). Loop states evolve by contractions, so they stay bounded.

use super::control::P;
use super::core::{lit, Gen, Ty, Var, E};
use super::Family;

impl Gen {
    /// Lists built and consumed.
    pub fn list_num(&mut self, d: u32) -> E {
        self.mark(Family::List);
        let sub = d - 1;
        match self.below(8) {
            0 | 1 => {
                self.mark(Family::Let);
                let l = self.fresh("l");
                let n = 2 + self.below(3);
                let items: Vec<E> = (0..n).map(|_| self.num(sub)).collect();
                let b = items.iter().fold(0.0f64, |m, e| m.max(e.b));
                let texts: Vec<&str> = items.iter().map(|e| e.s.as_str()).collect();
                let var = Var {
                    name: l.clone(),
                    ty: Ty::List(n),
                    b,
                    ib: f64::INFINITY,
                    state: false,
                };
                let body = self.with(vec![var], |g| g.num(sub));
                E::new(
                    format!(
                        "(let (({l} (list {}))) (+ (car (cdr {l})) {}))",
                        texts.join(" "),
                        body.s
                    ),
                    b + body.b,
                )
            }
            2 => {
                self.mark(Family::Define);
                let sum = self.helper("lsum", |h| {
                    format!("(define ({h} l) (if (null? l) 0 (+ (car l) ({h} (cdr l)))))")
                });
                let n = 1 + self.below(4);
                let items: Vec<E> = (0..n).map(|_| self.num(sub)).collect();
                let b = items.iter().map(|e| e.b).sum();
                let texts: Vec<&str> = items.iter().map(|e| e.s.as_str()).collect();
                E::new(format!("({sum} (list {}))", texts.join(" ")), b)
            }
            3 => {
                self.mark(Family::Loop);
                let (l, s) = (self.fresh("l"), self.fresh("s"));
                let items: Vec<E> = (0..2 + self.below(3)).map(|_| self.num(sub)).collect();
                let b = items.iter().map(|e| e.b).sum();
                let texts: Vec<&str> = items.iter().map(|e| e.s.as_str()).collect();
                let (c, _) = self.lit_in(0.3, 1.0);
                E::new(
                    format!(
                        "(loop (({l} (list {})) ({s} 0)) (if (null? {l}) {s} (recur (cdr {l}) (+ (* {c} {s}) (car {l})))))",
                        texts.join(" ")
                    ),
                    b,
                )
            }
            4 => {
                let (a, b) = (self.num(sub), self.num(sub));
                if self.chance(0.5) {
                    E::new(
                        format!("(car (cdr (cons {} (cons {} '()))))", a.s, b.s),
                        b.b,
                    )
                } else {
                    E::new(
                        format!("(+ (car (list {} {})) (* 0.5 (car '(1.5 -2))))", a.s, b.s),
                        a.b + 0.75,
                    )
                }
            }
            5 => {
                self.mark(Family::Vector);
                let n = 2 + self.below(2);
                let l = self.fresh("l");
                let (u, w) = (self.vec_expr(n, sub), self.vec_expr(n, sub));
                E::new(
                    format!(
                        "(let (({l} (list {} {}))) (dot (car {l}) (car (cdr {l}))))",
                        u.s, w.s
                    ),
                    n as f64 * u.b * w.b,
                )
            }
            6 => {
                let (a, b, c) = (self.num(sub), self.num(sub), self.num(sub));
                let test = match self.below(3) {
                    0 => format!("(null? (cdr (list {})))", a.s),
                    1 => format!("(pair? (list {}))", a.s),
                    _ => format!("(eq? (car (list 'u {})) 'u)", a.s),
                };
                E::new(format!("(if {test} {} {})", b.s, c.s), b.b.max(c.b))
            }
            _ => {
                self.mark(Family::Loop);
                self.mark(Family::Define);
                let sum = self.helper("lsum", |h| {
                    format!("(define ({h} l) (if (null? l) 0 (+ (car l) ({h} (cdr l)))))")
                });
                let (k, acc) = (self.fresh("k"), self.fresh("acc"));
                let n = {
                    let n = 1 + self.below(4);
                    self.cap(n)
                };
                let e = self.with(vec![Var::num(&k, n as f64)], |g| {
                    g.repeat(n as f64, |g| g.num(sub))
                });
                E::new(
                    format!(
                        "(loop (({k} 0) ({acc} '())) (if (>= {k} {n}) ({sum} {acc}) (recur (+ {k} 1) (cons {} {acc}))))",
                        e.s
                    ),
                    n as f64 * e.b,
                )
            }
        }
    }

    /// Closures that capture a loop's variables, gathered in a list and called after the loop;
    /// with `count` a per-lane expression, the list's length differs across lanes.
    pub fn closure_list(&mut self, d: u32, count: Option<(String, f64)>) -> E {
        self.mark(Family::Lambda);
        self.mark(Family::List);
        self.mark(Family::Loop);
        self.mark(Family::Define);
        let sub = d - 1;
        let call = self.helper("callsum", |h| {
            format!("(define ({h} fs z) (if (null? fs) 0 (+ ((car fs) z) ({h} (cdr fs) z))))")
        });
        let (k, fs, p) = (self.fresh("k"), self.fresh("fs"), self.fresh("p"));
        let (limit, kb) = count.unwrap_or_else(|| {
            let n = {
                let n = 1 + self.below(5);
                self.cap(n)
            };
            (n.to_string(), n as f64)
        });
        let body = self.with(vec![Var::num(&k, kb), Var::num(&p, P)], |g| {
            g.repeat(kb, |g| g.num(sub))
        });
        let body = self.tame(body, 2.0);
        let z = self.arg(sub);
        E::new(
            format!(
                "(loop (({k} 0) ({fs} '())) (if (>= {k} {limit}) ({call} {fs} {}) (recur (+ {k} 1) (cons (lambda ({p}) {}) {fs}))))",
                z.s, body.s
            ),
            (kb + 1.0) * body.b,
        )
    }

    /// Bounded `loop`/`recur` with a fixed trip count.
    pub fn loop_num(&mut self, d: u32) -> E {
        self.mark(Family::Loop);
        let count = {
            let n = if self.chance(0.2) {
                10 + self.below(30)
            } else {
                2 + self.below(5)
            };
            self.cap(n)
        };
        if self.chance(0.1) {
            return self.closure_list(d, None);
        }
        // The whole loop counts as repeated (its start values too, conservatively).
        self.repeat(count as f64, |g| g.loop_body(d, count))
    }

    fn loop_body(&mut self, d: u32, count: usize) -> E {
        let sub = d - 1;
        let (k, s) = (self.fresh("k"), self.fresh("s"));
        match self.below(4) {
            0 | 1 => {
                let init = self.num(sub);
                let (c, kk) = self.contraction();
                let sb = init.b.max(kk / (1.0 - c));
                let vars = vec![Var::num(&k, count as f64), Var::state(&s, sb)];
                let upd = self.with(vars, |g| g.update(&s, c, kk, sub));
                let (test, swap) = match self.below(4) {
                    0 => (format!("(>= {k} {count})"), false),
                    1 => (format!("(= {k} {count})"), false),
                    2 => (format!("(eq? {k} {count})"), false),
                    _ => (format!("(< {k} {count})"), true),
                };
                let recur = if self.chance(0.2) {
                    // A discarded form before `recur`, which stays in tail position.
                    let e = self.with(vec![Var::num(&k, count as f64)], |g| g.num(sub));
                    format!("(begin {} (recur (+ {k} 1) {upd}))", e.s)
                } else {
                    format!("(recur (+ {k} 1) {upd})")
                };
                let body = if swap {
                    format!("(if {test} {recur} {s})")
                } else if self.chance(0.3) {
                    format!("(cond ({test} {s}) (else {recur}))")
                } else {
                    format!("(if {test} {s} {recur})")
                };
                if self.chance(0.2) {
                    // An internal definition in the loop body.
                    self.mark(Family::Let);
                    let t = self.fresh("t");
                    let (c2, c2v) = self.lit_in(0.2, 0.9);
                    let body = body.replacen(
                        &format!("({test} {s}"),
                        &format!("({test} (+ {s} (* {c2} {t}))"),
                        1,
                    );
                    let body = body.replacen(
                        &format!("(if {test} {s}"),
                        &format!("(if {test} (+ {s} (* {c2} {t}))"),
                        1,
                    );
                    return E::new(
                        format!(
                            "(loop (({k} 0) ({s} {})) (define {t} (sin {s})) {body})",
                            init.s
                        ),
                        sb + c2v,
                    );
                }
                E::new(format!("(loop (({k} 0) ({s} {})) {body})", init.s), sb)
            }
            2 => {
                let s2 = self.fresh("s");
                let (i1, i2) = (self.num(sub), self.num(sub));
                let (c, kk) = self.contraction();
                let b1 = i1.b.max(kk / (1.0 - c));
                let b2 = i2.b.max(kk / (1.0 - c));
                let vars = vec![
                    Var::num(&k, count as f64),
                    Var::state(&s, b1),
                    Var::state(&s2, b2),
                ];
                let (u1, u2) = self.with(vars, |g| {
                    (g.update(&s, c, kk, sub), g.update(&s2, c, kk, sub))
                });
                E::new(
                    format!(
                        "(loop (({k} 0) ({s} {}) ({s2} {})) (if (>= {k} {count}) (- {s} {s2}) (recur (+ {k} 1) {u1} {u2})))",
                        i1.s, i2.s
                    ),
                    b1 + b2,
                )
            }
            _ => {
                self.mark(Family::Vector);
                let n = 2 + self.below(2);
                let v0 = self.vec_expr(n, sub);
                let (c, kk) = self.contraction();
                let ub = v0.b.max(kk / (1.0 - c));
                let vars = vec![
                    Var::num(&k, count as f64),
                    Var {
                        name: s.clone(),
                        ty: Ty::Vec(n),
                        b: ub,
                        ib: f64::INFINITY,
                        state: true,
                    },
                ];
                let w = self.with(vars, |g| {
                    g.stateless(|g| {
                        let w = g.vec_expr(n, sub);
                        g.tame(w, 4.0)
                    })
                });
                let shift = lit(ub + 0.5);
                let alpha = Self::slope(c, kk);
                E::new(
                    format!(
                        "(loop (({k} 0) ({s} {})) (if (>= {k} {count}) (norm (+ {s} {shift})) (recur (+ {k} 1) (+ (* {c} {s}) (* {kk} (sin (+ (* {alpha} {s}) {})))))))",
                        v0.s, w.s
                    ),
                    (n as f64).sqrt() * (2.0 * ub + 0.5),
                )
            }
        }
    }
}
