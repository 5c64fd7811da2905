//! Vector and matrix kernels, forward. Operands are element-major with `l` lanes each (a
//! uniform operand is broadcast by the caller, or every operand is uniform and `l = 1`).

use super::lu::LuScratch;
use super::Width;
use shared_ir::Real;

/// Element `e` of an element-major buffer with `l` lanes.
#[inline(always)]
pub fn col<R, W: Width>(buf: &[R], e: usize, w: W) -> &[R] {
    let l = w.get();
    &buf[e * l..(e + 1) * l]
}

/// Element `e` of an element-major buffer with `l` lanes, mutably.
#[inline(always)]
pub fn col_mut<R, W: Width>(buf: &mut [R], e: usize, w: W) -> &mut [R] {
    let l = w.get();
    &mut buf[e * l..(e + 1) * l]
}

/// `out += a * b` lane by lane.
#[inline(always)]
pub fn fma_into<R: Real>(out: &mut [R], a: &[R], b: &[R]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o += x * y;
    }
}

/// `out[lane] = sum_p x_p[lane] * y_p[lane]` over the `k` pairs of columns `term(p)` (each
/// `out.len()` lanes), in the order of `p`: the bits of zeroing `out` and adding one term a
/// pass, in one pass over `out`.
#[inline(always)]
fn sum_products<'a, R: Real + 'a>(
    out: &mut [R],
    k: usize,
    term: impl Fn(usize) -> (&'a [R], &'a [R]),
) {
    products::<R, false>(out, k, term);
}

/// `out[lane] += sum_p x_p[lane] * y_p[lane]`, the terms added to `out` in the order of `p`
/// (the bits of one [`fma_into`] a term).
#[inline(always)]
pub fn add_products<'a, R: Real + 'a>(
    out: &mut [R],
    k: usize,
    term: impl Fn(usize) -> (&'a [R], &'a [R]),
) {
    products::<R, true>(out, k, term);
}

/// [`sum_products`] (from zero) or [`add_products`] (from `out`, `ADD`): for up to four terms
/// each lane's sum in a register (the terms unrolled, the loop over lanes vectorised), for
/// more one pass over `out` a term.
#[inline(always)]
fn products<'a, R: Real + 'a, const ADD: bool>(
    out: &mut [R],
    k: usize,
    term: impl Fn(usize) -> (&'a [R], &'a [R]),
) {
    match k {
        1 => products_k::<R, 1, ADD>(out, std::array::from_fn(&term)),
        2 => products_k::<R, 2, ADD>(out, std::array::from_fn(&term)),
        3 => products_k::<R, 3, ADD>(out, std::array::from_fn(&term)),
        4 => products_k::<R, 4, ADD>(out, std::array::from_fn(&term)),
        _ => {
            if !ADD {
                out.fill(R::ZERO);
            }
            for p in 0..k {
                let (x, y) = term(p);
                fma_into(out, x, y);
            }
        }
    }
}

/// [`products`] of `K` terms known when compiled.
#[inline(always)]
fn products_k<R: Real, const K: usize, const ADD: bool>(out: &mut [R], terms: [(&[R], &[R]); K]) {
    let l = out.len();
    let terms = terms.map(|(x, y)| (&x[..l], &y[..l]));
    for lane in 0..l {
        let mut acc = if ADD { out[lane] } else { R::ZERO };
        for (x, y) in &terms {
            acc += x[lane] * y[lane];
        }
        out[lane] = acc;
    }
}

/// `dot`: `out = sum_i a_i b_i`.
pub fn dot<R: Real, W: Width>(out: &mut [R], a: &[R], b: &[R], n: usize, w: W) {
    if W::ONE {
        out[0] = dot_one(a, b, n);
        return;
    }
    lanes!(w.get(), {
        sum_products(&mut out[..w.get()], n, |i| (col(a, i, w), col(b, i, w)))
    });
}

/// `sum_i a_i b_i` at one lane: a running sum in a register, in the order of the lane-wide
/// kernels (so the same bits).
#[inline(always)]
fn dot_one<R: Real>(a: &[R], b: &[R], n: usize) -> R {
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = R::ZERO;
    for i in 0..n {
        acc += a[i] * b[i];
    }
    acc
}

/// `vsum`: `out = sum_i a_i`.
pub fn vsum<R: Real, W: Width>(out: &mut [R], a: &[R], n: usize, w: W) {
    out.fill(R::ZERO);
    for i in 0..n {
        for (o, &x) in out.iter_mut().zip(col(a, i, w)) {
            *o += x;
        }
    }
}

/// `norm`: `out = sqrt(sum_i a_i^2)`.
pub fn norm<R: Real, W: Width>(out: &mut [R], a: &[R], n: usize, w: W) {
    dot(out, a, a, n, w);
    for o in out.iter_mut() {
        *o = o.sqrt();
    }
}

/// `normalize`: `out = a / |a|` (a zero vector gives NaN, or is divided by 1e-8 when
/// `protected`).
pub fn normalize<R: Real, W: Width>(
    out: &mut [R],
    a: &[R],
    n: usize,
    w: W,
    norms: &mut Vec<R>,
    protected: bool,
) {
    let l = w.get();
    norms.clear();
    norms.resize(l, R::ZERO);
    norm(norms, a, n, w);
    if protected {
        for x in norms.iter_mut() {
            if *x < R::PROTECT_FLOOR {
                *x = R::PROTECT_FLOOR;
            }
        }
    }
    for i in 0..n {
        for ((o, &x), &s) in col_mut(out, i, w)
            .iter_mut()
            .zip(col(a, i, w))
            .zip(norms.iter())
        {
            *o = x / s;
        }
    }
}

/// `cross` of two 3-vectors.
pub fn cross<R: Real, W: Width>(out: &mut [R], a: &[R], b: &[R], w: W) {
    let l = w.get();
    for lane in 0..l {
        let (a0, a1, a2) = (a[lane], a[l + lane], a[2 * l + lane]);
        let (b0, b1, b2) = (b[lane], b[l + lane], b[2 * l + lane]);
        out[lane] = a1 * b2 - a2 * b1;
        out[l + lane] = a2 * b0 - a0 * b2;
        out[2 * l + lane] = a0 * b1 - a1 * b0;
    }
}

/// `matvec`: `out_i = sum_j A_ij v_j` for `A` of `m x k`.
pub fn matvec<R: Real, W: Width>(out: &mut [R], a: &[R], v: &[R], m: usize, k: usize, w: W) {
    if W::ONE {
        // The common sizes as constants, so that each is unrolled.
        match (m, k) {
            (2, 2) => matvec_one(out, a, v, 2, 2),
            (3, 3) => matvec_one(out, a, v, 3, 3),
            (4, 4) => matvec_one(out, a, v, 4, 4),
            _ => matvec_one(out, a, v, m, k),
        }
        return;
    }
    lanes!(w.get(), {
        for i in 0..m {
            sum_products(col_mut(out, i, w), k, |j| {
                (col(a, i * k + j, w), col(v, j, w))
            });
        }
    });
}

/// `matmul`: `C = A B` for `A` of `m x k` and `B` of `k x n`.
pub fn matmul<R: Real, W: Width>(
    out: &mut [R],
    a: &[R],
    b: &[R],
    m: usize,
    k: usize,
    n: usize,
    w: W,
) {
    if W::ONE {
        match (m, k, n) {
            (2, 2, 2) => matmul_one(out, a, b, 2, 2, 2),
            (3, 3, 3) => matmul_one(out, a, b, 3, 3, 3),
            (4, 4, 4) => matmul_one(out, a, b, 4, 4, 4),
            _ => matmul_one(out, a, b, m, k, n),
        }
        return;
    }
    lanes!(w.get(), {
        for i in 0..m {
            for j in 0..n {
                let o = col_mut(out, i * n + j, w);
                sum_products(o, k, |p| (col(a, i * k + p, w), col(b, p * n + j, w)));
            }
        }
    });
}

/// [`matvec`] at one lane: each sum in a register, in the order of the lane-wide kernel (so
/// the same bits).
#[inline(always)]
fn matvec_one<R: Real>(out: &mut [R], a: &[R], v: &[R], m: usize, k: usize) {
    for i in 0..m {
        out[i] = dot_one(&a[i * k..(i + 1) * k], v, k);
    }
}

/// [`matmul`] at one lane, as [`matvec_one`].
#[inline(always)]
fn matmul_one<R: Real>(out: &mut [R], a: &[R], b: &[R], m: usize, k: usize, n: usize) {
    let (out, a, b) = (&mut out[..m * n], &a[..m * k], &b[..k * n]);
    for i in 0..m {
        for j in 0..n {
            let mut acc = R::ZERO;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            out[i * n + j] = acc;
        }
    }
}

/// `transpose` of an `m x n` matrix.
pub fn transpose<R: Real, W: Width>(out: &mut [R], a: &[R], m: usize, n: usize, w: W) {
    for i in 0..m {
        for j in 0..n {
            col_mut(out, j * m + i, w).copy_from_slice(col(a, i * n + j, w));
        }
    }
}

/// `trace`: the sum of the diagonal (of the leading square part).
pub fn trace<R: Real, W: Width>(out: &mut [R], a: &[R], m: usize, n: usize, w: W) {
    out.fill(R::ZERO);
    for i in 0..m.min(n) {
        for (o, &x) in out.iter_mut().zip(col(a, i * n + i, w)) {
            *o += x;
        }
    }
}

/// `outer`: `C_ij = a_i b_j`.
pub fn outer<R: Real, W: Width>(out: &mut [R], a: &[R], b: &[R], m: usize, n: usize, w: W) {
    for i in 0..m {
        for j in 0..n {
            for ((o, &x), &y) in col_mut(out, i * n + j, w)
                .iter_mut()
                .zip(col(a, i, w))
                .zip(col(b, j, w))
            {
                *o = x * y;
            }
        }
    }
}

/// `det` of an `n x n` matrix: closed forms for n <= 2, LU per lane above.
pub fn det<R: Real, W: Width>(out: &mut [R], a: &[R], n: usize, w: W, s: &mut LuScratch<R>) {
    let l = w.get();
    match n {
        0 => out.fill(R::ONE),
        1 => out.copy_from_slice(col(a, 0, w)),
        2 => {
            let (a0, a1, a2, a3) = (col(a, 0, w), col(a, 1, w), col(a, 2, w), col(a, 3, w));
            lanes!(l, {
                for lane in 0..l {
                    out[lane] = a0[lane] * a3[lane] - a1[lane] * a2[lane];
                }
            });
        }
        _ => {
            for (lane, o) in out.iter_mut().enumerate() {
                *o = s.load_factor(a, n, lane, l);
            }
        }
    }
}

/// `logdet`: `ln |det A|`.
pub fn logdet<R: Real, W: Width>(out: &mut [R], a: &[R], n: usize, w: W, s: &mut LuScratch<R>) {
    let l = w.get();
    if n <= 2 {
        det(out, a, n, w, s);
        for o in out.iter_mut() {
            *o = o.abs().ln();
        }
        return;
    }
    for (lane, o) in out.iter_mut().enumerate() {
        s.load_factor(a, n, lane, l);
        *o = super::lu::log_abs_det(&s.lu, n);
    }
}

/// `inv`: closed form for n <= 2, LU per lane above.
pub fn inv<R: Real, W: Width>(out: &mut [R], a: &[R], n: usize, w: W, s: &mut LuScratch<R>) {
    let l = w.get();
    match n {
        0 => {}
        1 => {
            for (o, &x) in out.iter_mut().zip(col(a, 0, w)) {
                *o = R::ONE / x;
            }
        }
        2 => {
            let (a0, a1, a2, a3) = (col(a, 0, w), col(a, 1, w), col(a, 2, w), col(a, 3, w));
            let (o01, o23) = out.split_at_mut(2 * l);
            let (o0, o1) = o01.split_at_mut(l);
            let (o2, o3) = o23.split_at_mut(l);
            lanes!(l, {
                for lane in 0..l {
                    let inv = R::ONE / (a0[lane] * a3[lane] - a1[lane] * a2[lane]);
                    o0[lane] = a3[lane] * inv;
                    o1[lane] = -a1[lane] * inv;
                    o2[lane] = -a2[lane] * inv;
                    o3[lane] = a0[lane] * inv;
                }
            });
        }
        _ => {
            for lane in 0..l {
                s.load_factor(a, n, lane, l);
                s.invert(n);
                for e in 0..n * n {
                    out[e * l + lane] = s.m[e];
                }
            }
        }
    }
}

/// `solve A b` for `A` of `n x n` and `b` of `n x k` (a vector is `k = 1`).
pub fn solve<R: Real, W: Width>(
    out: &mut [R],
    a: &[R],
    b: &[R],
    n: usize,
    k: usize,
    w: W,
    s: &mut LuScratch<R>,
) {
    let l = w.get();
    for lane in 0..l {
        s.load_factor(a, n, lane, l);
        for j in 0..k {
            for i in 0..n {
                s.col[i] = b[(i * k + j) * l + lane];
            }
            super::lu::solve(&s.lu, n, &s.piv, &mut s.col, &mut s.tmp);
            for i in 0..n {
                out[(i * k + j) * l + lane] = s.col[i];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Lanes, One};

    /// Numbers of mixed signs and magnitudes, so that a different summation order rounds
    /// differently.
    fn numbers<R: Real>(n: usize, seed: u64) -> Vec<R> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                R::from_f64((u - 0.5) * 10f64.powi((s % 7) as i32 - 3))
            })
            .collect()
    }

    fn bits<R: Real>(v: &[R]) -> Vec<u64> {
        v.iter().map(|x| x.to_f64().to_bits()).collect()
    }

    /// The one-lane kernels (fixed sizes and register sums) give the general kernels' bits.
    fn one_lane_matches<R: Real>() {
        for (m, k, n) in [
            (2, 2, 2),
            (3, 3, 3),
            (4, 4, 4),
            (2, 3, 4),
            (5, 1, 3),
            (1, 6, 1),
        ] {
            let a = numbers::<R>(m * k, 1 + m as u64);
            let b = numbers::<R>(k * n, 7 + k as u64);
            let (mut fast, mut slow) = (vec![R::ZERO; m * n], vec![R::ZERO; m * n]);
            matmul(&mut fast, &a, &b, m, k, n, One);
            matmul(&mut slow, &a, &b, m, k, n, Lanes(1));
            assert_eq!(bits(&fast), bits(&slow), "matmul {m}x{k} by {k}x{n}");
            let (mut fast, mut slow) = (vec![R::ZERO; m], vec![R::ZERO; m]);
            matvec(&mut fast, &a, &b[..k], m, k, One);
            matvec(&mut slow, &a, &b[..k], m, k, Lanes(1));
            assert_eq!(bits(&fast), bits(&slow), "matvec {m}x{k}");
            let (mut fast, mut slow) = ([R::ZERO], [R::ZERO]);
            dot(&mut fast, &a, &b, k.min(m * k), One);
            dot(&mut slow, &a, &b, k.min(m * k), Lanes(1));
            assert_eq!(bits(&fast), bits(&slow), "dot {k}");
        }
    }

    #[test]
    fn one_lane_kernels_give_the_general_bits() {
        one_lane_matches::<f64>();
        one_lane_matches::<f32>();
    }
}
