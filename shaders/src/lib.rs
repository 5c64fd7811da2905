//! The WGSL sources of ndvm's GPU kernels, as plain strings.
//!
//! This crate holds shader text and nothing else: `runtime-gpu` compiles these strings into
//! pipelines once per process. Every source is parsed and validated by naga in this crate's
//! unit tests, which need no GPU, so a broken shader fails `cargo test` with a `file:line`
//! message. Each kernel has a CPU twin in `runtime-gpu` written to read like the shader.
//!
//! | shader | entry point | what |
//! | --- | --- | --- |
//! | [`CEILING`] | `main` | the numeric-ceiling kernel: a D-dimensional Kalman filter's NLL per candidate, one workgroup each |
//! | [`EMPTY`] | `main` | a dispatch that does nothing, to measure the fixed cost of a round trip |
//! | [`REGION_FORWARD`], [`REGION_REVERSE`], [`REGION_FORWARD_SHARED`], [`REGION_REVERSE_SHARED`] | `forward`, `reverse`, `forward_shared`, `reverse_shared` | the region interpreter: a region's op records over B lanes, forward and reverse, with one or several invocations per lane |
//!
//! ```
//! let names: Vec<&str> = shaders::ALL.iter().map(|s| s.name).collect();
//! assert_eq!(names[..4], ["ceiling", "empty", "region_forward", "region_reverse"]);
//! assert!(shaders::CEILING.source.contains("@compute"));
//! ```
#![forbid(unsafe_code)]

#[cfg(test)]
mod validate;

/// One WGSL source file and how to compile it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shader {
    /// Short name; also the label of the GPU objects made from it.
    pub name: &'static str,
    /// Path of the source, relative to this crate (for error messages).
    pub path: &'static str,
    /// The WGSL text.
    pub source: &'static str,
    /// The compute entry point.
    pub entry_point: &'static str,
    /// The pipeline-overridable constants and the values the tests validate them with.
    pub overrides: &'static [(&'static str, f64)],
}

/// The numeric-ceiling kernel (`wgsl/ceiling.wgsl`).
///
/// Overrides: `DMAX` (the largest padded state dimension, which sizes two workgroup arrays of
/// `DMAX * DMAX` floats) and `WG` (invocations per workgroup, at least `DMAX / 4`).
pub const CEILING: Shader = Shader {
    name: "ceiling",
    path: "wgsl/ceiling.wgsl",
    source: include_str!("../wgsl/ceiling.wgsl"),
    entry_point: "main",
    overrides: &[("DMAX", 64.0), ("WG", 256.0)],
};

/// The empty kernel (`wgsl/empty.wgsl`), one invocation that does nothing.
pub const EMPTY: Shader = Shader {
    name: "empty",
    path: "wgsl/empty.wgsl",
    source: include_str!("../wgsl/empty.wgsl"),
    entry_point: "main",
    overrides: &[],
};

/// The region interpreter's forward pass (`wgsl/region.wgsl`, entry `forward`): one invocation
/// per lane (`width` 1) runs op records `op_begin..op_end` of a region over the data arena.
pub const REGION_FORWARD: Shader = Shader {
    name: "region_forward",
    path: "wgsl/region.wgsl",
    source: include_str!("../wgsl/region.wgsl"),
    entry_point: "forward",
    overrides: &[("WG", 64.0)],
};

/// The region interpreter's reverse pass (`wgsl/region.wgsl`, entry `reverse`): records
/// `op_end-1` down to `op_begin`, accumulating lane-wide adjoints under each record's mask.
pub const REGION_REVERSE: Shader = Shader {
    name: "region_reverse",
    entry_point: "reverse",
    ..REGION_FORWARD
};

/// The region interpreter's forward pass with `width` > 1 invocations per lane sharing each
/// op (entry `forward_shared`; a barrier after each op).
pub const REGION_FORWARD_SHARED: Shader = Shader {
    name: "region_forward_shared",
    entry_point: "forward_shared",
    ..REGION_FORWARD
};

/// The reverse pass with `width` > 1 invocations per lane (entry `reverse_shared`).
pub const REGION_REVERSE_SHARED: Shader = Shader {
    name: "region_reverse_shared",
    entry_point: "reverse_shared",
    ..REGION_FORWARD
};

/// Every shader of the crate.
pub const ALL: &[Shader] = &[
    CEILING,
    EMPTY,
    REGION_FORWARD,
    REGION_REVERSE,
    REGION_FORWARD_SHARED,
    REGION_REVERSE_SHARED,
];

/// The size of the region interpreter's `Params` block, bytes.
pub const REGION_PARAMS_BYTES: u64 = 32;

/// The binding layout of [`CEILING`]: the uniform parameter block, in WGSL's field order.
///
/// `runtime-gpu` mirrors this as a `#[repr(C)]` bytemuck struct; a test there checks the size.
pub const CEILING_PARAMS_BYTES: u64 = 32;
