//! Vector and matrix productions. Square matrices that reach `det`, `logdet`, `inv` or `solve`
//! are well conditioned by construction: diagonally dominant (diagonal at least 1.5, each row's
//! off-diagonal sum well below it), or transposes, products and inverses of such, with a bound
//! `ib` on the infinity norm of the inverse carried along.

use super::core::{lit, Gen, Ty, E};
use super::Family;

/// Largest inverse-norm bound accepted as well conditioned.
const MAX_IB: f64 = 3.0;

impl Gen {
    /// A vector of length `n`.
    pub fn vec_expr(&mut self, n: usize, d: u32) -> E {
        self.mark(Family::Vector);
        let vars: Vec<E> = self
            .scope
            .iter()
            .filter(|v| v.ty == Ty::Vec(n))
            .map(|v| E::new(v.name.clone(), v.b))
            .collect();
        if d == 0 || self.budget == 0 {
            if !vars.is_empty() && self.chance(0.7) {
                return vars[self.below(vars.len())].clone();
            }
            let items: Vec<String> = (0..n).map(|_| self.lit_in(-2.0, 2.0).0).collect();
            return E::new(format!("(vec {})", items.join(" ")), 2.0);
        }
        self.budget -= 1;
        let e = match self.below(14) {
            0 | 1 if !vars.is_empty() => vars[self.below(vars.len())].clone(),
            0..=2 => {
                let items: Vec<E> = (0..n)
                    .map(|_| {
                        let e = self.num(d - 1);
                        self.tame(e, 3.0)
                    })
                    .collect();
                let b = items.iter().fold(0.0f64, |m, e| m.max(e.b));
                let texts: Vec<&str> = items.iter().map(|e| e.s.as_str()).collect();
                if self.chance(0.5) {
                    E::new(format!("(vec {})", texts.join(" ")), b)
                } else {
                    E::new(format!("[{}]", texts.join(" ")), b)
                }
            }
            3 | 4 => {
                let (a, b) = (self.vec_expr(n, d - 1), self.vec_expr(n, d - 1));
                let op = ["+", "-", "*"][self.below(3)];
                let bound = if op == "*" { a.b * b.b } else { a.b + b.b };
                E::new(format!("({op} {} {})", a.s, b.s), bound)
            }
            5 => {
                let s = self.num(d - 1);
                let s = self.tame(s, 3.0);
                let v = self.vec_expr(n, d - 1);
                let op = if self.chance(0.5) { "scale" } else { "*" };
                E::new(format!("({op} {} {})", s.s, v.s), s.b * v.b)
            }
            6 => {
                self.mark(Family::Math);
                let v = self.vec_expr(n, d - 1);
                let v = self.tame(v, 4.0);
                let f = ["sin", "cos"][self.below(2)];
                E::new(format!("({f} {})", v.s), 1.0)
            }
            7 => {
                let v = self.vec_expr(n, d - 1);
                E::new(format!("(normalize (+ {} {}))", v.s, lit(v.b + 0.5)), 1.0)
            }
            8 if n == 3 => {
                let (a, b) = (self.vec_expr(3, d - 1), self.vec_expr(3, d - 1));
                E::new(format!("(cross {} {})", a.s, b.s), 2.0 * a.b * b.b)
            }
            9 => {
                self.mark(Family::Matrix);
                let m = self.mat_expr(n, d - 1, false);
                let v = self.vec_expr(n, d - 1);
                E::new(format!("(matvec {} {})", m.s, v.s), n as f64 * m.b * v.b)
            }
            10 => {
                self.mark(Family::Matrix);
                let m = self.mat_expr(n, d - 1, true);
                let v = self.vec_expr(n, d - 1);
                E::new(format!("(solve {} {})", m.s, v.s), m.ib * v.b)
            }
            11 => {
                self.mark(Family::Matrix);
                let m = self.mat_expr(n, d - 1, false);
                let i = self.below(n);
                E::new(format!("(ref {} {i})", m.s), m.b)
            }
            12 => {
                self.mark(Family::Arith);
                let (a, b) = (self.vec_expr(n, d - 1), self.vec_expr(n, d - 1));
                let op = ["min", "max"][self.below(2)];
                E::new(format!("({op} {} {})", a.s, b.s), a.b.max(b.b))
            }
            _ => {
                let v = self.vec_expr(n, d - 1);
                let s = self.num(d - 1);
                E::new(format!("(+ {} {})", v.s, s.s), v.b + s.b)
            }
        };
        self.tame(e, super::core::BIG)
    }

    /// A diagonally dominant n x n matrix built from scalar expressions or from `eye`.
    fn dominant(&mut self, n: usize, d: u32) -> E {
        let sub = d.saturating_sub(1);
        if self.chance(0.35) {
            let p = self.mat_expr(n, sub, false);
            let k = lit(((0.2 / p.b).min(0.2) * 1000.0).floor().max(1.0) / 1000.0);
            let (c, x) = self.lit_in(1.8, 2.4);
            let op = if self.chance(0.5) { "scale" } else { "*" };
            let s = format!("(+ ({op} {c} (eye {n})) (* {k} {}))", p.s);
            // Diagonal >= x - 0.2, off-diagonal row sum <= 0.2 (n - 1).
            let ib = 1.0 / (x - 0.2 - 0.2 * (n as f64 - 1.0));
            return E { s, b: x + 0.2, ib };
        }
        let mut rows = Vec::new();
        for i in 0..n {
            let mut row = Vec::new();
            for j in 0..n {
                let e = if self.chance(0.5) {
                    let lo = if i == j { 1.7 } else { -0.2 };
                    self.lit_in(lo, lo + if i == j { 0.6 } else { 0.4 }).0
                } else {
                    let a = self.num(sub);
                    let a = self.tame(a, 4.0);
                    if i == j {
                        format!("(+ 2 (* 0.3 (sin {})))", a.s)
                    } else {
                        format!("(* 0.2 (cos {}))", a.s)
                    }
                };
                row.push(e);
            }
            rows.push(row);
        }
        // Diagonal >= 1.7, off-diagonal row sum <= 0.2 (n - 1).
        let ib = 1.0 / (1.7 - 0.2 * (n as f64 - 1.0));
        let s = if self.chance(0.5) {
            let rs: Vec<String> = rows
                .iter()
                .map(|r| format!("(vec {})", r.join(" ")))
                .collect();
            format!("(mat {})", rs.join(" "))
        } else {
            let rs: Vec<String> = rows.iter().map(|r| format!("[{}]", r.join(" "))).collect();
            format!("[{}]", rs.join(" "))
        };
        E { s, b: 2.3, ib }
    }

    /// An n x n matrix; well conditioned (with `ib` set) when `wc`.
    pub fn mat_expr(&mut self, n: usize, d: u32, wc: bool) -> E {
        self.mark(Family::Matrix);
        let vars: Vec<E> = self
            .scope
            .iter()
            .filter(|v| v.ty == Ty::Mat(n) && (!wc || v.ib.is_finite()))
            .map(|v| E {
                s: v.name.clone(),
                b: v.b,
                ib: v.ib,
            })
            .collect();
        if d == 0 || self.budget == 0 {
            if !vars.is_empty() && self.chance(0.6) {
                return vars[self.below(vars.len())].clone();
            }
            return if wc || self.chance(0.5) {
                self.dominant(n, 0)
            } else {
                E {
                    s: format!("(eye {n})"),
                    b: 1.0,
                    ib: 1.0,
                }
            };
        }
        self.budget -= 1;
        let choice = if wc { self.below(7) } else { self.below(12) };
        let e = match choice {
            0 | 1 if !vars.is_empty() => vars[self.below(vars.len())].clone(),
            0..=2 => self.dominant(n, d),
            3 => {
                let m = self.mat_expr(n, d - 1, wc);
                E {
                    s: format!("(transpose {})", m.s),
                    ..m
                }
            }
            4 => {
                let (a, b) = (self.mat_expr(n, d - 1, wc), self.mat_expr(n, d - 1, wc));
                E {
                    s: format!("(matmul {} {})", a.s, b.s),
                    b: n as f64 * a.b * b.b,
                    ib: a.ib * b.ib,
                }
            }
            5 | 6 => {
                let m = self.mat_expr(n, d - 1, true);
                // |inverse entries| <= ib; the inverse of the inverse is the matrix itself.
                E {
                    s: format!("(inv {})", m.s),
                    b: m.ib,
                    ib: n as f64 * m.b,
                }
            }
            7 => {
                let (u, v) = (self.vec_expr(n, d - 1), self.vec_expr(n, d - 1));
                E::new(format!("(outer {} {})", u.s, v.s), u.b * v.b)
            }
            8 => {
                let (a, b) = (
                    self.mat_expr(n, d - 1, false),
                    self.mat_expr(n, d - 1, false),
                );
                let op = ["+", "-", "*"][self.below(3)];
                let bound = if op == "*" { a.b * b.b } else { a.b + b.b };
                E::new(format!("({op} {} {})", a.s, b.s), bound)
            }
            9 => {
                let s = self.num(d - 1);
                let s = self.tame(s, 3.0);
                let m = self.mat_expr(n, d - 1, false);
                E::new(format!("(* {} {})", s.s, m.s), s.b * m.b)
            }
            10 => {
                self.mark(Family::Math);
                let m = self.mat_expr(n, d - 1, false);
                let m = self.tame(m, 4.0);
                E::new(format!("(sin {})", m.s), 1.0)
            }
            _ => {
                let f = if self.chance(0.5) { "ones" } else { "zeros" };
                E::new(format!("({f} {n} {n})"), 1.0)
            }
        };
        if wc && e.ib > MAX_IB {
            return self.dominant(n, d);
        }
        if e.b > super::core::BIG {
            if wc {
                return self.dominant(n, d);
            }
            return self.tame(e, super::core::BIG);
        }
        e
    }

    /// The size of the matrices and vectors of a snippet: that of an input when there is one.
    fn pick_n(&mut self) -> usize {
        let sizes: Vec<usize> = self
            .scope
            .iter()
            .filter_map(|v| match v.ty {
                Ty::Vec(n) | Ty::Mat(n) => Some(n),
                _ => None,
            })
            .collect();
        if !sizes.is_empty() && self.chance(0.7) {
            sizes[self.below(sizes.len())]
        } else {
            2 + self.below(2)
        }
    }

    /// A number computed from vectors.
    pub fn vector_num(&mut self, d: u32) -> E {
        self.mark(Family::Vector);
        let n = self.pick_n();
        let sub = d - 1;
        match self.below(8) {
            0 | 1 => {
                let (a, b) = (self.vec_expr(n, sub), self.vec_expr(n, sub));
                E::new(format!("(dot {} {})", a.s, b.s), n as f64 * a.b * b.b)
            }
            2 => {
                let v = self.vec_expr(n, sub);
                let c = v.b + 0.5;
                E::new(
                    format!("(norm (+ {} {}))", v.s, lit(c)),
                    (n as f64).sqrt() * (v.b + c),
                )
            }
            3 => {
                let v = self.vec_expr(n, sub);
                E::new(format!("(vsum {})", v.s), n as f64 * v.b)
            }
            4 => {
                let v = self.vec_expr(n, sub);
                let i = self.below(n);
                E::new(format!("(ref {} {i})", v.s), v.b)
            }
            5 => {
                let (v, w) = (self.vec_expr(n, sub), self.vec_expr(n, sub));
                let c = lit(v.b + 0.5);
                E::new(
                    format!("(dot (normalize (+ {} {c})) {})", v.s, w.s),
                    (n as f64).sqrt() * w.b,
                )
            }
            6 => {
                let (v, w) = (self.vec_expr(3, sub), self.vec_expr(3, sub));
                let i = self.below(3);
                E::new(
                    format!("(ref (cross {} {}) {i})", v.s, w.s),
                    2.0 * v.b * w.b,
                )
            }
            _ => {
                let v = self.vec_expr(n, sub);
                let s = self.num(sub);
                E::new(format!("(* (vlen {}) {})", v.s, s.s), n as f64 * s.b)
            }
        }
    }

    /// A number computed from 2x2 or 3x3 matrices.
    pub fn matrix_num(&mut self, d: u32) -> E {
        self.mark(Family::Matrix);
        let n = self.pick_n();
        let nf = n as f64;
        let sub = d - 1;
        if self.chance(0.2) {
            return self.rectangular(sub);
        }
        match self.below(10) {
            0 | 1 => {
                let m = self.mat_expr(n, sub, true);
                E::new(format!("(det {})", m.s), (nf.sqrt() * m.b).powi(n as i32))
            }
            2 | 3 => {
                let m = self.mat_expr(n, sub, true);
                let b = nf * ((nf * m.b).max(1.0).ln() + (nf.sqrt() * m.ib).max(1.0).ln()) + 1.0;
                E::new(format!("(logdet {})", m.s), b)
            }
            4 => {
                let m = self.mat_expr(n, sub, false);
                E::new(format!("(trace {})", m.s), nf * m.b)
            }
            5 => {
                let m = self.mat_expr(n, sub, true);
                E::new(format!("(trace (inv {}))", m.s), nf * m.ib)
            }
            6 => {
                self.mark(Family::Vector);
                let m = self.mat_expr(n, sub, true);
                let (u, w) = (self.vec_expr(n, sub), self.vec_expr(n, sub));
                E::new(
                    format!("(dot {} (solve {} {}))", u.s, m.s, w.s),
                    nf * u.b * m.ib * w.b,
                )
            }
            7 => {
                let m = self.mat_expr(n, sub, true);
                let r = self.mat_expr(n, sub, false);
                E::new(
                    format!("(vsum (solve {} {}))", m.s, r.s),
                    nf * nf * m.ib * nf * r.b,
                )
            }
            8 => {
                let (a, b) = (self.mat_expr(n, sub, false), self.mat_expr(n, sub, false));
                let (i, j) = (self.below(n), self.below(n));
                let f = if self.chance(0.5) {
                    format!("(ref (matmul {} {}) {i} {j})", a.s, b.s)
                } else {
                    format!("(ref (matmul (transpose {}) {}) {i} {j})", a.s, b.s)
                };
                E::new(f, nf * a.b * b.b)
            }
            _ => {
                let m = self.mat_expr(n, sub, true);
                E::new(format!("(norm {})", m.s), nf * m.b)
            }
        }
    }

    /// A number from matrices that are not square: outer products of vectors of different
    /// lengths, their products, transposes and traces, `zeros` and `ones` of r x c.
    fn rectangular(&mut self, d: u32) -> E {
        let (n, m) = if self.chance(0.5) { (2, 3) } else { (3, 2) };
        let (nf, mf) = (n as f64, m as f64);
        let (u, w) = (self.vec_expr(n, d), self.vec_expr(m, d));
        let a = format!("(outer {} {})", u.s, w.s);
        let ab = u.b * w.b;
        match self.below(6) {
            0 => E::new(format!("(trace {a})"), nf.min(mf) * ab),
            1 => {
                let (u2, w2) = (self.vec_expr(n, d), self.vec_expr(m, d));
                E::new(
                    format!("(vsum (matmul {a} (outer {} {})))", w2.s, u2.s),
                    nf * nf * mf * ab * u2.b * w2.b,
                )
            }
            2 => {
                let v = self.vec_expr(n, d);
                let i = self.below(m);
                E::new(
                    format!("(ref (matvec (transpose {a}) {}) {i})", v.s),
                    nf * ab * v.b,
                )
            }
            3 => {
                let f = if self.chance(0.5) { "zeros" } else { "ones" };
                E::new(
                    format!("(+ (vsum (* ({f} {n} {m}) {a})) (vlen {a}))"),
                    nf * mf * ab + nf,
                )
            }
            4 => {
                let (i, j) = (self.below(m), self.below(n));
                E::new(format!("(ref (transpose {a}) {i} {j})"), ab)
            }
            _ => {
                // (n x m) (m x 2) applied to a vector of 2.
                let r = format!("(mat {} {})", w.s, w.s);
                let z = self.vec_expr(2, d);
                let k = self.below(n);
                E::new(
                    format!("(ref (matvec (matmul {a} (transpose {r})) {}) {k})", z.s),
                    2.0 * mf * ab * w.b * z.b,
                )
            }
        }
    }
}
