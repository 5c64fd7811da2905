//! The region device's GPU side: growing buffers, uploads, the dispatches of a plan (its
//! chunks of records, forward or backwards), and the read-backs with the lanes' progress
//! counters.

use super::{GpuRegions, RegionPlan};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::pipelines::{dynamic_uniform_entry, storage_entry, CachedPipeline};
use bytemuck::{Pod, Zeroable};
use shared_ir::region::{MaskBits, Region, RegionStats};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

/// The interpreter's `Params` block, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
struct Params {
    lanes: u32,
    op_begin: u32,
    op_end: u32,
    words_per_mask: u32,
    nan_bits: u32,
    inf_bits: u32,
    width: u32,
    pad1: u32,
}

const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;
const _: () = assert!(PARAMS_BYTES == shaders::REGION_PARAMS_BYTES);
/// Usages of every storage buffer of the device: read and written by kernels, filled by
/// uploads, copied out.
const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

/// The whole of `b` as a binding.
fn whole(b: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer: b,
        offset: 0,
        size: None,
    })
}

/// A storage buffer of the device that grows by powers of two.
#[derive(Debug, Default)]
pub(crate) struct Grow {
    pub(crate) buffer: Option<wgpu::Buffer>,
    bytes: u64,
}
impl Grow {
    /// Makes the buffer hold at least `bytes` (a new one, contents lost, when it must grow);
    /// true when it was made anew.
    fn ensure(
        &mut self,
        ctx: &GpuContext,
        which: &str,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<bool, GpuError> {
        let bytes = bytes.max(16);
        if self.buffer.is_some() && self.bytes >= bytes {
            return Ok(false);
        }
        let limit = ctx.limits().max_buffer_size;
        let size = bytes.next_power_of_two().max(256).min(limit);
        if size < bytes {
            return Err(GpuError::BufferTooLarge {
                label: format!("ndvm.region.{which}"),
                bytes,
                limit,
                which: "max_buffer_size",
            });
        }
        let label = format!("ndvm.region.{which}");
        let buffer = ctx.scoped("creating a region buffer", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })?;
        self.buffer = Some(buffer);
        self.bytes = size;
        Ok(true)
    }

    /// [`Grow::ensure`], keeping the contents: a buffer made anew gets a copy of the old one's
    /// (the device's results of earlier regions of the walk, which the host does not have).
    fn ensure_keeping(
        &mut self,
        ctx: &GpuContext,
        which: &str,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<(), GpuError> {
        let (old, old_bytes) = (self.buffer.clone(), self.bytes);
        if !self.ensure(ctx, which, bytes, usage)? {
            return Ok(());
        }
        let (Some(old), Some(new)) = (old, self.buffer.as_ref()) else {
            return Ok(());
        };
        ctx.scoped("copying a grown region buffer", || {
            let mut encoder =
                ctx.device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("ndvm.region.grow"),
                    });
            encoder.copy_buffer_to_buffer(&old, 0, new, 0, old_bytes);
            ctx.queue().submit([encoder.finish()]);
        })
    }
}

impl GpuRegions {
    fn pipeline(&self, reverse: bool, shared: bool) -> Result<CachedPipeline, GpuError> {
        let shader = match (reverse, shared) {
            (false, false) => &shaders::REGION_FORWARD,
            (true, false) => &shaders::REGION_REVERSE,
            (false, true) => &shaders::REGION_FORWARD_SHARED,
            (true, true) => &shaders::REGION_REVERSE_SHARED,
        };
        let entries = [
            dynamic_uniform_entry(0, PARAMS_BYTES),
            storage_entry(1, true),
            storage_entry(2, true),
            storage_entry(3, true),
            storage_entry(4, false),
            storage_entry(5, true),
            storage_entry(6, false),
            storage_entry(7, false),
        ];
        self.ctx
            .pipelines
            .get(&self.ctx, shader, &[("WG", self.workgroup)], &entries)
    }

    /// Uploads the region's tables and the `upload` ranges of `data`; returns the chunk plan.
    pub(crate) fn upload(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
        reverse: bool,
    ) -> Result<RegionPlan, GpuError> {
        let bytes = data.len() as u64 * 4;
        self.data
            .ensure_keeping(&self.ctx, "data", bytes, STORAGE)?;
        let tables: [(&str, &mut Grow, &[u32]); 4] = [
            ("slots", &mut self.slots, &region.slots),
            ("ops", &mut self.ops, &region.ops),
            ("aux", &mut self.aux, &region.aux),
            ("masks", &mut self.masks, &masks.words),
        ];
        let mut sent = 0u64;
        for (name, grow, words) in tables {
            grow.ensure(&self.ctx, name, words.len() as u64 * 4, STORAGE)?;
            let buffer = grow.buffer.clone();
            if !words.is_empty() {
                let b = buffer.expect("ensured");
                self.ctx
                    .queue()
                    .write_buffer(&b, 0, bytemuck::cast_slice(words));
                sent += words.len() as u64 * 4;
            }
        }
        let b = self.data.buffer.as_ref().expect("ensured");
        for r in upload {
            let r = r.start.min(data.len())..r.end.min(data.len());
            if !r.is_empty() {
                self.ctx.queue().write_buffer(
                    b,
                    r.start as u64 * 4,
                    bytemuck::cast_slice(&data[r.clone()]),
                );
                sent += r.len() as u64 * 4;
            }
        }
        self.traffic.add_upload(sent);
        let width = self.width_for(region, reverse);
        Ok(RegionPlan::new(region, self.budget, reverse, width))
    }

    /// Records one dispatch per chunk (backwards for the reverse pass) into a new command
    /// buffer, then (with a `tail`) a copy of the lanes' progress counters to byte `tail.1` of
    /// `tail.0`, and submits it.
    pub(crate) fn dispatch(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        plan: &RegionPlan,
        reverse: bool,
        tail: Option<(&wgpu::Buffer, u64)>,
    ) -> Result<(), GpuError> {
        let kernel = self.pipeline(reverse, plan.width > 1)?;
        let align = u64::from(self.ctx.limits().min_uniform_offset_alignment).max(PARAMS_BYTES);
        let mut params = Vec::new();
        let order: Vec<&std::ops::Range<u32>> = if reverse {
            plan.chunks.iter().rev().collect()
        } else {
            plan.chunks.iter().collect()
        };
        for c in &order {
            let p = Params {
                lanes: region.lanes,
                op_begin: c.start,
                op_end: c.end,
                words_per_mask: masks.words_per_mask.max(1),
                nan_bits: f32::NAN.to_bits(),
                inf_bits: f32::INFINITY.to_bits(),
                width: plan.width,
                pad1: 0,
            };
            params.extend_from_slice(bytemuck::bytes_of(&p));
            params.resize(params.len().next_multiple_of(align as usize), 0);
        }
        self.params.ensure(
            &self.ctx,
            "params",
            params.len() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        )?;
        self.adj.ensure(&self.ctx, "adjoints", 16, STORAGE)?;
        let lanes = region.lanes as usize;
        let (progress, which) = if reverse {
            (&mut self.progress_back, "progress.reverse")
        } else {
            (&mut self.progress, "progress")
        };
        progress.ensure(&self.ctx, which, lanes as u64 * 4, STORAGE)?;
        let start = if reverse { region.len() as u32 } else { 0 };
        let buf = |g: &Grow| g.buffer.clone().expect("ensured");
        let gb = buf(progress);
        let (pb, sb, ob, ab, db, mb, jb) = (
            buf(&self.params),
            buf(&self.slots),
            buf(&self.ops),
            buf(&self.aux),
            buf(&self.data),
            buf(&self.masks),
            buf(&self.adj),
        );
        let ctx = Arc::clone(&self.ctx);
        let max_groups = ctx.limits().max_workgroups_per_dimension.max(1);
        let invocations = u64::from(region.lanes) * u64::from(plan.width.max(1));
        let groups = invocations.div_ceil(u64::from(self.workgroup));
        if groups > u64::from(max_groups) * u64::from(max_groups) || invocations >= 1 << 32 {
            return Err(GpuError::Unsupported(format!(
                "{invocations} invocations exceed one dispatch"
            )));
        }
        let groups = groups as u32;
        let during = if reverse {
            "running a reverse region"
        } else {
            "running a region"
        };
        ctx.scoped(during, || {
            ctx.queue().write_buffer(&pb, 0, &params);
            ctx.queue()
                .write_buffer(&gb, 0, bytemuck::cast_slice(&vec![start; lanes]));
            // Binding 0 is the params block (one chunk's at a dynamic offset); 1.. the tables,
            // the data, the masks, the adjoints and the progress counters, in the WGSL's order.
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &pb,
                    offset: 0,
                    size: std::num::NonZeroU64::new(PARAMS_BYTES),
                }),
            }];
            for (i, b) in [&sb, &ob, &ab, &db, &mb, &jb, &gb].into_iter().enumerate() {
                entries.push(wgpu::BindGroupEntry {
                    binding: i as u32 + 1,
                    resource: whole(b),
                });
            }
            let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ndvm.region.bind_group"),
                layout: &kernel.layout,
                entries: &entries,
            });
            let mut encoder =
                ctx.device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("ndvm.region"),
                    });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("ndvm.region.pass"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&kernel.pipeline);
                let x = groups.min(max_groups);
                for i in 0..order.len() {
                    pass.set_bind_group(0, &bind_group, &[(i as u64 * align) as u32]);
                    pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
                }
            }
            if let Some((to, at)) = tail {
                encoder.copy_buffer_to_buffer(&gb, 0, to, at, lanes as u64 * 4);
            }
            ctx.queue().submit([encoder.finish()]);
        })?;
        self.traffic.add_dispatches(order.len() as u64, plan.width);
        Ok(())
    }

    /// Runs `region` forward over `data` (see [`shared_ir::region::RegionDevice::forward`]):
    /// its results stay on the device, and the lanes' progress counters come back with the
    /// next read, which fails if a lane fell short.
    pub fn run_forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
    ) -> Result<(), GpuError> {
        let stats = RegionStats {
            ops: region.len(),
            lanes: region.lanes as usize,
            data_len: data.len(),
            ..RegionStats::default()
        };
        self.check(&stats)?;
        self.sound()?;
        if self.unchecked.is_some() {
            // This pass rewrites the counters of the last one, which no read has brought back.
            self.read_counted("reading the lanes' progress", None)?;
        }
        let plan = self.upload(region, masks, data, upload, false)?;
        self.dispatch(region, masks, &plan, false, None)?;
        self.unchecked = Some((region.len() as u32, region.lanes as usize));
        Ok(())
    }

    /// Checks now, with one wait, that every lane of the last forward dispatch of `region`
    /// reached its end.
    pub(crate) fn check_forward(&mut self, region: &Region) -> Result<(), GpuError> {
        self.unchecked = Some((region.len() as u32, region.lanes as usize));
        self.read_counted("reading the lanes' progress", None)
            .map(drop)
    }

    /// Fails with the error of a pass the driver cut short earlier in this walk.
    fn sound(&self) -> Result<(), GpuError> {
        match &self.cut_short {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Checks that every lane's progress counter reached `end`; a pass cut short fails the
    /// rest of the walk too.
    fn check_lanes(&mut self, progress: &[f32], end: u32, pass: &str) -> Result<(), GpuError> {
        let r = check_progress(progress, end, pass);
        if let Err(e) = &r {
            self.cut_short = Some(e.clone());
        }
        r
    }

    /// Reads `count` numbers of `buffer` from number `from` on (when given), and with them the
    /// progress counters of a forward pass not yet checked, in one wait; checks the counters.
    /// Counted in the traffic: the bytes, and the wait (a sync).
    fn read_counted(
        &mut self,
        during: &str,
        piece: Option<(&wgpu::Buffer, usize, usize)>,
    ) -> Result<Vec<f32>, GpuError> {
        self.sound()?;
        let mut pieces: Vec<(&wgpu::Buffer, u64, usize)> = piece
            .iter()
            .map(|&(b, from, count)| (b, from as u64 * 4, count))
            .collect();
        // The last forward pass's end and lanes, with the buffer of its counters.
        let unchecked = self.unchecked.take().zip(self.progress.buffer.clone());
        if let Some(((_, lanes), gb)) = &unchecked {
            pieces.push((gb, 0, *lanes));
        }
        let t = Instant::now();
        let mut back: Vec<f32> = self.ctx.read_back_pieces(during, &pieces)?;
        self.traffic.add_wait(t.elapsed());
        self.traffic.add_download(back.len() as u64 * 4);
        if let Some(((end, lanes), _)) = unchecked {
            let at = back.len() - lanes;
            self.check_lanes(&back[at..], end, "forward")?;
            back.truncate(at);
        }
        Ok(back)
    }

    /// Reads `out.len()` numbers of the device's arena from number `from` on.
    pub fn read_data(&mut self, from: usize, out: &mut [f32]) -> Result<(), GpuError> {
        if out.is_empty() {
            return Ok(());
        }
        let Some(db) = self.data.buffer.clone() else {
            return Err(GpuError::Internal {
                during: "reading a region's results".into(),
                message: "the device holds no data".into(),
            });
        };
        let back = self.read_counted("reading a region's results", Some((&db, from, out.len())))?;
        out.copy_from_slice(&back);
        Ok(())
    }

    /// Runs `region` backwards (see [`shared_ir::region::RegionDevice::reverse`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run_reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        upload: &[Range<usize>],
        adj_len: usize,
        seed: (usize, &[f32]),
        read: usize,
    ) -> Result<Vec<f32>, GpuError> {
        let stats = RegionStats {
            ops: region.len(),
            lanes: region.lanes as usize,
            data_len: data.len(),
            adj_len,
            ..RegionStats::default()
        };
        self.check(&stats)?;
        self.sound()?;
        let plan = self.upload(region, masks, data, upload, true)?;
        let read = read.min(adj_len);
        let lanes = region.lanes as usize;
        self.adj.ensure(
            &self.ctx,
            "adjoints",
            (adj_len.max(read + lanes)) as u64 * 4,
            STORAGE,
        )?;
        let jb = self.adj.buffer.clone().expect("ensured");
        let bytes = (adj_len as u64 * 4).next_multiple_of(4);
        self.ctx.scoped("clearing the adjoints", || {
            let mut encoder =
                self.ctx
                    .device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("ndvm.region.clear"),
                    });
            encoder.clear_buffer(&jb, 0, Some(bytes.max(4)));
            self.ctx.queue().submit([encoder.finish()]);
            // Runs at the start of the next submission, after the clear.
            self.ctx
                .queue()
                .write_buffer(&jb, seed.0 as u64 * 4, bytemuck::cast_slice(seed.1));
        })?;
        self.traffic.add_upload(seed.1.len() as u64 * 4);
        self.dispatch(region, masks, &plan, true, Some((&jb, read as u64 * 4)))?;
        let mut back = self.read_counted("reading the adjoints", Some((&jb, 0, read + lanes)))?;
        self.check_lanes(&back[read..], 0, "reverse")?;
        back.truncate(read);
        Ok(back)
    }
}

/// Checks that every lane's progress counter (read back as `f32` bit patterns) reached `end`.
fn check_progress(progress: &[f32], end: u32, pass: &str) -> Result<(), GpuError> {
    let short = progress.iter().filter(|p| p.to_bits() != end).count();
    if short == 0 {
        return Ok(());
    }
    Err(GpuError::Internal {
        during: format!("the {pass} region pass"),
        message: format!(
            "the driver cut {short} of {} invocations short (a per-invocation loop cap lower \
             than the dispatch plan assumes)",
            progress.len()
        ),
    })
}
