//! A small deterministic random generator (splitmix64) for reproducible draws, shared with the
//! program generator and the tests (`ndvm_check::SplitMix`).

pub use ndvm_check::SplitMix;
