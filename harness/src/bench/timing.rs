//! Wall-clock timing for the experiments: warm up, then the median of several samples, each
//! long enough to swamp the clock's resolution.

use std::time::{Duration, Instant};

/// Warms `f` up and returns a batch of calls that lasts about `min_sample`.
fn batch_for(f: &mut impl FnMut(), min_sample: Duration) -> usize {
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
    (batch * 4).max(1)
}

/// Seconds per call of `batch` calls of `f`.
fn sample(f: &mut impl FnMut(), batch: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..batch {
        f();
    }
    t.elapsed().as_secs_f64() / batch as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds per call of `f`: the median over `samples` samples of at least `min_sample` each.
pub fn seconds_per_call(mut f: impl FnMut(), min_sample: Duration, samples: usize) -> f64 {
    let batch = batch_for(&mut f, min_sample);
    median((0..samples.max(1)).map(|_| sample(&mut f, batch)).collect())
}

/// Two calls compared: seconds per call of `a` and of `b` (medians), and the median of the
/// ratios `b / a` of samples taken in pairs, one right after the other (which of the two goes
/// first alternates), so that a machine growing slower or faster during the run moves both.
pub fn paired_seconds_per_call(
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    min_sample: Duration,
    samples: usize,
) -> (f64, f64, f64) {
    let (na, nb) = (batch_for(&mut a, min_sample), batch_for(&mut b, min_sample));
    let (mut ta, mut tb, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..samples.max(1) {
        let (x, y) = if i % 2 == 0 {
            let x = sample(&mut a, na);
            (x, sample(&mut b, nb))
        } else {
            let y = sample(&mut b, nb);
            (sample(&mut a, na), y)
        };
        ta.push(x);
        tb.push(y);
        ratio.push(y / x);
    }
    (median(ta), median(tb), median(ratio))
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
