//! `ndvm._ode_search` and `ndvm._ode_simulate`: ODE discovery (`ndvm search --time`) on
//! trajectories given as NumPy arrays, and a fitted system integrated from a state. Both are
//! the harness's own (`harness::ode`), so the same data and settings give the same front as the
//! command; the search's result is the dict of its `--format json` output.

use crate::search::value_error;
use harness::ode::data::{self, Columns, OdeData, Trajectory};
use harness::ode::discover::{self, Run, Settings};
use harness::ode::grid::median_gap;
use harness::ode::program::System;
use harness::ode::report;
use harness::ode::shoot::FitOptions;
use harness::search::options::{Iterate, Options};
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use serde_json::json;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A trajectory from Python: its name, times, states (rows by states) and inputs.
type PyTrajectory<'py> = (
    String,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray2<'py, f64>,
    Option<PyReadonlyArray2<'py, f64>>,
);

fn trajectory(t: PyTrajectory<'_>) -> Trajectory {
    let (name, times, x, u) = t;
    let cols = |a: &PyReadonlyArray2<'_, f64>| -> Vec<Vec<f64>> {
        let v = a.as_array();
        (0..v.ncols()).map(|j| v.column(j).to_vec()).collect()
    };
    Trajectory {
        name,
        t: times.as_array().to_vec(),
        x: cols(&x),
        u: u.as_ref().map(cols).unwrap_or_default(),
    }
}

/// ODE discovery on `train` (and scores on `tests`), as `ndvm search --time ... --format json`.
#[pyfunction]
#[pyo3(signature = (time, states, inputs, train, tests, *, settings, budget = None,
    max_evals = None, threads = None, autonomous = false, segment = 8, max_step = None,
    fixed_initial = false, select = "best"))]
#[allow(clippy::too_many_arguments)]
pub fn _ode_search<'py>(
    py: Python<'py>,
    time: String,
    states: Vec<String>,
    inputs: Vec<String>,
    train: Vec<PyTrajectory<'py>>,
    tests: Vec<(String, Vec<PyTrajectory<'py>>)>,
    settings: Vec<String>,
    budget: Option<f64>,
    max_evals: Option<u64>,
    threads: Option<usize>,
    autonomous: bool,
    segment: usize,
    max_step: Option<f64>,
    fixed_initial: bool,
    select: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let select = crate::search::select_of(select)?;
    if budget.is_some_and(|b| !(b.is_finite() && b > 0.0 && b <= 1e9)) {
        return Err(value_error("budget must be a number of seconds above 0"));
    }
    if threads.is_some_and(|t| t == 0 || t > 1024) {
        return Err(value_error("threads must be 1 to 1024"));
    }
    if segment < 2 {
        return Err(value_error("segment must be at least 2 observations"));
    }
    if max_step.is_some_and(|h| !(h.is_finite() && h > 0.0)) {
        return Err(value_error("max_step must be a number above 0"));
    }
    let columns = Columns {
        time,
        states,
        trajectory: None,
        inputs,
    };
    columns.check("X").map_err(value_error)?;
    let train: Vec<Trajectory> = train.into_iter().map(trajectory).collect();
    data::check(&train, "X", &columns).map_err(value_error)?;
    let mut sets = Vec::new();
    for (name, trajs) in tests {
        let trajs: Vec<Trajectory> = trajs.into_iter().map(trajectory).collect();
        data::check(&trajs, &format!("test set `{name}`"), &columns).map_err(value_error)?;
        sets.push((name, trajs));
    }
    let data = OdeData {
        columns,
        train,
        tests: sets,
    };
    let mut search = Options::default();
    for s in &settings {
        search.set(s).map_err(value_error)?;
    }
    search.check().map_err(value_error)?;
    search.iterate = Iterate::Off;
    search.share = false;
    let threads = threads.unwrap_or_else(harness::schedule::cores).max(1);
    let d = data.columns.states.len() as u64;
    let fit = FitOptions {
        segment,
        max_step: max_step.unwrap_or(f64::INFINITY),
        fit_initial: !fixed_initial,
        limits: search.fit.limits(),
        ..FitOptions::default()
    };
    let settings = Settings {
        seeds: Vec::new(),
        search,
        fit,
        autonomous,
        threads,
        max_evals: max_evals.map(|n| n.div_ceil(d)),
        max_systems: Settings::caps(max_evals).0,
        rounds: Settings::caps(max_evals).1,
        generations: Settings::caps(max_evals).2,
        proposer_only: false,
    };
    let budget = match (budget, max_evals) {
        (Some(b), _) => Some(b),
        (None, None) => Some(60.0),
        (None, Some(_)) => None,
    };
    let started = Instant::now();
    let deadline = budget.map(|b| started + Duration::from_secs_f64(b * 0.9));
    let interrupt = Arc::new(AtomicBool::new(false));
    let outcome = py
        .detach(|| {
            discover::discover(
                &data,
                &settings,
                Run {
                    deadline,
                    interrupt: &interrupt,
                    cancel: None,
                    feed: None,
                    resume: None,
                    save: &mut |_| {},
                    progress: &|_| {},
                },
            )
        })
        .map_err(value_error)?;
    let mut rows = py.detach(|| report::rows(&data, &outcome, settings.fit.limits));
    let selected = report::choose(&mut rows, select);
    let stopped = if budget.is_some() {
        "budget"
    } else {
        "max-evals"
    };
    let summary = report::summary_json(
        &data,
        &outcome,
        &settings,
        started.elapsed().as_secs_f64(),
        stopped,
        None,
    );
    let front: Vec<_> = rows.iter().map(|r| report::member_json(&data, r)).collect();
    let out = json!({"summary": summary, "front": front, "selected": selected});
    py.import("json")?.call_method1("loads", (out.to_string(),))
}

/// The system `rhs` (one program text per state) with constants `params` integrated from `x0`
/// across the times `t` (inputs `u`, rows by inputs, linear between samples): the states at
/// every time, rows by states.
#[pyfunction]
#[pyo3(signature = (time, states, inputs, rhs, params, x0, t, u = None, max_step = None))]
#[allow(clippy::too_many_arguments)]
pub fn _ode_simulate<'py>(
    py: Python<'py>,
    time: String,
    states: Vec<String>,
    inputs: Vec<String>,
    rhs: Vec<String>,
    params: Vec<(String, f64)>,
    x0: Vec<f64>,
    t: PyReadonlyArray1<'py, f64>,
    u: Option<PyReadonlyArray2<'py, f64>>,
    max_step: Option<f64>,
) -> PyResult<Vec<Vec<f64>>> {
    if rhs.len() != states.len() || x0.len() != states.len() {
        return Err(value_error(format!(
            "{} states, {} right-hand sides and {} initial values",
            states.len(),
            rhs.len(),
            x0.len()
        )));
    }
    let columns = Columns {
        time: time.clone(),
        states: states.clone(),
        trajectory: None,
        inputs: inputs.clone(),
    };
    let n = t.len();
    let tr = Trajectory {
        name: "0".into(),
        t: t.as_array().to_vec(),
        x: vec![vec![0.0; n]; states.len()],
        u: u.map(|u| {
            let v = u.as_array();
            (0..v.ncols()).map(|j| v.column(j).to_vec()).collect()
        })
        .unwrap_or_default(),
    };
    data::check(std::slice::from_ref(&tr), "t", &columns).map_err(value_error)?;
    let sys = System {
        states,
        inputs,
        time,
        rhs,
        params: params.iter().map(|p| p.0.clone()).collect(),
    };
    let values: Vec<f64> = params.iter().map(|p| p.1).collect();
    let step = max_step.unwrap_or_else(|| median_gap(std::slice::from_ref(&tr)));
    let paths = py
        .detach(|| {
            harness::ode::simulate::simulate(
                &mut runtime_cpu::Session::new(),
                &sys,
                &values,
                std::slice::from_ref(&tr),
                &[x0],
                step,
                Options::default().fit.limits(),
            )
        })
        .map_err(value_error)?;
    let path = &paths[0];
    Ok((0..n)
        .map(|k| path.iter().map(|c| c[k]).collect())
        .collect())
}
