//! Wall-clock timing for the experiments: warm up, then the median of several samples, each
//! long enough to swamp the clock's resolution.

use std::time::{Duration, Instant};

/// Seconds per call of `f`: the median over `samples` samples of at least `min_sample` each.
pub fn seconds_per_call(mut f: impl FnMut(), min_sample: Duration, samples: usize) -> f64 {
    // Warm up and find a batch size that fills a sample.
    let mut batch = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        if t.elapsed() >= min_sample / 4 || batch >= 1 << 30 {
            break;
        }
        batch *= 2;
    }
    batch = (batch * 4).max(1);
    let mut per_call: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_secs_f64() / batch as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
}

/// Seconds per call of `f`, already warmed up and too slow to batch: the median of `samples`
/// samples, each of whole calls until `min_sample` has passed (one call when a call is longer).
pub fn seconds_per_warm_call(min_sample: Duration, samples: usize, mut f: impl FnMut()) -> f64 {
    let mut per_call: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let t = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || t.elapsed() < min_sample {
                f();
                calls += 1;
            }
            t.elapsed().as_secs_f64() / f64::from(calls)
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
}
