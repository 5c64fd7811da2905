//! `ndvm bench gpu-regions`: the region path against the CPU over a grid of lane counts B and
//! state dimensions D, on the interpreted D-dimensional Kalman likelihood
//! (`examples/kalman_nd.scm`, value and gradient with respect to q and r, one (q, r) per lane
//! as in the ceiling experiment), in `f32`.
//!
//! The CPU runs the program in blocks of at most 256 lanes (the runtime's default on the CPU),
//! spread over every worker thread; the GPU runs each evaluation's regions with the region interpreter in
//! one walk of all B lanes. Both are timed in the same run, and the largest relative difference
//! between their values and gradients is reported. The (B, D) points where the GPU is faster
//! trace the contour where the region path overtakes the CPU.

use crate::bench::timing::seconds_per_warm_call;
use crate::examples::KALMAN_ND;
use runtime_cpu::{Bindings, GradSpec, Outcome, Program, RunOptions, Session};
use runtime_gpu::ceiling::noise;
use runtime_gpu::{GpuContext, GpuRegions, RegionPolicy};
use serde::Serialize;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// The most lanes per CPU block (and per job of a CPU worker); fewer when that leaves a
/// worker idle.
const CPU_BLOCK: usize = 256;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// State dimensions D.
    pub dims: Vec<usize>,
    /// Lane counts B.
    pub lanes: Vec<usize>,
    /// CPU worker threads.
    pub threads: usize,
    /// Minimum time per timing sample.
    pub min_sample: Duration,
    /// Samples per figure (the median is reported).
    pub samples: usize,
    /// Points whose payload arena would exceed this many numbers are skipped.
    pub max_numbers: u64,
    /// Invocations per lane on the GPU; `None` lets the device choose.
    pub lane_width: Option<u32>,
    /// Invocations per workgroup on the GPU; `None` for the default (64).
    pub workgroup: Option<u32>,
}

/// One (B, D) point.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// State dimension D.
    pub d: usize,
    /// Lanes B.
    pub lanes: usize,
    /// CPU milliseconds per evaluation (value and gradient of every lane), all threads.
    pub cpu_ms: Option<f64>,
    /// GPU milliseconds per evaluation, host work and transfers included.
    pub gpu_ms: Option<f64>,
    /// `cpu_ms / gpu_ms`: above 1 the region path is faster.
    pub gpu_speedup: Option<f64>,
    /// Largest relative difference between the two, over values and gradients.
    pub max_rel_diff: Option<f64>,
    /// Megabytes sent to the GPU per evaluation (tables, host numbers, seeds).
    pub upload_mb: Option<f64>,
    /// Megabytes read back per evaluation (results the host reads, adjoints, progress).
    pub download_mb: Option<f64>,
    /// Dispatches per evaluation.
    pub dispatches: Option<u64>,
    /// The most invocations per lane a region ran with.
    pub lane_width: Option<u64>,
    /// Round trips per evaluation: the host waited for the device and read numbers back.
    pub syncs: Option<u64>,
    /// The share of one warm evaluation's time the host spent in those waits (the device
    /// running what was submitted, and the copies back); the rest is the host's walk,
    /// encoding and uploads.
    pub wait_share: Option<f64>,
    /// Op records the regions of one evaluation ran forward (the reverse pass runs them
    /// again, backwards).
    pub records: Option<u64>,
    /// Nanoseconds of those waits per record run in one warm evaluation, taking the reverse
    /// pass to run as many records as the forward regions (it runs the tape's, about as
    /// many): when the device has lanes to spare, about one record's latency.
    pub wait_ns_per_record: Option<f64>,
    /// Where the regions ran, or why the point was skipped.
    pub note: String,
}

/// The grid.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The adapter.
    pub adapter: String,
    /// CPU worker threads.
    pub threads: usize,
    /// One row per point.
    pub rows: Vec<Row>,
}

fn bindings(d: usize, lanes: std::ops::Range<usize>) -> Bindings {
    let (q, r): (Vec<f64>, Vec<f64>) = lanes.map(noise).unzip();
    Bindings::new()
        .scalar("d", d as f64)
        .lanes("q", q)
        .and_then(|b| b.lanes("r", r))
        .expect("equal lane counts")
}

fn options(block: usize) -> RunOptions {
    RunOptions {
        grad: GradSpec::Some(vec!["q".into(), "r".into()]),
        lane_block: block,
        ..Default::default()
    }
}

/// Values and gradients, lane after lane: `[value, dq, dr]` each.
fn numbers(out: &Outcome) -> Vec<f64> {
    let mut v = Vec::with_capacity(out.lanes * 3);
    for l in 0..out.lanes {
        let x = out.values[l]
            .as_ref()
            .ok()
            .and_then(|v| v.as_number())
            .unwrap_or(f64::NAN);
        v.push(x);
        for g in &out.grads {
            v.push(g.per_lane[l]);
        }
    }
    v
}

/// An upper bound on the numbers one lane's walk keeps in the data arena (the same again
/// goes to the adjoints): per step about five D x D matrices and a few vectors, kept for the
/// gradient. One walk counted 5,400, 34,044 and 440,220 at D = 2, 8 and 32; this gives
/// 5,920, 39,520 and 519,520.
fn arena_per_lane(d: usize) -> u64 {
    let d = d as u64;
    80 * (6 * d * d + 10 * d + 30)
}

thread_local! {
    static CPU: RefCell<Session<f32>> = RefCell::new(Session::new());
}

/// Runs the grid, handing each point to `on_row` as soon as it is measured.
pub fn run(cfg: &Config, mut on_row: impl FnMut(&Row)) -> Result<Report, String> {
    let program = Program::parse(KALMAN_ND).map_err(|e| e.to_string())?;
    let ctx = GpuContext::shared().map_err(|e| e.to_string())?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()
        .map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for &d in &cfg.dims {
        for &lanes in &cfg.lanes {
            let numbers_needed = lanes as u64 * arena_per_lane(d);
            if numbers_needed > cfg.max_numbers {
                rows.push(Row {
                    d,
                    lanes,
                    note: format!("skipped: about {numbers_needed} numbers per walk"),
                    ..Row::default()
                });
            } else {
                rows.push(point(cfg, &program, &ctx, &pool, d, lanes));
            }
            on_row(rows.last().expect("just pushed"));
        }
    }
    Ok(Report {
        adapter: ctx.adapter().name.clone(),
        threads: cfg.threads,
        rows,
    })
}

fn point(
    cfg: &Config,
    program: &Program,
    ctx: &Arc<GpuContext>,
    pool: &rayon::ThreadPool,
    d: usize,
    lanes: usize,
) -> Row {
    use rayon::prelude::*;
    let block = lanes.div_ceil(cfg.threads.max(1)).clamp(1, CPU_BLOCK);
    let blocks: Vec<Bindings> = (0..lanes)
        .step_by(block)
        .map(|s| bindings(d, s..(s + block).min(lanes)))
        .collect();
    let cpu_run = || -> Vec<Outcome> {
        pool.install(|| {
            blocks
                .par_iter()
                .map(|b| {
                    CPU.with(|s| {
                        s.borrow_mut()
                            .run(program, b, &options(block))
                            .cloned()
                            .expect("bound")
                    })
                })
                .collect()
        })
    };
    let want: Vec<f64> = cpu_run().iter().flat_map(numbers).collect();
    let cpu_s = seconds_per_warm_call(cfg.min_sample, cfg.samples, || {
        std::hint::black_box(cpu_run());
    });

    let all = bindings(d, 0..lanes);
    let mut gpu = Session::<f32>::new();
    let mut device = GpuRegions::new(Arc::clone(ctx), RegionPolicy::Always);
    if let Some(w) = cfg.lane_width {
        device = device.with_lane_width(w);
    }
    if let Some(n) = cfg.workgroup {
        device = device.with_workgroup(n);
    }
    let traffic = device.traffic();
    gpu.set_device(Some(Box::new(device)));
    let before = gpu.region_counts();
    let got = gpu.run(program, &all, &options(0)).cloned().expect("bound");
    let after = gpu.region_counts();
    let records = after.ops - before.ops;
    let mb = |b: u64| b as f64 / 1e6;
    let (upload_mb, download_mb, dispatches, lane_width, syncs) = (
        Some(mb(traffic.uploaded())),
        Some(mb(traffic.downloaded())),
        Some(traffic.dispatches()),
        Some(traffic.widest()),
        Some(traffic.syncs()),
    );
    if let Some(e) = got.common_error() {
        return Row {
            d,
            lanes,
            cpu_ms: Some(cpu_s * 1e3),
            upload_mb,
            download_mb,
            dispatches,
            lane_width,
            syncs,
            records: Some(records),
            note: format!("GPU failed: {e}"),
            ..Row::default()
        };
    }
    let on_gpu = after.device_regions > before.device_regions
        && after.device_reverse > before.device_reverse;
    let got = numbers(&got);
    let max_rel = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-30))
        .fold(0.0f64, f64::max);
    let gpu_s = seconds_per_warm_call(cfg.min_sample, cfg.samples, || {
        std::hint::black_box(gpu.run(program, &all, &options(0)).expect("bound"));
    });
    let waited = traffic.waited_seconds();
    let t = std::time::Instant::now();
    std::hint::black_box(gpu.run(program, &all, &options(0)).expect("bound"));
    let wall = t.elapsed().as_secs_f64();
    let warm_wait = traffic.waited_seconds() - waited;
    let wait_share = Some(warm_wait / wall.max(1e-12));
    let wait_ns_per_record = Some(warm_wait * 1e9 / (2 * records).max(1) as f64);
    Row {
        d,
        lanes,
        cpu_ms: Some(cpu_s * 1e3),
        gpu_ms: Some(gpu_s * 1e3),
        gpu_speedup: Some(cpu_s / gpu_s),
        max_rel_diff: Some(max_rel),
        upload_mb,
        download_mb,
        dispatches,
        lane_width,
        syncs,
        wait_share,
        records: Some(records),
        wait_ns_per_record,
        note: if on_gpu {
            "regions on the GPU".into()
        } else {
            "regions on the CPU (the device declined them)".into()
        },
    }
}

/// The table's header. The traffic columns are those of one evaluation (the first, which
/// also uploads the region tables); W is the most invocations per lane a region ran with;
/// `syncs` the host's waits for the device per evaluation, and `wait %` their share of one
/// warm evaluation (the device's run and the copies back; the rest is host work); `records`
/// the op records of one evaluation's regions, and `ns/rec` the waits per record run
/// (forward and backwards).
pub fn print_header(cfg: &Config) {
    let wg = cfg.workgroup.unwrap_or(runtime_gpu::region::WORKGROUP);
    println!(
        "GPU region path vs CPU ({} threads), Kalman NLL value + gradient, f32, workgroups of \
         {wg} invocations",
        cfg.threads
    );
    println!(
        "{:>4} {:>7} {:>11} {:>11} {:>9} {:>12} {:>9} {:>9} {:>6} {:>3} {:>5} {:>6} {:>7} {:>8}  \
         where",
        "D",
        "lanes",
        "cpu ms",
        "gpu ms",
        "gpu/cpu",
        "max rel diff",
        "up MB",
        "down MB",
        "disp",
        "W",
        "syncs",
        "wait %",
        "records",
        "ns/rec"
    );
}

/// One line of the table.
pub fn print_row(row: &Row) {
    let f = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
    println!(
        "{:>4} {:>7} {:>11} {:>11} {:>9} {:>12} {:>9} {:>9} {:>6} {:>3} {:>5} {:>6} {:>7} {:>8}  {}",
        row.d,
        row.lanes,
        f(row.cpu_ms, 3),
        f(row.gpu_ms, 3),
        f(row.gpu_speedup, 2),
        row.max_rel_diff.map_or("-".into(), |v| format!("{v:.1e}")),
        f(row.upload_mb, 3),
        f(row.download_mb, 3),
        row.dispatches.map_or("-".into(), |n| n.to_string()),
        row.lane_width.map_or("-".into(), |n| n.to_string()),
        row.syncs.map_or("-".into(), |n| n.to_string()),
        f(row.wait_share.map(|x| x * 100.0), 1),
        row.records.map_or("-".into(), |n| n.to_string()),
        f(row.wait_ns_per_record, 0),
        row.note
    );
}

/// Prints, per D, the smallest B where the GPU is faster.
pub fn print_contour(r: &Report) {
    println!("Adapter: {}", r.adapter);
    let mut dims: Vec<usize> = r.rows.iter().map(|x| x.d).collect();
    dims.dedup();
    println!("Contour (smallest B at which the GPU region path is faster):");
    for d in dims {
        let first = r
            .rows
            .iter()
            .filter(|x| x.d == d && x.gpu_speedup.is_some_and(|s| s > 1.0))
            .map(|x| x.lanes)
            .min();
        match first {
            Some(b) => println!("  D = {d:>3}: B >= {b}"),
            None => println!("  D = {d:>3}: not at the B measured"),
        }
    }
}
