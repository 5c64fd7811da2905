//! A small deterministic random generator (splitmix64) for reproducible draws, shared with the
//! tests (`ndvm_tests::SplitMix`).

pub use ndvm_tests::SplitMix;
