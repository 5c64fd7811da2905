//! One lane's view of a result value, and its Scheme rendering.

use crate::code::Code;
use crate::heap::Heap;
use crate::mask::Masks;
use crate::payload::Payloads;
use crate::value::Value;
use shared_ir::{Real, Shape};
use std::fmt::Write;

/// The value of a program on one lane.
#[derive(Clone, Debug, PartialEq)]
pub enum LaneValue {
    /// A number.
    Number(f64),
    /// A vector or matrix (row-major data).
    Tensor(Shape, Vec<f64>),
    /// Anything else, rendered in Scheme syntax (`#t`, `(1 2 foo)`, `#<procedure>`).
    Datum(String),
}

impl LaneValue {
    /// The number, if the value is one.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            LaneValue::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// Scheme syntax for the value.
    pub fn to_scheme(&self) -> String {
        match self {
            LaneValue::Number(x) => number(*x),
            LaneValue::Tensor(shape, data) => tensor(*shape, data),
            LaneValue::Datum(s) => s.clone(),
        }
    }
}

/// A number as Scheme text: integers without a fraction, non-finite as `+inf.0`, `-inf.0`,
/// `+nan.0`.
pub fn number(x: f64) -> String {
    if x.is_nan() {
        "+nan.0".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "+inf.0".into()
        } else {
            "-inf.0".into()
        }
    } else {
        format!("{x}")
    }
}

/// A payload number in Scheme syntax, with the shortest digits of its own precision.
fn real<R: Real>(x: R) -> String {
    if x.is_nan() || !x.is_finite() {
        number(x.to_f64())
    } else {
        format!("{x}")
    }
}

fn tensor(shape: Shape, data: &[f64]) -> String {
    let row = |xs: &[f64]| -> String {
        let items: Vec<String> = xs.iter().map(|&x| number(x)).collect();
        format!("[{}]", items.join(" "))
    };
    match shape {
        Shape::Matrix(_, c) if c > 0 => {
            let rows: Vec<String> = data.chunks(c as usize).map(row).collect();
            format!("[{}]", rows.join(" "))
        }
        _ => row(data),
    }
}

/// Reads lane `lane` of `v`.
pub(crate) fn lane_value<R: Real>(
    v: Value,
    lane: usize,
    code: &Code,
    pay: &Payloads<R>,
    masks: &Masks,
    heap: &Heap,
) -> LaneValue {
    match v {
        Value::Num(s) => {
            let info = pay.info(s);
            if info.is_scalar() {
                return LaneValue::Number(pay.col(s, 0).at(lane).to_f64());
            }
            let data: Vec<f64> = (0..info.shape().len())
                .map(|e| pay.col(s, e).at(lane).to_f64())
                .collect();
            LaneValue::Tensor(info.shape(), data)
        }
        _ => {
            let mut out = String::new();
            write_datum(&mut out, v, lane, code, pay, masks, heap);
            LaneValue::Datum(out)
        }
    }
}

fn write_datum<R: Real>(
    out: &mut String,
    v: Value,
    lane: usize,
    code: &Code,
    pay: &Payloads<R>,
    masks: &Masks,
    heap: &Heap,
) {
    match v {
        Value::Nil => out.push_str("()"),
        Value::Bool(b) => out.push_str(if b { "#t" } else { "#f" }),
        Value::LaneBool(m) => out.push_str(if masks.get(m)[lane] { "#t" } else { "#f" }),
        Value::Num(s) => {
            // Numbers inside structure print in the run's precision (f32 shortest digits).
            let info = pay.info(s);
            let items: Vec<String> = (0..info.shape().len())
                .map(|e| real(pay.col(s, e).at(lane)))
                .collect();
            match info.shape() {
                Shape::Scalar => out.push_str(&items[0]),
                Shape::Matrix(_, c) if c > 0 => {
                    let rows: Vec<String> = items
                        .chunks(c as usize)
                        .map(|r| format!("[{}]", r.join(" ")))
                        .collect();
                    let _ = write!(out, "[{}]", rows.join(" "));
                }
                _ => {
                    let _ = write!(out, "[{}]", items.join(" "));
                }
            }
        }
        Value::Sym(s) => out.push_str(&code.symbol_names[s.0 as usize]),
        Value::Closure(c) => {
            let lam = &code.lambdas[heap.closure(c).lambda as usize];
            match lam.name {
                Some(n) => {
                    let _ = write!(out, "#<procedure {}>", code.symbol_names[n.0 as usize]);
                }
                None => out.push_str("#<procedure>"),
            }
        }
        Value::Builtin(b) => {
            let _ = write!(out, "#<procedure {}>", b.name());
        }
        Value::Unassigned => out.push_str("#<unassigned>"),
        Value::Pair(_) => {
            out.push('(');
            let mut cur = v;
            let mut first = true;
            let mut count = 0usize;
            while let Value::Pair(p) = cur {
                if !first {
                    out.push(' ');
                }
                first = false;
                count += 1;
                if count > 10_000 {
                    out.push_str("...");
                    cur = Value::Nil;
                    break;
                }
                let (car, cdr) = heap.pairs[p as usize];
                // Nested lists print recursively; depth is bounded by what the program built.
                let item = stacker::maybe_grow(32 * 1024, 1024 * 1024, || {
                    let mut s = String::new();
                    write_datum(&mut s, car, lane, code, pay, masks, heap);
                    s
                });
                out.push_str(&item);
                cur = cdr;
            }
            if cur != Value::Nil {
                out.push_str(" . ");
                write_datum(out, cur, lane, code, pay, masks, heap);
            }
            out.push(')');
        }
    }
}
