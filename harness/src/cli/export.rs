//! `ndvm export`: a program as code of NumPy, JAX, PyTorch or sympy (a Python module defining
//! `program(...)`, printed as it runs), or as LaTeX.
//!
//! Exit codes: 0 on success, 1 when the program does not read or decode or has a form the
//! target cannot express (the message names it and its line), 2 for a usage or IO error.

use crate::export::{to_latex, to_python, Target};
use clap::{Args, ValueEnum};
use runtime_cpu::{DecodeOptions, Program};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `--to` writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum To {
    /// A NumPy function.
    Numpy,
    /// A JAX function (`jax.jit`, `jax.grad` apply; loops of constant trip count as `fori_loop`).
    Jax,
    /// A PyTorch function (autograd applies).
    Torch,
    /// A function building a sympy expression (call it with sympy symbols).
    Sympy,
    /// LaTeX math (loop-free programs of numbers).
    Latex,
}

/// Arguments of `ndvm export`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    ndvm export prog.scm --to numpy > prog.py\n  \
    ndvm export examples/kalman2d_T80.scm --to jax\n  \
    ndvm export prog.scm --to latex\n\n\
    The Python code defines `program(*, INPUTS)`, one lane's value (a scalar input may be an \
    array of lanes where the program is elementwise). Exit status: 0 on success, 1 for a \
    program that does not read or cannot be exported (the message names the form), 2 for a \
    usage or IO error.")]
pub struct ExportArgs {
    /// The program file (`-` reads standard input).
    pub program: PathBuf,
    /// The target.
    #[arg(long, value_enum)]
    pub to: To,
    /// `sqrt`, `log` and `normalize` clamp their argument as under `ndvm run --protected-ops`.
    #[arg(long)]
    pub protected_ops: bool,
    /// Write the code here instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `ndvm export`.
pub fn main(args: ExportArgs) -> ExitCode {
    let source = if args.program.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            eprintln!("error: standard input: {e}");
            return ExitCode::from(2);
        }
        s
    } else {
        match std::fs::read_to_string(&args.program) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {}: {e}", args.program.display());
                return ExitCode::from(2);
            }
        }
    };
    let options = DecodeOptions {
        protected_ops: args.protected_ops,
    };
    if let Err(e) = Program::parse_with(&source, options) {
        eprintln!("error: {}: {e}", args.program.display());
        return ExitCode::from(1);
    }
    let target = match args.to {
        To::Numpy => Some(Target::Numpy),
        To::Jax => Some(Target::Jax),
        To::Torch => Some(Target::Torch),
        To::Sympy => Some(Target::Sympy),
        To::Latex => None,
    };
    let out = match target {
        Some(t) => to_python(&source, t, args.protected_ops).map(|p| p.code),
        None => to_latex(&source).map(|s| s + "\n"),
    };
    let text = match out {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: cannot export: {e}", args.program.display());
            return ExitCode::from(1);
        }
    };
    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
        None => print!("{text}"),
    }
    ExitCode::SUCCESS
}
