//! The oracle's number types: plain `f64`, and forward-mode dual numbers `v + d ε` that carry
//! the derivative along one direction of the inputs.
//!
//! The derivative rules here are the textbook ones, written independently of the runtime's
//! reverse-mode adjoints; where the language reference fixes a value at a singular point
//! (`abs` at 0, `pow` with `b = 0` or `a = 0`) the dual follows the reference.

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A number the oracle computes with.
pub trait Scalar:
    Copy
    + Debug
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A constant (derivative 0).
    fn cst(x: f64) -> Self;
    /// The variable being differentiated (derivative 1; for plain numbers just `x`).
    fn var(x: f64) -> Self;
    /// The value.
    fn val(self) -> f64;
    /// The derivative along the current direction (0 for plain numbers).
    fn der(self) -> f64;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// e^x.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value (derivative 0 at 0).
    fn abs(self) -> Self;
    /// `self^b`, with the reference's derivative conventions.
    fn pow(self, b: Self) -> Self;
}

impl Scalar for f64 {
    #[inline]
    fn cst(x: f64) -> Self {
        x
    }
    #[inline]
    fn var(x: f64) -> Self {
        x
    }
    #[inline]
    fn val(self) -> f64 {
        self
    }
    #[inline]
    fn der(self) -> f64 {
        0.0
    }
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn cos(self) -> Self {
        f64::cos(self)
    }
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn ln(self) -> Self {
        f64::ln(self)
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn pow(self, b: Self) -> Self {
        self.powf(b)
    }
}

/// A dual number: value `v` and derivative `d` along one input direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual {
    /// The value.
    pub v: f64,
    /// The derivative.
    pub d: f64,
}

impl Dual {
    /// A dual number.
    pub fn new(v: f64, d: f64) -> Dual {
        Dual { v, d }
    }

    /// `f(self)` with derivative `f'(v)` given.
    #[inline]
    fn chain(self, y: f64, dy_dx: f64) -> Dual {
        Dual::new(y, dy_dx * self.d)
    }
}

impl Add for Dual {
    type Output = Dual;
    #[inline]
    fn add(self, o: Dual) -> Dual {
        Dual::new(self.v + o.v, self.d + o.d)
    }
}

impl Sub for Dual {
    type Output = Dual;
    #[inline]
    fn sub(self, o: Dual) -> Dual {
        Dual::new(self.v - o.v, self.d - o.d)
    }
}

impl Mul for Dual {
    type Output = Dual;
    #[inline]
    fn mul(self, o: Dual) -> Dual {
        Dual::new(self.v * o.v, self.d * o.v + self.v * o.d)
    }
}

impl Div for Dual {
    type Output = Dual;
    #[inline]
    fn div(self, o: Dual) -> Dual {
        let y = self.v / o.v;
        Dual::new(y, (self.d - y * o.d) / o.v)
    }
}

impl Neg for Dual {
    type Output = Dual;
    #[inline]
    fn neg(self) -> Dual {
        Dual::new(-self.v, -self.d)
    }
}

impl Scalar for Dual {
    #[inline]
    fn cst(x: f64) -> Self {
        Dual::new(x, 0.0)
    }
    #[inline]
    fn var(x: f64) -> Self {
        Dual::new(x, 1.0)
    }
    #[inline]
    fn val(self) -> f64 {
        self.v
    }
    #[inline]
    fn der(self) -> f64 {
        self.d
    }
    fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }
    fn cos(self) -> Self {
        self.chain(self.v.cos(), -self.v.sin())
    }
    fn exp(self) -> Self {
        let y = self.v.exp();
        self.chain(y, y)
    }
    fn ln(self) -> Self {
        self.chain(self.v.ln(), 1.0 / self.v)
    }
    fn sqrt(self) -> Self {
        let y = self.v.sqrt();
        self.chain(y, 0.5 / y)
    }
    fn abs(self) -> Self {
        let s = if self.v > 0.0 {
            1.0
        } else if self.v < 0.0 {
            -1.0
        } else {
            0.0
        };
        self.chain(self.v.abs(), s)
    }
    fn pow(self, b: Self) -> Self {
        let y = self.v.powf(b.v);
        // d/da = b a^(b-1), taken as 0 when b = 0; d/db = y ln a, taken as 0 when a = 0, b >= 0.
        let da = if b.v == 0.0 {
            0.0
        } else {
            b.v * self.v.powf(b.v - 1.0)
        };
        let db = if self.v == 0.0 && b.v >= 0.0 {
            0.0
        } else {
            y * self.v.ln()
        };
        let mut d = 0.0;
        if self.d != 0.0 {
            d += da * self.d;
        }
        if b.d != 0.0 {
            d += db * b.d;
        }
        Dual::new(y, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dual_rules_match_calculus() {
        let x = Dual::new(0.7, 1.0);
        let y = (x * x).sin() / (x.exp() + Dual::cst(1.0));
        let f = |t: f64| (t * t).sin() / (t.exp() + 1.0);
        let h = 1e-6;
        let fd = (f(0.7 + h) - f(0.7 - h)) / (2.0 * h);
        assert!((y.d - fd).abs() < 1e-8);
        let p = Dual::new(2.0, 1.0).pow(Dual::new(1.5, 0.0));
        assert!((p.d - 1.5 * 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(Dual::new(0.0, 1.0).abs().d, 0.0);
    }
}
