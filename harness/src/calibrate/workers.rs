//! Restarts spread over worker threads. A calibration's restarts are independent, so
//! [`Workers`] runs the lane blocks one walk of every restart would make (restart-major lanes,
//! [`super::Problem`]'s layout) as jobs on several sessions at once, and puts their lanes back
//! in order. The blocks depend only on the lane block and the lanes, never on the thread
//! count, so any number of threads gives the same bytes, the same as one walk of every lane.
//! (Under `--device auto`, a GPU that fails mid-run leaves each session on the CPU from then
//! on; which blocks ran on the GPU before that depends on timing.)

#[cfg(test)]
use super::evaluate;
use super::lm::{normals, PerRestartNormal};
use super::{evaluate_all, evaluate_lanes, losses, LaneResults, PerRestart, Problem};
use crate::schedule::{self, Stop};
use runtime_cpu::{Limits, Real, RegionCounts, Session};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Something that evaluates loss and gradient for a set of restarts: one session, or
/// [`Workers`].
pub trait Evaluator {
    /// The number type the walks compute in (the optimiser steps in it too).
    type Number: Real;

    /// Every lane's value and gradient for the restarts whose parameters are `p`, as one
    /// walk of every lane gives them (see [`evaluate_all`]).
    fn lanes(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> LaneResults;

    /// Loss and gradient of every restart whose parameters are `p` (see
    /// [`super::evaluate`]).
    fn evaluate(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> PerRestart {
        let all = self.lanes(problem, p, limits, lane_block, with_grad);
        losses(problem, &all, p.len(), with_grad)
    }

    /// The least-squares normal equations of every restart (see [`normals`]).
    fn normals(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
    ) -> PerRestartNormal {
        let all = self.lanes(problem, p, limits, lane_block, true);
        normals(problem, &all, p.len())
    }

    /// `f(i, session)` for `i` in `0..n`, each on one session (several at once with
    /// [`Workers`]), the results in order of `i`.
    fn each<T: Send>(
        &mut self,
        n: usize,
        f: &(dyn Fn(usize, &mut Session<Self::Number>) -> T + Sync),
    ) -> Vec<T>;
}

impl<R: Real> Evaluator for Session<R> {
    type Number = R;

    fn lanes(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> LaneResults {
        evaluate_all(self, problem, p, limits, lane_block, with_grad)
    }

    fn evaluate(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> PerRestart {
        super::evaluate(self, problem, p, limits, lane_block, with_grad)
    }

    fn normals(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
    ) -> PerRestartNormal {
        super::normals(self, problem, p, limits, lane_block)
    }

    fn each<T: Send>(
        &mut self,
        n: usize,
        f: &(dyn Fn(usize, &mut Session<R>) -> T + Sync),
    ) -> Vec<T> {
        (0..n).map(|i| f(i, self)).collect()
    }
}

/// One session per worker thread.
pub struct Workers<R: Real> {
    sessions: Vec<Mutex<Session<R>>>,
    /// The worker threads (none for one), kept across evaluations.
    pool: Option<rayon::ThreadPool>,
}

impl<R: Real> Workers<R> {
    /// `threads` workers (at least one), each with a session from `make`.
    pub fn new(
        threads: usize,
        mut make: impl FnMut() -> Result<Session<R>, String>,
    ) -> Result<Self, String> {
        let sessions = (0..threads.max(1))
            .map(|_| make().map(Mutex::new))
            .collect::<Result<_, _>>()?;
        let pool = (threads > 1).then(|| schedule::pool(threads));
        Ok(Workers { sessions, pool })
    }

    /// The number of workers.
    pub fn threads(&self) -> usize {
        self.sessions.len()
    }

    /// Gives every worker's session the flag that cancels its walks
    /// ([`Session::set_cancel`]).
    pub fn set_cancel(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        for s in &mut self.sessions {
            session(s).set_cancel(flag.clone());
        }
    }

    /// True when the restarts `p` are walked by one session: one walk of every lane (the GPU),
    /// a single block, or a single worker.
    fn one_walk(&self, problem: &Problem, p: &[Vec<f64>], lane_block: usize) -> bool {
        let lanes = p.len() * problem.rows();
        lane_block == 0 || lanes <= lane_block || self.sessions.len() == 1
    }

    /// Where the numeric regions of every worker's walks ran.
    pub fn region_counts(&mut self) -> RegionCounts {
        let mut all = RegionCounts::default();
        for s in &mut self.sessions {
            all += session(s).region_counts();
        }
        all
    }
}

/// A session no other worker holds: as many sessions as workers, so each worker finds one.
fn free<R: Real>(sessions: &[Mutex<Session<R>>]) -> MutexGuard<'_, Session<R>> {
    sessions
        .iter()
        .find_map(|s| match s.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        })
        .expect("a session for every worker")
}

fn session<R: Real>(m: &mut Mutex<Session<R>>) -> &mut Session<R> {
    // A worker that panicked left its session as it was; a walk never leaves one half-reset.
    m.get_mut()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<R: Real> Evaluator for Workers<R> {
    type Number = R;

    fn lanes(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> LaneResults {
        if self.one_walk(problem, p, lane_block) {
            return evaluate_all(
                session(&mut self.sessions[0]),
                problem,
                p,
                limits,
                lane_block,
                with_grad,
            );
        }
        // A job is one lane block, the blocks one walk of every lane would make.
        let lanes = p.len() * problem.rows();
        let parts = self.each(lanes.div_ceil(lane_block), &|j, s| {
            let mine = j * lane_block..((j + 1) * lane_block).min(lanes);
            evaluate_lanes(s, problem, p, mine, limits, lane_block, with_grad)
        });
        let mut all = LaneResults::default();
        for part in parts {
            all.extend(part);
        }
        all
    }

    fn normals(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
    ) -> PerRestartNormal {
        if self.one_walk(problem, p, lane_block) {
            return super::normals(
                session(&mut self.sessions[0]),
                problem,
                p,
                limits,
                lane_block,
            );
        }
        let all = self.lanes(problem, p, limits, lane_block, true);
        normals(problem, &all, p.len())
    }

    fn each<T: Send>(
        &mut self,
        n: usize,
        f: &(dyn Fn(usize, &mut Session<R>) -> T + Sync),
    ) -> Vec<T> {
        let sessions = &self.sessions;
        schedule::run_on(
            self.pool.as_ref(),
            sessions.len().min(n),
            Stop {
                max_jobs: Some(n),
                deadline: None,
                flag: None,
            },
            || free(sessions),
            |s, i| f(i, &mut **s),
            |_, _| {},
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Loss;
    use runtime_cpu::{Bindings, Program};

    #[test]
    fn workers_give_the_lanes_of_one_walk_in_order() {
        // 37 rows: restarts straddle the 256-lane blocks; b < 0 fails a restart (log).
        let problem = Problem {
            program: Program::parse("(* a (log (* b (+ x 1.0))))").unwrap(),
            fixed: Bindings::new(),
            data: vec![("x".into(), (0..37).map(|i| f64::from(i) * 0.1).collect())],
            params: vec!["a".into(), "b".into()],
            loss: Loss::Value,
        };
        let p: Vec<Vec<f64>> = (0..40)
            .map(|r| vec![0.5 + 0.01 * f64::from(r), f64::from(r % 7) - 1.5])
            .collect();
        let limits = Limits::default();
        let one = evaluate(&mut Session::<f64>::new(), &problem, &p, limits, 256, true);
        assert!(one.iter().any(Result::is_err) && one.iter().any(Result::is_ok));
        for threads in [1, 3] {
            let mut w = Workers::new(threads, || Ok(Session::<f64>::new())).unwrap();
            for _ in 0..2 {
                assert_eq!(w.evaluate(&problem, &p, limits, 256, true), one);
            }
            assert_eq!(w.evaluate(&problem, &p, limits, 256, false).len(), 40);
        }
    }
}
