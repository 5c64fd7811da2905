//! `ndvm`: run, differentiate and benchmark programs of the object language.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use harness::cli;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ndvm",
    version,
    about = "Differentiate the evaluator, not the program: exact batched gradients of programs kept as data"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a program, optionally with gradients, on one or many lanes.
    Run(cli::run::RunArgs),
    /// Assemble and run a program of the stack bytecode VM, a second front end on the runtime.
    Vm(cli::vm::VmArgs),
    /// Run a benchmark experiment and print ratios measured in one run.
    Bench(cli::bench_cmd::BenchArgs),
    /// Randomized differential testing against the independent oracle.
    Fuzz(cli::fuzz::FuzzArgs),
    /// Fit a program's parameters to data, or to minimise its own value.
    Calibrate(cli::calibrate::CalibrateArgs),
    /// Discover programs and their constants from a CSV of measurements.
    Search(Box<cli::search::SearchArgs>),
    /// Replay a stream of candidate programs through calibration under a budget.
    Cosearch(cli::cosearch::CosearchArgs),
    /// Write a program as NumPy, JAX, PyTorch or sympy code, or as LaTeX.
    Export(cli::export::ExportArgs),
    /// The GPU adapters found, the one in use and why, its limits and measured dispatch costs.
    Devices(cli::devices::DevicesArgs),
}

fn main() -> ExitCode {
    // Warnings (a GPU that `auto` could not use, a region run on the CPU) by default;
    // RUST_LOG=info shows the measured costs and the device's decisions.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Run(args) => cli::run::main(args),
        Command::Vm(args) => cli::vm::main(args),
        Command::Bench(args) => cli::bench_cmd::main(args),
        Command::Fuzz(args) => cli::fuzz::main(args),
        Command::Calibrate(args) => cli::calibrate::main(args),
        Command::Search(mut args) => {
            // The flags given on the command line (not defaults): `--resume` refuses those
            // that would change the checkpoint's settings.
            if let Some((_, sub)) = matches.subcommand() {
                args.given = sub
                    .ids()
                    .filter(|id| {
                        sub.value_source(id.as_str())
                            == Some(clap::parser::ValueSource::CommandLine)
                    })
                    .map(|id| id.as_str().to_string())
                    .collect();
            }
            cli::search::main(*args)
        }
        Command::Cosearch(args) => cli::cosearch::main(args),
        Command::Export(args) => cli::export::main(args),
        Command::Devices(args) => cli::devices::main(args),
    }
}
