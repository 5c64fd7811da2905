//! Runs one workload in a loop for profiling: `cargo run --release --example profile -- kalman LANES SECONDS`
//! or `... small NAME SECONDS`.

use harness::bench::kalman::kalman_bindings;
use harness::data::suite;
use harness::examples::KALMAN_SRC;
use runtime_cpu::{GradSpec, Program, RunOptions, Session};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map_or("kalman", String::as_str);
    let secs: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let (program, bindings, grad) = match what {
        "small" => {
            let name = args.get(2).map_or("damped_oscillator", String::as_str);
            let p = suite()
                .into_iter()
                .find(|p| p.name == name)
                .expect("a suite program");
            (
                Program::parse(&p.src).expect("parses"),
                p.bindings(),
                GradSpec::All,
            )
        }
        "file" => {
            let path = args.get(2).expect("a program file");
            let src = std::fs::read_to_string(path).expect("readable");
            let b = runtime_cpu::Bindings::new()
                .scalar("q", 0.05)
                .scalar("r", 0.1);
            (Program::parse(&src).expect("parses"), b, GradSpec::All)
        }
        _ => {
            let lanes: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
            (
                Program::parse(KALMAN_SRC).expect("parses"),
                kalman_bindings(lanes),
                GradSpec::Some(vec!["q".into(), "r".into()]),
            )
        }
    };
    let options = RunOptions {
        grad,
        ..Default::default()
    };
    let mut session = Session::<f64>::new();
    if let Ok(iters) = std::env::var("NDVM_ITERS") {
        // A fixed count, for instruction-counting profilers.
        for _ in 0..iters.parse::<u64>().expect("a count") {
            std::hint::black_box(session.run(&program, &bindings, &options).expect("bound"));
        }
        return;
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        for _ in 0..100 {
            std::hint::black_box(session.run(&program, &bindings, &options).expect("bound"));
        }
        n += 100;
    }
    println!(
        "{:.3} us per run",
        start.elapsed().as_secs_f64() / n as f64 * 1e6
    );
}
