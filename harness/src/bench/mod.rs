//! `ndvm bench` experiments: each prints ratios measured in one run against a baseline.

pub mod auto;
pub mod decompose;
pub mod decompose_report;
pub mod gpu_ceiling;
pub mod gpu_regions;
pub mod kalman;
pub mod ode_fit;
pub mod timing;
