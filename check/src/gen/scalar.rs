//! Scalar productions: arithmetic, math functions, and expressions positive by construction.

use super::core::{Gen, E};
use super::Family;

impl Gen {
    /// Arithmetic: `+ - * /`, `min`, `max`, integer powers, `modulo`, `remainder`.
    pub fn arith(&mut self, d: u32) -> E {
        self.mark(Family::Arith);
        match self.below(13) {
            0 | 1 => {
                let (a, b) = (self.num(d - 1), self.num(d - 1));
                E::new(format!("(+ {} {})", a.s, b.s), a.b + b.b)
            }
            2 => {
                let (a, b, c) = (self.num(d - 1), self.num(d - 1), self.num(d - 1));
                E::new(format!("(+ {} {} {})", a.s, b.s, c.s), a.b + b.b + c.b)
            }
            3 => {
                let (a, b) = (self.num(d - 1), self.num(d - 1));
                if self.chance(0.3) {
                    let c = self.num(d - 1);
                    return E::new(format!("(- {} {} {})", a.s, b.s, c.s), a.b + b.b + c.b);
                }
                E::new(format!("(- {} {})", a.s, b.s), a.b + b.b)
            }
            4 => {
                let a = self.num(d - 1);
                E::new(format!("(- {})", a.s), a.b)
            }
            5 | 6 => {
                let (a, b) = (self.num(d - 1), self.num(d - 1));
                E::new(format!("(* {} {})", a.s, b.s), a.b * b.b)
            }
            7 => {
                let a = self.num(d - 1);
                let q = self.num(d - 1);
                let q = self.tame(q, 5.0);
                let c = [0.5, 1.0, 2.0][self.below(3)];
                E::new(format!("(/ {} (+ {c} (* {} {})))", a.s, q.s, q.s), a.b / c)
            }
            8 => {
                let a = self.num(d - 1);
                let (c, x) = self.lit_in(0.5, 3.0);
                let (c, x) = if self.chance(0.3) {
                    (format!("-{c}"), -x)
                } else {
                    (c, x)
                };
                if self.chance(0.3) {
                    let q = self.num(d - 1);
                    let q = self.tame(q, 3.0);
                    let e = format!("(/ {} {c} (+ 1 (* {} {})))", a.s, q.s, q.s);
                    return E::new(e, a.b / x.abs());
                }
                E::new(format!("(/ {} {c})", a.s), a.b / x.abs())
            }
            9 => {
                let (a, b) = (self.num(d - 1), self.num(d - 1));
                let op = if self.chance(0.5) { "min" } else { "max" };
                if self.chance(0.3) {
                    let c = self.num(d - 1);
                    return E::new(
                        format!("({op} {} {} {})", a.s, b.s, c.s),
                        a.b.max(b.b).max(c.b),
                    );
                }
                E::new(format!("({op} {} {})", a.s, b.s), a.b.max(b.b))
            }
            10 => {
                let a = self.num(d - 1);
                let a = self.tame(a, 3.0);
                if self.chance(0.5) {
                    E::new(format!("(pow {} 2)", a.s), a.b * a.b)
                } else {
                    E::new(format!("(expt {} 3)", a.s), a.b.powi(3))
                }
            }
            11 => {
                let q = self.num(d - 1);
                let q = self.tame(q, 4.0);
                E::new(format!("(/ (+ 2 (* {} {})))", q.s, q.s), 0.5)
            }
            _ => {
                let a = self.num(d - 1);
                let (c, x) = self.lit_in(0.7, 2.5);
                if self.chance(0.5) {
                    let neg = self.chance(0.3);
                    let c = if neg { format!("-{c}") } else { c };
                    E::new(format!("(modulo {} {c})", a.s), x)
                } else {
                    E::new(format!("(remainder {} {c})", a.s), x.min(a.b))
                }
            }
        }
    }

    /// Math functions on in-domain arguments.
    pub fn math(&mut self, d: u32) -> E {
        self.mark(Family::Math);
        match self.below(9) {
            0 | 1 => {
                let a = self.num(d - 1);
                let a = self.tame(a, 4.0);
                let f = if self.chance(0.5) { "sin" } else { "cos" };
                E::new(format!("({f} {})", a.s), 1.0)
            }
            2 => {
                let a = self.num(d - 1);
                let a = self.tame(a, 2.5);
                E::new(format!("(exp {})", a.s), a.b.exp())
            }
            3 | 4 => {
                let (s, lo, hi) = self.positive(d);
                E::new(format!("(log {s})"), lo.ln().abs().max(hi.ln().abs()))
            }
            5 => {
                let (s, _, hi) = self.positive(d);
                E::new(format!("(sqrt {s})"), hi.sqrt())
            }
            6 => {
                let a = self.num(d - 1);
                E::new(format!("(abs {})", a.s), a.b)
            }
            _ => {
                let (s, lo, hi) = self.positive(d);
                let (s, lo, hi) = if hi > 4.0 || lo < 0.5 {
                    (
                        format!("(+ 0.5 (* 0.1 {s}))"),
                        0.5 + 0.1 * lo,
                        0.5 + 0.1 * hi,
                    )
                } else {
                    (s, lo, hi)
                };
                let e = self.num(d - 1);
                let e = self.tame(e, 1.5);
                let f = if self.chance(0.5) { "pow" } else { "expt" };
                let b = hi.powf(e.b).max(lo.powf(-e.b));
                E::new(format!("({f} {s} {})", e.s), b)
            }
        }
    }

    /// An expression that is positive by construction: text, lower and upper bound.
    pub fn positive(&mut self, d: u32) -> (String, f64, f64) {
        let a = self.num(d - 1);
        match self.below(4) {
            0 | 1 => {
                let a = self.tame(a, 3.0);
                let c = [0.5, 1.0, 1.5][self.below(3)];
                (format!("(+ {c} (* {} {}))", a.s, a.s), c, c + a.b * a.b)
            }
            2 => {
                let a = self.tame(a, 2.0);
                (format!("(exp {})", a.s), (-a.b).exp(), a.b.exp())
            }
            _ => {
                let a = self.tame(a, 4.0);
                (format!("(+ 1.5 (sin {}))", a.s), 0.5, 2.5)
            }
        }
    }
}
