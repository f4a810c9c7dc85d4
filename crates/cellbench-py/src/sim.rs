//! Python bindings: simulator runs. A configuration goes in, plain dicts come
//! out; the GIL is released while the simulator runs on all cores.

use crate::error::{spec_error, value_error, SpecError};
use cellbench_core::sim::batch::run_indexed;
use cellbench_core::sim::guard;
use cellbench_core::sim::spec::RunSpec;
use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::tcp::Flavour;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lan_buffers_spec, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_flavours, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_max_windows, m)?)?;
    m.add_function(wrap_pyfunction!(host_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(host_write_us, m)?)?;
    m.add_function(wrap_pyfunction!(host_loopback_mbps, m)?)?;
    m.add_function(wrap_pyfunction!(sparc10_pair_mbps, m)?)?;
    m.add_function(wrap_pyfunction!(check_spec, m)?)?;
    m.add_function(wrap_pyfunction!(tester_places, m)?)?;
    m.add_function(wrap_pyfunction!(connection_ports, m)?)?;
    m.add_function(wrap_pyfunction!(adapter_models, m)?)?;
    m.add_function(wrap_pyfunction!(stop_runs, m)?)?;
    m.add_function(wrap_pyfunction!(allow_runs, m)?)?;
    m.add_function(wrap_pyfunction!(vocabulary, m)?)?;
    m.add("SpecError", m.py().get_type_bound::<SpecError>())?;
    // A run's event budget when its spec sets none (`max_events`): what the
    // experiment checks estimate against before anything runs.
    m.add("DEFAULT_EVENT_BUDGET", guard::DEFAULT_EVENT_BUDGET)?;
    Ok(())
}

/// Every place a cell tester (`cells` in a spec) can sit in a run spec's
/// network, by the name it takes; `place`: check that one, a ValueError listing
/// them all if it is none of them.
#[pyfunction]
#[pyo3(signature = (spec, place=None))]
fn tester_places(spec: &Bound<'_, PyAny>, place: Option<&str>) -> PyResult<Vec<String>> {
    let spec = RunSpec::from_json(&spec_json(spec)?).map_err(spec_error)?;
    if let Some(p) = place {
        spec.tester_place(p).map_err(spec_error)?;
    }
    Ok(spec.tester_places())
}

/// Per connection of a run spec, the switch output ports its data's cells
/// cross, in order, named as the ports table names them (`trunk a->b`, then
/// the receiver's own port): the routes the simulator builds (the fewest
/// trunks between the two sites), so no caller routes a second time.
#[pyfunction]
fn connection_ports(spec: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
    let spec = RunSpec::from_json(&spec_json(spec)?).map_err(spec_error)?;
    let scenario = spec.scenario().map_err(spec_error)?;
    let labels = spec.port_labels();
    let circuits = &scenario.topology.circuits;
    Ok(scenario
        .transfers
        .iter()
        .map(|t| {
            circuits[t.circuit]
                .hops
                .iter()
                .map(|h| labels[h.port].clone())
                .collect()
        })
        .collect())
}

/// The simulator's words for its front ends (`sim::vocabulary`): physical layers,
/// drop policies, limit categories, a spec's defaults and limits, the fibre's
/// delay, and every result field with its unit.
#[pyfunction]
fn vocabulary(py: Python<'_>) -> PyResult<PyObject> {
    to_py(
        py,
        serde_json::to_string(&cellbench_core::sim::vocabulary::vocabulary()),
    )
}

/// The host profiles the simulator knows (docs/design.md §6.3).
#[pyfunction]
fn host_profiles() -> Vec<&'static str> {
    cellbench_core::host::HostProfile::names()
}

/// Per host profile, the time of one write() system call in µs: no application
/// writes blocks more often, so a shorter burst period is refused.
#[pyfunction]
fn host_write_us() -> Vec<(&'static str, f64)> {
    cellbench_core::host::HostProfile::names()
        .into_iter()
        .filter_map(cellbench_core::host::HostProfile::by_name)
        .map(|p| (p.name, p.syscall.as_us_f64()))
        .collect()
}

/// A host profile's loopback ttcp over its OS's loopback interface: (Mb/s, that MTU), the
/// figure its speed is calibrated to (001 Table 2; `sim::testbeds::loopback_mbps`). A
/// ValueError names the known profiles, and one with no loopback figure.
#[pyfunction]
fn host_loopback_mbps(py: Python<'_>, name: &str) -> PyResult<(f64, u32)> {
    use cellbench_core::host::profile::{HostProfile, UnknownProfile};
    let p = HostProfile::by_name(name)
        .ok_or_else(|| value_error(UnknownProfile(name.to_string()).to_string()))?;
    if p.loopback_mbps.is_none() {
        return Err(value_error(format!(
            "host profile {name:?} is not calibrated to a loopback figure"
        )));
    }
    let mtu = p.loopback_mtu;
    let mbps = interruptible(py, move || cellbench_core::sim::testbeds::loopback_mbps(&p))?
        .map_err(run_error)?;
    Ok((mbps, mtu))
}

/// Moldeklev, Klovning and Kure's SPARCstation 10 pair (SunOS 4.1.3, OC-3c, as 002 §2.2
/// quotes them): the best of the writes `LanBuffers::sunos413_oc3c_best` tries, Mb/s, the
/// figure the SPARC-10's SBA-200 work is calibrated to.
#[pyfunction]
fn sparc10_pair_mbps(py: Python<'_>) -> PyResult<f64> {
    use cellbench_core::host::profile::HostProfile;
    let p = HostProfile::by_name("sparc-10").expect("the sparc-10 profile");
    interruptible(py, move || LanBuffers::sunos413_oc3c_best(&p))?.map_err(run_error)
}

/// The host adapter models (docs/design.md §5) by their language names, each with its
/// timing per spacing mode: (name, [(mode, pdu gap µs, stall, source)]).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn adapter_models() -> Vec<(&'static str, Vec<(&'static str, f64, bool, &'static str)>)> {
    use cellbench_core::sim::net::{AdapterModel, SpacingMode};
    let modes = [
        (SpacingMode::Unspaced, "unspaced"),
        (SpacingMode::CellLevel, "cell-level"),
        (SpacingMode::CellBurst, "cell-burst"),
    ];
    AdapterModel::ALL
        .iter()
        .map(|&(m, name)| {
            let t = modes
                .iter()
                .map(|&(mode, label)| {
                    let t = m.timing(mode);
                    (label, t.pdu_gap.as_us_f64(), t.stall, t.source)
                })
                .collect();
            (name, t)
        })
        .collect()
}

/// Check a spec as `simulate` would, without running it: ValueError naming the bad value.
#[pyfunction]
fn check_spec(spec: &Bound<'_, PyAny>) -> PyResult<()> {
    let spec = RunSpec::from_json(&spec_json(spec)?).map_err(spec_error)?;
    spec.scenario().map(|_| ()).map_err(spec_error)
}

/// The TCP flavours and the largest socket buffer each accepts, in bytes.
#[pyfunction]
fn tcp_flavours() -> Vec<(&'static str, u32)> {
    Flavour::ALL
        .iter()
        .map(|f| (f.name(), f.policy().max_sockbuf))
        .collect()
}

/// Per TCP flavour, the largest window it can advertise (65535 without RFC 1323 scaling).
#[pyfunction]
fn tcp_max_windows() -> Vec<(&'static str, u32)> {
    Flavour::ALL
        .iter()
        .map(|f| (f.name(), f.policy().max_window()))
        .collect()
}

/// A spec as JSON text: a str is taken as it is, anything else through json.dumps.
/// JSON has no NaN or infinity: such a value is refused here, by its key.
pub(crate) fn spec_json(spec: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = spec.extract::<String>() {
        return Ok(text);
    }
    // Paths are spelled out only for a spec that has such a value: every run's
    // spec passes here, and a string per key would cost more than the check.
    if has_non_finite(spec, 16) {
        if let Some((path, v)) = non_finite(spec, String::new(), 16)? {
            return Err(value_error(format!(
                "run spec: {path} is {v}: expected a finite number"
            )));
        }
    }
    let json = spec.py().import_bound("json")?;
    json.call_method1("dumps", (spec,))?.extract()
}

/// Whether a spec's dicts and lists hold a NaN or infinite float, within `depth` levels.
fn has_non_finite(v: &Bound<'_, PyAny>, depth: u32) -> bool {
    if depth == 0 {
        return false;
    }
    if let Ok(d) = v.downcast::<pyo3::types::PyDict>() {
        d.iter().any(|(_, x)| has_non_finite(&x, depth - 1))
    } else if let Ok(l) = v.downcast::<pyo3::types::PyList>() {
        l.iter().any(|x| has_non_finite(&x, depth - 1))
    } else if let Ok(f) = v.downcast::<pyo3::types::PyFloat>() {
        !f.value().is_finite()
    } else {
        false
    }
}

/// The first NaN or infinite float in a spec's dicts and lists: its key path
/// (`connections[0].traffic.duration_s`) and value.
/// Looks no deeper than `depth` levels (a spec has four; a cycle is json.dumps's to report).
fn non_finite(v: &Bound<'_, PyAny>, path: String, depth: u32) -> PyResult<Option<(String, f64)>> {
    if depth == 0 {
        return Ok(None);
    }
    if let Ok(d) = v.downcast::<pyo3::types::PyDict>() {
        for (k, x) in d.iter() {
            let key = k.str()?.to_string();
            let sub = if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            if let Some(found) = non_finite(&x, sub, depth - 1)? {
                return Ok(Some(found));
            }
        }
    } else if let Ok(l) = v.downcast::<pyo3::types::PyList>() {
        for (i, x) in l.iter().enumerate() {
            if let Some(found) = non_finite(&x, format!("{path}[{i}]"), depth - 1)? {
                return Ok(Some(found));
            }
        }
    } else if let Ok(f) = v.downcast::<pyo3::types::PyFloat>() {
        let x = f.value();
        if !x.is_finite() {
            return Ok(Some((path, x)));
        }
    }
    Ok(None)
}

/// A spec or a result as plain Python data, from its JSON text.
pub(crate) fn to_py(py: Python<'_>, text: Result<String, serde_json::Error>) -> PyResult<PyObject> {
    let text = text.map_err(value_error)?;
    let json = py.import_bound("json")?;
    Ok(json.call_method1("loads", (text,))?.unbind())
}

/// How often the calling thread looks for Ctrl-C while a simulation runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Run `work` on a thread of its own, without the GIL, while this thread watches for
/// Ctrl-C: Python runs its signal handlers only on the main thread holding the GIL, so
/// it polls them (`check_signals`). On KeyboardInterrupt every running simulation is
/// asked to stop (`sim::guard`, within a few thousand events); once `work` has
/// returned, the request is withdrawn and KeyboardInterrupt raised. On any other
/// thread `check_signals` finds nothing: there the runner's `stop_runs` stops it.
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    if guard::stop_requested() {
        return Err(PyKeyboardInterrupt::new_err(
            "simulations are being stopped",
        ));
    }
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(work());
        });
        let mut rx = rx;
        loop {
            // The receiver moves in and out: it may be sent between threads, not shared.
            let (back, got) = py.allow_threads(move || {
                let got = rx.recv_timeout(SIGNAL_POLL);
                (rx, got)
            });
            rx = back;
            match got {
                Ok(out) => return Ok(out),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        guard::request_stop();
                        let _ = py.allow_threads(move || rx.recv());
                        guard::clear_stop();
                        return Err(e);
                    }
                }
                // The work panicked: the scope re-raises the panic as it ends.
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err("the simulation thread failed"))
                }
            }
        }
    })
}

/// A run's error as Python sees it: stopped by a stop request, KeyboardInterrupt.
fn run_error(e: impl std::fmt::Display) -> PyErr {
    if guard::stop_requested() {
        PyKeyboardInterrupt::new_err(e.to_string())
    } else {
        value_error(e)
    }
}

/// Ask every running simulation to stop soon (they raise KeyboardInterrupt) and
/// refuse new ones, until `allow_runs` (the runner's Ctrl-C).
#[pyfunction]
fn stop_runs() {
    guard::request_stop();
}

/// Let simulations run again after `stop_runs`.
#[pyfunction]
fn allow_runs() {
    guard::clear_stop();
}

/// Run one spec (see `sim::spec`): a dict or its JSON text; returns a dict.
/// Ctrl-C stops it within a fraction of a second (KeyboardInterrupt).
///
/// The GIL is held only to read the spec (json.dumps) and to build the result
/// (json.loads): parsing, the run and the result's JSON text happen without it,
/// so the runner's worker threads run side by side with its storing of rows.
#[pyfunction]
fn simulate(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let text = spec_json(spec)?;
    let work = move || -> Result<String, PyErr> {
        let spec = RunSpec::from_json(&text).map_err(value_error)?;
        let result = spec.run().map_err(run_error)?;
        serde_json::to_string(&result).map_err(value_error)
    };
    // Only the main thread sees Ctrl-C (`interruptible`); elsewhere the runner's
    // `stop_runs` stops a run, and a thread of its own would only cost its start.
    let result = if on_main_thread(py)? {
        interruptible(py, work)?
    } else {
        py.allow_threads(work)
    };
    to_py(py, Ok(result?))
}

/// Whether this is Python's main thread, the one that runs signal handlers.
fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import_bound("threading")?;
    let main = threading.call_method0("main_thread")?.getattr("ident")?;
    threading.call_method0("get_ident")?.eq(main)
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
    let results = interruptible(py, || {
        run_indexed(parsed.len(), workers, |i| parsed[i].run())
    })?;
    results
        .into_iter()
        .map(|r| {
            r.map_err(run_error)
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
