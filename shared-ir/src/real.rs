//! The floating-point types a payload can hold.

use crate::vmath;
use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// A payload number: `f64` (the CPU default) or `f32` (the GPU's type, and `--precision f32`).
///
/// Every numeric kernel is written once over this trait and monomorphised for both types.
pub trait Real:
    Copy
    + Default
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// Not a number.
    const NAN: Self;
    /// The smallest argument the artifact-compatible protected `sqrt` and `log` accept (1e-8).
    const PROTECT_FLOOR: Self;
    /// The name users write on the command line (`f64`, `f32`).
    const NAME: &'static str;

    /// Converts from `f64`, rounding to nearest for `f32`.
    fn from_f64(x: f64) -> Self;
    /// Widens to `f64` exactly.
    fn to_f64(self) -> f64;
    /// Sine ([`crate::vmath::sin`], in `f64`).
    fn sin(self) -> Self;
    /// Cosine ([`crate::vmath::cos`], in `f64`).
    fn cos(self) -> Self;
    /// e^x ([`crate::vmath::exp`], in `f64`).
    fn exp(self) -> Self;
    /// Natural logarithm (NaN below zero, -inf at zero; [`crate::vmath::ln`], in `f64`).
    fn ln(self) -> Self;
    /// `out[i] = xs[i].sin()`, vectorised over the slice.
    fn sin_slice(out: &mut [Self], xs: &[Self]);
    /// `out[i] = xs[i].cos()`, vectorised over the slice.
    fn cos_slice(out: &mut [Self], xs: &[Self]);
    /// `s[i] = xs[i].sin()` and `c[i] = xs[i].cos()` in one pass, vectorised over the slice.
    fn sin_cos_slice(s: &mut [Self], c: &mut [Self], xs: &[Self]);
    /// `out[i] = xs[i].exp()`, vectorised over the slice.
    fn exp_slice(out: &mut [Self], xs: &[Self]);
    /// `out[i] = xs[i].ln()`, vectorised over the slice.
    fn ln_slice(out: &mut [Self], xs: &[Self]);
    /// Square root (NaN below zero).
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// x^y as `powf`.
    fn powf(self, y: Self) -> Self;
    /// Largest integer not greater than x.
    fn floor(self) -> Self;
    /// Integer part, rounding toward zero.
    fn trunc(self) -> Self;
    /// True unless NaN or infinite.
    fn is_finite(self) -> bool;
    /// True for NaN.
    fn is_nan(self) -> bool;
    /// True when the sign bit is set (so for -0.0 too).
    fn is_sign_negative(self) -> bool;
    /// Fused or plain multiply-add `self * a + b` (plain: results must not depend on the CPU).
    #[inline(always)]
    fn mul_add_plain(self, a: Self, b: Self) -> Self {
        self * a + b
    }
}

macro_rules! impl_real {
    ($t:ty, $name:literal, $sin_slice:path, $cos_slice:path, $sin_cos_slice:path, $exp_slice:path, $ln_slice:path) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const INFINITY: Self = <$t>::INFINITY;
            const NAN: Self = <$t>::NAN;
            const PROTECT_FLOOR: Self = 1e-8;
            const NAME: &'static str = $name;

            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sin(self) -> Self {
                vmath::sin(self as f64) as $t
            }
            #[inline(always)]
            fn cos(self) -> Self {
                vmath::cos(self as f64) as $t
            }
            #[inline(always)]
            fn exp(self) -> Self {
                vmath::exp(self as f64) as $t
            }
            #[inline(always)]
            fn ln(self) -> Self {
                vmath::ln(self as f64) as $t
            }
            #[inline(always)]
            fn sin_slice(out: &mut [Self], xs: &[Self]) {
                $sin_slice(out, xs)
            }
            #[inline(always)]
            fn cos_slice(out: &mut [Self], xs: &[Self]) {
                $cos_slice(out, xs)
            }
            #[inline(always)]
            fn sin_cos_slice(s: &mut [Self], c: &mut [Self], xs: &[Self]) {
                $sin_cos_slice(s, c, xs)
            }
            #[inline(always)]
            fn exp_slice(out: &mut [Self], xs: &[Self]) {
                $exp_slice(out, xs)
            }
            #[inline(always)]
            fn ln_slice(out: &mut [Self], xs: &[Self]) {
                $ln_slice(out, xs)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn powf(self, y: Self) -> Self {
                <$t>::powf(self, y)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
        }
    };
}

impl_real!(
    f64,
    "f64",
    vmath::sin_slice,
    vmath::cos_slice,
    vmath::sin_cos_slice,
    vmath::exp_slice,
    vmath::ln_slice
);
impl_real!(
    f32,
    "f32",
    vmath::sin_slice_f32,
    vmath::cos_slice_f32,
    vmath::sin_cos_slice_f32,
    vmath::exp_slice_f32,
    vmath::ln_slice_f32
);
