//! Finding adapters and choosing one, explicitly and with the reason logged.
//!
//! The choice: the adapter whose name contains `NDVM_ADAPTER` (case-insensitive) when that
//! variable is set; otherwise a discrete GPU, then an integrated one, then a virtual one, then
//! a CPU adapter such as Mesa's lavapipe (`llvmpipe`), preferring Vulkan among equals.

use crate::error::GpuError;

/// The environment variable that picks an adapter by a substring of its name.
pub const ADAPTER_ENV: &str = "NDVM_ADAPTER";

/// How to create a [`crate::GpuContext`].
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// The backends searched for adapters.
    pub backends: wgpu::Backends,
    /// Pick the adapter whose name contains this (case-insensitive); `None`: the ranking.
    pub adapter_name: Option<String>,
    /// How long one wait for the device may take before it is reported as an error.
    pub wait_timeout: std::time::Duration,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            backends: wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12,
            adapter_name: None,
            wait_timeout: std::time::Duration::from_secs(600),
        }
    }
}

impl ContextOptions {
    /// The defaults, with `NDVM_ADAPTER` read from the environment.
    pub fn from_env() -> Self {
        let adapter_name = std::env::var(ADAPTER_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty());
        ContextOptions {
            adapter_name,
            ..ContextOptions::default()
        }
    }
}

/// The limits of an adapter that matter to ndvm's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Largest buffer, bytes.
    pub max_buffer_size: u64,
    /// Largest storage-buffer binding, bytes.
    pub max_storage_buffer_binding_size: u64,
    /// Largest workgroup along x.
    pub max_workgroup_size_x: u32,
    /// Most invocations in one workgroup.
    pub max_invocations_per_workgroup: u32,
    /// Most workgroups along one dimension of a dispatch.
    pub max_workgroups_per_dimension: u32,
    /// Workgroup (shared) memory, bytes.
    pub max_workgroup_storage_bytes: u32,
    /// Alignment of a dynamic uniform-buffer offset, bytes.
    pub min_uniform_offset_alignment: u32,
}

impl DeviceLimits {
    /// The limits of wgpu's `Limits`.
    pub fn from_wgpu(l: &wgpu::Limits) -> Self {
        DeviceLimits {
            max_buffer_size: l.max_buffer_size,
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_workgroup_size_x: l.max_compute_workgroup_size_x,
            max_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_workgroup_storage_bytes: l.max_compute_workgroup_storage_size,
            min_uniform_offset_alignment: l.min_uniform_buffer_offset_alignment,
        }
    }

    /// No device: limits that never bind (for plans made for the CPU twin alone).
    pub fn unbounded() -> Self {
        DeviceLimits {
            max_buffer_size: u64::MAX,
            max_storage_buffer_binding_size: u64::MAX,
            max_workgroup_size_x: 1024,
            max_invocations_per_workgroup: 1024,
            max_workgroups_per_dimension: u32::MAX,
            max_workgroup_storage_bytes: u32::MAX,
            min_uniform_offset_alignment: 256,
        }
    }
}

/// What `ndvm devices` shows about one adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)`, `NVIDIA H200`).
    pub name: String,
    /// `Vulkan`, `Metal`, `Dx12`, `Gl`.
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu`, `Other`.
    pub device_type: String,
    /// The driver's name.
    pub driver: String,
    /// The driver's version text.
    pub driver_info: String,
    /// The limits that matter.
    pub limits: DeviceLimits,
}

impl AdapterSummary {
    /// The summary of a wgpu adapter.
    pub fn of(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        AdapterSummary {
            name: info.name,
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver,
            driver_info: info.driver_info,
            limits: DeviceLimits::from_wgpu(&adapter.limits()),
        }
    }

    /// True for a software adapter (Mesa's lavapipe and the like).
    pub fn is_cpu(&self) -> bool {
        self.device_type == "Cpu"
    }
}

/// Every adapter of `backends`, in the order the instance reports them.
pub(crate) fn enumerate(instance: &wgpu::Instance, backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(backends))
}

/// Every adapter the default options can see, summarised (for `ndvm devices`).
pub fn list_adapters(options: &ContextOptions) -> Vec<AdapterSummary> {
    let instance = crate::context::new_instance(options.backends);
    enumerate(&instance, options.backends)
        .iter()
        .map(AdapterSummary::of)
        .collect()
}

/// Lower is better: discrete, integrated, virtual, CPU, other; Vulkan first among equals.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan => 0,
        wgpu::Backend::Metal | wgpu::Backend::Dx12 => 1,
        _ => 2,
    };
    (kind, backend)
}

/// Picks an adapter and says why. Errors when there is none, or none matches the name asked for.
pub(crate) fn choose(
    adapters: Vec<wgpu::Adapter>,
    options: &ContextOptions,
) -> Result<(wgpu::Adapter, String), GpuError> {
    if adapters.is_empty() {
        return Err(GpuError::NoAdapter {
            backends: format!("{:?}", options.backends),
            wanted: options.adapter_name.clone(),
        });
    }
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    if let Some(wanted) = &options.adapter_name {
        let needle = wanted.to_lowercase();
        let found = adapters
            .into_iter()
            .filter(|a| a.get_info().name.to_lowercase().contains(&needle))
            .min_by_key(|a| rank(&a.get_info()));
        return match found {
            Some(a) => Ok((a, format!("name contains `{wanted}` ({ADAPTER_ENV})"))),
            None => Err(GpuError::AdapterNotFound {
                wanted: wanted.clone(),
                found: names.join(", "),
            }),
        };
    }
    let best = adapters
        .into_iter()
        .min_by_key(|a| rank(&a.get_info()))
        .expect("non-empty");
    let info = best.get_info();
    let why = format!(
        "best of {} adapter(s) by type ({:?}), then backend ({:?})",
        names.len(),
        info.device_type,
        info.backend
    );
    Ok((best, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_adapter_at_all_names_the_one_asked_for() {
        let options = ContextOptions {
            adapter_name: Some("no-such-adapter-anywhere".into()),
            ..ContextOptions::default()
        };
        let Err(e) = choose(Vec::new(), &options) else {
            panic!("an adapter from nothing");
        };
        assert!(matches!(e, GpuError::NoAdapter { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("no-such-adapter-anywhere"), "{text}");
        assert!(text.contains("mesa-vulkan-drivers"), "{text}");
        let Err(e) = choose(Vec::new(), &ContextOptions::default()) else {
            panic!("an adapter from nothing");
        };
        assert!(!e.to_string().contains("asked for"), "{e}");
    }
}
