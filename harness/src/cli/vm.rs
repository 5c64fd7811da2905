//! `ndvm vm`: assemble and run a program of the bytecode VM (`runtime-vm`, `docs/vm.md`) on one
//! or many lanes, optionally with exact gradients. Inputs and output are those of `ndvm run`.
//!
//! Exit codes as `ndvm run`: 0 on success, 1 for an error of the program (assembly, an unbound
//! input, a shape or limit error), 2 for a usage or IO error.

use super::inputs::{parse_bind, read_bindings, BindArg};
use super::output::{json, Precision};
use super::report::Source;
use super::run::{grad_spec, read_source, write_output, Format, Usage};
use super::table;
use clap::Args;
use runtime_cpu::{Bindings, GradSpec, LaneValue, Real, Shape};
use runtime_vm::{Error, Grad, Limits, Options, Outcome, Program, Vm};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `ndvm vm`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    ndvm vm examples/vm/w1.asm --bind a=0.3 --bind x=1.5 --bind w=2 --bind b=0.7 --grad\n  \
    ndvm vm examples/vm/w4.asm --bind m0=[1,2,-1] --bind m1=[.5,-.5,2] --bind m2=[-1,1,.5] \
    --bind v=[1,.5,-2] --grad v\n  \
    ndvm vm examples/vm/w3.asm --lanes inputs.csv --grad --format json\n\n\
    Exit status: 0 on success, 1 for an error in the program, 2 for a usage or file error.")]
pub struct VmArgs {
    /// The assembly file (one instruction per line; see docs/vm.md).
    #[arg(value_name = "PROGRAM.asm")]
    pub program: PathBuf,

    /// Binds an input on every lane: NAME=NUMBER, NAME=[1,2,3] for a vector, or NAME=@FILE.csv
    /// for a matrix read from a CSV file.
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = parse_bind)]
    pub binds: Vec<BindArg>,

    /// Binds inputs per lane from a CSV file: a header row of input names, then one row per
    /// lane.
    #[arg(long, value_name = "FILE.csv")]
    pub lanes: Option<PathBuf>,

    /// Differentiates the result with respect to these inputs, or every input when no names
    /// are given (write `--grad=a,b`, or `--grad` after the program file).
    #[arg(long, value_name = "NAME,...", num_args = 0..=1, value_delimiter = ',')]
    pub grad: Option<Vec<String>>,

    /// The number type to compute in.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,

    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Instructions one walk may execute before the run fails.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_steps)]
    pub max_steps: u64,

    /// Memory one walk may use, in MB, before the run fails.
    #[arg(long, value_name = "N", default_value_t = (Limits::default().max_memory >> 20) as u64)]
    pub max_memory_mb: u64,

    /// Lanes walked together; larger batches are cut into blocks of N (0: all in one walk).
    #[arg(long, value_name = "N", default_value_t = runtime_vm::DEFAULT_LANE_BLOCK)]
    pub lane_block: usize,

    /// Writes the results to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `ndvm vm`.
pub fn main(args: VmArgs) -> ExitCode {
    match run(&args) {
        Ok(code) => code,
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &VmArgs) -> Result<ExitCode, Usage> {
    let text = read_source(&args.program)?;
    let file = args.program.display().to_string();
    let program = match Program::parse(&text) {
        Ok(p) => p,
        Err(e) => {
            report(&file, &text, &e);
            return Ok(ExitCode::from(1));
        }
    };
    let bindings = read_bindings(&args.binds, args.lanes.as_deref())?;
    let inputs: HashSet<&str> = program.inputs().collect();
    for (name, _) in bindings.iter() {
        if !inputs.contains(name) {
            eprintln!("warning: input `{name}` is bound but the program does not load it");
        }
    }
    let opts = Options {
        grad: match grad_spec(args.grad.as_deref())? {
            GradSpec::None => Grad::None,
            GradSpec::All => Grad::All,
            GradSpec::Some(names) => Grad::Some(names),
        },
        limits: Limits {
            max_steps: args.max_steps,
            max_memory: usize::try_from(args.max_memory_mb.saturating_mul(1 << 20))
                .unwrap_or(usize::MAX),
        },
        lane_block: args.lane_block,
    };
    let result = match args.precision {
        Precision::F64 => execute::<f64>(&program, &bindings, &opts),
        Precision::F32 => execute::<f32>(&program, &bindings, &opts),
    };
    let outcome = match result {
        Ok(o) => o,
        // An unknown --grad name is a usage error, as in `ndvm run`.
        Err(e @ Error::Binding { .. }) => return Err(Usage(e.to_string())),
        Err(e) => {
            report(&file, &text, &e);
            return Ok(ExitCode::from(1));
        }
    };
    let outcome = as_run_outcome(outcome);
    let source = Source::new(file, &text);
    let rendered = match args.format {
        Format::Json => json(&outcome, &source, args.precision).to_string() + "\n",
        Format::Text => table::text(&outcome, &source, args.precision),
    };
    write_output(args.out.as_deref(), &rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn execute<R: Real>(
    prog: &Program,
    bindings: &Bindings,
    opts: &Options,
) -> runtime_vm::Result<Outcome> {
    Vm::<R>::new().run(prog, bindings, opts).cloned()
}

/// `error: FILE:LINE:COL: MESSAGE`, then the offending line when the error points at one.
fn report(file: &str, text: &str, e: &Error) {
    match e {
        // The message already ends with the offending line.
        Error::Syntax { .. } => eprintln!("error: {file}:{e}"),
        // The message starts with the position.
        Error::Shape { .. } => eprintln!("error: {file}:{e}"),
        _ => eprintln!("error: {file}: {e}"),
    }
    if let (Some(pos), false) = (e.pos(), matches!(e, Error::Syntax { .. })) {
        let line = text.lines().nth(pos.line as usize - 1).unwrap_or("");
        eprintln!("{:>5} | {line}", pos.line);
    }
}

/// The VM's outcome in the form `ndvm run` prints (every lane succeeded: the VM's errors are
/// whole-run errors).
fn as_run_outcome(o: Outcome) -> runtime_cpu::Outcome {
    let n = o.shape.len();
    let values = (0..o.lanes)
        .map(|l| {
            let v = &o.values[l * n..(l + 1) * n];
            Ok(match o.shape {
                Shape::Scalar => LaneValue::Number(v[0]),
                shape => LaneValue::Tensor(shape, v.to_vec()),
            })
        })
        .collect();
    let grads = o
        .grads
        .into_iter()
        .map(|g| runtime_cpu::Gradient {
            name: g.name,
            shape: g.shape,
            uniform: g.uniform,
            per_lane: g.per_lane,
            sum: g.sum,
        })
        .collect();
    runtime_cpu::Outcome {
        lanes: o.lanes,
        values,
        grads,
        steps: o.steps,
        walks: o.walks,
    }
}
