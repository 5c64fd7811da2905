//! The shader's scalar rules: `ln`, `root`, `protect`, `powf`, `unary_f`, `unary_d`,
//! `binary_f`, `binary_d`, with the same switch codes (a [`UnaryOp::code`] or
//! [`BinaryOp::code`]) in the same order, and the same `default` arm for the last code.
//!
//! [`UnaryOp::code`]: shared_ir::UnaryOp::code
//! [`BinaryOp::code`]: shared_ir::BinaryOp::code

use shared_ir::Real;

/// WGSL's `select(f, t, c)`.
#[inline(always)]
pub(super) fn select<T>(f: T, t: T, c: bool) -> T {
    if c {
        t
    } else {
        f
    }
}

/// WGSL's `sign`: 1, -1 or 0 (0 for NaN as well: neither comparison holds).
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

/// The shader's `ln`: NaN below zero and for NaN, -inf at zero.
#[allow(clippy::float_cmp)]
pub(super) fn ln<R: Real>(x: R) -> R {
    if x < R::ZERO || x.is_nan() {
        return R::NAN;
    }
    if x == R::ZERO {
        return -R::INFINITY;
    }
    x.ln()
}

/// The shader's `root`: NaN below zero and for NaN.
pub(super) fn root<R: Real>(x: R) -> R {
    if x < R::ZERO || x.is_nan() {
        return R::NAN;
    }
    x.sqrt()
}

/// The shader's `protect`: `x`, or `FLOOR` below it (NaN stays NaN).
pub(super) fn protect<R: Real>(x: R) -> R {
    select(x, R::PROTECT_FLOOR, x < R::PROTECT_FLOOR)
}

/// The shader's `powf`: `a^b` with the CPU's rules at zero and for negative bases.
#[allow(clippy::float_cmp)]
pub(super) fn powf<R: Real>(a: R, b: R) -> R {
    if b == R::ZERO || a == R::ONE {
        return R::ONE;
    }
    if b == R::ONE {
        return a;
    }
    if b == R::ONE + R::ONE {
        return a * a;
    }
    if b.is_nan() {
        return R::NAN;
    }
    let half = b * R::from_f64(0.5);
    let odd = b.floor() == b && half.floor() != half;
    if a == R::ZERO {
        let r = if b < R::ZERO { R::INFINITY } else { R::ZERO };
        if odd && a.is_sign_negative() {
            return -r;
        }
        return r;
    }
    let r = a.abs().powf(b);
    if a < R::ZERO {
        if b.floor() != b {
            return R::NAN;
        }
        if odd {
            return -r;
        }
    }
    r
}

/// The shader's `unary_f`: `y = f(x)` for the unary op of code `op`.
pub(super) fn unary_f<R: Real>(op: u32, x: R) -> R {
    match op {
        0 => -x,               // Neg
        1 => R::ONE / x,       // Recip
        2 => x.sin(),          // Sin
        3 => x.cos(),          // Cos
        4 => x.exp(),          // Exp
        5 => ln(x),            // Log
        6 => root(x),          // Sqrt
        7 => x.abs(),          // Abs
        8 => ln(protect(x)),   // LogProtected
        _ => root(protect(x)), // SqrtProtected
    }
}

/// The shader's `unary_d`: `dy/dx` from the argument `x` and the result `y`.
pub(super) fn unary_d<R: Real>(op: u32, x: R, y: R) -> R {
    let half = R::from_f64(0.5);
    match op {
        0 => -R::ONE,                                           // Neg
        1 => -(y * y),                                          // Recip
        2 => x.cos(),                                           // Sin
        3 => -x.sin(),                                          // Cos
        4 => y,                                                 // Exp
        5 => R::ONE / x,                                        // Log
        6 => half / y,                                          // Sqrt
        7 => sign(x),                                           // Abs
        8 => select(R::ZERO, R::ONE / x, x > R::PROTECT_FLOOR), // LogProtected
        _ => select(R::ZERO, half / y, x > R::PROTECT_FLOOR),   // SqrtProtected
    }
}

/// The shader's `binary_f`: `y = f(a, b)` for the binary op of code `op`.
pub(super) fn binary_f<R: Real>(op: u32, a: R, b: R) -> R {
    match op {
        0 => a + b,               // Add
        1 => a - b,               // Sub
        2 => a * b,               // Mul
        3 => a / b,               // Div
        4 => powf(a, b),          // Pow
        5 => select(a, b, b < a), // Min
        6 => select(a, b, b > a), // Max
        7 => {
            // Modulo
            let r = a - b * (a / b).trunc();
            if r != R::ZERO && ((r < R::ZERO) != (b < R::ZERO)) {
                return r + b;
            }
            r
        }
        _ => a - b * (a / b).trunc(), // Remainder
    }
}

/// The shader's `binary_d`: `(dy/da, dy/db)` from the arguments and the result `y` (the
/// shader's `vec2<f32>`).
#[allow(clippy::float_cmp)]
pub(super) fn binary_d<R: Real>(op: u32, a: R, b: R, y: R) -> [R; 2] {
    let (one, zero) = (R::ONE, R::ZERO);
    match op {
        0 => [one, one],  // Add
        1 => [one, -one], // Sub
        2 => [b, a],      // Mul
        3 => {
            // Div
            let inv = one / b;
            [inv, -(y * inv)]
        }
        4 => {
            // Pow
            let mut da = zero;
            if b != zero {
                da = b * powf(a, b - one);
            }
            let mut db = zero;
            if !(a == zero && b >= zero) {
                db = y * ln(a);
            }
            [da, db]
        }
        5 => select([one, zero], [zero, one], b < a), // Min
        6 => select([one, zero], [zero, one], b > a), // Max
        7 => [one, -((a - y) / b)],                   // Modulo
        _ => [one, -(a / b).trunc()],                 // Remainder
    }
}

// The edge rules must agree exactly, NaN for NaN and infinity for infinity.
#[allow(clippy::float_cmp)]
#[cfg(test)]
mod tests {
    use super::*;
    use shared_ir::{BinaryOp, UnaryOp};

    /// Each unary op's forward and derivative in plain f64 std math, independent of the twin
    /// and of `shared_ir`'s rules.
    fn unary_reference(op: UnaryOp, x: f64) -> (f64, f64) {
        let p = x.max(1e-8);
        match op {
            UnaryOp::Neg => (-x, -1.0),
            UnaryOp::Recip => (1.0 / x, -1.0 / (x * x)),
            UnaryOp::Sin => (x.sin(), x.cos()),
            UnaryOp::Cos => (x.cos(), -x.sin()),
            UnaryOp::Exp => (x.exp(), x.exp()),
            UnaryOp::Log => (x.ln(), 1.0 / x),
            UnaryOp::Sqrt => (x.sqrt(), 0.5 / x.sqrt()),
            UnaryOp::Abs => (x.abs(), x.signum()),
            UnaryOp::LogProtected => (p.ln(), if x > 1e-8 { 1.0 / x } else { 0.0 }),
            UnaryOp::SqrtProtected => (p.sqrt(), if x > 1e-8 { 0.5 / p.sqrt() } else { 0.0 }),
        }
    }

    /// Each binary op's forward and partials in plain f64 std math (`b` away from the
    /// points where modulo and remainder jump).
    fn binary_reference(op: BinaryOp, a: f64, b: f64) -> (f64, [f64; 2]) {
        match op {
            BinaryOp::Add => (a + b, [1.0, 1.0]),
            BinaryOp::Sub => (a - b, [1.0, -1.0]),
            BinaryOp::Mul => (a * b, [b, a]),
            BinaryOp::Div => (a / b, [1.0 / b, -a / (b * b)]),
            BinaryOp::Pow => (a.powf(b), [b * a.powf(b - 1.0), a.powf(b) * a.ln()]),
            BinaryOp::Min => (a.min(b), if b < a { [0.0, 1.0] } else { [1.0, 0.0] }),
            BinaryOp::Max => (a.max(b), if b > a { [0.0, 1.0] } else { [1.0, 0.0] }),
            BinaryOp::Modulo => (a - b * (a / b).floor(), [1.0, -(a / b).floor()]),
            BinaryOp::Remainder => (a % b, [1.0, -(a / b).trunc()]),
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-6 * x.abs().max(1.0);
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    #[test]
    fn unary_ops_match_std_math_and_finite_differences() {
        for op in UnaryOp::ALL {
            for x in [0.3, 1.7, 2.9, -0.8, 5e-9] {
                let domain = !matches!(op, UnaryOp::Log | UnaryOp::Sqrt) || x > 0.0;
                let c = op.code();
                let y: f64 = unary_f(c, x);
                let d = unary_d(c, x, y);
                if !domain {
                    assert!(y.is_nan(), "{op:?} at {x}: {y}");
                    continue;
                }
                let (ry, rd) = unary_reference(op, x);
                assert!(close(y, ry, 1e-14), "{op:?} at {x}: {y} vs std {ry}");
                assert!(close(d, rd, 1e-12), "{op:?}' at {x}: {d} vs std {rd}");
                // Away from the kinks (the clamp, zero of abs), against the twin's forward.
                if x.abs() > 1e-3 {
                    let fd = central(|t| unary_f(c, t), x);
                    assert!(close(d, fd, 1e-6), "{op:?}' at {x}: {d} vs fd {fd}");
                }
            }
        }
    }

    #[test]
    fn binary_ops_match_std_math_and_finite_differences() {
        for op in BinaryOp::ALL {
            for (a, b) in [(0.7, 1.9), (2.5, 0.6), (-3.1, 1.3), (7.4, -2.2), (1.3, 1.3)] {
                if op == BinaryOp::Pow && a < 0.0 {
                    continue;
                }
                let c = op.code();
                let y: f64 = binary_f(c, a, b);
                let d = binary_d(c, a, b, y);
                let (ry, rd) = binary_reference(op, a, b);
                assert!(close(y, ry, 1e-12), "{op:?}({a}, {b}): {y} vs std {ry}");
                for s in 0..2 {
                    assert!(
                        close(d[s], rd[s], 1e-12),
                        "{op:?} d{s}({a}, {b}): {d:?} vs {rd:?}"
                    );
                }
                // Min and max at a tie have no derivative to difference.
                if a != b {
                    let fa = central(|t| binary_f(c, t, b), a);
                    let fb = central(|t| binary_f(c, a, t), b);
                    assert!(
                        close(d[0], fa, 1e-6),
                        "{op:?} d/da({a}, {b}): {} vs {fa}",
                        d[0]
                    );
                    assert!(
                        close(d[1], fb, 1e-6),
                        "{op:?} d/db({a}, {b}): {} vs {fb}",
                        d[1]
                    );
                }
            }
        }
    }

    #[test]
    fn the_edge_rules_are_the_cpus() {
        // Against shared-ir's rules, which the CPU kernels inline.
        let edges = [
            0.0,
            -0.0,
            -2.0,
            -1.5,
            -1.0,
            1.0,
            3.0,
            1e-9,
            f64::INFINITY,
            f64::NAN,
        ];
        let same = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x == y;
        for op in UnaryOp::ALL {
            for x in edges {
                let y: f64 = unary_f(op.code(), x);
                assert!(same(y, op.apply(x)), "{op:?}({x}): {y} vs {}", op.apply(x));
                let (d, e) = (unary_d(op.code(), x, y), op.derivative(x, y));
                assert!(same(d, e), "{op:?}'({x}): {d} vs {e}");
            }
        }
        let mut differ = Vec::new();
        for op in BinaryOp::ALL {
            for a in edges {
                for b in edges {
                    let y: f64 = binary_f(op.code(), a, b);
                    let d = binary_d(op.code(), a, b, y);
                    let z = op.apply(a, b);
                    let (p, q) = op.partials(a, b, z);
                    if !(same(y, z) && same(d[0], p) && same(d[1], q)) {
                        differ.push(format!(
                            "{op:?}({a}, {b}) differs: twin {y} {d:?}, cpu {z} [{p}, {q}]"
                        ));
                    }
                }
            }
        }
        // Every edge agrees, the zero bases of `pow` (signed, with a NaN exponent) included.
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }
}
