//! Wasted cells: cells a port carried that belonged to PDUs never delivered.
//!
//! With cells of many PDUs interleaved at a full port, one dropped cell dooms
//! its whole PDU, yet under tail drop the PDU's other cells still cross every
//! link downstream; the reassembler throws them away. Partial and Early Packet
//! Discard exist to stop carrying them (A. Romanow and S. Floyd, "Dynamics of
//! TCP traffic over ATM networks", IEEE JSAC 13(4), 1995; docs/design.md §4).
//! A PDU's fate is known only when its last cell is received or dropped, so
//! each PDU keeps the cells dropped at each stage of its circuit; once its fate
//! is known, every port of the circuit adds what it carried of it to its
//! delivered or its wasted cells. The cells a port carried are the PDU's cells
//! less those dropped at it or upstream. Both fidelities count drops and fates
//! through the same calls (`count_dropped`, `cells_done`, `deliver`), so they
//! agree here as they agree on every cell's fate.

use super::Network;

/// Per PDU record, the cells dropped at each stage of its circuit (stage 0,
/// the adapter, drops none): one row of `stride` counters per PDU slot.
#[derive(Default)]
pub(super) struct StageDrops {
    stride: usize,
    drops: Vec<u32>,
}

impl StageDrops {
    /// A PDU slot starts afresh (`stride`, asked once: the most stages of any circuit).
    fn reset(&mut self, pdu: u32, stride: impl FnOnce() -> usize) {
        if self.stride == 0 {
            self.stride = stride().max(1);
        }
        let at = pdu as usize * self.stride;
        if self.drops.len() < at + self.stride {
            self.drops.resize(at + self.stride, 0);
        }
        self.drops[at..at + self.stride].fill(0);
    }

    fn add(&mut self, pdu: u32, stage: usize, n: u32) {
        if let Some(d) = self.drops.get_mut(pdu as usize * self.stride + stage) {
            *d += n;
        }
    }

    /// Cells of the PDU that left stage `stage`'s port: its cells less the
    /// ones dropped there or upstream.
    fn carried(&self, pdu: u32, stage: usize, ncells: u32) -> u32 {
        let at = pdu as usize * self.stride;
        let dropped: u32 = self.drops[at..=at + stage].iter().sum();
        ncells.saturating_sub(dropped)
    }
}

impl Network {
    /// A PDU record is (re)used for a new PDU.
    pub(super) fn waste_reset(&mut self, pdu: u32) {
        let circuits = &self.circuits;
        let stride = || circuits.iter().map(|c| c.stages.len()).max().unwrap_or(1);
        self.stage_drops.reset(pdu, stride);
    }

    /// `n` cells of a PDU were dropped at `stage`'s port.
    pub(super) fn waste_dropped(&mut self, pdu: u32, stage: usize, n: u32) {
        self.stage_drops.add(pdu, stage, n);
    }

    /// A PDU's fate is known: every port of its circuit counts the cells of it
    /// that it carried, as delivered or as wasted.
    pub(super) fn waste_fate(&mut self, pdu: u32, delivered: bool) {
        let (circuit, ncells) = {
            let r = &self.pdus[pdu as usize];
            (r.circuit as usize, r.ncells)
        };
        for stage in 1..self.circuits[circuit].stages.len() {
            let carried = self.stage_drops.carried(pdu, stage, ncells) as u64;
            let c = &mut self.ports[self.circuits[circuit].stages[stage].port].counters;
            if delivered {
                c.cells_delivered += carried;
            } else {
                c.cells_wasted += carried;
            }
        }
    }
}
