//! The shader's forward rules: `spreads`, `linalg_f`, `forward_op`.

use super::invocation::{Inv, View};
use super::scalar::{binary_f, root, select, unary_f};
use shared_ir::Real;

/// The shader's `spreads`: the products whose result elements are spread over a lane's
/// invocations (forward and reverse): matvec, matmul, transpose, outer.
pub(super) fn spreads(op: u32) -> bool {
    op == 6 || op == 7 || op == 8 || op == 10
}

impl<R: Real> Inv<'_, '_, R> {
    /// The shader's `linalg_f`: the linalg op `op` on slots `a` and `b`, whose views (and the
    /// result's) are `va`, `vb` and `vo`.
    pub fn linalg_f(&mut self, op: u32, a: u32, b: u32, va: View, vb: View, vo: View) {
        if !spreads(op) && self.tk != 0 {
            return;
        }
        let (tk, tw) = (self.tk, self.tw);
        let na = self.len_of(a);
        let m = self.rows_of(a);
        let k = self.cols_of(a);
        let floor = R::PROTECT_FLOOR;
        match op {
            // Dot
            0 => {
                let mut s = R::ZERO;
                for e in self.upto(na) {
                    s += self.ld(va, e) * self.ld(vb, e);
                }
                self.put(vo, 0, s);
            }
            // Vsum
            1 => {
                let mut s = R::ZERO;
                for e in self.upto(na) {
                    s += self.ld(va, e);
                }
                self.put(vo, 0, s);
            }
            // Norm
            2 => {
                let mut s = R::ZERO;
                for e in self.upto(na) {
                    s += self.ld(va, e) * self.ld(va, e);
                }
                self.put(vo, 0, root(s));
            }
            // Normalize, NormalizeProtected
            3 | 4 => {
                let mut s = R::ZERO;
                for e in self.upto(na) {
                    s += self.ld(va, e) * self.ld(va, e);
                }
                s = root(s);
                if op == 4 && s < floor {
                    s = floor;
                }
                for e in self.upto(na) {
                    let y = self.ld(va, e) / s;
                    self.put(vo, e, y);
                }
            }
            // Cross
            5 => {
                let (a0, a1, a2) = (self.ld(va, 0), self.ld(va, 1), self.ld(va, 2));
                let (b0, b1, b2) = (self.ld(vb, 0), self.ld(vb, 1), self.ld(vb, 2));
                self.put(vo, 0, a1 * b2 - a2 * b1);
                self.put(vo, 1, a2 * b0 - a0 * b2);
                self.put(vo, 2, a0 * b1 - a1 * b0);
            }
            // Matvec
            6 => {
                for i in self.stride(tk, m, tw) {
                    let mut s = R::ZERO;
                    for j in self.upto(k) {
                        s += self.ld(va, i * k + j) * self.ld(vb, j);
                    }
                    self.put(vo, i, s);
                }
            }
            // Matmul
            7 => {
                let n = self.cols_of(b);
                for e in self.stride(tk, m * n, tw) {
                    let (i, j) = (e / n, e % n);
                    let mut s = R::ZERO;
                    for p in self.upto(k) {
                        s += self.ld(va, i * k + p) * self.ld(vb, p * n + j);
                    }
                    self.put(vo, e, s);
                }
            }
            // Transpose: out is k x m, element (j, i) is A[i][j].
            8 => {
                for e in self.stride(tk, m * k, tw) {
                    let x = self.ld(va, e);
                    self.put(vo, (e % k) * m + e / k, x);
                }
            }
            // Trace
            9 => {
                let mut s = R::ZERO;
                for i in self.upto(m.min(k)) {
                    s += self.ld(va, i * k + i);
                }
                self.put(vo, 0, s);
            }
            // Outer
            10 => {
                let nb = self.len_of(b);
                for e in self.stride(tk, na * nb, tw) {
                    let x = self.ld(va, e / nb) * self.ld(vb, e % nb);
                    self.put(vo, e, x);
                }
            }
            // Det
            11 => {
                let d = self.det_of(va, m);
                self.put(vo, 0, d);
            }
            // Logdet
            12 => {
                if m <= 2 {
                    let d = super::scalar::ln(self.det_of(va, m).abs());
                    self.put(vo, 0, d);
                } else {
                    for i in self.upto(m * m) {
                        self.me.m[i] = self.ld(va, i);
                    }
                    self.eliminate(m, 0);
                    self.put(vo, 0, self.me.logabs);
                }
            }
            // Inv
            13 => {
                if m == 1 {
                    let y = R::ONE / self.ld(va, 0);
                    self.put(vo, 0, y);
                } else if m == 2 {
                    let inv = R::ONE
                        / (self.ld(va, 0) * self.ld(va, 3) - self.ld(va, 1) * self.ld(va, 2));
                    let (a0, a1, a2, a3) = (
                        self.ld(va, 0),
                        self.ld(va, 1),
                        self.ld(va, 2),
                        self.ld(va, 3),
                    );
                    self.put(vo, 0, a3 * inv);
                    self.put(vo, 1, -a1 * inv);
                    self.put(vo, 2, -a2 * inv);
                    self.put(vo, 3, a0 * inv);
                } else if m > 0 {
                    self.load_inverse(va, m, false);
                    self.eliminate(m, m);
                    for e in self.upto(m * m) {
                        self.put(vo, e, self.me.x[e]);
                    }
                }
            }
            // Solve: A (m x m) against b (m x c).
            _ => {
                let c = self.cols_of(b);
                for i in self.upto(m * m) {
                    self.me.m[i] = self.ld(va, i);
                }
                for i in self.upto(m * c) {
                    self.me.x[i] = self.ld(vb, i);
                }
                self.eliminate(m, c);
                for i in self.upto(m * c) {
                    self.put(vo, i, self.me.x[i]);
                }
            }
        }
    }

    /// The shader's `forward_op`: record `i` on this invocation's share of its elements.
    pub fn forward_op(&mut self, i: usize) {
        let r = self.record(i);
        let (sub, out, a, b, extra) = (r.sub, r.out, r.a, r.b, r.extra as usize);
        let (tk, tw) = (self.tk, self.tw);
        let n = self.len_of(out);
        let va = self.view(a);
        let vb = self.view(b);
        let vo = self.view(out);
        match r.opcode as u32 {
            // Unary
            0 => {
                for e in self.stride(tk, n, tw) {
                    let y = unary_f(sub, self.ld(va, e));
                    self.put(vo, e, y);
                }
            }
            // Binary
            1 => {
                let sa = self.len_of(a) == 1;
                let sb = self.len_of(b) == 1;
                for e in self.stride(tk, n, tw) {
                    let x = self.ld(va, select(e, 0, sa));
                    let y = self.ld(vb, select(e, 0, sb));
                    self.put(vo, e, binary_f(sub, x, y));
                }
            }
            // Select
            2 => {
                let c = self.bit(r.extra);
                for e in self.stride(tk, n, tw) {
                    let y = select(self.ld(vb, e), self.ld(va, e), c);
                    self.put(vo, e, y);
                }
            }
            // Pack: element `base + e` of the result, e of part q, on invocation
            // (base + e) % TW.
            3 => {
                let mut base = 0;
                for q in self.upto(r.count as usize) {
                    let p = self.buf.aux[extra + q];
                    let l = self.len_of(p);
                    let vp = self.view(p);
                    for e in self.stride((tk + tw - base % tw) % tw, l, tw) {
                        let y = self.ld(vp, e);
                        self.put(vo, base + e, y);
                    }
                    base += l;
                }
            }
            // Extract
            4 => {
                for e in self.stride(tk, n, tw) {
                    let y = self.ld(va, extra + e);
                    self.put(vo, e, y);
                }
            }
            // Linalg
            _ => self.linalg_f(sub, a, b, va, vb, vo),
        }
    }
}
