//! The network's description: hosts' adapters, switch ports, circuits and their hops,
//! policers, VP cross-connects, per-VC pacing and flow control, which a [`super::Network`]
//! is built from.

use super::SpacingError;
use crate::atm::gcra::{Action, Contract};
use crate::atm::phy::CELL_BITS;
use crate::time::{BitRate, SimTime};
use std::fmt;

/// Index of a host (its adapter) in the topology.
pub type HostId = usize;
/// Index of a circuit (a unidirectional VC from one host to another) in the topology.
pub type CircuitId = usize;

/// The whole network: one adapter per host, the switch output ports, the
/// circuits, and what the wide-area part adds (UPC/NPC, VP cross-connects,
/// per-VC pacing). Build it with `..Default::default()` so that fields added
/// later default to "none".
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub adapters: Vec<AdapterSpec>,
    pub ports: Vec<PortSpec>,
    pub circuits: Vec<CircuitSpec>,
    /// Usage/network parameter control functions at switch ports.
    pub policers: Vec<PolicerSpec>,
    /// Output VPIs of ports that are switched as whole virtual paths.
    pub vp_cross_connects: Vec<VpCrossConnect>,
    /// Circuits whose adapter paces their cells at a rate of their own.
    pub pacing: Vec<VcPacing>,
    /// Ports with credit-based hop-by-hop flow control (`credit.rs`). A network
    /// with any runs the per-cell reference, whatever fidelity it was built with.
    pub flow_control: Vec<FlowControl>,
    /// ABR circuits (their source parameters) and the ABR behaviour of ports
    /// (`abr.rs`). A network with any runs the per-cell reference.
    pub abr_sources: Vec<super::AbrSource>,
    pub abr_ports: Vec<super::AbrPort>,
    /// Ethernet segments: frame links beside the cells (`ether.rs`).
    pub segments: Vec<super::ether::SegmentSpec>,
    /// Circuits carried as frames on a segment instead of as cells.
    pub framed: Vec<super::ether::FramedCircuit>,
}

/// Credit-based flow control at port `port`: each VC may have at most `credits`
/// cells in or on the way to it; the element upstream holds the rest.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlowControl {
    pub port: usize,
    pub credits: u32,
}

/// UPC/NPC at a switch port: cells that arrive at port `port` labelled `vpi`
/// (and `vci`, for a VC; `None` polices the whole VP) are checked against
/// `contract` on arrival, before the output buffer. The label is the one on the
/// link the cell arrives by (the previous hop's, or the source adapter's).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PolicerSpec {
    pub port: usize,
    pub vpi: u16,
    pub vci: Option<u16>,
    pub contract: Contract,
    pub action: Action,
}

/// Port `port` switches the virtual path that leaves it labelled `vpi` as a
/// whole (a VP cross-connect): every circuit leaving `port` with that VPI keeps
/// the VCI it arrived with, and all of them arrive by the same link with the
/// same VPI (one VP in, one VP out).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VpCrossConnect {
    pub port: usize,
    pub vpi: u16,
}

/// Per-VC pacing in the source adapter: the circuit's cells start `interval`
/// apart (start to start), in a PDU and across its PDUs; the adapter's own
/// [`TxSpacing`] does not apply to them. What a pacing rate limits is the
/// adapter's: cells with their headers, cell payloads, or IP datagrams; for
/// the last, `interval` is the time of 48 datagram bytes and each PDU's cells
/// are spread so its datagram flows at the rate
/// ([`VcPacing::cell_interval`]).
///
/// The adapter still segments one PDU at a time, FIFO over all its circuits:
/// two paced circuits of one adapter take turns PDU by PDU, their cells do not
/// interleave on the link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VcPacing {
    pub circuit: CircuitId,
    pub interval: SimTime,
    pub counts: PacedQuantity,
}

/// What an adapter's pacing rate counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacedQuantity {
    /// 53-byte cells, headers included (a cell-slot schedule).
    Cells,
    /// The 48-byte payloads of the cells.
    CellPayloads,
    /// The IP datagrams the PDUs carry, after `encap_header` bytes of
    /// encapsulation (AAL5 pad and trailer not counted).
    IpDatagrams { encap_header: u32 },
}

impl PacedQuantity {
    /// The testbed language's names: `cells`, `payloads`, `datagrams`.
    pub const NAMES: [&'static str; 3] = ["cells", "payloads", "datagrams"];

    /// Bits of this quantity in one full cell: 424 or 384 (a cell carries at
    /// most 48 bytes of a datagram).
    fn bits_per_cell(self) -> u64 {
        match self {
            PacedQuantity::Cells => CELL_BITS,
            PacedQuantity::CellPayloads | PacedQuantity::IpDatagrams { .. } => 384,
        }
    }

    /// What it counts, in words: "cells", "cell payloads", "IP datagrams".
    pub fn describe(self) -> &'static str {
        match self {
            PacedQuantity::Cells => "cells",
            PacedQuantity::CellPayloads => "cell payloads",
            PacedQuantity::IpDatagrams { .. } => "IP datagrams",
        }
    }

    /// The testbed language's name of this quantity.
    pub fn name(self) -> &'static str {
        match self {
            PacedQuantity::Cells => "cells",
            PacedQuantity::CellPayloads => "payloads",
            PacedQuantity::IpDatagrams { .. } => "datagrams",
        }
    }
}

impl VcPacing {
    /// Pacing of cells with headers at a bit rate: one 53-byte cell every
    /// `424 / rate` (rounded down to the picosecond, like a link's cell time).
    pub fn at_rate(circuit: CircuitId, rate: BitRate) -> Result<VcPacing, SpacingError> {
        VcPacing::of(circuit, rate, PacedQuantity::Cells)
    }

    /// Pacing at a bit rate of `counts`: `interval` is the time of one full
    /// cell's worth of it (424 or 384 bits).
    pub fn of(
        circuit: CircuitId,
        rate: BitRate,
        counts: PacedQuantity,
    ) -> Result<VcPacing, SpacingError> {
        if rate.bps() == 0 {
            return Err(SpacingError::ZeroRate);
        }
        Ok(VcPacing {
            circuit,
            interval: rate.time_for_bits(counts.bits_per_cell()),
            counts,
        })
    }

    /// The pacing rate, in bits per second of what it counts.
    pub fn rate_bps(&self) -> f64 {
        self.counts.bits_per_cell() as f64 / self.interval.as_secs_f64()
    }
}

/// A host's adapter; its transmit side drives the host's access link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AdapterSpec {
    /// Cell-carrying rate of the access link (TAXI 100: 100 Mb/s).
    pub rate: BitRate,
    /// Propagation delay of the access link to the first switch (or the far host).
    pub delay: SimTime,
    pub tx: TxSpacing,
    /// Minimum idle time between the last cell of one PDU and the first of the next.
    pub pdu_gap: SimTime,
    /// Interface queue length in PDUs (BSD `ifq_maxlen`, default 50).
    pub tx_queue_pdus: usize,
}

/// How an adapter spaces the cells of its PDUs (docs/design.md §5). `C` is the access
/// link's cell time; offsets are from the start of the PDU's first cell. See
/// `adapter.rs` for the exact schedule of each mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TxSpacing {
    /// Cells back to back at the line rate.
    None,
    /// One cell every `interval` (>= C): a peak cell rate, exact to the picosecond.
    PeakCellRate { interval: SimTime },
    /// Packet-level spacing (by software): PDUs start at least `interval` apart
    /// (start to start); cells back to back.
    Packet { interval: SimTime },
    /// Cell-level spacing: `idle_units` × 0.492 µs of idle time after every cell,
    /// so one cell every `C + idle_units·0.492 µs`. With `host_buffer_stall`
    /// the SBA-200's pipeline also stalls 7 or 8 cell times where a 1 KB
    /// cluster mbuf of the PDU ends ([`TxSpacing::cell_level`] builds it from
    /// an interval).
    Cell {
        idle_units: u32,
        host_buffer_stall: bool,
    },
    /// Cell-burst spacing: bursts of `burst` cells back to back, burst starts
    /// `period` apart ([`TxSpacing::cell_burst`] picks them from a rate).
    CellBurst { burst: u32, period: SimTime },
}

/// A switch output port and the link it drives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PortSpec {
    pub rate: BitRate,
    /// Propagation delay of the link to the next switch or host.
    pub delay: SimTime,
    /// Buffer in cells (the cell in transmission included); the era's switches: 256.
    pub buffer_cells: u32,
    pub policy: DropPolicy,
    /// CLP-selective discard: a cell with CLP = 1 that finds this many cells or
    /// more in the buffer is dropped (cause `Clp`); CLP = 0 cells are lost only
    /// to a full buffer. 1..=`buffer_cells`; `None`: off.
    pub clp1_threshold_cells: Option<u32>,
}

/// What a port does with cells when its buffer fills.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    TailDrop,
    /// Partial Packet Discard.
    Ppd,
    /// Early Packet Discard (and PPD on cells it must drop mid-PDU).
    Epd {
        threshold_cells: u32,
    },
}

/// A unidirectional VC from `src` to `dst`, labelled `vpi`/`vci` on the access link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitSpec {
    pub src: HostId,
    pub dst: HostId,
    pub vpi: u16,
    pub vci: u16,
    /// The switch output ports traversed, in order (empty: host to host).
    pub hops: Vec<Hop>,
}

/// One switch output port a circuit traverses, and its VPI/VCI after translation there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub port: usize,
    pub vpi: u16,
    pub vci: u16,
}

/// Fast trains or the per-cell reference.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fidelity {
    Train,
    PerCell,
}

/// An adapter or a port, for error messages and logs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Element {
    Adapter(HostId),
    Port(usize),
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Element::Adapter(h) => write!(f, "adapter of host {h}"),
            Element::Port(p) => write!(f, "port {p}"),
        }
    }
}
