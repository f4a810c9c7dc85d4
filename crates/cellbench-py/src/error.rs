//! The one place where Rust errors become Python exceptions. Every error of the
//! core is a bad value or a bad input: it becomes `ValueError` with the core's
//! own one-line message (the CLI prints it and exits 2).

use pyo3::exceptions::PyValueError;
use pyo3::PyErr;
use std::fmt::Display;

/// Map any core error (all implement Display) to a Python `ValueError`.
pub fn value_error(e: impl Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}
