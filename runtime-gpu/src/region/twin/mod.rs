//! The CPU twin of the region interpreter, `shaders/wgsl/region.wgsl`.
//!
//! [`TwinRegions`] is a [`RegionDevice`] that runs a region as the GPU does, on the CPU: it
//! keeps its own copy of the data arena and of the adjoint arena, cuts the records into the
//! dispatches of [`RegionPlan`] (as [`super::GpuRegions`] does), and runs each dispatch lane
//! by lane, each lane's `width` invocations one after the other (`for tk in 0..width`) for
//! each record before any starts the next: the storage barrier of the shader's
//! `forward_shared` and `reverse_shared`, which with one invocation per lane is the plain
//! `forward` and `reverse`. It is written to read like the shader, function by function and
//! with the shader's names and switch codes, and is generic over the payload type, so it runs
//! in `f32` (what the GPU computes) and in `f64` (against straightforward references in the
//! tests). It counts the loop-header visits of every invocation in every dispatch, so tests
//! can prove that the plan keeps each invocation under the software driver's cap of 65,535.
//!
//! | file | shader functions |
//! | --- | --- |
//! | `mod.rs` | the device, and the entry points `forward`, `reverse`, `forward_shared`, `reverse_shared` with `place` (the dispatch loop) |
//! | `invocation.rs` | the bindings, the private variables, `record`, `view`, `adj_view`, `ld`, `put`, `gadj`, `acc`, `bit` |
//! | `scalar.rs` | `ln`, `root`, `protect`, `powf`, `unary_f`, `unary_d`, `binary_f`, `binary_d` |
//! | `forward.rs` | `spreads`, `linalg_f`, `forward_op` |
//! | `reverse.rs` | `acc_inverse_transpose`, `linalg_r`, `reverse_op` |
//! | `factor.rs` | `eliminate`, `load_inverse`, `det_of` |
//! | `check.rs` | what the twin checks of a region before it runs it |
//! | `tests.rs` | the linalg ops against references and finite differences |
//! | `shader_codes.rs` | the shader's switch codes against the ops' codes |

mod check;
mod factor;
mod forward;
mod invocation;
mod reverse;
mod scalar;
#[cfg(test)]
mod shader_codes;
#[cfg(test)]
mod tests;

use super::plan::dispatch_visits;
use super::{lane_width, RegionPlan, SOFTWARE_VISIT_BUDGET};
use check::check;
use invocation::{Buffers, Inv, Private};
use shared_ir::region::{DeviceResult, MaskBits, Region, RegionDevice, RegionStats};
use shared_ir::Real;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The loop-header visits after which Mesa's software driver silently ends an invocation.
pub const SOFTWARE_LOOP_CAP: u64 = 65_535;

/// What the twin ran, over its life (shared, so it can be read after the twin is handed to a
/// session).
#[derive(Debug, Default)]
pub struct TwinCounts {
    max_visits: AtomicU64,
    dispatches: AtomicU64,
    over_plan: AtomicU64,
    stray: AtomicU64,
}

impl TwinCounts {
    /// The most loop-header visits one invocation made in one dispatch.
    pub fn max_visits(&self) -> u64 {
        self.max_visits.load(Ordering::Relaxed)
    }
    /// Dispatches run.
    pub fn dispatches(&self) -> u64 {
        self.dispatches.load(Ordering::Relaxed)
    }
    /// Dispatches in which an invocation made more loop-header visits than the plan's
    /// estimate for the dispatch ([`super::plan::dispatch_visits`], summed over its records),
    /// which is meant to be an upper bound.
    pub fn over_plan(&self) -> u64 {
        self.over_plan.load(Ordering::Relaxed)
    }
    /// Reads and writes past the data or adjoint arena (none for a region whose operands'
    /// shapes agree; the GPU would read some number of the buffer, and drop the write).
    pub fn stray(&self) -> u64 {
        self.stray.load(Ordering::Relaxed)
    }
}

/// The region interpreter on the CPU, as a region device (see the module's notes).
#[derive(Debug)]
pub struct TwinRegions<R> {
    /// The device's copy of the data arena.
    data: Vec<R>,
    /// The adjoint arena of the last reverse pass.
    adj: Vec<R>,
    budget: u64,
    /// Invocations per lane, when set; else [`lane_width`] as for a software driver.
    width: Option<u32>,
    /// Each invocation of a lane's private variables, reused from lane to lane.
    privates: Vec<Private<R>>,
    counts: Arc<TwinCounts>,
}

impl<R: Real> Default for TwinRegions<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Real> TwinRegions<R> {
    /// A twin that takes every region (as [`super::RegionPolicy::Always`]) at any lane count,
    /// with the software driver's loop-visit budget per dispatch.
    pub fn new() -> Self {
        TwinRegions {
            data: Vec::new(),
            adj: Vec::new(),
            budget: SOFTWARE_VISIT_BUDGET,
            width: None,
            privates: Vec::new(),
            counts: Arc::default(),
        }
    }

    /// Sets the loop-visit budget of one dispatch, as [`super::GpuRegions::with_visit_budget`].
    pub fn with_visit_budget(mut self, budget: u64) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// Sets the invocations per lane of every region (a power of two up to
    /// [`super::MAX_LANE_WIDTH`]); without it, [`lane_width`] chooses per region as for a
    /// software driver.
    pub fn with_lane_width(mut self, width: u32) -> Self {
        self.width = Some(width.clamp(1, super::MAX_LANE_WIDTH).next_power_of_two());
        self
    }

    /// The twin's counters, readable after it is handed to a session.
    pub fn counts(&self) -> Arc<TwinCounts> {
        Arc::clone(&self.counts)
    }

    /// The most loop-header visits one invocation made in one dispatch so far.
    pub fn max_visits(&self) -> u64 {
        self.counts.max_visits()
    }

    /// The device's copy of the data arena.
    pub fn data(&self) -> &[R] {
        &self.data
    }

    /// Copies the `upload` ranges of `data` into the device's arena, grown to `data`'s length.
    fn upload(&mut self, data: &[R], upload: &[Range<usize>]) {
        if self.data.len() < data.len() {
            self.data.resize(data.len(), R::ZERO);
        }
        for r in upload {
            let r = r.start.min(data.len())..r.end.min(data.len());
            self.data[r.clone()].copy_from_slice(&data[r]);
        }
    }

    /// Runs every dispatch of `region`'s plan, forward or (`reverse`) backwards.
    fn run(&mut self, region: &Region, masks: &MaskBits, reverse: bool) {
        let width = self
            .width
            .unwrap_or_else(|| lane_width(region, reverse, true));
        let plan = RegionPlan::new(region, self.budget, reverse, width);
        let order: Vec<Range<u32>> = if reverse {
            plan.chunks.iter().rev().cloned().collect()
        } else {
            plan.chunks.clone()
        };
        for c in order {
            let most = self.dispatch(region, masks, c.clone(), reverse, width as usize);
            let planned: u64 = (c.start..c.end)
                .map(|i| dispatch_visits(region, i as usize, reverse, width))
                .sum();
            let counts = &self.counts;
            counts.max_visits.fetch_max(most, Ordering::Relaxed);
            counts.dispatches.fetch_add(1, Ordering::Relaxed);
            // The plan's estimate has no term for the loop over the records' own header exit.
            if most > planned + 1 {
                counts.over_plan.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// One dispatch of records `c` over every lane (the shader's four entry points, with
    /// `place`): each lane's `width` invocations run each record, one after the other,
    /// before any runs the next. Returns the most loop-header visits of one invocation.
    fn dispatch(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        c: Range<u32>,
        reverse: bool,
        width: usize,
    ) -> u64 {
        let mut buf = Buffers {
            lanes: region.lanes,
            words_per_mask: masks.words_per_mask.max(1),
            slots: &region.slots,
            ops: &region.ops,
            aux: &region.aux,
            data: &mut self.data,
            masks: &masks.words,
            adj: &mut self.adj,
            stray: Default::default(),
        };
        let (begin, end) = (c.start as usize, c.end as usize);
        let mut most = 0;
        for lane in 0..region.lanes as usize {
            // The private variables of the lane's invocations, zero at their start.
            self.privates.clear();
            self.privates.resize(width, Private::default());
            for p in &mut self.privates {
                // The loop over the records: one visit per record and one to leave.
                p.visits = (end - begin) as u64 + 1;
            }
            for j in 0..end - begin {
                // The shader's `i` (forward) or `i - 1u` (reverse).
                let i = if reverse { end - 1 - j } else { begin + j };
                for (tk, me) in self.privates.iter_mut().enumerate() {
                    let mut inv = Inv {
                        buf: &mut buf,
                        me,
                        lane,
                        tk,
                        tw: width,
                    };
                    if reverse {
                        inv.reverse_op(i);
                    } else {
                        inv.forward_op(i);
                    }
                }
                // storageBarrier(): the lane's next record sees every invocation's results.
            }
            most = self.privates.iter().map(|p| p.visits).fold(most, u64::max);
        }
        self.counts
            .stray
            .fetch_add(buf.stray.get(), Ordering::Relaxed);
        most
    }
}

impl<R: Real> RegionDevice<R> for TwinRegions<R> {
    fn describe(&self) -> String {
        format!("the CPU twin of the region interpreter ({})", R::NAME)
    }

    fn defer_at(&mut self, _lanes: usize) -> bool {
        true
    }

    fn wants(&mut self, _stats: &RegionStats) -> bool {
        true
    }

    fn forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[R],
        upload: &[Range<usize>],
    ) -> DeviceResult<()> {
        self.upload(data, upload);
        check(region)?;
        self.run(region, masks, false);
        Ok(())
    }

    fn read(&mut self, from: usize, out: &mut [R]) -> DeviceResult<()> {
        let src = self
            .data
            .get(from..from + out.len())
            .ok_or_else(|| format!("read of {} numbers at {from} past the arena", out.len()))?;
        out.copy_from_slice(src);
        Ok(())
    }

    fn reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[R],
        upload: &[Range<usize>],
        adj_len: usize,
        seed: (usize, &[R]),
        read: usize,
    ) -> DeviceResult<Vec<R>> {
        self.upload(data, upload);
        check(region)?;
        let read = read.min(adj_len);
        self.adj.clear();
        self.adj.resize(adj_len, R::ZERO);
        let (at, seeds) = seed;
        self.adj
            .get_mut(at..at + seeds.len())
            .ok_or_else(|| format!("a seed at {at} past the adjoint arena of {adj_len}"))?
            .copy_from_slice(seeds);
        self.run(region, masks, true);
        Ok(self.adj[..read].to_vec())
    }
}
