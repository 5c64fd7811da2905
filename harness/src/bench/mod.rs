//! `ndvm bench` experiments: each prints ratios measured in one run against a baseline.

pub mod gpu_ceiling;
pub mod kalman;
pub mod timing;
