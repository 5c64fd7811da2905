//! Systems from an outside proposer (`ndvm search --time ... --proposer CMD`): the search's
//! JSON-lines protocol (docs/search.md, section 6) with systems for candidates (docs/ode.md).
//!
//! ndvm writes the task, `{"task": {"mode": "ode", "states", "time", "inputs", "trajectories",
//! "observations", "tests", "ops", "autonomous"}}`; the proposer writes systems, one per line,
//! as `--seed-programs` takes them, with an optional `id`; ndvm answers each one, in order, with
//! the front member's fields (`complexity`, `train_loss`, `train`, `tests`, `params`,
//! `initial`, `equations`) and `id`, `src` and `error`, and writes `{"front": [...]}` after
//! each batch.

use super::data::OdeData;
use super::discover::{parse_system, Fitted};
use super::report::{self, Row};
use crate::search::emit::Names;
use crate::search::expr::Genome;
use crate::search::proposer::{ProposerStatus, Raw, Stream, StreamLimits};
use runtime_cpu::{Limits, Session};
use serde_json::{json, Value};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A line of the proposer: a system, or why it is not one.
pub struct Proposed {
    /// The line's `id`.
    pub id: Option<Value>,
    /// The line's `src`.
    pub src: Option<Value>,
    /// The system's right-hand sides, or why the line is not a system.
    pub system: Result<Vec<Genome>, String>,
}

/// Systems from outside the search, as the search sees them.
pub trait SystemFeed {
    /// The systems that came since the last call; with `wait`, blocks until at least one
    /// comes, the proposer is found gone or silent, or that instant.
    fn take(&mut self, wait: Option<Instant>) -> Vec<Proposed>;
    /// Answers a line: the fitted system, or why it has none.
    fn answer(&mut self, p: &Proposed, fitted: Result<&Fitted, String>, names: &[Names]);
    /// Sends the front after a batch.
    fn front(&mut self, front: &[Fitted], names: &[Names]);
    /// False once the proposer has exited, closed its output or gone silent.
    fn alive(&self) -> bool;
    /// Restarts the proposer's silence clock (the search's own work is not its silence).
    fn heard(&mut self);
}

/// A running outside proposer of systems.
pub struct Outside<'a> {
    stream: Stream,
    data: &'a OdeData,
    /// What the right-hand sides read: the states, the time (unless autonomous), the inputs.
    inputs: Vec<String>,
    max_step: f64,
    limits: Limits,
    session: Session<f64>,
}

impl<'a> Outside<'a> {
    /// Starts `cmd` and sends it the task.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        cmd: &str,
        data: &'a OdeData,
        inputs: Vec<String>,
        ops: Vec<String>,
        autonomous: bool,
        fit: (f64, Limits),
        proposer: (Duration, StreamLimits, bool),
        interrupt: Arc<AtomicBool>,
    ) -> Result<Outside<'a>, String> {
        let c = &data.columns;
        let task = json!({"task": {
            "mode": "ode",
            "states": c.states,
            "time": c.time,
            "inputs": c.inputs,
            "autonomous": autonomous,
            "reads": inputs,
            "trajectories": data.train.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "observations": data.train.iter().map(|t| t.len()).sum::<usize>(),
            "tests": data.tests.iter().map(|t| t.0.clone()).collect::<Vec<_>>(),
            "ops": ops,
        }});
        let (timeout, limits, only) = proposer;
        let stream = Stream::start(cmd, &task, timeout, limits, interrupt)?.only(only);
        Ok(Outside {
            stream,
            data,
            inputs,
            max_step: fit.0,
            limits: fit.1,
            session: Session::new(),
        })
    }

    /// Stops the proposer at the end of the search and says how it fared.
    pub fn finish(&mut self) -> ProposerStatus {
        self.stream.finish()
    }

    fn row(&mut self, f: &Fitted, names: &[Names]) -> Row {
        let tests = self
            .data
            .tests
            .iter()
            .map(|(name, trajs)| {
                let s = report::test_score(&mut self.session, f, trajs, self.max_step, self.limits);
                (name.clone(), s)
            })
            .collect();
        Row::of(f.clone(), tests, names)
    }
}

impl SystemFeed for Outside<'_> {
    fn take(&mut self, wait: Option<Instant>) -> Vec<Proposed> {
        let raw = self.stream.take(wait);
        let mut out = Vec::with_capacity(raw.len());
        for r in raw {
            let p = match r {
                Raw::Line(l) => match serde_json::from_str::<Value>(&l) {
                    Ok(v) => Proposed {
                        id: v.get("id").cloned(),
                        src: v.get("src").cloned(),
                        system: parse_system(&v, &self.data.columns.states, &self.inputs),
                    },
                    Err(e) => Proposed {
                        id: None,
                        src: None,
                        system: Err(format!("not a JSON line: {e}")),
                    },
                },
                Raw::TooLong(bytes) => Proposed {
                    id: None,
                    src: None,
                    system: Err(self.stream.too_long_error(bytes)),
                },
            };
            if p.system.is_err() {
                self.stream.bad_line();
            }
            out.push(p);
        }
        out
    }

    fn answer(&mut self, p: &Proposed, fitted: Result<&Fitted, String>, names: &[Names]) {
        let mut v = match &fitted {
            Ok(f) => {
                let row = self.row(f, names);
                report::member_json(self.data, &row)
            }
            Err(_) => json!({}),
        };
        v["id"] = p.id.clone().unwrap_or(Value::Null);
        v["src"] = p.src.clone().unwrap_or(Value::Null);
        v["error"] = match fitted {
            Ok(_) => Value::Null,
            Err(e) => json!(e),
        };
        self.stream.answer(v);
    }

    fn front(&mut self, front: &[Fitted], names: &[Names]) {
        let members: Vec<Value> = front
            .iter()
            .map(|f| {
                let row = self.row(f, names);
                report::member_json(self.data, &row)
            })
            .collect();
        self.stream.send(json!({ "front": members }));
        self.stream.heard();
    }

    fn alive(&self) -> bool {
        self.stream.alive()
    }

    fn heard(&mut self) {
        self.stream.heard();
    }
}
