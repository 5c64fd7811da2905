//! `ndvm bench ode-fit`: one fixed candidate system fitted through the integrator, again and
//! again from the same start, timed: fitted candidates per second and the final loss, for
//! `python/bench/ode_fit.py` to set beside SciPy's `least_squares` around `solve_ivp`.

use crate::ode::data::{self, Columns};
use crate::ode::grid::median_gap;
use crate::ode::program::System;
use crate::ode::shoot::{FitOptions, Shooting};
use crate::ode::simulate::{score, simulate};
use runtime_cpu::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

/// What to fit: the data, the states, one right-hand side per state and the constants'
/// starting values.
pub struct Job<'a> {
    /// The trajectories (a CSV).
    pub data: &'a Path,
    /// The time column.
    pub time: &'a str,
    /// The state columns.
    pub states: Vec<String>,
    /// One program text per state.
    pub rhs: Vec<String>,
    /// `(name, starting value)` of each constant.
    pub params: Vec<(String, f64)>,
    /// Fits timed.
    pub repeats: usize,
    /// Observations per shooting segment.
    pub segment: usize,
    /// The continuity weights of the phases (the default when `None`).
    pub weights: Option<Vec<f64>>,
    /// The largest Runge-Kutta step (the median gap when `None`).
    pub max_step: Option<f64>,
}

/// Fits `job` `repeats` times; the figures as JSON.
pub fn run(job: &Job) -> Result<Value, String> {
    let cols = Columns {
        time: job.time.to_string(),
        states: job.states.clone(),
        trajectory: None,
        inputs: vec![],
    };
    let trajs = data::read(job.data, &cols)?;
    if job.rhs.len() != job.states.len() {
        return Err(format!(
            "{} right-hand sides for {} states",
            job.rhs.len(),
            job.states.len()
        ));
    }
    let sys = System {
        states: job.states.clone(),
        inputs: vec![],
        time: job.time.to_string(),
        rhs: job.rhs.clone(),
        params: job.params.iter().map(|p| p.0.clone()).collect(),
    };
    let d = FitOptions::default();
    let opts = FitOptions {
        max_step: job.max_step.unwrap_or_else(|| median_gap(&trajs)),
        segment: job.segment,
        weights: job.weights.clone().unwrap_or(d.weights.clone()),
        ..d
    };
    let theta: Vec<f64> = job.params.iter().map(|p| p.1).collect();
    let mut session = Session::<f64>::new();
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..job.repeats.max(1) {
        let t0 = Instant::now();
        // The whole fit: the problem built (its program read and decoded, its lanes laid
        // out), fitted, and the result integrated and scored.
        let shooting = Shooting::new(&sys, &trajs, &opts)?;
        let fit = shooting.fit(&mut session, &theta, None, &opts)?;
        let paths = simulate(
            &mut session,
            &sys,
            &fit.params,
            &trajs,
            &fit.initial,
            opts.max_step,
            opts.limits,
        )?;
        let s = score(&paths, &trajs);
        times.push(t0.elapsed().as_secs_f64());
        last = Some((fit, s));
    }
    let (fit, s) = last.expect("at least one fit");
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    Ok(json!({
        "fits": times.len(),
        "median_seconds": median,
        "fits_per_second": 1.0 / median,
        "final_loss": s.mse,
        "r2": s.r2,
        "walks": fit.walks,
        "params": sys.params.iter().zip(&fit.params).map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "initial": fit.initial,
    }))
}
