//! `--device cpu|gpu|auto`: attaching the GPU region device to a session.
//!
//! The GPU region interpreter computes in `f32`, so only `f32` sessions get one: `gpu` with
//! `f64` is a usage error, and `auto` with `f64` runs on the CPU. `auto` touches no GPU until a
//! walk has at least [`AUTO_MIN_LANES`] lanes (creating a context costs more than most small
//! runs); then it makes the shared context, takes the cost model's terms (measured once and
//! cached), collects regions when a number of work can cost less on the device at this width,
//! and lets the cost model decide each region from its size. With no usable adapter, `auto`
//! stays on the CPU (the reason is logged) and `gpu` is an error.

use runtime_cpu::Session;
use runtime_gpu::{DeviceChoice, GpuContext, GpuRegions, RegionPolicy};
use shared_ir::region::{DeviceResult, MaskBits, Region, RegionDevice, RegionStats};
use shared_ir::Real;
use std::ops::Range;

/// Lanes below which `auto` never starts a GPU (one CPU lane block).
pub const AUTO_MIN_LANES: usize = runtime_cpu::DEFAULT_LANE_BLOCK;

/// The lanes per walk for `choice`: one walk on the GPU (a region is run once for all its
/// lanes); blocks of [`runtime_cpu::DEFAULT_LANE_BLOCK`] otherwise, which keep a walk's
/// working set in the CPU's cache (under `auto`, a block's regions go to the GPU when they
/// pay there).
pub fn lane_block(choice: DeviceChoice, f32: bool) -> usize {
    if choice == DeviceChoice::Gpu && f32 {
        0
    } else {
        runtime_cpu::DEFAULT_LANE_BLOCK
    }
}

/// A number type that can be given a region device.
pub trait Attach: Real {
    /// Attaches the device `choice` asks for to `session`; an error is a usage error.
    fn attach(session: &mut Session<Self>, choice: DeviceChoice) -> Result<(), String>;
}

impl Attach for f64 {
    fn attach(_: &mut Session<f64>, choice: DeviceChoice) -> Result<(), String> {
        match choice {
            DeviceChoice::Gpu => Err(
                "the GPU region path computes in f32: add `--precision f32` \
                 to run on the GPU (or use `--device auto`, which runs f64 on the CPU)"
                    .into(),
            ),
            DeviceChoice::Cpu | DeviceChoice::Auto => Ok(()),
        }
    }
}

impl Attach for f32 {
    fn attach(session: &mut Session<f32>, choice: DeviceChoice) -> Result<(), String> {
        match choice {
            DeviceChoice::Cpu => session.set_device(None),
            DeviceChoice::Gpu => {
                let ctx = GpuContext::shared().map_err(|e| format!("--device gpu: {e}"))?;
                session.set_device(Some(Box::new(GpuRegions::new(ctx, RegionPolicy::Always))));
            }
            DeviceChoice::Auto => session.set_device(Some(Box::new(AutoDevice::default()))),
        }
        Ok(())
    }
}

/// `auto`: the GPU region device, made on first need.
#[derive(Debug, Default)]
pub struct AutoDevice {
    inner: Option<GpuRegions>,
    tried: bool,
}

impl AutoDevice {
    fn get(&mut self) -> Option<&mut GpuRegions> {
        if !self.tried {
            self.tried = true;
            match GpuContext::shared() {
                Ok(ctx) => self.inner = Some(GpuRegions::new(ctx, RegionPolicy::Auto)),
                Err(e) => log::warn!("ndvm: no GPU for --device auto ({e}); running on the CPU"),
            }
        }
        self.inner.as_mut()
    }
}

impl RegionDevice<f32> for AutoDevice {
    fn describe(&self) -> String {
        match &self.inner {
            Some(d) => format!("auto: {}", d.describe()),
            None => "auto: CPU".into(),
        }
    }

    fn min_lanes(&self) -> usize {
        AUTO_MIN_LANES
    }
    fn defer_at(&mut self, lanes: usize) -> bool {
        // Never asked below `min_lanes`.
        self.get().is_some_and(|d| d.defer_at(lanes))
    }

    fn wants(&mut self, stats: &RegionStats) -> bool {
        self.inner.as_mut().is_some_and(|d| d.wants(stats))
    }

    fn fall_back(&mut self, error: &str) -> bool {
        log::warn!("ndvm: the GPU failed ({error}); --device auto goes on on the CPU");
        self.inner = None;
        true
    }

    fn forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
    ) -> DeviceResult<()> {
        match self.inner.as_mut() {
            Some(d) => d.forward(region, masks, data, upload),
            None => Err("no GPU".into()),
        }
    }

    fn read(&mut self, from: usize, out: &mut [f32]) -> DeviceResult<()> {
        match self.inner.as_mut() {
            Some(d) => d.read(from, out),
            None => Err("no GPU".into()),
        }
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
        match self.inner.as_mut() {
            Some(d) => d.reverse(region, masks, data, upload, adj_len, seed, read),
            None => Err("no GPU".into()),
        }
    }
}
