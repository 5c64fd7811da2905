//! Runs the gates over a range of generated programs on several threads.
//!
//! The programs are spread over plain scoped threads that take indices from a shared counter,
//! each with a large stack; results are placed by index, so they do not depend on the thread
//! count. (Rayon's own workers are not used for this: a rayon worker that waits for the G5
//! thread pools runs other programs' jobs on its own stack while it waits, nesting without
//! bound.)

use crate::gates::{check, Verdict};
use crate::gen::{generate, Case, Families, GenOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Stack of each worker thread.
const STACK: usize = 64 << 20;

/// The gates' result on one generated program.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// Index in the seed's stream.
    pub index: u64,
    /// Families of the program.
    pub families: Families,
    /// Lanes of the program.
    pub lanes: usize,
    /// The gates' results.
    pub verdict: Verdict,
    /// The program and its inputs, kept when a gate failed.
    pub failed: Option<Case>,
}

/// Generates programs `0..count` of `seed` and runs every gate on each, on `threads` threads
/// (at least 1). `progress(done)` is called from the workers after each program.
pub fn run(
    seed: u64,
    count: u64,
    options: &GenOptions,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<CaseResult> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; count as usize]);
    std::thread::scope(|s| {
        for t in 0..threads.max(1) {
            let (next, done, results) = (&next, &done, &results);
            std::thread::Builder::new()
                .name(format!("fuzz-{t}"))
                .stack_size(STACK)
                .spawn_scoped(s, move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i as u64 >= count {
                        break;
                    }
                    let r = one(seed, i as u64, options);
                    results.lock().expect("no worker panics")[i] = Some(r);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                })
                .expect("a worker thread");
        }
    });
    results
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every index ran"))
        .collect()
}

/// Generates program `index` of `seed` and runs every gate on it.
pub fn one(seed: u64, index: u64, options: &GenOptions) -> CaseResult {
    let case = generate(seed, index, options);
    let verdict = check(&case);
    CaseResult {
        index,
        families: case.families,
        lanes: case.lanes,
        failed: (!verdict.passed()).then_some(case),
        verdict,
    }
}

/// A progress line every few seconds on standard error.
pub struct Progress {
    start: Instant,
    last: Mutex<Instant>,
    total: u64,
    every_s: f64,
}

impl Progress {
    /// A progress reporter for `total` programs, printing at most every `every_s` seconds.
    pub fn new(total: u64, every_s: f64) -> Progress {
        let now = Instant::now();
        Progress {
            start: now,
            last: Mutex::new(now),
            total,
            every_s,
        }
    }

    /// Called after each program.
    pub fn tick(&self, done: usize) {
        let mut last = self.last.lock().expect("no panics");
        if last.elapsed().as_secs_f64() < self.every_s {
            return;
        }
        *last = Instant::now();
        let t = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / t.max(1e-9);
        let left = (self.total as f64 - done as f64) / rate.max(1e-9);
        eprintln!(
            "{done}/{} programs, {t:.0} s, {rate:.0} programs/s, about {left:.0} s left",
            self.total
        );
    }
}
