//! A search's islands run apart (`ndvm.ray.search`): `_Island` is one island, run an epoch
//! (the generations between two migrations) at a time wherever its process is, and `_Islands`
//! is the driver's view of all of them: their states, the migrations between them, and the
//! end of the search. The islands are the engine's own ([`Engine::island`]), so with the same
//! seed, settings and `max_evals` the front is the one `ndvm.search` finds in one process.

use crate::search::{finish, inputs, seeds, value_error};
use harness::search::engine::{Engine, Stop};
use harness::search::shard::{Arrival, ShardState};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn json_error(what: &str, e: serde_json::Error) -> PyErr {
    value_error(format!("{what}: {e}"))
}

/// A deadline `remaining` seconds from now.
fn deadline(remaining: Option<f64>) -> PyResult<Option<Instant>> {
    match remaining {
        Some(r) if !r.is_finite() => Err(value_error("remaining must be a finite number")),
        Some(r) => Ok(Some(
            Instant::now() + Duration::from_secs_f64(r.clamp(0.0, 1e9)),
        )),
        None => Ok(None),
    }
}

/// One island of a search, alone: `epoch(arrivals)` takes in a migration's arrivals and runs
/// generations until the next migration is due, and returns what it did, its state for the
/// driver and its checkpoint (to start it again from, on another worker).
#[pyclass(module = "ndvm._ndvm", name = "_Island")]
pub struct Island {
    engine: Engine,
}

#[pymethods]
impl Island {
    #[new]
    #[pyo3(signature = (names, columns, tests, *, settings, island, threads = 1,
        seed_programs = None, checkpoint = None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        names: Vec<String>,
        columns: Vec<PyReadonlyArray1<'py, f64>>,
        tests: Vec<(String, Vec<PyReadonlyArray1<'py, f64>>)>,
        settings: Vec<String>,
        island: usize,
        threads: usize,
        seed_programs: Option<Bound<'py, PyAny>>,
        checkpoint: Option<&str>,
    ) -> PyResult<Island> {
        if threads == 0 || threads > 1024 {
            return Err(value_error("threads must be 1 to 1024"));
        }
        let (data, options) = inputs(names, columns, tests, &settings)?;
        let seeds = match &seed_programs {
            Some(p) => seeds(py, p, &data.inputs)?,
            None => Vec::new(),
        };
        let mut engine =
            Engine::island(options, data, threads, seeds, island).map_err(value_error)?;
        if let Some(text) = checkpoint {
            let state: ShardState =
                serde_json::from_str(text).map_err(|e| json_error("checkpoint", e))?;
            if state.index != island {
                return Err(value_error(format!(
                    "the checkpoint is of island {}, not {island}",
                    state.index
                )));
            }
            engine.load_states(vec![state]).map_err(value_error)?;
        }
        Ok(Island { engine })
    }

    /// Takes in `arrivals` (JSON, as `_Islands.migrate` gives them), then runs generations
    /// until the next migration, the island's share of `max_evals`, or `remaining` seconds;
    /// returns `(report, state, checkpoint)` as JSON.
    #[pyo3(signature = (arrivals, *, remaining = None, max_evals = None))]
    fn epoch(
        &mut self,
        py: Python<'_>,
        arrivals: &str,
        remaining: Option<f64>,
        max_evals: Option<u64>,
    ) -> PyResult<(String, String, String)> {
        let arrivals: Vec<Arrival> =
            serde_json::from_str(arrivals).map_err(|e| json_error("arrivals", e))?;
        let stop = Stop {
            max_evals,
            deadline: deadline(remaining)?,
            interrupt: Arc::new(AtomicBool::new(false)),
            proposer_only: false,
        };
        let engine = &mut self.engine;
        let report = py.detach(|| engine.epoch(arrivals, &stop));
        let shard = &self.engine.shards[0];
        let json = |v: serde_json::Result<String>| v.map_err(|e| json_error("state", e));
        Ok((
            json(serde_json::to_string(&report))?,
            json(serde_json::to_string(&shard.state(false)))?,
            json(serde_json::to_string(&shard.state(true)))?,
        ))
    }
}

/// The driver's view of a search's islands: their states as the islands last sent them, the
/// migrations, the front, and the end of the search.
#[pyclass(module = "ndvm._ndvm", name = "_Islands")]
pub struct Islands {
    engine: Engine,
}

#[pymethods]
impl Islands {
    #[new]
    #[pyo3(signature = (names, columns, tests, *, settings, threads = 1))]
    fn new<'py>(
        names: Vec<String>,
        columns: Vec<PyReadonlyArray1<'py, f64>>,
        tests: Vec<(String, Vec<PyReadonlyArray1<'py, f64>>)>,
        settings: Vec<String>,
        threads: usize,
    ) -> PyResult<Islands> {
        if threads == 0 || threads > 1024 {
            return Err(value_error("threads must be 1 to 1024"));
        }
        let (data, options) = inputs(names, columns, tests, &settings)?;
        let engine = Engine::new(options, data, threads, Vec::new()).map_err(value_error)?;
        Ok(Islands { engine })
    }

    /// Generations between migrations (0: none).
    #[getter]
    fn migration_interval(&self) -> u64 {
        self.engine.options.migration_interval
    }

    /// Islands.
    #[getter]
    fn islands(&self) -> usize {
        self.engine.shards.len()
    }

    /// Takes in the islands' states (JSON, as `_Island.epoch` gives them).
    fn absorb(&mut self, states: Vec<String>) -> PyResult<()> {
        let mut all = Vec::with_capacity(states.len());
        for s in &states {
            all.push(serde_json::from_str::<ShardState>(s).map_err(|e| json_error("state", e))?);
        }
        self.engine.load_states(all).map_err(value_error)
    }

    /// The migration due now: what each island receives, as JSON, by island.
    fn migrate(&mut self) -> Vec<String> {
        let arrivals = self.engine.arrivals();
        let out = arrivals
            .iter()
            .map(|a| serde_json::to_string(a).unwrap_or_default())
            .collect();
        self.engine.migrated(arrivals);
        out
    }

    /// `{"evaluations", "seconds", "best_loss", "front"}` of the states taken in.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("evaluations", self.engine.counters.evaluations)?;
        d.set_item("seconds", self.engine.seconds())?;
        d.set_item("best_loss", self.engine.hall.best_loss())?;
        d.set_item("front", self.engine.hall.front().len())?;
        d.set_item("migrations", self.engine.epoch)?;
        Ok(d)
    }

    /// The end of the search: the front of every island's hall of fame, pruned and refitted
    /// on every training row (for at most `remaining` seconds), with the summary, as the dict
    /// `ndvm.search` returns.
    #[pyo3(signature = (*, max_evals = None, remaining = None, interrupted = false, select = "best"))]
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
        max_evals: Option<u64>,
        remaining: Option<f64>,
        interrupted: bool,
        select: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let select = super::search::select_of(select)?;
        let stop = Stop {
            max_evals,
            deadline: None,
            interrupt: Arc::new(AtomicBool::new(interrupted)),
            proposer_only: false,
        };
        let stopped = stop.reason(self.engine.counters.evaluations);
        let until = deadline(remaining)?;
        let out = finish(
            py,
            &mut self.engine,
            stopped,
            until,
            &stop.interrupt,
            None,
            select,
        );
        py.import("json")?.call_method1("loads", (out.to_string(),))
    }
}
