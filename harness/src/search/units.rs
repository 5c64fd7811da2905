//! Dimensional analysis (`--units "x=m,t=s,y=m/s^2"`): the SI units of the inputs and the
//! target, and whether a program's units balance. A constant is free: it takes whatever units
//! balance the expression it is in (PySR's `dimensionless_constants_only=false`); `+`, `-`,
//! `min` and `max` need equal units, `sin`, `cos`, `exp` and `log` a dimensionless argument,
//! `pow` a dimensionless base (its exponent is fitted), and the program the target's units. An
//! `iterate` is not checked (its state is free).

use super::expr::{Expr, Genome};
use super::ops::Op;
use serde::{Deserialize, Serialize};

/// The SI base units, in the order of a [`Dim`]'s exponents.
const BASE: [&str; 7] = ["m", "s", "kg", "A", "K", "mol", "cd"];

/// A unit: the exponent of each SI base unit, in halves (a square root halves them).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dim(pub [i32; 7]);

impl Dim {
    /// Reads `m`, `m/s^2`, `kg*m^2/s^2`, `s^-1`, `1` (dimensionless).
    pub fn parse(text: &str) -> Result<Dim, String> {
        let bad = |why: String| {
            format!(
                "--units: `{text}`: {why}; a unit is a product of SI base units ({}) with \
                 integer powers, e.g. kg*m^2/s^2 or s^-1, or 1",
                BASE.join(", ")
            )
        };
        let (num, den) = match text.split_once('/') {
            Some((n, d)) => (n, Some(d)),
            None => (text, None),
        };
        let mut out = [0i32; 7];
        for (part, sign) in [(num, 1), (den.unwrap_or(""), -1)] {
            for factor in part.split(['*', '.']).map(str::trim) {
                if factor.is_empty() || factor == "1" {
                    continue;
                }
                let (name, power) = match factor.split_once('^') {
                    Some((n, p)) => (
                        n.trim(),
                        p.trim()
                            .parse::<i32>()
                            .map_err(|_| bad(format!("`{p}` is not an integer power")))?,
                    ),
                    None => (factor, 1),
                };
                let i = BASE
                    .iter()
                    .position(|b| *b == name)
                    .ok_or_else(|| bad(format!("`{name}` is not an SI base unit")))?;
                out[i] = power
                    .checked_mul(2 * sign)
                    .and_then(|p| out[i].checked_add(p))
                    .filter(|p| p.abs() <= 1 << 20)
                    .ok_or_else(|| bad(format!("the power of `{name}` is too large")))?;
            }
        }
        if den.is_some_and(|d| d.contains('/')) {
            return Err(bad("one `/` at most".into()));
        }
        Ok(Dim(out))
    }

    fn dimensionless(self) -> bool {
        self.0 == [0; 7]
    }

    fn zip(self, o: Dim, f: impl Fn(i32, i32) -> i32) -> Dim {
        Dim(std::array::from_fn(|i| f(self.0[i], o.0[i])))
    }

    fn scale(self, num: i32, den: i32) -> Option<Dim> {
        let mut out = [0; 7];
        for (o, &e) in out.iter_mut().zip(&self.0) {
            if (e * num) % den != 0 {
                return None;
            }
            *o = e * num / den;
        }
        Some(Dim(out))
    }
}

/// The units of the inputs (by column) and of the target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Units {
    /// Each input's unit, by column (dimensionless when not given).
    pub inputs: Vec<Dim>,
    /// The target's unit.
    pub target: Dim,
}

/// An expression's unit: known, or free (it holds a constant that can take any unit).
#[derive(Copy, Clone, Debug, PartialEq)]
enum U {
    Known(Dim),
    Free,
}

impl Units {
    /// Reads `--units "x=m,t=s,y=m/s^2"` for the inputs `inputs` and the target `target`:
    /// every name must be one of them.
    pub fn parse(text: &str, inputs: &[String], target: &str) -> Result<Units, String> {
        let mut units = Units {
            inputs: vec![Dim::default(); inputs.len()],
            target: Dim::default(),
        };
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, unit) = part
                .split_once('=')
                .ok_or_else(|| format!("--units {part}: expected COLUMN=UNIT (x=m, y=m/s^2)"))?;
            let (name, dim) = (name.trim(), Dim::parse(unit.trim())?);
            if name == target {
                units.target = dim;
            } else if let Some(j) = inputs.iter().position(|i| i == name) {
                units.inputs[j] = dim;
            } else {
                return Err(format!(
                    "--units: `{name}` is neither the target ({target}) nor an input ({})",
                    inputs.join(", ")
                ));
            }
        }
        Ok(units)
    }

    /// The number of places where `g`'s units do not balance (0: they do).
    pub fn violations(&self, g: &Genome) -> usize {
        let mut count = 0;
        let mut shared = Vec::with_capacity(g.lets.len());
        for e in &g.lets {
            let u = self.unit(e, &shared, &mut count);
            shared.push(u);
        }
        match self.unit(&g.body, &shared, &mut count) {
            U::Known(d) if d != self.target => count + 1,
            _ => count,
        }
    }

    fn unit(&self, e: &Expr, shared: &[U], count: &mut usize) -> U {
        let dimless = |u: U, count: &mut usize| {
            if let U::Known(d) = u {
                if !d.dimensionless() {
                    *count += 1;
                }
            }
        };
        match e {
            Expr::Const(_) | Expr::State | Expr::Iterate(_) => U::Free,
            Expr::Input(i) => U::Known(self.inputs.get(*i as usize).copied().unwrap_or_default()),
            Expr::Shared(j) => shared.get(*j as usize).copied().unwrap_or(U::Free),
            Expr::Unary(op, a) => {
                let a = self.unit(a, shared, count);
                match op {
                    Op::Sin | Op::Cos | Op::Exp | Op::Log => {
                        dimless(a, count);
                        U::Known(Dim::default())
                    }
                    Op::Sqrt | Op::Square | Op::Cube | Op::Inv => {
                        let (num, den) = match op {
                            Op::Sqrt => (1, 2),
                            Op::Square => (2, 1),
                            Op::Cube => (3, 1),
                            _ => (-1, 1),
                        };
                        match a {
                            U::Known(d) => match d.scale(num, den) {
                                Some(d) => U::Known(d),
                                None => {
                                    // A root of a unit with an odd power of halves.
                                    *count += 1;
                                    U::Free
                                }
                            },
                            U::Free => U::Free,
                        }
                    }
                    _ => a,
                }
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.unit(a, shared, count), self.unit(b, shared, count));
                match op {
                    Op::Add | Op::Sub | Op::Min | Op::Max => match (a, b) {
                        (U::Known(x), U::Known(y)) => {
                            if x != y {
                                *count += 1;
                            }
                            U::Known(x)
                        }
                        (U::Known(x), U::Free) | (U::Free, U::Known(x)) => U::Known(x),
                        (U::Free, U::Free) => U::Free,
                    },
                    Op::Mul | Op::Div => match (a, b) {
                        (U::Known(x), U::Known(y)) if *op == Op::Mul => {
                            U::Known(x.zip(y, |p, q| p + q))
                        }
                        (U::Known(x), U::Known(y)) => U::Known(x.zip(y, |p, q| p - q)),
                        _ => U::Free,
                    },
                    Op::Pow => {
                        dimless(a, count);
                        dimless(b, count);
                        U::Known(Dim::default())
                    }
                    _ => U::Free,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units() -> Units {
        let inputs: Vec<String> = ["x", "t", "v"].iter().map(|s| s.to_string()).collect();
        Units::parse("x=m, t=s, v=m/s, y=m/s^2", &inputs, "y").unwrap()
    }

    #[test]
    fn units_are_read_as_powers_of_si_base_units() {
        assert_eq!(Dim::parse("kg*m^2/s^2").unwrap().0, [4, -4, 2, 0, 0, 0, 0]);
        assert_eq!(Dim::parse("s^-1").unwrap(), Dim::parse("1/s").unwrap());
        assert_eq!(Dim::parse("1").unwrap(), Dim::default());
        for bad in ["ft", "m^x", "m/s/s"] {
            assert!(Dim::parse(bad).unwrap_err().contains("--units"), "{bad}");
        }
        let inputs = vec!["x".to_string()];
        let e = Units::parse("z=m", &inputs, "y").unwrap_err();
        assert!(e.contains("`z` is neither"), "{e}");
    }

    #[test]
    fn balanced_and_unbalanced_programs() {
        let u = units();
        let (x, t, v) = (Expr::Input(0), Expr::Input(1), Expr::Input(2));
        let c = || Expr::Const(2.0);
        let div = |a: Expr, b: Expr| Expr::bin(Op::Div, a, b);
        // v / t and x / t^2 are accelerations; c x / t^2 too (a free constant).
        assert_eq!(u.violations(&Genome::of(div(v.clone(), t.clone()))), 0);
        let x_t2 = div(x.clone(), Expr::un(Op::Square, t.clone()));
        assert_eq!(u.violations(&Genome::of(x_t2.clone())), 0);
        let cx = Expr::bin(Op::Mul, c(), x_t2.clone());
        assert_eq!(u.violations(&Genome::of(cx)), 0);
        // x + t: metres plus seconds, and not an acceleration either (a constant times the
        // sum is free, so only the sum is counted).
        let sum = Expr::bin(Op::Mul, c(), Expr::bin(Op::Add, x.clone(), t.clone()));
        assert_eq!(u.violations(&Genome::of(sum)), 1);
        // sin(x): a dimensioned argument; x itself: metres, not m/s^2.
        let s = Expr::bin(Op::Mul, c(), Expr::un(Op::Sin, x.clone()));
        assert_eq!(u.violations(&Genome::of(s)), 1);
        assert_eq!(u.violations(&Genome::of(x.clone())), 1);
        // sin(c x) is fine: the constant makes the argument free.
        let s = div(
            Expr::bin(
                Op::Mul,
                v.clone(),
                Expr::un(Op::Sin, Expr::bin(Op::Mul, c(), x)),
            ),
            t,
        );
        assert_eq!(u.violations(&Genome::of(s)), 0);
    }

    #[test]
    fn the_grammar_refuses_or_penalises_unbalanced_programs() {
        let mut g = super::super::generate::tests::grammar();
        let sum = Genome::of(Expr::bin(Op::Add, Expr::Input(0), Expr::Input(1)));
        let ratio = Genome::of(Expr::bin(Op::Div, Expr::Input(2), Expr::Input(1)));
        assert!(g.admits(&sum) && g.units_ok(&sum).is_none());
        g.units = Some((units(), None));
        assert!(!g.admits(&sum) && g.admits(&ratio));
        assert_eq!(g.units_ok(&sum), Some(false));
        g.units = Some((units(), Some(2.5)));
        assert!(g.admits(&sum));
        // Two places: metres plus seconds, and the sum (metres) is not an acceleration.
        assert_eq!(g.units_penalty(&sum), 5.0);
        assert_eq!(g.units_penalty(&ratio), 0.0);
    }
}
