//! The long-lived GPU context: instance, adapter, device and queue, created once per process,
//! with the pipeline cache and the buffer pool it owns.
//!
//! Every device operation runs inside error scopes ([`GpuContext::scoped`]), so a validation,
//! out-of-memory or internal error becomes a [`GpuError`] rather than wgpu's default panic; an
//! uncaptured error is logged, never raised. A lost device (driver reset, or
//! [`GpuContext::destroy_device`]) is recorded by a callback and every later call returns
//! [`GpuError::DeviceLost`]; waits carry a timeout, so nothing hangs on a dead device.

use crate::adapter::{self, AdapterSummary, ContextOptions, DeviceLimits};
use crate::costs::DispatchCosts;
use crate::error::GpuError;
use crate::pipelines::PipelineCache;
use crate::pool::{BufferKind, BufferPool, PoolStats};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// What the device callbacks record.
#[derive(Default)]
struct Health {
    /// `(reason, message)` once the device is lost.
    lost: Mutex<Option<(String, String)>>,
}

/// One adapter's device and queue, with its pipelines and buffers. Create it once and share it:
/// [`GpuContext::shared`] does that for the process.
pub struct GpuContext {
    _instance: wgpu::Instance,
    summary: AdapterSummary,
    selection: String,
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: DeviceLimits,
    wait_timeout: Duration,
    health: Arc<Health>,
    pub(crate) pipelines: PipelineCache,
    pub(crate) pool: BufferPool,
    pub(crate) costs: OnceLock<Result<DispatchCosts, GpuError>>,
    pub(crate) region_costs: OnceLock<Result<shared_ir::region::RegionCosts, GpuError>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.summary.name)
            .field("backend", &self.summary.backend)
            .finish_non_exhaustive()
    }
}

/// A wgpu instance for `backends`, without a display.
pub(crate) fn new_instance(backends: wgpu::Backends) -> wgpu::Instance {
    log::debug!("ndvm GPU: creating a wgpu instance ({backends:?})");
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

static SHARED: OnceLock<Result<Arc<GpuContext>, GpuError>> = OnceLock::new();

impl GpuContext {
    /// The process-wide context, created on first use from [`ContextOptions::from_env`]. A
    /// failure (no adapter) is remembered too: later calls return the same error at no cost.
    pub fn shared() -> Result<Arc<GpuContext>, GpuError> {
        SHARED
            .get_or_init(|| GpuContext::new(&ContextOptions::from_env()).map(Arc::new))
            .clone()
    }

    /// A new context of its own (tests that destroy their device use this; everything else
    /// should use [`GpuContext::shared`]).
    pub fn new(options: &ContextOptions) -> Result<GpuContext, GpuError> {
        let instance = new_instance(options.backends);
        let adapters = adapter::enumerate(&instance, options.backends);
        let (adapter, selection) = adapter::choose(adapters, options)?;
        let summary = AdapterSummary::of(&adapter);
        log::info!(
            "ndvm GPU: using `{}` ({}, {}, driver {} {}): {selection}",
            summary.name,
            summary.backend,
            summary.device_type,
            summary.driver,
            summary.driver_info
        );
        let desc = wgpu::DeviceDescriptor {
            label: Some("ndvm.device"),
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc)).map_err(|e| {
            GpuError::RequestDevice {
                adapter: summary.name.clone(),
                message: e.to_string(),
            }
        })?;
        let health = Arc::new(Health::default());
        let on_lost = Arc::clone(&health);
        device.set_device_lost_callback(move |reason, message| {
            log::error!("ndvm GPU: device lost ({reason:?}): {message}");
            *on_lost.lost.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((format!("{reason:?}"), message));
        });
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            log::error!("ndvm GPU: uncaptured device error: {e}");
        }));
        let limits = DeviceLimits::from_wgpu(&device.limits());
        Ok(GpuContext {
            _instance: instance,
            summary,
            selection,
            device,
            queue,
            limits,
            wait_timeout: options.wait_timeout,
            health,
            pipelines: PipelineCache::default(),
            pool: BufferPool::default(),
            costs: OnceLock::new(),
            region_costs: OnceLock::new(),
        })
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// Why this adapter was chosen.
    pub fn selection_reason(&self) -> &str {
        &self.selection
    }

    /// The device's limits (the adapter's, all requested).
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// How many buffers the pool has created and handed out again.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// `Err(DeviceLost)` once the device is gone.
    pub fn check_alive(&self) -> Result<(), GpuError> {
        match &*self.health.lost.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((reason, message)) => Err(GpuError::DeviceLost {
                reason: reason.clone(),
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Destroys the device, as a driver reset would: every later call returns
    /// [`GpuError::DeviceLost`]. For tests of that path; never call it on the shared context.
    pub fn destroy_device(&self) {
        self.device.destroy();
        let _ = self.device.poll(wgpu::PollType::Poll);
    }

    pub(crate) fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub(crate) fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Runs `f` inside out-of-memory, validation and internal error scopes and returns the first
    /// error any of them caught. Scopes are per thread, so `f` must not hand work to another one.
    pub(crate) fn scoped<T>(&self, during: &str, f: impl FnOnce() -> T) -> Result<T, GpuError> {
        self.check_alive()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let out = f();
        let internal = pollster::block_on(internal.pop());
        let validation = pollster::block_on(validation.pop());
        let oom = pollster::block_on(oom.pop());
        if let Some(e) = oom.or(validation).or(internal) {
            self.check_alive()?;
            return Err(GpuError::from_scope(during, e));
        }
        self.check_alive()?;
        Ok(out)
    }

    /// Submits `commands` and waits for them, with the context's timeout.
    pub(crate) fn submit_and_wait(
        &self,
        during: &str,
        commands: wgpu::CommandBuffer,
    ) -> Result<(), GpuError> {
        let index = self.scoped(during, || self.queue.submit([commands]))?;
        self.wait(during, Some(index))
    }

    /// Waits for `index` (or everything submitted), then checks the device is still alive.
    pub(crate) fn wait(
        &self,
        during: &str,
        index: Option<wgpu::SubmissionIndex>,
    ) -> Result<(), GpuError> {
        self.check_alive()?;
        let poll = wgpu::PollType::Wait {
            submission_index: index,
            timeout: Some(self.wait_timeout),
        };
        self.device.poll(poll).map_err(|e| GpuError::Wait {
            during: during.to_string(),
            message: e.to_string(),
        })?;
        self.check_alive()
    }

    /// Copies `count` values of type `T` from the start of `src` to the host: a copy into a
    /// pooled staging buffer, a submit, a map and one wait for both. A failed map is an error,
    /// not a panic.
    pub(crate) fn read_back<T: bytemuck::Pod>(
        &self,
        during: &str,
        src: &wgpu::Buffer,
        count: usize,
    ) -> Result<Vec<T>, GpuError> {
        self.read_back_pieces(during, &[(src, 0, count)])
    }

    /// Copies the pieces `(buffer, byte offset, count)` of values of type `T` to the host, one
    /// after the other in the result, with one wait for them all (see
    /// [`GpuContext::read_back`]). Offsets are multiples of 4, and so are the pieces' bytes.
    pub(crate) fn read_back_pieces<T: bytemuck::Pod>(
        &self,
        during: &str,
        pieces: &[(&wgpu::Buffer, u64, usize)],
    ) -> Result<Vec<T>, GpuError> {
        let size = std::mem::size_of::<T>() as u64;
        let bytes: u64 = pieces.iter().map(|p| p.2 as u64 * size).sum();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = self.pool.take(self, BufferKind::Readback, bytes)?;
        let mut encoder = self.scoped(during, || {
            self.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("ndvm.read_back"),
                })
        })?;
        let mut at = 0;
        for &(src, offset, count) in pieces {
            let n = count as u64 * size;
            if n > 0 {
                encoder.copy_buffer_to_buffer(src, offset, &staging, at, n);
            }
            at += n;
        }
        let index = self.scoped(during, || self.queue.submit([encoder.finish()]))?;
        // The map is asked for at once: it resolves when the copy is done, so one wait covers
        // the work before, the copy and the map.
        let mapped: Arc<Mutex<Option<Result<(), wgpu::BufferAsyncError>>>> = Arc::default();
        let on_map = Arc::clone(&mapped);
        self.scoped(during, || {
            staging.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
                *on_map.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            })
        })?;
        self.wait(during, Some(index))?;
        // The callback may come on a later poll than the one that saw the copy finish.
        let started = std::time::Instant::now();
        let outcome = loop {
            if let Some(r) = mapped.lock().unwrap_or_else(|p| p.into_inner()).take() {
                break Some(r);
            }
            if started.elapsed() > self.wait_timeout {
                break None;
            }
            std::thread::sleep(Duration::from_micros(50));
            self.wait(during, None)?;
        };
        let label = staging.label().to_string();
        match outcome {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                staging.discard();
                return Err(GpuError::Map {
                    label,
                    message: e.to_string(),
                });
            }
            None => {
                staging.discard();
                self.check_alive()?;
                return Err(GpuError::Map {
                    label,
                    message: "the map callback never ran".into(),
                });
            }
        }
        let values = {
            let view = staging
                .get_mapped_range(0..bytes)
                .map_err(|e| GpuError::Map {
                    label: label.clone(),
                    message: e.to_string(),
                })?;
            bytemuck::pod_collect_to_vec::<u8, T>(&view)
        };
        staging.unmap();
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use crate::pool::BufferKind;
    use crate::testing::gpu_or_skip;
    use crate::GpuError;

    #[test]
    fn a_validation_error_is_a_result_not_a_panic() {
        let Some(ctx) = gpu_or_skip("a_validation_error_is_a_result_not_a_panic") else {
            return;
        };
        // MAP_READ may only be combined with COPY_DST: wgpu's default handler would panic.
        let made = ctx.scoped("creating an invalid buffer", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("ndvm.test.invalid"),
                size: 256,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        });
        match made {
            Err(GpuError::Validation { during, .. }) => {
                assert_eq!(during, "creating an invalid buffer");
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
        assert!(
            ctx.check_alive().is_ok(),
            "a validation error does not lose the device"
        );
    }

    #[test]
    fn a_buffer_over_the_device_limit_is_a_clear_error() {
        let Some(ctx) = gpu_or_skip("a_buffer_over_the_device_limit_is_a_clear_error") else {
            return;
        };
        let limit = ctx.limits().max_buffer_size;
        match ctx.pool.take(&ctx, BufferKind::Storage, limit + 4) {
            Err(GpuError::BufferTooLarge { bytes, which, .. }) => {
                assert_eq!((bytes, which), (limit + 4, "max_buffer_size"));
            }
            Err(e) => panic!("expected BufferTooLarge, got {e}"),
            Ok(_) => panic!("expected BufferTooLarge, got a buffer"),
        };
    }
}
