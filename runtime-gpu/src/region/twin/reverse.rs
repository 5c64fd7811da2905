//! The shader's reverse rules: `acc_inverse_transpose`, `linalg_r`, `reverse_op`. Where a
//! lane's invocations share an op, each adds only to adjoint elements of its own index.

use super::forward::spreads;
use super::invocation::{Inv, View};
use super::scalar::{binary_d, root, select, unary_d};
use shared_ir::Real;

impl<R: Real> Inv<'_, '_, R> {
    /// The shader's `acc_inverse_transpose`: dA += s A^-T for the n x n matrix `va`.
    pub fn acc_inverse_transpose(&mut self, va: View, ja: View, n: usize, s: R) {
        if n == 1 {
            let d = s / self.ld(va, 0);
            self.acc(ja, 0, d);
            return;
        }
        self.load_inverse(va, n, true);
        self.eliminate(n, n);
        for e in self.upto(n * n) {
            self.acc(ja, e, s * self.me.x[e]);
        }
    }

    /// The shader's `linalg_r`: the adjoints of linalg op `op` on slots `a` and `b` from the
    /// result's (views `va`, `vb`, `vo` of the values, `ja`, `jb`, `jo` of the adjoints).
    pub fn linalg_r(
        &mut self,
        op: u32,
        (a, b): (u32, u32),
        (va, vb, vo): (View, View, View),
        (ja, jb, jo): (View, View, View),
    ) {
        if !spreads(op) && self.tk != 0 {
            return;
        }
        let (tk, tw) = (self.tk, self.tw);
        let na = self.len_of(a);
        let m = self.rows_of(a);
        let k = self.cols_of(a);
        let two = op == 0 || op == 5 || op == 6 || op == 7 || op == 10 || op == 14;
        let ga = self.has_adj(a);
        let gb = two && self.has_adj(b);
        let floor = R::PROTECT_FLOOR;
        match op {
            // Dot
            0 => {
                let g = self.gadj(jo, 0);
                for e in self.upto(na) {
                    if ga {
                        self.acc(ja, e, g * self.ld(vb, e));
                    }
                    if gb {
                        self.acc(jb, e, g * self.ld(va, e));
                    }
                }
            }
            // Vsum
            1 => {
                let g = self.gadj(jo, 0);
                for e in self.upto(na) {
                    self.acc(ja, e, g);
                }
            }
            // Norm
            2 => {
                let g = self.gadj(jo, 0);
                let y = self.ld(vo, 0);
                for e in self.upto(na) {
                    self.acc(ja, e, g * self.ld(va, e) / y);
                }
            }
            // Normalize, NormalizeProtected
            3 | 4 => {
                let (mut yg, mut s) = (R::ZERO, R::ZERO);
                for e in self.upto(na) {
                    yg += self.ld(vo, e) * self.gadj(jo, e);
                    s += self.ld(va, e) * self.ld(va, e);
                }
                s = root(s);
                let clamped = op == 4 && s < floor;
                for e in self.upto(na) {
                    let g = self.gadj(jo, e);
                    let d = if clamped {
                        g / floor
                    } else {
                        (g - self.ld(vo, e) * yg) / s
                    };
                    self.acc(ja, e, d);
                }
            }
            // Cross
            5 => {
                let (g0, g1, g2) = (self.gadj(jo, 0), self.gadj(jo, 1), self.gadj(jo, 2));
                if ga {
                    let (b0, b1, b2) = (self.ld(vb, 0), self.ld(vb, 1), self.ld(vb, 2));
                    self.acc(ja, 0, b1 * g2 - b2 * g1);
                    self.acc(ja, 1, b2 * g0 - b0 * g2);
                    self.acc(ja, 2, b0 * g1 - b1 * g0);
                }
                if gb {
                    let (a0, a1, a2) = (self.ld(va, 0), self.ld(va, 1), self.ld(va, 2));
                    self.acc(jb, 0, g1 * a2 - g2 * a1);
                    self.acc(jb, 1, g2 * a0 - g0 * a2);
                    self.acc(jb, 2, g0 * a1 - g1 * a0);
                }
            }
            // Matvec: y = A v, dA[r][c] += g[r] v[c], dv[c] += sum_r A[r][c] g[r].
            6 => {
                if ga {
                    for e in self.stride(tk, m * k, tw) {
                        let d = self.gadj(jo, e / k) * self.ld(vb, e % k);
                        self.acc(ja, e, d);
                    }
                }
                if gb {
                    for c in self.stride(tk, k, tw) {
                        let mut s = R::ZERO;
                        for r in self.upto(m) {
                            s += self.ld(va, r * k + c) * self.gadj(jo, r);
                        }
                        self.acc(jb, c, s);
                    }
                }
            }
            // Matmul: C = A B, dA = G B^T, dB = A^T G.
            7 => {
                let n = self.cols_of(b);
                if ga {
                    for e in self.stride(tk, m * k, tw) {
                        let (i, p) = (e / k, e % k);
                        let mut s = R::ZERO;
                        for j in self.upto(n) {
                            s += self.gadj(jo, i * n + j) * self.ld(vb, p * n + j);
                        }
                        self.acc(ja, e, s);
                    }
                }
                if gb {
                    for e in self.stride(tk, k * n, tw) {
                        let (p, j) = (e / n, e % n);
                        let mut s = R::ZERO;
                        for i in self.upto(m) {
                            s += self.ld(va, i * k + p) * self.gadj(jo, i * n + j);
                        }
                        self.acc(jb, e, s);
                    }
                }
            }
            // Transpose
            8 => {
                for e in self.stride(tk, m * k, tw) {
                    let g = self.gadj(jo, (e % k) * m + e / k);
                    self.acc(ja, e, g);
                }
            }
            // Trace
            9 => {
                let g = self.gadj(jo, 0);
                for i in self.upto(m.min(k)) {
                    self.acc(ja, i * k + i, g);
                }
            }
            // Outer
            10 => {
                let nb = self.len_of(b);
                if ga {
                    for e in self.stride(tk, na, tw) {
                        let mut s = R::ZERO;
                        for c in self.upto(nb) {
                            s += self.gadj(jo, e * nb + c) * self.ld(vb, c);
                        }
                        self.acc(ja, e, s);
                    }
                }
                if gb {
                    for e in self.stride(tk, nb, tw) {
                        let mut s = R::ZERO;
                        for r in self.upto(na) {
                            s += self.gadj(jo, r * nb + e) * self.ld(va, r);
                        }
                        self.acc(jb, e, s);
                    }
                }
            }
            // Det
            11 => {
                let g = self.gadj(jo, 0);
                if m == 1 {
                    self.acc(ja, 0, g);
                } else if m == 2 {
                    let (a0, a1, a2, a3) = (
                        self.ld(va, 0),
                        self.ld(va, 1),
                        self.ld(va, 2),
                        self.ld(va, 3),
                    );
                    self.acc(ja, 0, g * a3);
                    self.acc(ja, 1, -g * a2);
                    self.acc(ja, 2, -g * a1);
                    self.acc(ja, 3, g * a0);
                } else if m > 0 {
                    let s = g * self.ld(vo, 0);
                    self.acc_inverse_transpose(va, ja, m, s);
                }
            }
            // Logdet
            12 => {
                let g = self.gadj(jo, 0);
                if m == 2 {
                    let (a0, a1, a2, a3) = (
                        self.ld(va, 0),
                        self.ld(va, 1),
                        self.ld(va, 2),
                        self.ld(va, 3),
                    );
                    let d = a0 * a3 - a1 * a2;
                    self.acc(ja, 0, g * a3 / d);
                    self.acc(ja, 1, -g * a2 / d);
                    self.acc(ja, 2, -g * a1 / d);
                    self.acc(ja, 3, g * a0 / d);
                } else if m > 0 {
                    self.acc_inverse_transpose(va, ja, m, g);
                }
            }
            // Inv: Y = A^-1, dA = -Y^T G Y^T; T = Y^T G first.
            13 => {
                for i in self.upto(m) {
                    for q in self.upto(m) {
                        let mut s = R::ZERO;
                        for p in self.upto(m) {
                            s += self.ld(vo, p * m + i) * self.gadj(jo, p * m + q);
                        }
                        self.me.t[i * m + q] = s;
                    }
                }
                for i in self.upto(m) {
                    for j in self.upto(m) {
                        let mut s = R::ZERO;
                        for q in self.upto(m) {
                            s += self.me.t[i * m + q] * self.ld(vo, j * m + q);
                        }
                        self.acc(ja, i * m + j, -s);
                    }
                }
            }
            // Solve: X = A^-1 B, Z = A^-T G, dB += Z, dA -= Z X^T.
            _ => {
                let c = self.cols_of(b);
                for i in self.upto(m) {
                    for j in self.upto(m) {
                        self.me.m[i * m + j] = self.ld(va, j * m + i);
                    }
                }
                for i in self.upto(m * c) {
                    self.me.x[i] = self.gadj(jo, i);
                }
                self.eliminate(m, c);
                if gb {
                    for i in self.upto(m * c) {
                        self.acc(jb, i, self.me.x[i]);
                    }
                }
                if ga {
                    for i in self.upto(m) {
                        for j in self.upto(m) {
                            let mut s = R::ZERO;
                            for q in self.upto(c) {
                                s += self.me.x[i * c + q] * self.ld(vo, j * c + q);
                            }
                            self.acc(ja, i * m + j, -s);
                        }
                    }
                }
            }
        }
    }

    /// The shader's `reverse_op`: record `i`'s adjoints on this invocation's share, on the
    /// lanes of its mask. The result's adjoint is not cleared (the host clears the arena).
    pub fn reverse_op(&mut self, i: usize) {
        let r = self.record(i);
        let (sub, out, a, b, extra) = (r.sub, r.out, r.a, r.b, r.extra as usize);
        let (tk, tw) = (self.tk, self.tw);
        let n = self.len_of(out);
        if !self.has_adj(out) || !self.bit(r.mask) {
            return;
        }
        let va = self.view(a);
        let vb = self.view(b);
        let vo = self.view(out);
        let ja = self.adj_view(a);
        let jb = self.adj_view(b);
        let jo = self.adj_view(out);
        match r.opcode as u32 {
            // Unary
            0 => {
                if self.has_adj(a) {
                    for e in self.stride(tk, n, tw) {
                        let d = self.gadj(jo, e) * unary_d(sub, self.ld(va, e), self.ld(vo, e));
                        self.acc(ja, e, d);
                    }
                }
            }
            // Binary
            1 => {
                let sa = self.len_of(a) == 1;
                let sb = self.len_of(b) == 1;
                let partials = |me: &Self, e: usize| {
                    let (x, y) = (me.ld(va, select(e, 0, sa)), me.ld(vb, select(e, 0, sb)));
                    binary_d(sub, x, y, me.ld(vo, e))
                };
                for e in self.stride(tk, n, tw) {
                    let d = partials(self, e);
                    let g = self.gadj(jo, e);
                    if !sa {
                        self.acc(ja, e, g * d[0]);
                    }
                    if !sb {
                        self.acc(jb, e, g * d[1]);
                    }
                }
                // A broadcast scalar's adjoint is a sum over the elements: one invocation
                // adds it.
                if tk == 0 && (sa || sb) {
                    let mut s = [R::ZERO; 2];
                    for q in self.upto(n) {
                        let (d, g) = (partials(self, q), self.gadj(jo, q));
                        s = [s[0] + g * d[0], s[1] + g * d[1]];
                    }
                    if sa {
                        self.acc(ja, 0, s[0]);
                    }
                    if sb {
                        self.acc(jb, 0, s[1]);
                    }
                }
            }
            // Select
            2 => {
                let c = self.bit(r.extra);
                for e in self.stride(tk, n, tw) {
                    let g = self.gadj(jo, e);
                    self.acc(select(jb, ja, c), e, g);
                }
            }
            // Pack: its parts may repeat, so one invocation adds every part's adjoint.
            3 => {
                if tk == 0 {
                    let mut eo = 0;
                    for q in self.upto(r.count as usize) {
                        let p = self.buf.aux[extra + q];
                        let jp = self.adj_view(p);
                        for e in self.upto(self.len_of(p)) {
                            let g = self.gadj(jo, eo);
                            self.acc(jp, e, g);
                            eo += 1;
                        }
                    }
                }
            }
            // Extract
            4 => {
                for e in self.stride(tk, n, tw) {
                    let g = self.gadj(jo, e);
                    self.acc(ja, extra + e, g);
                }
            }
            // Linalg
            _ => self.linalg_r(sub, (a, b), (va, vb, vo), (ja, jb, jo)),
        }
    }
}
