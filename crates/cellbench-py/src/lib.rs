//! The private native module `cellbench._native`: thin wrappers over
//! cellbench-core. A configuration goes in, results come out; long runs
//! release the GIL. Each area registers its functions from its own file.

// pyo3 0.22's #[pyfunction] expansion converts PyErr into itself, which current
// clippy flags in every binding; the lint says nothing about our code here.
#![allow(clippy::useless_conversion)]

use pyo3::prelude::*;

mod calc;
#[cfg(target_os = "linux")]
mod emu;
mod error;
#[cfg(target_os = "linux")]
mod real;
mod sim;
mod wire;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    calc::register(m)?;
    wire::register(m)?;
    sim::register(m)?;
    #[cfg(target_os = "linux")]
    real::register(m)?;
    #[cfg(target_os = "linux")]
    emu::register(m)?;
    Ok(())
}
