//! `ndvm.calibrate`: `ndvm calibrate` as a function. The arguments mirror the command's flags
//! and the result is the dict of its `--format json` output; both go through the harness's
//! library (`harness::calibrate`), so the same arguments give the same fit.

use crate::convert;
use crate::program::{check_device, Precision, Program};
use harness::calibrate::adam::AdamSettings;
use harness::calibrate::lbfgs::LbfgsSettings;
use harness::calibrate::lm::LmSettings;
use harness::calibrate::report::{calibrate as run_calibration, starts};
use harness::calibrate::table::Table;
use harness::calibrate::{Loss, Optimizer, Problem, Settings};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use runtime_cpu::{Bindings, Limits};
use runtime_gpu::DeviceChoice;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// A box constraint: lower and upper bound, `None` for an open side.
type Bounds = (Option<f64>, Option<f64>);

fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// The data table: a CSV file (header of column names, optional `split` column), or a mapping
/// of column names to 1-D arrays (optional `split`: "train"/"holdout" strings or booleans,
/// True for held out).
fn table(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Table> {
    if data.is_instance_of::<PyString>() || data.hasattr("__fspath__")? {
        let path: PathBuf = data.extract()?;
        if !path.exists() {
            return Err(PyFileNotFoundError::new_err(format!(
                "data: no such file: {}",
                path.display()
            )));
        }
        return Table::read(&path).map_err(|e| value_error(format!("data: {e:#}")));
    }
    let mut t = Table::default();
    let mut split = None;
    for item in data.call_method0("items")?.try_iter()? {
        let (name, col): (String, Bound<'_, PyAny>) = item?.extract()?;
        if name == "split" {
            let marks: Vec<Bound<'_, PyAny>> = col.try_iter()?.collect::<PyResult<_>>()?;
            let held = marks
                .iter()
                .map(|m| {
                    if let Ok(b) = m.extract::<bool>() {
                        return Ok(b);
                    }
                    match m.extract::<String>()?.as_str() {
                        "train" | "" => Ok(false),
                        "holdout" | "test" | "heldout" | "held-out" => Ok(true),
                        other => Err(value_error(format!(
                            "data: split must be train or holdout, not `{other}`"
                        ))),
                    }
                })
                .collect::<PyResult<Vec<bool>>>()?;
            split = Some(held);
            continue;
        }
        t.columns.push(convert::column(py, &name, &col)?);
        t.names.push(name);
    }
    let rows = t.columns.first().map_or(0, Vec::len);
    if rows == 0 || t.columns.iter().any(|c| c.len() != rows) {
        return Err(value_error(
            "data: the columns must be non-empty and of one length",
        ));
    }
    t.holdout = split.unwrap_or_else(|| vec![false; rows]);
    if t.holdout.len() != rows {
        return Err(value_error("data: `split` must have one entry per row"));
    }
    Ok(t)
}

/// Fits a program's parameters to data (or to minimise its own value), like `ndvm calibrate`.
#[pyfunction]
#[pyo3(signature = (model, *, data = None, target = None, params = None, init = None, bind = None,
    optimizer = "adam", steps = 100, lr = 0.05, restarts = 1, clamp = None, seed = 0,
    precision = None, protected_ops = None, max_steps = None, device = None, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    data: Option<&Bound<'py, PyAny>>,
    target: Option<String>,
    params: Option<Vec<String>>,
    init: Option<BTreeMap<String, f64>>,
    bind: Option<&Bound<'py, PyAny>>,
    optimizer: &str,
    steps: usize,
    lr: f64,
    restarts: usize,
    clamp: Option<BTreeMap<String, Bounds>>,
    seed: u64,
    precision: Option<&str>,
    protected_ops: Option<bool>,
    max_steps: Option<u64>,
    device: Option<&str>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let (program, default_precision, default_steps, default_device) = match model.cast::<Program>()
    {
        Ok(p) => {
            let p = p.get();
            let program = match protected_ops {
                Some(flag) if flag != p.protected_ops => {
                    Program::parse(py, p.program.source(), flag)?
                }
                _ => p.program.clone(),
            };
            (program, p.precision, p.limits.max_steps, p.device)
        }
        Err(_) => {
            let src: String = model
                .extract()
                .map_err(|_| value_error("model must be an ndvm.Program or source text"))?;
            let program = Program::parse(py, &src, protected_ops.unwrap_or(false))?;
            (
                program,
                Precision::F64,
                Limits::default().max_steps,
                DeviceChoice::Cpu,
            )
        }
    };
    let precision = precision.map_or(Ok(default_precision), Precision::parse)?;
    let device = device.map_or(Ok(default_device), check_device)?;
    let inputs: Vec<String> = program.inputs().map(str::to_string).collect();
    let mut fixed = Bindings::new();
    if let Some(b) = bind {
        for item in b.call_method0("items")?.try_iter()? {
            let (name, value): (String, Bound<'py, PyAny>) = item?.extract()?;
            fixed = convert::bind_uniform(py, fixed, &name, &value)?;
        }
    }
    let table = data.map(|d| table(py, d)).transpose()?;
    let train = table.as_ref().map(|t| t.rows(false));
    let hold = table
        .as_ref()
        .filter(|t| t.has_holdout())
        .map(|t| t.rows(true));
    let data_cols = |t: &Table| -> Vec<(String, Vec<f64>)> {
        t.names
            .iter()
            .zip(&t.columns)
            .filter(|(n, _)| inputs.contains(n) && Some(n.as_str()) != target.as_deref())
            .map(|(n, c)| (n.clone(), c.clone()))
            .collect()
    };
    let loss_on = |t: Option<&Table>| -> PyResult<Loss> {
        match (&target, t) {
            (Some(name), Some(t)) => t
                .column(name)
                .map(|c| Loss::Mse(c.to_vec()))
                .ok_or_else(|| value_error(format!("target: the data has no column `{name}`"))),
            (Some(_), None) => Err(value_error("target needs data")),
            (None, _) => Ok(Loss::Value),
        }
    };
    let bound: Vec<String> = fixed.iter().map(|(n, _)| n.to_string()).collect();
    let data = train.as_ref().map(data_cols).unwrap_or_default();
    let params: Vec<String> = match params {
        Some(p) if !p.is_empty() => p,
        _ => inputs
            .iter()
            .filter(|n| !bound.contains(n) && !data.iter().any(|(d, _)| d == *n))
            .cloned()
            .collect(),
    };
    if params.is_empty() {
        return Err(value_error(
            "no parameters to fit (name them with params=[...])",
        ));
    }
    for p in &params {
        if !inputs.contains(p) {
            return Err(value_error(format!(
                "params: `{p}` is not an input of the model (its inputs: {})",
                inputs.join(", ")
            )));
        }
    }
    let position = |k: &str, what: &str| {
        params
            .iter()
            .position(|p| p == k)
            .ok_or_else(|| value_error(format!("{what}: `{k}` is not a parameter")))
    };
    let mut init_values = vec![0.5; params.len()];
    for (k, v) in init.unwrap_or_default() {
        init_values[position(&k, "init")?] = v;
    }
    let mut clamps = vec![None; params.len()];
    for (k, (lo, hi)) in clamp.unwrap_or_default() {
        let (lo, hi) = (lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY));
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(value_error(format!(
                "clamp: `{k}` = ({lo}, {hi}): the bounds must be numbers with low <= high"
            )));
        }
        clamps[position(&k, "clamp")?] = Some((lo, hi));
    }
    let problem = Problem {
        program,
        fixed,
        data,
        params: params.clone(),
        loss: loss_on(train.as_ref())?,
    };
    let held = match &hold {
        Some(h) => Some(Problem {
            data: data_cols(h),
            loss: loss_on(Some(h))?,
            ..problem.clone()
        }),
        None => None,
    };
    let settings = Settings {
        optimizer: match optimizer {
            "adam" => Optimizer::Adam(AdamSettings {
                lr,
                ..Default::default()
            }),
            "lbfgs" => Optimizer::Lbfgs(LbfgsSettings::default()),
            "lm" if problem.loss == Loss::Value => {
                return Err(value_error(
                    "optimizer \"lm\" fits a least-squares loss: give target=".to_string(),
                ))
            }
            "lm" => Optimizer::Lm(LmSettings::default()),
            other => {
                return Err(value_error(format!(
                    "optimizer must be \"adam\", \"lbfgs\" or \"lm\", not {other:?}"
                )))
            }
        },
        steps,
        clamps,
        limits: Limits {
            max_steps: max_steps.unwrap_or(default_steps),
            ..Limits::default()
        },
        final_loss: true,
        lane_block: harness::device::lane_block(device, precision == Precision::F32),
    };
    let starts = starts(&init_values, restarts, seed);
    let threads = threads.unwrap_or_else(harness::schedule::cores).max(1);
    let (report, seconds) = py.detach(|| {
        let t = Instant::now();
        let r = match precision {
            Precision::F64 => {
                run_calibration::<f64>(&problem, held.as_ref(), &starts, &settings, device, threads)
            }
            Precision::F32 => {
                run_calibration::<f32>(&problem, held.as_ref(), &starts, &settings, device, threads)
            }
        };
        (r, t.elapsed().as_secs_f64())
    });
    let report = report.map_err(value_error)?;
    let out = report.to_json(&params, seconds);
    py.import("json")?.call_method1("loads", (out.to_string(),))
}
