//! `ndvm.evaluate_population`: many programs on the same (or their own) inputs, spread over
//! worker threads by the runtime's scheduler with the GIL released. Each program's result or
//! error comes back in program order; one program's error never stops the others.

use crate::convert::{self, Inputs};
use crate::errors::{exception, Stage};
use crate::program::{LaneErrors, Precision, Program, Spec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use runtime_cpu::schedule::{self, Stop};
use runtime_cpu::{DecodeOptions, Error, GradSpec, Limits, Outcome, RunOptions, Session};

/// One member of the population.
enum Member {
    /// An `ndvm.Program`, with its settings.
    Parsed {
        program: runtime_cpu::Program,
        inputs: Vec<String>,
        precision: Precision,
        limits: Limits,
        lane_errors: LaneErrors,
    },
    /// Source text, parsed in the worker with the default settings.
    Source(String),
}

/// Why a member has no outcome: its error, where it arose, and its program once parsed.
struct Failure {
    error: Error,
    stage: Stage,
    program: Option<runtime_cpu::Program>,
}

/// What a worker hands back for one member.
type Done = Result<(runtime_cpu::Program, Outcome), Box<Failure>>;

fn failure(error: Error, stage: Stage, program: Option<runtime_cpu::Program>) -> Box<Failure> {
    Box::new(Failure {
        error,
        stage,
        program,
    })
}

fn run_one(
    sessions: &mut (Session<f64>, Session<f32>),
    member: &Member,
    inputs: &Inputs,
    wrt: Option<&[String]>,
) -> Done {
    let (program, precision, limits) = match member {
        Member::Parsed {
            program,
            precision,
            limits,
            ..
        } => (program.clone(), *precision, *limits),
        Member::Source(src) => {
            match runtime_cpu::Program::parse_with(src, DecodeOptions::default()) {
                Ok(p) => (p, Precision::F64, Limits::default()),
                Err(e) => return Err(failure(e, Stage::Parse, None)),
            }
        }
    };
    let grad = match wrt {
        None => GradSpec::None,
        Some(names) => {
            let mine: Vec<String> = names
                .iter()
                .filter(|n| program.inputs().any(|i| i == n.as_str()))
                .cloned()
                .collect();
            if mine.is_empty() {
                GradSpec::None
            } else {
                GradSpec::Some(mine)
            }
        }
    };
    let options = RunOptions {
        grad,
        limits,
        ..Default::default()
    };
    let r = match precision {
        Precision::F64 => sessions.0.run(&program, &inputs.bindings, &options),
        Precision::F32 => sessions.1.run(&program, &inputs.bindings, &options),
    };
    match r {
        Ok(out) => Ok((program, out.clone())),
        Err(e) => Err(failure(e, Stage::Run, Some(program))),
    }
}

/// Evaluates every program; returns `(value, grads, error)` triples in program order.
#[pyfunction]
#[pyo3(signature = (programs, bindings, threads = None, wrt = None))]
pub fn _evaluate_population<'py>(
    py: Python<'py>,
    programs: &Bound<'py, PyAny>,
    bindings: &Bound<'py, PyAny>,
    threads: Option<usize>,
    wrt: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyList>> {
    let mut members = Vec::new();
    for item in programs.try_iter()? {
        let item = item?;
        if let Ok(p) = item.cast::<Program>() {
            let p = p.get();
            members.push(Member::Parsed {
                program: p.program.clone(),
                inputs: p.inputs.clone(),
                precision: p.precision,
                limits: p.limits,
                lane_errors: p.lane_errors,
            });
        } else if let Ok(s) = item.extract::<String>() {
            members.push(Member::Source(s));
        } else {
            return Err(PyValueError::new_err(
                "programs must be ndvm.Program objects or source strings",
            ));
        }
    }
    let shared = bindings.hasattr("items")?;
    let inputs: Vec<Inputs> = if shared {
        vec![convert::inputs(py, Some(bindings), None)?]
    } else {
        let each: Vec<Bound<'py, PyAny>> = bindings.try_iter()?.collect::<PyResult<_>>()?;
        if each.len() != members.len() {
            return Err(PyValueError::new_err(format!(
                "bindings: one mapping for every program, or one list of {} mappings (got {})",
                members.len(),
                each.len()
            )));
        }
        each.iter()
            .map(|b| convert::inputs(py, Some(b), None))
            .collect::<PyResult<_>>()?
    };
    let threads = threads.unwrap_or_else(schedule::cores).max(1);
    let n = members.len();
    let done: Vec<Done> = py.detach(|| {
        schedule::run(
            threads,
            Stop {
                max_jobs: Some(n),
                deadline: None,
                flag: None,
            },
            || (Session::<f64>::new(), Session::<f32>::new()),
            |sessions, i| {
                let inp = if shared { &inputs[0] } else { &inputs[i] };
                run_one(sessions, &members[i], inp, wrt.as_deref())
            },
            |_, _| {},
        )
    });
    let out = PyList::empty(py);
    for (i, (member, d)) in members.iter().zip(done).enumerate() {
        let inp = if shared { &inputs[0] } else { &inputs[i] };
        let (settings, names) = match member {
            Member::Parsed {
                precision,
                lane_errors,
                inputs,
                ..
            } => ((*precision, *lane_errors), inputs.clone()),
            Member::Source(_) => ((Precision::F64, LaneErrors::Raise), Vec::new()),
        };
        let none = || py.None().into_bound(py);
        let triple = match d {
            Ok((program, outcome)) => {
                let names: Vec<String> = if names.is_empty() {
                    program.inputs().map(str::to_string).collect()
                } else {
                    names
                };
                let spec = Spec {
                    program: &program,
                    inputs: &names,
                    precision: settings.0,
                    lane_errors: settings.1,
                };
                match spec.read(py, &outcome, inp.has_lanes, false) {
                    Ok((v, g)) => {
                        let g = if wrt.is_some() { g.into_any() } else { none() };
                        (v, g, none())
                    }
                    Err(e) => (none(), none(), e.value(py).clone().into_any()),
                }
            }
            Err(f) => {
                let Failure {
                    error: e,
                    stage,
                    program,
                } = *f;
                let source = match (&program, member) {
                    (Some(p), _) => p.source().to_string(),
                    (None, Member::Source(s)) => s.clone(),
                    (None, Member::Parsed { program, .. }) => program.source().to_string(),
                };
                let names: Vec<String> = program
                    .as_ref()
                    .map(|p| p.inputs().map(str::to_string).collect())
                    .unwrap_or_default();
                let exc = exception(py, &e, stage, &source, &names, None)?;
                (none(), none(), exc)
            }
        };
        out.append(PyTuple::new(py, [triple.0, triple.1, triple.2])?)?;
    }
    Ok(out)
}
