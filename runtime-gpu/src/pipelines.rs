//! Compute pipelines, compiled once per (shader, override values) and cached in the context.

use crate::context::GpuContext;
use crate::error::GpuError;
use shaders::Shader;
use std::collections::HashMap;
use std::sync::Mutex;

/// A compiled pipeline and the layout of its bind group 0.
#[derive(Clone, Debug)]
pub(crate) struct CachedPipeline {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
}

/// Which pipeline: the shader's name and its override values.
type Key = (&'static str, Vec<(&'static str, u32)>);

/// The pipelines a context has compiled.
#[derive(Default)]
pub(crate) struct PipelineCache {
    compiled: Mutex<HashMap<Key, CachedPipeline>>,
    compiles: std::sync::atomic::AtomicUsize,
}

impl PipelineCache {
    /// How many pipelines have been compiled (for tests: a second request must not compile).
    pub(crate) fn compiles(&self) -> usize {
        self.compiles.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The pipeline of `shader` with `overrides` and the bind-group layout `entries`, compiled on
    /// first request. Compilation errors (WGSL the device rejects) come back as errors.
    pub(crate) fn get(
        &self,
        ctx: &GpuContext,
        shader: &Shader,
        overrides: &[(&'static str, u32)],
        entries: &[wgpu::BindGroupLayoutEntry],
    ) -> Result<CachedPipeline, GpuError> {
        let key: Key = (shader.name, overrides.to_vec());
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = compiled.get(&key) {
            return Ok(p.clone());
        }
        let suffix: Vec<String> = overrides.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let label = format!("ndvm.{}[{}]", shader.name, suffix.join(","));
        let constants: Vec<(&str, f64)> =
            overrides.iter().map(|&(n, v)| (n, f64::from(v))).collect();
        let during = format!("compiling pipeline `{label}`");
        let device = ctx.device();
        let made = ctx.scoped(&during, || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Wgsl(shader.source.into()),
            });
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries,
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(shader.entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    // Every kernel writes its workgroup memory before reading it.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            });
            CachedPipeline { pipeline, layout }
        })?;
        self.compiles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        log::debug!("ndvm GPU: compiled {label}");
        compiled.insert(key, made.clone());
        Ok(made)
    }
}

/// A layout entry for a storage buffer at `binding`.
pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A layout entry for a uniform block of `bytes` at `binding`, bound at a dynamic offset.
pub(crate) fn dynamic_uniform_entry(binding: u32, bytes: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: std::num::NonZeroU64::new(bytes),
        },
        count: None,
    }
}
