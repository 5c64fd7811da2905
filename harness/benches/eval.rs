//! Criterion benchmarks of the interpreter: the 80-step Kalman likelihood with gradient at
//! several lane counts next to the hand-written ceiling, the small suite programs at one lane,
//! and decoding.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use harness::bench::kalman::kalman_bindings;
use harness::ceiling::{kalman_nll_grad_lanes, KalmanStep};
use harness::data::{suite, SMALL_PROGRAMS};
use harness::examples::{kalman_obs, KALMAN_SRC};
use runtime_cpu::{GradSpec, Program, Real, RunOptions, Session};
use std::hint::black_box;

fn kalman_lanes<R: Real>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("eval/kalman80/{}", R::NAME));
    let program = Program::parse(KALMAN_SRC).expect("parses");
    let options = RunOptions {
        grad: GradSpec::Some(vec!["q".into(), "r".into()]),
        ..Default::default()
    };
    let mut session = Session::<R>::new();
    for lanes in [1usize, 8, 64, 256, 1024] {
        let bindings = kalman_bindings(lanes);
        group.throughput(Throughput::Elements(lanes as u64));
        group.bench_with_input(BenchmarkId::new("b", lanes), &lanes, |b, _| {
            b.iter(|| {
                let out = session.run(&program, &bindings, &options);
                black_box(out.expect("bound").lanes)
            })
        });
    }
    group.finish();
}

fn kalman_ceiling(c: &mut Criterion) {
    let mut group = c.benchmark_group("ceiling/kalman80/f64");
    let obs = kalman_obs();
    let mut tape: Vec<KalmanStep<f64>> = Vec::new();
    for lanes in [1usize, 256] {
        let q = vec![0.05; lanes];
        let r = vec![0.1; lanes];
        let (mut v, mut dq, mut dr) = (vec![0.0; lanes], vec![0.0; lanes], vec![0.0; lanes]);
        group.throughput(Throughput::Elements(lanes as u64));
        group.bench_with_input(BenchmarkId::new("b", lanes), &lanes, |b, _| {
            b.iter(|| {
                kalman_nll_grad_lanes(&obs, &q, &r, &mut v, &mut dq, &mut dr, &mut tape);
                black_box(&v);
            })
        });
    }
    group.finish();
}

fn small_programs(c: &mut Criterion) {
    let mut group = c.benchmark_group("eval/small/b1");
    let mut session = Session::<f64>::new();
    for p in suite()
        .into_iter()
        .filter(|p| SMALL_PROGRAMS.contains(&p.name.as_str()))
    {
        let program = Program::parse(&p.src).expect("parses");
        let bindings = p.bindings();
        let options = RunOptions {
            grad: GradSpec::All,
            ..Default::default()
        };
        group.bench_function(&p.name, |b| {
            b.iter(|| {
                let out = session.run(&program, &bindings, &options);
                black_box(out.expect("bound").lanes)
            })
        });
    }
    group.finish();
}

fn decode(c: &mut Criterion) {
    c.bench_function("decode/kalman80", |b| {
        b.iter(|| black_box(Program::parse(KALMAN_SRC).expect("parses")))
    });
}

criterion_group!(
    benches,
    kalman_lanes::<f64>,
    kalman_lanes::<f32>,
    kalman_ceiling,
    small_programs,
    decode
);
criterion_main!(benches);
