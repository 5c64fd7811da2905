//! The genome of the built-in proposer: an expression tree over the inputs, constants and the
//! operators of [`super::ops`], with two forms that tree-based tools lack: `iterate` (a state
//! updated a per-row or fixed number of times) and `let`-shared subexpressions (a value named
//! once at the top of the program and used anywhere below).
//!
//! Every constant is a parameter of the candidate: its value here is only where the fit starts.

use super::ops::Op;
use serde::{Deserialize, Serialize};

/// One node of an expression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A constant, fitted to the data.
    Const(f64),
    /// Data column `i` of the search's inputs.
    Input(u16),
    /// The state of the enclosing `iterate` (only inside its step).
    State,
    /// The value of the program's `let` binding `j` (only below it).
    Shared(u16),
    /// A one-operand operator.
    Unary(Op, Box<Expr>),
    /// A two-operand operator.
    Binary(Op, Box<Expr>, Box<Expr>),
    /// A state started at `init` and updated by `step` `count` times.
    Iterate(Box<Iterate>),
}

/// The parts of an `iterate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Iterate {
    /// The first state (no [`Expr::State`] in it).
    pub init: Expr,
    /// The next state from the state, the inputs and constants.
    pub step: Expr,
    /// How many steps.
    pub count: Count,
}

/// How many times an `iterate` steps.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Count {
    /// The value of input column `i` on each row (a column of non-negative integers).
    Input(u16),
    /// This many times on every row.
    Fixed(u32),
}

/// A whole candidate: `let` bindings (each may use the ones before it) and the body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Genome {
    /// Shared values, named `t0, t1, ...` in order.
    pub lets: Vec<Expr>,
    /// The program's value.
    pub body: Expr,
}

/// Where a node sits: what its subtree may refer to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// Which root: a `let` binding's index, or `lets.len()` for the body.
    pub root: usize,
    /// Inside an `iterate`'s step ([`Expr::State`] allowed, no `iterate` in it).
    pub in_step: bool,
    /// Inside an `iterate` (its init or its step).
    pub in_iterate: bool,
}

impl Context {
    /// The `let` bindings a node here may use: `Shared(j)` for `j` below this.
    pub fn shared_below(&self) -> usize {
        self.root
    }
}

/// A node's address: its root, then the child taken at each level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The root (see [`Context::root`]).
    pub root: usize,
    /// Child indices from the root.
    pub steps: Vec<u8>,
}

impl Expr {
    /// A binary node.
    pub fn bin(op: Op, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    /// A unary node.
    pub fn un(op: Op, a: Expr) -> Expr {
        Expr::Unary(op, Box::new(a))
    }

    /// Nodes in the tree: the complexity. An `iterate` counts one for itself and one for its
    /// count, a leaf one.
    pub fn size(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Input(_) | Expr::State | Expr::Shared(_) => 1,
            Expr::Unary(_, a) => 1 + a.size(),
            Expr::Binary(_, a, b) => 1 + a.size() + b.size(),
            Expr::Iterate(it) => 2 + it.init.size() + it.step.size(),
        }
    }

    /// Levels below the root (0 for a leaf).
    pub fn depth(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Input(_) | Expr::State | Expr::Shared(_) => 0,
            Expr::Unary(_, a) => 1 + a.depth(),
            Expr::Binary(_, a, b) => 1 + a.depth().max(b.depth()),
            Expr::Iterate(it) => 1 + it.init.depth().max(it.step.depth()),
        }
    }

    /// The children, in order.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Unary(_, a) => vec![a],
            Expr::Binary(_, a, b) => vec![a, b],
            Expr::Iterate(it) => vec![&it.init, &it.step],
            _ => Vec::new(),
        }
    }

    /// Child `i`, mutably.
    pub fn child_mut(&mut self, i: usize) -> Option<&mut Expr> {
        match (self, i) {
            (Expr::Unary(_, a), 0) | (Expr::Binary(_, a, _), 0) => Some(a),
            (Expr::Binary(_, _, b), 1) => Some(b),
            (Expr::Iterate(it), 0) => Some(&mut it.init),
            (Expr::Iterate(it), 1) => Some(&mut it.step),
            _ => None,
        }
    }

    /// True when the subtree reads no data: no input, state or shared value (it folds to a
    /// constant).
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Const(_) => true,
            Expr::Input(_) | Expr::State | Expr::Shared(_) | Expr::Iterate(_) => false,
            Expr::Unary(_, a) => a.is_constant(),
            Expr::Binary(_, a, b) => a.is_constant() && b.is_constant(),
        }
    }

    /// True when the subtree reads the `iterate` state (outside an `iterate` of its own).
    pub fn uses_state(&self) -> bool {
        match self {
            Expr::State => true,
            Expr::Unary(_, a) => a.uses_state(),
            Expr::Binary(_, a, b) => a.uses_state() || b.uses_state(),
            Expr::Iterate(it) => it.init.uses_state(),
            _ => false,
        }
    }

    /// True when the subtree holds an `iterate`.
    pub fn has_iterate(&self) -> bool {
        match self {
            Expr::Iterate(_) => true,
            Expr::Unary(_, a) => a.has_iterate(),
            Expr::Binary(_, a, b) => a.has_iterate() || b.has_iterate(),
            _ => false,
        }
    }

    /// The highest `Shared` index used, plus one (0 when none is).
    pub fn shared_used(&self) -> usize {
        match self {
            Expr::Shared(j) => *j as usize + 1,
            other => other
                .children()
                .iter()
                .map(|c| c.shared_used())
                .max()
                .unwrap_or(0),
        }
    }

    /// Calls `f` on every node in pre-order with its context.
    pub fn visit<'a>(&'a self, ctx: Context, f: &mut dyn FnMut(&'a Expr, Context, &[u8])) {
        let mut steps = Vec::new();
        self.visit_at(ctx, &mut steps, f);
    }

    fn visit_at<'a>(
        &'a self,
        ctx: Context,
        steps: &mut Vec<u8>,
        f: &mut dyn FnMut(&'a Expr, Context, &[u8]),
    ) {
        f(self, ctx, steps);
        for (i, c) in self.children().into_iter().enumerate() {
            let inner = match self {
                Expr::Iterate(_) => Context {
                    in_step: i == 1,
                    in_iterate: true,
                    ..ctx
                },
                _ => ctx,
            };
            steps.push(i as u8);
            c.visit_at(inner, steps, f);
            steps.pop();
        }
    }

    /// The constants in pre-order.
    pub fn constants(&self, out: &mut Vec<f64>) {
        if let Expr::Const(c) = self {
            out.push(*c);
        }
        for c in self.children() {
            c.constants(out);
        }
    }

    /// Sets the constants in pre-order from `values` (as many as [`Expr::constants`] gives).
    pub fn set_constants(&mut self, values: &mut impl Iterator<Item = f64>) {
        if let Expr::Const(c) = self {
            if let Some(v) = values.next() {
                *c = v;
            }
        }
        for i in 0..2 {
            match self.child_mut(i) {
                Some(c) => c.set_constants(values),
                None => break,
            }
        }
    }

    /// Rewrites `Shared(j)` as `f(j)` everywhere below.
    pub fn map_shared(&mut self, f: &dyn Fn(u16) -> Expr) {
        if let Expr::Shared(j) = self {
            *self = f(*j);
            return;
        }
        for i in 0..2 {
            match self.child_mut(i) {
                Some(c) => c.map_shared(f),
                None => break,
            }
        }
    }
}

impl Genome {
    /// A genome of one expression.
    pub fn of(body: Expr) -> Genome {
        Genome {
            lets: Vec::new(),
            body,
        }
    }

    /// The roots: every `let` binding, then the body.
    pub fn roots(&self) -> impl Iterator<Item = &Expr> {
        self.lets.iter().chain(std::iter::once(&self.body))
    }

    /// Root `r`, mutably.
    pub fn root_mut(&mut self, r: usize) -> &mut Expr {
        if r < self.lets.len() {
            &mut self.lets[r]
        } else {
            &mut self.body
        }
    }

    /// Root `r`.
    pub fn root(&self, r: usize) -> &Expr {
        if r < self.lets.len() {
            &self.lets[r]
        } else {
            &self.body
        }
    }

    /// The complexity: nodes over every root (a shared value counted once, where it is bound).
    pub fn size(&self) -> usize {
        self.roots().map(Expr::size).sum()
    }

    /// The deepest root.
    pub fn depth(&self) -> usize {
        self.roots().map(Expr::depth).max().unwrap_or(0)
    }

    /// The constants, in order (the parameters `c0, c1, ...` of the emitted program).
    pub fn constants(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for r in self.roots() {
            r.constants(&mut out);
        }
        out
    }

    /// Sets the constants from `values`, in the order [`Genome::constants`] gives.
    pub fn set_constants(&mut self, values: &[f64]) {
        let mut it = values.iter().copied();
        for r in 0..=self.lets.len() {
            self.root_mut(r).set_constants(&mut it);
        }
    }

    /// Every node's path and context, in pre-order, roots in order.
    pub fn paths(&self) -> Vec<(Path, Context)> {
        let mut out = Vec::new();
        for (r, e) in self.roots().enumerate() {
            let ctx = Context {
                root: r,
                in_step: false,
                in_iterate: false,
            };
            e.visit(ctx, &mut |_, c, steps| {
                out.push((
                    Path {
                        root: r,
                        steps: steps.to_vec(),
                    },
                    c,
                ))
            });
        }
        out
    }

    /// The node at `path`.
    pub fn get(&self, path: &Path) -> &Expr {
        let mut e = self.root(path.root);
        for &s in &path.steps {
            e = e.children()[s as usize];
        }
        e
    }

    /// The node at `path`, mutably.
    pub fn get_mut(&mut self, path: &Path) -> &mut Expr {
        let mut e = self.root_mut(path.root);
        for &s in &path.steps {
            e = e.child_mut(s as usize).expect("a valid path");
        }
        e
    }

    /// True when every reference is in scope: `State` only in a step, no `iterate` inside an
    /// `iterate`, `Shared(j)` only below binding `j`, and every binding used.
    pub fn is_well_formed(&self) -> bool {
        let mut ok = true;
        for (path, ctx) in self.paths() {
            match self.get(&path) {
                Expr::State => ok &= ctx.in_step,
                Expr::Shared(j) => ok &= (*j as usize) < ctx.shared_below(),
                Expr::Iterate(_) => ok &= !ctx.in_iterate,
                _ => {}
            }
        }
        let used = |j: usize| self.roots().skip(j + 1).any(|r| uses_shared(r, j as u16));
        ok && (0..self.lets.len()).all(used)
    }
}

/// True when `e` reads `Shared(j)`.
pub fn uses_shared(e: &Expr, j: u16) -> bool {
    match e {
        Expr::Shared(i) => *i == j,
        other => other.children().iter().any(|c| uses_shared(c, j)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Genome {
        // t0 = x0 * 2; body = sin(t0) + iterate(s <- s * 0.5 + t0, from x1, 3 times)
        let it = Iterate {
            init: Expr::Input(1),
            step: Expr::bin(
                Op::Add,
                Expr::bin(Op::Mul, Expr::State, Expr::Const(0.5)),
                Expr::Shared(0),
            ),
            count: Count::Fixed(3),
        };
        Genome {
            lets: vec![Expr::bin(Op::Mul, Expr::Input(0), Expr::Const(2.0))],
            body: Expr::bin(
                Op::Add,
                Expr::un(Op::Sin, Expr::Shared(0)),
                Expr::Iterate(Box::new(it)),
            ),
        }
    }

    #[test]
    fn sizes_constants_and_paths() {
        let mut g = sample();
        assert_eq!(g.size(), 3 + (1 + 2 + 2 + 1 + 5));
        assert_eq!(g.constants(), vec![2.0, 0.5]);
        g.set_constants(&[3.0, 0.25]);
        assert_eq!(g.constants(), vec![3.0, 0.25]);
        let paths = g.paths();
        assert_eq!(paths.len(), g.size() - 1, "the count is no node of its own");
        let state = paths
            .iter()
            .find(|(p, _)| *g.get(p) == Expr::State)
            .unwrap();
        assert!(state.1.in_step && state.1.in_iterate);
        assert!(g.is_well_formed());
    }

    #[test]
    fn out_of_scope_references_are_caught() {
        let mut g = sample();
        g.lets[0] = Expr::Shared(0);
        assert!(!g.is_well_formed());
        let mut g = sample();
        g.body = Expr::State;
        assert!(!g.is_well_formed(), "state outside a step, t0 unused");
    }
}
