//! What the built-in proposer's programs may be beyond the grammar, as PySR's constraints: the
//! complexity each operator, constant and input counts for (`--complexity-of`), the largest
//! complexity of each argument of an operator (`--constraints`), and how many times one
//! operator may nest inside another (`--nested`). A candidate that breaks them is never
//! fitted: the grammar does not admit it.

use super::expr::{Expr, Genome};
use super::ops::Op;
use serde::{Deserialize, Serialize};

/// The constraints; empty, every node counts 1 and nothing more is refused.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    /// The complexity of an operator (by its name), of a constant (`const`) and of an input
    /// (`var`); 1 for what is not listed.
    pub costs: Vec<(String, usize)>,
    /// Per operator, the largest complexity of each argument (`None`: any).
    pub args: Vec<(String, Vec<Option<usize>>)>,
    /// Per outer operator, the most times each inner operator may appear on one path below it.
    pub nested: Vec<(String, Vec<(String, usize)>)>,
}

/// The name of an operator as the constraints list it.
fn canonical(name: &str, flag: &str) -> Result<String, String> {
    match name.trim() {
        "const" | "var" => Ok(name.trim().to_string()),
        n => Op::from_name(n)
            .map(|op| op.name().to_string())
            .ok_or_else(|| format!("{flag}: `{n}` is not an operator (nor `const` or `var`)")),
    }
}

impl Constraints {
    /// Reads `--complexity-of "exp=3,sin=2,const=1,var=1"`.
    pub fn parse_costs(&mut self, text: &str) -> Result<(), String> {
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, cost) = part.split_once('=').ok_or_else(|| {
                format!("--complexity-of {text}: expected NAME=N, ... (exp=3,const=1)")
            })?;
            let cost: usize = cost.trim().parse().ok().filter(|&c| c >= 1).ok_or_else(|| {
                format!("--complexity-of {part}: the complexity must be a whole number of 1 or more")
            })?;
            self.costs.push((canonical(name, "--complexity-of")?, cost));
        }
        Ok(())
    }

    /// Reads `--constraints "pow=(-1,1);/=(-1,5)"`: each argument's largest complexity, -1
    /// for any.
    pub fn parse_args(&mut self, text: &str) -> Result<(), String> {
        let bad = |part: &str| {
            format!(
                "--constraints {part}: expected OP=(N) or OP=(N,M), N and M the largest \
                 complexity of each argument or -1 for any, e.g. pow=(-1,1)"
            )
        };
        for part in text.split(';').filter(|p| !p.trim().is_empty()) {
            let (name, list) = part.split_once('=').ok_or_else(|| bad(part))?;
            let name = canonical(name, "--constraints")?;
            let op = Op::from_name(&name).ok_or_else(|| bad(part))?;
            let list = list
                .trim()
                .strip_prefix('(')
                .and_then(|l| l.strip_suffix(')'))
                .ok_or_else(|| bad(part))?;
            let limits: Vec<Option<usize>> = list
                .split(',')
                .map(|n| match n.trim().parse::<i64>() {
                    Ok(-1) => Ok(None),
                    Ok(n) if n >= 1 => Ok(Some(n as usize)),
                    _ => Err(bad(part)),
                })
                .collect::<Result<_, _>>()?;
            if limits.len() != op.arity() {
                return Err(format!(
                    "--constraints {part}: `{name}` takes {} argument(s), {} limit(s) given",
                    op.arity(),
                    limits.len()
                ));
            }
            self.args.push((name, limits));
        }
        Ok(())
    }

    /// Reads `--nested "sin=sin:0,cos:0;exp=exp:0"`: below each `sin`, at most 0 `sin` and 0
    /// `cos` on any path; below each `exp`, no `exp`.
    pub fn parse_nested(&mut self, text: &str) -> Result<(), String> {
        let bad = |part: &str| {
            format!(
                "--nested {part}: expected OUTER=INNER:N,INNER:N; ... (sin=sin:0,cos:0;exp=exp:0)"
            )
        };
        for part in text.split(';').filter(|p| !p.trim().is_empty()) {
            let (outer, inner) = part.split_once('=').ok_or_else(|| bad(part))?;
            let outer = canonical(outer, "--nested")?;
            let mut limits = Vec::new();
            for item in inner.split(',') {
                let (name, n) = item.split_once(':').ok_or_else(|| bad(part))?;
                let n: usize = n.trim().parse().map_err(|_| bad(part))?;
                limits.push((canonical(name, "--nested")?, n));
            }
            if ["const", "var"].contains(&outer.as_str())
                || limits.iter().any(|(n, _)| n == "const" || n == "var")
            {
                return Err(format!("--nested {part}: only operators nest"));
            }
            self.nested.push((outer, limits));
        }
        Ok(())
    }

    fn cost(&self, name: &str) -> usize {
        self.costs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(1, |c| c.1)
    }

    /// The complexity of `e`: each node its cost (an `iterate` 2 and its parts).
    pub fn expr_complexity(&self, e: &Expr) -> usize {
        if self.costs.is_empty() {
            return e.size();
        }
        match e {
            Expr::Const(_) => self.cost("const"),
            Expr::Input(_) | Expr::State | Expr::Shared(_) => self.cost("var"),
            Expr::Unary(op, a) => self.cost(op.name()) + self.expr_complexity(a),
            Expr::Binary(op, a, b) => {
                self.cost(op.name()) + self.expr_complexity(a) + self.expr_complexity(b)
            }
            Expr::Iterate(it) => {
                2 + self.expr_complexity(&it.init) + self.expr_complexity(&it.step)
            }
        }
    }

    /// The complexity of a program: its `let` bindings' and its body's.
    pub fn complexity(&self, g: &Genome) -> usize {
        g.roots().map(|r| self.expr_complexity(r)).sum()
    }

    /// Whether `g` keeps every argument and nesting limit (its `let` bindings read in place,
    /// so that sharing a subexpression does not get around them).
    pub fn allows(&self, g: &Genome) -> bool {
        if self.args.is_empty() && self.nested.is_empty() {
            return true;
        }
        let mut lets: Vec<Expr> = Vec::with_capacity(g.lets.len());
        for e in &g.lets {
            let mut e = e.clone();
            e.map_shared(&|j| lets.get(j as usize).cloned().unwrap_or(Expr::Shared(j)));
            lets.push(e);
        }
        let mut body = g.body.clone();
        body.map_shared(&|j| lets.get(j as usize).cloned().unwrap_or(Expr::Shared(j)));
        self.expr_allows(&body)
    }

    /// Checks what a setting cannot be: an unknown name (a constraint that would never
    /// match).
    pub fn check(&self) -> Result<(), String> {
        let names = self
            .costs
            .iter()
            .map(|c| &c.0)
            .chain(self.args.iter().map(|a| &a.0))
            .chain(
                self.nested
                    .iter()
                    .flat_map(|(o, i)| std::iter::once(o).chain(i.iter().map(|x| &x.0))),
            );
        for n in names {
            if canonical(n, "constraints")? != *n {
                return Err(format!(
                    "constraints: `{n}` is spelled `{}` here",
                    canonical(n, "constraints")?
                ));
            }
        }
        Ok(())
    }

    fn expr_allows(&self, e: &Expr) -> bool {
        let (op, children): (Option<Op>, Vec<&Expr>) = match e {
            Expr::Unary(op, a) => (Some(*op), vec![a]),
            Expr::Binary(op, a, b) => (Some(*op), vec![a, b]),
            Expr::Iterate(it) => (None, vec![&it.init, &it.step]),
            _ => (None, vec![]),
        };
        if let Some(op) = op {
            let name = op.name();
            for (n, limits) in &self.args {
                if n == name {
                    let too_big = children
                        .iter()
                        .zip(limits)
                        .any(|(c, l)| l.is_some_and(|l| self.expr_complexity(c) > l));
                    if too_big {
                        return false;
                    }
                }
            }
            for (outer, inner) in &self.nested {
                if outer == name {
                    for (i, most) in inner {
                        if children.iter().any(|c| nesting(c, i) > *most) {
                            return false;
                        }
                    }
                }
            }
        }
        children.iter().all(|c| self.expr_allows(c))
    }
}

/// The most nodes of operator `name` on one path from `e` down.
fn nesting(e: &Expr, name: &str) -> usize {
    let (here, children): (bool, Vec<&Expr>) = match e {
        Expr::Unary(op, a) => (op.name() == name, vec![a]),
        Expr::Binary(op, a, b) => (op.name() == name, vec![a, b]),
        Expr::Iterate(it) => (false, vec![&it.init, &it.step]),
        _ => (false, vec![]),
    };
    usize::from(here) + children.iter().map(|c| nesting(c, name)).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Expr {
        Expr::Input(0)
    }

    fn c() -> Expr {
        Expr::Const(1.0)
    }

    #[test]
    fn costs_arguments_and_nesting() {
        let mut k = Constraints::default();
        k.parse_costs("exp=3, sin=2,const=2").unwrap();
        k.parse_args("pow=(-1,1)").unwrap();
        k.parse_nested("sin=sin:0,cos:0;exp=exp:1").unwrap();
        // exp(sin(x) * 1): 3 + 1 (the product) + 2 + 1 + 2.
        let e = Expr::un(Op::Exp, Expr::bin(Op::Mul, Expr::un(Op::Sin, x()), c()));
        assert_eq!(k.complexity(&Genome::of(e.clone())), 9);
        assert!(k.allows(&Genome::of(e)));
        // pow(x + 1, x): any base; pow(x, x + 1): an exponent of 3 nodes is refused.
        let ok = Expr::bin(Op::Pow, Expr::bin(Op::Add, x(), c()), x());
        let no = Expr::bin(Op::Pow, x(), Expr::bin(Op::Add, x(), c()));
        assert!(k.allows(&Genome::of(ok)) && !k.allows(&Genome::of(no)));
        // No sin or cos below a sin, on any path; one exp below an exp, not two.
        let sin_cos = Expr::un(Op::Sin, Expr::bin(Op::Add, x(), Expr::un(Op::Cos, x())));
        assert!(!k.allows(&Genome::of(sin_cos)));
        let exp2 = Expr::un(Op::Exp, Expr::un(Op::Exp, x()));
        let exp3 = Expr::un(Op::Exp, exp2.clone());
        assert!(k.allows(&Genome::of(exp2)) && !k.allows(&Genome::of(exp3)));
        // Without constraints: the node count, and everything allowed.
        let none = Constraints::default();
        let e = Expr::un(Op::Sin, Expr::un(Op::Sin, x()));
        assert_eq!(none.complexity(&Genome::of(e.clone())), 3);
        assert!(none.allows(&Genome::of(e)));
    }

    #[test]
    fn bad_constraints_are_clear_errors() {
        let cases = [
            ("costs", "tanh=2", "`tanh` is not an operator"),
            ("costs", "exp=0", "a whole number of 1 or more"),
            ("costs", "exp", "expected NAME=N"),
            ("args", "pow=(1)", "takes 2 argument(s)"),
            ("args", "pow=1,1", "expected OP=(N)"),
            ("nested", "sin=sin", "expected OUTER=INNER:N"),
            ("nested", "sin=const:0", "only operators nest"),
        ];
        for (what, text, want) in cases {
            let mut k = Constraints::default();
            let e = match what {
                "costs" => k.parse_costs(text),
                "args" => k.parse_args(text),
                _ => k.parse_nested(text),
            }
            .unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
