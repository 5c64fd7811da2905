//! Integration tests of `runtime-gpu`.
//!
//! | module | needs a device | what |
//! | --- | --- | --- |
//! | `reference` | no | an independent, straightforward f64 Kalman filter |
//! | `twin` | no | the CPU twin against the reference, in f64 and f32; its loop-visit counts against the plan |
//! | `gpu_ceiling` | yes | the kernel against its twin at every D, the loop cap, batches, limits |
//! | `context` | some | one shared context, cached pipelines, pooled buffers, costs, no adapter, a lost device |
//! | `region` | yes | the region device's limits |
//!
//! Tests that need a device take it from `runtime_gpu::testing::gpu_or_skip`: without an
//! adapter they skip with a note, except in CI (`CI` set), where they fail.

mod context;
mod gpu_ceiling;
mod reference;
mod region;
mod twin;

/// The acceptance tolerance of the GPU kernel (f32) against its CPU twin (f32), relative.
pub const GPU_VS_TWIN_REL: f64 = 2e-3;

/// The f64 twin against the independent f64 reference, relative (same math, other order).
pub const TWIN_VS_REFERENCE_REL: f64 = 1e-10;

/// The f32 twin against the f64 twin, relative (rounding of an 80-step recursion in f32).
pub const TWIN_F32_VS_F64_REL: f64 = 1e-5;

/// The largest `|a - b| / max(|b|, 1e-30)` over two equally long slices.
pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if x.is_finite() && y.is_finite() {
                (x - y).abs() / y.abs().max(1e-30)
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
}
