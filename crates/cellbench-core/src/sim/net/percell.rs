//! PerCell mode: the reference. One event per cell per queue; a port is a
//! literal FIFO of the end times of the cells it holds.

use super::port::{self, Verdict};
use super::{upc, Ev, Network, Place};
use crate::atm::gcra;
use crate::time::SimTime;

impl Network {
    /// A cell arriving at `stage`, in either per-cell mode: past the last stage it
    /// goes to the receiver's reassembly, else through the stage's policer (if any).
    /// `Some((circuit, end of message, port, clp))` when it reaches the port's buffer.
    pub(super) fn arrive_at_stage(
        &mut self,
        a: SimTime,
        pdu: u32,
        cell: u32,
        stage: usize,
        mut clp: bool,
    ) -> Option<(usize, bool, usize, bool)> {
        let (c, eom) = {
            let r = &self.pdus[pdu as usize];
            (r.circuit as usize, cell + 1 == r.ncells)
        };
        if stage == self.circuits[c].stages.len() {
            self.reassemble(c, pdu, cell, 1, a, SimTime::ZERO, clp);
            return None;
        }
        let p = self.circuits[c].stages[stage].port;
        if let Some(pol) = self.circuits[c].stages[stage].policer {
            match self.police(pol, p, c, a) {
                gcra::Verdict::Conforming => {}
                gcra::Verdict::Tagged => clp = true,
                gcra::Verdict::Discarded => {
                    let cell_time = self.ports[p].cell;
                    self.count_dropped(p, c, stage, pdu, cell, 1, a, cell_time, upc::POLICED, clp);
                    return None;
                }
            }
        }
        Some((c, eom, p, clp))
    }

    /// Cell `cell` of a PDU arrives at `stage` (a port, or the receiver past the last).
    /// `efci`: ABR's congestion mark, set by a port on the way (`abr.rs`).
    pub(super) fn cell_arrives(
        &mut self,
        a: SimTime,
        pdu: u32,
        cell: u32,
        stage: usize,
        clp: bool,
        efci: bool,
    ) {
        if self.abr.on && self.abr_cell_arrives(a, pdu, cell, stage, clp, efci) {
            return;
        }
        let Some((c, eom, p, clp)) = self.arrive_at_stage(a, pdu, cell, stage, clp) else {
            return;
        };
        let port = &mut self.ports[p];
        // Cells whose transmission has ended by now have left the buffer.
        while port.ends.front().is_some_and(|&e| e <= a) {
            port.ends.pop_front();
        }
        let occ = port.ends.len() as u32;
        let (cell_time, delay, buffer, policy) = (port.cell, port.delay, port.buffer, port.policy);
        let free = port.ends.back().copied().unwrap_or(a);
        match port::offer(
            policy,
            buffer,
            &mut self.circuits[c].stages[stage].vc,
            occ,
            eom,
            clp,
        ) {
            Verdict::Accept => {
                let start = a.max(free);
                self.ports[p].ends.push_back(start + cell_time);
                self.count_accepted(p, 1, occ + 1);
                self.sample_queue(p, a, occ + 1, start + cell_time);
                if self.logs(Place::Port(p)) {
                    self.log_sent(p, c, stage, pdu, cell, std::iter::once(start), clp);
                }
                let efci = efci || (self.abr.on && self.abr_data_at_port(p, c, a, occ + 1));
                let next = Ev::Cell {
                    pdu,
                    cell,
                    stage: stage as u16 + 1,
                    clp,
                    efci,
                };
                self.agenda
                    .schedule(start + cell_time + delay, c as u32, next);
            }
            Verdict::Drop(cause) => {
                self.count_dropped(p, c, stage, pdu, cell, 1, a, cell_time, cause, clp)
            }
        }
    }
}
