//! The CPU twin of the ceiling kernel: its math against the independent reference, its f32
//! rounding against f64, and its loop-visit counts against the plan.

use crate::reference::kalman_nll;
use crate::{max_rel_diff, TWIN_F32_VS_F64_REL, TWIN_VS_REFERENCE_REL};
use runtime_gpu::ceiling::{
    noise, noise_population, CeilingConfig, CeilingPlan, CeilingProblem, MESA_LOOP_CAP, STEPS,
};
use runtime_gpu::cpu_twin::{self, Workgroup};
use runtime_gpu::DeviceLimits;

fn plan(cfg: &CeilingConfig) -> CeilingPlan {
    CeilingPlan::new(cfg, &DeviceLimits::unbounded()).expect("plan")
}

/// The twin's NLL of candidate `g` in precision `R`.
fn twin<R: shared_ir::Real>(d: usize, g: usize) -> f64 {
    let cfg = CeilingConfig::new(d, g + 1);
    let plan = plan(&cfg);
    let problem = CeilingProblem::<R>::new(d, STEPS);
    let mut w = Workgroup::new(problem.dp, plan.workgroup_size as usize);
    let [q, r] = noise_population::<R>(g..g + 1)[0];
    cpu_twin::run_candidate(&problem, &plan, &mut w, (q, r))
        .nll
        .to_f64()
}

#[test]
fn the_f64_twin_matches_the_independent_reference() {
    for d in [2, 3, 4, 5, 8, 13, 16, 31, 32, 64] {
        for g in [0, 1, 777, 16_383] {
            let (q, r) = noise(g);
            let want = kalman_nll(d, STEPS, q, r);
            let got = twin::<f64>(d, g);
            let rel = max_rel_diff(&[got], &[want]);
            assert!(
                rel <= TWIN_VS_REFERENCE_REL,
                "D={d} g={g}: twin {got} reference {want} rel {rel:e}"
            );
        }
    }
}

#[test]
fn the_f32_twin_is_close_to_the_f64_twin() {
    for d in [2, 8, 16, 32, 64] {
        for g in [0, 16_383] {
            let (lo, hi) = (twin::<f32>(d, g), twin::<f64>(d, g));
            let rel = max_rel_diff(&[lo], &[hi]);
            eprintln!("D={d} g={g}: f32 {lo} f64 {hi} rel {rel:.2e}");
            assert!(
                rel <= TWIN_F32_VS_F64_REL,
                "D={d} g={g}: f32 {lo} f64 {hi} rel {rel:e}"
            );
        }
    }
}

#[test]
fn cutting_the_steps_into_dispatches_changes_no_bit() {
    for d in [16, 64] {
        let cut = plan(&CeilingConfig {
            loop_budget: 600,
            ..CeilingConfig::new(d, 1)
        });
        let whole = plan(&CeilingConfig {
            loop_budget: u32::MAX,
            ..CeilingConfig::new(d, 1)
        });
        assert!(cut.chunks.len() > 1 && whole.chunks.len() == 1, "D={d}");
        let problem = CeilingProblem::<f32>::new(d, STEPS);
        let mut w = Workgroup::new(problem.dp, cut.workgroup_size as usize);
        let a = cpu_twin::run_candidate(&problem, &cut, &mut w, (0.05, 0.1)).nll;
        let b = cpu_twin::run_candidate(&problem, &whole, &mut w, (0.05, 0.1)).nll;
        assert_eq!(a.to_bits(), b.to_bits(), "D={d}: {a} vs {b}");
    }
}

#[test]
fn the_twin_counts_the_loop_visits_the_plan_promises() {
    for d in [2, 5, 8, 16, 32, 64] {
        for wg in [None, Some(16), Some(32), Some(64), Some(256)] {
            let cfg = CeilingConfig {
                workgroup_size: wg,
                ..CeilingConfig::new(d, 1)
            };
            let Ok(plan) = CeilingPlan::new(&cfg, &DeviceLimits::unbounded()) else {
                continue; // a workgroup narrower than D / 4
            };
            let problem = CeilingProblem::<f32>::new(d, STEPS);
            let mut w = Workgroup::new(problem.dp, plan.workgroup_size as usize);
            let run = cpu_twin::run_candidate(&problem, &plan, &mut w, (0.05, 0.1));
            assert_eq!(run.max_loop_visits, plan.loop_visits, "D={d} wg={wg:?}");
            assert!(
                run.max_loop_visits <= u64::from(cfg.loop_budget),
                "D={d} wg={wg:?}"
            );
        }
    }
}

#[test]
fn one_dispatch_of_all_steps_would_pass_the_mesa_cap_at_d64_with_32_invocations() {
    let cfg = CeilingConfig {
        workgroup_size: Some(32),
        loop_budget: u32::MAX,
        ..CeilingConfig::new(64, 1)
    };
    let whole = plan(&cfg);
    assert_eq!(whole.chunks.len(), 1);
    let problem = CeilingProblem::<f32>::new(64, STEPS);
    let mut w = Workgroup::new(problem.dp, 32);
    let run = cpu_twin::run_candidate(&problem, &whole, &mut w, (0.05, 0.1));
    assert_eq!(run.max_loop_visits, whole.single_dispatch_loop_visits);
    assert!(
        run.max_loop_visits > u64::from(MESA_LOOP_CAP),
        "{}",
        run.max_loop_visits
    );
}

#[test]
fn the_population_is_each_candidate_in_order() {
    let cfg = CeilingConfig::new(8, 37);
    let plan = plan(&cfg);
    let problem = CeilingProblem::<f32>::new(8, STEPS);
    let noise = noise_population::<f32>(0..37);
    let all = cpu_twin::population(&problem, &plan, &noise);
    let mut w = Workgroup::new(problem.dp, plan.workgroup_size as usize);
    for (g, &[q, r]) in noise.iter().enumerate() {
        let one = cpu_twin::run_candidate(&problem, &plan, &mut w, (q, r)).nll;
        assert_eq!(all[g].to_bits(), one.to_bits(), "g={g}");
    }
}
