//! The multicore scheduler for populations of independent jobs (fits, candidates, restarts):
//! worker threads on a rayon pool, each with its own state (an interpreter), pull job indices
//! in order; results are placed by index, so the output is byte-identical to a serial run for
//! any thread count. With a deadline, no new job starts after it, and every job handed out is
//! finished, so the completed jobs are always a prefix `0..n`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// When to stop handing out jobs.
#[derive(Copy, Clone, Debug, Default)]
pub struct Stop<'a> {
    /// At most this many jobs (`None`: unbounded, so a deadline is needed).
    pub max_jobs: Option<usize>,
    /// No job starts after this instant.
    pub deadline: Option<Instant>,
    /// No job starts once this flag is set (a signal came).
    pub flag: Option<&'a AtomicBool>,
}

/// Runs jobs `0, 1, 2, ...` on `threads` workers until `stop`; `init` makes each worker's state,
/// `job` runs one job, `done` is told of each finished job (from the worker's thread). Returns
/// the results in job order.
pub fn run<T, S, I, J, D>(threads: usize, stop: Stop<'_>, init: I, job: J, done: D) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync,
    J: Fn(&mut S, usize) -> T + Sync,
    D: Fn(usize, &T) + Sync,
{
    let pool = (threads > 1).then(|| pool(threads));
    run_on(pool.as_ref(), threads, stop, init, job, done)
}

/// A pool of `threads` worker threads for [`run_on`].
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("a thread pool")
}

/// [`run`] on the threads of `pool` (made by [`pool`] with at least `threads` threads, and
/// kept by a caller that runs many times); with no pool, or one thread, on this thread.
pub fn run_on<T, S, I, J, D>(
    pool: Option<&rayon::ThreadPool>,
    threads: usize,
    stop: Stop<'_>,
    init: I,
    job: J,
    done: D,
) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync,
    J: Fn(&mut S, usize) -> T + Sync,
    D: Fn(usize, &T) + Sync,
{
    assert!(
        stop.max_jobs.is_some() || stop.deadline.is_some(),
        "an unbounded run needs a deadline"
    );
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::new());
    let worker = || {
        let mut state = init();
        let mut mine = Vec::new();
        loop {
            if stop.deadline.is_some_and(|d| Instant::now() >= d)
                || stop.flag.is_some_and(|f| f.load(Ordering::Relaxed))
            {
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if stop.max_jobs.is_some_and(|m| i >= m) {
                break;
            }
            let r = job(&mut state, i);
            done(i, &r);
            mine.push((i, r));
        }
        results.lock().expect("no worker panicked").extend(mine);
    };
    match pool {
        Some(pool) if threads > 1 => pool.scope(|s| {
            for _ in 0..threads {
                s.spawn(|_| worker());
            }
        }),
        _ => worker(),
    }
    let mut all = results.into_inner().expect("no worker panicked");
    all.sort_by_key(|(i, _)| *i);
    debug_assert!(
        all.iter().enumerate().all(|(k, (i, _))| k == *i),
        "completed jobs form a prefix"
    );
    all.into_iter().map(|(_, r)| r).collect()
}

/// The number of cores available.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_in_job_order_for_any_thread_count() {
        for threads in [1, 2, 4] {
            let stop = Stop {
                max_jobs: Some(100),
                deadline: None,
                flag: None,
            };
            let r = run(
                threads,
                stop,
                || 0u64,
                |s, i| {
                    *s += 1;
                    i * i
                },
                |_, _| {},
            );
            assert_eq!(r, (0..100).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_deadline_leaves_a_prefix() {
        let stop = Stop {
            max_jobs: None,
            deadline: Some(Instant::now() + std::time::Duration::from_millis(50)),
            flag: None,
        };
        let r = run(
            2,
            stop,
            || (),
            |_, i| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                i
            },
            |_, _| {},
        );
        assert!(!r.is_empty());
        assert_eq!(r, (0..r.len()).collect::<Vec<_>>());
    }
}
