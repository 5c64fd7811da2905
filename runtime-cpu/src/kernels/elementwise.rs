//! Elementwise unary and binary kernels. The op is matched once, outside the lane loop, and
//! each arm instantiates the loop with the op's rule inlined.

use super::Gate;
use crate::payload::Col;
use shared_ir::{BinaryOp, Real, UnaryOp};

/// Expands `$body` once per binary op with `$k` bound to that op as a constant.
macro_rules! each_binary_op {
    ($op:expr, $k:ident => $body:expr) => {
        match $op {
            BinaryOp::Add => {
                const $k: BinaryOp = BinaryOp::Add;
                $body
            }
            BinaryOp::Sub => {
                const $k: BinaryOp = BinaryOp::Sub;
                $body
            }
            BinaryOp::Mul => {
                const $k: BinaryOp = BinaryOp::Mul;
                $body
            }
            BinaryOp::Div => {
                const $k: BinaryOp = BinaryOp::Div;
                $body
            }
            BinaryOp::Pow => {
                const $k: BinaryOp = BinaryOp::Pow;
                $body
            }
            BinaryOp::Min => {
                const $k: BinaryOp = BinaryOp::Min;
                $body
            }
            BinaryOp::Max => {
                const $k: BinaryOp = BinaryOp::Max;
                $body
            }
            BinaryOp::Modulo => {
                const $k: BinaryOp = BinaryOp::Modulo;
                $body
            }
            BinaryOp::Remainder => {
                const $k: BinaryOp = BinaryOp::Remainder;
                $body
            }
        }
    };
}

/// Expands `$body` once per unary op with `$k` bound to that op as a constant.
macro_rules! each_unary_op {
    ($op:expr, $k:ident => $body:expr) => {
        match $op {
            UnaryOp::Neg => {
                const $k: UnaryOp = UnaryOp::Neg;
                $body
            }
            UnaryOp::Recip => {
                const $k: UnaryOp = UnaryOp::Recip;
                $body
            }
            UnaryOp::Sin => {
                const $k: UnaryOp = UnaryOp::Sin;
                $body
            }
            UnaryOp::Cos => {
                const $k: UnaryOp = UnaryOp::Cos;
                $body
            }
            UnaryOp::Exp => {
                const $k: UnaryOp = UnaryOp::Exp;
                $body
            }
            UnaryOp::Log => {
                const $k: UnaryOp = UnaryOp::Log;
                $body
            }
            UnaryOp::Sqrt => {
                const $k: UnaryOp = UnaryOp::Sqrt;
                $body
            }
            UnaryOp::Abs => {
                const $k: UnaryOp = UnaryOp::Abs;
                $body
            }
            UnaryOp::LogProtected => {
                const $k: UnaryOp = UnaryOp::LogProtected;
                $body
            }
            UnaryOp::SqrtProtected => {
                const $k: UnaryOp = UnaryOp::SqrtProtected;
                $body
            }
        }
    };
}

/// `out[l] = op(a[l])` for one element across lanes (`a` uniform or per lane).
#[inline]
pub fn unary<R: Real>(op: UnaryOp, out: &mut [R], a: Col<'_, R>) {
    each_unary_op!(op, K => match a {
        Col::Lanes(a) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = K.apply(x);
            }
        }
        Col::Uniform(x) => out.fill(K.apply(x)),
    })
}

/// `out[l] = op(a[l], b[l])` for one element across lanes.
#[inline]
pub fn binary<R: Real>(op: BinaryOp, out: &mut [R], a: Col<'_, R>, b: Col<'_, R>) {
    each_binary_op!(op, K => match (a, b) {
        (Col::Lanes(a), Col::Lanes(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = K.apply(x, y);
            }
        }
        (Col::Lanes(a), Col::Uniform(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = K.apply(x, y);
            }
        }
        (Col::Uniform(x), Col::Lanes(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                *o = K.apply(x, y);
            }
        }
        (Col::Uniform(x), Col::Uniform(y)) => out.fill(K.apply(x, y)),
    })
}

/// Reverse of [`unary`]: `adj_a[l] += g[l] * f'(a[l])` on kept lanes.
#[inline]
pub fn unary_grad<R: Real, G: Gate>(
    op: UnaryOp,
    adj_a: &mut [R],
    g: &[R],
    a: Col<'_, R>,
    y: Col<'_, R>,
    gate: G,
) {
    let n = adj_a.len().min(g.len());
    each_unary_op!(op, K => {
        for l in 0..n {
            let d = K.derivative(a.at(l), y.at(l));
            adj_a[l] += gate.pass(l, g[l] * d);
        }
    })
}

/// Which operand of a binary op an adjoint is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first operand.
    Left,
    /// The second operand.
    Right,
}

/// Reverse of [`binary`] for one operand: `adj[l] += g[l] * d op / d side` on kept lanes.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn binary_grad<R: Real, G: Gate>(
    op: BinaryOp,
    side: Side,
    adj: &mut [R],
    g: &[R],
    a: Col<'_, R>,
    b: Col<'_, R>,
    y: Col<'_, R>,
    gate: G,
) {
    let n = adj.len().min(g.len());
    each_binary_op!(op, K => {
        match (side, K) {
            (Side::Left, BinaryOp::Add | BinaryOp::Sub) => {
                for l in 0..n {
                    adj[l] += gate.pass(l, g[l]);
                }
            }
            (Side::Right, BinaryOp::Add) => {
                for l in 0..n {
                    adj[l] += gate.pass(l, g[l]);
                }
            }
            (Side::Right, BinaryOp::Sub) => {
                for l in 0..n {
                    adj[l] -= gate.pass(l, g[l]);
                }
            }
            (Side::Left, BinaryOp::Mul) => {
                for l in 0..n {
                    adj[l] += gate.pass(l, g[l] * b.at(l));
                }
            }
            (Side::Right, BinaryOp::Mul) => {
                for l in 0..n {
                    adj[l] += gate.pass(l, g[l] * a.at(l));
                }
            }
            (Side::Left, _) => {
                for l in 0..n {
                    let (da, _) = K.partials(a.at(l), b.at(l), y.at(l));
                    adj[l] += gate.pass(l, g[l] * da);
                }
            }
            (Side::Right, _) => {
                for l in 0..n {
                    let (_, db) = K.partials(a.at(l), b.at(l), y.at(l));
                    adj[l] += gate.pass(l, g[l] * db);
                }
            }
        }
    })
}
