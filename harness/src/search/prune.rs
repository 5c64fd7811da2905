//! The terms of a program's sums, one at a time left out: the final refit drops a term of a
//! front member that buys (almost) nothing, so the front's most accurate member is not the same
//! program carrying a term fitted to rounding noise.

use super::expr::{Expr, Genome, Path};
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

/// The sum `e` without its term `i`; `None` when it has one term.
fn chain_without(e: &Expr, i: usize) -> Option<Expr> {
    let all = terms(e);
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
    acc
}

/// Every program `g` gives with one term of one of its sums left out (a sum: a chain of `+`
/// and `-` not itself inside one), simplified, each smaller than `g`.
pub fn variants(g: &Genome, ops: &OpSet) -> Vec<Genome> {
    let is_sum = |e: &Expr| matches!(e, Expr::Binary(Op::Add | Op::Sub, _, _));
    let mut out = Vec::new();
    for (path, _) in g.paths() {
        let node = g.get(&path);
        if !is_sum(node) {
            continue;
        }
        if let Some((_, up)) = path.steps.split_last() {
            let parent = Path {
                root: path.root,
                steps: up.to_vec(),
            };
            if is_sum(g.get(&parent)) {
                continue;
            }
        }
        for i in 0..terms(node).len() {
            let Some(rest) = chain_without(node, i) else {
                continue;
            };
            let mut c = g.clone();
            *c.get_mut(&path) = rest;
            simplify::drop_unused_lets(&mut c);
            let c = simplify::genome(c, ops);
            if c.size() < g.size() && c.is_well_formed() {
                out.push(c);
            }
        }
    }
    out
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
    fn each_term_of_each_sum_can_be_left_out() {
        let ops = OpSet::parse(DEFAULT).unwrap();
        let g = Genome::of(Expr::bin(
            Op::Sub,
            Expr::bin(Op::Add, Expr::bin(Op::Mul, Const(2.0), Input(0)), Input(1)),
            Expr::un(Op::Sin, Expr::bin(Op::Add, Input(0), Input(1))),
        ));
        assert_eq!(terms(&g.body).len(), 3);
        let names = Names::new(&["x".into(), "v".into()]);
        let outs: Vec<String> = variants(&g, &ops)
            .iter()
            .map(|v| source(v, &names))
            .collect();
        assert_eq!(
            outs,
            [
                "(- v (sin (+ x v)))",
                "(- (* c0 x) (sin (+ x v)))",
                "(+ (* c0 x) v)",
                "(- (+ (* c0 x) v) (sin v))",
                "(- (+ (* c0 x) v) (sin x))",
            ]
        );
        assert!(variants(&Genome::of(Input(0)), &ops).is_empty());
        assert!(as_good(1.0 + 1e-7, 1.0, 1.0) && !as_good(1.01, 1.0, 1.0));
        assert!(as_good(1e-30, 1e-33, 1.0));
    }
}
