//! The region cost model's terms, measured on this machine and cached on disk.
//!
//! Measuring takes a few hundred milliseconds (on Mesa's software driver, most of a second), so
//! the result is kept in `$NDVM_CACHE_DIR` (else `$XDG_CACHE_HOME/ndvm`, else `~/.cache/ndvm`)
//! under a name made from the adapter and driver, and read back by later runs. `ndvm devices
//! --measure` measures again. `NDVM_CACHE_DIR=` (empty) turns the cache off.

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::region::{GpuRegions, RegionPolicy};
use shared_ir::region::{encode_op, MaskBits, OpRecord, Opcode, Region, RegionCosts};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The synthetic regions tried, fewest lanes first: (lanes, ops). The first (too few lanes to
/// fill a GPU) gives the latency of one step; the others are measured in turn until one takes
/// longer than [`ENOUGH_SECONDS`], and the last measured gives the throughput, so a fast
/// device is measured with enough lanes to fill it (a large GPU runs a few hundred thousand
/// invocations at once).
const SIZES: [(u32, u32); 3] = [(4096, 64), (32_768, 128), (262_144, 256)];

/// A synthetic run this long is measure enough.
const ENOUGH_SECONDS: f64 = 0.2;

/// One synthetic region's timing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// Lanes.
    pub lanes: u32,
    /// Chained multiplies per lane.
    pub ops: u32,
    /// Device seconds (dispatch to completion, best of 3, less an empty dispatch).
    pub device_seconds: f64,
    /// The same multiplies on one CPU core, seconds (best of 3).
    pub cpu_seconds: f64,
}

/// What a measurement found: the cost model's terms and the timings they come from.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The terms.
    pub costs: RegionCosts,
    /// The synthetic regions timed, fewest lanes first.
    pub probes: Vec<Probe>,
}

/// The cache file of `ctx`'s adapter, if caching is on.
fn cache_path(ctx: &GpuContext) -> Option<PathBuf> {
    let dir = match std::env::var_os("NDVM_CACHE_DIR") {
        Some(d) if d.is_empty() => return None,
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_CACHE_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d).join("ndvm"),
            _ => PathBuf::from(std::env::var_os("HOME")?)
                .join(".cache")
                .join("ndvm"),
        },
    };
    let a = ctx.adapter();
    let key: String = format!("{}-{}-{}", a.name, a.backend, a.driver_info)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Some(dir.join(format!("region-costs-{key}.txt")))
}

fn to_text(c: &RegionCosts) -> String {
    format!(
        "dispatch_us {}\nupload_gib_per_s {}\ndownload_gib_per_s {}\ndevice_ns_per_work {}\n\
         device_step_ns {}\ncpu_ns_per_work {}\n",
        c.dispatch_us,
        c.upload_gib_per_s,
        c.download_gib_per_s,
        c.device_ns_per_work,
        c.device_step_ns,
        c.cpu_ns_per_work
    )
}

fn from_text(text: &str) -> Option<RegionCosts> {
    let mut v = [f64::NAN; 6];
    let names = [
        "dispatch_us",
        "upload_gib_per_s",
        "download_gib_per_s",
        "device_ns_per_work",
        "device_step_ns",
        "cpu_ns_per_work",
    ];
    for line in text.lines() {
        let (k, x) = line.split_once(' ')?;
        let i = names.iter().position(|n| *n == k)?;
        v[i] = x.trim().parse().ok()?;
    }
    v.iter().all(|x| x.is_finite()).then_some(RegionCosts {
        dispatch_us: v[0],
        upload_gib_per_s: v[1],
        download_gib_per_s: v[2],
        device_ns_per_work: v[3],
        device_step_ns: v[4],
        cpu_ns_per_work: v[5],
    })
}

/// The cached costs of `ctx`'s adapter, or new measurements (then cached).
pub(crate) fn cached_or_measured(ctx: &Arc<GpuContext>) -> Result<RegionCosts, GpuError> {
    let path = cache_path(ctx);
    if let Some(c) = path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| from_text(&t))
    {
        log::info!("ndvm GPU: region costs from the cache: {c:?}");
        return Ok(c);
    }
    let c = measure(ctx)?.costs;
    if let Some(p) = path {
        store(&p, &c);
    }
    Ok(c)
}

/// Measures the costs again and replaces the cached ones.
pub fn remeasure(ctx: &Arc<GpuContext>) -> Result<Measured, GpuError> {
    let m = measure(ctx)?;
    if let Some(p) = cache_path(ctx) {
        store(&p, &m.costs);
    }
    Ok(m)
}

fn store(path: &std::path::Path, c: &RegionCosts) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, to_text(c)));
    if let Err(e) = written {
        log::info!(
            "ndvm GPU: could not cache the region costs in {}: {e}",
            path.display()
        );
    }
}

/// A region of `ops` multiplies chained over one per-lane number, `lanes` lanes.
fn synthetic(lanes: u32, ops: u32) -> (Region, Vec<f32>) {
    let mut region = Region {
        lanes,
        ..Region::default()
    };
    let mut offset = 0u32;
    let mut slot = |region: &mut Region, per_lane: bool| {
        region
            .slots
            .extend_from_slice(&[offset, 1, u32::from(per_lane), u32::MAX, 1, 1]);
        offset += if per_lane { lanes } else { 1 };
    };
    // Slot 0: x per lane; slot 1: a uniform constant; slot i + 2: x c^(i + 1).
    slot(&mut region, true);
    slot(&mut region, false);
    for i in 0..ops {
        slot(&mut region, true);
        let rec = OpRecord {
            opcode: Opcode::Binary,
            sub: shared_ir::BinaryOp::Mul.code(),
            out: i + 2,
            a: if i == 0 { 0 } else { i + 1 },
            b: 1,
            ..OpRecord::default()
        };
        encode_op(&rec, &mut region.ops);
    }
    let mut data = vec![1.0f32; offset as usize];
    data[lanes as usize] = 1.0001;
    (region, data)
}

/// Times the synthetic regions on the device (dispatch to completion, data already there) and
/// the same multiplies on the CPU, and takes the dispatch and bandwidth figures of
/// [`GpuContext::dispatch_costs`].
fn measure(ctx: &Arc<GpuContext>) -> Result<Measured, GpuError> {
    let d = ctx.dispatch_costs()?;
    let mut probes = Vec::new();
    let limits = ctx.limits();
    let binding = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    for (lanes, ops) in SIZES {
        // A probe the adapter cannot hold ends the measurement at the one before it.
        let numbers = (u64::from(ops) + 2) * u64::from(lanes);
        if !probes.is_empty() && numbers * 4 > binding {
            break;
        }
        let (region, data) = synthetic(lanes, ops);
        let mut dev = GpuRegions::new(Arc::clone(ctx), RegionPolicy::Always);
        let masks = MaskBits::default();
        dev.run_forward(
            &region,
            &masks,
            &data,
            std::slice::from_ref(&(0..data.len())),
        )?;
        // The first run (which uploaded the data) ends before any is timed, and ran whole.
        dev.check_forward(&region)?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let plan = dev.upload(&region, &masks, &data, &[], false)?;
            let t = Instant::now();
            dev.dispatch(&region, &masks, &plan, false, None)?;
            ctx.wait("timing a region", None)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        // A run the driver cut short would be timed too short.
        dev.check_forward(&region)?;
        probes.push(Probe {
            lanes,
            ops,
            device_seconds: (best - d.empty_dispatch_us * 1e-6).max(0.0),
            cpu_seconds: cpu_time(lanes as usize, ops as usize),
        });
        if best > ENOUGH_SECONDS {
            break;
        }
    }
    let work = |p: &Probe| f64::from(p.ops) * f64::from(p.lanes);
    let (first, last) = (probes[0], probes[probes.len() - 1]);
    let costs = RegionCosts {
        dispatch_us: d.empty_dispatch_us,
        upload_gib_per_s: d.upload_gib_per_s,
        download_gib_per_s: d.download_gib_per_s,
        device_ns_per_work: (last.device_seconds * 1e9 / work(&last)).max(1e-6),
        device_step_ns: (first.device_seconds * 1e9 / f64::from(first.ops)).max(1e-6),
        cpu_ns_per_work: (last.cpu_seconds * 1e9 / work(&last)).max(1e-6),
    };
    log::info!("ndvm GPU: measured region costs {costs:?} from {probes:?}");
    Ok(Measured { costs, probes })
}

/// Seconds the CPU takes for `ops` multiplies over `lanes` lanes, one loop per op (best of 3).
fn cpu_time(lanes: usize, ops: usize) -> f64 {
    let mut cpu = vec![1.0f32; (ops + 1) * lanes];
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        for i in 0..ops {
            let (src, dst) = cpu.split_at_mut((i + 1) * lanes);
            for (o, &x) in dst[..lanes].iter_mut().zip(&src[i * lanes..]) {
                *o = x * 1.0001;
            }
        }
        std::hint::black_box(&cpu);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_survive_the_cache_format() {
        let c = RegionCosts {
            dispatch_us: 56.25,
            upload_gib_per_s: 7.5,
            download_gib_per_s: 4.25,
            device_ns_per_work: 0.0125,
            device_step_ns: 51.2,
            cpu_ns_per_work: 0.375,
        };
        assert_eq!(from_text(&to_text(&c)), Some(c));
        assert_eq!(from_text("dispatch_us x\n"), None);
        assert_eq!(from_text(""), None);
    }
}
