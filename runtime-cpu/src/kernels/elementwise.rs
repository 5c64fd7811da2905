//! Elementwise unary and binary kernels. The op is matched once, outside the lane loop, and
//! each arm instantiates the loop with the op's rule inlined.

use super::{Gate, Width};
use crate::payload::Col;
use shared_ir::{BinaryOp, Real, UnaryOp};

/// Expands `$body` once per variant `$v` of the op enum `$ty` that `$op` may be, with `$k`
/// bound to that variant as a constant.
macro_rules! each_op {
    ($ty:ident, $op:expr, $k:ident => $body:expr; $($v:ident)*) => {
        match $op {
            $($ty::$v => {
                const $k: $ty = $ty::$v;
                $body
            })*
        }
    };
}

/// Expands `$body` once per binary op with `$k` bound to that op as a constant.
macro_rules! each_binary_op {
    ($op:expr, $k:ident => $body:expr) => {
        each_op!(BinaryOp, $op, $k => $body; Add Sub Mul Div Pow Min Max Modulo Remainder)
    };
}

/// Expands `$body` once per unary op with `$k` bound to that op as a constant.
macro_rules! each_unary_op {
    ($op:expr, $k:ident => $body:expr) => {
        each_op!(UnaryOp, $op, $k => $body; Neg Recip Sin Cos Exp Log Sqrt Abs LogProtected SqrtProtected)
    };
}

/// A slot seen by an elementwise kernel: its data, whether it holds one value per lane, and
/// whether it is a scalar broadcast against the other operand's elements.
#[derive(Copy, Clone, Debug)]
pub struct View<'a, R> {
    /// The slot's numbers (element-major).
    pub data: &'a [R],
    /// One value per lane.
    pub lanes: bool,
    /// A scalar broadcast to every element.
    pub scalar: bool,
}

impl<'a, R: Real> View<'a, R> {
    /// Element `e` across `l` lanes.
    #[inline(always)]
    pub fn col(&self, e: usize, l: usize) -> Col<'a, R> {
        let e = if self.scalar { 0 } else { e };
        if self.lanes {
            Col::Lanes(&self.data[e * l..(e + 1) * l])
        } else {
            Col::Uniform(self.data[e])
        }
    }
}

#[inline(always)]
fn apply_unary<R: Real>(k: UnaryOp, out: &mut [R], a: Col<'_, R>) {
    match a {
        Col::Lanes(a) => k.apply_slice(out, a),
        Col::Uniform(x) => out.fill(k.apply(x)),
    }
}

#[inline(always)]
fn apply_binary<R: Real>(k: BinaryOp, out: &mut [R], a: Col<'_, R>, b: Col<'_, R>) {
    match (a, b) {
        (Col::Lanes(a), Col::Lanes(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = k.apply(x, y);
            }
        }
        (Col::Lanes(a), Col::Uniform(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = k.apply(x, y);
            }
        }
        (Col::Uniform(x), Col::Lanes(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                *o = k.apply(x, y);
            }
        }
        (Col::Uniform(x), Col::Uniform(y)) => out.fill(k.apply(x, y)),
    }
}

/// `out = op(a)` over `n` elements; `l` is the output's lane width (1 when uniform).
pub fn unary<R: Real, W: Width>(op: UnaryOp, out: &mut [R], a: View<'_, R>, n: usize, w: W) {
    let l = w.get();
    if W::ONE {
        // One number per element: plain loops over the elements.
        let (out, a) = (&mut out[..n], &a.data[..n]);
        return each_unary_op!(op, K => K.apply_slice(out, a));
    }
    lanes!(l, {
        each_unary_op!(op, K => {
            for e in 0..n {
                apply_unary(K, &mut out[e * l..(e + 1) * l], a.col(e, l));
            }
        })
    })
}

/// `out = op(a)` over one element at `out.len()` lanes, the operand per lane or one number for
/// every lane: [`unary`] of one element without its loop over elements.
#[inline(never)]
pub fn unary_row<R: Real>(op: UnaryOp, out: &mut [R], a: Col<'_, R>) {
    lanes!(out.len(), {
        each_unary_op!(op, K => apply_unary(K, out, a))
    })
}

/// `out = op(a, b)` over one element at `out.len()` lanes, each operand per lane or one number
/// for every lane: [`binary`] of one element without its loop over elements.
#[inline(never)]
pub fn binary_row<R: Real>(op: BinaryOp, out: &mut [R], a: Col<'_, R>, b: Col<'_, R>) {
    lanes!(out.len(), {
        each_binary_op!(op, K => apply_binary(K, out, a, b))
    })
}

/// `out = op(a, b)` over `n` elements with scalar broadcast; `l` is the output's lane width.
pub fn binary<R: Real, W: Width>(
    op: BinaryOp,
    out: &mut [R],
    a: View<'_, R>,
    b: View<'_, R>,
    n: usize,
    w: W,
) {
    let l = w.get();
    if W::ONE {
        // One number per element: plain loops over the elements, a scalar read once.
        let out = &mut out[..n];
        return each_binary_op!(op, K => match (a.scalar, b.scalar) {
            (false, false) => {
                for ((o, &x), &y) in out.iter_mut().zip(&a.data[..n]).zip(&b.data[..n]) {
                    *o = K.apply(x, y);
                }
            }
            (false, true) => {
                let y = b.data[0];
                for (o, &x) in out.iter_mut().zip(&a.data[..n]) {
                    *o = K.apply(x, y);
                }
            }
            (true, false) => {
                let x = a.data[0];
                for (o, &y) in out.iter_mut().zip(&b.data[..n]) {
                    *o = K.apply(x, y);
                }
            }
            (true, true) => {
                let v = K.apply(a.data[0], b.data[0]);
                out.fill(v);
            }
        });
    }
    lanes!(l, {
        each_binary_op!(op, K => {
            for e in 0..n {
                apply_binary(K, &mut out[e * l..(e + 1) * l], a.col(e, l), b.col(e, l));
            }
        })
    })
}

/// Reverse of [`unary`]: `adj_a += g * f'(a)` on kept lanes (`adj` and `g` are lane-wide, `l`).
#[allow(clippy::too_many_arguments)]
pub fn unary_grad<R: Real, G: Gate, W: Width>(
    op: UnaryOp,
    adj: &mut [R],
    g: &[R],
    a: View<'_, R>,
    y: View<'_, R>,
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    if matches!(op, UnaryOp::Sin | UnaryOp::Cos) {
        return trig_grad(op, adj, g, a, n, l, W::ONE, gate);
    }
    if W::ONE {
        let (adj, g, a, y) = (&mut adj[..n], &g[..n], &a.data[..n], &y.data[..n]);
        return each_unary_op!(op, K => {
            for e in 0..n {
                adj[e] += gate.pass(0, g[e] * K.derivative(a[e], y[e]));
            }
        });
    }
    lanes!(l, {
        each_unary_op!(op, K => {
            for e in 0..n {
                let (ad, gc, ac, yc) = (&mut adj[e * l..(e + 1) * l], &g[e * l..(e + 1) * l], a.col(e, l), y.col(e, l));
                for lane in 0..l {
                    let d = K.derivative(ac.at(lane), yc.at(lane));
                    ad[lane] += gate.pass(lane, gc[lane] * d);
                }
            }
        })
    })
}

/// [`unary_grad`] of `sin` and `cos`, whose derivatives are computed a chunk at a time by the
/// vectorised [`Real::cos_slice`] and [`Real::sin_slice`] (the numbers of `derivative`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn trig_grad<R: Real, G: Gate>(
    op: UnaryOp,
    adj: &mut [R],
    g: &[R],
    a: View<'_, R>,
    n: usize,
    l: usize,
    one_lane: bool,
    gate: G,
) {
    if one_lane {
        return trig_grad_run(op, &mut adj[..n], &g[..n], &a.data[..n], gate, true);
    }
    lanes!(l, {
        for e in 0..n {
            let (ad, gc) = (&mut adj[e * l..(e + 1) * l], &g[e * l..(e + 1) * l]);
            match a.col(e, l) {
                Col::Lanes(x) => trig_grad_run(op, ad, gc, x, gate, false),
                Col::Uniform(x) => add_scaled(ad, gc, Col::Uniform(op.derivative(x, x)), gate),
            }
        }
    })
}

/// `adj[i] += g[i] * f'(x[i])` on kept lanes (lane `i`, or lane 0 for the elements of one lane).
#[inline(always)]
fn trig_grad_run<R: Real, G: Gate>(
    op: UnaryOp,
    adj: &mut [R],
    g: &[R],
    x: &[R],
    gate: G,
    one_lane: bool,
) {
    const CHUNK: usize = 64;
    let mut buf = [R::ZERO; CHUNK];
    let chunks = adj
        .chunks_mut(CHUNK)
        .zip(g.chunks(CHUNK))
        .zip(x.chunks(CHUNK));
    for (c, ((adj, g), x)) in chunks.enumerate() {
        let d = &mut buf[..x.len()];
        if op == UnaryOp::Sin {
            R::cos_slice(d, x);
        } else {
            R::sin_slice(d, x);
            d.iter_mut().for_each(|v| *v = -*v);
        }
        for (i, ((a, &g), &d)) in adj.iter_mut().zip(g).zip(d.iter()).enumerate() {
            let lane = if one_lane { 0 } else { c * CHUNK + i };
            *a += gate.pass(lane, g * d);
        }
    }
}

/// `adj += g * c` on kept lanes, with the uniform/per-lane choice made outside the loop.
#[inline(always)]
fn add_scaled<R: Real, G: Gate>(adj: &mut [R], g: &[R], c: Col<'_, R>, gate: G) {
    match c {
        Col::Lanes(c) => {
            for (l, ((a, &x), &y)) in adj.iter_mut().zip(g).zip(c).enumerate() {
                *a += gate.pass(l, x * y);
            }
        }
        Col::Uniform(y) => {
            for (l, (a, &x)) in adj.iter_mut().zip(g).enumerate() {
                *a += gate.pass(l, x * y);
            }
        }
    }
}

/// Which operand of a binary op an adjoint is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first operand.
    Left,
    /// The second operand.
    Right,
}

/// Reverse of [`binary`] for one operand: `adj += g * d op / d side` on kept lanes. When that
/// operand is a broadcast scalar, every element's contribution goes to its single element.
#[allow(clippy::too_many_arguments)]
pub fn binary_grad<R: Real, G: Gate, W: Width>(
    op: BinaryOp,
    side: Side,
    adj: &mut [R],
    g: &[R],
    a: View<'_, R>,
    b: View<'_, R>,
    y: View<'_, R>,
    n: usize,
    w: W,
    gate: G,
) {
    let l = w.get();
    let target_scalar = match side {
        Side::Left => a.scalar,
        Side::Right => b.scalar,
    };
    if W::ONE {
        // One number per element: `adj += g * partial`, which is what every arm below
        // computes on one lane (the partials of `+`, `-` and `*` are exactly 1, -1, b and a).
        let at = |v: View<'_, R>, e: usize| if v.scalar { v.data[0] } else { v.data[e] };
        return each_binary_op!(op, K => {
            for e in 0..n {
                let t = if target_scalar { 0 } else { e };
                let (da, db) = K.partials(at(a, e), at(b, e), y.data[e]);
                let d = match side {
                    Side::Left => da,
                    Side::Right => db,
                };
                adj[t] += gate.pass(0, g[e] * d);
            }
        });
    }
    lanes!(l, {
        each_binary_op!(op, K => {
            for e in 0..n {
                let t = if target_scalar { 0 } else { e };
                let (ad, gc) = (&mut adj[t * l..(t + 1) * l], &g[e * l..(e + 1) * l]);
                let (ac, bc, yc) = (a.col(e, l), b.col(e, l), y.col(e, l));
                match (side, K) {
                    (Side::Left, BinaryOp::Add | BinaryOp::Sub) | (Side::Right, BinaryOp::Add) => {
                        add_scaled(ad, gc, Col::Uniform(R::ONE), gate)
                    }
                    (Side::Right, BinaryOp::Sub) => add_scaled(ad, gc, Col::Uniform(-R::ONE), gate),
                    (Side::Left, BinaryOp::Mul) => add_scaled(ad, gc, bc, gate),
                    (Side::Right, BinaryOp::Mul) => add_scaled(ad, gc, ac, gate),
                    (Side::Left, _) => {
                        for lane in 0..l {
                            let (da, _) = K.partials(ac.at(lane), bc.at(lane), yc.at(lane));
                            ad[lane] += gate.pass(lane, gc[lane] * da);
                        }
                    }
                    (Side::Right, _) => {
                        for lane in 0..l {
                            let (_, db) = K.partials(ac.at(lane), bc.at(lane), yc.at(lane));
                            ad[lane] += gate.pass(lane, gc[lane] * db);
                        }
                    }
                }
            }
        })
    })
}

/// Reverse of [`binary`] for both operands in one pass over the result's adjoint `g`, which it
/// zeroes: `da += g * d op / da` and `db += g * d op / db` on kept lanes (`None` for an operand
/// without an adjoint). No operand is broadcast: `a`, `b` and `y` hold one number for each of
/// `g`'s, and so do `da` and `db`, which are distinct. Each number gets the same products, added
/// in the same order, as [`binary_grad`] for each side and then zeroing `g`: the same bits (but
/// for the sign of a NaN, which the compiler does not keep).
/// `one_lane` says every number is lane 0's (for the gate); otherwise number `j` is lane `j`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn binary_grad_both<R: Real, G: Gate>(
    op: BinaryOp,
    da: Option<&mut [R]>,
    db: Option<&mut [R]>,
    g: &mut [R],
    a: Col<'_, R>,
    b: Col<'_, R>,
    y: Col<'_, R>,
    one_lane: bool,
    gate: G,
) {
    let n = g.len();
    fn cut<R: Real>(c: Col<'_, R>, n: usize) -> Col<'_, R> {
        match c {
            Col::Lanes(s) => Col::Lanes(&s[..n]),
            u => u,
        }
    }
    let (a, b, y) = (cut(a, n), cut(b, n), cut(y, n));
    each_binary_op!(op, K => match (K, a, b) {
        // The partials of `+` and `-` are constants; those of `*` read the operands only.
        (BinaryOp::Add | BinaryOp::Sub, _, _) => {
            let p = K.partials(R::ONE, R::ONE, R::ONE);
            both(da, db, g, |_| p, one_lane, gate)
        }
        (BinaryOp::Mul, Col::Lanes(a), Col::Lanes(b)) => {
            both(da, db, g, |j| K.partials(a[j], b[j], R::ZERO), one_lane, gate)
        }
        (BinaryOp::Mul, Col::Lanes(a), Col::Uniform(b)) => {
            both(da, db, g, |j| K.partials(a[j], b, R::ZERO), one_lane, gate)
        }
        (BinaryOp::Mul, Col::Uniform(a), Col::Lanes(b)) => {
            both(da, db, g, |j| K.partials(a, b[j], R::ZERO), one_lane, gate)
        }
        // Those of `/` read the divisor and the result.
        (BinaryOp::Div, _, Col::Lanes(b)) => match y {
            Col::Lanes(y) => both(da, db, g, |j| K.partials(R::ZERO, b[j], y[j]), one_lane, gate),
            Col::Uniform(y) => both(da, db, g, |j| K.partials(R::ZERO, b[j], y), one_lane, gate),
        },
        (BinaryOp::Div, _, Col::Uniform(b)) => match y {
            Col::Lanes(y) => both(da, db, g, |j| K.partials(R::ZERO, b, y[j]), one_lane, gate),
            Col::Uniform(y) => both(da, db, g, |_| K.partials(R::ZERO, b, y), one_lane, gate),
        },
        _ => both(da, db, g, |j| K.partials(a.at(j), b.at(j), y.at(j)), one_lane, gate),
    })
}

/// [`binary_grad_both`] for slots of several elements at several lanes, an element (a run of
/// `l` lanes) at a time. Out of line, so the reverse pass inlines one copy of the op's match.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn binary_grad_by_element<R: Real, G: Gate>(
    op: BinaryOp,
    mut da: Option<&mut [R]>,
    mut db: Option<&mut [R]>,
    g: &mut [R],
    a: View<'_, R>,
    b: View<'_, R>,
    y: View<'_, R>,
    l: usize,
    gate: G,
) {
    for (e, g) in g.chunks_exact_mut(l.max(1)).enumerate() {
        let span = e * l..(e + 1) * l;
        let da = da.as_deref_mut().map(|d| &mut d[span.clone()]);
        let db = db.as_deref_mut().map(|d| &mut d[span]);
        let (ca, cb, cy) = (a.col(e, l), b.col(e, l), y.col(e, l));
        binary_grad_both(op, da, db, g, ca, cb, cy, false, gate);
    }
}

/// `da += g * pa`, `db += g * pb` with `(pa, pb) = part(j)` on each kept number `j`, then `g`
/// zeroed. Out of line: in a function this small `part` is inlined into the loops, which in the
/// reverse pass's one large function it was not. Eight numbers or more run compiled for AVX2
/// where the CPU has it.
#[inline(never)]
fn both<R: Real, G: Gate>(
    da: Option<&mut [R]>,
    db: Option<&mut [R]>,
    g: &mut [R],
    part: impl Fn(usize) -> (R, R),
    one_lane: bool,
    gate: G,
) {
    lanes!(g.len(), { both_loops(da, db, g, part, one_lane, gate) })
}

/// The loops of [`both`] (one copy compiled for AVX2 through `lanes!`, one for the baseline).
#[inline(always)]
fn both_loops<R: Real, G: Gate>(
    da: Option<&mut [R]>,
    db: Option<&mut [R]>,
    g: &mut [R],
    part: impl Fn(usize) -> (R, R),
    one_lane: bool,
    gate: G,
) {
    let n = g.len();
    let lane = |j: usize| if one_lane { 0 } else { j };
    match (da, db) {
        (Some(da), Some(db)) => {
            let (da, db) = (&mut da[..n], &mut db[..n]);
            for j in 0..n {
                let ((pa, pb), x) = (part(j), g[j]);
                da[j] += gate.pass(lane(j), x * pa);
                db[j] += gate.pass(lane(j), x * pb);
                g[j] = R::ZERO;
            }
        }
        (Some(d), None) => {
            let d = &mut d[..n];
            for j in 0..n {
                d[j] += gate.pass(lane(j), g[j] * part(j).0);
                g[j] = R::ZERO;
            }
        }
        (None, Some(d)) => {
            let d = &mut d[..n];
            for j in 0..n {
                d[j] += gate.pass(lane(j), g[j] * part(j).1);
                g[j] = R::ZERO;
            }
        }
        (None, None) => g.fill(R::ZERO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Gated, Lanes, One, Ungated};

    /// Numbers with both signs, zeros of both signs and a NaN.
    fn numbers(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match i % 11 {
                    3 => -0.0,
                    7 => 0.0,
                    9 if seed % 2 == 0 => f64::NAN,
                    _ => (x % 2001) as f64 / 400.0 - 2.5,
                }
            })
            .collect()
    }

    /// The bits of each number; every NaN as one (the compiler keeps no NaN's sign: it may
    /// turn `x * -y` into `-(x * y)`).
    fn bits(xs: &[f64]) -> Vec<u64> {
        let nan = f64::NAN.to_bits();
        xs.iter()
            .map(|x| if x.is_nan() { nan } else { x.to_bits() })
            .collect()
    }

    fn view(data: &[f64], lanes: bool) -> View<'_, f64> {
        View {
            data,
            lanes,
            scalar: false,
        }
    }

    /// A column over every number; one number stands for every lane (uniform) unless `one`.
    fn col(d: &[f64], one: bool) -> Col<'_, f64> {
        if d.len() == 1 && !one {
            Col::Uniform(d[0])
        } else {
            Col::Lanes(d)
        }
    }

    /// Both operands in one pass give the bits of one pass per operand and a cleared result
    /// (NaNs aside), for every op, each operand per lane or uniform, with and without an
    /// adjoint, gated or not, at one lane (several elements) and at several lanes (one element).
    #[test]
    fn both_operands_in_one_pass_match_one_pass_each() {
        let mask: Vec<bool> = (0..16).map(|l| l % 3 != 1).collect();
        for op in BinaryOp::ALL {
            for (one, n, l) in [(true, 5, 1), (false, 1, 16)] {
                for form in 0..4u64 {
                    let (a_lanes, b_lanes) = (form & 1 == 0 || one, form & 2 == 0 || one);
                    let len = n * l;
                    let a = numbers(if a_lanes { len } else { 1 }, 1 + form);
                    let b = numbers(if b_lanes { len } else { 1 }, 5 + form);
                    let y: Vec<f64> = (0..len)
                        .map(|j| {
                            let at = |v: &[f64]| if v.len() == 1 { v[0] } else { v[j] };
                            op.apply(at(&a), at(&b))
                        })
                        .collect();
                    let g = numbers(len, 9);
                    for gated in [false, true] {
                        for (has_a, has_b) in [(true, true), (true, false), (false, true)] {
                            let (mut da, mut db) = (numbers(len, 13), numbers(len, 17));
                            let (mut ea, mut eb, mut gf) = (da.clone(), db.clone(), g.clone());
                            let (va, vb, vy) =
                                (view(&a, a_lanes), view(&b, b_lanes), view(&y, true));
                            let side = |side, adj: &mut [f64]| match (one, gated) {
                                (true, false) => {
                                    binary_grad(op, side, adj, &g, va, vb, vy, n, One, Ungated)
                                }
                                (true, true) => {
                                    binary_grad(op, side, adj, &g, va, vb, vy, n, One, Gated(&mask))
                                }
                                (false, false) => {
                                    binary_grad(op, side, adj, &g, va, vb, vy, n, Lanes(l), Ungated)
                                }
                                (false, true) => binary_grad(
                                    op,
                                    side,
                                    adj,
                                    &g,
                                    va,
                                    vb,
                                    vy,
                                    n,
                                    Lanes(l),
                                    Gated(&mask),
                                ),
                            };
                            if has_a {
                                side(Side::Left, &mut da);
                            }
                            if has_b {
                                side(Side::Right, &mut db);
                            }
                            let (oa, ob) =
                                (has_a.then_some(&mut ea[..]), has_b.then_some(&mut eb[..]));
                            let (ca, cb, cy) = (col(&a, one), col(&b, one), Col::Lanes(&y[..]));
                            if gated {
                                binary_grad_both(
                                    op,
                                    oa,
                                    ob,
                                    &mut gf,
                                    ca,
                                    cb,
                                    cy,
                                    one,
                                    Gated(&mask),
                                );
                            } else {
                                binary_grad_both(op, oa, ob, &mut gf, ca, cb, cy, one, Ungated);
                            }
                            let what = format!("{op:?} one={one} form={form} gated={gated}");
                            assert_eq!(bits(&da), bits(&ea), "{what}: left");
                            assert_eq!(bits(&db), bits(&eb), "{what}: right");
                            assert!(gf.iter().all(|x| x.to_bits() == 0), "{what}: cleared");
                        }
                    }
                }
            }
        }
    }
}
