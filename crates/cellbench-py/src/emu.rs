//! Python bindings: the emulator (`--engine emu`). `Emulator(spec)` builds the
//! cell network and opens the TUN devices in their namespaces; `start()` runs
//! it on a thread of its own (no GIL); `stop()` ends it and returns the report.
//! `emu_setns(path)` moves the calling thread into a namespace, so that the
//! real engine's agents run there unchanged.

use crate::error::{os_error, value_error};
use crate::sim::{spec_json, to_py};
use cellbench_core::emu::{enter_netns, EmuReport, EmuSpec, Emulator as Core};
use cellbench_core::sim::spec::RunSpec;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Emulator>()?;
    m.add_function(wrap_pyfunction!(emu_setns, m)?)?;
    m.add_function(wrap_pyfunction!(port_labels, m)?)?;
    Ok(())
}

/// Every switch output port's name, in port order (the ports table's `host`), of
/// a run spec: what `--pcap PORT=FILE` names.
#[pyfunction]
fn port_labels(spec: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let spec: RunSpec = serde_json::from_str(&spec_json(spec)?).map_err(value_error)?;
    Ok(spec.port_labels())
}

/// Move the calling thread (only it) into the network namespace at `path`.
#[pyfunction]
fn emu_setns(path: &str) -> PyResult<()> {
    enter_netns(path).map_err(os_error)
}

#[pyclass(module = "cellbench._native")]
struct Emulator {
    ready: Option<Core>,
    running: Option<(Arc<AtomicBool>, JoinHandle<std::io::Result<EmuReport>>)>,
}

#[pymethods]
impl Emulator {
    #[new]
    fn new(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Emulator> {
        let spec: EmuSpec = serde_json::from_str(&spec_json(spec)?).map_err(value_error)?;
        let core = py.allow_threads(|| Core::open(spec)).map_err(os_error)?;
        Ok(Emulator {
            ready: Some(core),
            running: None,
        })
    }

    /// Start moving datagrams (once).
    fn start(&mut self) -> PyResult<()> {
        let core = self
            .ready
            .take()
            .ok_or_else(|| value_error("the emulator was started already"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("cellbench-emu".into())
            .spawn(move || core.run(&flag))
            .map_err(os_error)?;
        self.running = Some((stop, handle));
        Ok(())
    }

    /// Stop and return the report (a dict); the TUN devices close with it.
    fn stop(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let (stop, handle) = self
            .running
            .take()
            .ok_or_else(|| value_error("the emulator is not running"))?;
        stop.store(true, Ordering::Relaxed);
        let report = py
            .allow_threads(|| handle.join())
            .map_err(|_| os_error("the emulator thread panicked"))?
            .map_err(|e| os_error(format!("emulator: {e}")))?;
        to_py(py, serde_json::to_string(&report))
    }

    /// Close the TUN devices now (also when never started), ending a running loop.
    fn close(&mut self, py: Python<'_>) {
        self.ready = None;
        if let Some((stop, handle)) = self.running.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = py.allow_threads(|| handle.join());
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.running.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}
