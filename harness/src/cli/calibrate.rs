//! `ndvm calibrate`: fit a program's parameters to data (or to minimise its own value).

use super::inputs::{parse_bind, read_bindings, BindArg};
use super::output::Precision;
use super::report::Source;
use crate::calibrate::adam::AdamSettings;
use crate::calibrate::lbfgs::LbfgsSettings;
use crate::calibrate::lm::LmSettings;
use crate::calibrate::report::{calibrate, starts, Report};
use crate::calibrate::table::Table;
use crate::calibrate::{Loss, Optimizer, Problem, Settings};
use crate::device;
use clap::{Args, ValueEnum};
use runtime_cpu::{DecodeOptions, Limits, Program};
use runtime_gpu::DeviceChoice;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The optimiser to use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    /// Adam (learning rate `--lr`, betas 0.9 and 0.999).
    Adam,
    /// L-BFGS with a backtracking line search.
    Lbfgs,
    /// Levenberg-Marquardt on the per-row Jacobian (needs `--target`).
    Lm,
}

/// Arguments of `ndvm calibrate`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    ndvm calibrate model.scm --data points.csv --target y --params a,b --init a=1,b=0.5\n  \
    ndvm calibrate examples/kalman2d_T80.scm --bind obs=@examples/kalman2d_obs.csv \
    --params q,r --init q=0.3,r=0.3 --lr 0.08 --steps 30 --clamp q=1e-4: --clamp r=1e-4:")]
pub struct CalibrateArgs {
    /// The model program.
    #[arg(value_name = "MODEL.scm")]
    pub model: PathBuf,
    /// Data: a CSV with a header of column names; columns that are inputs of the model bind as
    /// lanes (one lane per row). A `split` column (`train`/`holdout`) keeps held-out rows out of
    /// the fit and reports R^2 on them.
    #[arg(long, value_name = "FILE.csv")]
    pub data: Option<PathBuf>,
    /// The data column the model's value should match (mean squared error); without it the
    /// model's own value (its mean over the rows) is minimised.
    #[arg(long, value_name = "COLUMN")]
    pub target: Option<String>,
    /// The parameters to fit (default: every input bound neither by data nor by --bind).
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub params: Vec<String>,
    /// Initial values, e.g. `a=0.3,b=1` (default 0.5 for a parameter not named).
    #[arg(long, value_name = "NAME=X,...", value_delimiter = ',')]
    pub init: Vec<String>,
    /// Binds an input on every lane: NAME=NUMBER or NAME=@FILE.csv (a matrix).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = parse_bind)]
    pub binds: Vec<BindArg>,
    /// The optimiser.
    #[arg(long, value_enum, default_value_t = OptimizerArg::Adam)]
    pub optimizer: OptimizerArg,
    /// Optimiser steps (iterations for L-BFGS).
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 0.05)]
    pub lr: f64,
    /// Independent restarts, walked together as lane groups (their lane blocks spread over
    /// --threads): the first starts at --init, the others at --init plus
    /// 0.3 max(1, |init|) N(0, 1) drawn from --seed.
    #[arg(long, default_value_t = 1)]
    pub restarts: usize,
    /// A box constraint `NAME=LO:HI` (either side may be empty), applied after every step.
    #[arg(long = "clamp", value_name = "NAME=LO:HI")]
    pub clamps: Vec<String>,
    /// Seed of the restarts' initial values.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The number type to compute in.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// Where the numeric regions run: `cpu`, `gpu` (f32 only) or `auto` (the GPU for the
    /// regions the measured cost model expects to run faster there; the CPU in f64).
    #[arg(long, value_name = "cpu|gpu|auto", default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// `sqrt`, `log` and `normalize` clamp their argument to at least 1e-8, like the paper's
    /// artifact runtime.
    #[arg(long)]
    pub protected_ops: bool,
    /// Node visits allowed per evaluation.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_steps)]
    pub max_steps: u64,
    /// Worker threads the restarts are spread over (default: every core): Adam's lane blocks,
    /// one a job, or L-BFGS's restarts, one fitted whole a job. The results are the same for
    /// any number.
    #[arg(long)]
    pub threads: Option<usize>,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn parse_pairs(items: &[String], what: &str) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|s| {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("{what} `{s}`: expected NAME=VALUE"))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

fn number(s: &str, what: &str) -> Result<f64, String> {
    super::inputs::parse_number(s).ok_or_else(|| format!("{what}: `{s}` is not a number"))
}

/// Runs `ndvm calibrate`.
pub fn main(args: CalibrateArgs) -> ExitCode {
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &CalibrateArgs) -> Result<ExitCode, String> {
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| format!("cannot read {}: {e}", args.model.display()))?;
    let source = Source::new(args.model.display().to_string(), &text);
    let program = match Program::parse_with(
        &text,
        DecodeOptions {
            protected_ops: args.protected_ops,
        },
    ) {
        Ok(p) => p,
        Err(e) => {
            source.emit(&e, &[]);
            return Ok(ExitCode::from(1));
        }
    };
    let inputs: Vec<String> = program.inputs().map(str::to_string).collect();
    let fixed = read_bindings(&args.binds, None)?;
    let table = match &args.data {
        Some(p) => Some(Table::read(p).map_err(|e| format!("{e:#}"))?),
        None => None,
    };
    let train = table.as_ref().map(|t| t.rows(false));
    let hold = table
        .as_ref()
        .filter(|t| t.has_holdout())
        .map(|t| t.rows(true));
    let data_cols = |t: &Table| -> Vec<(String, Vec<f64>)> {
        t.names
            .iter()
            .zip(&t.columns)
            .filter(|(n, _)| inputs.contains(n) && Some(n.as_str()) != args.target.as_deref())
            .map(|(n, c)| (n.clone(), c.clone()))
            .collect()
    };
    let target_of = |t: &Table| -> Result<Vec<f64>, String> {
        let name = args.target.as_deref().expect("checked by the caller");
        t.column(name)
            .map(<[f64]>::to_vec)
            .ok_or_else(|| format!("--target: the data has no column `{name}`"))
    };
    let loss_on = |t: Option<&Table>| -> Result<Loss, String> {
        match (&args.target, t) {
            (Some(_), Some(t)) => Ok(Loss::Mse(target_of(t)?)),
            (Some(_), None) => Err("--target needs --data".into()),
            (None, _) => Ok(Loss::Value),
        }
    };
    let bound: Vec<String> = fixed.iter().map(|(n, _)| n.to_string()).collect();
    let data = train.as_ref().map(data_cols).unwrap_or_default();
    let params: Vec<String> = if args.params.is_empty() {
        inputs
            .iter()
            .filter(|n| !bound.contains(n) && !data.iter().any(|(d, _)| d == *n))
            .cloned()
            .collect()
    } else {
        args.params.clone()
    };
    if params.is_empty() {
        return Err("no parameters to fit (name them with --params)".into());
    }
    for p in &params {
        if !inputs.contains(p) {
            return Err(format!(
                "--params: `{p}` is not an input of the model (its inputs: {})",
                inputs.join(", ")
            ));
        }
    }
    let mut init = vec![0.5; params.len()];
    for (k, v) in parse_pairs(&args.init, "--init")? {
        let i = params
            .iter()
            .position(|p| *p == k)
            .ok_or_else(|| format!("--init: `{k}` is not a parameter"))?;
        init[i] = number(&v, "--init")?;
    }
    let mut clamps = vec![None; params.len()];
    for (k, v) in parse_pairs(&args.clamps, "--clamp")? {
        let i = params
            .iter()
            .position(|p| *p == k)
            .ok_or_else(|| format!("--clamp: `{k}` is not a parameter"))?;
        let (lo, hi) = v
            .split_once(':')
            .ok_or_else(|| format!("--clamp {k}: expected LO:HI"))?;
        let lo = if lo.is_empty() {
            f64::NEG_INFINITY
        } else {
            number(lo, "--clamp")?
        };
        let hi = if hi.is_empty() {
            f64::INFINITY
        } else {
            number(hi, "--clamp")?
        };
        if lo.is_nan() || hi.is_nan() || lo > hi || lo == f64::INFINITY || hi == f64::NEG_INFINITY {
            return Err(format!(
                "--clamp {k}={v}: the bounds must be numbers with LO <= HI (either may be empty)"
            ));
        }
        clamps[i] = Some((lo, hi));
    }
    if !(args.lr.is_finite() && args.lr > 0.0) {
        return Err(format!(
            "--lr {}: the learning rate must be a positive number",
            args.lr
        ));
    }
    if args.restarts == 0 {
        return Err("--restarts 0: at least one start is needed".into());
    }
    if args.threads == Some(0) {
        return Err("--threads 0: at least one thread is needed".into());
    }
    let problem = Problem {
        program: program.clone(),
        fixed: fixed.clone(),
        data,
        params: params.clone(),
        loss: loss_on(train.as_ref())?,
    };
    if args.optimizer == OptimizerArg::Lm && problem.loss == Loss::Value {
        return Err("--optimizer lm fits a least-squares loss: give --target COL".into());
    }
    let held = match &hold {
        Some(h) => Some(Problem {
            data: data_cols(h),
            loss: loss_on(Some(h))?,
            ..problem.clone()
        }),
        None => None,
    };
    let starts = starts(&init, args.restarts, args.seed);
    let settings = Settings {
        optimizer: match args.optimizer {
            OptimizerArg::Adam => Optimizer::Adam(AdamSettings {
                lr: args.lr,
                ..Default::default()
            }),
            OptimizerArg::Lbfgs => Optimizer::Lbfgs(LbfgsSettings::default()),
            OptimizerArg::Lm => Optimizer::Lm(LmSettings::default()),
        },
        steps: args.steps,
        clamps,
        limits: Limits {
            max_steps: args.max_steps,
            ..Limits::default()
        },
        final_loss: true,
        lane_block: device::lane_block(args.device, args.precision == Precision::F32),
    };
    let threads = args.threads.unwrap_or_else(crate::schedule::cores).max(1);
    let started = Instant::now();
    let (h, d) = (held.as_ref(), args.device);
    let report = match args.precision {
        Precision::F64 => calibrate::<f64>(&problem, h, &starts, &settings, d, threads)?,
        Precision::F32 => calibrate::<f32>(&problem, h, &starts, &settings, d, threads)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    print_report(args, &params, &report, seconds);
    Ok(if report.fit.best.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(args: &CalibrateArgs, params: &[String], r: &Report, seconds: f64) {
    let best = r.fit.best.map(|b| &r.fit.restarts[b]);
    if args.format == "json" {
        let out = r.to_json(params, seconds);
        println!("{out}");
        return;
    }
    match best {
        None => {
            println!("every restart failed:");
            for (i, x) in r.fit.restarts.iter().enumerate() {
                println!("  restart {i}: {}", x.failure.as_deref().unwrap_or("?"));
            }
        }
        Some(b) => {
            for (name, x) in params.iter().zip(&b.params) {
                println!("{name} = {x}");
            }
            println!(
                "loss = {}",
                b.final_loss.map_or("?".into(), |l| l.to_string())
            );
            println!("loss at the last step = {}", b.last_step_loss);
            if let Some(r2) = r.train_r2 {
                println!("R^2 = {r2:.6}");
            }
            if let Some((l, r2)) = r.held {
                println!("held-out loss = {l}");
                if let Some(r2) = r2 {
                    println!("held-out R^2 = {r2:.6}");
                }
            }
            let failed = r
                .fit
                .restarts
                .iter()
                .filter(|x| x.failure.is_some())
                .count();
            if r.fit.restarts.len() > 1 {
                println!(
                    "best of {} restarts: {} ({failed} failed)",
                    r.fit.restarts.len(),
                    r.fit.best.unwrap_or(0)
                );
            }
        }
    }
    println!(
        "{} steps, {} evaluations, {:.3} s",
        r.fit.steps, r.fit.evaluations, seconds
    );
    let g = r.regions;
    if g.device_regions + g.cpu_regions > 0 {
        println!(
            "numeric regions: {} on the GPU, {} on the CPU; reverse passes on the GPU: {}",
            g.device_regions, g.cpu_regions, g.device_reverse
        );
    } else if args.device == DeviceChoice::Auto && args.precision == Precision::F32 {
        println!("numeric work on the CPU (--device auto: the GPU does not pay at this width)");
    }
}
