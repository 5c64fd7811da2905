//! The wgpu backend of ndvm.
//!
//! `runtime-gpu` owns one long-lived GPU context per process ([`GpuContext::shared`]: instance,
//! adapter, device and queue, with pipelines compiled once and cached, and pooled buffers), the
//! choice between GPU and CPU ([`DeviceChoice`], where `auto` falls back to the CPU when there
//! is no usable adapter), the measured dispatch costs a cost model needs ([`DispatchCosts`]),
//! and the numeric-ceiling kernel ([`GpuContext::ceiling`]) with its CPU twin ([`cpu_twin`]).
//! It is never required: every program runs without a GPU. Device errors are values of
//! [`GpuError`], never panics.
//!
//! | module | what |
//! | --- | --- |
//! | `adapter` | finding adapters, choosing one (`NDVM_ADAPTER=substring`), their limits |
//! | `context` | the context: device, queue, error scopes, waits, read-back |
//! | `pipelines`, `pool` | the pipeline cache and the buffer pool |
//! | `costs` | empty-dispatch round trip and transfer bandwidth, measured once |
//! | `choice` | `auto` / `gpu` / `cpu` |
//! | [`ceiling`] | the ceiling experiment's problem, dispatch plan and GPU run |
//! | [`cpu_twin`] | the ceiling kernel on the CPU, written to read like the shader |
//! | [`region`] | the region device: a walk's numeric regions on the GPU, forward and reverse, and its CPU twin ([`region::TwinRegions`]) |
//!
//! The CPU twin needs no device:
//!
//! ```
//! use runtime_gpu::ceiling::{noise_population, CeilingConfig, CeilingPlan, CeilingProblem};
//! use runtime_gpu::{cpu_twin, DeviceLimits};
//!
//! let cfg = CeilingConfig::new(4, 8);
//! let plan = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()).unwrap();
//! let problem = CeilingProblem::<f64>::new(cfg.d, cfg.steps);
//! let nll = cpu_twin::population(&problem, &plan, &noise_population(0..cfg.population));
//! assert_eq!(nll.len(), 8);
//! assert!(nll.iter().all(|x| x.is_finite()));
//! ```
//!
//! The same population on the GPU, falling back to the twin where there is none:
//!
//! ```no_run
//! use runtime_gpu::ceiling::CeilingConfig;
//! use runtime_gpu::{select, DeviceChoice, Executor};
//!
//! let cfg = CeilingConfig::new(16, 1024);
//! match select(DeviceChoice::Auto)? {
//!     Executor::Gpu(ctx) => {
//!         println!("{} ({})", ctx.adapter().name, ctx.selection_reason());
//!         let nll: Vec<f32> = ctx.ceiling(&cfg)?;
//!         println!("{:?}", ctx.dispatch_costs()?);
//!         assert_eq!(nll.len(), 1024);
//!     }
//!     Executor::Cpu { fallback } => println!("no GPU: {fallback:?}"),
//! }
//! # Ok::<(), runtime_gpu::GpuError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(clippy::float_cmp)]

mod adapter;
pub mod ceiling;
mod choice;
mod context;
mod costs;
pub mod cpu_twin;
mod error;
mod pipelines;
mod pool;
pub mod region;
pub mod region_costs;
pub mod testing;

pub use adapter::{list_adapters, AdapterSummary, ContextOptions, DeviceLimits, ADAPTER_ENV};
pub use choice::{resolve, select, DeviceChoice, Executor};
pub use context::GpuContext;
pub use costs::DispatchCosts;
pub use error::GpuError;
pub use pool::PoolStats;
pub use region::{GpuRegions, RegionPolicy};

/// Re-exported so callers can name backends in [`ContextOptions`] without depending on wgpu.
pub use wgpu::Backends;

impl GpuContext {
    /// Pipelines compiled so far by this context (each (shader, overrides) pair once).
    pub fn pipelines_compiled(&self) -> usize {
        self.pipelines.compiles()
    }
}
