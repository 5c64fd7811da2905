//! Measured dispatch costs of the selected adapter: what a cost model needs to decide whether a
//! piece of work is worth sending to the device. Measured once per context, on first request.

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::pool::BufferKind;
use std::time::Instant;

/// Bytes moved per bandwidth sample (less where the device's buffers are smaller).
const TRANSFER_BYTES: u64 = 16 << 20;
/// Round trips timed for the empty dispatch (the median is kept).
const ROUND_TRIPS: usize = 21;
/// Samples per bandwidth figure (the median is kept).
const TRANSFERS: usize = 5;

/// Fixed and per-byte costs of the device, medians of a few samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DispatchCosts {
    /// One empty dispatch: encode, submit, wait for completion, in microseconds.
    pub empty_dispatch_us: f64,
    /// Host-to-device bandwidth through `write_buffer` and a wait, in GiB/s.
    pub upload_gib_per_s: f64,
    /// Device-to-host bandwidth through a copy to staging, a map and a read, in GiB/s.
    pub download_gib_per_s: f64,
    /// Bytes per bandwidth sample.
    pub transfer_bytes: u64,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

impl GpuContext {
    /// The dispatch costs of this device, measured on the first call and then cached for the
    /// life of the context (so for the process, with [`GpuContext::shared`]).
    pub fn dispatch_costs(&self) -> Result<DispatchCosts, GpuError> {
        self.check_alive()?;
        self.costs.get_or_init(|| self.measure_costs()).clone()
    }

    fn measure_costs(&self) -> Result<DispatchCosts, GpuError> {
        let empty = self.pipelines.get(self, &shaders::EMPTY, &[], &[])?;
        let bind_group = self.scoped("measuring dispatch costs", || {
            self.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ndvm.costs.empty"),
                layout: &empty.layout,
                entries: &[],
            })
        })?;
        let mut round_trips = Vec::with_capacity(ROUND_TRIPS);
        for i in 0..ROUND_TRIPS + 3 {
            let t = Instant::now();
            let mut encoder = self.scoped("measuring dispatch costs", || {
                self.device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("ndvm.costs.empty"),
                    })
            })?;
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("ndvm.costs.empty"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&empty.pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            self.submit_and_wait("measuring dispatch costs", encoder.finish())?;
            if i >= 3 {
                round_trips.push(t.elapsed().as_secs_f64() * 1e6);
            }
        }

        let bytes = TRANSFER_BYTES.min(self.limits().max_buffer_size / 2) / 4 * 4;
        let data = vec![0x3f80_0000u32; (bytes / 4) as usize];
        let buffer = self.pool.take(self, BufferKind::Storage, bytes)?;
        let gib = bytes as f64 / f64::from(1u32 << 30);
        let mut up = Vec::with_capacity(TRANSFERS);
        let mut down = Vec::with_capacity(TRANSFERS);
        for _ in 0..TRANSFERS {
            let t = Instant::now();
            let index = self.scoped("measuring upload bandwidth", || {
                self.queue()
                    .write_buffer(&buffer, 0, bytemuck::cast_slice(&data));
                self.queue().submit([])
            })?;
            self.wait("measuring upload bandwidth", Some(index))?;
            up.push(gib / t.elapsed().as_secs_f64());
            let t = Instant::now();
            let back: Vec<u32> =
                self.read_back("measuring download bandwidth", &buffer, data.len())?;
            down.push(gib / t.elapsed().as_secs_f64());
            if back != data {
                return Err(GpuError::Internal {
                    during: "measuring bandwidth".into(),
                    message: "the bytes read back differ from the bytes written".into(),
                });
            }
        }
        let costs = DispatchCosts {
            empty_dispatch_us: median(round_trips),
            upload_gib_per_s: median(up),
            download_gib_per_s: median(down),
            transfer_bytes: bytes,
        };
        log::info!("ndvm GPU: measured {costs:?}");
        Ok(costs)
    }
}
