//! Errors of the runtime as Python exceptions (the classes of `ndvm/errors.py`): a program that
//! does not read or decode raises `ProgramSyntaxError` (a `SyntaxError` with line, column and
//! the offending line), bad inputs raise `BindingError` (a `ValueError`), an error while a
//! program runs raises `EvaluationError`, a step, depth or memory limit `LimitError`, and a
//! failure of the host (a lost device, a bug of the runtime) `HostError`.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use runtime_cpu::{Error, Origin};

/// Where an error points in the source: 1-based line and column, and the line's text.
struct Location {
    line: usize,
    column: usize,
    text: String,
    end_column: usize,
}

fn locate(e: &Error, source: &str) -> Option<Location> {
    let span = e.span()?;
    let (line, column) = span.line_col(source);
    let text = source.lines().nth(line - 1).unwrap_or("").to_string();
    let end = (span.end as usize).clamp(span.start as usize, source.len());
    let on_line = source[span.start as usize..end]
        .split('\n')
        .next()
        .unwrap_or("");
    Some(Location {
        line,
        column,
        end_column: column + on_line.chars().count().max(1),
        text,
    })
}

/// The name of the error's variant (`StepBudget`, `Type`, ...), kept as the exception's `kind`.
fn kind(e: &Error) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("Error")
        .to_string()
}

/// The message, with the command-line wording of the limits replaced by the Python options.
fn message(e: &Error, inputs: &[String]) -> String {
    match e {
        Error::StepBudget { limit, .. } => format!(
            "step budget of {limit} steps exhausted (the program runs too long or forever; \
             raise it with Program(..., max_steps=N))"
        ),
        Error::DepthLimit { limit, .. } => format!(
            "recursion deeper than the limit of {limit} nested evaluations \
             (raise it with Program(..., max_depth=N))"
        ),
        Error::MemoryLimit { limit_mb, .. } => format!(
            "payload memory limit of {limit_mb} MB exceeded \
             (raise it with Program(..., max_memory_mb=N))"
        ),
        Error::UnboundName { name, .. } => format!(
            "input `{name}` is not bound: pass {name}=... (the program's inputs: {})",
            inputs.join(", ")
        ),
        other => other.to_string(),
    }
}

fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || py.import("ndvm.errors").map(Bound::unbind))?;
    module.bind(py).getattr(name)
}

/// What an error is about, which picks its Python class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reading and decoding the source.
    Parse,
    /// Binding inputs and running.
    Run,
}

/// The exception object for `e` (not raised), with attributes `kind`, `line`, `column`,
/// `span` and, for run errors, `lanes` (the lanes that failed; `None` for every lane).
pub fn exception<'py>(
    py: Python<'py>,
    e: &Error,
    stage: Stage,
    source: &str,
    inputs: &[String],
    lanes: Option<&[usize]>,
) -> PyResult<Bound<'py, PyAny>> {
    let msg = message(e, inputs);
    let loc = locate(e, source);
    let obj = if stage == Stage::Parse {
        let cls = class(py, "ProgramSyntaxError")?;
        let details = loc.as_ref().map(|l| {
            (
                "<program>",
                l.line,
                l.column,
                l.text.clone(),
                l.line,
                l.end_column,
            )
        });
        match details {
            Some(d) => cls.call1((msg, d))?,
            None => cls.call1((msg,))?,
        }
    } else {
        let name = match (e.origin(), e) {
            (Origin::Host, _) => "HostError",
            (Origin::Inputs, _) => "BindingError",
            (_, e) if e.is_resource_limit() => "LimitError",
            _ => "EvaluationError",
        };
        let mut text = msg;
        if let Some(ls) = lanes {
            text.push_str(&match ls {
                [l] => format!(" (on lane {l})"),
                ls if ls.len() <= 8 => format!(" (on lanes {ls:?})"),
                ls => format!(" (on {} lanes, the first {})", ls.len(), ls[0]),
            });
        }
        if let (Some(l), false) = (&loc, matches!(e, Error::UnboundName { .. })) {
            let caret = " ".repeat(l.column - 1) + &"^".repeat(l.end_column - l.column);
            text.push_str(&format!(
                "\n  at line {}, column {}:\n    {}\n    {caret}",
                l.line, l.column, l.text
            ));
        }
        let obj = class(py, name)?.call1((text,))?;
        obj.setattr("lanes", lanes.map(<[usize]>::to_vec))?;
        obj
    };
    obj.setattr("kind", kind(e))?;
    obj.setattr("line", loc.as_ref().map(|l| l.line))?;
    obj.setattr("column", loc.as_ref().map(|l| l.column))?;
    obj.setattr("span", e.span().map(|s| (s.start, s.end)))?;
    Ok(obj)
}

/// `e` as a raisable Python error.
pub fn to_pyerr(
    py: Python<'_>,
    e: &Error,
    stage: Stage,
    source: &str,
    inputs: &[String],
    lanes: Option<&[usize]>,
) -> PyErr {
    match exception(py, e, stage, source, inputs, lanes) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// A `BindingError` with a message of our own (a problem found before the runtime sees it).
pub fn binding_error(py: Python<'_>, message: String) -> PyErr {
    match class(py, "BindingError").and_then(|c| c.call1((message.clone(),))) {
        Ok(obj) => {
            let _ = obj.setattr("kind", "Binding");
            PyErr::from_value(obj)
        }
        Err(_) => PyRuntimeError::new_err(message),
    }
}
