//! The scalar operation set: each op keeps its forward rule and its derivative side by side.
//!
//! The CPU runtime applies these rules lane by lane inside vectorised loops; a GPU backend
//! implements the same rules in WGSL under the name [`UnaryOp::name`] / [`BinaryOp::name`].

use crate::real::Real;

/// An elementwise function of one argument.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `(- x)`.
    Neg,
    /// `(/ x)`, the reciprocal.
    Recip,
    /// `sin`.
    Sin,
    /// `cos`.
    Cos,
    /// `exp`.
    Exp,
    /// `log`, IEEE: NaN below zero, -inf at zero.
    Log,
    /// `sqrt`, IEEE: NaN below zero.
    Sqrt,
    /// `abs`; its derivative at zero is zero.
    Abs,
    /// `log` with the artifact's protection: the argument is clamped to at least 1e-8 and the
    /// derivative is zero below the clamp.
    LogProtected,
    /// `sqrt` with the artifact's protection (clamp to at least 1e-8, zero derivative below).
    SqrtProtected,
}

impl UnaryOp {
    /// Every unary op, for tests that sweep the set.
    pub const ALL: [UnaryOp; 10] = [
        UnaryOp::Neg,
        UnaryOp::Recip,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sqrt,
        UnaryOp::Abs,
        UnaryOp::LogProtected,
        UnaryOp::SqrtProtected,
    ];

    /// The op's name in the object language and in shader sources.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Recip => "recip",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Abs => "abs",
            UnaryOp::LogProtected => "log_protected",
            UnaryOp::SqrtProtected => "sqrt_protected",
        }
    }

    /// The forward rule `y = f(x)`.
    #[inline(always)]
    pub fn apply<R: Real>(self, x: R) -> R {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Recip => R::ONE / x,
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Abs => x.abs(),
            UnaryOp::LogProtected => protect(x).ln(),
            UnaryOp::SqrtProtected => protect(x).sqrt(),
        }
    }

    /// `out[i] = f(xs[i])`: the same numbers as [`UnaryOp::apply`] one by one, with `sin`,
    /// `cos`, `exp` and `log` vectorised over the slice (for AVX2 where the CPU has it).
    #[inline(always)]
    pub fn apply_slice<R: Real>(self, out: &mut [R], xs: &[R]) {
        match self {
            UnaryOp::Sin => R::sin_slice(out, xs),
            UnaryOp::Cos => R::cos_slice(out, xs),
            UnaryOp::Exp => R::exp_slice(out, xs),
            UnaryOp::Log => R::ln_slice(out, xs),
            _ => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = self.apply(x);
                }
            }
        }
    }

    /// The derivative `dy/dx`, given the argument `x` and the forward result `y`.
    #[inline(always)]
    pub fn derivative<R: Real>(self, x: R, y: R) -> R {
        match self {
            UnaryOp::Neg => -R::ONE,
            UnaryOp::Recip => -(y * y),
            UnaryOp::Sin => x.cos(),
            UnaryOp::Cos => -x.sin(),
            UnaryOp::Exp => y,
            UnaryOp::Log => R::ONE / x,
            UnaryOp::Sqrt => R::from_f64(0.5) / y,
            UnaryOp::Abs => sign(x),
            UnaryOp::LogProtected => {
                if x > R::PROTECT_FLOOR {
                    R::ONE / x
                } else {
                    R::ZERO
                }
            }
            UnaryOp::SqrtProtected => {
                if x > R::PROTECT_FLOOR {
                    R::from_f64(0.5) / y
                } else {
                    R::ZERO
                }
            }
        }
    }
}

/// An elementwise function of two arguments (a scalar argument broadcasts against a tensor).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`, IEEE: division by zero gives an infinity or NaN.
    Div,
    /// `pow`, `a^b`.
    Pow,
    /// `min`; on a tie the first argument takes the gradient.
    Min,
    /// `max`; on a tie the first argument takes the gradient.
    Max,
    /// `modulo`: the result has the sign of the divisor (Scheme's floor modulo).
    Modulo,
    /// `remainder`: the result has the sign of the dividend (truncating).
    Remainder,
}

/// `a^b`, as every runtime computes it: `a` for the exponent 1 and `a * a` for 2 (exact, and
/// correctly rounded where a libm `pow` may be an ulp off), `powf` for any other exponent.
/// The region shader's `powf` (`shaders/wgsl/region.wgsl`) has the same two cases.
#[inline(always)]
#[allow(clippy::float_cmp)]
pub fn pow<R: Real>(a: R, b: R) -> R {
    if b == R::ONE {
        a
    } else if b == R::ONE + R::ONE {
        a * a
    } else {
        a.powf(b)
    }
}

impl BinaryOp {
    /// Every binary op, for tests that sweep the set.
    pub const ALL: [BinaryOp; 9] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Modulo,
        BinaryOp::Remainder,
    ];

    /// The op's name in the object language and in shader sources.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Pow => "pow",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Modulo => "modulo",
            BinaryOp::Remainder => "remainder",
        }
    }

    /// The forward rule `y = f(a, b)`.
    #[inline(always)]
    pub fn apply<R: Real>(self, a: R, b: R) -> R {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Pow => pow(a, b),
            BinaryOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            BinaryOp::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            BinaryOp::Modulo => {
                let r = a - b * (a / b).trunc();
                if r != R::ZERO && ((r < R::ZERO) != (b < R::ZERO)) {
                    r + b
                } else {
                    r
                }
            }
            BinaryOp::Remainder => a - b * (a / b).trunc(),
        }
    }

    /// The partial derivatives `(dy/da, dy/db)`, given the arguments and the forward result `y`.
    #[inline(always)]
    pub fn partials<R: Real>(self, a: R, b: R, y: R) -> (R, R) {
        match self {
            BinaryOp::Add => (R::ONE, R::ONE),
            BinaryOp::Sub => (R::ONE, -R::ONE),
            BinaryOp::Mul => (b, a),
            BinaryOp::Div => {
                let inv = R::ONE / b;
                (inv, -(y * inv))
            }
            BinaryOp::Pow => {
                let da = if b == R::ZERO {
                    R::ZERO
                } else {
                    b * pow(a, b - R::ONE)
                };
                let db = if a == R::ZERO && b >= R::ZERO {
                    R::ZERO
                } else {
                    y * a.ln()
                };
                (da, db)
            }
            BinaryOp::Min => {
                if b < a {
                    (R::ZERO, R::ONE)
                } else {
                    (R::ONE, R::ZERO)
                }
            }
            BinaryOp::Max => {
                if b > a {
                    (R::ZERO, R::ONE)
                } else {
                    (R::ONE, R::ZERO)
                }
            }
            BinaryOp::Modulo => (R::ONE, -((a - y) / b)),
            BinaryOp::Remainder => (R::ONE, -(a / b).trunc()),
        }
    }
}

/// A numeric comparison; its result is a boolean (per lane) and carries no gradient.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `=`.
    Eq,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
}

impl CompareOp {
    /// The op's name in the object language.
    pub fn name(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::Lt => "<",
            CompareOp::Gt => ">",
            CompareOp::Le => "<=",
            CompareOp::Ge => ">=",
        }
    }

    /// IEEE comparison: every comparison with a NaN is false.
    #[inline(always)]
    #[allow(clippy::float_cmp)]
    pub fn apply<R: Real>(self, a: R, b: R) -> bool {
        match self {
            CompareOp::Eq => a == b,
            CompareOp::Lt => a < b,
            CompareOp::Gt => a > b,
            CompareOp::Le => a <= b,
            CompareOp::Ge => a >= b,
        }
    }
}

#[inline(always)]
fn protect<R: Real>(x: R) -> R {
    // NaN stays NaN: `x < floor` is false for NaN.
    if x < R::PROTECT_FLOOR {
        R::PROTECT_FLOOR
    } else {
        x
    }
}

#[inline(always)]
fn sign<R: Real>(x: R) -> R {
    if x > R::ZERO {
        R::ONE
    } else if x < R::ZERO {
        -R::ONE
    } else {
        R::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn central<F: Fn(f64) -> f64>(f: F, x: f64) -> f64 {
        let h = 1e-6 * x.abs().max(1.0);
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    #[test]
    fn unary_derivatives_match_finite_differences() {
        for op in UnaryOp::ALL {
            for &x in &[0.3, 1.7, 2.9] {
                let y = op.apply(x);
                let d = op.derivative(x, y);
                let fd = central(|t| op.apply(t), x);
                assert!(
                    (d - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                    "{op:?} at {x}: {d} vs {fd}"
                );
            }
        }
    }

    #[test]
    fn binary_partials_match_finite_differences() {
        for op in BinaryOp::ALL {
            for &(a, b) in &[(0.7, 1.9), (2.5, 0.6), (-3.1, 1.3)] {
                if op == BinaryOp::Pow && a < 0.0 {
                    continue;
                }
                let y = op.apply(a, b);
                let (da, db) = op.partials(a, b, y);
                let fa = central(|t| op.apply(t, b), a);
                let fb = central(|t| op.apply(a, t), b);
                assert!(
                    (da - fa).abs() < 1e-5 * (1.0 + fa.abs()),
                    "{op:?} d/da at ({a},{b})"
                );
                assert!(
                    (db - fb).abs() < 1e-5 * (1.0 + fb.abs()),
                    "{op:?} d/db at ({a},{b})"
                );
            }
        }
    }

    #[test]
    fn modulo_and_remainder_follow_scheme() {
        assert_eq!(BinaryOp::Modulo.apply(-7.0, 2.0), 1.0);
        assert_eq!(BinaryOp::Remainder.apply(-7.0, 2.0), -1.0);
        assert_eq!(BinaryOp::Modulo.apply(7.0, -2.0), -1.0);
        assert_eq!(BinaryOp::Remainder.apply(7.0, -2.0), 1.0);
        assert!((BinaryOp::Modulo.apply(7.5, 2.3) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn protected_ops_clamp_like_the_artifact() {
        assert_eq!(UnaryOp::SqrtProtected.apply(-1.0f64), 1e-4);
        assert!((UnaryOp::LogProtected.apply(-1.0f64) - (1e-8f64).ln()).abs() < 1e-12);
        assert_eq!(UnaryOp::LogProtected.derivative(-1.0f64, 0.0), 0.0);
        assert!(UnaryOp::Sqrt.apply(-1.0f64).is_nan());
    }

    /// `pow`'s exponents 1 and 2 give what IEEE `pow` gives at the edges, `a * a` (the correctly
    /// rounded square) elsewhere, and the other exponents `powf` itself.
    #[test]
    fn pow_is_exact_for_the_exponents_one_and_two() {
        let same = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
        let edges = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-200, 1e200, 5e-324];
        let more = [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1.7275322423133492,
        ];
        for a in edges.into_iter().chain(more) {
            assert!(same(pow(a, 1.0), a.powf(1.0)), "pow({a}, 1)");
            assert!(same(pow(a, 1.0), a), "pow({a}, 1)");
            assert!(same(pow(a, 2.0), a * a), "pow({a}, 2)");
            if a.is_nan() || a.is_infinite() || a == 0.0 || a.abs() == 1.0 {
                assert!(same(pow(a, 2.0), a.powf(2.0)), "pow({a}, 2) at an edge");
            }
            for b in [0.0, -1.0, 0.5, 3.0, -2.0, f64::NAN] {
                assert!(same(pow(a, b), a.powf(b)), "pow({a}, {b})");
            }
            let a32 = a as f32;
            assert!(
                same(f64::from(pow(a32, 2.0)), f64::from(a32 * a32)),
                "f32 pow({a}, 2)"
            );
        }
        // The derivative of a square is `2 a` exactly.
        let (da, _) = BinaryOp::Pow.partials(1.3, 2.0, pow(1.3, 2.0));
        assert_eq!(da, 2.0 * 1.3);
    }
}
