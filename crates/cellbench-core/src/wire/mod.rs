//! Byte-exact wire formats: ATM cells, ABR RM cells, AAL5, RFC 1483 and Ethernet II frames.
//! Every decoder here takes untrusted bytes and never panics; every
//! encoder/decoder pair round-trips.

pub mod aal5;
pub mod cell;
pub mod ethernet;
pub mod llc_snap;
pub mod pcap;
pub mod rm;
