//! Byte-exact ATM wire formats. Every decoder here takes untrusted bytes and
//! never panics; every encoder/decoder pair round-trips.

pub mod aal5;
pub mod cell;
pub mod llc_snap;
pub mod pcap;
