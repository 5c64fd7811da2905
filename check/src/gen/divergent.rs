//! Productions whose control flow differs across lanes: branches on per-lane inputs (some of
//! which return values of different structure and so split the batch), and loops and
//! recursion whose trip counts depend on per-lane inputs. Thresholds are placed in the widest
//! gaps between the lanes' values, so every side is taken and no lane sits near a threshold.

use super::core::{lit, Gen, Var, E};
use super::Family;

/// Midpoints of the widest gaps between distinct values, widest first.
fn gaps(vals: &[f64]) -> Vec<f64> {
    let mut v = vals.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let mut g: Vec<(f64, f64)> = v
        .windows(2)
        .map(|w| (w[1] - w[0], 0.5 * (w[0] + w[1])))
        .collect();
    g.sort_by(|a, b| b.0.total_cmp(&a.0));
    g.into_iter().map(|(_, m)| m).collect()
}

/// A threshold text that reads back inside the gap around `m` (three decimals).
fn threshold(m: f64) -> String {
    lit(m)
}

impl Gen {
    /// A per-lane quantity: its text and its value on each lane.
    fn probe(&mut self) -> Option<(String, Vec<f64>)> {
        if self.probes.is_empty() {
            return None;
        }
        let i = self.below(self.probes.len());
        let p = self.probes[i].clone();
        let x = &p.name;
        let (s, f): (String, fn(f64) -> f64) = match self.below(5) {
            0 | 1 => (x.clone(), |x| x),
            2 => (format!("(- {x})"), |x| -x),
            3 => (format!("(* {x} {x})"), |x| x * x),
            _ => (format!("(sin {x})"), f64::sin),
        };
        Some((s, p.vals.iter().map(|&v| f(v)).collect()))
    }

    /// A test that is true on some lanes and false on others (when the lanes differ).
    fn lane_test(&mut self, d: u32) -> String {
        let Some((p, vals)) = self.probe() else {
            // No per-lane input: compare two expressions.
            let (a, b) = (self.num(d), self.num(d));
            return format!("(< {} {})", a.s, b.s);
        };
        let g = gaps(&vals);
        let t = g.first().copied().unwrap_or(vals[0] + 0.5);
        match self.below(6) {
            0 => format!("(< {p} {})", threshold(t)),
            1 => format!("(> {p} {})", threshold(t)),
            2 => format!("(<= {p} {})", threshold(t)),
            3 => format!("(>= {} {p})", threshold(t)),
            4 if g.len() >= 2 => {
                let (lo, hi) = (t.min(g[1]), t.max(g[1]));
                format!("(< {} {p} {})", threshold(lo), threshold(hi))
            }
            _ => format!("(not (< {p} {}))", threshold(t)),
        }
    }

    /// A branch whose outcome differs across lanes.
    pub fn branch_num(&mut self, d: u32) -> E {
        self.mark(Family::Branch);
        let sub = d - 1;
        let test = self.lane_test(sub);
        if self.chance(0.45) {
            return self.branch_more(d, test);
        }
        match self.below(11) {
            0..=2 => {
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(format!("(if {test} {} {})", a.s, b.s), a.b.max(b.b))
            }
            3 => {
                let t2 = self.lane_test(sub);
                let (a, b, c) = (self.num(sub), self.num(sub), self.num(sub));
                E::new(
                    format!("(cond ({test} {}) ({t2} {}) (else {}))", a.s, b.s, c.s),
                    a.b.max(b.b).max(c.b),
                )
            }
            4 => {
                let (a, b) = (self.num(sub), self.num(sub));
                match self.below(4) {
                    0 => E::new(format!("(or (when {test} {}) {})", a.s, b.s), a.b.max(b.b)),
                    1 => E::new(
                        format!("(or (unless {test} {}) {})", a.s, b.s),
                        a.b.max(b.b),
                    ),
                    2 => E::new(format!("(or (if {test} {}) {})", a.s, b.s), a.b.max(b.b)),
                    _ => E::new(
                        format!("(cond ((and {test} {})) (else {}))", a.s, b.s),
                        a.b.max(b.b),
                    ),
                }
            }
            5 => {
                let t2 = self.lane_test(sub);
                let (a, b) = (self.num(sub), self.num(sub));
                let op = if self.chance(0.5) { "and" } else { "or" };
                E::new(
                    format!("(if ({op} {test} {t2}) {} {})", a.s, b.s),
                    a.b.max(b.b),
                )
            }
            6 => {
                self.mark(Family::List);
                self.mark(Family::Let);
                let t = self.fresh("t");
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({t} (if {test} (list {}) {}))) (if (pair? {t}) (car {t}) {t}))",
                        a.s, b.s
                    ),
                    a.b.max(b.b),
                )
            }
            7 => {
                self.mark(Family::List);
                self.mark(Family::Let);
                let t = self.fresh("t");
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({t} (if {test} {} 'none))) (if (symbol? {t}) {} {t}))",
                        a.s, b.s
                    ),
                    a.b.max(b.b),
                )
            }
            8 => {
                self.mark(Family::Lambda);
                self.mark(Family::Math);
                let a = self.num(sub);
                let a = self.tame(a, 4.0);
                if self.chance(0.5) {
                    E::new(format!("((if {test} sin cos) {})", a.s), 1.0)
                } else {
                    let p = self.fresh("p");
                    let e1 = self.with(vec![Var::num(&p, a.b)], |g| g.num(sub));
                    let e2 = self.with(vec![Var::num(&p, a.b)], |g| g.num(sub));
                    E::new(
                        format!(
                            "((if {test} (lambda ({p}) {}) (lambda ({p}) {})) {})",
                            e1.s, e2.s, a.s
                        ),
                        e1.b.max(e2.b),
                    )
                }
            }
            9 => {
                let n = 2 + self.below(2);
                let (u, w, z) = (
                    self.vec_expr(n, sub),
                    self.vec_expr(n, sub),
                    self.vec_expr(n, sub),
                );
                E::new(
                    format!("(dot (if {test} {} {}) {})", u.s, w.s, z.s),
                    n as f64 * u.b.max(w.b) * z.b,
                )
            }
            _ => {
                self.mark(Family::Vector);
                self.mark(Family::Let);
                let t = self.fresh("t");
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({t} (if {test} (vec {} {}) {}))) (if (number? {t}) {t} (vsum {t})))",
                        a.s, b.s, a.s
                    ),
                    2.0 * a.b.max(b.b),
                )
            }
        }
    }

    /// More branches: domains guarded by the test (NaN or infinity on the lanes that do not
    /// take the branch, which must not leak), lane errors in a branch some lanes take, and
    /// merges of closures, pairs, booleans, symbols and primitives.
    fn branch_more(&mut self, d: u32, test: String) -> E {
        let sub = d - 1;
        match self.below(10) {
            0 | 1 => {
                let Some((p, vals)) = self.probe() else {
                    let (a, b) = (self.num(sub), self.num(sub));
                    return E::new(format!("(if {test} {} {})", a.s, b.s), a.b.max(b.b));
                };
                let g = gaps(&vals);
                let t: f64 = lit(g.first().copied().unwrap_or(vals[0] - 0.5))
                    .parse()
                    .expect("a number");
                // The smallest and largest positive distance above the threshold.
                let above: Vec<f64> = vals.iter().map(|v| v - t).filter(|&x| x > 0.0).collect();
                let lo = above.iter().fold(f64::INFINITY, |m, &x| m.min(x)).min(10.0);
                let hi = above.iter().fold(0.0f64, |m, &x| m.max(x)).max(lo);
                let b = self.num(sub);
                let t = lit(t);
                let (s, bound) = match self.below(3) {
                    0 => (
                        format!("(if (> {p} {t}) (sqrt (- {p} {t})) {})", b.s),
                        hi.sqrt().max(b.b),
                    ),
                    1 => (
                        format!("(if (<= {p} {t}) {} (log (- {p} {t})))", b.s),
                        lo.ln().abs().max(hi.ln().abs()).max(b.b),
                    ),
                    _ => {
                        let a = self.num(sub);
                        let a = self.tame(a, 1.0);
                        (
                            format!("(if (> {p} {t}) (/ {} (- {p} {t})) {})", a.s, b.s),
                            (a.b / lo).max(b.b),
                        )
                    }
                };
                E::new(s, bound)
            }
            2 => {
                // Some lanes fail: an index out of range, or a type error.
                let (a, b) = (self.num(sub), self.num(sub));
                let bad = match self.below(3) {
                    0 => format!("(ref (vec {} 1) 2)", a.s),
                    1 => format!("(car {})", a.s),
                    _ => format!("(+ {} 'u)", a.s),
                };
                if self.chance(0.5) {
                    E::new(format!("(if {test} {bad} {})", b.s), b.b)
                } else {
                    E::new(format!("(if {test} {} {bad})", b.s), b.b)
                }
            }
            3 => {
                self.mark(Family::Lambda);
                self.mark(Family::Let);
                let (mk, t, p) = (self.fresh("mk"), self.fresh("t"), self.fresh("p"));
                let body = self.with(vec![Var::num(&t, 3.0), Var::num(&p, 3.0)], |g| g.num(sub));
                let (a, b, c) = (self.num(sub), self.num(sub), self.num(sub));
                let (a, b, c) = (self.tame(a, 3.0), self.tame(b, 3.0), self.tame(c, 3.0));
                E::new(
                    format!(
                        "(let (({mk} (lambda ({t}) (lambda ({p}) {})))) ((if {test} ({mk} {}) ({mk} {})) {}))",
                        body.s, a.s, b.s, c.s
                    ),
                    body.b,
                )
            }
            4 => {
                self.mark(Family::List);
                self.mark(Family::Let);
                let pr = self.fresh("t");
                let (a, b, c, e) = (self.num(sub), self.num(sub), self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({pr} (if {test} (cons {} {}) (cons {} {})))) (+ (car {pr}) (* 0.5 (cdr {pr}))))",
                        a.s, b.s, c.s, e.s
                    ),
                    a.b.max(c.b) + 0.5 * b.b.max(e.b),
                )
            }
            5 => {
                self.mark(Family::List);
                self.mark(Family::Let);
                let l = self.fresh("l");
                let (a, b, c) = (self.num(sub), self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({l} (if {test} (list {} {}) (list {})))) (if (null? (cdr {l})) (car {l}) (+ (car {l}) (car (cdr {l})))))",
                        a.s, b.s, c.s
                    ),
                    (a.b + b.b).max(c.b),
                )
            }
            6 => {
                self.mark(Family::Let);
                let t = self.fresh("t");
                let t2 = self.lane_test(sub);
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(
                    format!("(let (({t} (if {test} {t2} #f))) (if {t} {} {}))", a.s, b.s),
                    a.b.max(b.b),
                )
            }
            7 => {
                self.mark(Family::List);
                self.mark(Family::Let);
                let t = self.fresh("t");
                let (a, b) = (self.num(sub), self.num(sub));
                E::new(
                    format!(
                        "(let (({t} (if {test} 'p 'q))) (if (eq? {t} 'p) {} {}))",
                        a.s, b.s
                    ),
                    a.b.max(b.b),
                )
            }
            8 => {
                self.mark(Family::Lambda);
                let (a, b) = (self.num(sub), self.num(sub));
                let (a, b) = (self.tame(a, 5.0), self.tame(b, 5.0));
                let (f, g, bound) = match self.below(3) {
                    0 => ("+", "*", (a.b + b.b).max(a.b * b.b)),
                    1 => ("-", "max", a.b + b.b),
                    _ => ("min", "+", a.b + b.b),
                };
                E::new(format!("((if {test} {f} {g}) {} {})", a.s, b.s), bound)
            }
            _ => {
                self.mark(Family::Matrix);
                let n = 2 + self.below(2);
                let (m1, m2) = (self.mat_expr(n, sub, true), self.mat_expr(n, sub, true));
                E::new(
                    format!("(logdet (if {test} {} {}))", m1.s, m2.s),
                    n as f64
                        * ((n as f64 * m1.b.max(m2.b)).ln()
                            + (2.0 * m1.ib.max(m2.ib)).max(1.0).ln())
                        + 1.0,
                )
            }
        }
    }

    /// A positive per-lane start value: text and its value on each lane.
    fn start(&mut self) -> Option<(String, Vec<f64>)> {
        let i = self.below(self.probes.len().max(1));
        let p = self.probes.get(i)?.clone();
        let x = &p.name;
        let (s, f): (String, fn(f64) -> f64) = match self.below(3) {
            0 => (format!("(+ 1 (* {x} {x}))"), |x| 1.0 + x * x),
            1 => (format!("(exp {x})"), f64::exp),
            _ => (format!("(+ 2.2 {x})"), |x| 2.2 + x),
        };
        Some((s, p.vals.iter().map(|&v| f(v)).collect()))
    }

    /// A loop or recursion whose trip count differs across lanes.
    pub fn trip_num(&mut self, d: u32) -> E {
        if self.busy() {
            return self.branch_num(d);
        }
        let Some((init, vals)) = self.start() else {
            return self.loop_num(d);
        };
        // At most about 25 trips (a start of e^2 halved by 0.9 down to 0.6).
        self.repeat(25.0, |g| g.trip_body(d, init, vals))
    }

    fn trip_body(&mut self, d: u32, init: String, vals: Vec<f64>) -> E {
        self.mark(Family::Trip);
        if self.chance(0.12) {
            // As many closures as the lane's trip count, in a list of that length.
            let top = vals.iter().fold(0.0f64, |m, &v| m.max(v));
            return self.closure_list(d, Some((format!("(* 1.5 {init})"), 1.5 * top + 1.0)));
        }
        let sub = d - 1;
        let r: f64 = [0.5, 0.6, 0.7, 0.8, 0.9][self.below(5)];
        // The threshold whose trip counts differ the most across lanes.
        let trips = |thr: f64| -> Vec<i32> {
            vals.iter()
                .map(|&v| ((v / thr).ln() / (1.0 / r).ln()).floor().max(-1.0) as i32)
                .collect()
        };
        let mut best = (0usize, 1.0);
        for thr in [0.6, 0.75, 0.9, 1.05, 1.2, 1.35, 1.5] {
            let mut t = trips(thr);
            t.sort_unstable();
            t.dedup();
            if t.len() > best.0 {
                best = (t.len(), thr);
            }
        }
        let thr = best.1;
        let top = vals.iter().fold(0.0f64, |m, &v| m.max(v));
        let (q, s) = (self.fresh("q"), self.fresh("s"));
        let a = self.num(sub);
        let (c, k) = self.contraction();
        let sb = a.b.max(k / (1.0 - c));
        let vars = vec![Var::num(&q, top), Var::state(&s, sb)];
        let upd = self.with(vars.clone(), |g| g.update(&s, c, k, sub));
        match self.below(5) {
            0 | 1 => {
                self.mark(Family::Loop);
                let kv = self.fresh("k");
                let mut fin_vars = vars;
                fin_vars.push(Var::num(&kv, 20.0));
                let fin = self.with(fin_vars, |g| g.num(sub));
                E::new(
                    format!(
                        "(loop (({q} {init}) ({kv} 0) ({s} {})) (if (< {q} {thr}) (+ {s} {}) (recur (* {q} {r}) (+ {kv} 1) {upd})))",
                        a.s, fin.s
                    ),
                    sb + fin.b,
                )
            }
            3 => {
                self.mark(Family::Loop);
                let kv = self.fresh("k");
                let upd = self.with(vec![Var::state(&s, sb), Var::num(&kv, 12.0)], |g| {
                    g.update(&s, c, k, sub)
                });
                E::new(
                    format!(
                        "(loop (({kv} 0) ({s} {})) (if (> {kv} (* 1.5 {init})) {s} (recur (+ {kv} 1) {upd})))",
                        a.s
                    ),
                    sb,
                )
            }
            2 => {
                self.mark(Family::Define);
                let f = self.fresh("f");
                let (p, qq) = (self.fresh("p"), self.fresh("q"));
                let upd = self.isolated(vec![Var::state(&p, sb), Var::num(&qq, top)], |g| {
                    g.update(&p, c, k, sub)
                });
                self.defines.push(format!(
                    "(define ({f} {p} {qq}) (if (< {qq} {thr}) (+ {p} {qq}) ({f} {upd} (* {qq} {r}))))"
                ));
                E::new(format!("({f} {} {init})", a.s), sb + top)
            }
            _ => {
                self.mark(Family::Let);
                let lp = self.fresh("lp");
                E::new(
                    format!(
                        "(let {lp} (({q} {init}) ({s} {})) (if (< {q} {thr}) (- {s} {q}) ({lp} (* {q} {r}) {upd})))",
                        a.s
                    ),
                    sb + top,
                )
            }
        }
    }
}
