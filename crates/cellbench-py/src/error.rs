//! The one place where Rust errors become Python exceptions. Every error of the
//! core is a bad value or a bad input: it becomes `ValueError` with the core's
//! own one-line message (the CLI prints it and exits 2).

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;
use std::fmt::Display;

/// Map any core error (all implement Display) to a Python `ValueError`.
pub fn value_error(e: impl Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A real-network agent's failure (refused connection, bad socket option): the
/// network said no, not the input, so `OSError` with the step and the kernel's words.
pub fn os_error(e: impl Display) -> PyErr {
    PyOSError::new_err(e.to_string())
}
