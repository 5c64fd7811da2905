//! The region device: runs the numeric regions of a walk ([`shared_ir::region`]) with the
//! region interpreter (`shaders::REGION_FORWARD`, `shaders::REGION_REVERSE`), compiled once:
//! a few invocations per lane share each op's elements (see [`lane_width`]), and a whole
//! region is one dispatch on a hardware adapter.
//!
//! The device keeps the walk's data arena in one storage buffer. A forward call uploads the
//! ranges the host wrote since the last call (its own numbers: inputs, constants, what the CPU
//! computed; never the region's results), runs the region's records (one dispatch on a
//! hardware adapter; on Mesa's software driver, which silently ends an invocation after 65,535
//! loop visits, dispatches of a few thousand each: see [`RegionPlan`]), and leaves the results
//! on the device: the host reads back only the numbers it needs ([`GpuRegions::read_data`]),
//! and with them the lanes' progress counters of the pass, so a forward region costs no wait
//! of its own. A reverse call clears the adjoint arena,
//! seeds the result's adjoint, runs the tape's records backwards in the same kind of
//! dispatches over the values already on the device, and reads back the adjoints the caller
//! asks for. [`Traffic`] counts the bytes moved each way.
//!
//! With [`RegionPolicy::Auto`] the device takes a region only when the cost model of
//! [`shared_ir::region::RegionCosts`], with costs measured on this machine, expects it to be
//! faster than the CPU; with [`RegionPolicy::Always`] it takes every region it can run.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the device, its policy and limits, and the [`RegionDevice`] it implements |
//! | `plan.rs` | cutting a region into dispatches, and the invocations per lane |
//! | `gpu.rs` | buffers, uploads, dispatches and read-backs |
//! | [`twin`] | the interpreter's CPU twin, a region device written to read like the shader |

mod gpu;
mod plan;
pub mod twin;

pub use plan::{
    lane_width, op_visits, shared_elements, RegionPlan, FILL_INVOCATIONS, MAX_LANE_WIDTH,
    SOFTWARE_OP_VISITS,
};
pub use twin::{TwinCounts, TwinRegions, SOFTWARE_LOOP_CAP};

use crate::context::GpuContext;
use crate::error::GpuError;
use gpu::Grow;
use shared_ir::region::{DeviceResult, MaskBits, Region, RegionCosts, RegionDevice, RegionStats};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Invocations per workgroup (the shader's `WG`) unless [`GpuRegions::with_workgroup`] sets
/// more.
pub const WORKGROUP: u32 = 64;
/// The largest matrix the interpreter factors (its private arrays hold 8 x 8).
pub const MAX_FACTOR: usize = 8;
/// Loop visits one invocation may make in one dispatch, as estimated by [`op_visits`], on
/// Mesa's software driver (which ends an invocation after 65,535 loop-header visits; the
/// estimate is an upper bound for the records' own loops, and the budget leaves room for the
/// loops the compiler makes of the interpreter's dispatch).
pub const SOFTWARE_VISIT_BUDGET: u64 = 2_048;
/// The same on other adapters, which have no such cap: only a bound on one dispatch's length.
pub const HARDWARE_VISIT_BUDGET: u64 = 1 << 24;
/// The most work (numbers per lane) one op may have on the software driver, whose loop cap
/// one invocation must stay under.
pub const SOFTWARE_MAX_OP_WORK: u64 = 4_096;

/// When the device takes a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionPolicy {
    /// Every region it can run (`--device gpu`).
    Always,
    /// The regions the cost model expects to run faster here (`--device auto`).
    Auto,
}
/// The GPU region device.
#[derive(Debug)]
pub struct GpuRegions {
    ctx: Arc<GpuContext>,
    policy: RegionPolicy,
    budget: u64,
    /// Invocations per lane, when set (tests); else [`lane_width`] chooses per region.
    width: Option<u32>,
    /// Invocations per workgroup.
    pub(crate) workgroup: u32,
    software: bool,
    /// Why the region just taken under [`RegionPolicy::Always`] cannot run here.
    refused: Option<GpuError>,
    pub(crate) data: Grow,
    slots: Grow,
    ops: Grow,
    aux: Grow,
    masks: Grow,
    adj: Grow,
    params: Grow,
    /// The lanes' progress counters of forward passes, and of reverse passes (apart, so a
    /// reverse pass leaves the forward pass's counters to be read).
    progress: Grow,
    progress_back: Grow,
    /// The record the lanes of the last forward pass must have reached, and their number,
    /// while their progress counters are not read back: they come back with the next read,
    /// so a forward region costs no wait of its own.
    unchecked: Option<(u32, usize)>,
    /// A pass the driver cut short in this walk: its numbers on the device are wrong, so
    /// every later call of the walk fails with this error.
    cut_short: Option<GpuError>,
    /// What the device moved and ran, over its life (shared with [`GpuRegions::traffic`]).
    traffic: Arc<Traffic>,
}

/// What a region device moved across the bus and dispatched, over its life.
#[derive(Debug, Default)]
pub struct Traffic {
    uploaded: AtomicU64,
    downloaded: AtomicU64,
    dispatches: AtomicU64,
    width: AtomicU64,
    syncs: AtomicU64,
    waited_ns: AtomicU64,
}
impl Traffic {
    /// Bytes sent to the device (tables, host numbers, seeds).
    pub fn uploaded(&self) -> u64 {
        self.uploaded.load(Ordering::Relaxed)
    }
    /// Bytes read back (the numbers the host asked for, adjoints, progress counters).
    pub fn downloaded(&self) -> u64 {
        self.downloaded.load(Ordering::Relaxed)
    }
    /// Dispatches made.
    pub fn dispatches(&self) -> u64 {
        self.dispatches.load(Ordering::Relaxed)
    }
    /// The most invocations per lane a region ran with.
    pub fn widest(&self) -> u64 {
        self.width.load(Ordering::Relaxed)
    }
    /// Times the host waited for the device to finish and send numbers back (each a round
    /// trip: the region's dispatches, then the copy).
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }
    /// Seconds the host spent in those waits: the device's run of what was submitted before
    /// them, and the copies back.
    pub fn waited_seconds(&self) -> f64 {
        self.waited_ns.load(Ordering::Relaxed) as f64 * 1e-9
    }
    pub(crate) fn add_wait(&self, took: std::time::Duration) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.waited_ns.fetch_add(ns, Ordering::Relaxed);
    }
    pub(crate) fn add_upload(&self, bytes: u64) {
        self.uploaded.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn add_download(&self, bytes: u64) {
        self.downloaded.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn add_dispatches(&self, n: u64, width: u32) {
        self.dispatches.fetch_add(n, Ordering::Relaxed);
        self.width.fetch_max(u64::from(width), Ordering::Relaxed);
    }
}
impl GpuRegions {
    /// A region device on `ctx`.
    pub fn new(ctx: Arc<GpuContext>, policy: RegionPolicy) -> Self {
        let software = ctx.adapter().device_type == "Cpu"
            || ctx.adapter().name.to_ascii_lowercase().contains("llvmpipe");
        let budget = if software {
            SOFTWARE_VISIT_BUDGET
        } else {
            HARDWARE_VISIT_BUDGET
        };
        GpuRegions {
            ctx,
            policy,
            budget,
            width: None,
            workgroup: WORKGROUP,
            software,
            refused: None,
            data: Grow::default(),
            slots: Grow::default(),
            ops: Grow::default(),
            aux: Grow::default(),
            masks: Grow::default(),
            adj: Grow::default(),
            params: Grow::default(),
            progress: Grow::default(),
            progress_back: Grow::default(),
            unchecked: None,
            cut_short: None,
            traffic: Arc::default(),
        }
    }

    /// The device's counters of bytes moved and dispatches made, readable after the device
    /// is handed to a session.
    pub fn traffic(&self) -> Arc<Traffic> {
        Arc::clone(&self.traffic)
    }

    /// Sets the loop-visit budget of one dispatch (tests use a small one to force many).
    pub fn with_visit_budget(mut self, budget: u64) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// Sets the invocations per lane of every region (a power of two up to
    /// [`MAX_LANE_WIDTH`]; tests use it to run each width on every adapter).
    pub fn with_lane_width(mut self, width: u32) -> Self {
        self.width = Some(width.clamp(1, MAX_LANE_WIDTH).next_power_of_two());
        self
    }

    /// Sets the invocations per workgroup (a power of two from [`WORKGROUP`] to 1024, and no
    /// more than the adapter allows): more lanes share a workgroup, so more of a warp's loads
    /// fall on neighbouring lanes, and fewer workgroups spread over the device.
    pub fn with_workgroup(mut self, invocations: u32) -> Self {
        let limits = self.ctx.limits();
        let allowed = limits
            .max_invocations_per_workgroup
            .min(limits.max_workgroup_size_x)
            .clamp(WORKGROUP, 1024);
        // The largest power of two the adapter allows, so that every lane width divides it.
        let most = 1 << allowed.ilog2();
        self.workgroup = invocations
            .clamp(WORKGROUP, most)
            .next_power_of_two()
            .min(most);
        self
    }

    /// The invocations per lane for `region`: the width set, but on a software driver never
    /// fewer than its loop cap needs.
    pub(crate) fn width_for(&self, region: &Region, reverse: bool) -> u32 {
        let chosen = lane_width(region, reverse, self.software);
        match self.width {
            Some(w) if self.software => w.max(chosen),
            Some(w) => w,
            None => chosen,
        }
    }

    /// The context the device runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The measured costs `auto` decides with.
    pub fn costs(&self) -> Result<RegionCosts, GpuError> {
        self.ctx.region_costs()
    }

    /// Whether the device can run a region of this size at all (and why not).
    pub fn check(&self, stats: &RegionStats) -> Result<(), GpuError> {
        let limits = self.ctx.limits();
        if stats.largest_factor > MAX_FACTOR {
            return Err(GpuError::Unsupported(format!(
                "the region interpreter factors matrices of at most {MAX_FACTOR}x{MAX_FACTOR}; \
                 this region factors {0}x{0}",
                stats.largest_factor
            )));
        }
        if self.software && stats.heaviest > SOFTWARE_MAX_OP_WORK {
            return Err(GpuError::Unsupported(format!(
                "an op of {} numbers per lane is too long for one invocation on a software \
                 driver ({SOFTWARE_MAX_OP_WORK} at most)",
                stats.heaviest
            )));
        }
        let groups =
            (stats.lanes as u64 * u64::from(MAX_LANE_WIDTH)).div_ceil(u64::from(self.workgroup));
        let most = u64::from(limits.max_workgroups_per_dimension).pow(2);
        if groups > most {
            return Err(GpuError::Unsupported(format!(
                "{} lanes in one walk exceed one dispatch ({} at most)",
                stats.lanes,
                most * u64::from(self.workgroup) / u64::from(MAX_LANE_WIDTH)
            )));
        }
        let binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        for (what, n) in [("data", stats.data_len), ("adjoint", stats.adj_len)] {
            let bytes = n as u64 * 4;
            if bytes > binding || n as u64 > u64::from(u32::MAX) {
                return Err(GpuError::BufferTooLarge {
                    label: format!("ndvm.region.{what}"),
                    bytes,
                    limit: binding,
                    which: "max_storage_buffer_binding_size",
                });
            }
        }
        Ok(())
    }
}

impl RegionDevice<f32> for GpuRegions {
    fn describe(&self) -> String {
        format!("GPU region interpreter on {}", self.ctx.adapter().name)
    }

    fn defer_at(&mut self, lanes: usize) -> bool {
        // A new walk: a forward pass of the last one whose results it never read does not
        // matter any more, nor does a pass it saw cut short.
        self.unchecked = None;
        self.cut_short = None;
        match self.policy {
            RegionPolicy::Always => true,
            RegionPolicy::Auto => match self.costs() {
                Ok(c) => c.can_pay_at(lanes),
                Err(e) => {
                    log::warn!("ndvm GPU: no region costs ({e}); running regions on the CPU");
                    false
                }
            },
        }
    }

    fn wants(&mut self, stats: &RegionStats) -> bool {
        // A refusal concerns the region just offered, never a later one.
        self.refused = None;
        if let Err(e) = self.check(stats) {
            if self.policy == RegionPolicy::Always {
                // `gpu` was asked for: the region is taken, and refused with this error.
                self.refused = Some(e);
                return true;
            }
            log::info!("ndvm GPU: region runs on the CPU: {e}");
            return false;
        }
        match self.policy {
            RegionPolicy::Always => true,
            RegionPolicy::Auto => match self.costs() {
                Ok(c) => {
                    // A region is one dispatch on hardware; a software driver's loop cap
                    // cuts it into a few hundred records each.
                    let dispatches = if self.software {
                        (stats.ops as u64).div_ceil(256)
                    } else {
                        1
                    };
                    // And the round trip that brings its results back.
                    c.prefer_device(stats, dispatches + 1)
                }
                Err(_) => false,
            },
        }
    }

    fn forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
    ) -> DeviceResult<()> {
        if let Some(e) = self.refused.take() {
            return Err(e.to_string());
        }
        self.run_forward(region, masks, data, upload)
            .map_err(|e| e.to_string())
    }

    fn read(&mut self, from: usize, out: &mut [f32]) -> DeviceResult<()> {
        self.read_data(from, out).map_err(|e| e.to_string())
    }

    fn reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
        adj_len: usize,
        seed: (usize, &[f32]),
        read: usize,
    ) -> DeviceResult<Vec<f32>> {
        if let Some(e) = self.refused.take() {
            return Err(e.to_string());
        }
        self.run_reverse(region, masks, data, upload, adj_len, seed, read)
            .map_err(|e| e.to_string())
    }
}
impl GpuContext {
    /// The region cost model's terms on this machine: read from the cost cache when a run
    /// measured them before on this adapter and driver, else measured now and cached (see
    /// `region_costs.rs`); then kept for the life of the context.
    pub fn region_costs(self: &Arc<Self>) -> Result<RegionCosts, GpuError> {
        self.region_costs
            .get_or_init(|| crate::region_costs::cached_or_measured(self))
            .clone()
    }
}
