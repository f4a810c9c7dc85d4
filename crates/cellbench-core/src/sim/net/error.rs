//! Why a topology is refused: one variant per rule, each naming the offending element
//! and value, and its one-line message.

use super::{CircuitId, Element, HostId};
use crate::atm::gcra::ContractError;
use crate::time::{BitRate, SimTime};
use std::fmt;

/// Where a topology is refused. Every variant names the offending element and value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TopologyError {
    /// A link rate whose cell time is not between 1 ps and `SimTime::MAX` (0 b/s, or above 424 Tb/s).
    BadRate { element: Element, rate: BitRate },
    /// A peak-cell-rate interval shorter than the link's cell time.
    SpacingTooShort {
        host: HostId,
        interval: SimTime,
        cell_time: SimTime,
    },
    /// Cell-burst spacing with an empty burst, or bursts closer than they last.
    BadBurst {
        host: HostId,
        burst: u32,
        period: SimTime,
        cell_time: SimTime,
    },
    /// Per-VC pacing faster than the source adapter's link, or of a circuit
    /// that does not exist, or paced twice.
    BadPacing {
        circuit: CircuitId,
        interval: SimTime,
        cell_time: SimTime,
    },
    /// A policer at a port that does not exist.
    PolicerPort { policer: usize, port: usize },
    /// A policer whose contract is refused.
    BadContract {
        policer: usize,
        error: ContractError,
    },
    /// A policer whose label no circuit arrives with at its port.
    PolicerMatchesNothing {
        policer: usize,
        port: usize,
        vpi: u16,
        vci: Option<u16>,
    },
    /// Two policers match the same circuit at the same port.
    PolicerOverlap {
        port: usize,
        circuit: CircuitId,
        policers: (usize, usize),
    },
    /// A VP cross-connect at a port that does not exist, or that no circuit uses.
    VpCrossConnectUnused { port: usize, vpi: u16 },
    /// A circuit through a VP cross-connect that changes its VCI there.
    VpChangesVci {
        circuit: CircuitId,
        port: usize,
        vci_in: u16,
        vci_out: u16,
    },
    /// Circuits leaving a VP cross-connect on one VPI that arrive on different
    /// links or VPIs (a cross-connect maps one VP to one VP).
    VpMerge {
        port: usize,
        vpi: u16,
        circuits: (CircuitId, CircuitId),
    },
    /// A port with no buffer.
    ZeroBuffer { port: usize },
    /// Flow control at a port that does not exist, twice at one port, or with no credit.
    BadCredits { port: usize, credits: u32 },
    /// ABR parameters of a circuit that cannot run (`abr.rs`).
    BadAbrSource {
        circuit: CircuitId,
        reason: &'static str,
    },
    /// An ABR behaviour at a port that cannot run (`abr.rs`).
    BadAbrPort { port: usize, reason: &'static str },
    /// An EPD threshold outside 1..=buffer_cells.
    EpdThreshold {
        port: usize,
        threshold: u32,
        buffer: u32,
    },
    /// A CLP-1 threshold outside 1..=buffer_cells.
    Clp1Threshold {
        port: usize,
        threshold: u32,
        buffer: u32,
    },
    /// A circuit naming a host that does not exist.
    NoSuchHost {
        circuit: CircuitId,
        host: HostId,
        hosts: usize,
    },
    /// A circuit naming a port that does not exist.
    NoSuchPort {
        circuit: CircuitId,
        port: usize,
        ports: usize,
    },
    /// A circuit traversing the same port twice.
    PortTwice { circuit: CircuitId, port: usize },
    /// A VPI above 4095 (the NNI's 12 bits).
    VpiTooLarge { circuit: CircuitId, vpi: u16 },
    /// Two circuits leaving the same adapter or port with the same VPI/VCI.
    LabelClash {
        element: Element,
        vpi: u16,
        vci: u16,
        circuits: (CircuitId, CircuitId),
    },
    /// The circuits route cells around a loop of ports (not supported in this version).
    PortCycle { port: usize },
    /// More circuits, ports or hops than the simulator indexes (2^32, 2^32, 2^16).
    TooLarge { what: &'static str, count: usize },
    /// A refused Ethernet segment or framed circuit.
    Ethernet(super::ether::EtherError),
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TopologyError::*;
        match *self {
            BadRate { element, rate } => write!(
                f,
                "{element}: rate {} b/s not allowed: 1 b/s to 424000000000000 b/s",
                rate.bps()
            ),
            SpacingTooShort {
                host,
                interval,
                cell_time,
            } => write!(
                f,
                "adapter of host {host}: peak-cell-rate interval {} ps not allowed: at least \
                 the cell time {} ps",
                interval.as_ps(),
                cell_time.as_ps()
            ),
            BadBurst {
                host,
                burst,
                period,
                cell_time,
            } => write!(
                f,
                "adapter of host {host}: cell bursts of {burst} cells every {} ps not allowed: \
                 at least 1 cell, and a period of at least burst × cell time {} ps",
                period.as_ps(),
                cell_time.as_ps()
            ),
            BadPacing {
                circuit,
                interval,
                cell_time,
            } => write!(
                f,
                "circuit {circuit}: pacing interval {} ps not allowed: one pacing per existing \
                 circuit, at least its adapter's cell time {} ps",
                interval.as_ps(),
                cell_time.as_ps()
            ),
            PolicerPort { policer, port } => {
                write!(f, "policer {policer}: port {port} does not exist")
            }
            BadContract { policer, error } => write!(f, "policer {policer}: {error}"),
            PolicerMatchesNothing {
                policer,
                port,
                vpi,
                vci,
            } => match vci {
                Some(vci) => write!(
                    f,
                    "policer {policer}: no circuit arrives at port {port} with VPI/VCI \
                     {vpi}/{vci}: police a label that a circuit uses"
                ),
                None => write!(
                    f,
                    "policer {policer}: no circuit arrives at port {port} with VPI {vpi}: \
                     police a label that a circuit uses"
                ),
            },
            PolicerOverlap {
                port,
                circuit,
                policers: (a, b),
            } => write!(
                f,
                "port {port}: policers {a} and {b} both police circuit {circuit}: at most one \
                 policer per circuit per port"
            ),
            Ethernet(e) => write!(f, "{e}"),
            VpCrossConnectUnused { port, vpi } => write!(
                f,
                "VP cross-connect at port {port}, VPI {vpi}: no circuit leaves that port with \
                 that VPI"
            ),
            VpChangesVci {
                circuit,
                port,
                vci_in,
                vci_out,
            } => write!(
                f,
                "circuit {circuit}: VCI {vci_in} becomes {vci_out} at port {port}, a VP \
                 cross-connect: a VP switch keeps the VCI"
            ),
            VpMerge {
                port,
                vpi,
                circuits: (a, b),
            } => write!(
                f,
                "port {port}: circuits {a} and {b} leave on VP {vpi} of a VP cross-connect but \
                 arrive on different links or VPIs: a cross-connect maps one VP to one VP"
            ),
            BadCredits { port, credits } => write!(
                f,
                "port {port}: flow control with {credits} credits not allowed: one setting \
                 per existing port, at least 1 credit"
            ),
            BadAbrSource { circuit, reason } => {
                write!(f, "circuit {circuit}: ABR parameters not allowed: {reason}")
            }
            BadAbrPort { port, reason } => {
                write!(f, "port {port}: ABR behaviour not allowed: {reason}")
            }
            ZeroBuffer { port } => {
                write!(f, "port {port}: buffer of 0 cells not allowed: at least 1")
            }
            EpdThreshold {
                port,
                threshold,
                buffer,
            } => write!(
                f,
                "port {port}: EPD threshold {threshold} cells not allowed: 1 to the buffer \
                 size {buffer}"
            ),
            Clp1Threshold {
                port,
                threshold,
                buffer,
            } => write!(
                f,
                "port {port}: CLP-1 threshold {threshold} cells not allowed: 1 to the buffer \
                 size {buffer}"
            ),
            NoSuchHost {
                circuit,
                host,
                hosts,
            } => write!(
                f,
                "circuit {circuit}: host {host} does not exist: hosts are 0 to {}",
                hosts as i64 - 1
            ),
            NoSuchPort {
                circuit,
                port,
                ports,
            } => write!(
                f,
                "circuit {circuit}: port {port} does not exist: ports are 0 to {}",
                ports as i64 - 1
            ),
            PortTwice { circuit, port } => {
                write!(
                    f,
                    "circuit {circuit}: traverses port {port} twice: each port at most once"
                )
            }
            VpiTooLarge { circuit, vpi } => {
                write!(f, "circuit {circuit}: VPI {vpi} not allowed: 0 to 4095")
            }
            LabelClash {
                element,
                vpi,
                vci,
                circuits: (a, b),
            } => write!(
                f,
                "{element}: circuits {a} and {b} both leave with VPI/VCI {vpi}/{vci}: labels \
                 on a link must differ"
            ),
            PortCycle { port } => write!(
                f,
                "port {port}: circuits route cells around a loop of ports through it: only \
                 loop-free routings are supported"
            ),
            TooLarge { what, count } => write!(f, "{count} {what} not allowed: too many"),
        }
    }
}

impl std::error::Error for TopologyError {}
