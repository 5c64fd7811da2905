//! The ceiling kernel on the device against its CPU twin (both f32), at the named tolerance.

use crate::{max_rel_diff, GPU_VS_TWIN_REL};
use runtime_gpu::ceiling::{noise_population, CeilingConfig, CeilingProblem, MESA_LOOP_CAP};
use runtime_gpu::testing::gpu_or_skip;
use runtime_gpu::{cpu_twin, GpuContext, GpuError};

/// The twin's NLLs for `cfg`, planned for `ctx`'s device (same chunks, same workgroup size).
fn twin(ctx: &GpuContext, cfg: &CeilingConfig) -> Vec<f64> {
    let plan = ctx.ceiling_plan(cfg).expect("plan");
    let problem = CeilingProblem::<f32>::new(cfg.d, cfg.steps);
    let noise = noise_population::<f32>(0..cfg.population);
    cpu_twin::population(&problem, &plan, &noise)
        .into_iter()
        .map(f64::from)
        .collect()
}

/// The device's NLLs for `cfg`.
fn gpu(ctx: &GpuContext, cfg: &CeilingConfig) -> Vec<f64> {
    let nll = ctx.ceiling(cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    nll.into_iter().map(f64::from).collect()
}

#[test]
fn the_kernel_matches_its_twin_at_every_dimension() {
    let Some(ctx) = gpu_or_skip("the_kernel_matches_its_twin_at_every_dimension") else {
        return;
    };
    for (d, g) in [
        (2, 64),
        (3, 64),
        (5, 48),
        (8, 64),
        (13, 32),
        (16, 64),
        (32, 24),
        (64, 8),
    ] {
        let cfg = CeilingConfig::new(d, g);
        let plan = ctx.ceiling_plan(&cfg).expect("plan");
        let rel = max_rel_diff(&gpu(&ctx, &cfg), &twin(&ctx, &cfg));
        eprintln!(
            "D={d:>2} G={g:>3}: {} dispatch(es), WG={}, max rel diff {rel:.2e}",
            plan.dispatches(),
            plan.workgroup_size
        );
        assert!(rel <= GPU_VS_TWIN_REL, "D={d}: max rel diff {rel:e}");
    }
}

/// D = 64 with 32 invocations per workgroup: all 80 steps in one dispatch would take one
/// invocation past lavapipe's silent cap of 65,535 loop iterations. The plan cuts the steps
/// into dispatches of a few thousand iterations each, and the result still matches the twin.
#[test]
fn a_configuration_past_the_mesa_loop_cap_still_matches() {
    let Some(ctx) = gpu_or_skip("a_configuration_past_the_mesa_loop_cap_still_matches") else {
        return;
    };
    let cfg = CeilingConfig {
        workgroup_size: Some(32),
        ..CeilingConfig::new(64, 4)
    };
    let plan = ctx.ceiling_plan(&cfg).expect("plan");
    assert!(
        plan.single_dispatch_loop_visits > u64::from(MESA_LOOP_CAP),
        "{plan:?}"
    );
    assert!(plan.loop_visits <= u64::from(cfg.loop_budget), "{plan:?}");
    assert!(plan.chunks.len() > 1);
    let rel = max_rel_diff(&gpu(&ctx, &cfg), &twin(&ctx, &cfg));
    assert!(rel <= GPU_VS_TWIN_REL, "max rel diff {rel:e}");
}

/// The same configuration in one dispatch: on lavapipe the cap cuts the invocations short and
/// the result is wrong (which is why the plan splits); on a hardware GPU it matches.
#[test]
fn without_the_split_lavapipe_truncates_and_hardware_does_not() {
    let Some(ctx) = gpu_or_skip("without_the_split_lavapipe_truncates_and_hardware_does_not")
    else {
        return;
    };
    let cfg = CeilingConfig {
        workgroup_size: Some(32),
        loop_budget: u32::MAX,
        ..CeilingConfig::new(64, 2)
    };
    let plan = ctx.ceiling_plan(&cfg).expect("plan");
    assert_eq!(plan.chunks.len(), 1);
    let rel = max_rel_diff(&gpu(&ctx, &cfg), &twin(&ctx, &cfg));
    if ctx.adapter().driver.to_lowercase().contains("llvmpipe")
        || ctx.adapter().name.to_lowercase().contains("llvmpipe")
    {
        assert!(
            rel > GPU_VS_TWIN_REL,
            "lavapipe no longer truncates? rel {rel:e}"
        );
    } else {
        eprintln!(
            "{}: one long dispatch, max rel diff {rel:.2e}",
            ctx.adapter().name
        );
        assert!(rel <= GPU_VS_TWIN_REL, "max rel diff {rel:e}");
    }
}

#[test]
fn a_state_too_large_for_one_binding_runs_in_batches() {
    let Some(ctx) = gpu_or_skip("a_state_too_large_for_one_binding_runs_in_batches") else {
        return;
    };
    let mut cfg = CeilingConfig {
        loop_budget: 1_000,
        ..CeilingConfig::new(16, 10)
    };
    let state = ctx.ceiling_plan(&cfg).expect("plan").state_bytes;
    cfg.binding_limit = Some(3 * state);
    let plan = ctx.ceiling_plan(&cfg).expect("plan");
    assert!(plan.chunks.len() > 1);
    assert_eq!(plan.batches().count(), 4);
    let rel = max_rel_diff(&gpu(&ctx, &cfg), &twin(&ctx, &cfg));
    assert!(rel <= GPU_VS_TWIN_REL, "max rel diff {rel:e}");

    cfg.binding_limit = Some(state / 2);
    match ctx.ceiling(&cfg) {
        Err(GpuError::BufferTooLarge { bytes, limit, .. }) => {
            assert_eq!((bytes, limit), (state, state / 2));
        }
        other => panic!("expected BufferTooLarge, got {other:?}"),
    }
}

#[test]
fn requests_the_kernel_cannot_serve_are_errors() {
    let Some(ctx) = gpu_or_skip("requests_the_kernel_cannot_serve_are_errors") else {
        return;
    };
    for cfg in [
        CeilingConfig::new(1, 4),
        CeilingConfig::new(65, 4),
        CeilingConfig::new(8, 0),
        CeilingConfig {
            workgroup_size: Some(4_096),
            ..CeilingConfig::new(8, 4)
        },
        CeilingConfig {
            workgroup_size: Some(8),
            ..CeilingConfig::new(64, 4)
        },
    ] {
        let err = ctx.ceiling(&cfg).expect_err("must be refused");
        assert!(matches!(err, GpuError::Unsupported(_)), "{cfg:?}: {err}");
    }
}
