//! Python bindings: simulator runs. A configuration goes in, plain dicts come
//! out; the GIL is released while the simulator runs on all cores.

use crate::error::value_error;
use cellbench_core::sim::batch::run_indexed;
use cellbench_core::sim::explain::lockstep_cycle;
use cellbench_core::sim::spec::{RunSpec, SpecResult};
use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::{run, RunResult};
use cellbench_core::tcp::Flavour;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lan_buffers, m)?)?;
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
fn spec_json(spec: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = spec.extract::<String>() {
        return Ok(text);
    }
    let json = spec.py().import_bound("json")?;
    json.call_method1("dumps", (spec,))?.extract()
}

fn to_py(py: Python<'_>, result: &SpecResult) -> PyResult<PyObject> {
    let text = serde_json::to_string(result).map_err(value_error)?;
    let json = py.import_bound("json")?;
    Ok(json.call_method1("loads", (text,))?.unbind())
}

/// Run one spec (see `sim::spec`): a dict or its JSON text; returns a dict.
#[pyfunction]
fn simulate(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let spec = RunSpec::from_json(&spec_json(spec)?).map_err(value_error)?;
    let result = py.allow_threads(|| spec.run()).map_err(value_error)?;
    to_py(py, &result)
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
        .map(|r| r.map_err(value_error).and_then(|r| to_py(py, &r)))
        .collect()
}

/// Run `replications` ttcp transfers of the lan-buffers testbed.
#[pyfunction]
#[pyo3(signature = (send_buffer, recv_buffer, *, replications=1, seed=1, first_replication=0,
    trace=false, workers=0, buflen=8192, nbytes=33_554_432, profile="sparc-ipc",
    nodelay=false, mtu=9188, flavour="sunos411", port_buffer_cells=256))]
#[allow(clippy::too_many_arguments)]
fn lan_buffers(
    py: Python<'_>,
    send_buffer: u32,
    recv_buffer: u32,
    replications: u32,
    seed: u64,
    first_replication: u32,
    trace: bool,
    workers: usize,
    buflen: u32,
    nbytes: u64,
    profile: &str,
    nodelay: bool,
    mtu: u32,
    flavour: &str,
    port_buffer_cells: u32,
) -> PyResult<Vec<PyObject>> {
    let flavour: Flavour = flavour.parse().map_err(value_error)?;
    if nbytes == 0 {
        return Err(value_error("byte count 0: must transfer at least 1 byte"));
    }
    if port_buffer_cells == 0 {
        return Err(value_error(
            "switch port buffer 0 cells: must be at least 1",
        ));
    }
    let study = LanBuffers {
        sndbuf: send_buffer,
        rcvbuf: recv_buffer,
        buflen,
        nbytes,
        mtu,
        profile: profile.to_string(),
        flavour,
        nodelay,
        port_buffer_cells,
    };
    // Check everything once before starting the batch: nothing runs on bad input.
    let probe = study
        .scenario(seed, first_replication, false)
        .map_err(value_error)?;
    cellbench_core::sim::world::validate(&probe).map_err(value_error)?;
    let runs: Vec<Result<RunResult, String>> = py.allow_threads(|| {
        run_indexed(replications as usize, workers, |i| {
            let rep = first_replication + i as u32;
            let scenario = study
                .scenario(seed, rep, trace)
                .map_err(|e| e.to_string())?;
            run(&scenario).map_err(|e| e.to_string())
        })
    });
    let mut rows = Vec::with_capacity(runs.len());
    for (i, r) in runs.into_iter().enumerate() {
        let r = r.map_err(value_error)?;
        rows.push(run_to_dict(py, first_replication + i as u32, &r)?);
    }
    Ok(rows)
}

fn run_to_dict(py: Python<'_>, replication: u32, r: &RunResult) -> PyResult<PyObject> {
    let t = &r.transfers[0];
    let d = PyDict::new_bound(py);
    d.set_item("replication", replication)?;
    d.set_item("completed", t.completed)?;
    d.set_item("bytes", t.bytes)?;
    d.set_item("sender_seconds", t.sender_seconds)?;
    d.set_item("receiver_seconds", t.receiver_seconds)?;
    d.set_item("throughput_bps", t.throughput_bps())?;
    d.set_item("throughput_mbit_ttcp", t.mbit_ttcp())?;
    d.set_item("lockstep", t.lockstep())?;
    d.set_item("writes", t.writes)?;
    d.set_item("reads", t.reads)?;
    d.set_item("data_segments", t.sender.data_segs_sent)?;
    d.set_item("retransmitted_segments", t.sender.segs_retransmitted)?;
    d.set_item("timeouts", t.sender.timeouts)?;
    d.set_item("receiver_acks", t.receiver.acks_sent)?;
    d.set_item("delayed_acks", t.receiver.delayed_acks)?;
    d.set_item("window_updates", t.receiver.window_updates)?;
    d.set_item("pdus_dropped_at_adapter", t.pdus_dropped_at_adapter)?;
    d.set_item("events", r.events)?;
    d.set_item("sim_seconds", r.end_time.as_secs_f64())?;
    d.set_item("circular_wait_seconds", t.circular_wait_seconds)?;
    let lines: Vec<String> = r.trace.iter().map(|x| x.line()).collect();
    d.set_item("trace", lines)?;
    // The lock-step's evidence, when a trace was kept: the steady timer-driven cycle.
    let cycle = lockstep_cycle(&r.trace);
    d.set_item(
        "cycle_bytes_per_tick",
        cycle.as_ref().map(|c| c.bytes_per_tick),
    )?;
    d.set_item(
        "cycle_period_s",
        cycle.as_ref().map(|c| c.mean_period.as_secs_f64()),
    )?;
    d.set_item(
        "cycle_predicted_bps",
        cycle.as_ref().map(|c| c.predicted_bps()),
    )?;
    d.set_item("cycle_pattern", cycle.as_ref().map(|c| c.pattern.clone()))?;
    d.set_item("cycle_repeats", cycle.as_ref().map(|c| c.pattern_repeats))?;
    Ok(d.into())
}
