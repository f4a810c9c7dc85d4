//! Hosts: the socket layer, applications and processing-cost profiles.

pub mod profile;
pub mod rr;
pub mod socket;
pub mod ttcp;
pub mod udp;

pub use profile::{HostProfile, UnknownProfile};
