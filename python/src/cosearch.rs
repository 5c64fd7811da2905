//! `ndvm.cosearch`: `ndvm cosearch` as a function. A stream of candidate programs (a JSONL file,
//! or a list of dicts `{"src", "params", "skeleton"}`) is replayed through calibration with the
//! paper's protocol across worker threads, by the harness's library (`harness::cosearch`).

use crate::program::Precision;
use harness::calibrate::adam::AdamSettings;
use harness::cosearch::record::{agreement, read_records, summarise, FitRecord};
use harness::cosearch::stream::{read_stream, Candidate, Inits, Task};
use harness::cosearch::{fit_number, prepare, Prepared, Protocol};
use harness::schedule::{self, Stop};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use runtime_cpu::{DecodeOptions, Limits, Real, Session};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn existing(path: &Path, what: &str) -> PyResult<()> {
    if path.exists() {
        Ok(())
    } else {
        Err(PyFileNotFoundError::new_err(format!(
            "{what}: no such file: {}",
            path.display()
        )))
    }
}

fn candidates(stream: &Bound<'_, PyAny>) -> PyResult<Vec<Result<Candidate, String>>> {
    if stream.is_instance_of::<PyString>() || stream.hasattr("__fspath__")? {
        let path: PathBuf = stream.extract()?;
        existing(&path, "stream")?;
        return read_stream(&path).map_err(|e| PyValueError::new_err(format!("{e:#}")));
    }
    let mut out = Vec::new();
    for (i, item) in stream.try_iter()?.enumerate() {
        let item = item?;
        let field = |k: &str| item.get_item(k).ok();
        let src = field("src").and_then(|v| v.extract::<String>().ok());
        let params = field("params").and_then(|v| v.extract::<Vec<String>>().ok());
        let skeleton = field("skeleton")
            .and_then(|v| v.extract::<String>().ok())
            .unwrap_or_default();
        out.push(match (src, params) {
            (Some(src), Some(params)) => Ok(Candidate {
                src,
                params,
                skeleton,
            }),
            _ => Err(format!(
                "entry {i}: malformed candidate: needs \"src\" (text) and \"params\" (names)"
            )),
        });
    }
    if out.is_empty() {
        return Err(PyValueError::new_err("stream: no candidates"));
    }
    Ok(out)
}

/// The fits in order with their completion times (seconds from the start), and the run's time.
fn replay<R: Real>(
    prepared: &[Prepared],
    task: &Task,
    inits: &Inits,
    protocol: &Protocol,
    threads: usize,
    stop: Stop,
    start: Instant,
) -> (Vec<FitRecord>, Vec<f64>, f64) {
    let times = Mutex::new(Vec::new());
    let records = schedule::run(
        threads,
        stop,
        Session::<R>::new,
        |session, n| fit_number(session, prepared, task, inits, protocol, n),
        |n, _: &FitRecord| {
            let t = start.elapsed().as_secs_f64();
            times.lock().unwrap_or_else(|p| p.into_inner()).push((n, t));
        },
    );
    let seconds = start.elapsed().as_secs_f64();
    let mut finished_at = vec![0.0; records.len()];
    for (n, t) in times.into_inner().unwrap_or_else(|p| p.into_inner()) {
        if n < finished_at.len() {
            finished_at[n] = t;
        }
    }
    (records, finished_at, seconds)
}

/// Replays a candidate stream through calibration, like `ndvm cosearch`.
#[pyfunction]
#[pyo3(signature = (stream, data, *, inits = None, budget = None, max_fits = None, steps = 50,
    lr = 0.05, threads = None, reference = None, precision = "f64", protected_ops = false,
    max_steps = 2_000_000))]
#[allow(clippy::too_many_arguments)]
pub fn cosearch<'py>(
    py: Python<'py>,
    stream: &Bound<'py, PyAny>,
    data: PathBuf,
    inits: Option<PathBuf>,
    budget: Option<f64>,
    max_fits: Option<usize>,
    steps: usize,
    lr: f64,
    threads: Option<usize>,
    reference: Option<PathBuf>,
    precision: &str,
    protected_ops: bool,
    max_steps: u64,
) -> PyResult<Bound<'py, PyAny>> {
    if budget.is_none() && max_fits.is_none() {
        return Err(PyValueError::new_err(
            "give budget=SECONDS, max_fits=N, or both",
        ));
    }
    if budget.is_some_and(|b| !(b.is_finite() && b >= 0.0)) {
        return Err(PyValueError::new_err(
            "budget must be a number of seconds >= 0",
        ));
    }
    let precision = Precision::parse(precision)?;
    let stream = candidates(stream)?;
    existing(&data, "data")?;
    let task = Task::read(&data).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    let inits = match &inits {
        Some(p) => {
            existing(p, "inits")?;
            Inits::read(p).map_err(|e| PyValueError::new_err(format!("{e:#}")))?
        }
        None => Inits::default(),
    };
    let reference = match &reference {
        Some(p) => {
            existing(p, "reference")?;
            let text = std::fs::read_to_string(p)?;
            Some(read_records(&text).map_err(|e| PyValueError::new_err(format!("{e:#}")))?)
        }
        None => None,
    };
    let prepared = prepare(stream, &task, DecodeOptions { protected_ops });
    let skeletons: Vec<String> = prepared
        .iter()
        .map(|p| {
            p.candidate.as_ref().map_or(String::new(), |c| {
                if c.skeleton.is_empty() {
                    c.src.clone()
                } else {
                    c.skeleton.clone()
                }
            })
        })
        .collect();
    let protocol = Protocol {
        steps,
        adam: AdamSettings {
            lr,
            ..Default::default()
        },
        limits: Limits {
            max_steps,
            ..Limits::default()
        },
    };
    let threads = threads.unwrap_or_else(schedule::cores).max(1);
    let (records, finished_at, seconds) = py.detach(|| {
        let start = Instant::now();
        let stop = Stop {
            max_jobs: max_fits,
            deadline: budget.map(|b| start + Duration::from_secs_f64(b)),
            flag: None,
        };
        match precision {
            Precision::F64 => {
                replay::<f64>(&prepared, &task, &inits, &protocol, threads, stop, start)
            }
            Precision::F32 => {
                replay::<f32>(&prepared, &task, &inits, &protocol, threads, stop, start)
            }
        }
    });
    let summary = summarise(&records, &finished_at, &skeletons, seconds, threads);
    let agree = reference.as_ref().map(|r| agreement(&records, r));
    let out = serde_json::json!({
        "summary": summary,
        "agreement": agree,
        "fits": records,
        "finished_at": finished_at,
    });
    py.import("json")?.call_method1("loads", (out.to_string(),))
}
