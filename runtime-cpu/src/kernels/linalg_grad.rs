//! Vector and matrix kernels, reverse. Each function adds one operand's adjoint contribution
//! into `adj` (element-major, `l` lanes), keeping only the lanes the gate passes.

use super::linalg::{add_products, col, col_mut, fma_into};
use super::lu::{self, LuScratch};
use super::{accumulate, Gate, Width};

/// A scratch column of `w` lanes.
fn column<R: Real, W: Width>(tmp: &mut Vec<R>, w: W) -> &mut [R] {
    if tmp.len() < w.get() {
        tmp.resize(w.get(), R::ZERO);
    }
    &mut tmp[..w.get()]
}

/// `out -= a * b` lane by lane.
#[inline(always)]
fn fms_into<R: Real>(out: &mut [R], a: &[R], b: &[R]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o -= x * y;
    }
}
use shared_ir::Real;

/// `f(args, sizes, rest)`, with the sizes as literals when they are all 2, all 3 or all 4, so
/// that an inlined `f`'s loops unroll (the same operations in the same order, so the same
/// bits); else with the sizes as they are.
macro_rules! literal_sizes {
    (@lit $size:ident $v:literal) => {
        $v
    };
    ($f:ident($($arg:expr),*; $($size:ident),+ $(; $($rest:expr),*)?)) => {
        match ($($size,)+) {
            ($(literal_sizes!(@lit $size 2),)+) => {
                $f($($arg,)* $(literal_sizes!(@lit $size 2),)+ $($($rest),*)?)
            }
            ($(literal_sizes!(@lit $size 3),)+) => {
                $f($($arg,)* $(literal_sizes!(@lit $size 3),)+ $($($rest),*)?)
            }
            ($(literal_sizes!(@lit $size 4),)+) => {
                $f($($arg,)* $(literal_sizes!(@lit $size 4),)+ $($($rest),*)?)
            }
            _ => $f($($arg,)* $($size,)+ $($($rest),*)?),
        }
    };
}

/// `adj_e += g * w_e` for every element `e` of `n`.
fn scaled_add<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    other: &[R],
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    if W::ONE && G::ALL {
        let (adj, other, g) = (&mut adj[..n], &other[..n], g[0]);
        for (a, &o) in adj.iter_mut().zip(other) {
            *a += g * o;
        }
        return;
    }
    lanes!(l, {
        for e in 0..n {
            let (a, o) = (col_mut(adj, e, w), col(other, e, w));
            for lane in 0..l {
                a[lane] += gate.pass(lane, g[lane] * o[lane]);
            }
        }
    });
}

/// `dot`: the adjoint of one operand is `g` times the other.
pub fn dot<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    other: &[R],
    n: usize,
    w: W,
    gate: G,
) {
    scaled_add(adj, g, other, n, w, gate);
}

/// `vsum`: every element receives `g`.
pub fn vsum<R: Real, G: Gate, W: Width>(adj: &mut [R], g: &[R], n: usize, w: W, gate: G) {
    let l = w.get();
    for e in 0..n {
        let a = col_mut(adj, e, w);
        for lane in 0..l {
            a[lane] += gate.pass(lane, g[lane]);
        }
    }
}

/// `norm`: `adj_i += g a_i / |a|`.
pub fn norm<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    y: &[R],
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    for e in 0..n {
        let (ad, a) = (col_mut(adj, e, w), col(a, e, w));
        for lane in 0..l {
            ad[lane] += gate.pass(lane, g[lane] * a[lane] / y[lane]);
        }
    }
}

/// `normalize`: for `y = a / s` with `s = |a|` (or its clamp), `adj += (g - y (y . g)) / s`
/// (the clamped branch, where `s` is constant, gives `g / s`).
#[allow(clippy::too_many_arguments)]
pub fn normalize<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    y: &[R],
    n: usize,
    w: W,
    protected: bool,
    tmp: &mut Vec<R>,
    gate: G,
) {
    let l = w.get();
    tmp.clear();
    tmp.resize(2 * l, R::ZERO);
    let (yg, s) = tmp.split_at_mut(l);
    for e in 0..n {
        let (gc, yc, ac) = (col(g, e, w), col(y, e, w), col(a, e, w));
        for lane in 0..l {
            yg[lane] += yc[lane] * gc[lane];
            s[lane] += ac[lane] * ac[lane];
        }
    }
    for lane in 0..l {
        s[lane] = s[lane].sqrt();
    }
    for e in 0..n {
        let (ad, gc, yc) = (col_mut(adj, e, w), col(g, e, w), col(y, e, w));
        for lane in 0..l {
            let clamped = protected && s[lane] < R::PROTECT_FLOOR;
            let c = if clamped {
                gc[lane] / R::PROTECT_FLOOR
            } else {
                (gc[lane] - yc[lane] * yg[lane]) / s[lane]
            };
            ad[lane] += gate.pass(lane, c);
        }
    }
}

/// `cross`: `adj_a += b x g` (`first`) or `adj_b += g x a` (otherwise; `other` is `a`).
pub fn cross<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    other: &[R],
    first: bool,
    w: W,
    gate: G,
) {
    let l = w.get();
    for lane in 0..l {
        let (g0, g1, g2) = (g[lane], g[l + lane], g[2 * l + lane]);
        let (o0, o1, o2) = (other[lane], other[l + lane], other[2 * l + lane]);
        let (x, y, z) = if first {
            (o1 * g2 - o2 * g1, o2 * g0 - o0 * g2, o0 * g1 - o1 * g0)
        } else {
            (g1 * o2 - g2 * o1, g2 * o0 - g0 * o2, g0 * o1 - g1 * o0)
        };
        adj[lane] += gate.pass(lane, x);
        adj[l + lane] += gate.pass(lane, y);
        adj[2 * l + lane] += gate.pass(lane, z);
    }
}

/// `matvec` w.r.t. the matrix: `adj_ij += g_i v_j`.
#[allow(clippy::too_many_arguments)]
pub fn matvec_matrix<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    v: &[R],
    m: usize,
    k: usize,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    if W::ONE && G::ALL {
        return literal_sizes!(matvec_matrix_one(adj, g, v; m, k));
    }
    let t = column(tmp, w);
    lanes!(w.get(), {
        for i in 0..m {
            for j in 0..k {
                accumulate(
                    col_mut(adj, i * k + j, w),
                    t,
                    gate,
                    #[inline(always)]
                    |a| fma_into(a, col(g, i, w), col(v, j, w)),
                );
            }
        }
    });
}

/// [`matvec_matrix`] at one lane, every lane kept: inlined where the sizes are literals, so
/// that the loops unroll (the same operations in the same order, so the same bits).
#[inline(always)]
fn matvec_matrix_one<R: Real>(adj: &mut [R], g: &[R], v: &[R], m: usize, k: usize) {
    let (adj, g, v) = (&mut adj[..m * k], &g[..m], &v[..k]);
    for i in 0..m {
        for j in 0..k {
            adj[i * k + j] += g[i] * v[j];
        }
    }
}

/// `matvec` w.r.t. the vector: `adj_j += sum_i A_ij g_i`.
#[allow(clippy::too_many_arguments)]
pub fn matvec_vector<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    m: usize,
    k: usize,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    if W::ONE && G::ALL {
        return literal_sizes!(matvec_vector_one(adj, g, a; m, k));
    }
    let t = column(tmp, w);
    lanes!(w.get(), {
        for j in 0..k {
            accumulate(
                col_mut(adj, j, w),
                t,
                gate,
                #[inline(always)]
                |ad| {
                    add_products(ad, m, |i| (col(a, i * k + j, w), col(g, i, w)));
                },
            );
        }
    });
}

/// [`matvec_vector`] at one lane, every lane kept, as [`matvec_matrix_one`].
#[inline(always)]
fn matvec_vector_one<R: Real>(adj: &mut [R], g: &[R], a: &[R], m: usize, k: usize) {
    let (adj, g, a) = (&mut adj[..k], &g[..m], &a[..m * k]);
    for j in 0..k {
        let mut acc = adj[j];
        for i in 0..m {
            acc += a[i * k + j] * g[i];
        }
        adj[j] = acc;
    }
}

/// `adj_e += sum_x term(r, c, x).0 * term(r, c, x).1` on the kept lanes for each `(r, c)` of a
/// `rows x cols` grid, `e = at(r, c)`, the `inner` terms added in the order of `x` (the
/// reverses of `matmul`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn product_grid<'a, R: Real + 'a, G: Gate, W: Width>(
    adj: &mut [R],
    t: &mut [R],
    gate: G,
    w: W,
    (rows, cols): (usize, usize),
    inner: usize,
    at: impl Fn(usize, usize) -> usize,
    term: impl Fn(usize, usize, usize) -> (&'a [R], &'a [R]),
) {
    lanes!(w.get(), {
        for r in 0..rows {
            for c in 0..cols {
                accumulate(
                    col_mut(adj, at(r, c), w),
                    t,
                    gate,
                    #[inline(always)]
                    |ad| add_products(ad, inner, |x| term(r, c, x)),
                );
            }
        }
    });
}

/// `matmul` w.r.t. the left factor: `adj_A = G B^T` (`A` m x k, `B` k x n).
#[allow(clippy::too_many_arguments)]
pub fn matmul_left<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    b: &[R],
    m: usize,
    k: usize,
    n: usize,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    if W::ONE && G::ALL {
        return literal_sizes!(matmul_left_one(adj, g, b; m, k, n));
    }
    let t = column(tmp, w);
    product_grid(
        adj,
        t,
        gate,
        w,
        (m, k),
        n,
        |i, p| i * k + p,
        |i, p, j| (col(g, i * n + j, w), col(b, p * n + j, w)),
    );
}

/// [`matmul_left`] at one lane, every lane kept, as [`matvec_matrix_one`].
#[inline(always)]
fn matmul_left_one<R: Real>(adj: &mut [R], g: &[R], b: &[R], m: usize, k: usize, n: usize) {
    let (adj, g, b) = (&mut adj[..m * k], &g[..m * n], &b[..k * n]);
    for i in 0..m {
        for p in 0..k {
            let mut acc = adj[i * k + p];
            for j in 0..n {
                acc += g[i * n + j] * b[p * n + j];
            }
            adj[i * k + p] = acc;
        }
    }
}

/// `matmul` w.r.t. the right factor: `adj_B = A^T G`.
#[allow(clippy::too_many_arguments)]
pub fn matmul_right<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    m: usize,
    k: usize,
    n: usize,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    if W::ONE && G::ALL {
        return literal_sizes!(matmul_right_one(adj, g, a; m, k, n));
    }
    let t = column(tmp, w);
    product_grid(
        adj,
        t,
        gate,
        w,
        (k, n),
        m,
        |p, j| p * n + j,
        |p, j, i| (col(a, i * k + p, w), col(g, i * n + j, w)),
    );
}

/// [`matmul_right`] at one lane, every lane kept, as [`matvec_matrix_one`].
#[inline(always)]
fn matmul_right_one<R: Real>(adj: &mut [R], g: &[R], a: &[R], m: usize, k: usize, n: usize) {
    let (adj, g, a) = (&mut adj[..k * n], &g[..m * n], &a[..m * k]);
    for p in 0..k {
        for j in 0..n {
            let mut acc = adj[p * n + j];
            for i in 0..m {
                acc += a[i * k + p] * g[i * n + j];
            }
            adj[p * n + j] = acc;
        }
    }
}

/// `transpose` of an `m x n` matrix: `adj_ij += G_ji`.
pub fn transpose<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    m: usize,
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    for i in 0..m {
        for j in 0..n {
            let (ad, gc) = (col_mut(adj, i * n + j, w), col(g, j * m + i, w));
            for lane in 0..l {
                ad[lane] += gate.pass(lane, gc[lane]);
            }
        }
    }
}

/// `trace`: `adj_ii += g`.
pub fn trace<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    m: usize,
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    for i in 0..m.min(n) {
        let ad = col_mut(adj, i * n + i, w);
        for lane in 0..l {
            ad[lane] += gate.pass(lane, g[lane]);
        }
    }
}

/// `outer` w.r.t. `a` (`first`): `adj_i += sum_j G_ij b_j`; w.r.t. `b`: `adj_j += sum_i G_ij a_i`.
#[allow(clippy::too_many_arguments)]
pub fn outer<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    other: &[R],
    m: usize,
    n: usize,
    first: bool,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    let t = column(tmp, w);
    let (outer_len, inner_len) = if first { (m, n) } else { (n, m) };
    for x in 0..outer_len {
        accumulate(
            col_mut(adj, x, w),
            t,
            gate,
            #[inline(always)]
            |ad| {
                for y in 0..inner_len {
                    let gi = if first { x * n + y } else { y * n + x };
                    fma_into(ad, col(g, gi, w), col(other, y, w));
                }
            },
        );
    }
}

/// `det`: `adj += g det(A) A^-T`, the cofactor matrix (no division for n <= 2).
#[allow(clippy::too_many_arguments)]
pub fn det<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    y: &[R],
    n: usize,
    w: W,
    s: &mut LuScratch<R>,
    gate: G,
) {
    let l = w.get();
    match n {
        0 => {}
        1 => {
            for lane in 0..l {
                adj[lane] += gate.pass(lane, g[lane]);
            }
        }
        2 => {
            let (a0, a1, a2, a3) = (col(a, 0, w), col(a, 1, w), col(a, 2, w), col(a, 3, w));
            let cof = [a3, a2, a1, a0];
            let sign = [R::ONE, -R::ONE, -R::ONE, R::ONE];
            let g = &g[..l];
            lanes!(l, {
                for (e, (c, s)) in cof.into_iter().zip(sign).enumerate() {
                    let (ad, c) = (&mut col_mut(adj, e, w)[..l], &c[..l]);
                    for lane in 0..l {
                        ad[lane] += gate.pass(lane, g[lane] * s * c[lane]);
                    }
                }
            });
        }
        _ => inverse_transpose_scaled(adj, g, a, Some(y), n, w, s, gate),
    }
}

/// `logdet`: `adj += g A^-T`.
pub fn logdet<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    n: usize,
    w: W,
    s: &mut LuScratch<R>,
    gate: G,
) {
    let l = w.get();
    if n == 2 {
        let (a0, a1, a2, a3) = (col(a, 0, w), col(a, 1, w), col(a, 2, w), col(a, 3, w));
        let cof = [a3, a2, a1, a0];
        let sign = [R::ONE, -R::ONE, -R::ONE, R::ONE];
        let g = &g[..l];
        let (a0, a1, a2, a3) = (&a0[..l], &a1[..l], &a2[..l], &a3[..l]);
        lanes!(l, {
            for (e, (c, s)) in cof.into_iter().zip(sign).enumerate() {
                let (ad, c) = (&mut col_mut(adj, e, w)[..l], &c[..l]);
                for lane in 0..l {
                    let d = a0[lane] * a3[lane] - a1[lane] * a2[lane];
                    ad[lane] += gate.pass(lane, g[lane] * s * c[lane] / d);
                }
            }
        });
        return;
    }
    inverse_transpose_scaled(adj, g, a, None, n, w, s, gate);
}

/// `adj += g (y or 1) A^-T`, one lane at a time through LU.
#[allow(clippy::too_many_arguments)]
fn inverse_transpose_scaled<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    y: Option<&[R]>,
    n: usize,
    w: W,
    s: &mut LuScratch<R>,
    gate: G,
) {
    let l = w.get();
    for lane in 0..l {
        if !gate.keep(lane) {
            continue;
        }
        s.load_factor(a, n, lane, l);
        s.invert(n);
        let f = g[lane] * y.map_or(R::ONE, |y| y[lane]);
        for i in 0..n {
            for j in 0..n {
                adj[(i * n + j) * l + lane] += f * s.m[j * n + i];
            }
        }
    }
}

/// [`inv`] at one lane, every lane kept, as [`matvec_matrix_one`].
#[inline(always)]
fn inv_one<R: Real>(adj: &mut [R], g: &[R], y: &[R], n: usize, tmp: &mut Vec<R>) {
    let nn = n * n;
    if tmp.len() < nn {
        tmp.resize(nn, R::ZERO);
    }
    let (tm, adj, g, y) = (&mut tmp[..nn], &mut adj[..nn], &g[..nn], &y[..nn]);
    for i in 0..n {
        for p in 0..n {
            let mut acc = R::ZERO;
            for k in 0..n {
                acc += y[k * n + i] * g[k * n + p];
            }
            tm[i * n + p] = acc;
        }
    }
    for i in 0..n {
        for j in 0..n {
            let mut acc = adj[i * n + j];
            for p in 0..n {
                acc -= tm[i * n + p] * y[j * n + p];
            }
            adj[i * n + j] = acc;
        }
    }
}

/// `inv`: `adj -= Y^T G Y^T` where `Y` is the inverse.
#[allow(clippy::too_many_arguments)]
pub fn inv<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    y: &[R],
    n: usize,
    w: W,
    tmp: &mut Vec<R>,
    gate: G,
) {
    let l = w.get();
    if W::ONE && G::ALL {
        return literal_sizes!(inv_one(adj, g, y; n; tmp));
    }
    // T = Y^T G (n x n), then adj_ij -= sum_p T_ip Y_jp; one more column for the gate.
    tmp.clear();
    tmp.resize((n * n + 1) * l, R::ZERO);
    let (tm, t) = tmp.split_at_mut(n * n * l);
    lanes!(l, {
        for i in 0..n {
            for p in 0..n {
                let c = col_mut(tm, i * n + p, w);
                for k in 0..n {
                    fma_into(c, col(y, k * n + i, w), col(g, k * n + p, w));
                }
            }
        }
        for i in 0..n {
            for j in 0..n {
                accumulate(
                    col_mut(adj, i * n + j, w),
                    t,
                    gate,
                    #[inline(always)]
                    |ad| {
                        for p in 0..n {
                            fms_into(ad, col(tm, i * n + p, w), col(y, j * n + p, w));
                        }
                    },
                );
            }
        }
    });
}

/// `solve A b` (`b` of `n x k`, result `x`): w.r.t. `b` (`wrt_matrix = false`) `adj += Z`,
/// w.r.t. `A` `adj -= Z X^T`, where `Z = A^-T G`.
#[allow(clippy::too_many_arguments)]
pub fn solve<R: Real, G: Gate, W: Width>(
    adj: &mut [R],
    g: &[R],
    a: &[R],
    x: &[R],
    n: usize,
    k: usize,
    wrt_matrix: bool,
    w: W,
    s: &mut LuScratch<R>,
    gate: G,
) {
    let l = w.get();
    for lane in 0..l {
        if !gate.keep(lane) {
            continue;
        }
        s.load_factor(a, n, lane, l);
        for j in 0..k {
            for i in 0..n {
                s.col[i] = g[(i * k + j) * l + lane];
            }
            lu::solve_transposed(&s.lu, n, &s.piv, &mut s.col, &mut s.tmp);
            if wrt_matrix {
                for i in 0..n {
                    for c in 0..n {
                        adj[(i * n + c) * l + lane] -= s.col[i] * x[(c * k + j) * l + lane];
                    }
                }
            } else {
                for i in 0..n {
                    adj[(i * k + j) * l + lane] += s.col[i];
                }
            }
        }
    }
}
