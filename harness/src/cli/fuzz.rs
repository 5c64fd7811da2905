//! `ndvm fuzz`.

use clap::Args;
use std::process::ExitCode;

/// Arguments of `ndvm fuzz`.
#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Generator seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
}

/// Runs `ndvm fuzz`.
pub fn main(args: FuzzArgs) -> ExitCode {
    eprintln!("ndvm fuzz --seed {}: not built yet", args.seed);
    ExitCode::FAILURE
}
