//! Dense LU with partial pivoting for one lane's matrix: determinants, inverses and solves of
//! any size. Singular matrices give infinities or NaN, never a panic.

use shared_ir::Real;

/// Factors the row-major `n x n` matrix `a` in place (`L` below the diagonal with a unit
/// diagonal, `U` on and above) and records the row permutation in `piv`. Returns the
/// determinant.
pub fn factor<R: Real>(a: &mut [R], n: usize, piv: &mut [usize]) -> R {
    let mut det = R::ONE;
    for (i, p) in piv.iter_mut().enumerate().take(n) {
        *p = i;
    }
    for col in 0..n {
        let mut best = col;
        let mut best_abs = a[col * n + col].abs();
        for row in col + 1..n {
            let v = a[row * n + col].abs();
            if v > best_abs {
                best = row;
                best_abs = v;
            }
        }
        if best != col {
            for k in 0..n {
                a.swap(col * n + k, best * n + k);
            }
            piv.swap(col, best);
            det = -det;
        }
        let d = a[col * n + col];
        det *= d;
        if d == R::ZERO {
            continue;
        }
        let inv = R::ONE / d;
        for row in col + 1..n {
            let f = a[row * n + col] * inv;
            a[row * n + col] = f;
            for k in col + 1..n {
                let u = a[col * n + k];
                a[row * n + k] -= f * u;
            }
        }
    }
    det
}

/// `ln |det|` of a factored matrix.
pub fn log_abs_det<R: Real>(lu: &[R], n: usize) -> R {
    let mut s = R::ZERO;
    for i in 0..n {
        s += lu[i * n + i].abs().ln();
    }
    s
}

/// Solves `A x = b` in place given the factors of `A`.
pub fn solve<R: Real>(lu: &[R], n: usize, piv: &[usize], b: &mut [R], tmp: &mut [R]) {
    for i in 0..n {
        tmp[i] = b[piv[i]];
    }
    for i in 0..n {
        let mut s = tmp[i];
        for k in 0..i {
            s -= lu[i * n + k] * tmp[k];
        }
        tmp[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = tmp[i];
        for k in i + 1..n {
            s -= lu[i * n + k] * tmp[k];
        }
        tmp[i] = s / lu[i * n + i];
    }
    b[..n].copy_from_slice(&tmp[..n]);
}

/// Solves `A^T x = b` in place given the factors of `A` (`P A = L U`, so `A^T = U^T L^T P`).
pub fn solve_transposed<R: Real>(lu: &[R], n: usize, piv: &[usize], b: &mut [R], tmp: &mut [R]) {
    // U^T y = b
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= lu[k * n + i] * tmp[k];
        }
        tmp[i] = s / lu[i * n + i];
    }
    // L^T z = y
    for i in (0..n).rev() {
        let mut s = tmp[i];
        for k in i + 1..n {
            s -= lu[k * n + i] * tmp[k];
        }
        tmp[i] = s;
    }
    // x = P^T z
    for i in 0..n {
        b[piv[i]] = tmp[i];
    }
}

/// Writes the inverse of the factored matrix into `out` (row-major).
pub fn inverse<R: Real>(
    lu: &[R],
    n: usize,
    piv: &[usize],
    out: &mut [R],
    col: &mut [R],
    tmp: &mut [R],
) {
    for j in 0..n {
        for (i, c) in col.iter_mut().enumerate().take(n) {
            *c = if i == j { R::ONE } else { R::ZERO };
        }
        solve(lu, n, piv, col, tmp);
        for i in 0..n {
            out[i * n + j] = col[i];
        }
    }
}

/// Per-lane work space for the LU kernels.
#[derive(Debug, Default)]
pub struct LuScratch<R> {
    /// The factored matrix.
    pub lu: Vec<R>,
    /// Row permutation.
    pub piv: Vec<usize>,
    /// A column being solved.
    pub col: Vec<R>,
    /// Temporary vector.
    pub tmp: Vec<R>,
    /// A second matrix (an inverse).
    pub m: Vec<R>,
}

impl<R: Real> LuScratch<R> {
    /// Loads lane `l` of the element-major `n x n` matrix `a` (lane stride `lanes`) and factors it.
    pub fn load_factor(&mut self, a: &[R], n: usize, l: usize, lanes: usize) -> R {
        self.lu.clear();
        self.lu.extend((0..n * n).map(|e| a[e * lanes + l]));
        self.piv.resize(n, 0);
        self.col.resize(n, R::ZERO);
        self.tmp.resize(n, R::ZERO);
        self.m.resize(n * n, R::ZERO);
        factor(&mut self.lu, n, &mut self.piv)
    }

    /// The inverse of the loaded matrix into `self.m`.
    pub fn invert(&mut self, n: usize) {
        inverse(
            &self.lu,
            n,
            &self.piv,
            &mut self.m,
            &mut self.col,
            &mut self.tmp,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_solve_and_inverse_agree() {
        let a = [4.0, 3.0, 2.0, 1.0, 3.0, 5.0, 2.0, 7.0, 1.0f64];
        let mut lu = a;
        let mut piv = [0usize; 3];
        let det = factor(&mut lu, 3, &mut piv);
        let expect = 4.0 * (3.0 - 35.0) - 3.0 * (1.0 - 10.0) + 2.0 * (7.0 - 6.0);
        assert!((det - expect).abs() < 1e-12);
        let mut inv = [0.0; 9];
        let (mut col, mut tmp) = ([0.0; 3], [0.0; 3]);
        inverse(&lu, 3, &piv, &mut inv, &mut col, &mut tmp);
        for i in 0..3 {
            for j in 0..3 {
                let s: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
                assert!((s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        let mut b = [1.0, 2.0, 3.0];
        solve_transposed(&lu, 3, &piv, &mut b, &mut tmp);
        for i in 0..3 {
            let s: f64 = (0..3).map(|k| a[k * 3 + i] * b[k]).sum();
            assert!((s - [1.0, 2.0, 3.0][i]).abs() < 1e-12);
        }
    }

    #[test]
    fn singular_matrix_gives_zero_determinant_and_non_finite_inverse() {
        let mut lu = [1.0, 2.0, 2.0, 4.0f64];
        let mut piv = [0usize; 2];
        assert_eq!(factor(&mut lu, 2, &mut piv), 0.0);
        let mut inv = [0.0; 4];
        let (mut col, mut tmp) = ([0.0; 2], [0.0; 2]);
        inverse(&lu, 2, &piv, &mut inv, &mut col, &mut tmp);
        assert!(inv.iter().any(|x| !x.is_finite()));
    }
}
