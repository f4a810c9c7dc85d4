//! The discrete-event simulator.

pub mod batch;
pub mod capture;
pub mod clock;
pub mod era;
pub mod event;
pub mod explain;
pub mod guard;
pub mod kind;
pub mod net;
pub mod scenario;
pub mod spec;
pub mod spec_keys;
pub mod testbeds;
pub mod trace;
pub mod vocabulary;
pub mod world;
