//! Shared helpers for the cross-crate tests: the reference data shipped in `data/`, and the
//! randomized differential tester: an independent [`oracle`], a seeded program generator
//! ([`gen`]), the six gates ([`gates`]), a shrinker ([`shrink`]) and the per-family report
//! ([`report`]).
#![forbid(unsafe_code)]

pub mod driver;
pub mod gates;
pub mod gen;
pub mod oracle;
pub mod report;
pub mod shrink;

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

/// One program of the paper's randomized corpus with its stored reference results.
#[derive(Clone, Debug)]
pub struct FuzzRecord {
    /// Corpus id.
    pub id: u64,
    /// Source.
    pub src: String,
    /// Parameter values.
    pub params: Vec<(String, f64)>,
    /// Feature families.
    pub features: Vec<String>,
    /// Reference forward value.
    pub value: f64,
    /// Reference gradients.
    pub grads: Vec<(String, f64)>,
}

/// The 200 programs of `data/fuzz/seed1234_report.json`.
pub fn fuzz_records() -> Vec<FuzzRecord> {
    let text =
        std::fs::read_to_string(data_dir().join("fuzz/seed1234_report.json")).expect("fuzz data");
    let json = parse_lenient_json(&text);
    json["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            let pairs = |v: &Json| -> Vec<(String, f64)> {
                v.as_object()
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), json_f64(v))).collect())
                    .unwrap_or_default()
            };
            FuzzRecord {
                id: r["id"].as_u64().expect("id"),
                src: r["src"].as_str().expect("src").to_string(),
                params: pairs(&r["params"]),
                features: r["features"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|f| f.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                value: json_f64(&r["fwd_oracle"]),
                grads: pairs(&r["grad_oracle"]),
            }
        })
        .collect()
}

/// A small deterministic generator (splitmix64) for reproducible random inputs.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
}
