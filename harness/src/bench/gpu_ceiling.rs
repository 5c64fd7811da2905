//! `ndvm bench gpu-ceiling`: the numeric-ceiling experiment of the paper's Appendix A.
//!
//! A population of G candidates, each the forward NLL of a D-dimensional Kalman filter over
//! T = 80 steps, evaluated by `runtime-gpu`'s kernel (one workgroup per candidate, f32) and by
//! its CPU twin on all cores (rayon, f32), in the same run: evaluations per second on each, their
//! ratio, and the largest relative difference between the two.

use runtime_gpu::ceiling::{noise_population, CeilingConfig, CeilingPlan, CeilingProblem};
use runtime_gpu::{cpu_twin, select, DeviceChoice, DeviceLimits, Executor, GpuContext, GpuError};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// The paper's figures (RTX 4090, G = 16384): evaluations per second by D.
pub const PAPER_GPU_EVALS_PER_S: [(usize, f64); 5] = [
    (2, 6.81e6),
    (8, 5.83e6),
    (16, 1.84e6),
    (32, 0.109e6),
    (64, 0.0135e6),
];

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// State dimensions D.
    pub dims: Vec<usize>,
    /// Candidates G.
    pub population: usize,
    /// Time steps T.
    pub steps: usize,
    /// Timed runs per figure (the median is reported), after one untimed run.
    pub samples: usize,
    /// Where to run: `auto` (GPU if any, else the CPU alone), `gpu`, or `cpu`.
    pub device: DeviceChoice,
}

/// One dimension.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// State dimension D.
    pub d: usize,
    /// Invocations per workgroup.
    pub workgroup_size: u32,
    /// Dispatches per population (batches x step chunks).
    pub dispatches: usize,
    /// Most loop-header visits of one invocation in one dispatch.
    pub loop_visits_per_invocation: u64,
    /// GPU evaluations per second (none when the GPU is not used).
    pub gpu_evals_per_s: Option<f64>,
    /// CPU-twin evaluations per second, all cores.
    pub cpu_evals_per_s: f64,
    /// `gpu_evals_per_s / cpu_evals_per_s`.
    pub gpu_over_cpu: Option<f64>,
    /// Largest `|gpu - cpu| / |cpu|` over the population.
    pub max_rel_diff: Option<f64>,
    /// The paper's GPU figure at this D, if it has one.
    pub paper_gpu_evals_per_s: Option<f64>,
}

/// The whole experiment.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The GPU adapter, if one was used.
    pub adapter: Option<String>,
    /// Its backend and type, e.g. `Vulkan, Cpu`.
    pub adapter_kind: Option<String>,
    /// Why it was chosen.
    pub selection: Option<String>,
    /// Why the GPU was not used, when `auto` fell back to the CPU.
    pub fallback: Option<String>,
    /// Threads of the CPU twin.
    pub cpu_threads: usize,
    /// Candidates G.
    pub population: usize,
    /// Time steps T.
    pub steps: usize,
    /// One row per D.
    pub rows: Vec<Row>,
}

/// The median of `samples` timed calls of `f` (each call is a whole population, so one call is
/// a sample; the caller has made an untimed call first).
fn median_seconds(samples: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// One untimed run of the kernel (its NLLs) and the median seconds of `samples` timed runs.
fn time_gpu(
    ctx: &GpuContext,
    cfg: &CeilingConfig,
    samples: usize,
) -> Result<(Vec<f32>, f64), GpuError> {
    let out = ctx.ceiling(cfg)?;
    let mut failed = None;
    let seconds = median_seconds(samples, || {
        if let Err(e) = ctx.ceiling(cfg) {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok((out, seconds)),
    }
}

/// Runs the experiment. Errors only when the GPU was required and is unusable, or fails.
pub fn run(cfg: &Config) -> Result<Report, GpuError> {
    let (mut gpu, mut fallback): (Option<Arc<GpuContext>>, Option<String>) =
        match select(cfg.device)? {
            Executor::Gpu(ctx) => (Some(ctx), None),
            Executor::Cpu { fallback } => (None, fallback.map(|e| e.to_string())),
        };
    let adapter = gpu.as_ref().map(|c| c.adapter().clone());
    let selection = gpu.as_ref().map(|c| c.selection_reason().to_string());
    let mut rows = Vec::with_capacity(cfg.dims.len());
    for &d in &cfg.dims {
        let ceiling = CeilingConfig {
            steps: cfg.steps,
            ..CeilingConfig::new(d, cfg.population)
        };
        let plan = match &gpu {
            Some(ctx) => ctx.ceiling_plan(&ceiling)?,
            None => CeilingPlan::new(&ceiling, &DeviceLimits::unbounded())?,
        };

        let problem = CeilingProblem::<f32>::new(d, cfg.steps);
        let noise = noise_population::<f32>(0..cfg.population);
        let cpu = cpu_twin::population(&problem, &plan, &noise);
        let cpu_s = median_seconds(cfg.samples, || {
            std::hint::black_box(cpu_twin::population(&problem, &plan, &noise));
        });

        let measured = match gpu
            .as_deref()
            .map(|ctx| time_gpu(ctx, &ceiling, cfg.samples))
        {
            Some(Ok(m)) => Some(m),
            // `auto` keeps going on the CPU when the device is lost mid-run.
            Some(Err(e)) if cfg.device == DeviceChoice::Auto && e.is_unavailable() => {
                fallback = Some(e.to_string());
                gpu = None;
                None
            }
            Some(Err(e)) => return Err(e),
            None => None,
        };
        let (gpu_evals, rel) = match measured {
            Some((out, gpu_s)) => {
                let rel = out
                    .iter()
                    .zip(&cpu)
                    .map(|(&g, &c)| {
                        let (g, c) = (f64::from(g), f64::from(c));
                        if g.is_finite() {
                            (g - c).abs() / c.abs().max(1e-30)
                        } else {
                            f64::INFINITY
                        }
                    })
                    .fold(0.0, f64::max);
                (Some(cfg.population as f64 / gpu_s), Some(rel))
            }
            None => (None, None),
        };
        let cpu_evals = cfg.population as f64 / cpu_s;
        rows.push(Row {
            d,
            workgroup_size: plan.workgroup_size,
            dispatches: plan.dispatches(),
            loop_visits_per_invocation: plan.loop_visits,
            gpu_evals_per_s: gpu_evals,
            cpu_evals_per_s: cpu_evals,
            gpu_over_cpu: gpu_evals.map(|g| g / cpu_evals),
            max_rel_diff: rel,
            paper_gpu_evals_per_s: PAPER_GPU_EVALS_PER_S
                .iter()
                .find(|(pd, _)| *pd == d)
                .map(|&(_, e)| e),
        });
    }
    Ok(Report {
        adapter_kind: adapter
            .as_ref()
            .map(|a| format!("{}, {}", a.backend, a.device_type)),
        adapter: adapter.map(|a| a.name),
        selection,
        fallback,
        cpu_threads: rayon::current_num_threads(),
        population: cfg.population,
        steps: cfg.steps,
        rows,
    })
}

/// Evaluations per second as text: `6.81M`, `13.5k`.
fn rate(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2}k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

/// The report as a table.
pub fn print_text(report: &Report) {
    println!(
        "Numeric ceiling: Kalman NLL over T = {} steps, G = {} candidates, f32",
        report.steps, report.population
    );
    match (&report.adapter, &report.fallback) {
        (Some(name), _) => println!(
            "GPU: {name} ({}); {}",
            report.adapter_kind.as_deref().unwrap_or("?"),
            report.selection.as_deref().unwrap_or("")
        ),
        (None, Some(why)) => println!("GPU: none, CPU only ({why})"),
        (None, None) => println!("GPU: not used (--device cpu)"),
    }
    if let (Some(_), Some(why)) = (&report.adapter, &report.fallback) {
        println!("GPU lost during the run, later rows CPU only: {why}");
    }
    println!("CPU twin: {} threads (rayon)", report.cpu_threads);
    println!(
        "{:>3} {:>4} {:>6} {:>10} {:>12} {:>12} {:>9} {:>10} {:>12}",
        "D",
        "WG",
        "disp",
        "loops/inv",
        "GPU eval/s",
        "CPU eval/s",
        "GPU/CPU",
        "max rel",
        "paper GPU"
    );
    let dash = || "-".to_string();
    for r in &report.rows {
        println!(
            "{:>3} {:>4} {:>6} {:>10} {:>12} {:>12} {:>9} {:>10} {:>12}",
            r.d,
            r.workgroup_size,
            r.dispatches,
            r.loop_visits_per_invocation,
            r.gpu_evals_per_s.map(rate).unwrap_or_else(dash),
            rate(r.cpu_evals_per_s),
            r.gpu_over_cpu
                .map(|x| format!("{x:.2}x"))
                .unwrap_or_else(dash),
            r.max_rel_diff
                .map(|x| format!("{x:.1e}"))
                .unwrap_or_else(dash),
            r.paper_gpu_evals_per_s.map(rate).unwrap_or_else(dash),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(device: DeviceChoice) -> Config {
        Config {
            dims: vec![2, 8],
            population: 16,
            steps: 80,
            samples: 1,
            device,
        }
    }

    #[test]
    fn the_cpu_alone_needs_no_device() {
        let report = run(&config(DeviceChoice::Cpu)).expect("cpu");
        assert!(report.adapter.is_none() && report.fallback.is_none());
        assert_eq!(report.rows.len(), 2);
        assert!(report
            .rows
            .iter()
            .all(|r| r.gpu_evals_per_s.is_none() && r.cpu_evals_per_s > 0.0));
        assert_eq!(report.rows[0].paper_gpu_evals_per_s, Some(6.81e6));
    }

    #[test]
    fn the_gpu_matches_the_twin_in_the_report() {
        if runtime_gpu::testing::gpu_or_skip("the_gpu_matches_the_twin_in_the_report").is_none() {
            return;
        }
        let report = run(&config(DeviceChoice::Gpu)).expect("gpu");
        assert!(report.adapter.is_some());
        for r in &report.rows {
            let rel = r.max_rel_diff.expect("compared");
            assert!(rel <= 2e-3, "D={}: {rel:e}", r.d);
            assert!(r.gpu_over_cpu.is_some_and(|x| x > 0.0));
        }
    }
}
