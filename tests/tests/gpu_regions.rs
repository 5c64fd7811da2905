//! Cross-device equivalence: one test body runs each program twice in `f32`, once on the CPU
//! and once with its numeric regions (forward and reverse) on the GPU region interpreter, and
//! compares values and gradients lane by lane within [`DEVICE_RTOL`]. The conformance suite,
//! the seed-1234 corpus, the divergent programs and the Kalman program, at B = 1, 64 and 4096.
//! In CI the GPU is Mesa's software driver; there a missing adapter fails the test.

use ndvm_tests::devices::{compare_devices, lane_bindings, suite_inputs};
use ndvm_tests::divergent::{divergent, Divergent};
use ndvm_tests::gates::tol::DEVICE_RTOL;
use ndvm_tests::{close, fuzz_records, suite};
use runtime_cpu::{Bindings, Error, GradSpec, Program, RunOptions, Session, Tensor};
use runtime_gpu::testing::gpu_or_skip;
use runtime_gpu::{GpuContext, GpuRegions, RegionPolicy};
use std::sync::Arc;

const WIDTHS: [usize; 3] = [1, 64, 4096];

fn gpu_session(ctx: &Arc<GpuContext>) -> Session<f32> {
    let mut s = Session::<f32>::new();
    s.set_device(Some(Box::new(GpuRegions::new(
        Arc::clone(ctx),
        RegionPolicy::Always,
    ))));
    s
}

/// Runs `program` on the CPU and with the GPU; returns the differences (empty when they
/// agree).
fn compare(
    name: &str,
    program: &Program,
    b: &Bindings,
    grad: &[String],
    gpu: &mut Session<f32>,
) -> Vec<String> {
    compare_devices(name, "gpu", DEVICE_RTOL, program, b, grad, gpu)
}

fn report(bad: Vec<String>) {
    assert!(
        bad.is_empty(),
        "{} differences across devices:\n{}",
        bad.len(),
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn suite_agrees_across_devices() {
    let Some(ctx) = gpu_or_skip("suite_agrees_across_devices") else {
        return;
    };
    let mut gpu = gpu_session(&ctx);
    let mut bad = Vec::new();
    for p in suite() {
        let program = Program::parse(&p.src).expect("parses");
        // Scalar inputs vary per lane by up to 10% around the reference.
        let (inputs, uniform) = suite_inputs(&p);
        if inputs.is_empty() {
            continue;
        }
        let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
        for (i, &w) in WIDTHS.iter().enumerate() {
            let b = lane_bindings(&inputs, &uniform, w, 11 + i as u64);
            bad.extend(compare(&p.name, &program, &b, &grad, &mut gpu));
        }
    }
    let counts = gpu.region_counts();
    assert!(
        counts.device_regions > 0 && counts.device_reverse > 0,
        "{counts:?}"
    );
    report(bad);
}

#[test]
fn divergent_programs_agree_across_devices() {
    let Some(ctx) = gpu_or_skip("divergent_programs_agree_across_devices") else {
        return;
    };
    let mut gpu = gpu_session(&ctx);
    let mut bad = Vec::new();
    for Divergent {
        name,
        program,
        inputs,
    } in divergent()
    {
        let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
        for (i, &w) in WIDTHS.iter().enumerate() {
            let b = lane_bindings(&inputs, &Bindings::new(), w, 77 + i as u64);
            bad.extend(compare(name, &program, &b, &grad, &mut gpu));
        }
    }
    report(bad);
}

#[test]
fn corpus_agrees_across_devices() {
    let Some(ctx) = gpu_or_skip("corpus_agrees_across_devices") else {
        return;
    };
    let mut gpu = gpu_session(&ctx);
    let mut bad = Vec::new();
    for r in fuzz_records() {
        let program = Program::parse(&r.src).expect("parses");
        // Each parameter varies per lane by up to 5% around the corpus value.
        let inputs: Vec<(String, f64, f64)> = r
            .params
            .iter()
            .map(|(n, x)| {
                (
                    n.clone(),
                    (x * 0.95).min(x * 1.05),
                    (x * 0.95).max(x * 1.05),
                )
            })
            .collect();
        let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
        for (i, &w) in WIDTHS.iter().enumerate() {
            let b = lane_bindings(&inputs, &Bindings::new(), w, r.id * 3 + i as u64);
            bad.extend(compare(
                &format!("corpus {}", r.id),
                &program,
                &b,
                &grad,
                &mut gpu,
            ));
        }
    }
    report(bad);
}

/// 4,000 iterations of three per-lane ops: one region of 12,000 records, far past the 65,535
/// loop visits after which Mesa's driver silently ends an invocation. The program, and a
/// session on a device that plans dispatches of at most `budget` loop visits (with its
/// counters).
fn long_loop(
    ctx: &Arc<GpuContext>,
    budget: u64,
) -> (Program, Session<f32>, Arc<runtime_gpu::region::Traffic>) {
    let program = Program::parse(
        "(loop ((k 0) (y x)) (if (= k 4000) y (recur (+ k 1) (+ (* y 0.999) (* 0.001 (sin y))))))",
    )
    .expect("parses");
    let device = GpuRegions::new(Arc::clone(ctx), RegionPolicy::Always).with_visit_budget(budget);
    let traffic = device.traffic();
    let mut gpu = Session::<f32>::new();
    gpu.set_device(Some(Box::new(device)));
    (program, gpu, traffic)
}

#[test]
fn a_region_past_the_software_drivers_loop_cap_is_split() {
    let Some(ctx) = gpu_or_skip("a_region_past_the_software_drivers_loop_cap_is_split") else {
        return;
    };
    // The software driver's budget on every adapter, so the split is exercised on real GPUs too.
    let (program, mut gpu, traffic) = long_loop(&ctx, runtime_gpu::region::SOFTWARE_VISIT_BUDGET);
    let inputs = [("x".to_string(), 0.5, 2.0)];
    let b = lane_bindings(&inputs, &Bindings::new(), 256, 3);
    report(compare("long_loop", &program, &b, &["x".into()], &mut gpu));
    let n = traffic.dispatches();
    assert!(n > 10, "the region ran in {n} dispatches");
}

#[test]
fn a_pass_the_driver_cuts_short_is_an_error() {
    let Some(ctx) = gpu_or_skip("a_pass_the_driver_cuts_short_is_an_error") else {
        return;
    };
    // The long loop in one dispatch (the budget of an adapter with no loop cap): Mesa's
    // software driver ends each invocation early, and the lanes' progress counters, which come
    // back with the region's result, say so. A real GPU (no loop cap) runs it whole.
    let (program, mut gpu, traffic) = long_loop(&ctx, runtime_gpu::region::HARDWARE_VISIT_BUDGET);
    let b = lane_bindings(&[("x".to_string(), 0.5, 2.0)], &Bindings::new(), 64, 5);
    if !ctx.adapter().name.to_ascii_lowercase().contains("llvmpipe") {
        report(compare("long_loop", &program, &b, &["x".into()], &mut gpu));
        return;
    }
    let got = gpu
        .run(&program, &b, &RunOptions::default())
        .expect("bound");
    for (l, v) in got.values.iter().enumerate() {
        match v {
            Err(Error::Device { message }) => {
                assert!(message.contains("short"), "lane {l}: {message}")
            }
            other => panic!("lane {l}: {other:?}"),
        }
    }
    assert_eq!(traffic.dispatches(), 1);
}

#[test]
fn a_lost_device_is_an_error_not_a_hang() {
    let Some(_) = gpu_or_skip("a_lost_device_is_an_error_not_a_hang") else {
        return;
    };
    // A context of its own: destroying the shared one would break the other tests.
    let ctx = Arc::new(
        GpuContext::new(&runtime_gpu::ContextOptions::from_env()).expect("a second context"),
    );
    let program = Program::parse("(* a (exp x))").expect("parses");
    let b = Bindings::new()
        .scalar("a", 2.0)
        .lanes("x", vec![0.1, 0.2, 0.3])
        .unwrap();
    let mut gpu = gpu_session(&ctx);
    let opts = RunOptions {
        grad: GradSpec::All,
        ..Default::default()
    };
    let ok = gpu.run(&program, &b, &opts).expect("bound");
    assert!(ok.values.iter().all(|v| v.is_ok()));
    ctx.destroy_device();
    let lost = gpu.run(&program, &b, &opts).expect("bound");
    for v in &lost.values {
        match v {
            Err(Error::Device { message }) => assert!(message.contains("lost"), "{message}"),
            other => panic!("expected a device error, got {other:?}"),
        }
    }
}

type Case = (&'static str, String, Vec<(String, f64, f64)>, Bindings);

/// Vectors and matrices whose ops a lane's invocations share: elementwise ops with a broadcast
/// per-lane scalar, select, pack, extract, outer, transpose, matvec and matmul, forward and
/// reverse; and the D = 8 Kalman filter.
fn wide_cases() -> [Case; 2] {
    let wide = "(let* ((v (* x (+ (iota 20) 1.0)))
                       (M (outer v v))
                       (T (transpose (* 0.01 M)))
                       (w (matvec T (sin v)))
                       (u (if (< x 0.5) (* 2.0 w) (exp (* -0.001 w))))
                       (P (mat u u (- u) (* x u)))
                       (R (matmul (transpose P) P)))
                  (+ (vsum (* a R)) (vsum (ref P 1)) (dot u u)))";
    let kalman = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/kalman_nd.scm"
    ))
    .expect("the example");
    [
        (
            "wide",
            wide.to_string(),
            vec![("x".into(), 0.2, 0.8), ("a".into(), 0.5, 1.5)],
            Bindings::new(),
        ),
        (
            "kalman_nd_8",
            kalman,
            vec![("q".into(), 0.02, 0.1), ("r".into(), 0.05, 0.2)],
            Bindings::new().scalar("d", 8.0),
        ),
    ]
}

#[test]
fn wide_ops_agree_across_devices() {
    let Some(ctx) = gpu_or_skip("wide_ops_agree_across_devices") else {
        return;
    };
    let mut gpu = gpu_session(&ctx);
    let mut bad = Vec::new();
    for (name, src, inputs, uniform) in &wide_cases() {
        let program = Program::parse(src).expect("parses");
        let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
        for (i, &w) in [1usize, 64, 300].iter().enumerate() {
            let b = lane_bindings(inputs, uniform, w, 500 + i as u64);
            bad.extend(compare(name, &program, &b, &grad, &mut gpu));
        }
    }
    report(bad);
}

#[test]
fn every_lane_width_agrees_across_devices() {
    let Some(ctx) = gpu_or_skip("every_lane_width_agrees_across_devices") else {
        return;
    };
    // A lane's ops shared by 4, 16 and 64 invocations (a hardware adapter picks the width
    // from the lane count; a software driver mostly runs one invocation per lane), in
    // workgroups of 64, 256 and 1024 invocations. 19 lanes leave the last workgroup part
    // empty (at width 4, 16 lanes a workgroup of 64 and 64 one of 256; at width 16, 64 lanes
    // a workgroup of 1024).
    let mut bad = Vec::new();
    let shapes = [(4, 64), (64, 64), (1, 256), (4, 256), (64, 256), (16, 1024)];
    for (width, workgroup) in shapes {
        let mut gpu = Session::<f32>::new();
        gpu.set_device(Some(Box::new(
            GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Always)
                .with_lane_width(width)
                .with_workgroup(workgroup),
        )));
        for (name, src, inputs, uniform) in &wide_cases() {
            let program = Program::parse(src).expect("parses");
            let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
            let b = lane_bindings(inputs, uniform, 19, 600 + u64::from(width));
            let name = format!("{name} width {width} workgroup {workgroup}");
            bad.extend(compare(&name, &program, &b, &grad, &mut gpu));
        }
    }
    report(bad);
}

/// Runs `src` in f32 on the CPU and with `device` (lane blocks of `block`), lanes of `x`.
fn both(
    src: &str,
    uniform: Bindings,
    xs: Vec<f64>,
    grad: &[&str],
    device: GpuRegions,
    block: usize,
) -> (runtime_cpu::Outcome, runtime_cpu::Outcome) {
    let program = Program::parse(src).expect("parses");
    let b = uniform.lanes("x", xs).expect("lanes");
    let opts = RunOptions {
        grad: GradSpec::Some(grad.iter().map(|s| s.to_string()).collect()),
        lane_block: block,
        ..Default::default()
    };
    let cpu = Session::<f32>::new()
        .run(&program, &b, &opts)
        .cloned()
        .expect("bound");
    let mut gpu = Session::<f32>::new();
    gpu.set_device(Some(Box::new(device)));
    let got = gpu.run(&program, &b, &opts).cloned().expect("bound");
    (cpu, got)
}

#[test]
fn regression_an_op_past_the_loop_cap_is_refused_never_truncated() {
    let Some(ctx) = gpu_or_skip("regression_an_op_past_the_loop_cap_is_refused_never_truncated")
    else {
        return;
    };
    // 70,000 elements summed in one invocation: past Mesa's loop cap. Under `gpu` the software
    // driver refuses it with a clear error (a real GPU runs it); never a shortened sum.
    let src = "(vsum (* x (iota 70000)))";
    let (cpu, got) = both(
        src,
        Bindings::new(),
        vec![0.001, 0.002],
        &["x"],
        GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Always),
        0,
    );
    for l in 0..2 {
        match &got.values[l] {
            Err(Error::Device { message }) => assert!(message.contains("too long"), "{message}"),
            Ok(v) => {
                let (a, b) = (
                    v.as_number().unwrap(),
                    cpu.values[l].as_ref().unwrap().as_number().unwrap(),
                );
                assert!(close(a, b, DEVICE_RTOL), "lane {l}: gpu {a} cpu {b}");
            }
            other => panic!("lane {l}: {other:?}"),
        }
    }
    // Under `auto` the CPU takes what the device cannot run: the CPU's numbers.
    let (cpu, got) = both(
        src,
        Bindings::new(),
        vec![0.001, 0.002],
        &["x"],
        GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Auto),
        0,
    );
    assert_eq!(cpu.values, got.values);
}

#[test]
fn regression_det_of_a_singular_matrix_is_zero_and_logdet_does_not_overflow() {
    let Some(ctx) = gpu_or_skip("regression_det_of_a_singular_matrix_is_zero") else {
        return;
    };
    let device = || GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Always);
    let det = "(det (mat (vec x 0.0 0.0) (vec 0.0 1.0 0.0) (vec 0.0 0.0 1.0)))";
    let (cpu, got) = both(det, Bindings::new(), vec![0.0, 2.0], &["x"], device(), 0);
    assert_eq!(got.values[0].as_ref().unwrap().as_number(), Some(0.0));
    assert_eq!(cpu.values[1], got.values[1]);
    // ln |det| of x I (8x8) is 8 ln x: finite far past where det itself under- or overflows.
    let logdet = "(logdet (scale x (eye 8)))";
    let (cpu, got) = both(
        logdet,
        Bindings::new(),
        vec![1e-6, 1e5],
        &["x"],
        device(),
        0,
    );
    for l in 0..2 {
        let (a, b) = (
            got.values[l].as_ref().unwrap().as_number().unwrap(),
            cpu.values[l].as_ref().unwrap().as_number().unwrap(),
        );
        assert!(
            a.is_finite() && close(a, b, DEVICE_RTOL),
            "lane {l}: gpu {a} cpu {b}"
        );
    }
}

#[test]
fn regression_a_refused_region_does_not_fail_the_next_walk() {
    let Some(ctx) = gpu_or_skip("regression_a_refused_region_does_not_fail_the_next_walk") else {
        return;
    };
    // det of a uniform 10x10 matrix: the interpreter factors at most 8x8, so the reverse region
    // is refused; no gradient reaches U from the result, so nothing runs it, and the refusal
    // must not fall on the next lane block.
    let u: Vec<f64> = (0..100)
        .map(|i| if i % 11 == 0 { 2.0 } else { 0.1 })
        .collect();
    let uniform = Bindings::new().uniform("U", Tensor::matrix(10, 10, u).unwrap());
    let (cpu, got) = both(
        "(let ((d (det U)) (y (* x x))) 5.0)",
        uniform,
        vec![1.0, 2.0, 3.0],
        &["U"],
        GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Always),
        1,
    );
    assert_eq!(cpu.values, got.values);
}

#[test]
fn a_regions_intermediate_values_stay_on_the_device() {
    let Some(ctx) = gpu_or_skip("a_regions_intermediate_values_stay_on_the_device") else {
        return;
    };
    // The D = 8 Kalman filter at 64 lanes computes over 80 steps at least three 8 x 8 matrix
    // products per lane and step: 80 * 3 * 64 * 64 lanes * 4 bytes, about 3.9 MB, at the
    // least. The host sends its own numbers (the inputs, uniform constants) and the region
    // tables, and reads back the result, the gradients and the lanes' progress counters.
    let kalman = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/kalman_nd.scm"
    ))
    .expect("the example");
    let program = Program::parse(&kalman).expect("parses");
    let inputs = [("q".to_string(), 0.02, 0.1), ("r".to_string(), 0.05, 0.2)];
    let b = lane_bindings(&inputs, &Bindings::new().scalar("d", 8.0), 64, 77);
    let device = GpuRegions::new(Arc::clone(&ctx), RegionPolicy::Always);
    let traffic = device.traffic();
    let mut gpu = Session::<f32>::new();
    gpu.set_device(Some(Box::new(device)));
    report(compare(
        "kalman_nd_8",
        &program,
        &b,
        &["q".into(), "r".into()],
        &mut gpu,
    ));
    let computed = 80 * 3 * 64 * 64 * 4;
    let (up, down) = (traffic.uploaded(), traffic.downloaded());
    assert!(
        down * 100 < computed,
        "read back {down} bytes of at least {computed} computed"
    );
    assert!(
        up * 4 < computed,
        "sent {up} bytes for at least {computed} computed"
    );
    let counts = gpu.region_counts();
    assert!(
        counts.device_regions >= 1 && counts.device_reverse == 1,
        "{counts:?}"
    );
    // One wait for each forward region's results (which brings its progress counters back
    // too), one for the adjoints.
    assert_eq!(
        traffic.syncs(),
        counts.device_regions + counts.device_reverse,
        "{counts:?}"
    );
}

#[test]
fn regression_a_long_broadcast_or_outer_op_is_not_refused() {
    let Some(ctx) = gpu_or_skip("regression_a_long_broadcast_or_outer_op_is_not_refused") else {
        return;
    };
    // A per-lane scalar broadcast over 1,024 elements and a 100 x 100 outer product: the size
    // check once counted their loops as the square of their size and refused them on a
    // software driver ("an op of 16384 numbers per lane is too long").
    let mut gpu = gpu_session(&ctx);
    let mut bad = Vec::new();
    for (name, src) in [
        ("broadcast", "(vsum (* x (iota 1024)))"),
        ("outer", "(trace (outer (* x (iota 100)) (iota 100)))"),
    ] {
        let program = Program::parse(src).expect("parses");
        let b = lane_bindings(&[("x".to_string(), 0.5, 1.5)], &Bindings::new(), 3, 9);
        bad.extend(compare(name, &program, &b, &["x".into()], &mut gpu));
    }
    report(bad);
}

#[test]
fn sessions_on_several_threads_share_the_device() {
    let Some(ctx) = gpu_or_skip("sessions_on_several_threads_share_the_device") else {
        return;
    };
    // A calibration under auto gives each worker thread its own session and region device on
    // the one context: their regions are submitted and read back at the same time.
    let [(name, src, inputs, uniform), _] = wide_cases();
    let program = Program::parse(&src).expect("parses");
    let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
    let bad: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let (ctx, program, grad) = (Arc::clone(&ctx), &program, &grad);
                let (inputs, uniform, name) = (&inputs, &uniform, &name);
                s.spawn(move || {
                    let mut gpu = gpu_session(&ctx);
                    let mut bad = Vec::new();
                    for round in 0..3 {
                        let b = lane_bindings(inputs, uniform, 33, 700 + 10 * t + round);
                        let name = format!("{name} thread {t} round {round}");
                        bad.extend(compare(&name, program, &b, grad, &mut gpu));
                    }
                    assert!(gpu.region_counts().device_regions >= 3);
                    bad
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("no worker panicked"))
            .collect()
    });
    report(bad);
}
