//! The oracle's arithmetic, math, comparison and list primitives (reference sections 5.1-5.4);
//! the vector and matrix primitives are in `linalg.rs`.

use super::eval::{fail, Interp, Res};
use super::num::Scalar;
use super::syntax::Prim;
use super::value::Value;
use std::rc::Rc;

/// `Type` error text for `what` expecting `wanted` but getting `got`.
pub fn type_err<N: Scalar, T>(what: &str, wanted: &str, got: &Value<N>) -> Res<N, T> {
    fail(format!(
        "Type: `{what}` expects {wanted}, got {}",
        got.kind()
    ))
}

impl<N: Scalar> Interp<'_, N> {
    /// Applies a primitive to evaluated arguments (arity already checked).
    pub fn prim(&self, p: Prim, args: Vec<Value<N>>) -> Res<N> {
        use Prim::*;
        match p {
            Add | Mul => {
                let unit = if p == Add { 0.0 } else { 1.0 };
                let mut it = args.into_iter();
                let Some(mut acc) = it.next() else {
                    return Ok(Value::Num(N::cst(unit)));
                };
                self.numeric(p, &acc)?;
                for b in it {
                    acc = if p == Add {
                        self.zip(p, &acc, &b, |x, y| x + y)?
                    } else {
                        self.zip(p, &acc, &b, |x, y| x * y)?
                    };
                }
                Ok(acc)
            }
            Sub | Div => {
                let mut it = args.into_iter();
                let first = it.next().expect("arity checked");
                let rest: std::vec::Vec<_> = it.collect();
                if rest.is_empty() {
                    return if p == Sub {
                        self.map(p, &first, |x| -x)
                    } else {
                        self.map(p, &first, |x| N::cst(1.0) / x)
                    };
                }
                let mut acc = first;
                for b in &rest {
                    acc = if p == Sub {
                        self.zip(p, &acc, b, |x, y| x - y)?
                    } else {
                        self.zip(p, &acc, b, |x, y| x / y)?
                    };
                }
                Ok(acc)
            }
            Min | Max => {
                let mut it = args.into_iter();
                let mut acc = it.next().expect("arity checked");
                self.numeric(p, &acc)?;
                for b in it {
                    acc = self.zip(p, &acc, &b, |a, b| {
                        self.note(b, a);
                        let take_b = if p == Min {
                            b.val() < a.val()
                        } else {
                            b.val() > a.val()
                        };
                        if take_b {
                            b
                        } else {
                            a
                        }
                    })?;
                }
                Ok(acc)
            }
            Pow | Expt => self.zip(p, &args[0], &args[1], |a, b| a.pow(b)),
            Modulo | Remainder => self.zip(p, &args[0], &args[1], |a, b| {
                let q = a.val() / b.val();
                let k = if p == Modulo { q.floor() } else { q.trunc() };
                // The integer part jumps where a/b crosses an integer. Exactly on a jump, a
                // step of any size may cross it, even where the first derivative of a/b is 0
                // (`(modulo (* c c) 2)` at c = 0). Integers divided by integers (loop
                // counters) are exact and cannot be moved by the inputs.
                let exact = [a.val(), b.val()].iter().all(|t| t.fract() == 0.0)
                    && a.der() == 0.0
                    && b.der() == 0.0;
                if !exact {
                    let dq = (a.der() - q * b.der()) / b.val();
                    let dist = (q - q.round()).abs();
                    let flip = if dist == 0.0 {
                        0.0
                    } else if dq != 0.0 {
                        dist / dq.abs()
                    } else {
                        f64::INFINITY
                    };
                    self.note_raw(flip, dist / (1.0 + q.abs()));
                }
                if b.val() == 0.0 {
                    N::cst(f64::NAN)
                } else {
                    a - b * N::cst(k)
                }
            }),
            Sin => self.map(p, &args[0], N::sin),
            Cos => self.map(p, &args[0], N::cos),
            Exp => self.map(p, &args[0], N::exp),
            Log if self.prog.protected => self.map(p, &args[0], |x| clamp_low(x).ln()),
            Sqrt if self.prog.protected => self.map(p, &args[0], |x| clamp_low(x).sqrt()),
            Log => self.map(p, &args[0], N::ln),
            Sqrt => self.map(p, &args[0], N::sqrt),
            Abs => self.map(p, &args[0], |x| {
                self.note(x, N::cst(0.0));
                x.abs()
            }),
            NumEq | Lt | Gt | Le | Ge => {
                let mut nums = std::vec::Vec::with_capacity(args.len());
                for a in &args {
                    match a {
                        Value::Num(x) => nums.push(*x),
                        other => return type_err(p.name(), "numbers", other),
                    }
                }
                let mut all = true;
                for w in nums.windows(2) {
                    let (a, b) = (w[0], w[1]);
                    self.note(a, b);
                    let (x, y) = (a.val(), b.val());
                    all &= match p {
                        NumEq => x == y,
                        Lt => x < y,
                        Gt => x > y,
                        Le => x <= y,
                        _ => x >= y,
                    };
                }
                Ok(Value::Bool(all))
            }
            Not => Ok(Value::Bool(!args[0].truthy())),
            EqP => Ok(Value::Bool(self.eq(&args[0], &args[1]))),
            Cons => {
                let mut it = args.into_iter();
                let a = it.next().expect("arity checked");
                let d = it.next().expect("arity checked");
                Ok(Value::Pair(Rc::new((a, d))))
            }
            Car | Cdr => match &args[0] {
                Value::Pair(pr) => Ok(if p == Car { pr.0.clone() } else { pr.1.clone() }),
                other => type_err(p.name(), "a pair", other),
            },
            List => {
                let mut v = Value::Nil;
                for x in args.into_iter().rev() {
                    v = Value::Pair(Rc::new((x, v)));
                }
                Ok(v)
            }
            NullP => Ok(Value::Bool(matches!(args[0], Value::Nil))),
            PairP => Ok(Value::Bool(matches!(args[0], Value::Pair(_)))),
            NumberP => Ok(Value::Bool(matches!(args[0], Value::Num(_)))),
            BooleanP => Ok(Value::Bool(matches!(args[0], Value::Bool(_)))),
            SymbolP => Ok(Value::Bool(matches!(args[0], Value::Sym(_)))),
            ProcedureP => Ok(Value::Bool(matches!(
                args[0],
                Value::Closure(_) | Value::Prim(_)
            ))),
            _ => self.tensor_prim(p, args),
        }
    }

    fn eq(&self, a: &Value<N>, b: &Value<N>) -> bool {
        match (a, b) {
            (Value::Num(x), Value::Num(y)) => {
                self.note(*x, *y);
                x.val() == y.val()
            }
            (Value::Tensor(x), Value::Tensor(y)) => Rc::ptr_eq(x, y),
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Sym(x), Value::Sym(y)) => x == y,
            (Value::Nil, Value::Nil) => true,
            (Value::Pair(x), Value::Pair(y)) => Rc::ptr_eq(x, y),
            (Value::Closure(x), Value::Closure(y)) => Rc::ptr_eq(x, y),
            (Value::Prim(x), Value::Prim(y)) => x == y,
            _ => false,
        }
    }

    /// Checks that `v` is a number, vector or matrix.
    fn numeric(&self, p: Prim, v: &Value<N>) -> Res<N, ()> {
        match v {
            Value::Num(_) | Value::Tensor(_) => Ok(()),
            other => type_err(p.name(), "numbers, vectors or matrices", other),
        }
    }

    /// An elementwise unary operation.
    pub fn map(&self, p: Prim, v: &Value<N>, f: impl Fn(N) -> N) -> Res<N> {
        match v {
            Value::Num(x) => Ok(Value::Num(f(*x))),
            Value::Tensor(t) => Ok(Value::tensor(
                t.shape,
                t.data.iter().map(|&x| f(x)).collect(),
            )),
            other => type_err(p.name(), "a number, vector or matrix", other),
        }
    }

    /// An elementwise binary operation; a number broadcasts against a tensor.
    pub fn zip(&self, p: Prim, a: &Value<N>, b: &Value<N>, f: impl Fn(N, N) -> N) -> Res<N> {
        match (a, b) {
            (Value::Num(x), Value::Num(y)) => Ok(Value::Num(f(*x, *y))),
            (Value::Num(x), Value::Tensor(t)) => Ok(Value::tensor(
                t.shape,
                t.data.iter().map(|&y| f(*x, y)).collect(),
            )),
            (Value::Tensor(t), Value::Num(y)) => Ok(Value::tensor(
                t.shape,
                t.data.iter().map(|&x| f(x, *y)).collect(),
            )),
            (Value::Tensor(s), Value::Tensor(t)) => {
                if s.shape != t.shape {
                    return fail(format!(
                        "Shape: `{}`: cannot combine {} with {} elementwise",
                        p.name(),
                        s.shape.describe(),
                        t.shape.describe()
                    ));
                }
                let data = s.data.iter().zip(&t.data).map(|(&x, &y)| f(x, y)).collect();
                Ok(Value::tensor(s.shape, data))
            }
            (Value::Num(_) | Value::Tensor(_), other) | (other, _) => {
                type_err(p.name(), "numbers, vectors or matrices", other)
            }
        }
    }
}

/// The artifact's protection: arguments below 1e-8 become the constant 1e-8 (zero derivative).
pub(super) fn clamp_low<N: Scalar>(x: N) -> N {
    if x.val() < 1e-8 {
        N::cst(1e-8)
    } else {
        x
    }
}
