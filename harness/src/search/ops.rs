//! The operators a search may build programs from (`--ops`): each one's arity, its form in the
//! object language, its infix form, and its value for constant folding.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One operator of the search's grammar.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Op {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
    /// `a ** b`, the exponent any expression
    Pow,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `sin(a)`
    Sin,
    /// `cos(a)`
    Cos,
    /// `exp(a)`
    Exp,
    /// `log(a)` (natural; NaN below zero, as IEEE)
    Log,
    /// `sqrt(a)` (NaN below zero)
    Sqrt,
    /// `abs(a)`
    Abs,
    /// `a ** 2`
    Square,
    /// `a ** 3`
    Cube,
    /// `-a`
    Neg,
    /// `1 / a`
    Inv,
}

/// Every operator, in the order `--ops` lists them in its help.
pub const ALL: [Op; 17] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Div,
    Op::Pow,
    Op::Min,
    Op::Max,
    Op::Sin,
    Op::Cos,
    Op::Exp,
    Op::Log,
    Op::Sqrt,
    Op::Abs,
    Op::Square,
    Op::Cube,
    Op::Neg,
    Op::Inv,
];

/// The default operator set: the four arithmetic operators and the functions Operon and PySR
/// users reach for first.
pub const DEFAULT: &str = "+,-,*,/,sin,cos,exp,log,sqrt,square";

impl Op {
    /// The name `--ops` takes (`+`, `sin`, `square`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Pow => "pow",
            Op::Min => "min",
            Op::Max => "max",
            Op::Sin => "sin",
            Op::Cos => "cos",
            Op::Exp => "exp",
            Op::Log => "log",
            Op::Sqrt => "sqrt",
            Op::Abs => "abs",
            Op::Square => "square",
            Op::Cube => "cube",
            Op::Neg => "neg",
            Op::Inv => "inv",
        }
    }

    /// The operator named `name` (also `add`, `sub`, `mul`, `div`, Operon's spellings).
    pub fn from_name(name: &str) -> Option<Op> {
        let alias = match name {
            "add" => "+",
            "sub" => "-",
            "mul" => "*",
            "div" => "/",
            "^" | "**" => "pow",
            other => other,
        };
        ALL.iter().copied().find(|o| o.name() == alias)
    }

    /// 1 or 2.
    pub fn arity(self) -> usize {
        match self {
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Pow | Op::Min | Op::Max => 2,
            _ => 1,
        }
    }

    /// True for `+` and `*`, whose operands may be reordered and regrouped.
    pub fn is_associative(self) -> bool {
        matches!(self, Op::Add | Op::Mul)
    }

    /// The value on numbers (IEEE, as the runtime computes it).
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
            Op::Pow => shared_ir::pow(a, b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
            Op::Sin => a.sin(),
            Op::Cos => a.cos(),
            Op::Exp => a.exp(),
            Op::Log => a.ln(),
            Op::Sqrt => a.sqrt(),
            Op::Abs => a.abs(),
            Op::Square => a * a,
            Op::Cube => a * a * a,
            Op::Neg => -a,
            Op::Inv => 1.0 / a,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The operators a search uses, split by arity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSet {
    /// One-operand operators.
    pub unary: Vec<Op>,
    /// Two-operand operators.
    pub binary: Vec<Op>,
}

impl OpSet {
    /// Parses a comma-separated list (`+,-,*,/,sin`); an unknown name is an error that lists
    /// the known ones.
    pub fn parse(list: &str) -> Result<OpSet, String> {
        let mut set = OpSet {
            unary: Vec::new(),
            binary: Vec::new(),
        };
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some(op) = Op::from_name(name) else {
                let known: Vec<&str> = ALL.iter().map(|o| o.name()).collect();
                return Err(format!(
                    "--ops: unknown operator `{name}` (known: {})",
                    known.join(",")
                ));
            };
            let v = if op.arity() == 1 {
                &mut set.unary
            } else {
                &mut set.binary
            };
            if !v.contains(&op) {
                v.push(op);
            }
        }
        if set.binary.is_empty() {
            return Err("--ops needs at least one two-operand operator (+, -, *, /, ...)".into());
        }
        Ok(set)
    }

    /// Every operator, binary first, in the order given.
    pub fn all(&self) -> impl Iterator<Item = Op> + '_ {
        self.binary.iter().chain(&self.unary).copied()
    }

    /// Whether `op` is in the set.
    pub fn contains(&self, op: Op) -> bool {
        self.binary.contains(&op) || self.unary.contains(&op)
    }

    /// The names, comma-separated, as `--ops` takes them.
    pub fn names(&self) -> Vec<String> {
        self.all().map(|o| o.name().to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_parses_and_unknown_names_are_listed() {
        let s = OpSet::parse(DEFAULT).unwrap();
        assert_eq!(s.binary, vec![Op::Add, Op::Sub, Op::Mul, Op::Div]);
        assert!(s.unary.contains(&Op::Square));
        let e = OpSet::parse("+,tanh").unwrap_err();
        assert!(e.contains("`tanh`") && e.contains("sqrt"), "{e}");
        assert!(OpSet::parse("sin,cos").is_err());
        assert_eq!(OpSet::parse("add,mul,^").unwrap().binary.len(), 3);
    }
}
