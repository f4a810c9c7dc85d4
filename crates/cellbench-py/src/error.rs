//! The one place where Rust errors become Python exceptions. Every error of the
//! core is a bad value or a bad input: it becomes `ValueError` with the core's
//! own one-line message (the CLI prints it and exits 2).

use cellbench_core::sim::world::ScenarioError;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::PyErr;
use std::fmt::Display;

// pyo3 0.22's create_exception! expands to a cfg on its own `gil-refs` feature,
// which the lint reads as this crate's: the allow says nothing about our code.
#[allow(unexpected_cfgs)]
mod spec_error {
    use pyo3::exceptions::PyValueError;
    pyo3::create_exception!(
        _native,
        SpecError,
        PyValueError,
        "A run spec the simulator refuses: the core's one-line message, and `path`: where \
         the spec holds the value (a dict of record, index, name, key, value), or None."
    );
}
pub use spec_error::SpecError;

/// Map any core error (all implement Display) to a Python `ValueError`.
pub fn value_error(e: impl Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A real-network agent's failure (refused connection, bad socket option): the
/// network said no, not the input, so `OSError` with the step and the kernel's words.
pub fn os_error(e: impl Display) -> PyErr {
    PyOSError::new_err(e.to_string())
}

/// A run spec's refusal: a `SpecError` (a `ValueError`) carrying the key path
/// (`ScenarioError::path`), so the front end points at the line that set it.
pub fn spec_error(e: ScenarioError) -> PyErr {
    Python::with_gil(|py| {
        let err = SpecError::new_err(e.reason.clone());
        let path = e.path.map(|p| {
            let d = PyDict::new_bound(py);
            // A dict's set_item on str keys and plain values cannot fail.
            let _ = d.set_item("record", p.record);
            let _ = d.set_item("index", p.index);
            let _ = d.set_item("name", p.name);
            let _ = d.set_item("key", p.key);
            let _ = d.set_item("value", p.value);
            d
        });
        // Setting an attribute on a fresh exception instance does not fail.
        let _ = err.value_bound(py).setattr("path", path);
        err
    })
}
