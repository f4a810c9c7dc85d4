//! Python bindings: the real engine's traffic agents. A spec dict goes in, a
//! report dict comes out; the GIL is released for the whole transfer, so a
//! daemon runs many agents on threads side by side.

use crate::error::os_error;
use crate::sim::{spec_json, to_py};
use cellbench_core::real::limits::{set_process_limits, LimitsSpec};
use cellbench_core::real::{run_source, stop, Sink, SinkSpec, SourceSpec};
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(real_source, m)?)?;
    m.add_function(wrap_pyfunction!(real_sink, m)?)?;
    m.add_function(wrap_pyfunction!(real_stop, m)?)?;
    m.add_function(wrap_pyfunction!(real_limits, m)?)?;
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(spec: &Bound<'_, PyAny>) -> PyResult<T> {
    serde_json::from_str(&spec_json(spec)?).map_err(crate::error::value_error)
}

/// Run a source (`cellbench_core::real::SourceSpec`) to its end; its report.
#[pyfunction]
fn real_source(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let spec: SourceSpec = parse(spec)?;
    let report = py.allow_threads(|| run_source(&spec)).map_err(os_error)?;
    to_py(py, serde_json::to_string(&report))
}

/// Bind a sink (`cellbench_core::real::SinkSpec`), read until its source ends; its report.
#[pyfunction]
fn real_sink(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let spec: SinkSpec = parse(spec)?;
    let report = py
        .allow_threads(|| Sink::bind(spec)?.run())
        .map_err(os_error)?;
    to_py(py, serde_json::to_string(&report))
}

/// Stop every agent of `group` in this process within about 100 ms.
#[pyfunction]
fn real_stop(group: &str) {
    stop(group);
}

/// Set this process's limits (`cellbench_core::real::limits::LimitsSpec`), once: every
/// agent in the process holds them from then on, whatever its spec says.
#[pyfunction]
fn real_limits(limits: &Bound<'_, PyAny>) -> PyResult<()> {
    let spec: LimitsSpec = parse(limits)?;
    set_process_limits(&spec).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.0))
}
