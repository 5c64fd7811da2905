//! An independent oracle for the ndvm language.
//!
//! A deliberately simple evaluator written from `docs/language.md` alone, sharing no code with
//! `runtime-cpu`: its own reader ([`reader`]), its own analysis of special forms and names
//! ([`syntax`]), boxed values ([`value`]), plain recursion ([`eval`]) over one lane at a time,
//! `f64` numbers, and gradients by **forward-mode dual numbers** ([`num::Dual`]): one dual pass
//! per element of each input, a method independent of the runtime's reverse tape.
//!
//! It is also the "boxed native interpreter" baseline: [`Oracle::eval`] runs a program with
//! plain `f64` numbers and nothing else.
//!
//! Known difference: closures capture their environment by reference, so in the corner the
//! reference's `letrec` note describes (an init calling an earlier closure that reads a later
//! binding) the oracle returns a value where the runtime raises `UsedBeforeDefinition`.
//!
//! ```
//! use ndvm_check::oracle::{Input, Oracle, Output};
//! let o = Oracle::parse("(* a (exp (- (* b x))))").unwrap();
//! let inputs = [("a", Input::scalar(2.0)), ("b", Input::scalar(0.5)), ("x", Input::scalar(1.0))];
//! let g = o.gradient(&inputs).unwrap();
//! assert_eq!(g.value, Output::Number(2.0 * (-0.5f64).exp()));
//! assert!((g.grads[0][0] - (-0.5f64).exp()).abs() < 1e-15);
//! ```

pub mod eval;
mod linalg;
pub mod num;
mod prim;
mod prims;
pub mod reader;
pub mod syntax;
pub mod value;

use eval::Interp;
use num::{Dual, Scalar};
use syntax::Analysed;
pub use value::Shape;
use value::Value;

/// The value of one input on one lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// `None` for a number, else the tensor's shape.
    pub shape: Option<Shape>,
    /// The numbers, row-major.
    pub data: Vec<f64>,
}

impl Input {
    /// A number.
    pub fn scalar(x: f64) -> Input {
        Input {
            shape: None,
            data: vec![x],
        }
    }

    /// A vector.
    pub fn vector(data: Vec<f64>) -> Input {
        Input {
            shape: Some(Shape::Vector(data.len())),
            data,
        }
    }

    /// A matrix, row-major.
    pub fn matrix(rows: usize, cols: usize, data: Vec<f64>) -> Input {
        assert_eq!(rows * cols, data.len(), "a {rows}x{cols} matrix");
        Input {
            shape: Some(Shape::Matrix(rows, cols)),
            data,
        }
    }

    fn value<N: Scalar>(&self, direction: Option<usize>) -> Value<N> {
        let num = |i: usize, x: f64| {
            if direction == Some(i) {
                N::var(x)
            } else {
                N::cst(x)
            }
        };
        match self.shape {
            None => Value::Num(num(0, self.data[0])),
            Some(s) => Value::tensor(
                s,
                self.data
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| num(i, x))
                    .collect(),
            ),
        }
    }
}

/// A lane's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// A number.
    Number(f64),
    /// A vector or matrix.
    Tensor(Shape, Vec<f64>),
    /// Anything else, in Scheme syntax.
    Other(String),
}

/// The value of a program on one lane with its gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneGradient {
    /// The value.
    pub value: Output,
    /// For each input (in [`Oracle::inputs`] order), d value / d element, row-major.
    pub grads: Vec<Vec<f64>>,
    /// For each input element, the smallest change of that element that would flip a decision
    /// of the program (a branch, `min`, `abs`, ...), to first order; infinite when none depends
    /// on it.
    pub flips: Vec<Vec<f64>>,
    /// The smallest relative margin of any decision (see [`eval::Margins::rel`]).
    pub rel_margin: f64,
}

/// A program analysed by the oracle.
#[derive(Debug)]
pub struct Oracle {
    prog: Analysed,
    inputs: Vec<String>,
}

impl Oracle {
    /// Reads and analyses `source`; errors as `Kind: message`.
    pub fn parse(source: &str) -> Result<Oracle, String> {
        Oracle::parse_with(source, false)
    }

    /// Like [`Oracle::parse`]; with `protected`, `sqrt`, `log` and `normalize` clamp their
    /// argument (the norm, for `normalize`) to at least 1e-8, with a zero derivative below.
    pub fn parse_with(source: &str, protected: bool) -> Result<Oracle, String> {
        let forms = reader::read_all(source).map_err(|e| format!("Read: {e}"))?;
        let mut prog = syntax::analyse(&forms)?;
        prog.protected = protected;
        let inputs = prog
            .inputs
            .iter()
            .map(|&s| prog.names[s as usize].to_string())
            .collect();
        Ok(Oracle { prog, inputs })
    }

    /// The inputs (free names) in order of first use.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn bind<N: Scalar>(
        &self,
        inputs: &[(&str, Input)],
        direction: Option<(usize, usize)>,
    ) -> Vec<Option<Value<N>>> {
        let mut slots = vec![None; self.prog.globals];
        for (k, &s) in self.prog.inputs.iter().enumerate() {
            let name = &self.inputs[k];
            if let Some((_, v)) = inputs.iter().find(|(n, _)| n == name) {
                let dir = direction.and_then(|(i, e)| (i == k).then_some(e));
                slots[s as usize] = Some(v.value::<N>(dir));
            }
        }
        slots
    }

    fn output<N: Scalar>(&self, v: &Value<N>) -> Output {
        match v {
            Value::Num(x) => Output::Number(x.val()),
            Value::Tensor(t) => Output::Tensor(t.shape, t.data.iter().map(|x| x.val()).collect()),
            other => Output::Other(other.to_scheme(&self.prog.names)),
        }
    }

    /// Runs the program on one lane with plain `f64` numbers.
    pub fn eval(&self, inputs: &[(&str, Input)]) -> Result<Output, String> {
        let it = Interp::<f64>::new(&self.prog, self.bind(inputs, None));
        it.run().map(|v| self.output(&v))
    }

    /// Runs the program on one lane and differentiates its value (which must be a number) with
    /// respect to every element of every bound input, one dual pass per element.
    pub fn gradient(&self, inputs: &[(&str, Input)]) -> Result<LaneGradient, String> {
        let sizes: Vec<usize> = self
            .inputs
            .iter()
            .map(|n| {
                inputs
                    .iter()
                    .find(|(m, _)| m == n)
                    .map_or(0, |(_, v)| v.data.len())
            })
            .collect();
        let mut grads: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
        let mut flips: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![f64::INFINITY; n]).collect();
        let mut first: Option<(Output, f64)> = None;
        let directions: Vec<Option<(usize, usize)>> = if sizes.iter().all(|&n| n == 0) {
            vec![None]
        } else {
            (0..sizes.len())
                .flat_map(|i| (0..sizes[i]).map(move |e| Some((i, e))))
                .collect()
        };
        for dir in directions {
            let it = Interp::<Dual>::new(&self.prog, self.bind(inputs, dir));
            let v = it.run()?;
            let Value::Num(y) = v else {
                return Err(format!("NotDifferentiable: the value is {}", v.kind()));
            };
            let m = it.margins();
            if first.is_none() {
                first = Some((self.output(&v), m.rel));
            }
            if let Some((i, e)) = dir {
                grads[i][e] = y.d;
                flips[i][e] = m.flip;
            }
        }
        let (value, rel_margin) = first.expect("at least one pass");
        Ok(LaneGradient {
            value,
            grads,
            flips,
            rel_margin,
        })
    }
}
