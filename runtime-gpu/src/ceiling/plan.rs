//! How a ceiling run is cut into dispatches.
//!
//! Two limits shape it. Mesa's software Vulkan driver stops an invocation after
//! [`MESA_LOOP_CAP`] loop-header visits in total, silently, so a dispatch runs only as many
//! time steps as keep every invocation within [`CeilingConfig::loop_budget`] (a few thousand);
//! P, x and the NLL go through a `state` buffer between dispatches. And a storage binding holds
//! at most `max_storage_buffer_binding_size` bytes, so the candidates are run in batches whose
//! `state` fits one binding; a single candidate that does not fit is a clear error.

use super::problem::STEPS;
use crate::adapter::DeviceLimits;
use crate::error::GpuError;

/// Loop-header visits after which lavapipe (llvmpipe) silently ends an invocation.
pub const MESA_LOOP_CAP: u32 = 65_535;

/// The default most loop-header visits one invocation may make in one dispatch.
pub const DEFAULT_LOOP_BUDGET: u32 = 4_096;

/// The largest state dimension the kernel accepts (its workgroup arrays hold 64 x 64).
pub const MAX_DIM: usize = 64;

/// Capacities the kernel is compiled for (`DMAX`); a run uses the smallest that holds DP.
const DMAX_CLASSES: [u32; 4] = [8, 16, 32, 64];

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CeilingConfig {
    /// The state dimension D (2 ..= 64).
    pub d: usize,
    /// Candidates G; candidate g has the noise of `problem::noise(g)`.
    pub population: usize,
    /// Time steps T.
    pub steps: usize,
    /// Invocations per workgroup; `None`: chosen from D.
    pub workgroup_size: Option<u32>,
    /// Most loop-header visits one invocation may make in one dispatch.
    pub loop_budget: u32,
    /// Treat storage bindings as at most this many bytes (tests use it to force batches).
    pub binding_limit: Option<u64>,
}

impl CeilingConfig {
    /// The experiment's configuration: T = 80, default workgroup size and loop budget.
    pub fn new(d: usize, population: usize) -> Self {
        CeilingConfig {
            d,
            population,
            steps: STEPS,
            workgroup_size: None,
            loop_budget: DEFAULT_LOOP_BUDGET,
            binding_limit: None,
        }
    }
}

/// Time steps `begin .. begin + count`, run by one dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepChunk {
    /// First step.
    pub begin: usize,
    /// Steps.
    pub count: usize,
}

/// The dispatches of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CeilingPlan {
    /// State dimension D.
    pub d: usize,
    /// D padded to a multiple of 4.
    pub dp: usize,
    /// The kernel's capacity `DMAX` (an override constant).
    pub dmax: u32,
    /// Invocations per workgroup (the override `WG`).
    pub workgroup_size: u32,
    /// Time steps T.
    pub steps: usize,
    /// The steps of each dispatch, in order.
    pub chunks: Vec<StepChunk>,
    /// Candidates G.
    pub population: usize,
    /// Candidates per batch (workgroups per dispatch).
    pub batch: usize,
    /// Bytes of `state` per candidate (P, x, NLL).
    pub state_bytes: u64,
    /// Most loop-header visits of one invocation in one dispatch, as planned.
    pub loop_visits: u64,
    /// The same if all T steps ran in one dispatch.
    pub single_dispatch_loop_visits: u64,
}

/// Loop-header visits of invocation `lid` in one dispatch of `count` steps: each loop of the
/// kernel adds its iterations plus one (the visit that leaves it). The CPU twin counts the same
/// visits as it runs; a test holds the two equal.
pub fn invocation_loop_visits(dp: usize, wg: usize, lid: usize, count: usize, save: bool) -> u64 {
    let q4 = dp / 4;
    let nblk = dp * q4;
    let mine = if lid < nblk {
        (nblk - lid).div_ceil(wg)
    } else {
        0
    } as u64;
    let q4 = q4 as u64;
    let block_loop = mine + 1;
    let matmul_loop = mine + 1 + mine * (q4 + 1);
    let state_loop = if lid < dp / 4 { q4 + 1 } else { 0 };
    let per_step = state_loop + 2 * matmul_loop + 2 * block_loop;
    let load = block_loop;
    let store = if save { block_loop } else { 0 };
    load + (count as u64 + 1) + count as u64 * per_step + store
}

impl CeilingPlan {
    /// The plan of `cfg` on a device with `limits`.
    pub fn new(cfg: &CeilingConfig, limits: &DeviceLimits) -> Result<Self, GpuError> {
        let d = cfg.d;
        if !(2..=MAX_DIM).contains(&d) {
            return Err(GpuError::Unsupported(format!(
                "the ceiling kernel needs 2 <= D <= {MAX_DIM}, got D = {d}"
            )));
        }
        if cfg.population == 0 || cfg.steps == 0 {
            return Err(GpuError::Unsupported(
                "the ceiling needs at least one candidate and one step".into(),
            ));
        }
        let dp = d.div_ceil(4) * 4;
        let q4 = dp / 4;
        let nblk = dp * q4;
        let dmax = *DMAX_CLASSES
            .iter()
            .find(|&&c| c as usize >= dp)
            .expect("dp <= 64");
        let shared = 2 * dmax * dmax * 4;
        if shared > limits.max_workgroup_storage_bytes {
            return Err(GpuError::Unsupported(format!(
                "D = {d} needs {shared} bytes of workgroup memory; the device has {}",
                limits.max_workgroup_storage_bytes
            )));
        }
        let max_wg = limits
            .max_invocations_per_workgroup
            .min(limits.max_workgroup_size_x);
        let wg = cfg
            .workgroup_size
            .unwrap_or_else(|| (nblk.next_power_of_two() as u32).clamp(32, 256).min(max_wg));
        if (wg as usize) < q4 || wg > max_wg {
            return Err(GpuError::Unsupported(format!(
                "workgroup size {wg} for D = {d}: it must be at least {q4} and at most {max_wg}"
            )));
        }
        let wg_us = wg as usize;

        // Steps per dispatch: the most that keep invocation 0 (the busiest) within the budget.
        let per_step = invocation_loop_visits(dp, wg_us, 0, 1, false)
            - invocation_loop_visits(dp, wg_us, 0, 0, false);
        let fixed = invocation_loop_visits(dp, wg_us, 0, 0, true);
        let fit = (u64::from(cfg.loop_budget).saturating_sub(fixed) / per_step).max(1);
        let dispatches = cfg.steps.div_ceil(fit.min(cfg.steps as u64) as usize);
        let per_dispatch = cfg.steps.div_ceil(dispatches);
        let chunks: Vec<StepChunk> = (0..cfg.steps)
            .step_by(per_dispatch)
            .map(|begin| StepChunk {
                begin,
                count: per_dispatch.min(cfg.steps - begin),
            })
            .collect();
        let multi = chunks.len() > 1;
        let loop_visits = invocation_loop_visits(dp, wg_us, 0, per_dispatch, multi);
        let single_dispatch_loop_visits = invocation_loop_visits(dp, wg_us, 0, cfg.steps, false);

        // Candidates per batch: within the dispatch size and, when state is kept, one binding.
        let binding = cfg
            .binding_limit
            .unwrap_or(u64::MAX)
            .min(limits.max_storage_buffer_binding_size)
            .min(limits.max_buffer_size);
        let state_bytes = ((nblk + q4 + 1) * 16) as u64;
        let mut batch = cfg
            .population
            .min(limits.max_workgroups_per_dimension as usize);
        if multi {
            if state_bytes > binding {
                return Err(GpuError::BufferTooLarge {
                    label: "ndvm.ceiling.state".into(),
                    bytes: state_bytes,
                    limit: binding,
                    which: "max_storage_buffer_binding_size",
                });
            }
            batch = batch.min((binding / state_bytes) as usize);
        }
        for (label, bytes) in [
            ("ndvm.ceiling.noise", cfg.population as u64 * 8),
            ("ndvm.ceiling.nll", cfg.population as u64 * 4),
        ] {
            if bytes > binding {
                return Err(GpuError::BufferTooLarge {
                    label: label.into(),
                    bytes,
                    limit: binding,
                    which: "max_storage_buffer_binding_size",
                });
            }
        }
        Ok(CeilingPlan {
            d,
            dp,
            dmax,
            workgroup_size: wg,
            steps: cfg.steps,
            chunks,
            population: cfg.population,
            batch,
            state_bytes,
            loop_visits,
            single_dispatch_loop_visits,
        })
    }

    /// The candidate ranges of the batches, in order.
    pub fn batches(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        (0..self.population)
            .step_by(self.batch)
            .map(|b| b..(b + self.batch).min(self.population))
    }

    /// Dispatches in all: batches times chunks.
    pub fn dispatches(&self) -> usize {
        self.population.div_ceil(self.batch) * self.chunks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dimension_stays_within_the_budget() {
        for d in 2..=MAX_DIM {
            let plan = CeilingPlan::new(&CeilingConfig::new(d, 100), &DeviceLimits::unbounded())
                .expect("plan");
            assert!(
                plan.loop_visits <= u64::from(DEFAULT_LOOP_BUDGET),
                "{plan:?}"
            );
            assert_eq!(plan.chunks.iter().map(|c| c.count).sum::<usize>(), STEPS);
            assert!(plan.workgroup_size as usize >= plan.dp / 4);
        }
    }

    #[test]
    fn small_dimensions_run_in_one_dispatch_and_large_ones_split() {
        let plan = |d| CeilingPlan::new(&CeilingConfig::new(d, 16), &DeviceLimits::unbounded());
        assert_eq!(plan(2).unwrap().chunks.len(), 1);
        assert_eq!(plan(8).unwrap().chunks.len(), 1);
        assert!(plan(64).unwrap().chunks.len() > 1);
    }

    #[test]
    fn narrow_workgroups_at_d64_would_pass_the_mesa_cap_in_one_dispatch() {
        let mut cfg = CeilingConfig::new(64, 4);
        cfg.workgroup_size = Some(32);
        let plan = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()).unwrap();
        assert!(
            plan.single_dispatch_loop_visits > u64::from(MESA_LOOP_CAP),
            "{plan:?}"
        );
        assert!(plan.loop_visits <= u64::from(DEFAULT_LOOP_BUDGET));
    }

    #[test]
    fn a_small_binding_limit_makes_batches_and_a_tiny_one_is_an_error() {
        let mut cfg = CeilingConfig::new(64, 10);
        let state = CeilingPlan::new(&cfg, &DeviceLimits::unbounded())
            .unwrap()
            .state_bytes;
        cfg.binding_limit = Some(3 * state);
        let plan = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()).unwrap();
        assert_eq!(plan.batch, 3);
        assert_eq!(plan.batches().count(), 4);
        assert_eq!(plan.batches().last(), Some(9..10));
        cfg.binding_limit = Some(state - 1);
        let err = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()).unwrap_err();
        assert!(matches!(err, GpuError::BufferTooLarge { .. }), "{err}");
    }

    #[test]
    fn dimensions_out_of_range_are_refused() {
        for d in [0, 1, 65] {
            let err = CeilingPlan::new(&CeilingConfig::new(d, 1), &DeviceLimits::unbounded());
            assert!(matches!(err, Err(GpuError::Unsupported(_))));
        }
    }
}
