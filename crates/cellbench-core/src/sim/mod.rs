//! The discrete-event simulator.

pub mod event;
pub mod net;
