//! The one place where Rust errors become Python exceptions. Every error of the
//! core is a bad value or a bad input: it becomes `ValueError` with the core's
//! own one-line message (the CLI prints it and exits 2).

use cellbench_core::sim::world::{KeyPath, ScenarioError};
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
        "A run spec the simulator refuses: the core's one-line message; `kind`: what is \
         refused (setting, conflict, record, spec, run); `path`: where the spec holds the \
         value (a dict of record, index, name, key, value; a record's refusal: key and value \
         empty), or None; `other`: a conflict's second setting, else None."
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

/// A key path as the dict `SpecError.path` gives.
fn path_dict<'py>(py: Python<'py>, p: &KeyPath) -> Bound<'py, PyDict> {
    let d = PyDict::new_bound(py);
    // A dict's set_item on str keys and plain values cannot fail.
    let _ = d.set_item("record", p.record);
    let _ = d.set_item("index", p.index);
    let _ = d.set_item("name", p.name.as_deref());
    let _ = d.set_item("key", p.key);
    let _ = d.set_item("value", p.value.as_str());
    d
}

/// A run spec's refusal: a `SpecError` (a `ValueError`) carrying what is refused
/// and its key path (`ScenarioError`'s), so the front end points at the line that
/// set it.
pub fn spec_error(e: ScenarioError) -> PyErr {
    Python::with_gil(|py| {
        let err = SpecError::new_err(e.to_string());
        let (kind, path, other) = match &e {
            ScenarioError::Setting { path, .. } => ("setting", Some(path_dict(py, path)), None),
            ScenarioError::Conflict { path, other, .. } => (
                "conflict",
                Some(path_dict(py, path)),
                Some(path_dict(py, other)),
            ),
            // A record as a whole: its path with no key.
            ScenarioError::Record {
                record,
                index,
                name,
                ..
            } => {
                let p = KeyPath {
                    record,
                    index: *index,
                    name: name.clone(),
                    key: "",
                    value: String::new(),
                };
                ("record", Some(path_dict(py, &p)), None)
            }
            ScenarioError::Spec { .. } => ("spec", None, None),
            ScenarioError::Run { .. } => ("run", None, None),
        };
        // Setting an attribute on a fresh exception instance does not fail.
        let value = err.value_bound(py);
        let _ = value.setattr("kind", kind);
        let _ = value.setattr("path", path);
        let _ = value.setattr("other", other);
        err
    })
}
