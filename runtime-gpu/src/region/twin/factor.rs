//! The shader's factorisations over an invocation's private arrays: `eliminate`,
//! `load_inverse`, `det_of`.

use super::invocation::{Inv, View};
use super::scalar::{ln, select};
use shared_ir::Real;

impl<R: Real> Inv<'_, '_, R> {
    /// The shader's `eliminate`: Gauss-Jordan elimination with partial pivoting of the n x n
    /// matrix in `M` against the n x k right-hand side in `X`; afterwards `X` holds M^-1 X.
    /// Returns the determinant, and leaves ln |det| in `LOGABS`.
    #[allow(clippy::float_cmp)]
    pub fn eliminate(&mut self, n: usize, k: usize) -> R {
        let mut det = R::ONE;
        self.me.logabs = R::ZERO;
        for c in self.upto(n) {
            let mut p = c;
            let mut best = self.me.m[c * n + c].abs();
            for r in self.span(c + 1, n) {
                let v = self.me.m[r * n + c].abs();
                if v > best {
                    best = v;
                    p = r;
                }
            }
            if p != c {
                det = -det;
                for j in self.upto(n) {
                    self.me.m.swap(c * n + j, p * n + j);
                }
                for j in self.upto(k) {
                    self.me.x.swap(c * k + j, p * k + j);
                }
            }
            let piv = self.me.m[c * n + c];
            det *= piv;
            self.me.logabs += ln(piv.abs());
            if piv == R::ZERO && k == 0 {
                // A singular matrix: its determinant is 0 (as the CPU's LU gives).
                return R::ZERO;
            }
            let inv = R::ONE / piv;
            for j in self.upto(n) {
                self.me.m[c * n + j] *= inv;
            }
            for j in self.upto(k) {
                self.me.x[c * k + j] *= inv;
            }
            for r in self.upto(n) {
                if r == c {
                    continue;
                }
                let f = self.me.m[r * n + c];
                for j in self.upto(n) {
                    let v = self.me.m[c * n + j];
                    self.me.m[r * n + j] -= f * v;
                }
                for j in self.upto(k) {
                    let v = self.me.x[c * k + j];
                    self.me.x[r * k + j] -= f * v;
                }
            }
        }
        det
    }

    /// The shader's `load_inverse`: `M` = A (or its transpose), `X` = I, so that after
    /// `eliminate(n, n)` `X` = A^-1 (or A^-T).
    pub fn load_inverse(&mut self, va: View, n: usize, transposed: bool) {
        for i in self.upto(n) {
            for j in self.upto(n) {
                self.me.m[i * n + j] = if transposed {
                    self.ld(va, j * n + i)
                } else {
                    self.ld(va, i * n + j)
                };
                self.me.x[i * n + j] = select(R::ZERO, R::ONE, i == j);
            }
        }
    }

    /// The shader's `det_of`: closed forms up to 2 x 2, elimination above.
    pub fn det_of(&mut self, va: View, n: usize) -> R {
        match n {
            0 => R::ONE,
            1 => self.ld(va, 0),
            2 => self.ld(va, 0) * self.ld(va, 3) - self.ld(va, 1) * self.ld(va, 2),
            _ => {
                for i in self.upto(n * n) {
                    self.me.m[i] = self.ld(va, i);
                }
                self.eliminate(n, 0)
            }
        }
    }
}
