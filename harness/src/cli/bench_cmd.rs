//! `ndvm bench`: the performance experiments.

use crate::bench::kalman::{self, Config};
use clap::{Args, Subcommand};
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `ndvm bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The experiment.
    #[command(subcommand)]
    pub experiment: Experiment,
}

/// The experiments.
#[derive(Subcommand, Debug)]
pub enum Experiment {
    /// The 80-step Kalman likelihood with gradient against the hand-written ceiling, and the
    /// small suite programs at one lane.
    Kalman(KalmanArgs),
    /// Where the speed comes from: the suite's five cost-model programs on the boxed oracle,
    /// runtime-cpu, the bytecode VM and hand-written code, with caches and pools on and off.
    Decompose(DecomposeArgs),
    /// The numeric ceiling: a population of D-dimensional Kalman likelihoods on the GPU
    /// (one workgroup per candidate) against the kernel's CPU twin on all cores.
    GpuCeiling(GpuCeilingArgs),
    /// The region path: the interpreted D-dimensional Kalman likelihood with gradient, its
    /// regions on the GPU against the CPU on all cores, over a grid of lanes B and dimensions D.
    GpuRegions(GpuRegionsArgs),
    /// What `--device auto` costs where it keeps the work on the CPU: the conformance suite at
    /// one lane and the Kalman program at 1024 lanes, against no device.
    Auto(AutoArgs),
    /// One candidate ODE system fitted through the integrator, timed (`python/bench/ode_fit.py`
    /// sets SciPy beside it).
    OdeFit(OdeFitArgs),
}

/// Arguments of `ndvm bench ode-fit`.
#[derive(Args, Debug)]
pub struct OdeFitArgs {
    /// The trajectory (a CSV).
    #[arg(long)]
    pub data: std::path::PathBuf,
    /// The time column.
    #[arg(long, default_value = "t")]
    pub time: String,
    /// The state columns.
    #[arg(long, value_delimiter = ',')]
    pub target: Vec<String>,
    /// One right-hand side per state (object language), separated by `;`.
    #[arg(long)]
    pub rhs: String,
    /// The constants' starting values: `a=1,b=2`.
    #[arg(long, value_delimiter = ',')]
    pub params: Vec<String>,
    /// Fits timed (the median is reported).
    #[arg(long, default_value_t = 20)]
    pub repeats: usize,
    /// Observations per shooting segment.
    #[arg(long, default_value_t = crate::ode::shoot::FitOptions::default().segment)]
    pub segment: usize,
    /// The continuity weight of each phase of the fit.
    #[arg(long, value_delimiter = ',')]
    pub weights: Option<Vec<f64>>,
    /// The largest Runge-Kutta step (default: the median gap between observations).
    #[arg(long)]
    pub max_step: Option<f64>,
}

fn ode_fit_cmd(a: OdeFitArgs) -> ExitCode {
    let params: Result<Vec<(String, f64)>, String> = a
        .params
        .iter()
        .map(|p| {
            let (n, v) = p
                .split_once('=')
                .ok_or_else(|| format!("--params {p}: expected NAME=VALUE"))?;
            let v: f64 = v
                .parse()
                .map_err(|_| format!("--params {p}: `{v}` is not a number"))?;
            Ok((n.to_string(), v))
        })
        .collect();
    let job = params.map(|params| crate::bench::ode_fit::Job {
        data: &a.data,
        time: &a.time,
        states: a.target.clone(),
        rhs: a.rhs.split(';').map(|s| s.trim().to_string()).collect(),
        params,
        repeats: a.repeats,
        segment: a.segment,
        weights: a.weights.clone(),
        max_step: a.max_step,
    });
    match job.and_then(|j| crate::bench::ode_fit::run(&j)) {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Arguments of `ndvm bench auto`.
#[derive(Args, Debug)]
pub struct AutoArgs {
    /// Minimum milliseconds per timing sample.
    #[arg(long, default_value_t = 100)]
    pub sample_ms: u64,
    /// Samples per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub samples: usize,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn auto_cmd(a: AutoArgs) -> ExitCode {
    use crate::bench::auto;
    if a.format != "text" && a.format != "json" {
        eprintln!("error: unknown format `{}` (use text or json)", a.format);
        return ExitCode::from(2);
    }
    let rows = auto::run(Duration::from_millis(a.sample_ms), a.samples);
    if a.format == "json" {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        );
    } else {
        auto::print_text(&rows);
    }
    ExitCode::SUCCESS
}

/// Arguments of `ndvm bench gpu-regions`.
#[derive(Args, Debug)]
pub struct GpuRegionsArgs {
    /// State dimensions D, comma-separated.
    #[arg(long = "d", value_delimiter = ',', default_value = "2,4,8,16,32")]
    pub dims: Vec<usize>,
    /// Lane counts B, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64,256,1024,4096")]
    pub lanes: Vec<usize>,
    /// CPU worker threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Minimum milliseconds per timing sample.
    #[arg(long, default_value_t = 100)]
    pub sample_ms: u64,
    /// Samples per figure (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
    /// Points whose walk would hold more numbers than this are skipped (GPU memory).
    #[arg(long, default_value_t = 250_000_000)]
    pub max_numbers: u64,
    /// Invocations per lane sharing each op on the GPU (a power of two up to 64); 0 lets the
    /// device choose from the lane count.
    #[arg(long, default_value_t = 0)]
    pub lane_width: u32,
    /// Invocations per workgroup on the GPU (a power of two from 64 to 1024); 0 for 64.
    #[arg(long, default_value_t = 0)]
    pub workgroup: u32,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn gpu_regions_cmd(a: GpuRegionsArgs) -> ExitCode {
    use crate::bench::gpu_regions;
    if a.format != "text" && a.format != "json" {
        eprintln!("error: unknown format `{}` (use text or json)", a.format);
        return ExitCode::from(2);
    }
    let power =
        |n: u32, lo: u32, hi: u32| n == 0 || (n.is_power_of_two() && (lo..=hi).contains(&n));
    if !power(a.workgroup, 64, 1024) || !power(a.lane_width, 1, 64) {
        eprintln!(
            "error: --workgroup takes a power of two from 64 to 1024, --lane-width one from 1 to 64"
        );
        return ExitCode::from(2);
    }
    if a.dims.iter().any(|&d| d < 2) || a.lanes.contains(&0) {
        eprintln!("error: --d needs dimensions of at least 2 and --lanes counts of at least 1");
        return ExitCode::from(2);
    }
    let cfg = gpu_regions::Config {
        dims: a.dims,
        lanes: a.lanes,
        threads: a.threads.unwrap_or_else(crate::schedule::cores),
        min_sample: Duration::from_millis(a.sample_ms),
        samples: a.samples,
        max_numbers: a.max_numbers,
        lane_width: (a.lane_width > 0).then_some(a.lane_width),
        workgroup: (a.workgroup > 0).then_some(a.workgroup),
    };
    let text = a.format == "text";
    if text {
        gpu_regions::print_header(&cfg);
    }
    let report = gpu_regions::run(&cfg, |row| {
        if text {
            gpu_regions::print_row(row);
        }
    });
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if text {
        gpu_regions::print_contour(&report);
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serialisable")
        );
    }
    ExitCode::SUCCESS
}

/// Arguments of `ndvm bench kalman`.
#[derive(Args, Debug)]
pub struct KalmanArgs {
    /// Lane counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,256,1024")]
    pub lanes: Vec<usize>,
    /// Precisions, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "f64,f32")]
    pub precision: Vec<String>,
    /// Minimum milliseconds per timing sample.
    #[arg(long, default_value_t = 200)]
    pub sample_ms: u64,
    /// Samples per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub samples: usize,
    /// Lanes walked together (0: all lanes in one walk).
    #[arg(long, default_value_t = runtime_cpu::DEFAULT_LANE_BLOCK)]
    pub lane_block: usize,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

/// Runs `ndvm bench`.
pub fn main(args: BenchArgs) -> ExitCode {
    match args.experiment {
        Experiment::Kalman(a) => kalman_cmd(a),
        Experiment::GpuCeiling(a) => gpu_ceiling_cmd(a),
        Experiment::GpuRegions(a) => gpu_regions_cmd(a),
        Experiment::Auto(a) => auto_cmd(a),
        Experiment::Decompose(a) => decompose_cmd(a),
        Experiment::OdeFit(a) => ode_fit_cmd(a),
    }
}

/// Arguments of `ndvm bench decompose`.
#[derive(Args, Debug)]
pub struct DecomposeArgs {
    /// Lane counts for value and gradient, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,256,1024")]
    pub lanes: Vec<usize>,
    /// Decode cache and pooling: `both` (measure with and without, and the ratio), `on`, or
    /// `off` (read and decode the program and make a fresh session for every call).
    #[arg(long, value_enum, default_value = "both")]
    pub caches: crate::bench::decompose::Caches,
    /// Minimum milliseconds per timing sample.
    #[arg(long, default_value_t = 50)]
    pub sample_ms: u64,
    /// Samples per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub samples: usize,
    /// Where to write the plot (SVG) of per-lane time against lanes.
    #[arg(long, default_value = "decompose.svg")]
    pub plot: std::path::PathBuf,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn decompose_cmd(a: DecomposeArgs) -> ExitCode {
    use crate::bench::{decompose, decompose_report};
    if a.format != "text" && a.format != "json" {
        eprintln!("error: unknown format `{}` (use text or json)", a.format);
        return ExitCode::from(2);
    }
    if a.lanes.is_empty() || a.lanes.contains(&0) {
        eprintln!("error: --lanes needs lane counts of at least 1");
        return ExitCode::from(2);
    }
    let cfg = decompose::Config {
        lanes: a.lanes,
        min_sample: Duration::from_millis(a.sample_ms),
        samples: a.samples,
        caches: a.caches,
    };
    let report = decompose::run(&cfg);
    if let Err(e) = std::fs::write(&a.plot, decompose_report::svg(&report)) {
        eprintln!("error: cannot write {}: {e}", a.plot.display());
        return ExitCode::from(2);
    }
    if a.format == "json" {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serialisable")
        );
    } else {
        print!("{}", decompose_report::text(&report));
        println!("Plot: {}", a.plot.display());
    }
    ExitCode::SUCCESS
}

/// Arguments of `ndvm bench gpu-ceiling`.
#[derive(Args, Debug)]
pub struct GpuCeilingArgs {
    /// State dimensions D, comma-separated (2 ..= 64).
    #[arg(long = "d", value_delimiter = ',', default_value = "2,8,16,32,64")]
    pub dims: Vec<usize>,
    /// Candidates G.
    #[arg(long = "g", default_value_t = runtime_gpu::ceiling::PAPER_POPULATION)]
    pub population: usize,
    /// Time steps T.
    #[arg(long = "t", default_value_t = runtime_gpu::ceiling::STEPS)]
    pub steps: usize,
    /// Timed runs per figure (the median is reported), after one untimed run.
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
    /// `auto` (the GPU if there is one, else the CPU twin alone), `gpu`, or `cpu`.
    #[arg(long, default_value = "auto")]
    pub device: runtime_gpu::DeviceChoice,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn gpu_ceiling_cmd(a: GpuCeilingArgs) -> ExitCode {
    use crate::bench::gpu_ceiling;
    if a.format != "text" && a.format != "json" {
        eprintln!("error: unknown format `{}` (use text or json)", a.format);
        return ExitCode::from(2);
    }
    let cfg = gpu_ceiling::Config {
        dims: a.dims,
        population: a.population,
        steps: a.steps,
        samples: a.samples,
        device: a.device,
    };
    let report = match gpu_ceiling::run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if a.format == "json" {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serialisable")
        );
    } else {
        gpu_ceiling::print_text(&report);
    }
    ExitCode::SUCCESS
}

fn kalman_cmd(a: KalmanArgs) -> ExitCode {
    for p in &a.precision {
        if p != "f64" && p != "f32" {
            eprintln!("error: unknown precision `{p}` (use f64 or f32)");
            return ExitCode::from(2);
        }
    }
    let cfg = Config {
        lanes: a.lanes,
        precisions: a.precision,
        min_sample: Duration::from_millis(a.sample_ms),
        samples: a.samples,
        lane_block: a.lane_block,
    };
    let rows = kalman::kalman(&cfg);
    let small = kalman::small(&cfg);
    let decode = kalman::kalman_decode_us(&cfg);
    if a.format == "json" {
        let json =
            serde_json::json!({ "kalman": rows, "kalman_decode_us": decode, "small": small });
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("serialisable")
        );
        return ExitCode::SUCCESS;
    }
    println!("Kalman 80-step NLL, value + gradient (q, r), program decoded once (decode: {decode:.2} us)");
    println!(
        "{:<5} {:>6} {:>12} {:>12} {:>14} {:>9} {:>10}",
        "prec", "lanes", "us/eval", "us/lane", "ceiling us/ln", "ratio", "max rel"
    );
    for r in &rows {
        println!(
            "{:<5} {:>6} {:>12.2} {:>12.3} {:>14.3} {:>9.2} {:>10.1e}",
            r.precision,
            r.lanes,
            r.eval_us,
            r.per_lane_us,
            r.ceiling_per_lane_us,
            r.ratio_to_ceiling,
            r.max_rel_diff
        );
    }
    println!();
    println!("Small programs, 1 lane, value + gradient of every input");
    println!("{:<20} {:>10} {:>12}", "program", "us/eval", "decode us");
    for s in &small {
        println!("{:<20} {:>10.3} {:>12.2}", s.name, s.eval_us, s.decode_us);
    }
    ExitCode::SUCCESS
}
