//! The built-in proposer's variation operators, each a small function from parents to a child
//! (`None` when it does not apply to these parents), and the weights they are drawn with.

use super::expr::{Context, Count, Expr, Genome, Path};
use super::generate::{below, chance, constant, Grammar};
use super::ops::Op;
use super::simplify::{self, key};
use crate::rng::SplitMix;
use serde::{Deserialize, Serialize};

/// One variation operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mutation {
    /// An operator, input or constant swapped for another of its kind.
    Point,
    /// A subtree replaced by a new random one.
    Subtree,
    /// A new operator put above a subtree.
    Insert,
    /// An operator removed, one of its operands taking its place.
    Delete,
    /// A subtree made the whole program.
    Hoist,
    /// The constants' starting values perturbed (the fit starts elsewhere).
    Constants,
    /// A subtree made the start of an `iterate`.
    Iterate,
    /// A subtree that appears more than once named by a `let` and shared.
    Share,
    /// A `let` binding written out where it is used.
    Unshare,
    /// A subtree of another parent put in place of a subtree.
    Crossover,
    /// A new term `c * t` added to the whole program, its coefficient starting at 0 (so the
    /// fit starts where the parent's ended and can only improve on it).
    AddTerm,
}

/// How often each operator is drawn (relative weights).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutationWeights {
    /// [`Mutation::Point`].
    pub point: f64,
    /// [`Mutation::Subtree`].
    pub subtree: f64,
    /// [`Mutation::Insert`].
    pub insert: f64,
    /// [`Mutation::Delete`].
    pub delete: f64,
    /// [`Mutation::Hoist`].
    pub hoist: f64,
    /// [`Mutation::Constants`].
    pub constants: f64,
    /// [`Mutation::Iterate`] (when the grammar has `iterate`).
    pub iterate: f64,
    /// [`Mutation::Share`] (when the grammar has `let`).
    pub share: f64,
    /// [`Mutation::Unshare`].
    pub unshare: f64,
    /// [`Mutation::Crossover`].
    pub crossover: f64,
    /// [`Mutation::AddTerm`].
    pub add_term: f64,
}

impl Default for MutationWeights {
    fn default() -> Self {
        MutationWeights {
            point: 0.25,
            subtree: 0.06,
            insert: 0.24,
            delete: 0.12,
            hoist: 0.02,
            constants: 0.05,
            iterate: 0.04,
            share: 0.02,
            unshare: 0.01,
            crossover: 0.13,
            add_term: 0.06,
        }
    }
}

impl MutationWeights {
    /// Draws an operator; `iterate` and `share` only where the grammar allows them.
    pub fn draw(&self, rng: &mut SplitMix, grammar: &Grammar) -> Mutation {
        let table = [
            (Mutation::Point, self.point),
            (Mutation::Subtree, self.subtree),
            (Mutation::Insert, self.insert),
            (Mutation::Delete, self.delete),
            (Mutation::Hoist, self.hoist),
            (Mutation::Constants, self.constants),
            (
                Mutation::Iterate,
                if grammar.iterate { self.iterate } else { 0.0 },
            ),
            (
                Mutation::Share,
                if grammar.share { self.share } else { 0.0 },
            ),
            (Mutation::Unshare, self.unshare),
            (Mutation::Crossover, self.crossover),
            (Mutation::AddTerm, self.add_term),
        ];
        let total: f64 = table.iter().map(|t| t.1.max(0.0)).sum();
        let mut u = rng.unit() * total;
        for (m, w) in table {
            u -= w.max(0.0);
            if u < 0.0 {
                return m;
            }
        }
        Mutation::Point
    }
}

/// A random node of `g` that `keep` accepts.
fn pick(
    g: &Genome,
    rng: &mut SplitMix,
    keep: impl Fn(&Expr, Context) -> bool,
) -> Option<(Path, Context)> {
    let all: Vec<(Path, Context)> = g
        .paths()
        .into_iter()
        .filter(|(p, c)| keep(g.get(p), *c))
        .collect();
    (!all.is_empty()).then(|| all[below(rng, all.len())].clone())
}

/// Applies one operator. `other` is the second parent of a crossover.
pub fn apply(
    m: Mutation,
    g: &Genome,
    other: &Genome,
    grammar: &Grammar,
    rng: &mut SplitMix,
) -> Option<Genome> {
    let child = raw(m, g, other, grammar, rng)?;
    let child = simplify::genome(child, &grammar.ops);
    grammar.admits(&child).then_some(child)
}

/// The operator's child as it makes it, before simplification and the grammar's limits.
fn raw(
    m: Mutation,
    g: &Genome,
    other: &Genome,
    grammar: &Grammar,
    rng: &mut SplitMix,
) -> Option<Genome> {
    match m {
        Mutation::Point => point(g, grammar, rng),
        Mutation::Subtree => subtree(g, grammar, rng),
        Mutation::Insert => insert(g, grammar, rng),
        Mutation::Delete => delete(g, rng),
        Mutation::Hoist => hoist(g, rng),
        Mutation::Constants => constants(g, rng),
        Mutation::Iterate => iterate(g, grammar, rng),
        Mutation::Share => share(g, rng),
        Mutation::Unshare => unshare(g, rng),
        Mutation::Crossover => crossover(g, other, rng),
        Mutation::AddTerm => add_term(g, grammar, rng),
    }
}

fn point(g: &Genome, grammar: &Grammar, rng: &mut SplitMix) -> Option<Genome> {
    let (path, ctx) = pick(g, rng, |_, _| true)?;
    let mut c = g.clone();
    let node = c.get_mut(&path);
    let ops = &grammar.ops;
    *node = match node.clone() {
        Expr::Unary(op, a) if ops.unary.len() > 1 => {
            let others: Vec<_> = ops.unary.iter().filter(|o| **o != op).collect();
            Expr::Unary(*others[below(rng, others.len())], a)
        }
        Expr::Binary(op, a, b) if ops.binary.len() > 1 => {
            let others: Vec<_> = ops.binary.iter().filter(|o| **o != op).collect();
            Expr::Binary(*others[below(rng, others.len())], a, b)
        }
        Expr::Binary(op, a, b) => Expr::Binary(op, b, a),
        Expr::Input(i) if grammar.inputs > 1 && chance(rng, 0.7) => {
            let j = (i as usize + 1 + below(rng, grammar.inputs - 1)) % grammar.inputs;
            Expr::Input(j as u16)
        }
        Expr::Input(_) | Expr::Shared(_) | Expr::State => Expr::Const(constant(rng)),
        Expr::Const(_) => {
            let leaf = grammar.leaf(rng, ctx);
            if matches!(leaf, Expr::Const(_)) {
                Expr::Input(below(rng, grammar.inputs) as u16)
            } else {
                leaf
            }
        }
        Expr::Iterate(mut it) => {
            it.count = match it.count {
                Count::Fixed(n) if chance(rng, 0.7) => {
                    let up = chance(rng, 0.5) && n < grammar.max_fixed_count;
                    Count::Fixed(if up {
                        n + 1
                    } else {
                        n.saturating_sub(1).max(1)
                    })
                }
                _ => grammar.count(rng),
            };
            Expr::Iterate(it)
        }
        _ => return None,
    };
    Some(c)
}

fn subtree(g: &Genome, grammar: &Grammar, rng: &mut SplitMix) -> Option<Genome> {
    let (path, ctx) = pick(g, rng, |_, _| true)?;
    let mut c = g.clone();
    let room = grammar
        .max_size
        .saturating_sub(g.size() - g.get(&path).size());
    let size = 1 + below(rng, room.clamp(1, 7));
    let depth = 1 + below(rng, 3);
    *c.get_mut(&path) = grammar.grow(rng, ctx, depth, size);
    Some(c)
}

fn insert(g: &Genome, grammar: &Grammar, rng: &mut SplitMix) -> Option<Genome> {
    let (path, ctx) = pick(g, rng, |_, _| true)?;
    let mut c = g.clone();
    let node = c.get_mut(&path);
    let old = std::mem::replace(node, Expr::State);
    let ops = &grammar.ops;
    *node = if !ops.unary.is_empty() && chance(rng, 0.35) {
        Expr::un(ops.unary[below(rng, ops.unary.len())], old)
    } else {
        let op = ops.binary[below(rng, ops.binary.len())];
        let size = 1 + 2 * usize::from(chance(rng, 0.3));
        let other = grammar.grow(rng, ctx, 1, size);
        if chance(rng, 0.5) {
            Expr::bin(op, old, other)
        } else {
            Expr::bin(op, other, old)
        }
    };
    Some(c)
}

fn delete(g: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    let (path, ctx) = pick(g, rng, |e, _| !e.children().is_empty())?;
    let mut c = g.clone();
    let node = c.get_mut(&path);
    *node = match node.clone() {
        Expr::Unary(_, a) => *a,
        Expr::Binary(_, a, b) => {
            if chance(rng, 0.5) {
                *a
            } else {
                *b
            }
        }
        Expr::Iterate(it) if !ctx.in_step => it.init,
        _ => return None,
    };
    Some(c)
}

fn hoist(g: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    let (path, _) = pick(g, rng, |e, _| !e.uses_state() && !e.children().is_empty())?;
    let mut c = g.clone();
    c.body = g.get(&path).clone();
    simplify::drop_unused_lets(&mut c);
    Some(c)
}

fn constants(g: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    let values = g.constants();
    if values.is_empty() {
        return None;
    }
    let moved: Vec<f64> = values
        .iter()
        .map(|&v| {
            if chance(rng, 0.1) {
                constant(rng)
            } else {
                let sign = if chance(rng, 0.1) { -1.0 } else { 1.0 };
                sign * v * (0.5 * rng.normal()).exp()
            }
        })
        .collect();
    let mut c = g.clone();
    c.set_constants(&moved);
    Some(c)
}

fn iterate(g: &Genome, grammar: &Grammar, rng: &mut SplitMix) -> Option<Genome> {
    let (path, ctx) = pick(g, rng, |e, c| !c.in_iterate && !e.has_iterate())?;
    let mut c = g.clone();
    let node = c.get_mut(&path);
    let init = std::mem::replace(node, Expr::State);
    let size = 3 + below(rng, 5);
    *node = grammar.iterate(rng, init, ctx, size);
    Some(c)
}

/// Replaces every subtree of `e` with the structure `k` by `Shared(j)`; how many it replaced.
fn replace_like(e: &mut Expr, k: &str, j: u16) -> usize {
    if key(e) == k {
        *e = Expr::Shared(j);
        return 1;
    }
    let mut n = 0;
    for i in 0..2 {
        match e.child_mut(i) {
            Some(c) => n += replace_like(c, k, j),
            None => break,
        }
    }
    n
}

fn share(g: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    let body = g.lets.len();
    let (path, _) = pick(g, rng, |e, c| {
        c.root == body && e.size() >= 3 && !e.uses_state()
    })?;
    let s = g.get(&path).clone();
    let k = key(&s);
    let mut c = g.clone();
    let j = c.lets.len() as u16;
    if replace_like(&mut c.body, &k, j) < 2 {
        return None;
    }
    c.lets.push(s);
    Some(c)
}

fn unshare(g: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    if g.lets.is_empty() {
        return None;
    }
    let j = below(rng, g.lets.len()) as u16;
    let value = g.lets[j as usize].clone();
    let mut c = g.clone();
    for r in (j as usize + 1)..=c.lets.len() {
        c.root_mut(r).map_shared(&|i| {
            if i == j {
                value.clone()
            } else {
                Expr::Shared(i)
            }
        });
    }
    simplify::drop_unused_lets(&mut c);
    Some(c)
}

fn add_term(g: &Genome, grammar: &Grammar, rng: &mut SplitMix) -> Option<Genome> {
    let ops = &grammar.ops;
    let join = [Op::Add, Op::Sub].into_iter().find(|o| ops.contains(*o))?;
    let ctx = Context {
        root: g.lets.len(),
        in_step: false,
        in_iterate: false,
    };
    let size = 1 + below(rng, 4);
    let depth = 1 + below(rng, 2);
    let t = (0..10)
        .map(|_| grammar.grow(rng, ctx, depth, size))
        .find(|t| !t.is_constant())?;
    let term = if ops.contains(Op::Mul) {
        Expr::bin(Op::Mul, Expr::Const(0.0), t)
    } else {
        t
    };
    let mut c = g.clone();
    let body = std::mem::replace(&mut c.body, Expr::State);
    c.body = Expr::bin(join, body, term);
    Some(c)
}

/// `e` with every shared value of `g` written out.
pub fn inline_shared(g: &Genome, e: &Expr) -> Expr {
    let mut out = e.clone();
    while out.shared_used() > 0 {
        out.map_shared(&|j| g.lets[j as usize].clone());
    }
    out
}

fn crossover(a: &Genome, b: &Genome, rng: &mut SplitMix) -> Option<Genome> {
    let (pa, ctx) = pick(a, rng, |_, _| true)?;
    let (pb, _) = pick(b, rng, |e, _| {
        (ctx.in_step || !e.uses_state()) && (!ctx.in_iterate || !e.has_iterate())
    })?;
    let donor = inline_shared(b, b.get(&pb));
    let mut c = a.clone();
    *c.get_mut(&pa) = donor;
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::super::generate::tests::grammar;
    use super::*;
    use std::collections::HashMap;

    /// True when every input a genome reads is a column of the grammar.
    fn inputs_exist(child: &Genome, g: &Grammar) -> bool {
        child
            .paths()
            .iter()
            .all(|(p, _)| !matches!(child.get(p), Expr::Input(i) if *i as usize >= g.inputs))
    }

    #[test]
    fn every_operator_gives_well_scoped_children() {
        // The operators themselves (not `apply`, which drops what the grammar does not admit)
        // must keep every state and shared name in scope and every input a column, and the
        // simplifier must keep it so.
        let g = grammar();
        let mut rng = SplitMix(11);
        let mut applied: HashMap<Mutation, usize> = HashMap::new();
        let mut pop: Vec<Genome> = (0..40).map(|_| g.random(&mut rng)).collect();
        for round in 0..4000 {
            let m = MutationWeights::default().draw(&mut rng, &g);
            let a = &pop[below(&mut rng, pop.len())];
            let b = &pop[below(&mut rng, pop.len())];
            if let Some(child) = raw(m, a, b, &g, &mut rng) {
                assert!(child.is_well_formed(), "{m:?} gave {child:?}");
                assert!(inputs_exist(&child, &g), "{m:?} gave {child:?}");
                let child = simplify::genome(child, &g.ops);
                assert!(child.is_well_formed(), "{m:?} simplified to {child:?}");
                if !g.admits(&child) {
                    continue;
                }
                *applied.entry(m).or_default() += 1;
                let i = round % pop.len();
                pop[i] = child;
            }
        }
        for m in [
            Mutation::Point,
            Mutation::Subtree,
            Mutation::Insert,
            Mutation::Delete,
            Mutation::Hoist,
            Mutation::Constants,
            Mutation::Iterate,
            Mutation::Crossover,
            Mutation::AddTerm,
        ] {
            assert!(
                applied.get(&m).copied().unwrap_or(0) > 10,
                "{m:?}: {applied:?}"
            );
        }
    }

    #[test]
    fn share_names_a_repeated_subtree() {
        let sq = || Expr::bin(Op::Add, Expr::Input(0), Expr::un(Op::Sin, Expr::Input(1)));
        let g = Genome::of(Expr::bin(
            Op::Mul,
            sq(),
            Expr::bin(Op::Div, sq(), Expr::Input(2)),
        ));
        let mut rng = SplitMix(3);
        let shared = (0..50).find_map(|_| share(&g, &mut rng)).unwrap();
        assert_eq!(shared.lets, vec![sq()]);
        assert!(shared.is_well_formed());
        assert_eq!(shared.size(), g.size() - sq().size() + 2);
        let back = unshare(&shared, &mut rng).unwrap();
        assert_eq!(back, g);
    }
}
