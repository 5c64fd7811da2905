//! The gate every GPU test goes through.
//!
//! In CI (the `CI` environment variable is set) a test that finds no adapter fails, so no GPU
//! test is skipped there; elsewhere it prints a note and skips.

use crate::{GpuContext, GpuError};
use std::io::Write;
use std::sync::Arc;

/// True when running in CI.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The shared context for GPU test `test`, or `None` (with a note) where there is no adapter
/// outside CI.
///
/// # Panics
///
/// When there is no usable adapter and `CI` is set.
pub fn gpu_or_skip(test: &str) -> Option<Arc<GpuContext>> {
    match GpuContext::shared() {
        Ok(ctx) => Some(ctx),
        Err(e) => skip_or_fail(test, &e),
    }
}

/// Skips (returns `None`) with a note outside CI; panics with `e` in CI.
///
/// # Panics
///
/// When `CI` is set.
pub fn skip_or_fail<T>(test: &str, e: &GpuError) -> Option<T> {
    if in_ci() {
        panic!("{test}: no usable GPU adapter in CI (the GPU tests must run there): {e}");
    }
    // Straight to stderr, past the test harness's capture, so the skip is always visible.
    let _ = writeln!(
        std::io::stderr(),
        "note: {test} skipped: no usable GPU adapter ({e})"
    );
    None
}
