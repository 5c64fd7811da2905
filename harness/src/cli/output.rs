//! The results of `ndvm run` as JSON, and the number and tensor formatting shared with the text
//! table.

use super::report::Source;
use runtime_cpu::{format_number, LaneValue, Outcome, Shape};
use serde_json::{json, Map, Value};

/// The number type a run computes in.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Precision {
    /// 64-bit floating point.
    #[default]
    F64,
    /// 32-bit floating point (results print as their shortest `f32` decimals).
    F32,
}

impl Precision {
    /// `x` as the shortest decimal that reads back to the same number in this precision (so an
    /// `f32` result 0.1 prints as `0.1`, not as its `f64` expansion `0.10000000149011612`).
    pub fn shorten(self, x: f64) -> f64 {
        match self {
            Precision::F32 if x.is_finite() => (x as f32).to_string().parse().unwrap_or(x),
            _ => x,
        }
    }

    /// A number as text: integers without a fraction, non-finite as `+inf.0`, `-inf.0`, `+nan.0`.
    pub fn number(self, x: f64) -> String {
        format_number(self.shorten(x))
    }

    /// A number, vector or matrix of `shape` as Scheme-style text: `1.5`, `[1 2]`, `[[1 2] [3 4]]`.
    pub fn tensor(self, shape: Shape, data: &[f64]) -> String {
        let row = |xs: &[f64]| {
            let items: Vec<String> = xs.iter().map(|&x| self.number(x)).collect();
            format!("[{}]", items.join(" "))
        };
        match shape {
            Shape::Scalar => self.number(data[0]),
            Shape::Vector(_) => row(data),
            Shape::Matrix(r, c) => {
                let rows: Vec<String> = (0..r as usize)
                    .map(|i| row(&data[i * c as usize..(i + 1) * c as usize]))
                    .collect();
                format!("[{}]", rows.join(" "))
            }
        }
    }

    /// One lane's value as text.
    pub fn value(self, v: &LaneValue) -> String {
        match v {
            LaneValue::Number(x) => self.number(*x),
            LaneValue::Tensor(shape, data) => self.tensor(*shape, data),
            LaneValue::Datum(s) => s.clone(),
        }
    }

    /// A number as JSON: a JSON number, or the string `"inf"`, `"-inf"` or `"nan"`.
    pub fn json_number(self, x: f64) -> Value {
        match serde_json::Number::from_f64(self.shorten(x)) {
            Some(n) => Value::Number(n),
            None if x.is_nan() => "nan".into(),
            None if x > 0.0 => "inf".into(),
            None => "-inf".into(),
        }
    }

    /// A number, vector or matrix as JSON: a number, an array, or an array of rows.
    pub fn json_tensor(self, shape: Shape, data: &[f64]) -> Value {
        let row = |xs: &[f64]| Value::Array(xs.iter().map(|&x| self.json_number(x)).collect());
        match shape {
            Shape::Scalar => self.json_number(data[0]),
            Shape::Vector(_) => row(data),
            Shape::Matrix(r, c) => (0..r as usize)
                .map(|i| row(&data[i * c as usize..(i + 1) * c as usize]))
                .collect(),
        }
    }

    /// One lane's value as JSON; a value that is no number, vector or matrix is its Scheme text.
    pub fn json_value(self, v: &LaneValue) -> Value {
        match v {
            LaneValue::Number(x) => self.json_number(*x),
            LaneValue::Tensor(shape, data) => self.json_tensor(*shape, data),
            LaneValue::Datum(s) => Value::String(s.clone()),
        }
    }
}

/// The whole outcome as `{"lanes", "value", "grad", "grad_sum", "lane_errors"}`: one entry per
/// lane in `value`, in each array of `grad`, and in `lane_errors` (`null` where the lane
/// succeeded; `value` and gradients are `null` where it failed).
pub fn json(outcome: &Outcome, source: &Source<'_>, precision: Precision) -> Value {
    let value: Vec<Value> = outcome
        .values
        .iter()
        .map(|v| v.as_ref().map_or(Value::Null, |v| precision.json_value(v)))
        .collect();
    let lane_errors: Vec<Value> = outcome
        .values
        .iter()
        .map(|v| match v {
            Ok(_) => Value::Null,
            Err(e) => {
                let at = source.location(e);
                json!({
                    "message": e.to_string(),
                    "line": at.map(|a| a.0),
                    "column": at.map(|a| a.1),
                })
            }
        })
        .collect();
    let mut grad = Map::new();
    let mut grad_sum = Map::new();
    for g in &outcome.grads {
        let n = g.shape.len();
        let per_lane: Vec<Value> = outcome
            .values
            .iter()
            .enumerate()
            .map(|(l, v)| match v {
                Ok(_) => precision.json_tensor(g.shape, &g.per_lane[l * n..(l + 1) * n]),
                Err(_) => Value::Null,
            })
            .collect();
        grad.insert(g.name.clone(), Value::Array(per_lane));
        grad_sum.insert(g.name.clone(), precision.json_tensor(g.shape, &g.sum));
    }
    json!({
        "lanes": outcome.lanes,
        "value": value,
        "grad": grad,
        "grad_sum": grad_sum,
        "lane_errors": lane_errors,
    })
}
