//! `ndvm.export`'s translation: a program as Python code for NumPy, JAX, PyTorch or sympy, or
//! as LaTeX (`harness::export`, the translation of `ndvm export`). A form the target cannot
//! express raises `ndvm.ExportError` naming it and its line.

use harness::export::{to_latex, to_python, ExportError, Target};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn raise(py: Python<'_>, e: &ExportError) -> PyErr {
    let made = py
        .import("ndvm.errors")
        .and_then(|m| m.getattr("ExportError"))
        .and_then(|cls| cls.call1((e.to_string(),)))
        .and_then(|err| {
            err.setattr("form", &e.form)?;
            err.setattr("line", e.line)?;
            err.setattr("column", e.column)?;
            Ok(err)
        });
    match made {
        Ok(err) => PyErr::from_value(err),
        Err(err) => err,
    }
}

/// `(code, inputs)`: the Python module text defining `program(...)` for `target` (`"numpy"`,
/// `"jax"`, `"torch"`, `"sympy"`), and `(input, python_name)` of each input.
#[pyfunction]
#[pyo3(signature = (source, target, protected_ops = false))]
pub fn _export(
    py: Python<'_>,
    source: &str,
    target: &str,
    protected_ops: bool,
) -> PyResult<(String, Vec<(String, String)>)> {
    let t = match target {
        "numpy" => Target::Numpy,
        "jax" => Target::Jax,
        "torch" => Target::Torch,
        "sympy" => Target::Sympy,
        other => {
            return Err(PyValueError::new_err(format!(
                "target must be \"numpy\", \"jax\", \"torch\" or \"sympy\", not {other:?}"
            )))
        }
    };
    let out = to_python(source, t, protected_ops).map_err(|e| raise(py, &e))?;
    Ok((out.code, out.inputs))
}

/// The program as LaTeX math.
#[pyfunction]
pub fn _latex(py: Python<'_>, source: &str) -> PyResult<String> {
    to_latex(source).map_err(|e| raise(py, &e))
}
