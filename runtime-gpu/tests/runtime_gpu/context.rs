//! The context: one per process, pipelines compiled once, buffers pooled, costs measured once,
//! and the bad cases: no adapter, `auto` falling back, a lost device.

use runtime_gpu::ceiling::CeilingConfig;
use runtime_gpu::testing::{gpu_or_skip, skip_or_fail};
use runtime_gpu::{
    resolve, Backends, ContextOptions, DeviceChoice, Executor, GpuContext, GpuError,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn the_shared_context_is_created_once() {
    let Some(a) = gpu_or_skip("the_shared_context_is_created_once") else {
        return;
    };
    let b = GpuContext::shared().expect("shared");
    assert!(Arc::ptr_eq(&a, &b));
    let info = a.adapter();
    assert!(!info.name.is_empty() && !a.selection_reason().is_empty());
    assert!(info.limits.max_storage_buffer_binding_size > 0);
    eprintln!(
        "{} ({}, {}): {}",
        info.name,
        info.backend,
        info.device_type,
        a.selection_reason()
    );
}

#[test]
fn pipelines_are_compiled_once_and_buffers_reused() {
    // A context of its own, so that no other test moves its counters.
    let ctx = match GpuContext::new(&ContextOptions::from_env()) {
        Ok(ctx) => ctx,
        Err(e) => {
            skip_or_fail::<()>("pipelines_are_compiled_once_and_buffers_reused", &e);
            return;
        }
    };
    let cfg = CeilingConfig::new(6, 77);
    let first = ctx.ceiling(&cfg).expect("first run");
    assert_eq!(ctx.pipelines_compiled(), 1);
    let pool = ctx.pool_stats();
    let second = ctx.ceiling(&cfg).expect("second run");
    assert_eq!(first, second);
    assert_eq!(
        ctx.pipelines_compiled(),
        1,
        "the second run compiled a pipeline"
    );
    assert_eq!(
        ctx.pool_stats().created,
        pool.created,
        "the second run made a buffer"
    );
    assert_eq!(ctx.pool_stats().reused, pool.reused + pool.created);
}

#[test]
fn dispatch_costs_are_measured_once() {
    let Some(ctx) = gpu_or_skip("dispatch_costs_are_measured_once") else {
        return;
    };
    let a = ctx.dispatch_costs().expect("costs");
    let b = ctx.dispatch_costs().expect("costs");
    assert_eq!(a, b);
    assert!(a.empty_dispatch_us > 0.0 && a.upload_gib_per_s > 0.0 && a.download_gib_per_s > 0.0);
    eprintln!("{a:?}");
}

#[test]
fn no_adapter_is_a_clear_error_and_auto_falls_back_to_the_cpu() {
    let none = ContextOptions {
        backends: Backends::empty(),
        ..ContextOptions::default()
    };
    let err = GpuContext::new(&none).expect_err("no backends, no adapter");
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
    assert!(err.to_string().contains("no GPU adapter"), "{err}");

    let auto = resolve(DeviceChoice::Auto, || GpuContext::new(&none).map(Arc::new)).expect("auto");
    assert!(matches!(
        &auto,
        Executor::Cpu {
            fallback: Some(GpuError::NoAdapter { .. })
        }
    ));
    let gpu = resolve(DeviceChoice::Gpu, || GpuContext::new(&none).map(Arc::new));
    assert!(matches!(gpu, Err(GpuError::NoAdapter { .. })));
    let cpu = resolve(DeviceChoice::Cpu, || {
        panic!("`cpu` must not look for a GPU")
    })
    .expect("cpu");
    assert!(matches!(cpu, Executor::Cpu { fallback: None }));
}

#[test]
fn an_adapter_name_that_matches_nothing_is_a_clear_error() {
    let options = ContextOptions {
        adapter_name: Some("no-such-adapter-on-any-machine".into()),
        ..ContextOptions::default()
    };
    match GpuContext::new(&options) {
        Err(GpuError::AdapterNotFound { wanted, .. }) => {
            assert_eq!(wanted, "no-such-adapter-on-any-machine");
        }
        Err(GpuError::NoAdapter { .. }) => {} // no adapter at all: nothing to match
        other => panic!("expected AdapterNotFound, got {other:?}"),
    }
}

#[test]
fn an_adapter_can_be_picked_by_name() {
    let Some(shared) = gpu_or_skip("an_adapter_can_be_picked_by_name") else {
        return;
    };
    let name = shared.adapter().name.clone();
    let wanted: String = name.chars().take(6).collect::<String>().to_uppercase();
    let options = ContextOptions {
        adapter_name: Some(wanted.clone()),
        ..ContextOptions::default()
    };
    let ctx = GpuContext::new(&options).expect("picked by name");
    assert!(ctx.adapter().name.to_uppercase().contains(&wanted));
    assert!(ctx.selection_reason().contains("NDVM_ADAPTER"));
}

#[test]
fn a_lost_device_is_an_error_not_a_hang() {
    // A context of its own: destroying the shared one would break the other tests.
    let ctx = match GpuContext::new(&ContextOptions::from_env()) {
        Ok(ctx) => ctx,
        Err(e) => {
            skip_or_fail::<()>("a_lost_device_is_an_error_not_a_hang", &e);
            return;
        }
    };
    let cfg = CeilingConfig::new(4, 16);
    assert_eq!(ctx.ceiling(&cfg).expect("before the loss").len(), 16);
    ctx.destroy_device();
    let t = Instant::now();
    for result in [
        ctx.ceiling(&cfg).map(|_| ()),
        ctx.dispatch_costs().map(|_| ()),
    ] {
        match result {
            Err(GpuError::DeviceLost { reason, .. }) => assert!(!reason.is_empty()),
            other => panic!("expected DeviceLost, got {other:?}"),
        }
    }
    assert!(ctx.check_alive().is_err());
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(GpuError::DeviceLost {
        reason: String::new(),
        message: String::new()
    }
    .is_unavailable());
}
