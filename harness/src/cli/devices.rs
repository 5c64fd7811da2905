//! `ndvm devices`: the GPU adapters found, the one ndvm would use and why, its limits, and its
//! measured dispatch costs (an empty dispatch round trip, upload and download bandwidth).
//!
//! Exit status 0 also when there is no adapter (the output says so and why); 2 for a usage error.

use clap::Args;
use runtime_gpu::region_costs::Probe;
use runtime_gpu::{list_adapters, AdapterSummary, ContextOptions, DispatchCosts, GpuContext};
use serde_json::{json, Value};
use shared_ir::region::RegionCosts;
use std::process::ExitCode;

/// Arguments of `ndvm devices`.
#[derive(Args, Debug)]
pub struct DevicesArgs {
    /// Skip measuring the dispatch costs (they take a second or so).
    #[arg(long)]
    pub no_measure: bool,
    /// Measure the region cost model's terms again, replacing the cached ones.
    #[arg(long, conflicts_with = "no_measure")]
    pub measure: bool,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    pub format: String,
}

fn adapter_json(a: &AdapterSummary, selected: bool) -> Value {
    let l = &a.limits;
    json!({
        "name": a.name,
        "backend": a.backend,
        "device_type": a.device_type,
        "driver": a.driver,
        "driver_info": a.driver_info,
        "selected": selected,
        "limits": {
            "max_buffer_size": l.max_buffer_size,
            "max_storage_buffer_binding_size": l.max_storage_buffer_binding_size,
            "max_workgroup_size_x": l.max_workgroup_size_x,
            "max_invocations_per_workgroup": l.max_invocations_per_workgroup,
            "max_workgroups_per_dimension": l.max_workgroups_per_dimension,
            "max_workgroup_storage_bytes": l.max_workgroup_storage_bytes,
        },
    })
}

fn region_json(c: &RegionCosts) -> Value {
    json!({
        "dispatch_us": c.dispatch_us,
        "upload_gib_per_s": c.upload_gib_per_s,
        "download_gib_per_s": c.download_gib_per_s,
        "device_ns_per_work": c.device_ns_per_work,
        "device_step_ns": c.device_step_ns,
        "cpu_ns_per_work": c.cpu_ns_per_work,
        "auto_collects_regions_from_lanes": auto_lanes(c),
    })
}

/// The smallest power-of-two lane count at which `auto` collects regions for the GPU.
fn auto_lanes(c: &RegionCosts) -> Option<usize> {
    (0..=22)
        .map(|k| 1usize << k)
        .find(|&l| l >= crate::device::AUTO_MIN_LANES && c.can_pay_at(l))
}

fn probe_json(p: &Probe) -> Value {
    json!({
        "lanes": p.lanes,
        "ops": p.ops,
        "device_seconds": p.device_seconds,
        "cpu_seconds": p.cpu_seconds,
    })
}

fn costs_json(c: &DispatchCosts) -> Value {
    json!({
        "empty_dispatch_us": c.empty_dispatch_us,
        "upload_gib_per_s": c.upload_gib_per_s,
        "download_gib_per_s": c.download_gib_per_s,
        "transfer_bytes": c.transfer_bytes,
    })
}

/// Bytes as `2.00 GiB`, `128 MiB`, `32 KiB`.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.2} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{} MiB", n >> 20),
        n => format!("{} KiB", n >> 10),
    }
}

/// Runs `ndvm devices`.
pub fn main(args: DevicesArgs) -> ExitCode {
    if args.format != "text" && args.format != "json" {
        eprintln!("error: unknown format `{}` (use text or json)", args.format);
        return ExitCode::from(2);
    }
    let options = ContextOptions::from_env();
    let adapters = list_adapters(&options);
    let context = GpuContext::shared();
    let chosen = context.as_ref().ok().map(|c| c.adapter().clone());
    let costs = match (&context, args.no_measure) {
        (Ok(ctx), false) => Some(ctx.dispatch_costs()),
        _ => None,
    };
    // With --measure, the synthetic regions' timings too.
    let (region, probes) = match (&context, args.no_measure, args.measure) {
        (Ok(ctx), false, true) => match runtime_gpu::region_costs::remeasure(ctx) {
            Ok(m) => (Some(Ok(m.costs)), m.probes),
            Err(e) => (Some(Err(e)), Vec::new()),
        },
        (Ok(ctx), false, false) => (Some(ctx.region_costs()), Vec::new()),
        _ => (None, Vec::new()),
    };
    let is_chosen = |a: &AdapterSummary| chosen.as_ref().is_some_and(|c| c == a);

    if args.format == "json" {
        let out = json!({
            "backends": format!("{:?}", options.backends),
            "adapters": adapters.iter().map(|a| adapter_json(a, is_chosen(a))).collect::<Vec<_>>(),
            "selected": context.as_ref().ok().map(|c| json!({
                "name": c.adapter().name,
                "reason": c.selection_reason(),
            })),
            "error": context.as_ref().err().map(ToString::to_string),
            "dispatch_costs": costs.as_ref().and_then(|c| c.as_ref().ok()).map(costs_json),
            "dispatch_costs_error": costs.as_ref().and_then(|c| c.as_ref().err()).map(ToString::to_string),
            "region_costs": region.as_ref().and_then(|c| c.as_ref().ok()).map(region_json),
            "region_costs_error": region.as_ref().and_then(|c| c.as_ref().err()).map(ToString::to_string),
            "region_probes": probes.iter().map(probe_json).collect::<Vec<_>>(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serialisable")
        );
        return ExitCode::SUCCESS;
    }

    println!("GPU adapters ({:?}):", options.backends);
    if adapters.is_empty() {
        println!("  none");
    }
    for a in &adapters {
        let l = &a.limits;
        println!(
            "{} {} [{}, {}] driver {} {}",
            if is_chosen(a) { "  *" } else { "   " },
            a.name,
            a.backend,
            a.device_type,
            a.driver,
            a.driver_info
        );
        println!(
            "      max buffer {}, max storage binding {}, workgroup up to {} x ({} invocations), \
             workgroup memory {}, {} workgroups per dimension",
            bytes(l.max_buffer_size),
            bytes(l.max_storage_buffer_binding_size),
            l.max_workgroup_size_x,
            l.max_invocations_per_workgroup,
            bytes(u64::from(l.max_workgroup_storage_bytes)),
            l.max_workgroups_per_dimension
        );
    }
    match &context {
        Ok(ctx) => println!(
            "Selected: {} ({})",
            ctx.adapter().name,
            ctx.selection_reason()
        ),
        Err(e) => println!("Selected: none: {e}"),
    }
    match costs {
        Some(Ok(c)) => println!(
            "Dispatch costs (measured once): empty dispatch round trip {:.1} us, upload {:.2} GiB/s, \
             download {:.2} GiB/s ({} per transfer)",
            c.empty_dispatch_us,
            c.upload_gib_per_s,
            c.download_gib_per_s,
            bytes(c.transfer_bytes)
        ),
        Some(Err(e)) => println!("Dispatch costs: not measured: {e}"),
        None => {}
    }
    match region {
        Some(Ok(c)) => {
            println!(
                "Region cost model (cached; --measure to measure again): device {:.4} ns per \
                 number of region work and lane when full, {:.1} ns per step when not; CPU \
                 {:.4} ns (one core)",
                c.device_ns_per_work, c.device_step_ns, c.cpu_ns_per_work
            );
            for p in &probes {
                println!(
                    "  {} chained multiplies over {} lanes: device {:.3} ms, one CPU core {:.3} ms",
                    p.ops,
                    p.lanes,
                    p.device_seconds * 1e3,
                    p.cpu_seconds * 1e3
                );
            }
            match auto_lanes(&c) {
                Some(l) => println!("  --device auto collects regions for the GPU from {l} lanes"),
                None => println!("  --device auto keeps every region on the CPU here"),
            }
        }
        Some(Err(e)) => println!("Region cost model: not measured: {e}"),
        None => {}
    }
    ExitCode::SUCCESS
}
