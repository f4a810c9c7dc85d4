//! cellbench-core: the pure-Rust heart of cellbench.
//!
//! - [`wire`]: byte-exact ATM cells, AAL5 CPCS-PDUs, RFC 1483 encapsulation, pcap.
//! - [`atm`]: physical-layer rates, GCRA traffic contracts, closed-form calculators.
//! - [`sim`]: the deterministic discrete-event simulator (event queue, network of
//!   adapters, links and switch ports, measurement).
//! - [`tcp`]: TCP implementations (`sunos411` first) over one shared core.
//! - [`host`]: sockets, applications (ttcp) and host processing-cost profiles.
//! - [`traffic`]: NetSpec's traffic laws and schedules, one for every engine.
//! - [`rng`]: the random streams every component draws from, one per component.
//! - [`real`]: traffic agents on real kernel sockets (the `real` engine, Linux).
//! - [`emu`]: the emulator (`--engine emu`, Linux): kernel TCP in network
//!   namespaces over TUN devices, joined by [`sim::net`] in real time.
//!
//! No Python here: the bindings live in the `cellbench-py` crate.

pub mod atm;
#[cfg(target_os = "linux")]
pub mod emu;
pub mod host;
#[cfg(target_os = "linux")]
pub mod real;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod traffic;
pub mod wire;

pub use time::{BitRate, SimTime};
