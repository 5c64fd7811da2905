//! Reference data shipped in `data/` (embedded; see `ndvm_check::refdata`).

pub use ndvm_check::refdata::{json_f64, parse_lenient_json, suite, SuiteProgram, SUITE_JSON};

/// The suite's small scalar programs (5 to 15 nodes, no loops or matrices): the paper's
/// "small programs" regime.
pub const SMALL_PROGRAMS: &[&str] = &[
    "scalar_mul_add",
    "michaelis_menten",
    "damped_oscillator",
    "coulomb",
    "arrhenius",
    "power_law",
    "logistic_growth",
    "nested_let",
    "min_max_abs",
];
