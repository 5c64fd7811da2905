//! `ndvm bench` experiments: each prints ratios measured in one run against a baseline.

pub mod kalman;
pub mod timing;
