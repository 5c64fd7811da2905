//! The generator's state, inputs, program assembly and the scalar arithmetic and math
//! productions.

use super::{CaseInput, Families, Family};
use crate::oracle::Shape;
use crate::SplitMix;

/// A generated expression: its text, a bound on the absolute value of its elements, and for a
/// well-conditioned square matrix a bound on the infinity norm of its inverse.
#[derive(Clone, Debug)]
pub(super) struct E {
    pub s: String,
    pub b: f64,
    pub ib: f64,
}

impl E {
    pub fn new(s: String, b: f64) -> E {
        E {
            s,
            b,
            ib: f64::INFINITY,
        }
    }
}

/// The type of a variable in scope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ty {
    Num,
    Vec(usize),
    Mat(usize),
    /// A proper list of this many numbers.
    List(usize),
}

/// A variable in scope.
#[derive(Clone, Debug)]
pub(super) struct Var {
    pub name: String,
    pub ty: Ty,
    pub b: f64,
    pub ib: f64,
    /// The state of a loop or recursion, updated by a contraction.
    pub state: bool,
}

impl Var {
    pub fn num(name: &str, b: f64) -> Var {
        Var {
            name: name.to_string(),
            ty: Ty::Num,
            b,
            ib: f64::INFINITY,
            state: false,
        }
    }

    /// A number that a loop or recursion updates.
    pub fn state(name: &str, b: f64) -> Var {
        Var {
            state: true,
            ..Var::num(name, b)
        }
    }
}

/// A per-lane scalar input and its lane values (for thresholds that split the lanes).
#[derive(Clone, Debug)]
pub(super) struct Probe {
    pub name: String,
    pub vals: Vec<f64>,
}

/// Largest bound an expression may have before it is scaled down.
pub(super) const BIG: f64 = 30.0;

/// Most times any piece of a program may run: the product of the trip counts of the loops and
/// recursions around it (so that no program comes near the step budget).
pub(super) const WORK: f64 = 1500.0;

pub(super) struct Gen {
    pub rng: SplitMix,
    pub used: Families,
    pub pending: Vec<Family>,
    pub scope: Vec<Var>,
    pub globals: Vec<Var>,
    pub defines: Vec<String>,
    pub counter: u32,
    pub lanes: usize,
    pub probes: Vec<Probe>,
    pub budget: u32,
    /// Shared top-level helpers already defined: (kind, name).
    pub helpers: Vec<(&'static str, String)>,
    /// How many times the expression being generated will run (product of trip counts).
    pub mult: f64,
}

/// A number literal with at most three decimals.
pub(super) fn lit(x: f64) -> String {
    let r = (x * 1000.0).round() / 1000.0;
    if r == 0.0 {
        "0".into()
    } else {
        format!("{r}")
    }
}

impl Gen {
    pub fn new(rng: SplitMix) -> Gen {
        Gen {
            rng,
            used: Families::NONE,
            pending: Vec::new(),
            scope: Vec::new(),
            globals: Vec::new(),
            defines: Vec::new(),
            counter: 0,
            lanes: 1,
            probes: Vec::new(),
            budget: 0,
            helpers: Vec::new(),
            mult: 1.0,
        }
    }

    pub fn unit(&mut self) -> f64 {
        self.rng.uniform(0.0, 1.0)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    pub fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n - 1)
    }

    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        self.rng.uniform(lo, hi)
    }

    /// A literal in `[lo, hi)`, rounded to three decimals.
    pub fn lit_in(&mut self, lo: f64, hi: f64) -> (String, f64) {
        let x = (self.range(lo, hi) * 1000.0).round() / 1000.0;
        (lit(x), x)
    }

    pub fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    pub fn mark(&mut self, f: Family) {
        self.used.insert(f);
    }

    /// The name of the shared helper `kind`, defining it with `text(name)` the first time.
    pub fn helper(&mut self, kind: &'static str, text: impl FnOnce(&str) -> String) -> String {
        if let Some((_, n)) = self.helpers.iter().find(|(k, _)| *k == kind) {
            return n.clone();
        }
        let name = self.fresh("h");
        self.defines.push(text(&name));
        self.helpers.push((kind, name.clone()));
        name
    }

    /// A contraction `(c, k)`: a state updated as `c s + k q` with `|q| <= 1` stays within
    /// `max(|s0|, k / (1 - c))`.
    pub fn contraction(&mut self) -> (f64, f64) {
        let c = [0.3, 0.5, 0.7, 0.8][self.below(4)];
        let k = [0.3, 0.5, 1.0][self.below(3)];
        (c, k)
    }

    /// The slope on the state inside an update `c s + k q(alpha s + z)`: small enough that
    /// the update is a contraction with factor at most `(1 + c) / 2`.
    pub fn slope(c: f64, k: f64) -> f64 {
        (((1.0 - c) / (2.0 * k)) * 100.0).floor().max(1.0) / 100.0
    }

    /// An expression with no state of a loop or recursion in scope.
    pub fn stateless<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let full = self.scope.clone();
        self.scope.retain(|v| !v.state);
        let r = f(self);
        self.scope = full;
        r
    }

    /// The update `c var + k q(alpha var + z)` of a contraction: `q` is bounded by 1 with a
    /// slope at most 1, and `z` does not depend on any loop state, so the state stays within
    /// `max(|s0|, k / (1 - c))` and rounding errors shrink from one step to the next.
    pub fn update(&mut self, var: &str, c: f64, k: f64, d: u32) -> String {
        let z = self.stateless(|g| {
            let z = g.num(d);
            g.tame(z, 4.0)
        });
        let x = format!("(+ (* {} {var}) {})", Self::slope(c, k), z.s);
        let q = match self.below(3) {
            0 => format!("(sin {x})"),
            1 => format!("(cos {x})"),
            _ => format!("(/ {x} (+ 1 (* {x} {x})))"),
        };
        format!("(+ (* {c} {var}) (* {k} {q}))")
    }

    /// Generates with `f` a piece that runs `n` times for each run of the current one.
    pub fn repeat<T>(&mut self, n: f64, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.mult;
        self.mult *= n.max(1.0);
        let r = f(self);
        self.mult = saved;
        r
    }

    /// A trip count of at most `n`, lowered to keep the work under [`WORK`].
    pub fn cap(&self, n: usize) -> usize {
        n.min((WORK / self.mult).max(1.0) as usize)
    }

    /// True when a loop or recursion here could run too often.
    pub fn busy(&self) -> bool {
        self.mult * 10.0 > WORK
    }

    /// Runs `f` with `vars` added to the scope.
    pub fn with<T>(&mut self, vars: Vec<Var>, f: impl FnOnce(&mut Self) -> T) -> T {
        let n = self.scope.len();
        self.scope.extend(vars);
        let r = f(self);
        self.scope.truncate(n);
        r
    }

    /// Runs `f` in a scope of the inputs and `vars` only (the body of a top-level definition).
    pub fn isolated<T>(&mut self, vars: Vec<Var>, f: impl FnOnce(&mut Self) -> T) -> T {
        let mut scope = self.globals.clone();
        scope.extend(vars);
        let saved = std::mem::replace(&mut self.scope, scope);
        let r = f(self);
        self.scope = saved;
        r
    }

    /// Scales `e` down so that its bound is at most `lim`.
    pub fn tame(&mut self, e: E, lim: f64) -> E {
        if e.b <= lim {
            return e;
        }
        let k = nice_down(lim / e.b);
        E::new(format!("(* {} {})", lit(k), e.s), e.b * k)
    }

    /// Draws the inputs and grows the program. Returns text, families, lanes and inputs.
    pub fn program(&mut self, require: Families) -> (String, Families, usize, Vec<CaseInput>) {
        let mut want: Vec<Family> = require.iter().collect();
        // Each family is drawn with its own probability; arithmetic and math come anyway.
        let draw = [
            (Family::Let, 0.22),
            (Family::Lambda, 0.22),
            (Family::Define, 0.2),
            (Family::List, 0.2),
            (Family::Vector, 0.25),
            (Family::Matrix, 0.25),
            (Family::Loop, 0.22),
            (Family::Branch, 0.28),
            (Family::Trip, 0.2),
        ];
        for (f, p) in draw {
            if !want.contains(&f) && self.chance(p) {
                want.push(f);
            }
        }
        let diverge = want.contains(&Family::Branch) || want.contains(&Family::Trip);
        self.lanes = match self.below(20) {
            0 | 1 if !diverge => 1,
            0..=7 => 2 + self.below(3),
            8..=14 => 5 + self.below(4),
            15..=18 => 9 + self.below(8),
            // Lane counts around the kernels' vector widths, and a few wide batches.
            _ => [17, 31, 32, 33, 64, 17, 31, 32, 33, 64, 257, 300][self.below(12)],
        };
        let inputs = self.inputs(&want);
        // Shuffle the wanted families so that their nesting order varies.
        for i in (1..want.len()).rev() {
            let j = self.below(i + 1);
            want.swap(i, j);
        }
        self.pending = want;
        let depth = 2 + self.below(4) as u32;
        self.budget = 14 + self.below(30) as u32;
        self.scope = self.globals.clone();
        let mut e = self.num(depth);
        while let Some(f) = self.pending.pop() {
            let extra = self.family_num(f, 2);
            let (c, _) = self.lit_in(0.3, 1.5);
            e = E::new(
                format!("(+ {} (* {c} {}))", e.s, extra.s),
                e.b + 1.5 * extra.b,
            );
        }
        self.mark(Family::Arith);
        let mut text = String::new();
        for d in &self.defines {
            text.push_str(d);
            text.push('\n');
        }
        text.push_str(&e.s);
        text.push('\n');
        (text, self.used, self.lanes, inputs)
    }

    fn inputs(&mut self, want: &[Family]) -> Vec<CaseInput> {
        let b = self.lanes;
        let mut out = Vec::new();
        let names = ["a", "b", "c", "x"];
        let count = 2 + self.below(3);
        let mut per_lane_any = false;
        for (i, name) in names.iter().take(count).enumerate() {
            let per_lane = b > 1 && (self.chance(0.5) || (i + 1 == count && !per_lane_any));
            per_lane_any |= per_lane;
            let n = if per_lane { b } else { 1 };
            // Now and then exact special values: zeros, ties and integers meet the
            // conventions at kinks (`abs` at 0, `min` on a tie, `pow` at 0).
            let special = self.chance(0.06);
            let data: Vec<f64> = (0..n)
                .map(|_| {
                    if special {
                        [0.0, 1.0, -1.0, 0.5, 2.0, -2.0][self.below(6)]
                    } else {
                        self.range(-2.0, 2.0)
                    }
                })
                .collect();
            if per_lane {
                self.probes.push(Probe {
                    name: name.to_string(),
                    vals: data.clone(),
                });
            }
            self.globals.push(Var::num(name, 2.0));
            out.push(CaseInput {
                name: name.to_string(),
                shape: None,
                per_lane,
                data,
            });
        }
        let tensors = want.contains(&Family::Vector) || want.contains(&Family::Matrix);
        if self.chance(if tensors { 0.6 } else { 0.15 }) {
            let n = 2 + self.below(2);
            let per_lane = b > 1 && self.chance(0.4);
            let lanes = if per_lane { b } else { 1 };
            let data = (0..lanes * n).map(|_| self.range(-1.0, 1.0)).collect();
            self.globals.push(Var {
                name: "v".into(),
                ty: Ty::Vec(n),
                b: 1.0,
                ib: f64::INFINITY,
                state: false,
            });
            out.push(CaseInput {
                name: "v".into(),
                shape: Some(Shape::Vector(n)),
                per_lane,
                data,
            });
        }
        if self.chance(if want.contains(&Family::Matrix) {
            0.6
        } else {
            0.1
        }) {
            let n = 2 + self.below(2);
            let per_lane = b > 1 && self.chance(0.4);
            let lanes = if per_lane { b } else { 1 };
            let mut data = Vec::with_capacity(lanes * n * n);
            for _ in 0..lanes {
                for i in 0..n * n {
                    data.push(if i / n == i % n {
                        self.range(1.5, 2.5)
                    } else {
                        self.range(-0.25, 0.25)
                    });
                }
            }
            // Diagonal >= 1.5, off-diagonal row sums <= 0.5: the inverse has norm <= 1.
            self.globals.push(Var {
                name: "M".into(),
                ty: Ty::Mat(n),
                b: 2.5,
                ib: 1.0,
                state: false,
            });
            out.push(CaseInput {
                name: "M".into(),
                shape: Some(Shape::Matrix(n, n)),
                per_lane,
                data,
            });
        }
        out
    }

    /// A number-valued expression of depth at most `d`.
    pub fn num(&mut self, d: u32) -> E {
        if d >= 1 && !self.pending.is_empty() && !self.busy() && self.chance(0.6) {
            let f = self.pending.pop().expect("not empty");
            return self.family_num(f, d);
        }
        if d == 0 || self.budget == 0 {
            return self.leaf();
        }
        self.budget -= 1;
        let e = match self.below(20) {
            0..=8 => self.arith(d),
            9..=13 => self.math(d),
            14..=15 => self.leaf(),
            _ if self.busy() => self.arith(d),
            _ => {
                let f = self.incidental();
                self.family_num(f, d)
            }
        };
        self.tame(e, BIG)
    }

    /// A family for an unrequested construct, among those the inputs allow.
    fn incidental(&mut self) -> Family {
        let options = [
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
        options[self.below(options.len())]
    }

    /// A number-valued construct of family `f`.
    pub fn family_num(&mut self, f: Family, d: u32) -> E {
        let d = d.max(1);
        let e = match f {
            Family::Arith => self.arith(d),
            Family::Math => self.math(d),
            Family::Let => self.let_num(d),
            Family::Lambda => self.lambda_num(d),
            Family::Define => self.define_num(d),
            Family::List => self.list_num(d),
            Family::Vector => self.vector_num(d),
            Family::Matrix => self.matrix_num(d),
            Family::Loop => self.loop_num(d),
            Family::Branch => self.branch_num(d),
            Family::Trip => self.trip_num(d),
        };
        self.tame(e, BIG)
    }

    /// A variable, a literal, or an element of a tensor or list in scope.
    pub fn leaf(&mut self) -> E {
        let nums: Vec<usize> = (0..self.scope.len())
            .filter(|&i| self.scope[i].ty == Ty::Num)
            .collect();
        let others: Vec<usize> = (0..self.scope.len())
            .filter(|&i| self.scope[i].ty != Ty::Num)
            .collect();
        if !others.is_empty() && self.chance(0.15) {
            let i = self.below(others.len());
            let v = self.scope[others[i]].clone();
            match v.ty {
                Ty::Vec(n) => {
                    self.mark(Family::Vector);
                    let i = self.below(n);
                    return E::new(format!("(ref {} {i})", v.name), v.b);
                }
                Ty::Mat(n) => {
                    self.mark(Family::Matrix);
                    let (i, j) = (self.below(n), self.below(n));
                    return E::new(format!("(ref {} {i} {j})", v.name), v.b);
                }
                Ty::List(n) => {
                    self.mark(Family::List);
                    let mut s = v.name.clone();
                    for _ in 0..self.below(n) {
                        s = format!("(cdr {s})");
                    }
                    return E::new(format!("(car {s})"), v.b);
                }
                Ty::Num => unreachable!("filtered"),
            }
        }
        if !nums.is_empty() && self.chance(0.8) {
            let i = self.below(nums.len());
            let v = &self.scope[nums[i]];
            return E::new(v.name.clone(), v.b);
        }
        let (s, x) = self.lit_in(-2.5, 2.5);
        E::new(s, x.abs())
    }
}

/// A number with two significant digits, at most `x`.
fn nice_down(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    let m = (x / p * 10.0).floor() / 10.0;
    let r = m * p;
    // Round-trip through three decimals must not reach zero.
    if (r * 1000.0).round() == 0.0 {
        0.001
    } else {
        (r * 1000.0).floor().max(1.0) / 1000.0
    }
}
