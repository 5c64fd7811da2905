//! Shared helpers for the cross-crate tests: the reference data shipped in `data/`.

use runtime_cpu::{Bindings, Tensor};
use serde_json::Value as Json;
use std::path::PathBuf;

/// The repository's `data/` folder.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("data")
}

/// Parses JSON that may contain the bare `NaN`, `Infinity` and `-Infinity` Python writes.
pub fn parse_lenient_json(text: &str) -> Json {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let replaced = [
            ("-Infinity", "\"-inf\""),
            ("Infinity", "\"inf\""),
            ("NaN", "\"nan\""),
        ]
        .iter()
        .find(|(k, _)| rest.starts_with(k));
        if let Some((k, v)) = replaced {
            out.push_str(v);
            i += k.len();
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        i += 1;
    }
    serde_json::from_str(&out).expect("reference data is valid JSON")
}

/// A JSON number, or the strings `inf`, `-inf`, `nan` written for non-finite numbers.
pub fn json_f64(v: &Json) -> f64 {
    match v {
        Json::Number(n) => n.as_f64().expect("finite"),
        Json::String(s) if s == "inf" => f64::INFINITY,
        Json::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Json::String(s) if s == "nan" => f64::NAN,
        other => panic!("not a number: {other}"),
    }
}

/// One conformance program of `data/suite/oracle_refs.json`.
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
    /// Bindings of the program's inputs, uniform across lanes.
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

/// The 34 conformance programs.
pub fn suite() -> Vec<SuiteProgram> {
    let text =
        std::fs::read_to_string(data_dir().join("suite/oracle_refs.json")).expect("suite data");
    let json = parse_lenient_json(&text);
    json["programs"]
        .as_array()
        .expect("programs")
        .iter()
        .map(|p| {
            let scalars = p["scalars"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), json_f64(v))).collect())
                .unwrap_or_default();
            let matrix = p["matrix"].as_object().map(|m| {
                (
                    m["name"].as_str().expect("name").to_string(),
                    m["rows"].as_u64().expect("rows") as usize,
                    m["cols"].as_u64().expect("cols") as usize,
                    m["data"]
                        .as_array()
                        .expect("data")
                        .iter()
                        .map(json_f64)
                        .collect(),
                )
            });
            let grads = p["grads"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), json_f64(v))).collect())
                .unwrap_or_default();
            SuiteProgram {
                name: p["name"].as_str().expect("name").to_string(),
                src: p["src"].as_str().expect("src").to_string(),
                scalars,
                matrix,
                value: p.get("oracle_result").map(json_f64),
                grads,
            }
        })
        .collect()
}

/// `|a - b| <= tol (1 + |b|)`, with equal non-finite values accepted.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    if a.is_nan() && b.is_nan() {
        return true;
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= tol * (1.0 + b.abs())
}
