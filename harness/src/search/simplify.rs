//! Algebraic simplification before a candidate is fitted: subtrees without data fold to one
//! constant, `x - x` and `x / x` fold, chains of `+ -` and of `* /` are flattened with their
//! constants merged into one and their terms put in a canonical order, and double negations
//! and inversions cancel. Constants are parameters, so a merged constant loses nothing: the
//! fit moves it, and fewer parameters make the fit better posed. A simplified candidate is
//! never larger than it was.

use super::expr::{Expr, Genome};
use super::ops::{Op, OpSet};
use std::fmt::Write;

/// Simplifies every root of `g`, drops `let` bindings no longer used, and returns it.
pub fn genome(mut g: Genome, ops: &OpSet) -> Genome {
    for r in 0..=g.lets.len() {
        let e = std::mem::replace(g.root_mut(r), Expr::Const(0.0));
        *g.root_mut(r) = expr(e, ops);
    }
    drop_unused_lets(&mut g);
    g
}

/// Removes `let` bindings nothing reads, renumbering the references to the rest; a binding
/// that is a single leaf is inlined. From the last binding to the first, so a binding only a
/// removed one read goes too.
pub fn drop_unused_lets(g: &mut Genome) {
    for j in (0..g.lets.len()).rev() {
        let used = g
            .roots()
            .skip(j + 1)
            .any(|r| super::expr::uses_shared(r, j as u16));
        let leaf = matches!(g.lets[j], Expr::Input(_) | Expr::Shared(_));
        if used && !leaf {
            continue;
        }
        let value = g.lets.remove(j);
        let jj = j as u16;
        let renumber = |i: u16| {
            if i == jj {
                value.clone()
            } else if i > jj {
                Expr::Shared(i - 1)
            } else {
                Expr::Shared(i)
            }
        };
        for r in j..=g.lets.len() {
            g.root_mut(r).map_shared(&renumber);
        }
    }
}

/// Simplifies one expression, bottom up.
pub fn expr(e: Expr, ops: &OpSet) -> Expr {
    let e = match e {
        Expr::Unary(op, a) => Expr::Unary(op, Box::new(expr(*a, ops))),
        Expr::Binary(op, a, b) => {
            Expr::Binary(op, Box::new(expr(*a, ops)), Box::new(expr(*b, ops)))
        }
        Expr::Iterate(mut it) => {
            it.init = expr(it.init, ops);
            it.step = expr(it.step, ops);
            return Expr::Iterate(it);
        }
        leaf => return leaf,
    };
    if !matches!(e, Expr::Const(_)) && e.is_constant() {
        let v = value(&e);
        if v.is_finite() {
            return Expr::Const(v);
        }
    }
    match e {
        Expr::Unary(outer, a) => match (outer, *a) {
            (Op::Neg, Expr::Unary(Op::Neg, inner))
            | (Op::Inv, Expr::Unary(Op::Inv, inner))
            | (Op::Log, Expr::Unary(Op::Exp, inner)) => *inner,
            (outer, a) => Expr::Unary(outer, Box::new(a)),
        },
        Expr::Binary(Op::Sub, a, b) if a == b => Expr::Const(0.0),
        Expr::Binary(Op::Div, a, b) if a == b => Expr::Const(1.0),
        Expr::Binary(op @ (Op::Add | Op::Sub), a, b) => chain(Expr::Binary(op, a, b), Sum, ops),
        Expr::Binary(op @ (Op::Mul | Op::Div), a, b) => chain(Expr::Binary(op, a, b), Product, ops),
        other => other,
    }
}

/// The value of a subtree without data.
fn value(e: &Expr) -> f64 {
    match e {
        Expr::Const(c) => *c,
        Expr::Unary(op, a) => op.apply(value(a), 0.0),
        Expr::Binary(op, a, b) => op.apply(value(a), value(b)),
        _ => f64::NAN,
    }
}

/// A family of chains: sums (`+`, `-`) or products (`*`, `/`).
trait Family: Copy {
    /// The operator that keeps a term's sign, and the one that inverts it.
    fn ops(self) -> (Op, Op);
    /// The neutral value and how constants combine.
    fn fold(self, acc: f64, c: f64, inverted: bool) -> f64;
    fn neutral(self) -> f64;
}

#[derive(Copy, Clone)]
struct Sum;
#[derive(Copy, Clone)]
struct Product;

impl Family for Sum {
    fn ops(self) -> (Op, Op) {
        (Op::Add, Op::Sub)
    }
    fn fold(self, acc: f64, c: f64, inverted: bool) -> f64 {
        if inverted {
            acc - c
        } else {
            acc + c
        }
    }
    fn neutral(self) -> f64 {
        0.0
    }
}

impl Family for Product {
    fn ops(self) -> (Op, Op) {
        (Op::Mul, Op::Div)
    }
    fn fold(self, acc: f64, c: f64, inverted: bool) -> f64 {
        if inverted {
            acc / c
        } else {
            acc * c
        }
    }
    fn neutral(self) -> f64 {
        1.0
    }
}

/// Collects the terms of a chain with whether each is inverted (subtracted or divided).
fn collect<F: Family>(e: Expr, f: F, inverted: bool, out: &mut Vec<(bool, Expr)>) {
    let (keep, invert) = f.ops();
    match e {
        Expr::Binary(op, a, b) if op == keep => {
            collect(*a, f, inverted, out);
            collect(*b, f, inverted, out);
        }
        Expr::Binary(op, a, b) if op == invert => {
            collect(*a, f, inverted, out);
            collect(*b, f, !inverted, out);
        }
        other => out.push((inverted, other)),
    }
}

/// Flattens a chain, merges its constants and orders its terms.
fn chain<F: Family>(e: Expr, f: F, ops: &OpSet) -> Expr {
    let (keep, invert) = f.ops();
    if !ops.contains(keep) {
        // Without `+` (or `*`) a flattened chain cannot be written again.
        return e;
    }
    let original = e.clone();
    let mut terms = Vec::new();
    collect(e, f, false, &mut terms);
    let constants = terms
        .iter()
        .filter(|t| matches!(t.1, Expr::Const(_)))
        .count();
    let mut c = f.neutral();
    let mut rest: Vec<(bool, Expr)> = Vec::with_capacity(terms.len());
    for (inv, t) in terms {
        match t {
            Expr::Const(v) => c = f.fold(c, v, inv),
            other => rest.push((inv, other)),
        }
    }
    if !c.is_finite() {
        // The constants do not merge to a number: leave the chain as it was.
        return original;
    }
    if rest.is_empty() {
        // Only constants (folded above when finite).
        return Expr::Const(c);
    }
    let mut keyed: Vec<(String, bool, Expr)> =
        rest.into_iter().map(|(inv, t)| (key(&t), inv, t)).collect();
    // Terms kept first, inverted after; within each, by structure.
    keyed.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let mut acc: Option<Expr> = None;
    if constants > 0 {
        acc = Some(Expr::Const(c));
    }
    for (_, inv, t) in keyed {
        acc = Some(match acc {
            None if inv => Expr::Binary(invert, Box::new(Expr::Const(f.neutral())), Box::new(t)),
            None => t,
            Some(a) if inv => Expr::bin(invert, a, t),
            Some(a) => Expr::bin(keep, a, t),
        });
    }
    acc.expect("at least one term")
}

/// A term's structure with constants blanked: the order of a chain's terms.
pub fn key(e: &Expr) -> String {
    let mut s = String::new();
    write_key(e, &mut s);
    s
}

fn write_key(e: &Expr, s: &mut String) {
    match e {
        Expr::Const(_) => s.push('C'),
        Expr::Input(i) => {
            let _ = write!(s, "x{i}");
        }
        Expr::State => s.push('S'),
        Expr::Shared(j) => {
            let _ = write!(s, "t{j}");
        }
        Expr::Unary(op, a) => {
            let _ = write!(s, "({op} ");
            write_key(a, s);
            s.push(')');
        }
        Expr::Binary(op, a, b) => {
            let _ = write!(s, "({op} ");
            write_key(a, s);
            s.push(' ');
            write_key(b, s);
            s.push(')');
        }
        Expr::Iterate(it) => {
            s.push_str("(it ");
            write_key(&it.init, s);
            s.push(' ');
            write_key(&it.step, s);
            let _ = write!(s, " {:?})", it.count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::emit::{source, Names};
    use super::super::ops::DEFAULT;
    use super::*;
    use Expr::{Const, Input};

    fn simp(e: Expr) -> String {
        let ops = OpSet::parse(DEFAULT).unwrap();
        let g = genome(Genome::of(e), &ops);
        source(&g, &Names::new(&["x".into(), "y".into()]))
    }

    #[test]
    fn constants_fold_and_merge() {
        let e = Expr::bin(
            Op::Mul,
            Const(2.0),
            Expr::bin(Op::Mul, Expr::un(Op::Sin, Const(1.0)), Input(0)),
        );
        assert_eq!(simp(e), "(* c0 x)");
        let e = Expr::bin(
            Op::Sub,
            Expr::bin(Op::Add, Input(1), Const(1.0)),
            Expr::bin(Op::Sub, Const(3.0), Input(0)),
        );
        assert_eq!(simp(e), "(+ (+ c0 x) y)");
        let e = Expr::bin(
            Op::Div,
            Expr::bin(Op::Mul, Input(0), Const(4.0)),
            Const(2.0),
        );
        assert_eq!(simp(e), "(* c0 x)");
    }

    #[test]
    fn identities_cancel() {
        let xy = || Expr::bin(Op::Mul, Input(0), Input(1));
        assert_eq!(simp(Expr::bin(Op::Sub, xy(), xy())), "c0");
        assert_eq!(simp(Expr::bin(Op::Div, xy(), xy())), "c0");
        let e = Expr::bin(
            Op::Add,
            Expr::un(Op::Log, Expr::un(Op::Exp, Input(0))),
            Input(1),
        );
        assert_eq!(simp(e), "(+ x y)");
        // y + x and x + y are one skeleton.
        assert_eq!(
            simp(Expr::bin(Op::Add, Input(1), Input(0))),
            simp(Expr::bin(Op::Add, Input(0), Input(1)))
        );
    }

    #[test]
    fn a_folded_constant_keeps_the_original_when_not_finite() {
        let e = Expr::bin(Op::Add, Expr::un(Op::Log, Const(-1.0)), Input(0));
        assert_eq!(simp(e), "(+ (log c0) x)");
    }

    #[test]
    fn a_chain_whose_constants_do_not_merge_is_kept() {
        let e = Expr::bin(
            Op::Div,
            Input(1),
            Expr::bin(
                Op::Mul,
                Const(0.0),
                Expr::bin(Op::Div, Const(1.0), Const(0.0)),
            ),
        );
        assert_eq!(simp(e), "(/ y (* c0 (/ c1 c2)))");
    }

    #[test]
    fn a_binding_only_a_removed_one_read_goes_too() {
        let mut g = Genome {
            lets: vec![
                Expr::bin(Op::Mul, Input(0), Input(0)),
                Expr::bin(Op::Add, Expr::Shared(0), Input(1)),
            ],
            body: Input(1),
        };
        drop_unused_lets(&mut g);
        assert!(g.lets.is_empty() && g.is_well_formed());
    }

    #[test]
    fn unused_and_leaf_lets_go() {
        let ops = OpSet::parse(DEFAULT).unwrap();
        let g = Genome {
            lets: vec![Input(0), Expr::bin(Op::Mul, Input(1), Input(1))],
            body: Expr::bin(Op::Add, Expr::Shared(0), Input(1)),
        };
        let g = genome(g, &ops);
        assert!(g.lets.is_empty());
        assert_eq!(g.body, Expr::bin(Op::Add, Input(0), Input(1)));
    }
}
