//! A seeded generator of well-typed, in-domain programs from every family of the language.
//!
//! [`generate`]`(seed, index, options)` draws a program and its inputs from its own random
//! stream (a function of the seed and the index only, so programs can be made in any order and
//! on any thread). The inputs come first: two to four scalars (`a b c x`), sometimes a vector
//! `v` and a matrix `M` (diagonally dominant, so well conditioned), each bound on every lane
//! or per lane, over 1 to 16 lanes. Then the program is grown top-down as a typed expression
//! tree in which every expression carries a bound on the size of its elements, so that every
//! primitive gets arguments inside its domain: `log` and `sqrt` take expressions that are
//! positive by construction, divisions divide by `c + e^2`, `exp` and `sin` take arguments
//! scaled to a few units, matrices passed to `det`, `logdet`, `inv` and `solve` are diagonally
//! dominant (or products and inverses of such), and loops and recursions update their state
//! by contractions (so rounding errors shrink from one step to the next and `f32` stays close
//! to `f64`). The product of the trip counts around any expression is capped, so no program
//! comes near the step budget. Branch tests and loop trip counts that must differ across
//! lanes are tied to per-lane inputs with thresholds placed in the widest gap between the
//! lanes' values. Some branches guard a domain (a `log` or a division that is NaN or infinite
//! on the lanes that do not take them, which must not leak), some fail on the lanes that take
//! them (an index out of range, a type error: those lanes must fail alike in the runtime), and
//! some return values of different structure (the batch splits). Now and then inputs take
//! exact values (0, 1, -1, ...) that meet the conventions at kinks and ties.
//!
//! Every program records the [`Family`] of each construct it contains ([`Case::families`]).

mod control;
mod core;
mod divergent;
mod iterate;
mod scalar;
mod tensor;

use crate::oracle::{Input, Shape};
use crate::SplitMix;
use std::fmt;

/// A feature family of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `+ - * /`, `min`, `max`, `pow` with integer exponents, `modulo`, `remainder`.
    Arith,
    /// `sin cos exp log sqrt abs`, `pow`/`expt` with real exponents.
    Math,
    /// `let`, `let*`, `letrec`, named `let`, internal `define`.
    Let,
    /// `lambda`, closures, higher-order calls, primitives as values.
    Lambda,
    /// Top-level `define`d (recursive, mutually recursive) functions.
    Define,
    /// `cons car cdr list null? pair?` and quoted data.
    List,
    /// Vectors: `vec`, `[...]`, `dot`, `norm`, `normalize`, `vsum`, `ref`, `cross`, `scale`.
    Vector,
    /// 2x2 and 3x3 matrices: `det logdet inv solve matmul matvec transpose trace outer`.
    Matrix,
    /// Bounded `loop`/`recur`.
    Loop,
    /// Branches whose outcome differs across lanes (including ones that split the batch).
    Branch,
    /// Loops and recursion whose trip count differs across lanes.
    Trip,
}

impl Family {
    /// Every family, in table order.
    pub const ALL: [Family; 11] = [
        Family::Arith,
        Family::Math,
        Family::Let,
        Family::Lambda,
        Family::Define,
        Family::List,
        Family::Vector,
        Family::Matrix,
        Family::Loop,
        Family::Branch,
        Family::Trip,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Family::Arith => "arith",
            Family::Math => "math",
            Family::Let => "let",
            Family::Lambda => "lambda",
            Family::Define => "define",
            Family::List => "list",
            Family::Vector => "vector",
            Family::Matrix => "matrix",
            Family::Loop => "loop",
            Family::Branch => "branch",
            Family::Trip => "trip",
        }
    }

    /// The family called `name`.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of families.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Families(u16);

impl Families {
    /// The empty set.
    pub const NONE: Families = Families(0);

    /// Adds `f`.
    pub fn insert(&mut self, f: Family) {
        self.0 |= f.bit();
    }

    /// True when `f` is in the set.
    pub fn contains(self, f: Family) -> bool {
        self.0 & f.bit() != 0
    }

    /// True when every family of `other` is in the set.
    pub fn contains_all(self, other: Families) -> bool {
        self.0 & other.0 == other.0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The families, in table order.
    pub fn iter(self) -> impl Iterator<Item = Family> {
        Family::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

impl FromIterator<Family> for Families {
    fn from_iter<I: IntoIterator<Item = Family>>(it: I) -> Self {
        let mut s = Families::NONE;
        for f in it {
            s.insert(f);
        }
        s
    }
}

impl fmt::Display for Families {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Family::name).collect();
        f.write_str(&names.join(","))
    }
}

/// One input of a generated case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseInput {
    /// Its name.
    pub name: String,
    /// `None` for a number, else the tensor's shape.
    pub shape: Option<Shape>,
    /// True when bound per lane.
    pub per_lane: bool,
    /// The numbers: one value, or one value per lane (lane after lane).
    pub data: Vec<f64>,
}

impl CaseInput {
    /// Numbers per lane.
    pub fn width(&self) -> usize {
        self.shape.map_or(1, Shape::len)
    }

    /// The value on lane `l`.
    pub fn lane(&self, l: usize) -> &[f64] {
        let n = self.width();
        if self.per_lane {
            &self.data[l * n..(l + 1) * n]
        } else {
            &self.data
        }
    }
}

/// A generated program with its inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The generator seed.
    pub seed: u64,
    /// The program's index in the seed's stream.
    pub index: u64,
    /// Program text.
    pub source: String,
    /// The families of the constructs it contains.
    pub families: Families,
    /// Number of lanes.
    pub lanes: usize,
    /// Inputs, uniform or per lane.
    pub inputs: Vec<CaseInput>,
    /// Evaluate with the protected `sqrt`, `log` and `normalize` (oracle and runtime alike).
    pub protected_ops: bool,
}

impl Case {
    /// The inputs on lane `l`, as the oracle takes them.
    pub fn oracle_inputs(&self, l: usize) -> Vec<(&str, Input)> {
        self.inputs
            .iter()
            .map(|i| {
                let data = i.lane(l).to_vec();
                let v = match i.shape {
                    None => Input::scalar(data[0]),
                    Some(s) => Input {
                        shape: Some(s),
                        data,
                    },
                };
                (i.name.as_str(), v)
            })
            .collect()
    }
}

/// What to generate.
#[derive(Clone, Debug, Default)]
pub struct GenOptions {
    /// Families every program must contain (in addition to those drawn at random).
    pub require: Families,
    /// Run the programs with the artifact's protected `sqrt`, `log` and `normalize`.
    pub protected_ops: bool,
}

/// The random stream of program `index` of `seed`.
pub fn stream(seed: u64, index: u64) -> SplitMix {
    let mut s = SplitMix(seed);
    let base = s.next_u64();
    let mut r = SplitMix(base ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64();
    r
}

/// Program `index` of the stream of `seed`.
pub fn generate(seed: u64, index: u64, options: &GenOptions) -> Case {
    let mut g = core::Gen::new(stream(seed, index));
    let (source, families, lanes, inputs) = g.program(options.require);
    Case {
        seed,
        index,
        source,
        families,
        lanes,
        inputs,
        protected_ops: options.protected_ops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_index_addressed() {
        let o = GenOptions::default();
        let a: Vec<Case> = (0..20).map(|i| generate(3, i, &o)).collect();
        let b: Vec<Case> = (0..20).rev().map(|i| generate(3, i, &o)).collect();
        for (x, y) in a.iter().zip(b.iter().rev()) {
            assert_eq!(x, y);
        }
        assert_ne!(generate(3, 0, &o).source, generate(4, 0, &o).source);
    }

    #[test]
    fn required_families_are_present() {
        for f in Family::ALL {
            let o = GenOptions {
                protected_ops: false,
                require: [f].into_iter().collect(),
            };
            for i in 0..30 {
                let c = generate(11, i, &o);
                assert!(c.families.contains(f), "{f}: {}", c.source);
            }
        }
    }
}
