//! The region path behind one seam: [`Regions`] is the executor the evaluator hands every
//! per-lane numeric op to. Eager (no device, or a walk the device would not pay for), it runs
//! the op's kernel at once. Recording, it appends the op to the pending region, which
//! [`Regions::flush`] runs before the walk reads a per-lane number (a comparison or an index
//! on lane data) and at the end of the walk: on the device when its cost model wants it, else
//! on the CPU kernels. Uniform numbers are always computed at once: they cannot depend on a
//! pending result. The reverse pass can run on the device too ([`Regions::reverse`]).
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the executor: eager or recording, flushes, uploads and read-backs |
//! | `encode.rs` | records as region words, and the sizes the cost model weighs |
//! | `reverse.rs` | the tape as a region, run backwards on the device |

mod encode;
mod reverse;
mod trace;

use crate::mask::Masks;
use crate::ops::{compute, Scratch};
use crate::payload::Payloads;
use crate::tape::Rec;
use crate::value::Slot;
use encode::{encode_rec, encode_slots, kind, stats};
use shared_ir::region::{MaskBits, Region, RegionDevice};
use shared_ir::Real;
use std::ops::Range;
pub(crate) use trace::{Step, Trace};

/// How many regions ran where, and how many ops they held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionCounts {
    /// Regions the device ran (forward).
    pub device_regions: u64,
    /// Regions the CPU kernels ran after they were collected.
    pub cpu_regions: u64,
    /// Reverse passes the device ran.
    pub device_reverse: u64,
    /// Ops in the collected regions.
    pub ops: u64,
}

impl std::ops::AddAssign for RegionCounts {
    fn add_assign(&mut self, o: RegionCounts) {
        self.device_regions += o.device_regions;
        self.cpu_regions += o.cpu_regions;
        self.device_reverse += o.device_reverse;
        self.ops += o.ops;
    }
}

/// Why the device could not give the walk what it needs.
#[derive(Debug)]
pub(crate) enum DeviceStop {
    /// The walk fails with this device error.
    Fail(String),
    /// The device failed after computing numbers the walk needs, and the session goes on
    /// without it: the walk runs again, on the CPU.
    Retry,
}

/// The executor of per-lane numeric ops, with the device it may hand regions to; kept by a
/// session between walks.
#[derive(Debug, Default)]
pub(crate) struct Regions<R> {
    /// True when per-lane ops are collected into regions rather than computed at once.
    defer: bool,
    /// The records of the pending region.
    pending: Vec<Rec>,
    /// Pack parts of the pending region.
    pending_aux: Vec<Slot>,
    /// The device that runs regions, if one is attached.
    device: Option<Box<dyn RegionDevice<R>>>,
    /// The device's [`RegionDevice::min_lanes`].
    min_lanes: usize,
    /// The encoded region (its slot table grows over a walk).
    region: Region,
    /// Slots of the walk the device has seen (the host's numbers in them, or its own results).
    synced: usize,
    /// Numbers of the arena whose values are the device's results, not yet read back.
    stale: Range<usize>,
    /// The ranges of the arena to send the device on its next call.
    upload: Vec<Range<usize>>,
    /// Scratch of [`Regions::upload_ranges`]: the slots the pending region computes.
    computed: Vec<bool>,
    /// Set when the device failed and the session goes on without it (`auto`).
    failed: bool,
    /// Counts of regions run, over the session's life.
    counts: RegionCounts,
    /// The numeric work of the walk, kept for replay while the ops run at once.
    pub(crate) trace: Trace,
}

/// Results of the region a range of host numbers to upload may span (they are overwritten on
/// the device), so that a region interleaved with small host values needs few copies.
const UPLOAD_GAP: usize = 1024;

impl<R: Real> Regions<R> {
    /// Attaches a device (or detaches it with `None`).
    pub(crate) fn attach(&mut self, device: Option<Box<dyn RegionDevice<R>>>) {
        self.min_lanes = device.as_ref().map_or(1, |d| d.min_lanes());
        self.device = device;
        self.failed = false;
    }

    /// The attached device.
    pub(crate) fn device(&self) -> Option<&dyn RegionDevice<R>> {
        self.device.as_deref()
    }

    /// How many regions ran where, over the session's life.
    pub(crate) fn counts(&self) -> RegionCounts {
        self.counts
    }

    /// True while ops are collected for the device (recording) rather than run at once.
    #[inline(always)]
    pub(crate) fn recording(&self) -> bool {
        self.defer
    }

    /// Starts a walk over `lanes` lanes: records when a device that has not failed asks for
    /// regions at this width. Returns whether it records.
    pub(crate) fn begin(&mut self, lanes: usize) -> bool {
        self.defer = match self.device.as_mut() {
            Some(d) if !self.failed && lanes >= self.min_lanes => d.defer_at(lanes),
            _ => false,
        };
        self.pending.clear();
        self.pending_aux.clear();
        self.region.clear();
        self.synced = 0;
        self.stale = 0..0;
        self.trace.begin(false);
        self.defer
    }

    /// Runs `rec` (whose result slot is allocated) now, or appends it to the pending region
    /// when recording and its result is per lane. A pack's parts are `parts`.
    #[inline(always)]
    pub(crate) fn exec(
        &mut self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
        rec: Rec,
        parts: &[Slot],
        lanes_out: bool,
    ) {
        if self.defer && lanes_out {
            self.record(rec, parts);
            return;
        }
        compute(pay, masks, scratch, &rec, parts);
        self.trace.op(rec, parts);
    }

    fn record(&mut self, rec: Rec, parts: &[Slot]) {
        let rec = match rec {
            Rec::Pack { out, start, count } => {
                let first = self.pending_aux.len() as u32;
                self.pending_aux
                    .extend_from_slice(&parts[start as usize..(start + count) as usize]);
                Rec::Pack {
                    out,
                    start: first,
                    count,
                }
            }
            other => other,
        };
        self.pending.push(rec);
    }

    /// The device failed with `message`: true when the session goes on without it (`auto`;
    /// from then on walks compute at once on the CPU), false when the walk must fail.
    pub(crate) fn falls_back(&mut self, message: &str) -> bool {
        let back = self.failed || self.device.as_mut().is_some_and(|d| d.fall_back(message));
        if back {
            self.failed = true;
            self.defer = false;
        }
        back
    }

    /// What a failure of the device after it computed numbers the walk needs means.
    #[cold]
    fn lost(&mut self, message: String) -> DeviceStop {
        self.stale = 0..0;
        if self.falls_back(&message) {
            DeviceStop::Retry
        } else {
            DeviceStop::Fail(message)
        }
    }

    /// Runs the pending region, if any: on the device when it wants it, else on the CPU
    /// kernels (after reading back what the device holds).
    pub(crate) fn flush(
        &mut self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
    ) -> Result<(), DeviceStop> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut stats = stats(pay, self.pending.iter().copied(), false);
        let on_device = self.device.is_some() && {
            stats.upload = self.host_numbers(pay);
            stats.download = pay.lanes();
            self.device.as_mut().is_some_and(|d| d.wants(&stats))
        };
        let r = if on_device {
            self.forward_on_device(pay, masks, scratch)
        } else {
            self.run_on_cpu(pay, masks, scratch)
        };
        if r.is_ok() {
            self.counts.ops += stats.ops as u64;
        }
        self.pending.clear();
        self.pending_aux.clear();
        r
    }

    fn forward_on_device(
        &mut self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
    ) -> Result<(), DeviceStop> {
        self.upload_ranges(pay, true);
        encode_slots(&mut self.region, pay.slot_infos());
        self.region.ops.clear();
        self.region.aux.clear();
        self.region.lanes = pay.lanes() as u32;
        for rec in &self.pending {
            encode_rec(&mut self.region, rec, 0, &self.pending_aux);
        }
        let top = pay.top();
        let bits = if self.pending.iter().any(|r| matches!(r, Rec::Select { .. })) {
            masks.bits()
        } else {
            MaskBits::default()
        };
        let device = self.device.as_mut().expect("checked by the caller");
        match device.forward(&self.region, &bits, &pay.data()[..top], &self.upload) {
            Ok(()) => {
                let infos = pay.slot_infos();
                let from = infos.get(self.synced).map_or(top, |i| i.offset());
                self.stale = if self.stale.is_empty() {
                    from..top
                } else {
                    self.stale.start..top
                };
                self.synced = infos.len();
                self.counts.device_regions += 1;
                Ok(())
            }
            Err(message) => {
                if !self.falls_back(&message) {
                    return Err(DeviceStop::Fail(message));
                }
                self.run_on_cpu(pay, masks, scratch)
            }
        }
    }

    /// Runs the pending region with the CPU kernels, after reading back what the device holds.
    fn run_on_cpu(
        &mut self,
        pay: &mut Payloads<R>,
        masks: &Masks,
        scratch: &mut Scratch<R>,
    ) -> Result<(), DeviceStop> {
        self.sync_host(pay)?;
        for rec in &self.pending {
            compute(pay, masks, scratch, rec, &self.pending_aux);
        }
        self.counts.cpu_regions += 1;
        Ok(())
    }

    /// Makes the numbers of `slots` readable on the host (after a flush).
    pub(crate) fn read_slots(
        &mut self,
        pay: &mut Payloads<R>,
        slots: &[Slot],
    ) -> Result<(), DeviceStop> {
        if self.stale.is_empty() {
            return Ok(());
        }
        let lanes = pay.lanes();
        for &s in slots {
            let info = pay.info(s);
            let lo = info.offset().max(self.stale.start);
            let hi = (info.offset() + info.stored(lanes)).min(self.stale.end);
            if let Err(message) = self.read_back(pay, lo..hi.max(lo)) {
                return Err(self.lost(message));
            }
        }
        Ok(())
    }

    /// Reads back every number the device holds that the host has not.
    pub(crate) fn sync_host(&mut self, pay: &mut Payloads<R>) -> Result<(), DeviceStop> {
        match self.read_stale(pay) {
            Ok(()) => Ok(()),
            Err(message) => Err(self.lost(message)),
        }
    }

    /// Reads the device's results the host does not have into the arena.
    pub(crate) fn read_stale(&mut self, pay: &mut Payloads<R>) -> Result<(), String> {
        let r = std::mem::replace(&mut self.stale, 0..0);
        self.read_back(pay, r)
    }

    /// Reads numbers `r` of the arena back from the device.
    fn read_back(&mut self, pay: &mut Payloads<R>, r: Range<usize>) -> Result<(), String> {
        if r.is_empty() {
            return Ok(());
        }
        let device = self
            .device
            .as_mut()
            .ok_or("the device that holds the results is gone")?;
        device.read(r.start, &mut pay.data_mut()[r])
    }

    /// Fills `self.upload` with the ranges of the arena the host wrote since the device's
    /// last call: the slots from `self.synced` on, less the results of the pending records
    /// when `pending` (the device computes those).
    fn upload_ranges(&mut self, pay: &Payloads<R>, pending: bool) {
        let infos = pay.slot_infos();
        let first = self.synced.min(infos.len());
        let lanes = pay.lanes();
        self.computed.clear();
        self.computed.resize(infos.len() - first, false);
        if pending {
            for rec in &self.pending {
                let out = kind(rec).2 .0 as usize;
                if out >= first {
                    self.computed[out - first] = true;
                }
            }
        }
        self.upload.clear();
        for (info, &skip) in infos[first..].iter().zip(&self.computed) {
            let n = info.stored(lanes);
            if skip || n == 0 {
                continue;
            }
            let r = info.offset()..info.offset() + n;
            match self.upload.last_mut() {
                Some(last) if r.start - last.end <= UPLOAD_GAP => last.end = r.end,
                _ => self.upload.push(r),
            }
        }
    }

    /// The numbers the host wrote since the device's last call, for the cost model: those of
    /// the slots from `self.synced` on, less the pending results. Costs one step per pending
    /// record, so that a walk that keeps its regions on the CPU does not pay for the ranges.
    fn host_numbers(&self, pay: &Payloads<R>) -> usize {
        let from = pay
            .slot_infos()
            .get(self.synced)
            .map_or(pay.top(), |i| i.offset());
        let lanes = pay.lanes();
        let computed: usize = self
            .pending
            .iter()
            .map(|r| pay.info(kind(r).2).stored(lanes))
            .sum();
        (pay.top() - from).saturating_sub(computed)
    }
}
