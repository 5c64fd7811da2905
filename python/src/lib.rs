//! The runtime as a Python package: the extension module `ndvm._ndvm`, wrapped by the Python
//! package in `python/ndvm/` (which adds `ndvm.torch`, the exceptions and the type stubs).
//!
//! Built by maturin from `python/pyproject.toml` (`pip install ./python`); the crate is also a
//! workspace member, so `cargo clippy --workspace` and `cargo test --workspace` check it.
//!
//! | file | what |
//! | --- | --- |
//! | `program.rs` | `ndvm.Program`: parse once, evaluate on NumPy inputs, values and gradients |
//! | `convert.rs` | keyword arguments to bindings, lane values and gradients to NumPy arrays |
//! | `errors.rs` | the runtime's errors as the exceptions of `ndvm/errors.py` |
//! | `population.rs` | `ndvm.evaluate_population`: many programs across cores, GIL released |
//! | `calibrate.rs` | `ndvm.calibrate`, as `ndvm calibrate` |
//! | `cosearch.rs` | `ndvm.cosearch`, as `ndvm cosearch` |
//! | `search.rs` | `ndvm.search` and `ndvm.SymbolicRegressor`'s engine, as `ndvm search` |
//! | `export.rs` | `ndvm.export`'s translation, as `ndvm export` |
//! | `islands.rs` | a search's islands run apart, and their driver (`ndvm.ray.search`) |

mod calibrate;
mod convert;
mod cosearch;
mod errors;
mod export;
mod islands;
mod ode;
mod population;
mod program;
mod search;

use pyo3::prelude::*;

/// Marks `value` as bound the same on every lane (a number, vector or matrix).
#[pyfunction]
fn uniform(value: Py<PyAny>) -> convert::Uniform {
    convert::Uniform { value }
}

/// Marks `value` as one value per lane along its first axis.
#[pyfunction]
fn lanes(value: Py<PyAny>) -> convert::Lanes {
    convert::Lanes { value }
}

/// The extension module.
#[pymodule]
fn _ndvm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<program::Program>()?;
    m.add_class::<convert::Uniform>()?;
    m.add_class::<convert::Lanes>()?;
    m.add_function(wrap_pyfunction!(uniform, m)?)?;
    m.add_function(wrap_pyfunction!(lanes, m)?)?;
    m.add_function(wrap_pyfunction!(population::_evaluate_population, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(cosearch::cosearch, m)?)?;
    m.add_function(wrap_pyfunction!(search::_search, m)?)?;
    m.add_function(wrap_pyfunction!(ode::_ode_search, m)?)?;
    m.add_function(wrap_pyfunction!(ode::_ode_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(export::_export, m)?)?;
    m.add_function(wrap_pyfunction!(export::_latex, m)?)?;
    m.add_class::<islands::Island>()?;
    m.add_class::<islands::Islands>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
