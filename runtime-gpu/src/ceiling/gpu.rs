//! Running the ceiling kernel: upload the filter and the noise, record one dispatch per (batch,
//! step chunk) with its parameters at a dynamic uniform offset, read the NLLs back.

use super::plan::{CeilingConfig, CeilingPlan};
use super::problem::{noise_population, CeilingProblem};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::pipelines::{dynamic_uniform_entry, storage_entry};
use crate::pool::BufferKind;
use bytemuck::{Pod, Zeroable};

/// The kernel's `Params` block, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Params {
    d: u32,
    dp: u32,
    cand_base: u32,
    step_begin: u32,
    step_count: u32,
    steps_total: u32,
    save_state: u32,
    pad: u32,
}

const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;
const _: () = assert!(PARAMS_BYTES == shaders::CEILING_PARAMS_BYTES);

/// The bind-group layout of `shaders::CEILING`.
fn layout_entries() -> [wgpu::BindGroupLayoutEntry; 6] {
    [
        dynamic_uniform_entry(0, PARAMS_BYTES),
        storage_entry(1, true),
        storage_entry(2, true),
        storage_entry(3, true),
        storage_entry(4, false),
        storage_entry(5, false),
    ]
}

/// A binding of the first `bytes` of `buffer`.
fn binding(buffer: &wgpu::Buffer, bytes: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: 0,
        size: std::num::NonZeroU64::new(bytes),
    })
}

impl GpuContext {
    /// The plan of `cfg` on this device.
    pub fn ceiling_plan(&self, cfg: &CeilingConfig) -> Result<CeilingPlan, GpuError> {
        CeilingPlan::new(cfg, self.limits())
    }

    /// The NLL of every candidate of `cfg`, computed by `shaders::CEILING` in `f32`.
    ///
    /// Each candidate is one workgroup. Long runs are cut into dispatches of a few time steps
    /// (the loop budget) and into batches of candidates whose state fits one storage binding;
    /// see [`CeilingPlan`]. Device errors, a lost device and a failed read-back are errors.
    pub fn ceiling(&self, cfg: &CeilingConfig) -> Result<Vec<f32>, GpuError> {
        let plan = self.ceiling_plan(cfg)?;
        let problem = CeilingProblem::<f32>::new(cfg.d, cfg.steps);
        let noise = noise_population::<f32>(0..cfg.population);
        let overrides = [("DMAX", plan.dmax), ("WG", plan.workgroup_size)];
        let kernel = self
            .pipelines
            .get(self, &shaders::CEILING, &overrides, &layout_entries())?;

        // One parameter block per dispatch, each at an aligned offset.
        let align = u64::from(self.limits().min_uniform_offset_alignment).max(PARAMS_BYTES);
        let chunks = plan.chunks.len();
        let mut params_bytes = Vec::new();
        for batch in plan.batches() {
            for (i, chunk) in plan.chunks.iter().enumerate() {
                let p = Params {
                    d: plan.d as u32,
                    dp: plan.dp as u32,
                    cand_base: batch.start as u32,
                    step_begin: chunk.begin as u32,
                    step_count: chunk.count as u32,
                    steps_total: plan.steps as u32,
                    save_state: u32::from(i + 1 < chunks),
                    pad: 0,
                };
                params_bytes.extend_from_slice(bytemuck::bytes_of(&p));
                params_bytes.resize(params_bytes.len().next_multiple_of(align as usize), 0);
            }
        }

        let state_bytes = if chunks > 1 {
            plan.batch as u64 * plan.state_bytes
        } else {
            16 // bound but never touched when one dispatch runs every step
        };
        let sizes = [
            (BufferKind::Uniform, params_bytes.len() as u64),
            (BufferKind::Storage, (problem.f.len() * 16) as u64),
            (BufferKind::Storage, (problem.obs.len() * 8) as u64),
            (BufferKind::Storage, (noise.len() * 8) as u64),
            (BufferKind::Storage, state_bytes),
            (BufferKind::Storage, (cfg.population * 4) as u64),
        ];
        let bufs = sizes
            .iter()
            .map(|&(kind, bytes)| self.pool.take(self, kind, bytes))
            .collect::<Result<Vec<_>, _>>()?;
        let (params_buf, f_buf, obs_buf, noise_buf, state_buf, out_buf) =
            (&bufs[0], &bufs[1], &bufs[2], &bufs[3], &bufs[4], &bufs[5]);

        self.scoped("running the ceiling kernel", || {
            let queue = self.queue();
            queue.write_buffer(params_buf, 0, &params_bytes);
            queue.write_buffer(f_buf, 0, bytemuck::cast_slice(&problem.f));
            queue.write_buffer(obs_buf, 0, bytemuck::cast_slice(&problem.obs));
            queue.write_buffer(noise_buf, 0, bytemuck::cast_slice(&noise));
            let bind_group = self.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ndvm.ceiling.bind_group"),
                layout: &kernel.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: binding(params_buf, PARAMS_BYTES),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: binding(f_buf, sizes[1].1),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: binding(obs_buf, sizes[2].1),
                    },
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: binding(noise_buf, sizes[3].1),
                    },
                    wgpu::BindGroupEntry {
                        binding: 4,
                        resource: binding(state_buf, sizes[4].1),
                    },
                    wgpu::BindGroupEntry {
                        binding: 5,
                        resource: binding(out_buf, sizes[5].1),
                    },
                ],
            });
            // One submission per batch, so no single submission holds the whole population.
            let mut slot = 0u64;
            for batch in plan.batches() {
                let mut encoder =
                    self.device()
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("ndvm.ceiling.batch"),
                        });
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("ndvm.ceiling.pass"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(&kernel.pipeline);
                    for _ in 0..chunks {
                        pass.set_bind_group(0, &bind_group, &[(slot * align) as u32]);
                        pass.dispatch_workgroups(batch.len() as u32, 1, 1);
                        slot += 1;
                    }
                }
                queue.submit([encoder.finish()]);
            }
        })?;
        self.read_back::<f32>("reading the ceiling NLLs", out_buf, cfg.population)
    }
}
