//! The region device's limits: a region too large for one buffer is a clear error.

use runtime_gpu::testing::gpu_or_skip;
use runtime_gpu::{GpuError, GpuRegions, RegionPolicy};
use shared_ir::region::{RegionDevice, RegionStats};

#[test]
fn a_region_larger_than_one_buffer_is_a_clear_error() {
    let Some(ctx) = gpu_or_skip("a_region_larger_than_one_buffer_is_a_clear_error") else {
        return;
    };
    let limit = ctx.limits().max_storage_buffer_binding_size;
    let stats = RegionStats {
        ops: 1,
        work: 1,
        lanes: 64,
        data_len: (limit / 4 + 1) as usize,
        ..RegionStats::default()
    };
    let mut auto = GpuRegions::new(ctx.clone(), RegionPolicy::Auto);
    match auto.check(&stats) {
        Err(GpuError::BufferTooLarge { which, bytes, .. }) => {
            assert_eq!(which, "max_storage_buffer_binding_size");
            assert!(bytes > limit);
        }
        other => panic!("expected BufferTooLarge, got {other:?}"),
    }
    // `auto` leaves such a region to the CPU; `gpu` takes it and fails with the reason.
    assert!(!auto.wants(&stats));
    let mut gpu = GpuRegions::new(ctx, RegionPolicy::Always);
    assert!(gpu.wants(&stats));
    let err = gpu
        .forward(&Default::default(), &Default::default(), &[], &[])
        .expect_err("refused");
    assert!(err.contains("max_storage_buffer_binding_size"), "{err}");
}
