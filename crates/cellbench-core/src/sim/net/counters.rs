//! What the network counts and logs: cells lost by cause, per-port, per-circuit and
//! per-policer counters, and the cell records of the cell log.

use super::{CircuitId, HostId};
use crate::time::SimTime;

/// Why a port dropped a cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LossCause {
    /// The buffer was full.
    Overflow,
    /// Partial Packet Discard: an earlier cell of the PDU was dropped.
    Ppd,
    /// Early Packet Discard: the PDU was refused at its first cell.
    Epd,
    /// A policer (UPC/NPC) discarded a non-conforming cell.
    Policing,
    /// CLP-selective discard: a CLP = 1 cell found the buffer at or above the
    /// port's CLP-1 threshold (but not full).
    Clp,
}

/// Cells a port dropped, by cause.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CellLoss {
    pub overflow: u64,
    pub ppd: u64,
    pub epd: u64,
    /// Non-conforming cells a policer discarded.
    pub policing: u64,
    /// CLP = 1 cells refused at a CLP-1 threshold.
    pub clp: u64,
}

impl CellLoss {
    pub fn total(&self) -> u64 {
        self.overflow + self.ppd + self.epd + self.policing + self.clp
    }
    pub(super) fn add(&mut self, cause: LossCause, n: u64) {
        match cause {
            LossCause::Overflow => self.overflow += n,
            LossCause::Ppd => self.ppd += n,
            LossCause::Epd => self.epd += n,
            LossCause::Policing => self.policing += n,
            LossCause::Clp => self.clp += n,
        }
    }
}

/// Per-port counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Cells that arrived (`cells_out + cells_lost.total()`).
    pub cells_in: u64,
    /// Cells accepted (each is transmitted).
    pub cells_out: u64,
    pub cells_lost: CellLoss,
    /// Non-conforming cells a policer here passed with CLP = 1.
    pub cells_tagged: u64,
    /// PDUs of which this port dropped at least one cell (EPD refusals included).
    pub pdus_damaged: u64,
    /// The largest occupancy seen, in cells (counted just after an accepted arrival).
    pub peak_occupancy: u32,
    /// Of `cells_out`, cells of PDUs that reassembled intact at their
    /// destination, and cells of PDUs that did not (wasted: `waste.rs`); the
    /// rest belong to PDUs still in flight when the counters were read.
    pub cells_delivered: u64,
    pub cells_wasted: u64,
}

/// Per-circuit counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CircuitCounters {
    /// PDUs the adapter accepted.
    pub pdus_sent: u64,
    pub pdus_delivered: u64,
    /// PDUs that failed reassembly (a lost cell, or glued to a predecessor's remainder).
    pub pdus_lost: u64,
    pub cells_sent: u64,
    /// Cells dropped at ports (the sum of `lost_by_cause`).
    pub cells_lost: u64,
    pub lost_by_cause: CellLoss,
    /// Cells tagged CLP = 1 by policers.
    pub cells_tagged: u64,
    /// PDUs refused because the interface queue was full.
    pub adapter_queue_drops: u64,
}

/// Counters of one policer.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicerCounters {
    pub cells_in: u64,
    pub conforming: u64,
    /// Non-conforming cells discarded.
    pub discarded: u64,
    /// Non-conforming cells passed with CLP = 1.
    pub tagged: u64,
}

impl PolicerCounters {
    pub fn non_conforming(&self) -> u64 {
        self.discarded + self.tagged
    }
}

/// Where a cell record was taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// Transmitted by the source host's adapter.
    Adapter(HostId),
    /// Handled by a switch output port.
    Port(usize),
    /// Received by the destination host's adapter.
    Receiver(HostId),
}

/// What happened to a cell at a place.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CellFate {
    /// Transmission started at the record's time.
    Sent,
    /// Dropped on arrival, at the record's time.
    Lost(LossCause),
    /// Fully received at the record's time.
    Received,
}

/// One cell at one place (see [`super::Network::set_cell_log`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRecord {
    pub place: Place,
    pub at: SimTime,
    pub circuit: CircuitId,
    pub token: u64,
    /// Index of the cell in its PDU (the last one carries AUU).
    pub cell: u32,
    /// The PDU's number in the run: 1, 2, … in the order hosts handed PDUs to
    /// their adapters (unlike `token`, never reused), and its CPCS payload length
    /// in bytes (what the AAL5 trailer's length field says).
    pub pdu: u64,
    pub pdu_len: u32,
    /// VPI/VCI on the link the cell leaves by (at a receiver: arrived by).
    pub vpi: u16,
    pub vci: u16,
    /// The CLP bit the cell leaves with (dropped or received: arrived with).
    pub clp: bool,
    pub fate: CellFate,
    /// An ABR RM cell (PTI 110, `wire::rm`): its fields as it leaves (then
    /// `token`, `cell`, `pdu` and `pdu_len` are 0). None: a cell of a PDU.
    pub rm: Option<crate::wire::rm::RmCell>,
}
