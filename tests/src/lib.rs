//! Shared helpers for the cross-crate tests: the repository's `data/` folder, a tolerance
//! check ([`close`]), the paper's randomized corpus ([`fuzz_records`]) and programs whose lanes
//! take different paths ([`divergent`]).
//!
//! The oracle, the program generator, the gates, the fuzz driver, the shrinker, the report,
//! the reference data and [`SplitMix`] live in `ndvm-check` (`check/`), which the command-line
//! program depends on too; they are re-exported here under their old paths.
#![forbid(unsafe_code)]

pub mod devices;
pub mod divergent;

pub use ndvm_check::{driver, gates, gen, oracle, refdata, report, shrink};
pub use ndvm_check::{json_f64, parse_lenient_json, suite, SplitMix, SuiteProgram};

use serde_json::Value as Json;
use std::path::PathBuf;

/// The repository's `data/` folder.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("data")
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
    let json = parse_lenient_json(&text).expect("the fuzz report is valid JSON");
    json["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            let pairs = |v: &Json| -> Vec<(String, f64)> {
                v.as_object()
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), num(v))).collect())
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
                value: num(&r["fwd_oracle"]),
                grads: pairs(&r["grad_oracle"]),
            }
        })
        .collect()
}

fn num(v: &Json) -> f64 {
    json_f64(v).unwrap_or_else(|| panic!("not a number: {v}"))
}
