//! Python bindings: simulator runs. A configuration goes in, plain dicts come
//! out; the GIL is released while the simulator runs on all cores.

use crate::error::value_error;
use cellbench_core::sim::batch::run_indexed;
use cellbench_core::sim::spec::RunSpec;
use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::tcp::Flavour;
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lan_buffers_spec, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_flavours, m)?)?;
    m.add_function(wrap_pyfunction!(host_profiles, m)?)?;
    Ok(())
}

/// The host profiles the simulator knows (SPEC §6.3).
#[pyfunction]
fn host_profiles() -> Vec<&'static str> {
    cellbench_core::host::HostProfile::names()
}

/// The TCP flavours and the largest socket buffer each accepts, in bytes.
#[pyfunction]
fn tcp_flavours() -> Vec<(&'static str, u32)> {
    Flavour::ALL
        .iter()
        .map(|f| (f.name(), f.policy().max_sockbuf))
        .collect()
}

/// A spec as JSON text: a str is taken as it is, anything else through json.dumps.
pub(crate) fn spec_json(spec: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = spec.extract::<String>() {
        return Ok(text);
    }
    let json = spec.py().import_bound("json")?;
    json.call_method1("dumps", (spec,))?.extract()
}

/// A spec or a result as plain Python data, from its JSON text.
pub(crate) fn to_py(py: Python<'_>, text: Result<String, serde_json::Error>) -> PyResult<PyObject> {
    let text = text.map_err(value_error)?;
    let json = py.import_bound("json")?;
    Ok(json.call_method1("loads", (text,))?.unbind())
}

/// Run one spec (see `sim::spec`): a dict or its JSON text; returns a dict.
#[pyfunction]
fn simulate(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let spec = RunSpec::from_json(&spec_json(spec)?).map_err(value_error)?;
    let result = py.allow_threads(|| spec.run()).map_err(value_error)?;
    to_py(py, serde_json::to_string(&result))
}

/// Run many specs on `workers` threads (0 = all cores); results in input order.
/// Every spec is checked before any runs.
#[pyfunction]
#[pyo3(signature = (specs, *, workers=0))]
fn simulate_many(
    py: Python<'_>,
    specs: Vec<Bound<'_, PyAny>>,
    workers: usize,
) -> PyResult<Vec<PyObject>> {
    let mut parsed = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        let spec = RunSpec::from_json(&spec_json(s)?)
            .map_err(|e| value_error(format!("spec {i}: {e}")))?;
        spec.scenario()
            .map_err(|e| value_error(format!("spec {i}: {e}")))?;
        parsed.push(spec);
    }
    let results = py.allow_threads(|| run_indexed(parsed.len(), workers, |i| parsed[i].run()));
    results
        .into_iter()
        .map(|r| {
            r.map_err(value_error)
                .and_then(|r| to_py(py, serde_json::to_string(&r)))
        })
        .collect()
}

/// The lan-buffers study's run spec (`sim::testbeds::LanBuffers`) as a dict for
/// `simulate`/`simulate_many`; checked, so a bad value raises ValueError naming it.
#[pyfunction]
#[pyo3(signature = (send_buffer, recv_buffer, *, seed=1, replication=0, trace=false,
    buflen=8192, nbytes=33_554_432, profile="sparc-ipc", nodelay=false, mtu=9188,
    flavour="sunos411", port_buffer_cells=256))]
#[allow(clippy::too_many_arguments)]
fn lan_buffers_spec(
    py: Python<'_>,
    send_buffer: u32,
    recv_buffer: u32,
    seed: u64,
    replication: u32,
    trace: bool,
    buflen: u32,
    nbytes: u64,
    profile: &str,
    nodelay: bool,
    mtu: u32,
    flavour: &str,
    port_buffer_cells: u32,
) -> PyResult<PyObject> {
    let study = LanBuffers {
        sndbuf: send_buffer,
        rcvbuf: recv_buffer,
        buflen,
        nbytes,
        mtu,
        profile: profile.to_string(),
        flavour: flavour.parse().map_err(value_error)?,
        nodelay,
        port_buffer_cells,
    };
    let spec = study.spec(seed, replication, trace);
    spec.scenario().map_err(value_error)?;
    to_py(py, serde_json::to_string(&spec))
}
