//! The oracle's boxed values: every number, tensor, pair and closure is its own heap object.

use super::num::Scalar;
use super::syntax::{Lambda, Prim, Sym};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;

/// The shape of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A vector of n numbers.
    Vector(usize),
    /// A rows x cols matrix, row-major.
    Matrix(usize, usize),
}

impl Shape {
    /// Number of elements.
    pub fn len(self) -> usize {
        match self {
            Shape::Vector(n) => n,
            Shape::Matrix(r, c) => r * c,
        }
    }

    /// True when it holds no element.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// As text: `vector of 3`, `2x2 matrix`.
    pub fn describe(self) -> String {
        match self {
            Shape::Vector(n) => format!("a vector of {n}"),
            Shape::Matrix(r, c) => format!("a {r}x{c} matrix"),
        }
    }
}

/// A vector or matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor<N> {
    /// Its shape.
    pub shape: Shape,
    /// Its numbers, row-major.
    pub data: Vec<N>,
}

/// One frame of local bindings; `None` marks a binding whose value does not exist yet.
#[derive(Debug)]
pub struct Frame<N> {
    /// Names bound here.
    pub names: Vec<Sym>,
    /// Their values.
    pub vals: RefCell<Vec<Option<Value<N>>>>,
    /// The enclosing frame.
    pub parent: Env<N>,
}

/// A chain of frames.
pub type Env<N> = Option<Rc<Frame<N>>>;

/// A procedure made by `lambda`, `define` or a named `let`.
#[derive(Debug)]
pub struct Closure<N> {
    /// The code.
    pub lambda: Rc<Lambda>,
    /// The frames it closes over.
    pub env: Env<N>,
}

/// A value.
#[derive(Clone, Debug)]
pub enum Value<N> {
    /// A number.
    Num(N),
    /// A vector or matrix.
    Tensor(Rc<Tensor<N>>),
    /// A boolean.
    Bool(bool),
    /// A symbol.
    Sym(Rc<str>),
    /// The empty list.
    Nil,
    /// A pair.
    Pair(Rc<(Value<N>, Value<N>)>),
    /// A closure.
    Closure(Rc<Closure<N>>),
    /// A primitive used as a value.
    Prim(Prim),
}

impl<N: Scalar> Value<N> {
    /// A tensor value.
    pub fn tensor(shape: Shape, data: Vec<N>) -> Value<N> {
        Value::Tensor(Rc::new(Tensor { shape, data }))
    }

    /// True for every value but `#f`.
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Bool(false))
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> String {
        match self {
            Value::Num(_) => "a number".into(),
            Value::Tensor(t) => t.shape.describe(),
            Value::Bool(_) => "a boolean".into(),
            Value::Sym(_) => "a symbol".into(),
            Value::Nil => "the empty list".into(),
            Value::Pair(_) => "a pair".into(),
            Value::Closure(_) | Value::Prim(_) => "a procedure".into(),
        }
    }

    /// Scheme text for the value, numbers in `f64` shortest form.
    pub fn to_scheme(&self, names: &[Rc<str>]) -> String {
        let mut s = String::new();
        self.write(&mut s, names);
        s
    }

    fn write(&self, s: &mut String, names: &[Rc<str>]) {
        match self {
            Value::Num(x) => s.push_str(&scheme_number(x.val())),
            Value::Tensor(t) => write_tensor(s, t),
            Value::Bool(b) => s.push_str(if *b { "#t" } else { "#f" }),
            Value::Sym(n) => s.push_str(n),
            Value::Nil => s.push_str("()"),
            Value::Pair(_) => {
                s.push('(');
                let mut cur = self.clone();
                let mut first = true;
                loop {
                    match cur {
                        Value::Pair(p) => {
                            if !first {
                                s.push(' ');
                            }
                            first = false;
                            p.0.write(s, names);
                            cur = p.1.clone();
                        }
                        Value::Nil => break,
                        other => {
                            s.push_str(" . ");
                            other.write(s, names);
                            break;
                        }
                    }
                }
                s.push(')');
            }
            Value::Closure(c) => match c.lambda.name {
                Some(n) => {
                    let _ = write!(s, "#<procedure {}>", names[n as usize]);
                }
                None => s.push_str("#<procedure>"),
            },
            Value::Prim(p) => {
                let _ = write!(s, "#<procedure {}>", p.name());
            }
        }
    }
}

fn write_tensor<N: Scalar>(s: &mut String, t: &Tensor<N>) {
    let data: Vec<f64> = t.data.iter().map(|x| x.val()).collect();
    s.push_str(&scheme_tensor(t.shape, &data));
}

/// A vector or matrix as Scheme prints it: `[1 2]`, `[[1 2] [3 4]]`.
pub fn scheme_tensor(shape: Shape, data: &[f64]) -> String {
    let row = |xs: &[f64]| {
        let items: Vec<String> = xs.iter().map(|&x| scheme_number(x)).collect();
        format!("[{}]", items.join(" "))
    };
    match shape {
        Shape::Vector(_) => row(data),
        Shape::Matrix(r, c) => {
            let rows: Vec<String> = (0..r).map(|i| row(&data[i * c..(i + 1) * c])).collect();
            format!("[{}]", rows.join(" "))
        }
    }
}

/// A number as Scheme prints it: `2`, `0.5`, `+inf.0`, `-inf.0`, `+nan.0`.
pub fn scheme_number(x: f64) -> String {
    if x.is_nan() {
        "+nan.0".into()
    } else if x == f64::INFINITY {
        "+inf.0".into()
    } else if x == f64::NEG_INFINITY {
        "-inf.0".into()
    } else {
        format!("{x}")
    }
}
