//! `ndvm bench auto`: what `--device auto` costs where it keeps the work on the CPU. Every
//! conformance program at one lane, and the 80-step Kalman program at 1024 lanes, value and
//! gradient in `f32`, with the `auto` device attached against none, timed in the same run in
//! alternating samples (the ratio is the median of the pairs').

use crate::bench::timing::paired_seconds_per_call;
use crate::data::suite;
use crate::device::Attach;
use runtime_cpu::{Bindings, GradSpec, Program, RunOptions, Session};
use runtime_gpu::DeviceChoice;
use serde::Serialize;
use std::time::Duration;

/// One program.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The suite program.
    pub program: String,
    /// Lanes.
    pub lanes: usize,
    /// Microseconds per evaluation, no device.
    pub cpu_us: f64,
    /// Microseconds per evaluation, `--device auto`.
    pub auto_us: f64,
    /// The median of `auto / cpu` over samples taken in pairs (one right after the other).
    pub ratio: f64,
}

/// Seconds per evaluation with no device and with `auto`, and the median ratio of samples
/// taken in pairs.
fn time(
    program: &Program,
    b: &Bindings,
    opts: &RunOptions,
    min_sample: Duration,
    samples: usize,
) -> (f64, f64, f64) {
    let session = |choice| {
        let mut s = Session::<f32>::new();
        f32::attach(&mut s, choice).expect("auto and cpu are always available");
        s
    };
    let (mut cpu, mut auto) = (session(DeviceChoice::Cpu), session(DeviceChoice::Auto));
    paired_seconds_per_call(
        || {
            std::hint::black_box(cpu.run(program, b, opts).expect("bound"));
        },
        || {
            std::hint::black_box(auto.run(program, b, opts).expect("bound"));
        },
        min_sample,
        samples,
    )
}

/// Measures every program.
pub fn run(min_sample: Duration, samples: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in suite() {
        let program = Program::parse(&p.src).expect("the suite parses");
        let mut cases = vec![(1usize, p.bindings())];
        if p.name == "kalman2d_T80" {
            // 1024 lanes: q and r per lane around the reference values.
            let mut b = p.bindings();
            for (n, x) in &p.scalars {
                let col = (0..1024)
                    .map(|l| x * (0.9 + 0.2 * l as f64 / 1024.0))
                    .collect();
                b = b.lanes(n, col).expect("equal lane counts");
            }
            cases.push((1024, b));
        }
        for (lanes, b) in cases {
            let opts = RunOptions {
                grad: GradSpec::All,
                ..Default::default()
            };
            let (cpu, auto, ratio) = time(&program, &b, &opts, min_sample, samples);
            rows.push(Row {
                program: p.name.clone(),
                lanes,
                cpu_us: cpu * 1e6,
                auto_us: auto * 1e6,
                ratio,
            });
        }
    }
    rows
}

/// Prints the table and the worst ratio.
pub fn print_text(rows: &[Row]) {
    println!("--device auto against the CPU alone, value + gradient, f32 (microseconds)");
    println!(
        "{:<28} {:>6} {:>11} {:>11} {:>7}",
        "program", "lanes", "cpu", "auto", "ratio"
    );
    for r in rows {
        println!(
            "{:<28} {:>6} {:>11.3} {:>11.3} {:>7.3}",
            r.program, r.lanes, r.cpu_us, r.auto_us, r.ratio
        );
    }
    if let Some(w) = rows.iter().max_by(|a, b| a.ratio.total_cmp(&b.ratio)) {
        println!("worst: {} at {} lanes, {:.3}x", w.program, w.lanes, w.ratio);
    }
}
