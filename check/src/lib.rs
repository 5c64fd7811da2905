//! The randomized differential tester of the runtime, kept apart from the test suite so that
//! the command-line program (`ndvm fuzz`, `ndvm bench decompose`) can use it.
//!
//! An independent [`oracle`] interpreter, a seeded program generator ([`gen`]), the six gates
//! that compare the runtime with the oracle ([`gates`]), the driver that runs them over many
//! programs ([`driver`]), a shrinker ([`shrink`]) and the per-family report ([`report`]), with
//! the reference data shipped in `data/` ([`refdata`]) and a small seeded random generator
//! ([`SplitMix`]).
//!
//! | file | what |
//! | --- | --- |
//! | `oracle/` | the independent oracle: its own reader, boxed values, recursion, dual numbers |
//! | `gen/` | the seeded generator of well-typed programs from every family of the language |
//! | `gates/` | the six gates (G1-G6) and their tolerances |
//! | `driver.rs` | the gates over a range of generated programs on several threads |
//! | `shrink.rs` | a failing program shrunk to a small one that fails the same gate |
//! | `report.rs` | the results per feature family, as text or JSON |
//! | `refdata.rs` | the conformance suite (embedded) and JSON helpers for the artifact's files |
//! | `rng.rs` | [`SplitMix`], splitmix64 |
#![forbid(unsafe_code)]

pub mod driver;
pub mod gates;
pub mod gen;
pub mod oracle;
pub mod refdata;
pub mod report;
mod rng;
pub mod shrink;

pub use refdata::{json_f64, parse_lenient_json, suite, SuiteProgram};
pub use rng::SplitMix;
