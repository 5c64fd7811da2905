//! The region device: runs the numeric regions of a walk ([`shared_ir::region`]) with the
//! region interpreter (`shaders::REGION_FORWARD`, `shaders::REGION_REVERSE`), one invocation
//! per lane, compiled once.
//!
//! The device keeps the walk's data arena in one storage buffer. A forward call uploads what
//! changed on the host since the last call, runs the region's records in dispatches of a few
//! thousand loop visits each (Mesa's software driver silently ends an invocation after 65,535;
//! see [`RegionPlan`]), and reads the new numbers back. A reverse call clears the adjoint
//! arena, seeds the result's adjoint, runs the tape's records backwards in the same kind of
//! dispatches and reads back the adjoints the caller asks for.
//!
//! With [`RegionPolicy::Auto`] the device takes a region only when the cost model of
//! [`shared_ir::region::RegionCosts`], with costs measured on this machine, expects it to be
//! faster than the CPU; with [`RegionPolicy::Always`] it takes every region it can run.

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::pipelines::{dynamic_uniform_entry, storage_entry, CachedPipeline};
use bytemuck::{Pod, Zeroable};
use shared_ir::region::{
    decode_op, is_wide, DeviceResult, MaskBits, Opcode, Region, RegionCosts, RegionDevice,
    RegionStats, OP_WORDS, SLOT_WORDS,
};
use shared_ir::LinalgOp;
use std::sync::Arc;

/// Invocations per workgroup (the shader's `@workgroup_size`).
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
    pad0: u32,
    pad1: u32,
}

const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;
const _: () = assert!(PARAMS_BYTES == shaders::REGION_PARAMS_BYTES);

/// When the device takes a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionPolicy {
    /// Every region it can run (`--device gpu`).
    Always,
    /// The regions the cost model expects to run faster here (`--device auto`).
    Auto,
}

/// A run of records for one dispatch: `ops` by the interpreter (one invocation per lane), or
/// one wide op (`wide` invocations per lane; see [`shared_ir::region::is_wide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The records.
    pub ops: std::ops::Range<u32>,
    /// Invocations per lane of a wide op; 0 for the interpreter.
    pub wide: u32,
}

/// How a region's records are cut into dispatches: runs of records for the interpreter whose
/// estimated loop visits stay within the budget, and wide ops on their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlan {
    /// The dispatches, in execution order.
    pub chunks: Vec<Chunk>,
    /// The largest estimated visits of one interpreter chunk.
    pub max_visits: u64,
}

fn slot(region: &Region, s: u32) -> &[u32] {
    let b = s as usize * SLOT_WORDS;
    &region.slots[b..b + SLOT_WORDS]
}

/// An upper bound on the loop-header visits one invocation makes for record `i` of `region`
/// (forward or reverse; the reverse pass does at most twice the forward's loops plus one
/// factorisation).
pub fn op_visits(region: &Region, i: usize) -> u64 {
    let w = &region.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
    let len = |s: u32| u64::from(slot(region, s)[1]);
    let rows = |s: u32| u64::from(slot(region, s)[4]);
    let cols = |s: u32| u64::from(slot(region, s)[5]);
    let (out, a, b) = (w[2], w[3], w[4]);
    let mut v = 8 + 4 * len(out);
    match w[0] {
        x if x == Opcode::Pack as u32 => v += 4 * u64::from(w[7]) + 4 * len(out),
        x if x == Opcode::Linalg as u32 => {
            let (m, k) = (rows(a), cols(a));
            let op = LinalgOp::ALL
                .get(w[1] as usize)
                .copied()
                .unwrap_or(LinalgOp::Dot);
            let c = if op.binary() { cols(b).max(len(b)) } else { 1 };
            v += 4 * (m + 1) * (k + 1) * (c + 2) + 4 * len(a);
            if op.factors() || op == LinalgOp::Inv {
                let kk = m.max(c);
                v += 8 * m * (m + 2) * (2 * m + 2 * kk + 4) + 4 * m * m * (m + 1);
            }
        }
        _ => {}
    }
    v
}

/// Invocations per lane when record `i` runs wide (0 when it runs in the interpreter): its
/// result's elements, or for a product in the reverse pass, the larger operand's.
pub fn wide_width(region: &Region, i: usize, reverse: bool) -> u32 {
    let w = &region.ops[i * OP_WORDS..(i + 1) * OP_WORDS];
    let Some(rec) = decode_op(w) else { return 0 };
    let len = |s: u32| slot(region, s)[1];
    if !is_wide(rec.opcode, rec.sub, len(rec.out), reverse) {
        return 0;
    }
    match (reverse, rec.opcode) {
        (true, Opcode::Linalg) => len(rec.a).max(if rec.sub == LinalgOp::Transpose.code() {
            0
        } else {
            len(rec.b)
        }),
        _ => len(rec.out),
    }
}

impl RegionPlan {
    /// Cuts `region` into dispatches: each wide op alone, and the records between them in
    /// chunks of at most `budget` estimated visits (a record over the budget alone).
    pub fn new(region: &Region, budget: u64, reverse: bool) -> Self {
        let n = region.len();
        let mut chunks = Vec::new();
        let (mut start, mut used, mut max_visits) = (0usize, 0u64, 0u64);
        let mut close = |chunks: &mut Vec<Chunk>, start: usize, end: usize, used: u64| {
            if end > start {
                chunks.push(Chunk {
                    ops: start as u32..end as u32,
                    wide: 0,
                });
                max_visits = max_visits.max(used);
            }
        };
        for i in 0..n {
            let wide = wide_width(region, i, reverse);
            if wide > 0 {
                close(&mut chunks, start, i, used);
                chunks.push(Chunk {
                    ops: i as u32..i as u32 + 1,
                    wide,
                });
                (start, used) = (i + 1, 0);
                continue;
            }
            let v = op_visits(region, i) + 1;
            if used + v > budget && i > start {
                close(&mut chunks, start, i, used);
                (start, used) = (i, 0);
            }
            used += v;
        }
        close(&mut chunks, start, n, used);
        RegionPlan { chunks, max_visits }
    }
}

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

/// The GPU region device.
#[derive(Debug)]
pub struct GpuRegions {
    ctx: Arc<GpuContext>,
    policy: RegionPolicy,
    budget: u64,
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
    progress: Grow,
    /// Lanes of the walk whose data the device holds.
    lanes: u32,
    /// Dispatches made, over the device's life (shared with [`GpuRegions::dispatch_counter`]).
    dispatches: Arc<std::sync::atomic::AtomicU64>,
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
            lanes: 0,
            dispatches: Arc::default(),
        }
    }

    /// A counter of the dispatches this device makes, readable after the device is handed to a
    /// session.
    pub fn dispatch_counter(&self) -> Arc<std::sync::atomic::AtomicU64> {
        Arc::clone(&self.dispatches)
    }

    /// Sets the loop-visit budget of one dispatch (tests use a small one to force many).
    pub fn with_visit_budget(mut self, budget: u64) -> Self {
        self.budget = budget.max(1);
        self
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
        let groups = (stats.lanes as u64).div_ceil(u64::from(WORKGROUP));
        if groups > 65_535 {
            return Err(GpuError::Unsupported(format!(
                "{} lanes in one walk exceed one dispatch ({} at most)",
                stats.lanes,
                65_535 * WORKGROUP
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

    fn ensure(
        &self,
        which: &str,
        grow: &mut Grow,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<bool, GpuError> {
        let bytes = bytes.max(16);
        if grow.buffer.is_some() && grow.bytes >= bytes {
            return Ok(false);
        }
        let limit = self.ctx.limits().max_buffer_size;
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
        let buffer = self.ctx.scoped("creating a region buffer", || {
            self.ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(&label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })?;
        grow.buffer = Some(buffer);
        grow.bytes = size;
        Ok(true)
    }

    fn pipeline(&self, reverse: bool, wide: bool) -> Result<CachedPipeline, GpuError> {
        let shader = match (reverse, wide) {
            (false, false) => &shaders::REGION_FORWARD,
            (true, false) => &shaders::REGION_REVERSE,
            (false, true) => &shaders::REGION_FORWARD_WIDE,
            (true, true) => &shaders::REGION_REVERSE_WIDE,
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
        self.ctx.pipelines.get(&self.ctx, shader, &[], &entries)
    }

    /// Uploads the region's tables and the data the device has not seen; returns the chunk
    /// plan.
    pub(crate) fn upload(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        clean_below: usize,
        reverse: bool,
    ) -> Result<RegionPlan, GpuError> {
        use wgpu::BufferUsages as U;
        let storage = U::STORAGE | U::COPY_DST | U::COPY_SRC;
        let mut data_grow = std::mem::take(&mut self.data);
        // Room after the data for the progress counters read back with it.
        let bytes = (data.len() + region.lanes as usize) as u64 * 4;
        let grown = self.ensure("data", &mut data_grow, bytes, storage);
        self.data = data_grow;
        let grown = grown?;
        let from = if grown || self.lanes != region.lanes {
            0
        } else {
            clean_below.min(data.len())
        };
        self.lanes = region.lanes;
        let tables: [(&str, &[u32]); 4] = [
            ("slots", &region.slots),
            ("ops", &region.ops),
            ("aux", &region.aux),
            ("masks", &masks.words),
        ];
        for (name, words) in tables {
            let mut g = std::mem::take(match name {
                "slots" => &mut self.slots,
                "ops" => &mut self.ops,
                "aux" => &mut self.aux,
                _ => &mut self.masks,
            });
            let r = self.ensure(name, &mut g, words.len() as u64 * 4, storage);
            let buffer = g.buffer.clone();
            *match name {
                "slots" => &mut self.slots,
                "ops" => &mut self.ops,
                "aux" => &mut self.aux,
                _ => &mut self.masks,
            } = g;
            r?;
            if !words.is_empty() {
                let b = buffer.expect("ensured");
                self.ctx
                    .queue()
                    .write_buffer(&b, 0, bytemuck::cast_slice(words));
            }
        }
        if from < data.len() {
            let b = self.data.buffer.as_ref().expect("ensured");
            self.ctx
                .queue()
                .write_buffer(b, from as u64 * 4, bytemuck::cast_slice(&data[from..]));
        }
        Ok(RegionPlan::new(region, self.budget, reverse))
    }

    /// Records one dispatch per chunk (backwards for the reverse pass) into a new command
    /// buffer, then a copy of the lanes' progress counters to byte `tail.1` of `tail.0`, and
    /// submits it.
    pub(crate) fn dispatch(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        plan: &RegionPlan,
        reverse: bool,
        tail: (&wgpu::Buffer, u64),
    ) -> Result<(), GpuError> {
        let kernels = [
            self.pipeline(reverse, false)?,
            self.pipeline(reverse, true)?,
        ];
        let align = u64::from(self.ctx.limits().min_uniform_offset_alignment).max(PARAMS_BYTES);
        let mut params = Vec::new();
        let order: Vec<&Chunk> = if reverse {
            plan.chunks.iter().rev().collect()
        } else {
            plan.chunks.iter().collect()
        };
        for c in &order {
            let p = Params {
                lanes: region.lanes,
                op_begin: c.ops.start,
                op_end: c.ops.end,
                words_per_mask: masks.words_per_mask.max(1),
                nan_bits: f32::NAN.to_bits(),
                inf_bits: f32::INFINITY.to_bits(),
                pad0: c.wide,
                pad1: 0,
            };
            params.extend_from_slice(bytemuck::bytes_of(&p));
            params.resize(params.len().next_multiple_of(align as usize), 0);
        }
        let mut g = std::mem::take(&mut self.params);
        let r = self.ensure(
            "params",
            &mut g,
            params.len() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        self.params = g;
        r?;
        let mut adj = std::mem::take(&mut self.adj);
        let r = self.ensure(
            "adjoints",
            &mut adj,
            16,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        );
        self.adj = adj;
        r?;
        let lanes = region.lanes as usize;
        let mut progress = std::mem::take(&mut self.progress);
        let r = self.ensure(
            "progress",
            &mut progress,
            lanes as u64 * 4,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        );
        self.progress = progress;
        r?;
        let start = if reverse { region.len() as u32 } else { 0 };
        let buf = |g: &Grow| g.buffer.clone().expect("ensured");
        let gb = buf(&self.progress);
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
        for c in &order {
            let invocations = u64::from(region.lanes) * u64::from(c.wide.max(1));
            let fits = invocations.div_ceil(u64::from(WORKGROUP))
                <= u64::from(max_groups) * u64::from(max_groups);
            if !fits || invocations >= 1 << 32 {
                return Err(GpuError::Unsupported(format!(
                    "{invocations} invocations for one op exceed one dispatch"
                )));
            }
        }
        let during = if reverse {
            "running a reverse region"
        } else {
            "running a region"
        };
        ctx.scoped(during, || {
            ctx.queue().write_buffer(&pb, 0, &params);
            ctx.queue()
                .write_buffer(&gb, 0, bytemuck::cast_slice(&vec![start; lanes]));
            let bind_group = |kernel: &CachedPipeline| {
                ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("ndvm.region.bind_group"),
                    layout: &kernel.layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &pb,
                                offset: 0,
                                size: std::num::NonZeroU64::new(PARAMS_BYTES),
                            }),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: whole(&sb),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: whole(&ob),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: whole(&ab),
                        },
                        wgpu::BindGroupEntry {
                            binding: 4,
                            resource: whole(&db),
                        },
                        wgpu::BindGroupEntry {
                            binding: 5,
                            resource: whole(&mb),
                        },
                        wgpu::BindGroupEntry {
                            binding: 6,
                            resource: whole(&jb),
                        },
                        wgpu::BindGroupEntry {
                            binding: 7,
                            resource: whole(&gb),
                        },
                    ],
                })
            };
            let groups = [bind_group(&kernels[0]), bind_group(&kernels[1])];
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
                let mut current = None;
                for (i, c) in order.iter().enumerate() {
                    let k = usize::from(c.wide > 0);
                    if current != Some(k) {
                        pass.set_pipeline(&kernels[k].pipeline);
                        current = Some(k);
                    }
                    pass.set_bind_group(0, &groups[k], &[(i as u64 * align) as u32]);
                    let n = (u64::from(region.lanes) * u64::from(c.wide.max(1)))
                        .div_ceil(u64::from(WORKGROUP)) as u32;
                    let x = n.min(max_groups);
                    pass.dispatch_workgroups(x, n.div_ceil(x), 1);
                }
            }
            encoder.copy_buffer_to_buffer(&gb, 0, tail.0, tail.1, lanes as u64 * 4);
            ctx.queue().submit([encoder.finish()]);
        })?;
        self.dispatches
            .fetch_add(order.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Runs `region` forward over `data` (see [`RegionDevice::forward`]).
    pub fn run_forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &mut [f32],
        clean_below: usize,
    ) -> Result<(), GpuError> {
        let stats = RegionStats {
            ops: region.len(),
            lanes: region.lanes as usize,
            data_len: data.len(),
            ..RegionStats::default()
        };
        self.check(&stats)?;
        let plan = self.upload(region, masks, data, clean_below, false)?;
        let db = self.data.buffer.clone().expect("uploaded");
        self.dispatch(region, masks, &plan, false, (&db, data.len() as u64 * 4))?;
        let from = clean_below.min(data.len());
        let lanes = region.lanes as usize;
        let back: Vec<f32> = self.ctx.read_back_at(
            "reading a region's results",
            &db,
            from as u64 * 4,
            data.len() - from + lanes,
        )?;
        let (values, progress) = back.split_at(data.len() - from);
        check_progress(progress, region.len() as u32, "forward")?;
        data[from..].copy_from_slice(values);
        Ok(())
    }

    /// Runs `region` backwards (see [`RegionDevice::reverse`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run_reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        clean_below: usize,
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
        let plan = self.upload(region, masks, data, clean_below, true)?;
        let mut adj = std::mem::take(&mut self.adj);
        let read = read.min(adj_len);
        let lanes = region.lanes as usize;
        let r = self.ensure(
            "adjoints",
            &mut adj,
            (adj_len.max(read + lanes)) as u64 * 4,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        );
        self.adj = adj;
        r?;
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
        self.dispatch(region, masks, &plan, true, (&jb, read as u64 * 4))?;
        let mut back: Vec<f32> =
            self.ctx
                .read_back_at("reading the adjoints", &jb, 0, read + lanes)?;
        check_progress(&back[read..], 0, "reverse")?;
        back.truncate(read);
        Ok(back)
    }
}

impl RegionDevice<f32> for GpuRegions {
    fn describe(&self) -> String {
        format!("GPU region interpreter on {}", self.ctx.adapter().name)
    }

    fn defer_at(&mut self, lanes: usize) -> bool {
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
                    // At most the whole arena each way; each wide op is a dispatch, and the
                    // interpreter's records come a few hundred to one.
                    let bytes = (stats.data_len as u64) * 4;
                    let narrow = (stats.ops - stats.wide_ops) as u64;
                    let dispatches = stats.wide_ops as u64 + narrow.div_ceil(256) + 1;
                    c.prefer_device(stats, bytes, dispatches)
                }
                Err(_) => false,
            },
        }
    }

    fn forward(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &mut [f32],
        clean_below: usize,
    ) -> DeviceResult<()> {
        if let Some(e) = self.refused.take() {
            return Err(e.to_string());
        }
        self.run_forward(region, masks, data, clean_below)
            .map_err(|e| e.to_string())
    }

    fn reverse(
        &mut self,
        region: &Region,
        masks: &MaskBits,
        data: &[f32],
        clean_below: usize,
        adj_len: usize,
        seed: (usize, &[f32]),
        read: usize,
    ) -> DeviceResult<Vec<f32>> {
        if let Some(e) = self.refused.take() {
            return Err(e.to_string());
        }
        self.run_reverse(region, masks, data, clean_below, adj_len, seed, read)
            .map_err(|e| e.to_string())
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
