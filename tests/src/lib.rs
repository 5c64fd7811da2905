//! Shared helpers for the cross-crate tests: the reference data shipped in `data/`, and the
//! randomized differential tester: an independent [`oracle`], a seeded program generator
//! ([`gen`]), the six gates ([`gates`]), a shrinker ([`shrink`]) and the per-family report
//! ([`report`]).
#![forbid(unsafe_code)]

pub mod divergent;
pub mod driver;
pub mod gates;
pub mod gen;
pub mod oracle;
pub mod refdata;
pub mod report;
pub mod shrink;

pub use refdata::{json_f64, parse_lenient_json, suite, SuiteProgram};

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

    /// Uniform in `(0, 1)`.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
}
