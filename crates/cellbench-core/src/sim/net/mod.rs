//! The cell network: host adapters (SAR), links, switch output ports.
//!
//! CONTRACT (used by the host/TCP side; the implementation behind it is free):
//! the network is sans-IO. Hosts hand it whole AAL5 CPCS-PDUs; it decides per
//! cell what happens on every queue and link, and hands back the PDUs that
//! reassembled intact at the far adapter.

use crate::time::SimTime;

/// Index of a host (its adapter) in the topology.
pub type HostId = usize;
/// Index of a circuit (a unidirectional VC from one host to another) in the topology.
pub type CircuitId = usize;

/// A PDU that arrived intact at its destination host's adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// When the last cell was reassembled (the adapter hands the PDU to the host then).
    pub at: SimTime,
    pub host: HostId,
    pub circuit: CircuitId,
    /// The caller's token given to [`Network::send`].
    pub token: u64,
}
