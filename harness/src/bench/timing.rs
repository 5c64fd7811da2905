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
