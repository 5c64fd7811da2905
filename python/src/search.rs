//! `ndvm._search`: `ndvm search` as a function, on columns given as NumPy arrays. The search is
//! the harness's own (`harness::search`), so the same data, settings and seed give the same
//! front as the command; the result is the dict of its `--format json` output. A proposer in
//! Python (`propose(results, front) -> candidates`) takes the place of `--proposer`.

use harness::calibrate::RowKind;
use harness::search::candidate::{Candidate, Origin};
use harness::search::dataset::{Columns, Csv, Data};
use harness::search::engine::{Engine, Stop};
use harness::search::feed::{Answer, Feed, Incoming, NoFeed};
use harness::search::front::Member;
use harness::search::options::Options;
use harness::search::proposer::parse_line;
use harness::search::report::{self, Summary};
use harness::search::select::{EarlyStop, Select};
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// One table (training rows or a test set) as the CSV reader would give it: `label` names it
/// in messages, and a row is named by its index from 0.
fn table(label: &str, names: &[String], columns: Vec<PyReadonlyArray1<'_, f64>>) -> PyResult<Csv> {
    if columns.len() != names.len() {
        return Err(value_error(format!(
            "{label}: {} columns for {} names",
            columns.len(),
            names.len()
        )));
    }
    let rows = columns.first().map_or(0, |c| c.len());
    let mut out = Vec::with_capacity(columns.len());
    for (c, name) in columns.iter().zip(names) {
        if c.len() != rows {
            return Err(value_error(format!(
                "{label}: column `{name}` has {} rows where the first has {rows}",
                c.len()
            )));
        }
        out.push(c.as_array().to_vec());
    }
    Ok(Csv {
        file: format!("{label} row"),
        names: names.to_vec(),
        columns: out,
        lines: (0..rows).collect(),
        split: None,
        words: Vec::new(),
    })
}

/// The proposer in Python: called with the results of its last candidates and the front, it
/// returns new candidates. What it returns is checked as a protocol line is.
struct PyFeed {
    propose: Py<PyAny>,
    inputs: Vec<String>,
    proposer_only: bool,
    stop_on_error: bool,
    interrupt: Arc<AtomicBool>,
    results: Vec<Value>,
    front: Value,
    front_new: bool,
    started: bool,
    ended: Option<String>,
    calls: u64,
    candidates: u64,
    bad: u64,
}

impl PyFeed {
    /// Calls the proposer; its candidates, or the end of it (an exception, a return that is
    /// not a list).
    fn call(&mut self) -> Vec<Incoming> {
        self.calls += 1;
        let results = std::mem::take(&mut self.results);
        let inputs = &self.inputs;
        let got: Result<Vec<Incoming>, String> = Python::attach(|py| {
            let json = py.import("json").map_err(|e| e.to_string())?;
            let loads = |v: Value| json.call_method1("loads", (v.to_string(),));
            let args = (
                loads(Value::Array(results)).map_err(|e| e.to_string())?,
                loads(self.front.clone()).map_err(|e| e.to_string())?,
            );
            let target = self.propose.bind(py);
            let out = if target.hasattr("propose").unwrap_or(false) {
                target.call_method1("propose", args)
            } else {
                target.call1(args)
            };
            let out = out.map_err(|e| traceback(py, &e))?;
            if out.is_none() {
                return Ok(Vec::new());
            }
            let items = out.try_iter().map_err(|_| {
                format!(
                    "the proposer returned {}, not a list of candidates ({{\"src\", \"init\"}} dicts)",
                    out.get_type()
                )
            })?;
            let mut lines = Vec::new();
            for (i, item) in items.enumerate() {
                let item = item.map_err(|e| traceback(py, &e))?;
                let text = json
                    .call_method1("dumps", (&item,))
                    .and_then(|t| t.extract::<String>());
                lines.push(match text {
                    Ok(t) => parse_line(&t, inputs, Origin::Proposer),
                    Err(e) => Incoming::Bad {
                        id: None,
                        src: None,
                        error: format!("candidate {i} of the batch is not JSON: {e}"),
                    },
                });
            }
            Ok(lines)
        });
        match got {
            Ok(lines) => {
                self.candidates += lines.len() as u64;
                self.bad += lines
                    .iter()
                    .filter(|l| matches!(l, Incoming::Bad { .. }))
                    .count() as u64;
                if lines.is_empty() && self.proposer_only {
                    self.ended = Some("it returned no candidates".into());
                }
                lines
            }
            Err(e) => {
                self.ended = Some(format!("raised: {e}"));
                if self.stop_on_error {
                    self.interrupt.store(true, Ordering::Relaxed);
                }
                Vec::new()
            }
        }
    }

    fn status(&self) -> Value {
        json!({
            "calls": self.calls,
            "lines": self.candidates,
            "bad_lines": self.bad,
            "ended": self.ended,
        })
    }
}

/// An exception with its traceback, as Python prints it.
fn traceback(py: Python<'_>, e: &PyErr) -> String {
    let formatted = py.import("traceback").and_then(|tb| {
        tb.call_method1(
            "format_exception",
            (e.get_type(py), e.value(py), e.traceback(py)),
        )
    });
    match formatted.and_then(|l| l.extract::<Vec<String>>()) {
        Ok(lines) => lines.concat().trim_end().to_string(),
        Err(_) => e.to_string(),
    }
}

impl Feed for PyFeed {
    fn take(&mut self, _wait: Option<Instant>) -> Vec<Incoming> {
        if self.ended.is_some() || (self.started && !self.front_new) {
            return Vec::new();
        }
        self.started = true;
        self.front_new = false;
        self.call()
    }

    fn answer(&mut self, a: &Answer) {
        self.results.push(report::answer_json(a));
    }

    fn front(&mut self, front: &[&Member], engine: &Engine) {
        self.front = Value::Array(
            front
                .iter()
                .map(|m| report::member_json(engine, m))
                .collect(),
        );
        self.front_new = true;
    }

    fn alive(&self) -> bool {
        self.ended.is_none()
    }

    fn every_generation(&self) -> bool {
        true
    }
}

/// The seed programs: `{"src", "init"}` dicts, checked as protocol lines.
pub(crate) fn seeds(
    py: Python<'_>,
    programs: &Bound<'_, PyAny>,
    inputs: &[String],
) -> PyResult<Vec<Candidate>> {
    if programs.is_none() {
        return Ok(Vec::new());
    }
    let json = py.import("json")?;
    let mut out = Vec::new();
    for (i, p) in programs.try_iter()?.enumerate() {
        let text: String = json.call_method1("dumps", (p?,))?.extract()?;
        match parse_line(&text, inputs, Origin::Seed) {
            Incoming::Program(c) => out.push(c),
            Incoming::Bad { error, .. } => {
                return Err(value_error(format!("seed_programs[{i}]: {error}")))
            }
        }
    }
    Ok(out)
}

/// The data and settings of a search: `columns` are the training inputs then the target,
/// named by `names`; `tests` are `(name, columns)` with the same names; `settings` are `--set`
/// assignments (`NAME=JSON`), checked.
pub(crate) fn inputs(
    names: Vec<String>,
    columns: Vec<PyReadonlyArray1<'_, f64>>,
    tests: Vec<(String, Vec<PyReadonlyArray1<'_, f64>>)>,
    settings: &[String],
) -> PyResult<(Data, Options)> {
    let Some((target, inputs)) = names.split_last() else {
        return Err(value_error("no columns"));
    };
    let train = table("X", &names, columns)?;
    let mut named = Vec::new();
    for (name, cols) in tests {
        named.push((name.clone(), table(&name, &names, cols)?));
    }
    let cols = Columns {
        target: target.clone(),
        inputs: Some(inputs.to_vec()),
        weights: None,
    };
    let data = Data::from_csv(&train, &named, &cols).map_err(value_error)?;
    let mut options = Options::default();
    for s in settings {
        options.set(s).map_err(value_error)?;
    }
    options.check().map_err(value_error)?;
    Ok((data, options))
}

/// The end of a search: the front pruned and refitted on every row (until `until`, or the
/// interrupt), scored, with the summary, as the dict of `--format json`.
pub(crate) fn finish(
    py: Python<'_>,
    engine: &mut Engine,
    stopped: &str,
    until: Option<Instant>,
    interrupt: &AtomicBool,
    proposer: Option<Value>,
    select: Select,
) -> Value {
    py.detach(|| engine.polish(until, interrupt));
    let front: Vec<Member> = engine.hall.front().into_iter().cloned().collect();
    let mut rows = report::rows(engine, &front);
    let selected = report::choose(&mut rows, select);
    let summary = Summary::of(engine, stopped, proposer);
    json!({ "summary": summary, "front": rows, "selected": selected })
}

/// The training rows' weights, checked: one per row, finite, at least 0, not all 0.
fn sample_weight(w: Vec<f64>, rows: usize) -> PyResult<numpy::ndarray::Array1<f64>> {
    if w.len() != rows {
        return Err(value_error(format!(
            "sample_weight has {} values for {rows} rows",
            w.len()
        )));
    }
    if let Some(i) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(value_error(format!(
            "sample_weight[{i}] is {}: a weight must be a finite number of 0 or more",
            w[i]
        )));
    }
    if !w.iter().sum::<f64>().is_finite() {
        return Err(value_error(
            "sample_weight adds up to more than a number can hold; scale it down",
        ));
    }
    if w.iter().sum::<f64>() <= 0.0 {
        return Err(value_error(
            "sample_weight is zero on every row: there is nothing to fit",
        ));
    }
    Ok(numpy::ndarray::Array1::from(w))
}

/// `select` as `--select` reads it.
pub(crate) fn select_of(select: &str) -> PyResult<Select> {
    Select::parse(select).ok_or_else(|| {
        value_error(format!(
            "select={select:?}: expected 'best', 'accuracy' or 'score'"
        ))
    })
}

/// Runs a search, like `ndvm search --format json`.
///
/// `columns` are the training inputs then the target, named by `names`; `tests` are
/// `(name, columns)` with the same names. `settings` are `--set` assignments (`NAME=JSON`).
#[pyfunction]
#[pyo3(signature = (names, columns, tests, *, settings, budget = None, max_evals = None,
    threads = None, proposer = None, proposer_only = false, stop_on_proposer_error = false,
    seed_programs = None, progress = None, select = "best", early_stop = None, weights = None,
    loss = "l2", complexity_of = None, constraints = None, nested = None))]
#[allow(clippy::too_many_arguments)]
pub fn _search<'py>(
    py: Python<'py>,
    names: Vec<String>,
    columns: Vec<PyReadonlyArray1<'py, f64>>,
    tests: Vec<(String, Vec<PyReadonlyArray1<'py, f64>>)>,
    settings: Vec<String>,
    budget: Option<f64>,
    max_evals: Option<u64>,
    threads: Option<usize>,
    proposer: Option<Py<PyAny>>,
    proposer_only: bool,
    stop_on_proposer_error: bool,
    seed_programs: Option<Bound<'py, PyAny>>,
    progress: Option<Py<PyAny>>,
    select: &str,
    early_stop: Option<&str>,
    weights: Option<PyReadonlyArray1<'py, f64>>,
    loss: &str,
    complexity_of: Option<&str>,
    constraints: Option<&str>,
    nested: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let select = select_of(select)?;
    let program_loss = loss.trim_start().starts_with('(');
    let kind = if program_loss {
        RowKind::L2
    } else {
        RowKind::parse(loss).map_err(|e| value_error(e.replace("--loss ", "loss=")))?
    };
    let early_stop = early_stop
        .map(EarlyStop::parse)
        .transpose()
        .map_err(|e| value_error(e.replace("--early-stop", "early_stop=")))?;
    if budget.is_some_and(|b| !(b.is_finite() && b > 0.0 && b <= 1e9)) {
        return Err(value_error("budget must be a number of seconds above 0"));
    }
    if threads.is_some_and(|t| t == 0 || t > 1024) {
        return Err(value_error("threads must be 1 to 1024"));
    }
    if proposer_only && proposer.is_none() {
        return Err(value_error("proposer_only needs a proposer"));
    }
    let (mut data, mut options) = inputs(names, columns, tests, &settings)?;
    options.loss = kind;
    if program_loss {
        options.loss_program = Some(loss.to_string());
    }
    let keyword = |e: String, flag: &str, name: &str| value_error(e.replace(flag, name));
    if let Some(t) = complexity_of {
        (options.constraints.parse_costs(t))
            .map_err(|e| keyword(e, "--complexity-of", "complexity_of"))?;
    }
    if let Some(t) = constraints {
        (options.constraints.parse_args(t))
            .map_err(|e| keyword(e, "--constraints", "constraints"))?;
    }
    if let Some(t) = nested {
        (options.constraints.parse_nested(t)).map_err(|e| keyword(e, "--nested", "nested"))?;
    }
    if let Some(w) = weights {
        let w = sample_weight(w.as_array().to_vec(), data.train.rows())?;
        let positive: Vec<f64> = (0..w.len())
            .filter(|&r| w[r] > 0.0)
            .map(|r| data.train.y[r])
            .collect();
        if positive.len() < 2 || harness::search::dataset::variance(&positive) <= 0.0 {
            return Err(value_error(
                "the rows of positive sample_weight need at least 2 rows and a y that varies",
            ));
        }
        data.train.w = Some(w);
    }
    let seeds = match &seed_programs {
        Some(p) => seeds(py, p, &data.inputs)?,
        None => Vec::new(),
    };
    let threads = threads.unwrap_or_else(harness::schedule::cores).max(1);
    let mut engine = Engine::new(options, data, threads, seeds).map_err(value_error)?;
    engine.early_stop = early_stop;
    let budget = match (budget, max_evals) {
        (Some(b), _) => Some(b),
        (None, None) => Some(60.0),
        (None, Some(_)) => None,
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut feed = proposer.map(|propose| PyFeed {
        propose,
        inputs: engine.data.inputs.clone(),
        proposer_only,
        stop_on_error: stop_on_proposer_error,
        interrupt: Arc::clone(&interrupt),
        results: Vec::new(),
        front: Value::Array(Vec::new()),
        front_new: false,
        started: false,
        ended: None,
        calls: 0,
        candidates: 0,
        bad: 0,
    });
    let mut keyboard = false;
    let mut progress_error: Option<String> = None;
    let started = Instant::now();
    let stop = Stop {
        max_evals,
        deadline: budget.map(|b| started + Duration::from_secs_f64(b * 0.95)),
        interrupt: Arc::clone(&interrupt),
        proposer_only,
    };
    py.detach(|| {
        let f: &mut dyn Feed = match feed.as_mut() {
            Some(f) => f,
            None => &mut NoFeed,
        };
        engine.run(f, &stop, &mut |e: &Engine| {
            // Each generation: Python's signals (Ctrl-C stops the search and keeps its
            // front), and the progress callback.
            Python::attach(|py| {
                if py.check_signals().is_err() {
                    interrupt.store(true, Ordering::Relaxed);
                    keyboard = true;
                    return;
                }
                if let Some(cb) = &progress {
                    let d = PyDict::new(py);
                    let _ = d.set_item("evaluations", e.counters.evaluations);
                    let _ = d.set_item("seconds", e.seconds());
                    let _ = d.set_item("budget", budget);
                    let _ = d.set_item("best_loss", e.hall.best_loss());
                    let _ = d.set_item("front", e.hall.front().len());
                    if let Err(err) = cb.bind(py).call1((d,)) {
                        // A progress bar that fails does not stop the search.
                        progress_error.get_or_insert_with(|| traceback(py, &err));
                    }
                }
            });
        });
    });
    let stopped = engine.stop_reason(&stop);
    let until = budget.map(|b| started + Duration::from_secs_f64(b));
    let proposer_status = feed.as_ref().map(PyFeed::status);
    let mut out = finish(
        py,
        &mut engine,
        stopped,
        until,
        &interrupt,
        proposer_status,
        select,
    );
    let warn = |message: String| {
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(
            py,
            &category,
            &std::ffi::CString::new(message).unwrap_or_default(),
            1,
        )
    };
    if let Some(e) = feed.as_ref().and_then(|f| f.ended.as_ref()) {
        if let Some(tb) = e.strip_prefix("raised: ") {
            let then = if stop_on_proposer_error || proposer_only {
                "the search stopped"
            } else {
                "the search went on with the built-in proposer"
            };
            warn(format!("the proposer raised an exception; {then}:\n{tb}"))?;
        }
    }
    if let Some(tb) = progress_error {
        warn(format!(
            "the progress callback failed (the search went on):\n{tb}"
        ))?;
    }
    out["interrupted"] = json!(keyboard);
    py.import("json")?.call_method1("loads", (out.to_string(),))
}
