//! The terms of a program's top-level sum, one at a time left out: the final refit drops a
//! term of a front member that buys (almost) nothing, so the front's most accurate member is
//! not the same program carrying a term fitted to rounding noise.

use super::expr::{Expr, Genome};
use super::ops::{Op, OpSet};
use super::simplify;

/// The terms of `e` as a sum: each with whether it is subtracted (one term when `e` is no sum).
pub fn terms(e: &Expr) -> Vec<(bool, &Expr)> {
    let mut out = Vec::new();
    collect(e, false, &mut out);
    out
}

fn collect<'a>(e: &'a Expr, neg: bool, out: &mut Vec<(bool, &'a Expr)>) {
    match e {
        Expr::Binary(Op::Add, a, b) => {
            collect(a, neg, out);
            collect(b, neg, out);
        }
        Expr::Binary(Op::Sub, a, b) => {
            collect(a, neg, out);
            collect(b, !neg, out);
        }
        other => out.push((neg, other)),
    }
}

/// `g` with term `i` of its body's sum left out, simplified; `None` when the body has one term.
pub fn without(g: &Genome, i: usize, ops: &OpSet) -> Option<Genome> {
    let all = terms(&g.body);
    if all.len() < 2 {
        return None;
    }
    let mut acc: Option<Expr> = None;
    for (k, (neg, t)) in all.into_iter().enumerate() {
        if k == i {
            continue;
        }
        let t = t.clone();
        acc = Some(match acc {
            None if neg => Expr::bin(Op::Sub, Expr::Const(0.0), t),
            None => t,
            Some(a) => Expr::bin(if neg { Op::Sub } else { Op::Add }, a, t),
        });
    }
    let mut c = g.clone();
    c.body = acc?;
    simplify::drop_unused_lets(&mut c);
    Some(simplify::genome(c, ops))
}

/// Whether a loss `pruned` is as good as `full`: within a millionth of it, or both below
/// 1e-24 of the target's variance (rounding noise).
pub fn as_good(pruned: f64, full: f64, variance: f64) -> bool {
    pruned <= full * (1.0 + 1e-6) + 1e-24 * variance
}

#[cfg(test)]
mod tests {
    use super::super::emit::{source, Names};
    use super::super::ops::DEFAULT;
    use super::*;
    use Expr::{Const, Input};

    #[test]
    fn each_term_can_be_left_out() {
        let ops = OpSet::parse(DEFAULT).unwrap();
        let g = Genome::of(Expr::bin(
            Op::Sub,
            Expr::bin(Op::Add, Expr::bin(Op::Mul, Const(2.0), Input(0)), Input(1)),
            Expr::un(Op::Sin, Input(0)),
        ));
        assert_eq!(terms(&g.body).len(), 3);
        let names = Names::new(&["x".into(), "v".into()]);
        let outs: Vec<String> = (0..3)
            .map(|i| source(&without(&g, i, &ops).unwrap(), &names))
            .collect();
        assert_eq!(
            outs,
            ["(- v (sin x))", "(- (* c0 x) (sin x))", "(+ (* c0 x) v)"]
        );
        assert!(without(&Genome::of(Input(0)), 0, &ops).is_none());
        assert!(as_good(1.0 + 1e-7, 1.0, 1.0) && !as_good(1.01, 1.0, 1.0));
        assert!(as_good(1e-30, 1e-33, 1.0));
    }
}
