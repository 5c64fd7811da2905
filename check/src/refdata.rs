//! Reference data shipped in `data/`: the conformance suite, embedded so that the tests and the
//! benchmarks (`ndvm bench`) run from any directory, and the JSON helpers for the artifact's
//! files (which hold Python's bare `NaN` and `Infinity`).

use runtime_cpu::{Bindings, Tensor};
use serde_json::Value as Json;

/// `data/suite/oracle_refs.json`.
pub const SUITE_JSON: &str = include_str!("../../data/suite/oracle_refs.json");

/// Parses JSON that may contain the bare `NaN`, `Infinity` and `-Infinity` Python writes; they
/// become the strings `"nan"`, `"inf"`, `"-inf"` (see [`json_f64`]).
pub fn parse_lenient_json(text: &str) -> serde_json::Result<Json> {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let replaced = [
            ("-Infinity", "\"-inf\""),
            ("Infinity", "\"inf\""),
            ("NaN", "\"nan\""),
        ]
        .iter()
        .find(|(k, _)| rest.starts_with(k));
        if let Some((k, v)) = replaced {
            out.push_str(v);
            rest = &rest[k.len()..];
            continue;
        }
        in_string = c == '"';
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    serde_json::from_str(&out)
}

/// A JSON number, or the strings `inf`, `-inf`, `nan` standing for non-finite numbers.
pub fn json_f64(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) if s == "inf" => Some(f64::INFINITY),
        Json::String(s) if s == "-inf" => Some(f64::NEG_INFINITY),
        Json::String(s) if s == "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// One conformance program with its reference results.
#[derive(Clone, Debug)]
pub struct SuiteProgram {
    /// Its name.
    pub name: String,
    /// Its source.
    pub src: String,
    /// Scalar inputs.
    pub scalars: Vec<(String, f64)>,
    /// A matrix input, if any: name, rows, cols, row-major data.
    pub matrix: Option<(String, usize, usize, Vec<f64>)>,
    /// Reference value (None where the reference backend failed).
    pub value: Option<f64>,
    /// Reference gradients.
    pub grads: Vec<(String, f64)>,
}

impl SuiteProgram {
    /// Bindings of the program's inputs, the same on every lane.
    pub fn bindings(&self) -> Bindings {
        let mut b = Bindings::new();
        for (n, x) in &self.scalars {
            b = b.scalar(n, *x);
        }
        if let Some((n, r, c, d)) = &self.matrix {
            b = b.uniform(n, Tensor::matrix(*r, *c, d.clone()).expect("well-formed"));
        }
        b
    }
}

fn pairs(v: &Json) -> Vec<(String, f64)> {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_f64(v)?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The conformance programs.
pub fn suite() -> Vec<SuiteProgram> {
    let json = parse_lenient_json(SUITE_JSON).expect("the embedded suite is valid");
    json["programs"]
        .as_array()
        .expect("programs")
        .iter()
        .map(|p| {
            let matrix = p["matrix"].as_object().map(|m| {
                (
                    m["name"].as_str().expect("name").to_string(),
                    m["rows"].as_u64().expect("rows") as usize,
                    m["cols"].as_u64().expect("cols") as usize,
                    m["data"]
                        .as_array()
                        .expect("data")
                        .iter()
                        .filter_map(json_f64)
                        .collect(),
                )
            });
            SuiteProgram {
                name: p["name"].as_str().expect("name").to_string(),
                src: p["src"].as_str().expect("src").to_string(),
                scalars: pairs(&p["scalars"]),
                matrix,
                value: p.get("oracle_result").and_then(json_f64),
                grads: pairs(&p["grads"]),
            }
        })
        .collect()
}
