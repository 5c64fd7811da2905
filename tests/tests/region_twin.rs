//! The region interpreter's CPU twin as a session's region device: each program runs twice in
//! `f32`, once on the CPU kernels and once with its numeric regions (forward and reverse) run
//! by `runtime_gpu::region::TwinRegions`, the shader's logic on the CPU, and the values and
//! gradients are compared lane by lane within [`TWIN_RTOL`]. The conformance suite (with the
//! 80-step Kalman filter), the divergent programs (selects under lane masks), vectors and
//! matrices whose ops a lane's invocations share, the D = 8 Kalman filter, and a long loop,
//! each at one invocation per lane and at several. Needs no GPU.

use ndvm_tests::devices::{compare_devices, lane_bindings, suite_inputs};
use ndvm_tests::divergent::{divergent, Divergent};
use ndvm_tests::suite;
use runtime_cpu::{Bindings, Program, RunOptions, Session};
use runtime_gpu::region::{TwinCounts, TwinRegions, SOFTWARE_LOOP_CAP, SOFTWARE_VISIT_BUDGET};
use std::sync::Arc;

/// A value or gradient element with the twin against the CPU, both `f32`:
/// `close(twin, cpu, TWIN_RTOL)`. The twin computes `sin`, `cos`, `exp` and `log` as the CPU
/// does (in `f64`, rounded) and mostly sums in the CPU's order, but it factors by Gauss-Jordan
/// where the CPU uses LU (`det`, `inv`, `solve` above 2x2) and adds a lane's adjoints in the
/// shader's order (a broadcast scalar's over the elements in one sum, an input's over the
/// records as the tape has them): a few `f32` roundings apart, within 1e-6 on these programs
/// (the 80-step Kalman filter's gradients differ by 3e-7). Far tighter than the GPU's
/// `DEVICE_RTOL` (2e-3), which also covers the GPU's own transcendental functions.
const TWIN_RTOL: f64 = 1e-5;

/// Invocations per lane the twin runs with: one (the shader's `forward` and `reverse`), and
/// several sharing each op (`forward_shared`, `reverse_shared`).
const INVOCATIONS: [u32; 2] = [1, 8];

/// A session whose regions the twin runs at `width` invocations per lane, and its counters.
fn twin_session(width: u32) -> (Session<f32>, Arc<TwinCounts>) {
    let twin = TwinRegions::<f32>::new().with_lane_width(width);
    let counts = twin.counts();
    let mut s = Session::<f32>::new();
    s.set_device(Some(Box::new(twin)));
    (s, counts)
}

/// Runs `program` on the CPU and with the twin; returns the differences (empty when they
/// agree).
fn compare(
    name: &str,
    program: &Program,
    b: &Bindings,
    grad: &[String],
    twin: &mut Session<f32>,
) -> Vec<String> {
    compare_devices(name, "twin", TWIN_RTOL, program, b, grad, twin)
}

/// Fails with the differences found, and unless the twin ran regions forward and reverse,
/// read and wrote only inside its arenas, and stayed within the plan's loop visits.
fn report(bad: Vec<String>, session: &Session<f32>, counts: &TwinCounts) {
    assert!(
        bad.is_empty(),
        "{} differences between the twin and the CPU:\n{}",
        bad.len(),
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    let regions = session.region_counts();
    assert!(
        regions.device_regions > 0 && regions.device_reverse > 0,
        "the twin ran no region forward or reverse: {regions:?}"
    );
    assert_eq!(counts.stray(), 0, "accesses past an arena");
    assert_eq!(
        counts.over_plan(),
        0,
        "dispatches past the plan's loop visits"
    );
    assert!(
        counts.max_visits() <= SOFTWARE_LOOP_CAP,
        "an invocation made {} loop visits in one dispatch",
        counts.max_visits()
    );
}

/// Lane counts the programs run at: one, and several (in one lane block).
const LANE_COUNTS: [usize; 2] = [1, 19];

#[test]
fn the_suite_agrees_with_the_twin() {
    for width in INVOCATIONS {
        let (mut twin, counts) = twin_session(width);
        let mut bad = Vec::new();
        let mut ran = 0;
        for p in suite() {
            let program = Program::parse(&p.src).expect("parses");
            // Scalar inputs vary per lane by up to 10% around the reference.
            let (inputs, uniform) = suite_inputs(&p);
            if inputs.is_empty() {
                continue;
            }
            let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
            for (i, &b) in LANE_COUNTS.iter().enumerate() {
                let bind = lane_bindings(&inputs, &uniform, b, 11 + i as u64);
                let name = format!("{} width {width}", p.name);
                bad.extend(compare(&name, &program, &bind, &grad, &mut twin));
            }
            ran += 1;
        }
        assert!(ran > 5, "only {ran} programs of the suite have inputs");
        report(bad, &twin, &counts);
    }
}

#[test]
fn divergent_programs_agree_with_the_twin() {
    for width in INVOCATIONS {
        let (mut twin, counts) = twin_session(width);
        let mut bad = Vec::new();
        for Divergent {
            name,
            program,
            inputs,
        } in divergent()
        {
            let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
            for (i, &b) in LANE_COUNTS.iter().enumerate() {
                let bind = lane_bindings(&inputs, &Bindings::new(), b, 77 + i as u64);
                let name = format!("{name} width {width}");
                bad.extend(compare(&name, &program, &bind, &grad, &mut twin));
            }
        }
        report(bad, &twin, &counts);
    }
}

/// A program's name, source, per-lane input ranges and uniform bindings.
type Case = (&'static str, String, Vec<(String, f64, f64)>, Bindings);

/// Vectors and matrices a lane's invocations share (elementwise ops with a broadcast per-lane
/// scalar, select, pack, extract, outer, transpose, matvec, matmul), the factorisations, and
/// the D = 8 Kalman filter.
fn wide_cases() -> Vec<Case> {
    let wide = "(let* ((v (* x (+ (iota 20) 1.0)))
                       (M (outer v v))
                       (T (transpose (* 0.01 M)))
                       (w (matvec T (sin v)))
                       (u (if (< x 0.5) (* 2.0 w) (exp (* -0.001 w))))
                       (P (mat u u (- u) (* x u)))
                       (R (matmul (transpose P) P)))
                  (+ (vsum (* a R)) (vsum (ref P 1)) (dot u u)))";
    let factors = "(let* ((A (+ (scale 3.0 (eye 3)) (outer (vec x a 0.5) (vec a 1.0 x))))
                          (b (vec x (* a a) 1.0)))
                     (+ (det A) (logdet A) (vsum (inv A)) (norm (solve A b))
                        (dot (normalize b) (cross b (vec 1.0 x a)))
                        (trace (matmul A A))))";
    let kalman = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/kalman_nd.scm"
    ))
    .expect("the example");
    let xa = vec![("x".into(), 0.2, 0.8), ("a".into(), 0.5, 1.5)];
    vec![
        ("wide", wide.to_string(), xa.clone(), Bindings::new()),
        ("factors", factors.to_string(), xa, Bindings::new()),
        (
            "kalman_nd_8",
            kalman,
            vec![("q".into(), 0.02, 0.1), ("r".into(), 0.05, 0.2)],
            Bindings::new().scalar("d", 8.0),
        ),
    ]
}

#[test]
fn wide_ops_and_the_kalman_filter_agree_with_the_twin() {
    for width in INVOCATIONS {
        let (mut twin, counts) = twin_session(width);
        let mut bad = Vec::new();
        for (name, src, inputs, uniform) in &wide_cases() {
            let program = Program::parse(src).expect("parses");
            let grad: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
            for (i, &b) in [1usize, 5].iter().enumerate() {
                let bind = lane_bindings(inputs, uniform, b, 500 + i as u64);
                let name = format!("{name} width {width}");
                bad.extend(compare(&name, &program, &bind, &grad, &mut twin));
            }
        }
        report(bad, &twin, &counts);
    }
}

#[test]
fn a_region_past_the_software_drivers_loop_cap_is_split_within_the_plans_budget() {
    // 4,000 iterations of three per-lane ops: one region of 12,000 records, far past the
    // 65,535 loop visits after which Mesa's driver silently ends an invocation.
    let program = Program::parse(
        "(loop ((k 0) (y x)) (if (= k 4000) y (recur (+ k 1) (+ (* y 0.999) (* 0.001 (sin y))))))",
    )
    .expect("parses");
    for width in INVOCATIONS {
        let twin = TwinRegions::<f32>::new()
            .with_lane_width(width)
            .with_visit_budget(SOFTWARE_VISIT_BUDGET);
        let counts = twin.counts();
        let mut session = Session::<f32>::new();
        session.set_device(Some(Box::new(twin)));
        let b = lane_bindings(&[("x".to_string(), 0.5, 2.0)], &Bindings::new(), 16, 3);
        let bad = compare("long_loop", &program, &b, &["x".into()], &mut session);
        report(bad, &session, &counts);
        assert!(
            counts.dispatches() > 10,
            "{} dispatches",
            counts.dispatches()
        );
        // Each dispatch within the plan's budget, far under the cap: the budget leaves room
        // for the loops a driver's compiler makes of the interpreter's own switch, which the
        // twin (counting the WGSL's loops) does not see.
        assert!(
            counts.max_visits() <= SOFTWARE_VISIT_BUDGET,
            "{} loop visits in one dispatch",
            counts.max_visits()
        );
        // The region in one dispatch: every invocation runs the loops of all 12,000 records
        // (at least the record loop's visit and its element loop's two each). Mesa's driver
        // cuts this dispatch short (`gpu_regions.rs`), so it counts more than these 48,000
        // visits of the WGSL's own loops.
        let whole = TwinRegions::<f32>::new()
            .with_lane_width(width)
            .with_visit_budget(u64::MAX);
        let whole_counts = whole.counts();
        session.set_device(Some(Box::new(whole)));
        session
            .run(&program, &b, &RunOptions::default())
            .expect("bound");
        assert_eq!(whole_counts.dispatches(), 1);
        assert!(
            whole_counts.max_visits() >= 4 * 12_000,
            "one dispatch of the region made only {} loop visits",
            whole_counts.max_visits()
        );
    }
}
