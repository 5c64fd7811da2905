//! `ndvm run`: evaluate a program on one or many lanes, optionally with exact gradients.
//!
//! Exit codes: 0 on success (also when only some lanes fail), 1 for an error of the program
//! (reading, decoding, an unbound input, or an error met by every lane), 2 for a usage or IO
//! error (bad arguments, a missing or malformed input file, an unknown `--grad` name).

use super::inputs::{parse_bind, read_bindings, BindArg};
use super::output::{json, Precision};
use super::report::Source;
use super::table;
use crate::device::{self, Attach};
use clap::{Args, ValueEnum};
use runtime_cpu::{
    Bindings, DecodeOptions, Error, GradSpec, Limits, Outcome, Program, RunOptions, Session,
};
use runtime_gpu::DeviceChoice;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How results are printed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: `value: ...` lines for one lane, a table for many.
    #[default]
    Text,
    /// `{"lanes", "value", "grad", "grad_sum", "lane_errors"}`, one entry per lane.
    Json,
}

/// Arguments of `ndvm run`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    ndvm run prog.scm --bind alpha=2 --bind x=1.5 --grad\n  \
    ndvm run examples/kalman2d_T80.scm --bind q=0.05 --bind r=0.1 \
    --bind obs=@examples/kalman2d_obs.csv --grad q,r\n  \
    ndvm run prog.scm --lanes inputs.csv --grad=a --format json\n  \
    ndvm run prog.scm --lanes inputs.csv --grad --precision f32 --device gpu\n\n\
    Exit status: 0 on success (also when only some lanes fail), 1 for an error in the \
    program, 2 for a usage or file error.")]
pub struct RunArgs {
    /// The program file (a Scheme subset with vectors and matrices).
    #[arg(value_name = "PROGRAM.scm")]
    pub program: PathBuf,

    /// Binds an input on every lane: NAME=NUMBER, NAME=[1,2,3] for a vector, or NAME=@FILE.csv
    /// for a matrix read from a CSV file of numbers (no header needed; one row or one column
    /// still makes a matrix).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = parse_bind)]
    pub binds: Vec<BindArg>,

    /// Binds inputs per lane from a CSV file: a header row of input names, then one row per
    /// lane.
    #[arg(long, value_name = "FILE.csv")]
    pub lanes: Option<PathBuf>,

    /// Differentiates the value with respect to these inputs, or every input when no names
    /// are given (write `--grad=a,b`, or `--grad` after the program file).
    #[arg(long, value_name = "NAME,...", num_args = 0..=1, value_delimiter = ',')]
    pub grad: Option<Vec<String>>,

    /// The number type to compute in.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,

    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// `sqrt`, `log` and `normalize` clamp their argument to at least 1e-8, like the paper's
    /// artifact runtime (to replay its results).
    #[arg(long)]
    pub protected_ops: bool,

    /// Node visits allowed before the run fails.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_steps)]
    pub max_steps: u64,

    /// Nested evaluations allowed before the run fails.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_depth)]
    pub max_depth: u32,

    /// Payload memory allowed, in MB, before the run fails.
    #[arg(long, value_name = "N", default_value_t = (Limits::default().max_memory >> 20) as u64)]
    pub max_memory_mb: u64,

    /// Lanes walked together; larger batches are cut into blocks of N (0: all in one walk).
    /// Results do not depend on it. Default: 256 on the CPU, one walk when regions run on the
    /// GPU.
    #[arg(long, value_name = "N")]
    pub lane_block: Option<usize>,

    /// Where the numeric regions run: `cpu`; `gpu` (the GPU region interpreter, f32 only); or
    /// `auto`, which sends a region to the GPU when the cost model, measured on this machine,
    /// expects it to be faster, and runs everything else on the CPU (always so in f64).
    #[arg(long, value_name = "cpu|gpu|auto", default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,

    /// Writes the results to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// A usage or IO error: exit code 2.
pub(super) struct Usage(pub(super) String);

impl<T: Into<String>> From<T> for Usage {
    fn from(message: T) -> Usage {
        Usage(message.into())
    }
}

/// Runs `ndvm run`.
pub fn main(args: RunArgs) -> ExitCode {
    match run(&args) {
        Ok(code) => code,
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &RunArgs) -> Result<ExitCode, Usage> {
    let text = read_source(&args.program)?;
    // A byte-order mark is no part of the program (the reader would take it for a name).
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let source = Source::new(args.program.display().to_string(), text);
    let decode = DecodeOptions {
        protected_ops: args.protected_ops,
    };
    let program = match Program::parse_with(text, decode) {
        Ok(p) => p,
        Err(e) => {
            source.emit(&e, &[]);
            return Ok(ExitCode::from(1));
        }
    };
    let bindings = read_bindings(&args.binds, args.lanes.as_deref())?;
    warn_unused(&program, &bindings);
    let options = RunOptions {
        grad: grad_spec(args.grad.as_deref())?,
        limits: Limits {
            max_steps: args.max_steps,
            max_depth: args.max_depth,
            max_memory: usize::try_from(args.max_memory_mb.saturating_mul(1 << 20))
                .unwrap_or(usize::MAX),
        },
        lane_block: args
            .lane_block
            .unwrap_or_else(|| device::lane_block(args.device, args.precision == Precision::F32)),
        seed: None,
    };
    let outcome = match args.precision {
        Precision::F64 => execute::<f64>(&program, &bindings, &options, args.device)?,
        Precision::F32 => execute::<f32>(&program, &bindings, &options, args.device)?,
    };
    let outcome = match outcome {
        Ok(o) => o,
        // Errors about the inputs given on the command line (an unknown --grad name).
        Err(e @ Error::Binding { .. }) => return Err(Usage(e.to_string())),
        Err(e) => {
            source.emit(&e, &unbound_note(&program, &bindings));
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(e) = outcome.common_error() {
        source.emit(e, &[]);
        return Ok(ExitCode::from(1));
    }
    let rendered = match args.format {
        Format::Json => json(&outcome, &source, args.precision).to_string() + "\n",
        Format::Text => table::text(&outcome, &source, args.precision),
    };
    write_output(args.out.as_deref(), &rendered)?;
    let failed = outcome.values.iter().filter(|v| v.is_err()).count();
    if failed == outcome.lanes {
        eprintln!("error: every one of the {failed} lanes failed (see each lane's error)");
        return Ok(ExitCode::from(1));
    }
    if failed > 0 && args.format == Format::Text {
        eprintln!("warning: {failed} of {} lanes failed", outcome.lanes);
    }
    Ok(ExitCode::SUCCESS)
}

fn execute<R: Attach>(
    program: &Program,
    bindings: &Bindings,
    options: &RunOptions,
    choice: DeviceChoice,
) -> Result<runtime_cpu::Result<Outcome>, Usage> {
    let mut session = Session::<R>::new();
    R::attach(&mut session, choice)?;
    Ok(session.run(program, bindings, options).cloned())
}

pub(super) fn read_source(path: &Path) -> Result<String, Usage> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        Usage(format!(
            "{} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// `--grad` absent: none; `--grad` alone: every input; `--grad a,b`: those, each once.
pub(super) fn grad_spec(grad: Option<&[String]>) -> Result<GradSpec, Usage> {
    let Some(names) = grad else {
        return Ok(GradSpec::None);
    };
    let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
    if names.is_empty() {
        return Ok(GradSpec::All);
    }
    if names.iter().any(|n| n.is_empty()) {
        return Err(
            "--grad: an empty input name (write --grad a,b, or --grad alone for all)".into(),
        );
    }
    let mut seen = HashSet::new();
    let unique = names
        .into_iter()
        .filter(|n| seen.insert(*n))
        .map(String::from)
        .collect();
    Ok(GradSpec::Some(unique))
}

/// A note naming every unbound input when more than one is (the runtime reports the first).
fn unbound_note(program: &Program, bindings: &Bindings) -> Vec<String> {
    let unbound: Vec<&str> = program
        .inputs()
        .filter(|n| bindings.get(n).is_none())
        .collect();
    if unbound.len() < 2 {
        return Vec::new();
    }
    vec![format!("unbound inputs: {}", unbound.join(", "))]
}

/// Warns about bound names that the program never uses (a typo, usually).
fn warn_unused(program: &Program, bindings: &Bindings) {
    let inputs: HashSet<&str> = program.inputs().collect();
    for (name, _) in bindings.iter() {
        if !inputs.contains(name) {
            eprintln!("warning: input `{name}` is bound but the program does not use it");
        }
    }
}

pub(super) fn write_output(out: Option<&Path>, rendered: &str) -> Result<(), Usage> {
    let written = match out {
        Some(path) => std::fs::write(path, rendered)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(rendered.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|e| format!("cannot write the results: {e}"))
        }
    };
    written.map_err(Usage)
}
