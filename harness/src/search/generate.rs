//! What programs the built-in proposer may build (the [`Grammar`]) and random ones of it.

use super::constraints::Constraints;
use super::expr::{Context, Count, Expr, Genome, Iterate};
use super::ops::OpSet;
use super::simplify;
use super::units::Units;
use crate::rng::SplitMix;

/// The space of programs: operators, inputs, and the forms beyond plain trees.
#[derive(Clone, Debug)]
pub struct Grammar {
    /// The operators.
    pub ops: OpSet,
    /// How many input columns.
    pub inputs: usize,
    /// Input columns of non-negative integers, which an `iterate` may take its count from.
    pub count_inputs: Vec<u16>,
    /// The largest fixed count of an `iterate`.
    pub max_fixed_count: u32,
    /// Whether `iterate` may be built.
    pub iterate: bool,
    /// Whether `let`-shared subexpressions may be built.
    pub share: bool,
    /// The largest complexity (node count).
    pub max_size: usize,
    /// The deepest tree.
    pub max_depth: usize,
    /// Each operator's complexity, argument sizes and nesting limits.
    pub constraints: Constraints,
    /// The units of the inputs and the target, and the penalty per place a program's do not
    /// balance (`None`: refused).
    pub units: Option<(Units, Option<f64>)>,
}

/// A uniform draw from `0..n` (`n > 0`).
pub fn below(rng: &mut SplitMix, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// True with probability `p`.
pub fn chance(rng: &mut SplitMix, p: f64) -> bool {
    rng.unit() < p
}

/// A starting value for a new constant: a standard normal draw.
pub fn constant(rng: &mut SplitMix) -> f64 {
    rng.normal()
}

impl Grammar {
    /// A random leaf valid at `ctx`: an input, a constant, the state in a step, a shared value.
    pub fn leaf(&self, rng: &mut SplitMix, ctx: Context) -> Expr {
        if ctx.in_step && chance(rng, 0.4) {
            return Expr::State;
        }
        let shared = ctx.shared_below();
        if shared > 0 && chance(rng, 0.2) {
            return Expr::Shared(below(rng, shared) as u16);
        }
        if chance(rng, 0.35) {
            Expr::Const(constant(rng))
        } else {
            Expr::Input(below(rng, self.inputs) as u16)
        }
    }

    /// A random tree of at most `depth` levels and about `size` nodes, valid at `ctx`.
    pub fn grow(&self, rng: &mut SplitMix, ctx: Context, depth: usize, size: usize) -> Expr {
        if depth == 0 || size <= 1 || chance(rng, 0.2) {
            return self.leaf(rng, ctx);
        }
        let unary = !self.ops.unary.is_empty() && (size < 3 || chance(rng, 0.3));
        if unary {
            let op = self.ops.unary[below(rng, self.ops.unary.len())];
            return Expr::un(op, self.grow(rng, ctx, depth - 1, size - 1));
        }
        let op = self.ops.binary[below(rng, self.ops.binary.len())];
        let left = (size - 1) / 2;
        let a = self.grow(rng, ctx, depth - 1, left.max(1));
        let b = self.grow(rng, ctx, depth - 1, (size - 1 - left).max(1));
        Expr::bin(op, a, b)
    }

    /// A random count for an `iterate`: an integer input column when there is one (four times
    /// in five), else a fixed count.
    pub fn count(&self, rng: &mut SplitMix) -> Count {
        if !self.count_inputs.is_empty() && chance(rng, 0.8) {
            Count::Input(self.count_inputs[below(rng, self.count_inputs.len())])
        } else {
            Count::Fixed(1 + below(rng, self.max_fixed_count.max(1) as usize) as u32)
        }
    }

    /// A random `iterate` starting from `init`: its step reads the state.
    pub fn iterate(&self, rng: &mut SplitMix, init: Expr, ctx: Context, size: usize) -> Expr {
        let inner = Context {
            in_step: true,
            in_iterate: true,
            ..ctx
        };
        let mut step = self.grow(rng, inner, 3, size.max(3));
        if !step.uses_state() {
            let op = self.ops.binary[below(rng, self.ops.binary.len())];
            step = Expr::bin(op, Expr::State, step);
        }
        Expr::Iterate(Box::new(Iterate {
            init,
            step,
            count: self.count(rng),
        }))
    }

    /// A random program for a first population: a tree of 1 to 4 levels, or, when the grammar
    /// allows it, an `iterate` (half the time when an input column holds trip counts, which
    /// says the data is likely a recurrence; else one time in seven).
    pub fn random(&self, rng: &mut SplitMix) -> Genome {
        let top = Context {
            root: 0,
            in_step: false,
            in_iterate: false,
        };
        let depth = 1 + below(rng, 4);
        let size = 2 + below(rng, self.max_size.clamp(3, 12) - 1);
        let p = if self.count_inputs.is_empty() {
            0.15
        } else {
            0.5
        };
        if self.iterate && chance(rng, p) {
            let init = self.grow(rng, top, 2, 3);
            return Genome::of(self.iterate(rng, init, top, 5));
        }
        Genome::of(self.grow(rng, top, depth, size))
    }

    /// True when `g` is within the complexity and depth limits, keeps the constraints, every
    /// reference is in scope, and every input and count column it names exists.
    pub fn admits(&self, g: &Genome) -> bool {
        self.complexity(g) <= self.max_size
            && g.depth() <= self.max_depth
            && g.is_well_formed()
            && self.columns_exist(g)
            && self.constraints.allows(g)
            && !matches!(&self.units, Some((u, None)) if u.violations(g) > 0)
    }

    /// True when every reference of `g` is in scope and every column it names exists: a
    /// program of this data, whatever its size or constraints.
    pub fn readable(&self, g: &Genome) -> bool {
        g.is_well_formed() && self.columns_exist(g)
    }

    /// Whether `g`'s units balance (`None` without units).
    pub fn units_ok(&self, g: &Genome) -> Option<bool> {
        self.units.as_ref().map(|(u, _)| u.violations(g) == 0)
    }

    /// The selection penalty of `g`'s unbalanced units (0 without a penalty).
    pub fn units_penalty(&self, g: &Genome) -> f64 {
        match &self.units {
            Some((u, Some(p))) => *p * u.violations(g) as f64,
            _ => 0.0,
        }
    }

    /// The complexity of `g`: its node count, each node weighted by `--complexity-of`.
    pub fn complexity(&self, g: &Genome) -> usize {
        self.constraints.complexity(g)
    }

    fn columns_exist(&self, g: &Genome) -> bool {
        let mut ok = true;
        for (path, _) in g.paths() {
            match g.get(&path) {
                Expr::Input(i) => ok &= (*i as usize) < self.inputs,
                Expr::Iterate(it) => {
                    if let Count::Input(i) = it.count {
                        ok &= self.count_inputs.contains(&i);
                    }
                }
                _ => {}
            }
        }
        ok
    }

    /// A random program of the first population, simplified and within the limits (an input
    /// when ten draws give none, or a constant where an input is not admitted).
    pub fn random_admitted(&self, rng: &mut SplitMix) -> Genome {
        for _ in 0..10 {
            let g = simplify::genome(self.random(rng), &self.ops);
            if self.admits(&g) {
                return g;
            }
        }
        // An input; a constant where the constraints or units refuse it.
        let input = Genome::of(Expr::Input(below(rng, self.inputs) as u16));
        if self.admits(&input) {
            input
        } else {
            Genome::of(Expr::Const(constant(rng)))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::ops::DEFAULT;
    use super::*;

    pub(crate) fn grammar() -> Grammar {
        Grammar {
            ops: OpSet::parse(DEFAULT).unwrap(),
            inputs: 3,
            count_inputs: vec![2],
            max_fixed_count: 8,
            iterate: true,
            share: true,
            max_size: 30,
            max_depth: 10,
            constraints: Constraints::default(),
            units: None,
        }
    }

    #[test]
    fn random_programs_are_well_formed_and_within_limits() {
        let g = grammar();
        let mut rng = SplitMix(5);
        let mut iterates = 0;
        for _ in 0..500 {
            let p = g.random_admitted(&mut rng);
            assert!(g.admits(&p), "{p:?}");
            iterates += usize::from(p.body.has_iterate());
        }
        assert!(iterates > 30, "{iterates}");
    }
}
