//! Usage/network parameter control in the data path.
//!
//! A policer sits at a switch port's input: it sees the cells of the circuits
//! it matches as they arrive at the port (fully received), before the output
//! buffer, in the port's arrival order (ties in increasing circuit), and runs
//! the foundation's [`Policer`] (GCRA by virtual scheduling, dual for VBR) on
//! their arrival times. Its verdict depends on nothing else, so Train mode may
//! take it whenever it resolves the port, as long as it takes the cells in
//! arrival order (a policer shared by several circuits — a VP — makes the port
//! resolve them strictly interleaved).
//!
//! - Conforming: the cell goes on to the buffer.
//! - Discarded: lost (cause `Policing`); the output buffer and its drop policy
//!   never see it, so a discarded last cell leaves the PDU boundary unseen
//!   there, as in a real switch, and the reassembler glues the remainder to the
//!   next PDU.
//! - Tagged: the cell goes on with CLP = 1, carried and logged; this port's
//!   buffer and every one downstream with a CLP-1 threshold refuse it first
//!   (CLP-selective discard, `port::Buffer`); elsewhere it is a cell like any other.

use super::{LossCause, Network, PolicerCounters};
use crate::atm::gcra::{Policer, Verdict};
use crate::time::SimTime;

pub(super) struct PolicerRt {
    pub policer: Policer,
    pub counters: PolicerCounters,
}

impl Network {
    /// Polices one cell of `circuit` arriving at `port` at `a`; counts it.
    pub(super) fn police(
        &mut self,
        policer: u32,
        port: usize,
        circuit: usize,
        a: SimTime,
    ) -> Verdict {
        let p = &mut self.policers[policer as usize];
        let v = p.policer.police(a);
        p.counters.cells_in += 1;
        match v {
            Verdict::Conforming => p.counters.conforming += 1,
            Verdict::Discarded => p.counters.discarded += 1,
            Verdict::Tagged => {
                p.counters.tagged += 1;
                self.ports[port].counters.cells_tagged += 1;
                self.circuits[circuit].counters.cells_tagged += 1;
            }
        }
        v
    }
}

/// The loss cause of a discarded cell.
pub(super) const POLICED: LossCause = LossCause::Policing;
