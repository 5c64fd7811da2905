//! `sin`, `cos`, `exp` and `ln` that a loop over lanes vectorises.
//!
//! The standard library's versions are calls into the system's libm, one number at a time. These
//! are written in plain arithmetic and bit operations with no branch and no call on the numbers
//! they cover, so a kernel's loop over lanes inlines them and runs on vector registers:
//!
//! - `sin`, `cos`: the argument is reduced to `r + y` (two parts) in [-pi/4, pi/4] around the
//!   nearest multiple `k` of pi/2 (pi/2 in three parts, the first two of 33 bits, so that `k`
//!   times each is exact for |k| < 2^20), then Taylor polynomials of degree 17 (`sin`) and 18 (`cos`) in `r`, and
//!   the quadrant `k mod 4` swaps and negates them by bit masks. Beyond [`TRIG_LIMIT`] (and for
//!   infinities and NaN) the standard library's function is used, so every argument is covered;
//!   the slice versions compute the reduced form for every lane and redo only such lanes.
//! - `exp`: `x = k ln2 + r` with |r| <= ln2/2 (ln2 in two parts), a Taylor polynomial of degree
//!   13, and `2^k` applied as two exact powers of two, so that results in the subnormal range
//!   are rounded once. Overflow gives infinity, underflow zero, NaN stays NaN.
//! - `ln`: `x = 2^e m` with m in [sqrt(2)/2, sqrt(2)), `ln m = 2 atanh(s)`, `s = (m-1)/(m+1)`, a
//!   polynomial of degree 11 in `s^2`; subnormal arguments are scaled first. `ln 0` is `-inf`,
//!   a negative argument or NaN gives NaN, `ln inf` is `inf`.
//!
//! The slice versions are compiled for AVX2 too, and run that way where the CPU has it (the only
//! `unsafe` of the project: a call of that build after checking the CPU); the same operations in
//! the same order, without fused multiply-adds, so the bits do not depend on the CPU.
//!
//! Accuracy against the standard library (which is within one ulp of the exact value), checked
//! by the tests below over millions of arguments in every range: at most [`ULP_BOUND`] ulp in
//! `f64` (2% of the arguments tested differ by one ulp for `sin` and `cos`, 4% for `exp`, 3% for
//! `ln`), and at most one ulp in `f32` (the `f32` functions compute in `f64` and round).

/// Largest |x| whose `sin` and `cos` are computed here; beyond it, by the standard library.
pub const TRIG_LIMIT: f64 = 1.0e6;
/// Largest difference, in ulps of `f64`, from the standard library's result (checked in tests;
/// 2-4% of the arguments tested differ from it by one ulp).
pub const ULP_BOUND: u64 = 1;

/// 1.5 * 2^52: adding it rounds a number below 2^51 in magnitude to an integer, held in the
/// low bits of the sum.
const MAGIC: f64 = 6755399441055744.0;
const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = 1.5707963267341256;
const PIO2_2: f64 = 6.077100506303966e-11;
const PIO2_3: f64 = 2.0222662487959506e-21;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471805598903;
const LN2_LO: f64 = 5.497923018708371e-14;

/// 1/n! for n = 2..=19.
const INV_FACT: [f64; 18] = [
    0.5,
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
    1.1470745597729725e-11,
    7.647163731819816e-13,
    4.779477332387385e-14,
    2.8114572543455206e-15,
    1.5619206968586225e-16,
    8.22063524662433e-18,
];

/// 1/n! for n >= 2 (`n` is a constant, so this folds).
#[inline(always)]
const fn f(n: usize) -> f64 {
    INV_FACT[n - 2]
}

/// `(r, y, q)`: `x = k pi/2 + r + y` with `k` the nearest integer to `x * 2/pi`, `r + y` the
/// reduced argument in two parts (`y` below half an ulp of `r`), and `q`'s low two bits
/// `k mod 4`. Exact to about 2^-110 relative for |x| <= [`TRIG_LIMIT`].
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, u64) {
    let big = x * FRAC_2_PI + MAGIC;
    let k = big - MAGIC;
    // x - k * PIO2_1 is exact (Sterbenz), and so is k * PIO2_2.
    let t = x - k * PIO2_1;
    let w = k * PIO2_2;
    let hi = t - w;
    // The rounding error of t - w, exactly (two-sum), less the third part.
    let bb = hi - t;
    let lo = ((t - (hi - bb)) - (w + bb)) - k * PIO2_3;
    let r = hi + lo;
    (r, lo - (r - hi), big.to_bits())
}

/// sin(r + y) for |r| <= pi/4, |y| below half an ulp of r.
#[inline(always)]
fn sin_poly(r: f64, y: f64) -> f64 {
    let z = r * r;
    let p = f(17) - z * f(19);
    let p = f(15) - z * p;
    let p = f(13) - z * p;
    let p = f(11) - z * p;
    let p = f(9) - z * p;
    let p = f(7) - z * p;
    let p = f(5) - z * p;
    let v = z * r;
    // r - r^3/6 + r^5 p + y cos r, with cos r as 1 - r^2/2.
    r - ((z * (0.5 * y - v * p) - y) + v * f(3))
}

/// cos(r + y) for |r| <= pi/4, |y| below half an ulp of r.
#[inline(always)]
fn cos_poly(r: f64, y: f64) -> f64 {
    let z = r * r;
    let p = f(16) - z * f(18);
    let p = f(14) - z * p;
    let p = f(12) - z * p;
    let p = f(10) - z * p;
    let p = f(8) - z * p;
    let p = f(6) - z * p;
    let p = f(4) - z * p;
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    // 1 - hz + z^2 p - y sin r, with the rounding error of 1 - hz added back.
    w + (((1.0 - w) - hz) + ((z * z) * p - r * y))
}

/// sin(x) (`quadrant` 0) or cos(x) (`quadrant` 1) for |x| <= [`TRIG_LIMIT`].
#[inline(always)]
fn trig_core(x: f64, quadrant: u64) -> f64 {
    let (r, y, q) = reduce(x);
    let q = q.wrapping_add(quadrant);
    let (s, c) = (sin_poly(r, y), cos_poly(r, y));
    // Odd quadrants take the cosine; quadrants 2 and 3 negate.
    let swap = 0u64.wrapping_sub(q & 1);
    let v = (c.to_bits() & swap) | (s.to_bits() & !swap);
    let v = f64::from_bits(v ^ ((q & 2) << 62));
    // sin(-0) is -0 (the reduction's sum gives +0).
    if quadrant == 0 && x == 0.0 {
        x
    } else {
        v
    }
}

#[inline(always)]
fn near(x: f64) -> bool {
    x.abs() <= TRIG_LIMIT
}

/// Sine.
#[inline(always)]
pub fn sin(x: f64) -> f64 {
    if near(x) {
        trig_core(x, 0)
    } else {
        x.sin()
    }
}

/// Cosine.
#[inline(always)]
pub fn cos(x: f64) -> f64 {
    if near(x) {
        trig_core(x, 1)
    } else {
        x.cos()
    }
}

/// `out[i] = sin(xs[i])`, the same numbers as [`sin`].
#[inline(always)]
pub fn sin_slice(out: &mut [f64], xs: &[f64]) {
    dispatch(out, xs, Fun::Sin);
}

/// `out[i] = cos(xs[i])`, the same numbers as [`cos`].
#[inline(always)]
pub fn cos_slice(out: &mut [f64], xs: &[f64]) {
    dispatch(out, xs, Fun::Cos);
}

/// `out[i] = exp(xs[i])`, the same numbers as [`exp`].
#[inline(always)]
pub fn exp_slice(out: &mut [f64], xs: &[f64]) {
    dispatch(out, xs, Fun::Exp);
}

/// `out[i] = ln(xs[i])`, the same numbers as [`ln`].
#[inline(always)]
pub fn ln_slice(out: &mut [f64], xs: &[f64]) {
    dispatch(out, xs, Fun::Ln);
}

/// [`sin_slice`] in `f32` (computed in `f64` and rounded, as `sin(x as f64) as f32`).
#[inline(always)]
pub fn sin_slice_f32(out: &mut [f32], xs: &[f32]) {
    dispatch(out, xs, Fun::Sin);
}

/// [`cos_slice`] in `f32` (computed in `f64` and rounded).
#[inline(always)]
pub fn cos_slice_f32(out: &mut [f32], xs: &[f32]) {
    dispatch(out, xs, Fun::Cos);
}

/// [`exp_slice`] in `f32` (computed in `f64` and rounded).
#[inline(always)]
pub fn exp_slice_f32(out: &mut [f32], xs: &[f32]) {
    dispatch(out, xs, Fun::Exp);
}

/// [`ln_slice`] in `f32` (computed in `f64` and rounded).
#[inline(always)]
pub fn ln_slice_f32(out: &mut [f32], xs: &[f32]) {
    dispatch(out, xs, Fun::Ln);
}

/// `s[i] = sin(xs[i])` and `c[i] = cos(xs[i])` in one pass (one reduction of each argument),
/// the same numbers as [`sin_slice`] and [`cos_slice`].
#[inline(always)]
pub fn sin_cos_slice(s: &mut [f64], c: &mut [f64], xs: &[f64]) {
    dispatch_pair(s, c, xs);
}

/// [`sin_cos_slice`] in `f32` (computed in `f64` and rounded).
#[inline(always)]
pub fn sin_cos_slice_f32(s: &mut [f32], c: &mut [f32], xs: &[f32]) {
    dispatch_pair(s, c, xs);
}

/// [`pair_loop`] compiled for AVX2 where the CPU has it, else for the baseline (as
/// [`dispatch`]).
#[inline(always)]
fn dispatch_pair<T: Copy + Into<f64> + Narrow>(s: &mut [T], c: &mut [T], xs: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above; that is the only condition of
        // calling a function compiled with `target_feature(enable = "avx2")`.
        #[allow(unsafe_code)]
        unsafe {
            pair_loop_avx2(s, c, xs)
        };
        return;
    }
    pair_loop(s, c, xs);
}

/// [`pair_loop`], compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2. (An `unsafe fn`, as `target_feature` requires before Rust 1.86.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn pair_loop_avx2<T: Copy + Into<f64> + Narrow>(s: &mut [T], c: &mut [T], xs: &[T]) {
    pair_loop(s, c, xs);
}

/// Sine and cosine of every number of `xs`: the reduced form on every lane, then the standard
/// library's functions on the lanes beyond [`TRIG_LIMIT`], as [`trig_slice`].
#[inline(always)]
fn pair_loop<T: Copy + Into<f64> + Narrow>(s: &mut [T], c: &mut [T], xs: &[T]) {
    let n = xs.len();
    let (s, c) = (&mut s[..n], &mut c[..n]);
    let mut any_far = false;
    for i in 0..n {
        let x: f64 = xs[i].into();
        let (r, y, q) = reduce(x);
        let (ps, pc) = (sin_poly(r, y), cos_poly(r, y));
        // As `trig_core` picks for quadrant `q` (the sine) and `q + 1` (the cosine).
        let pick = |q: u64| {
            let swap = 0u64.wrapping_sub(q & 1);
            let v = (pc.to_bits() & swap) | (ps.to_bits() & !swap);
            f64::from_bits(v ^ ((q & 2) << 62))
        };
        let sin = if x == 0.0 { x } else { pick(q) };
        s[i] = T::narrow(sin);
        c[i] = T::narrow(pick(q.wrapping_add(1)));
        any_far |= !near(x);
    }
    if any_far {
        for i in 0..n {
            let x: f64 = xs[i].into();
            if !near(x) {
                (s[i], c[i]) = (T::narrow(x.sin()), T::narrow(x.cos()));
            }
        }
    }
}

/// A function of the slice versions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Fun {
    Sin,
    Cos,
    Exp,
    Ln,
}

/// [`slice_loop`] compiled for AVX2 where the CPU has it (four numbers to an instruction
/// instead of two), else for the baseline. The same operations in the same order either way,
/// and no fused multiply-add, so the results are the same bits on every CPU.
#[inline(always)]
fn dispatch<T: Copy + Into<f64> + Narrow>(out: &mut [T], xs: &[T], f: Fun) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above; that is the only condition of
        // calling a function compiled with `target_feature(enable = "avx2")`.
        #[allow(unsafe_code)]
        unsafe {
            slice_loop_avx2(out, xs, f)
        };
        return;
    }
    slice_loop(out, xs, f);
}

/// [`slice_loop`], compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2. (An `unsafe fn`, as `target_feature` requires before Rust 1.86.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn slice_loop_avx2<T: Copy + Into<f64> + Narrow>(out: &mut [T], xs: &[T], f: Fun) {
    slice_loop(out, xs, f);
}

/// `f` of every number of `xs`, the function chosen once outside the loop.
#[inline(always)]
fn slice_loop<T: Copy + Into<f64> + Narrow>(out: &mut [T], xs: &[T], f: Fun) {
    match f {
        Fun::Sin => trig_slice(out, xs, 0, f64::sin),
        Fun::Cos => trig_slice(out, xs, 1, f64::cos),
        Fun::Exp => {
            for (o, &x) in out.iter_mut().zip(xs) {
                *o = T::narrow(exp(x.into()));
            }
        }
        Fun::Ln => {
            for (o, &x) in out.iter_mut().zip(xs) {
                *o = T::narrow(ln(x.into()));
            }
        }
    }
}

/// The reduced form on every lane, then the standard library's function on the lanes beyond
/// [`TRIG_LIMIT`] (a second pass, taken only when there are such lanes).
#[inline(always)]
fn trig_slice<T: Copy + Into<f64> + Narrow>(
    out: &mut [T],
    xs: &[T],
    quadrant: u64,
    far: fn(f64) -> f64,
) {
    let mut any_far = false;
    for (o, &x) in out.iter_mut().zip(xs) {
        let x: f64 = x.into();
        *o = T::narrow(trig_core(x, quadrant));
        any_far |= !near(x);
    }
    if any_far {
        for (o, &x) in out.iter_mut().zip(xs) {
            let x: f64 = x.into();
            if !near(x) {
                *o = T::narrow(far(x));
            }
        }
    }
}

/// Rounding an `f64` result to the slice's type.
trait Narrow {
    fn narrow(x: f64) -> Self;
}

impl Narrow for f64 {
    #[inline(always)]
    fn narrow(x: f64) -> f64 {
        x
    }
}

impl Narrow for f32 {
    #[inline(always)]
    fn narrow(x: f64) -> f32 {
        x as f32
    }
}

/// e^x.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    // Past these e^x is infinite or zero; NaN passes through the clamp.
    let x = x.clamp(-746.0, 710.0);
    let big = x * LOG2_E + MAGIC;
    let k = big - MAGIC;
    let ki = (big.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let p = f(13);
    let p = f(12) + r * p;
    let p = f(11) + r * p;
    let p = f(10) + r * p;
    let p = f(9) + r * p;
    let p = f(8) + r * p;
    let p = f(7) + r * p;
    let p = f(6) + r * p;
    let p = f(5) + r * p;
    let p = f(4) + r * p;
    let p = f(3) + r * p;
    let p = f(2) + r * p;
    // 1 + r rounded, and its rounding error exactly (|r| < 1), added back with the rest.
    let hi = 1.0 + r;
    let lo = (1.0 - hi) + r;
    let e_r = hi + (lo + (r * r) * p);
    // 2^k as two powers of two, each a normal number for every clamped x.
    let k1 = ki >> 1;
    let k2 = ki.wrapping_sub(k1);
    let s1 = f64::from_bits((k1.wrapping_add(1023) as u64) << 52);
    let s2 = f64::from_bits((k2.wrapping_add(1023) as u64) << 52);
    (e_r * s1) * s2
}

/// ln x.
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    const FRAC: u64 = (1 << 52) - 1;
    const ONE: u64 = 0x3ff0_0000_0000_0000;
    const HALF: u64 = 0x3fe0_0000_0000_0000;
    // The mantissa bits of sqrt(2).
    const SQRT2_FRAC: u64 = 0x0006_a09e_667f_3bcd;
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * 18014398509481984.0 } else { x };
    let bits = xs.to_bits();
    let frac = bits & FRAC;
    let high = frac > SQRT2_FRAC;
    let scaled = if tiny { 54 } else { 0 };
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 - scaled + high as i64;
    let m = f64::from_bits(frac | if high { HALF } else { ONE });
    // e as a float without an integer conversion (|e| < 2^51).
    let ef = f64::from_bits(MAGIC.to_bits().wrapping_add(e as u64)) - MAGIC;
    let fm = m - 1.0;
    let s = fm / (2.0 + fm);
    let z = s * s;
    let p = 2.0 / 23.0;
    let p = 2.0 / 21.0 + z * p;
    let p = 2.0 / 19.0 + z * p;
    let p = 2.0 / 17.0 + z * p;
    let p = 2.0 / 15.0 + z * p;
    let p = 2.0 / 13.0 + z * p;
    let p = 2.0 / 11.0 + z * p;
    let p = 2.0 / 9.0 + z * p;
    let p = 2.0 / 7.0 + z * p;
    let p = 2.0 / 5.0 + z * p;
    let p = 2.0 / 3.0 + z * p;
    let r = z * p;
    let hfsq = 0.5 * fm * fm;
    let y = ef * LN2_HI - ((hfsq - (s * (hfsq + r) + ef * LN2_LO)) - fm);
    let y = if x > 0.0 {
        y
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else {
        f64::NAN
    };
    if x == f64::INFINITY {
        x
    } else {
        y
    }
}

/// Work that [`with_avx2`] can compile for AVX2: `run` must be `#[inline(always)]`, so that it
/// is compiled into the AVX2 function (a closure is not).
pub trait Work {
    /// What the work gives back.
    type Out;
    /// Does the work.
    fn run(self) -> Self::Out;
}

/// A closure as [`Work`]: mark the closure `#[inline(always)]` (`Lanes(#[inline(always)] || ...)`),
/// so that its body is compiled into the AVX2 function.
pub struct Lanes<F>(pub F);

impl<T, F: FnOnce() -> T> Work for Lanes<F> {
    type Out = T;
    #[inline(always)]
    fn run(self) -> T {
        (self.0)()
    }
}

/// Runs `w`, compiled for AVX2 where the CPU has it, else as it is. The same bits either way:
/// nothing is fused into a multiply-add.
#[inline(always)]
pub fn with_avx2<W: Work>(w: W) -> W::Out {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above; that is the only condition of
        // calling a function compiled with `target_feature(enable = "avx2")`.
        #[allow(unsafe_code)]
        return unsafe { run_avx2(w) };
    }
    w.run()
}

/// `w.run()`, compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn run_avx2<W: Work>(w: W) -> W::Out {
    w.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in ulps between two finite or equal numbers.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b || (a.is_nan() && b.is_nan()) {
            return 0;
        }
        let key = |x: f64| {
            let b = x.to_bits() as i64;
            if b < 0 {
                i64::MIN - b
            } else {
                b
            }
        };
        key(a).abs_diff(key(b))
    }

    fn ulps32(a: f32, b: f32) -> u64 {
        if a == b || (a.is_nan() && b.is_nan()) {
            return 0;
        }
        let key = |x: f32| {
            let b = x.to_bits() as i32 as i64;
            if b < 0 {
                i32::MIN as i64 - b
            } else {
                b
            }
        };
        key(a).abs_diff(key(b))
    }

    /// A SplitMix64 stream of numbers spread over `[lo, hi]`, uniformly or log-uniformly.
    fn args(seed: u64, n: usize, lo: f64, hi: f64, log: bool) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                let u = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64;
                if log {
                    (lo.ln() + u * (hi.ln() - lo.ln())).exp()
                } else {
                    lo + u * (hi - lo)
                }
            })
            .collect()
    }

    fn worst(xs: &[f64], ours: fn(f64) -> f64, std: fn(f64) -> f64) -> (u64, f64) {
        let differ = xs
            .iter()
            .filter(|&&x| ours(x).to_bits() != std(x).to_bits())
            .count();
        eprintln!("{differ} of {} differ from the standard library", xs.len());
        xs.iter()
            .map(|&x| (ulps(ours(x), std(x)), x))
            .max_by_key(|&(u, _)| u)
            .unwrap_or((0, 0.0))
    }

    #[test]
    fn sin_and_cos_within_the_bound() {
        let mut xs = args(1, 400_000, -4.0, 4.0, false);
        xs.extend(args(2, 400_000, -TRIG_LIMIT, TRIG_LIMIT, false));
        xs.extend(args(3, 200_000, 1e-300, 1e6, true));
        xs.extend(args(4, 100_000, 1e6, 1e300, true));
        xs.extend(xs.clone().iter().map(|x| -x).collect::<Vec<_>>());
        // Near multiples of pi/2, where the reduced argument is smallest.
        for k in 1..20_000i64 {
            let c = k as f64 * std::f64::consts::FRAC_PI_2;
            xs.extend([
                c,
                f64::from_bits(c.to_bits() + 1),
                f64::from_bits(c.to_bits() - 1),
            ]);
        }
        for (name, ours, std) in [
            ("sin", sin as fn(f64) -> f64, f64::sin as fn(f64) -> f64),
            ("cos", cos, f64::cos),
        ] {
            let (u, x) = worst(&xs, ours, std);
            eprintln!("{name}: at most {u} ulps (at {x:e})");
            assert!(u <= ULP_BOUND, "{name}({x:e}): {u} ulps");
        }
    }

    #[test]
    fn exp_within_the_bound() {
        let mut xs = args(5, 600_000, -746.0, 710.0, false);
        xs.extend(args(6, 400_000, -2.0, 2.0, false));
        xs.extend(args(7, 200_000, 1e-300, 1.0, true));
        xs.extend(args(8, 100_000, -745.2, -708.0, false));
        xs.extend(xs.clone().iter().map(|x| -x).collect::<Vec<_>>());
        let (u, x) = worst(&xs, exp, f64::exp);
        eprintln!("exp: at most {u} ulps (at {x:e})");
        assert!(u <= ULP_BOUND, "exp({x:e}): {u} ulps");
    }

    #[test]
    fn ln_within_the_bound() {
        let mut xs = args(9, 600_000, 1e-320, 1e308, true);
        xs.extend(args(10, 400_000, 0.5, 2.0, false));
        xs.extend(args(11, 200_000, 1.0 - 1e-6, 1.0 + 1e-6, false));
        let (u, x) = worst(&xs, ln, f64::ln);
        eprintln!("ln: at most {u} ulps (at {x:e})");
        assert!(u <= ULP_BOUND, "ln({x:e}): {u} ulps");
    }

    #[test]
    fn special_values_match_the_standard_library() {
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::MAX,
            -f64::MAX,
            709.782712893384,
            709.7827128933841,
            -745.1332191019411,
            -745.1332191019412,
            -1.0,
            1.0,
        ];
        for x in specials {
            for (name, ours, std) in [
                ("sin", sin as fn(f64) -> f64, f64::sin as fn(f64) -> f64),
                ("cos", cos, f64::cos),
                ("exp", exp, f64::exp),
                ("ln", ln, f64::ln),
            ] {
                let (a, b) = (ours(x), std(x));
                assert!(
                    ulps(a, b) <= ULP_BOUND && a.is_sign_negative() == b.is_sign_negative()
                        || a.is_nan() && b.is_nan(),
                    "{name}({x:e}) = {a:e}, the standard library gives {b:e}"
                );
            }
        }
    }

    #[test]
    fn slices_give_the_same_numbers_as_one_at_a_time() {
        let mut xs = args(12, 10_000, -1e7, 1e7, false);
        xs.extend([f64::NAN, f64::INFINITY, 3e6, -2e300, 0.5]);
        let mut out = vec![0.0; xs.len()];
        sin_slice(&mut out, &xs);
        for (&o, &x) in out.iter().zip(&xs) {
            assert_eq!(o.to_bits(), sin(x).to_bits(), "sin({x:e})");
        }
        cos_slice(&mut out, &xs);
        for (&o, &x) in out.iter().zip(&xs) {
            assert_eq!(o.to_bits(), cos(x).to_bits(), "cos({x:e})");
        }
        // The baseline build of the loop gives the same bits as the AVX2 one (where the CPU
        // has AVX2, the slices above ran it).
        let mut base = vec![0.0; xs.len()];
        for f in [Fun::Sin, Fun::Cos, Fun::Exp, Fun::Ln] {
            slice_loop(&mut base, &xs, f);
            dispatch(&mut out, &xs, f);
            let same = base
                .iter()
                .zip(&out)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{f:?}");
        }
        exp_slice(&mut out, &xs);
        assert!(out
            .iter()
            .zip(&xs)
            .all(|(o, &x)| o.to_bits() == exp(x).to_bits()));
        ln_slice(&mut out, &xs);
        assert!(out
            .iter()
            .zip(&xs)
            .all(|(o, &x)| o.to_bits() == ln(x).to_bits()));
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let mut out32 = vec![0.0f32; xs.len()];
        sin_slice_f32(&mut out32, &xs32);
        for (&o, &x) in out32.iter().zip(&xs32) {
            assert_eq!(o.to_bits(), (sin(x as f64) as f32).to_bits(), "sin({x:e})");
        }
        cos_slice_f32(&mut out32, &xs32);
        for (&o, &x) in out32.iter().zip(&xs32) {
            assert_eq!(o.to_bits(), (cos(x as f64) as f32).to_bits(), "cos({x:e})");
        }
    }

    #[test]
    fn sine_and_cosine_in_one_pass_are_the_slices_numbers() {
        let mut xs = args(14, 10_000, -1e7, 1e7, false);
        xs.extend(args(15, 10_000, -4.0, 4.0, false));
        xs.extend([
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            3e6,
            -2e300,
            0.5,
            0.0,
            -0.0,
        ]);
        let (mut s, mut c) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        sin_cos_slice(&mut s, &mut c, &xs);
        for ((&s, &c), &x) in s.iter().zip(&c).zip(&xs) {
            assert_eq!(s.to_bits(), sin(x).to_bits(), "sin({x:e})");
            assert_eq!(c.to_bits(), cos(x).to_bits(), "cos({x:e})");
        }
        // The baseline build gives the AVX2 build's bits.
        let (mut bs, mut bc) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        pair_loop(&mut bs, &mut bc, &xs);
        assert!(bs.iter().zip(&s).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(bc.iter().zip(&c).all(|(a, b)| a.to_bits() == b.to_bits()));
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let (mut s32, mut c32) = (vec![0.0f32; xs.len()], vec![0.0f32; xs.len()]);
        sin_cos_slice_f32(&mut s32, &mut c32, &xs32);
        for ((&s, &c), &x) in s32.iter().zip(&c32).zip(&xs32) {
            assert_eq!(s.to_bits(), (sin(x as f64) as f32).to_bits(), "sin({x:e})");
            assert_eq!(c.to_bits(), (cos(x as f64) as f32).to_bits(), "cos({x:e})");
        }
    }

    #[test]
    fn f32_within_one_ulp() {
        let mut xs = args(13, 300_000, -100.0, 100.0, false);
        xs.extend(args(14, 300_000, 1e-30, 80.0, true));
        for &x in &xs {
            let x = x as f32;
            let pairs = [
                (sin(x as f64) as f32, x.sin()),
                (cos(x as f64) as f32, x.cos()),
                (exp(x as f64) as f32, x.exp()),
            ];
            for (a, b) in pairs {
                assert!(ulps32(a, b) <= 1, "{x:e}: {a:e} against {b:e}");
            }
            if x > 0.0 {
                let (a, b) = (ln(x as f64) as f32, x.ln());
                assert!(ulps32(a, b) <= 1, "ln({x:e}): {a:e} against {b:e}");
            }
        }
    }
}
