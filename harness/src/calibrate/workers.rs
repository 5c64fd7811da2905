//! Restarts spread over worker threads. A calibration's restarts are independent, so
//! [`Workers`] cuts them into jobs of whole restarts (about one lane block each) and runs the
//! jobs on several sessions at once. The cut depends only on the lane block and the data rows,
//! never on the thread count, so any number of threads gives the same bytes.

use super::{evaluate, PerRestart, Problem};
use crate::schedule::{self, Stop};
use runtime_cpu::{Limits, Real, RegionCounts, Session};
use std::sync::Mutex;

/// Something that evaluates loss and gradient for a set of restarts: one session, or
/// [`Workers`].
pub trait Evaluator {
    /// The number type the walks compute in (the optimiser steps in it too).
    type Number: Real;

    /// Loss and gradient of every restart whose parameters are `p` (see [`evaluate`]).
    fn evaluate(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> PerRestart;
}

impl<R: Real> Evaluator for Session<R> {
    type Number = R;

    fn evaluate(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> PerRestart {
        evaluate(self, problem, p, limits, lane_block, with_grad)
    }
}

/// One session per worker thread.
pub struct Workers<R: Real> {
    sessions: Vec<Mutex<Session<R>>>,
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
        Ok(Workers { sessions })
    }

    /// Where the numeric regions of every worker's walks ran.
    pub fn region_counts(&mut self) -> RegionCounts {
        let mut all = RegionCounts::default();
        for s in &mut self.sessions {
            let c = session(s).region_counts();
            all.device_regions += c.device_regions;
            all.cpu_regions += c.cpu_regions;
            all.device_reverse += c.device_reverse;
            all.ops += c.ops;
        }
        all
    }
}

fn session<R: Real>(m: &mut Mutex<Session<R>>) -> &mut Session<R> {
    // A worker that panicked left its session as it was; a walk never leaves one half-reset.
    m.get_mut()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<R: Real> Evaluator for Workers<R> {
    type Number = R;

    fn evaluate(
        &mut self,
        problem: &Problem,
        p: &[Vec<f64>],
        limits: Limits,
        lane_block: usize,
        with_grad: bool,
    ) -> PerRestart {
        let per_job = (lane_block / problem.rows()).max(1);
        let jobs = p.len().div_ceil(per_job);
        if lane_block == 0 || jobs <= 1 {
            // One walk of every lane (the GPU), or a single job.
            return evaluate(
                session(&mut self.sessions[0]),
                problem,
                p,
                limits,
                lane_block,
                with_grad,
            );
        }
        let sessions = &self.sessions;
        let parts = schedule::run(
            sessions.len().min(jobs),
            Stop {
                max_jobs: Some(jobs),
                deadline: None,
            },
            // As many sessions as workers, so each worker finds one free.
            || {
                sessions
                    .iter()
                    .find_map(|s| s.try_lock().ok())
                    .expect("a session for every worker")
            },
            |s, j| {
                let mine = &p[j * per_job..((j + 1) * per_job).min(p.len())];
                evaluate(&mut **s, problem, mine, limits, lane_block, with_grad)
            },
            |_, _| {},
        );
        parts.into_iter().flatten().collect()
    }
}
