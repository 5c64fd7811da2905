//! Every tolerance of the six gates, in one place.
//!
//! A comparison `|got - want| <= RTOL * (1 + |want|)` is written `close(got, want, RTOL)`.

/// G1: a lane's value from the runtime against the oracle's (both `f64`, different algorithms:
/// LU against closed forms, other summation orders).
pub const G1_RTOL: f64 = 1e-9;

/// G2: a gradient element from the runtime's reverse tape against the oracle's forward-mode
/// dual numbers, scaled by `1 + |want| + |value|` (a gradient is computed from intermediate
/// quantities of the size of the value).
pub const G2_RTOL: f64 = 1e-8;

/// G3: the finite-difference step for an input element `x` is `G3_STEP * max(1, |x|)`.
pub const G3_STEP: f64 = 1e-5;

/// G3: the Richardson-extrapolated central difference `(4 D(h) - D(2h)) / 3` against the
/// runtime's gradient: `|fd - g| <= G3_RTOL (1 + |g| + |value|) + G3_EST * |D(h) - D(2h)|`, the
/// second term being an estimate of the difference's own error.
pub const G3_RTOL: f64 = 1e-6;

/// G3: weight of the finite difference's own error estimate.
pub const G3_EST: f64 = 10.0;

/// G3: a lane and input element are left out when a step of `G3_FLIP_SAFETY * 2h` along the
/// element could change a decision of the program (a branch, a loop exit, `min`, `abs`), as
/// the oracle's dual numbers measure it: there the function is not differentiable at the
/// scale of the difference.
pub const G3_FLIP_SAFETY: f64 = 20.0;

/// G4: a lane's gradient in a batched run against a run of that lane alone (or in a block),
/// scaled like G2. Values must be byte-identical; gradients may differ in the last bits,
/// because where a divergent branch merges the lanes, adjoints reach an input through the
/// merged value and are added up in another order than when the lane runs alone. G5 always
/// compares bit patterns.
pub const G4_GRAD_RTOL: f64 = 1e-12;

/// G5: lanes per block handed to a worker.
pub const G5_BLOCK: usize = 3;

/// G5: the worker-thread counts compared.
pub const G5_THREADS: [usize; 3] = [1, 2, 8];

/// Cross-device: a value or gradient element of an `f32` run whose numeric regions ran on the
/// GPU, against the same `f32` run on the CPU, `close(gpu, cpu, DEVICE_RTOL)`. The two differ in
/// the rounding of `sin`, `cos`, `exp`, `log` and `pow`, and in the algorithm behind `det`,
/// `inv` and `solve` above 2x2 (Gauss-Jordan against LU).
pub const DEVICE_RTOL: f64 = 2e-3;

/// G6: an `f32` run against the `f64` run, values and gradients, scaled like G2.
pub const G6_RTOL: f64 = 2e-3;

/// G6: lanes whose closest decision is within this relative margin (see
/// [`Margins::rel`](crate::oracle::eval::Margins)) may legitimately branch differently in `f32`,
/// and are left out.
pub const G6_MARGIN: f64 = 1e-3;

/// G1, G2: lanes whose closest decision is within this relative margin may branch differently
/// between two correct `f64` evaluations (rounding), and are left out.
pub const TIE_MARGIN: f64 = 1e-9;

/// The step budget of every runtime run of the gates (generated programs need far fewer).
pub const MAX_STEPS: u64 = 5_000_000;

/// `|got - want| <= rtol * scale`, with equal non-finite values accepted.
pub fn within(got: f64, want: f64, rtol: f64, scale: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= rtol * scale
}
