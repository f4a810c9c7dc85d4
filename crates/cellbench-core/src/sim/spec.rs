//! A run described as data: a star testbed (every host on one output-buffered
//! switch) and a list of connections with NetSpec-style traffic. This is what
//! the experiment language and the front ends hand to the simulator, as JSON;
//! unknown keys are errors, and every value is checked before anything runs.

use super::clock::FlatOut;
use super::era::{DEFAULT_PORT_BUFFER_CELLS, FIBRE_PS_PER_M, IFQ_MAXLEN, MACHINE_ROOM_DELAY};
use super::explain::{self, classify, lockstep_cycle, Facts, LimitedBy, LockstepCycle};
use super::guard::DEFAULT_EVENT_BUDGET;
use super::net::{
    AdapterModel, AdapterSpec, CircuitSpec, DropPolicy, Fidelity, FlowControl, Hop, PacedQuantity,
    Place, PolicerCounters, PolicerSpec, PortCounters, PortSpec, SpacingMode, Topology, TxSpacing,
    VcPacing,
};
use super::world::{
    run, run_captured, validate, Protocol, RunResult, Scenario, ScenarioError, TraceRecord,
    TransferSpec,
};
use crate::atm::gcra::{Action, CellRate, Contract};
use crate::atm::phy::CELL_BITS;
use crate::atm::phy::{Framing, Phy};
use crate::host::dist::Dist;
use crate::host::profile::{HostProfile, UnknownProfile};
use crate::host::rr::Transaction;
use crate::host::ttcp::{Limit, Pace};
use crate::tcp::Flavour;
use crate::time::BitRate;
use crate::time::SimTime;
use crate::wire::llc_snap::Encap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    #[serde(default = "one")]
    pub seed: u64,
    #[serde(default)]
    pub replication: u32,
    #[serde(default)]
    pub trace: bool,
    /// Time series: per connection its sender's cwnd, ssthresh and flight; per
    /// port its occupancy (`cwnd_series`, `queue_series` in the results).
    #[serde(default)]
    pub series: bool,
    #[serde(default = "an_hour")]
    pub time_limit_s: f64,
    /// The run's event budget (`sim::guard`); None: the default.
    #[serde(default)]
    pub max_events: Option<u64>,
    #[serde(default)]
    pub per_cell: bool,
    #[serde(default)]
    pub switch: SwitchSpec,
    /// A site's switch where it differs from `switch` (its output ports: to its
    /// hosts, and onto the trunks that leave the site).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sites: BTreeMap<String, SwitchSpec>,
    pub hosts: Vec<HostSpec>,
    /// Links between sites' switches (none: every host on one switch).
    #[serde(default)]
    pub trunks: Vec<TrunkSpec>,
    pub connections: Vec<ConnSpec>,
    /// An ATM cell tester: every cell leaving one place into a pcap file
    /// (`sim::capture`); None: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<CellsSpec>,
}

/// Where the cell tester sits and the file it writes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CellsSpec {
    /// A place by its name ([`RunSpec::tester_places`]): a switch output port
    /// as the ports table names it (a host's name for the port to it, `trunk
    /// a->b`, or its number) or `adapter:HOST`.
    pub place: String,
    /// The pcap file; its description goes beside it, in `PATH.json`.
    pub path: String,
    /// The slot the tester counts inter-arrival times in, µs, when it is not
    /// the link's modelled cell time (an instrument's own unit; None: the link's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_us: Option<f64>,
}

/// What the cell tester wrote.
#[derive(Clone, Debug, Serialize)]
pub struct CellsResult {
    pub place: String,
    /// The link, in words.
    pub link: String,
    pub path: String,
    pub phy: String,
    pub cell_time_ps: u64,
    /// The tester's slot (`CellsSpec::slot_us`), or the link's cell time.
    pub slot_ps: u64,
    pub cells: u64,
    pub pdus: u64,
    /// Cells decided to leave after the run's end (not in the file).
    pub cells_after_end: u64,
}

/// A link between two sites' switches, both directions, each an output port
/// with the site switch's buffer and policy.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrunkSpec {
    pub from: String,
    pub to: String,
    #[serde(default = "oc3c")]
    pub phy: String,
    /// One-way propagation delay.
    pub delay_ms: f64,
    /// Usage parameter control on the from→to direction: every cell of VP 0
    /// (where connections run) entering that port is policed.
    #[serde(default)]
    pub upc: Option<UpcSpec>,
}

impl UpcSpec {
    fn contract(&self, what: &str) -> Result<Contract, ScenarioError> {
        let t = time_in(&format!("{what}: UPC T"), self.t_us, 1e6, "µs", true)?;
        let tau = time_in(&format!("{what}: UPC tau"), self.tau_us, 1e6, "µs", false)?;
        let pcr = CellRate::from_interval(t).map_err(|e| err(format!("{what}: {e}")))?;
        Ok(Contract::Cbr { pcr, cdvt: tau })
    }
}

/// A CBR contract GCRA(T, τ) and what to do with non-conforming cells.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UpcSpec {
    pub t_us: f64,
    pub tau_us: f64,
    #[serde(default = "discard")]
    pub action: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    #[serde(default = "default_buffer")]
    pub buffer_cells: u32,
    #[serde(default = "tail_drop")]
    pub policy: String,
    #[serde(default)]
    pub epd_threshold_cells: Option<u32>,
    /// CLP-selective discard at every output port: cells with CLP = 1 (tagged
    /// by a UPC) that find this many cells queued are dropped (None: off).
    #[serde(default)]
    pub clp1_threshold_cells: Option<u32>,
    /// Hop-by-hop flow control at every output port: "none" or "credit" (each VC
    /// may have `credits` cells in or on the way to the port; `sim::net::credit`).
    #[serde(default = "no_flow_control", skip_serializing_if = "is_none_text")]
    pub flow_control: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credits: Option<u32>,
}

fn no_flow_control() -> String {
    "none".into()
}
fn is_none_text(s: &str) -> bool {
    s == "none"
}

/// What every output port of one switch applies.
#[derive(Copy, Clone)]
struct PortRules {
    buffer_cells: u32,
    policy: DropPolicy,
    clp1_threshold_cells: Option<u32>,
    credits: Option<u32>,
}

impl SwitchSpec {
    /// The switch's port rules, checked; `what` names the switch in errors.
    fn rules(&self, what: &str) -> Result<PortRules, ScenarioError> {
        let buffer = self.buffer_cells;
        if buffer == 0 {
            return Err(err(format!(
                "{what} buffer_cells 0: every output port needs at least 1 cell"
            )));
        }
        let policy = match (self.policy.as_str(), self.epd_threshold_cells) {
            ("tail-drop", _) => DropPolicy::TailDrop,
            ("ppd", _) => DropPolicy::Ppd,
            ("epd", Some(threshold_cells)) => DropPolicy::Epd { threshold_cells },
            ("epd", None) => DropPolicy::Epd {
                threshold_cells: buffer * 3 / 4,
            },
            (other, _) => {
                return Err(err(format!(
                    "{what} policy {other:?}: expected one of tail-drop, ppd, epd"
                )))
            }
        };
        if let Some(t) = self.clp1_threshold_cells {
            if t == 0 || t > buffer {
                return Err(err(format!(
                    "{what} clp1_threshold_cells {t}: must be 1 to buffer_cells ({buffer})"
                )));
            }
        }
        let credits = match (self.flow_control.as_str(), self.credits) {
            ("none", None) => None,
            ("none", Some(n)) => {
                return Err(err(format!(
                    "{what} credits {n}: credits need flow_control = credit"
                )))
            }
            ("credit", Some(n)) if n >= 1 => Some(n),
            ("credit", other) => {
                return Err(err(format!(
                    "{what} flow_control credit with credits {}: expected credits >= 1 \
                     (cells per VC per hop)",
                    other.map_or("unset".to_string(), |n| n.to_string())
                )))
            }
            (other, _) => {
                return Err(err(format!(
                    "{what} flow_control {other:?}: expected none or credit"
                )))
            }
        };
        Ok(PortRules {
            buffer_cells: buffer,
            policy,
            clp1_threshold_cells: self.clp1_threshold_cells,
            credits,
        })
    }
}

impl Default for SwitchSpec {
    fn default() -> Self {
        SwitchSpec {
            buffer_cells: DEFAULT_PORT_BUFFER_CELLS,
            policy: tail_drop(),
            epd_threshold_cells: None,
            clp1_threshold_cells: None,
            flow_control: no_flow_control(),
            credits: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    /// The site (switch) the host is attached to.
    #[serde(default = "lan")]
    pub site: String,
    #[serde(default = "ipc")]
    pub profile: String,
    #[serde(default = "taxi100")]
    pub phy: String,
    #[serde(default = "machine_room")]
    pub distance_m: f64,
    /// The adapter's idle time between PDUs, µs; `None`: what the adapter
    /// model gives for its spacing mode (`AdapterModel::timing`).
    #[serde(default)]
    pub pdu_gap_us: Option<f64>,
    /// The host adapter (`sba100`, `sba200`, `pca200`, `vma200`, `otto`);
    /// `None`: the one the host's profile had in its study
    /// (`AdapterModel::of_profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// How the adapter spaces cells when `spacing_us` is given: `cell-level`
    /// (default; SBA-200 driver 2.2.9) or `cell-burst` (driver 2.3.0: bursts
    /// of 6–11 cells, `spacing_us` the mean interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<String>,
    #[serde(default = "sunos411")]
    pub flavour: String,
    /// Adapter cell-level spacing: one cell every this many µs (rounded to the
    /// adapter's 0.492 µs idle-time grid, counted from the unframed line cell time).
    #[serde(default)]
    pub spacing_us: Option<f64>,
    /// With cell-level spacing on an adapter that has it (the SBA-200), the
    /// 7–8-slot stall where each 1 KB cluster mbuf of a PDU ends.
    #[serde(default = "yes")]
    pub stall: bool,
    /// What the adapter's per-VC pacing rate counts: "cells" (with headers),
    /// "payloads" (48-byte cell payloads) or "datagrams" (IP datagrams).
    #[serde(default = "cells")]
    pub pacing_counts: String,
    /// The adapter's interface queue in PDUs (None: BSD's ifq_maxlen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_queue_pdus: Option<usize>,
}

impl HostSpec {
    /// A host with every default (what `{"name": name}` reads as): a SPARCstation
    /// IPC with SunOS 4.1.1 on 100 Mb/s TAXI, a machine room from the switch.
    pub fn named(name: &str) -> HostSpec {
        HostSpec {
            name: name.to_string(),
            site: lan(),
            profile: ipc(),
            phy: taxi100(),
            distance_m: machine_room(),
            pdu_gap_us: None,
            adapter: None,
            spacing: None,
            flavour: sunos411(),
            spacing_us: None,
            stall: yes(),
            pacing_counts: cells(),
            tx_queue_pdus: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConnSpec {
    pub transmitter: String,
    pub receiver: String,
    #[serde(default = "tcp")]
    pub protocol: String,
    #[serde(default)]
    pub flavour: Option<String>,
    #[serde(default)]
    pub mtu: Option<u32>,
    #[serde(default = "vc_mux")]
    pub encap: String,
    #[serde(default = "max_buf")]
    pub sndbuf: u32,
    #[serde(default = "max_buf")]
    pub rcvbuf: u32,
    #[serde(default)]
    pub nodelay: bool,
    pub traffic: Traffic,
    #[serde(default)]
    pub receiver_blocksize: Option<u32>,
    /// The transmitter's adapter paces this connection's cells at this rate (Mb/s).
    #[serde(default)]
    pub pacing_mbps: Option<f64>,
    /// Seconds after t = 0, or with `after`, after the last of those connections ended.
    #[serde(default)]
    pub start_s: f64,
    /// Earlier connections (by index) that must all have ended before this one
    /// starts: NetSpec's `serial { }` on one timeline, the network as they left it.
    #[serde(default)]
    pub after: Vec<usize>,
}

impl ConnSpec {
    /// A connection with every default but its ends and traffic: TCP of the
    /// transmitter's flavour, VC-mux at its MTU, the largest SunOS buffers.
    pub fn new(transmitter: &str, receiver: &str, traffic: Traffic) -> ConnSpec {
        ConnSpec {
            transmitter: transmitter.to_string(),
            receiver: receiver.to_string(),
            protocol: tcp(),
            flavour: None,
            mtu: None,
            encap: vc_mux(),
            sndbuf: max_buf(),
            rcvbuf: max_buf(),
            nodelay: false,
            traffic,
            receiver_blocksize: None,
            pacing_mbps: None,
            start_s: 0.0,
            after: Vec::new(),
        }
    }
}

/// NetSpec traffic types (the sink side is implied by the connection).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Traffic {
    /// As fast as possible: ttcp's "full blast".
    Full {
        #[serde(default = "default_block")]
        blocksize: Param,
        #[serde(default)]
        nbytes: Option<u64>,
        #[serde(default)]
        duration_s: Option<f64>,
    },
    /// A block every period (constant rate); a block due while a write is pending is
    /// skipped. With `blocks`, that many blocks every period, written back to back.
    Burst {
        blocksize: Param,
        period_us: Param,
        duration_s: f64,
        #[serde(default = "one_block", skip_serializing_if = "is_one_block")]
        blocks: u32,
    },
    /// As `burst`, but a block due while a write is pending is queued.
    Burstq {
        blocksize: Param,
        period_us: Param,
        duration_s: f64,
        #[serde(default = "one_block", skip_serializing_if = "is_one_block")]
        blocks: u32,
    },
    /// netperf TCP_RR: the transmitter sends a request of `request` bytes, the
    /// receiver reads it whole and answers `response` bytes, the transmitter
    /// reads that whole and sends the next; transactions for `duration_s`.
    /// As netperf's -s and -S, the connection's `sndbuf` sizes both socket
    /// buffers of the transmitter (the client), `rcvbuf` both of the receiver.
    Rr {
        #[serde(default = "one_byte")]
        request: u32,
        #[serde(default = "one_byte")]
        response: u32,
        duration_s: f64,
    },
}

/// netperf's default request and response size (-r 1,1).
fn one_byte() -> u32 {
    1
}

/// A traffic parameter: a number, or a law it is drawn from anew for every block
/// (NetSpec's random-rate traffic): `{"uniform": [min, max]}`, `{"exponential": mean}`.
#[derive(Copy, Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a number, {\"uniform\": [min, max]} or {\"exponential\": mean}"
)]
pub enum Param {
    Value(f64),
    Law(Law),
}

#[derive(Copy, Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Law {
    Uniform([f64; 2]),
    Exponential(f64),
}

impl Param {
    pub fn dist(self) -> Dist {
        match self {
            Param::Value(v) => Dist::Fixed(v),
            Param::Law(Law::Uniform([lo, hi])) => Dist::Uniform(lo, hi),
            Param::Law(Law::Exponential(mean)) => Dist::Exponential(mean),
        }
    }
}

/// `limited_by` of a connection the simulated-time limit cut before it finished
/// when nothing else bound it (its evidence then starts "truncated:" either way).
pub const TRUNCATED: &str = "time-limit";
/// The same for a run that spent its event budget (`guard`) before it finished.
pub const BUDGET_CUT: &str = "event-budget";

/// The largest write a drawn block size may ask for (TCP); UDP datagrams stop at 65507.
const MAX_BLOCK: f64 = 1_048_576.0;

/// Trunk ports between sites: (from site, to site, output port at `from`).
struct Routes {
    links: Vec<(String, String, usize)>,
}

impl Routes {
    /// The trunk ports a cell crosses from site `a` to site `b`: the fewest
    /// trunks, ties broken by trunk order (breadth-first search).
    fn path(&self, a: &str, b: &str) -> Option<Vec<usize>> {
        let mut came: Vec<(String, Option<usize>)> = vec![(a.to_string(), None)];
        let mut frontier = 0;
        while frontier < came.len() {
            let here = came[frontier].0.clone();
            if here == b {
                let mut ports = Vec::new();
                let mut at = frontier;
                while let Some(link) = came[at].1 {
                    let (from, _, port) = &self.links[link];
                    ports.push(*port);
                    at = came
                        .iter()
                        .position(|(site, _)| site == from)
                        .expect("visited");
                }
                ports.reverse();
                return Some(ports);
            }
            for (i, (from, to, _)) in self.links.iter().enumerate() {
                if *from == here && !came.iter().any(|(site, _)| site == to) {
                    came.push((to.clone(), Some(i)));
                }
            }
            frontier += 1;
        }
        None
    }
}

/// Per-connection results.
#[derive(Clone, Debug, Serialize)]
pub struct ConnResult {
    pub transmitter: String,
    pub receiver: String,
    /// When the transmitter started and when the connection ended (both
    /// applications finished), seconds; null if it never did.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub completed: bool,
    pub bytes: u64,
    pub bytes_received: u64,
    pub sender_seconds: f64,
    pub receiver_seconds: f64,
    pub throughput_bps: f64,
    pub throughput_mbit_ttcp: f64,
    pub goodput_bps: f64,
    pub lockstep: bool,
    pub circular_wait_seconds: f64,
    pub writes: u64,
    /// The receiving application's read (recv) calls, as ttcp -r counts its I/O calls.
    pub reads: u64,
    pub data_segments: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
    pub receiver_acks: u64,
    pub delayed_acks: u64,
    pub window_updates: u64,
    pub pdus_dropped_at_adapter: u64,
    pub cells_lost: u64,
    /// PDUs of the data direction: sent by the adapter, and lost in the
    /// network (a cell dropped or policed); their ratio is the segment loss rate.
    pub data_pdus_sent: u64,
    pub data_pdus_lost: u64,
    /// Cells of this connection discarded by usage parameter control.
    pub cells_policed: u64,
    /// Cells of this connection tagged CLP = 1 by usage parameter control.
    pub cells_tagged: u64,
    /// Cells of this connection with CLP = 1 dropped at a switch's CLP-1
    /// threshold (CLP-selective discard). Like `cells_policed`, the data direction.
    pub cells_lost_clp: u64,
    /// UDP only: datagrams sent, received, dropped for want of receive buffer.
    pub datagrams_sent: Option<u64>,
    pub datagrams_received: Option<u64>,
    pub datagrams_dropped_no_buffer: Option<u64>,
    /// Request/response only: transactions completed within the test length
    /// (`sender_seconds`), and their rate per second (netperf's "Trans. Rate").
    pub transactions: Option<u64>,
    pub transaction_rate: Option<f64>,
    pub trace: Vec<String>,
    /// The lock-step's evidence in the trace: the steady timer-driven cycle
    /// (`sim::explain`). Null without a trace, or when timer ACKs do not pace the transfer.
    pub lockstep_cycle: Option<CycleResult>,
    /// What bound the connection (`sim::explain::LimitedBy`: application,
    /// lockstep, link, host-cpu, window, policing, cell-loss, nagle, undetermined)
    /// and one sentence of evidence with the numbers.
    pub limited_by: &'static str,
    pub limit_evidence: String,
    /// The facts behind it: the shortest round trip TCP saw (s), the most data
    /// in flight (bytes), the share of the transfer each CPU was busy, and the
    /// most TCP (UDP) payload the path carries in the largest segments (datagrams) sent, bit/s.
    pub min_rtt_s: Option<f64>,
    pub peak_flight_bytes: u32,
    pub sender_cpu_busy: Option<f64>,
    pub receiver_cpu_busy: Option<f64>,
    pub path_payload_bps: Option<f64>,
    /// With `series`: `[t_s, cwnd, ssthresh, flight]` (bytes), a sample
    /// whenever one changed, from the connection's establishment. Absent
    /// without `series`; empty for UDP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwnd_series: Option<Vec<(f64, u32, u32, u32)>>,
}

/// A delayed-ACK lock-step cycle as the trace shows it (`sim::explain::LockstepCycle`).
#[derive(Clone, Debug, Serialize)]
pub struct CycleResult {
    /// Timer-released ACKs in the steady part (the second half) of the trace.
    pub ticks: usize,
    /// Data bytes the transmitter released, on average, per timer ACK.
    pub bytes_per_tick: f64,
    /// Mean time between timer-released ACKs.
    pub period_s: f64,
    /// The throughput the cycle sustains: bytes per tick over the period.
    pub predicted_bps: f64,
    /// The most common pattern between two timer ACKs: `"A 8192 [idle]"`, ...
    pub pattern: Vec<String>,
    /// How many cycles showed exactly that pattern.
    pub pattern_repeats: usize,
}

impl From<LockstepCycle> for CycleResult {
    fn from(c: LockstepCycle) -> CycleResult {
        CycleResult {
            ticks: c.ticks,
            bytes_per_tick: c.bytes_per_tick,
            period_s: c.mean_period.as_secs_f64(),
            predicted_bps: c.predicted_bps(),
            pattern: c.pattern,
            pattern_repeats: c.pattern_repeats,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PortResult {
    pub port: usize,
    pub host: String,
    pub cells_in: u64,
    pub cells_out: u64,
    pub cells_lost: u64,
    pub peak_occupancy: u32,
    /// Of `cells_lost`, CLP = 1 cells refused at the CLP-1 threshold.
    pub cells_lost_clp: u64,
    /// Of `cells_lost`, by the rest of the causes (`CellLoss`): the buffer full
    /// (tail drop), the rest of a damaged PDU (PPD), whole PDUs refused at the
    /// EPD threshold, and cells a UPC at this port discarded.
    pub cells_lost_overflow: u64,
    pub cells_lost_ppd: u64,
    pub cells_lost_epd: u64,
    pub cells_lost_policed: u64,
    /// PDUs of which this port dropped at least one cell (EPD refusals included).
    pub pdus_damaged: u64,
    /// Cells a UPC at this port tagged CLP = 1.
    pub cells_tagged: u64,
    /// With `series`: `[t_s, cells]`, the occupancy just after accepted
    /// arrivals and 0 when the buffer empties (resolution:
    /// `Network::set_queue_series`). Absent without `series`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_series: Option<Vec<(f64, u32)>>,
}

/// A UPC policer's verdicts: did the stream meet its contract?
#[derive(Clone, Debug, Serialize)]
pub struct PolicerResult {
    pub trunk: String,
    pub cells_in: u64,
    pub conforming: u64,
    pub non_conforming: u64,
    pub met_contract: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct SpecResult {
    pub connections: Vec<ConnResult>,
    pub ports: Vec<PortResult>,
    pub policers: Vec<PolicerResult>,
    pub events: u64,
    pub sim_seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<CellsResult>,
}

fn one() -> u64 {
    1
}
fn an_hour() -> f64 {
    3600.0
}
fn default_buffer() -> u32 {
    DEFAULT_PORT_BUFFER_CELLS
}
fn tail_drop() -> String {
    "tail-drop".into()
}
fn ipc() -> String {
    "sparc-ipc".into()
}
fn discard() -> String {
    "discard".into()
}
fn cells() -> String {
    "cells".to_string()
}
/// What a host's adapter pacing counts, for a connection with `encap_header`
/// bytes of encapsulation.
fn paced_quantity(h: &HostSpec, encap_header: u32) -> Result<PacedQuantity, ScenarioError> {
    match h.pacing_counts.as_str() {
        "cells" => Ok(PacedQuantity::Cells),
        "payloads" => Ok(PacedQuantity::CellPayloads),
        "datagrams" => Ok(PacedQuantity::IpDatagrams { encap_header }),
        other => Err(err(format!(
            "host {:?}: pacing_counts {other:?}: expected one of {}",
            h.name,
            PacedQuantity::NAMES.join(", ")
        ))),
    }
}
impl HostSpec {
    /// The host's adapter: the one it names, else its profile's.
    pub fn adapter_model(&self) -> Result<AdapterModel, ScenarioError> {
        let names = || {
            AdapterModel::ALL
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.adapter.as_deref() {
            Some(name) => AdapterModel::by_name(name).ok_or_else(|| {
                err(format!(
                    "host {:?}: adapter {name:?}: expected one of {}",
                    self.name,
                    names()
                ))
            }),
            // Every profile has its adapter (tested): an unknown one is the error.
            None => AdapterModel::of_profile(&self.profile).ok_or_else(|| {
                err(format!(
                    "host {:?}: {}",
                    self.name,
                    UnknownProfile(self.profile.clone())
                ))
            }),
        }
    }
}
fn yes() -> bool {
    true
}
fn lan() -> String {
    "lan".into()
}
fn oc3c() -> String {
    "oc3c".into()
}
fn taxi100() -> String {
    "taxi100".into()
}
fn machine_room() -> f64 {
    // The lan-buffers testbed's fibre, in metres.
    (MACHINE_ROOM_DELAY.0 / FIBRE_PS_PER_M) as f64
}
fn sunos411() -> String {
    "sunos411".into()
}
fn tcp() -> String {
    "tcp".into()
}
fn vc_mux() -> String {
    "vc-mux".into()
}
fn max_buf() -> u32 {
    52_428
}
fn default_block() -> Param {
    Param::Value(8192.0)
}

fn one_block() -> u32 {
    1
}
fn is_one_block(n: &u32) -> bool {
    *n == 1
}

fn err(msg: String) -> ScenarioError {
    ScenarioError(msg)
}

/// The longest time a spec may give (any duration, delay, start or limit), seconds.
const MAX_SECONDS: f64 = 1e6;

/// A time in seconds from the user: finite and >= 0 (or > 0 when `positive`).
fn seconds(what: &str, v: f64, positive: bool) -> Result<SimTime, ScenarioError> {
    time_in(what, v, 1.0, "s", positive)
}

/// A time the user gave in `unit` (`per_second` of them make a second), checked
/// finite and >= 0 (> 0 when `positive`), at most 10^6 s; errors speak its unit.
fn time_in(
    what: &str,
    v: f64,
    per_second: f64,
    unit: &str,
    positive: bool,
) -> Result<SimTime, ScenarioError> {
    let secs = v / per_second;
    if !v.is_finite() || v < 0.0 || (positive && v == 0.0) || secs > MAX_SECONDS {
        let want = if positive { "> 0" } else { ">= 0" };
        let most = MAX_SECONDS * per_second;
        return Err(err(format!(
            "{what} {v} {unit}: must be a finite number {want} and at most {most:e} {unit}"
        )));
    }
    Ok(SimTime::from_secs_f64(secs))
}

impl RunSpec {
    /// A spec with every default but its hosts and connections: seed 1,
    /// replication 0, no trace, an hour's limit, one 256-cell tail-drop switch.
    pub fn new(hosts: Vec<HostSpec>, connections: Vec<ConnSpec>) -> RunSpec {
        RunSpec {
            seed: one(),
            replication: 0,
            trace: false,
            series: false,
            time_limit_s: an_hour(),
            max_events: None,
            per_cell: false,
            switch: SwitchSpec::default(),
            sites: BTreeMap::new(),
            hosts,
            trunks: Vec::new(),
            connections,
            cells: None,
        }
    }

    /// Parse a JSON spec; the message of a bad one names the key and what was expected.
    pub fn from_json(text: &str) -> Result<RunSpec, ScenarioError> {
        serde_json::from_str(text).map_err(|e| err(format!("run spec: {e}")))
    }

    /// Build the simulator's scenario: one switch, port h leading to host h.
    /// Every value the simulator would refuse is refused here, before anything runs.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        if self.hosts.is_empty() {
            return Err(err("hosts: at least one host is needed".into()));
        }
        let default_rules = self.switch.rules("switch")?;
        let mut site_rules = BTreeMap::new();
        for (site, sw) in &self.sites {
            let known = self.hosts.iter().any(|h| &h.site == site)
                || self.trunks.iter().any(|t| &t.from == site || &t.to == site);
            if !known {
                return Err(err(format!(
                    "switch {site}: no host or trunk is at site {site:?}"
                )));
            }
            site_rules.insert(site.as_str(), sw.rules(&format!("switch {site}"))?);
        }
        let rules_of = |site: &str| site_rules.get(site).copied().unwrap_or(default_rules);
        let mut flow_control = Vec::new();
        let host_index = |name: &str, what: &str| {
            self.hosts
                .iter()
                .position(|h| h.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
                    err(format!(
                        "{what} {name:?} is not a host of the testbed: expected one of {}",
                        names.join(", ")
                    ))
                })
        };
        for (i, h) in self.hosts.iter().enumerate() {
            if self.hosts[..i].iter().any(|o| o.name == h.name) {
                return Err(err(format!("host {:?} is named twice", h.name)));
            }
        }
        let mut adapters = Vec::new();
        let mut ports = Vec::new();
        let mut profiles = Vec::new();
        for h in &self.hosts {
            paced_quantity(h, 0)?;
            let phy: Phy = h
                .phy
                .parse()
                .map_err(|e| err(format!("host {:?}: {e}", h.name)))?;
            let rate = phy.cell_rate(Framing::Modelled);
            if !h.distance_m.is_finite() || h.distance_m < 0.0 || h.distance_m > 4.0e7 {
                return Err(err(format!(
                    "host {:?}: distance {} m: must be between 0 and 40000 km",
                    h.name, h.distance_m
                )));
            }
            let delay = SimTime((h.distance_m * FIBRE_PS_PER_M as f64).round() as u64);
            let model = h.adapter_model()?;
            let mode = match (h.spacing_us, h.spacing.as_deref()) {
                (_, Some(other)) if other != "cell-level" && other != "cell-burst" => {
                    return Err(err(format!(
                        "host {:?}: spacing {other:?}: expected cell-level or cell-burst",
                        h.name
                    )))
                }
                (None, _) => SpacingMode::Unspaced,
                (Some(_), Some("cell-burst")) => SpacingMode::CellBurst,
                (Some(_), _) => SpacingMode::CellLevel,
            };
            let timing = model.timing(mode);
            let gap = match h.pdu_gap_us {
                Some(us) => time_in(&format!("host {:?}: PDU gap", h.name), us, 1e6, "µs", false)?,
                None => timing.pdu_gap,
            };
            // The adapter's clock counts cell slots and its 0.492 µs idle units
            // from the unframed cell time (so 27 units give the published
            // 16.01 µs); the framer only jitters cells by a slot.
            let grid = phy.cell_rate(Framing::Neglected);
            let tx = match h.spacing_us {
                None => TxSpacing::None,
                Some(us) => {
                    let requested =
                        time_in(&format!("host {:?}: spacing", h.name), us, 1e6, "µs", true)?;
                    let spaced = match mode {
                        SpacingMode::CellBurst => TxSpacing::cell_burst(grid, requested),
                        _ => TxSpacing::cell_level(grid, requested, h.stall && timing.stall)
                            .map(|(tx, _)| tx),
                    };
                    spaced.map_err(|e| err(format!("host {:?}: {e}", h.name)))?
                }
            };
            let adapter_rate = match h.spacing_us {
                Some(_) => grid,
                None => rate,
            };
            adapters.push(AdapterSpec {
                rate: adapter_rate,
                delay,
                tx,
                pdu_gap: gap,
                tx_queue_pdus: match h.tx_queue_pdus {
                    Some(0) => {
                        return Err(err(format!(
                            "host {:?}: tx_queue_pdus 0: the interface queue holds at least 1",
                            h.name
                        )))
                    }
                    Some(n) => n,
                    None => IFQ_MAXLEN,
                },
            });
            let rules = rules_of(&h.site);
            if let Some(credits) = rules.credits {
                flow_control.push(FlowControl {
                    port: ports.len(),
                    credits,
                });
            }
            ports.push(PortSpec {
                rate,
                delay,
                buffer_cells: rules.buffer_cells,
                policy: rules.policy,
                clp1_threshold_cells: rules.clp1_threshold_cells,
            });
            let profile = HostProfile::by_name(&h.profile).ok_or_else(|| {
                err(format!(
                    "host {:?}: {}",
                    h.name,
                    UnknownProfile(h.profile.clone())
                ))
            })?;
            profiles.push(profile);
        }
        let mut policers = Vec::new();
        let routes = self.trunk_ports(&mut ports, &mut policers, &mut flow_control, &rules_of)?;
        let mut pacing = Vec::new();
        let mut circuits = Vec::new();
        let mut transfers = Vec::new();
        for (i, c) in self.connections.iter().enumerate() {
            let what = format!("connection {i} ({} -> {})", c.transmitter, c.receiver);
            let src = host_index(&c.transmitter, &format!("{what}: transmitter"))?;
            let dst = host_index(&c.receiver, &format!("{what}: receiver"))?;
            if src == dst {
                return Err(err(format!(
                    "{what}: transmitter and receiver are the same host"
                )));
            }
            let protocol = match c.protocol.as_str() {
                "tcp" => Protocol::Tcp,
                "udp" => Protocol::Udp,
                other => {
                    return Err(err(format!(
                        "{what}: protocol {other:?}: expected tcp or udp"
                    )))
                }
            };
            // Each end runs its own host's TCP, unless the connection names one for both.
            let flavour_of = |host: usize| -> Result<Flavour, ScenarioError> {
                c.flavour
                    .as_deref()
                    .unwrap_or(&self.hosts[host].flavour)
                    .parse()
                    .map_err(|e| err(format!("{what}: {e}")))
            };
            let flavour = flavour_of(src)?;
            let receiver_flavour = flavour_of(dst)?;
            let encap: Encap = c.encap.parse().map_err(|e| err(format!("{what}: {e}")))?;
            let mtu = c.mtu.unwrap_or(encap.default_mtu() as u32);
            // Each connection gets its own VCI pair on every link.
            let vci = 100 + 2 * i as u16;
            let fwd = circuits.len();
            for (from, to, vci) in [(src, dst, vci), (dst, src, vci + 1)] {
                let (a, b) = (&self.hosts[from].site, &self.hosts[to].site);
                let path = routes.path(a, b).ok_or_else(|| {
                    err(format!("{what}: no trunk joins site {a:?} to site {b:?}"))
                })?;
                let hops = path
                    .iter()
                    .chain(std::iter::once(&to))
                    .map(|&port| Hop { port, vpi: 0, vci })
                    .collect();
                circuits.push(CircuitSpec {
                    src: from,
                    dst: to,
                    vpi: 0,
                    vci,
                    hops,
                });
            }
            if let Some(mbps) = c.pacing_mbps {
                let counts = paced_quantity(&self.hosts[src], encap.header_len() as u32)?;
                // At most what the transmitter's adapter puts on its link, of
                // what the rate counts (a cell carries 48 bytes of a payload).
                let mut link = adapters[src].rate.mbps();
                let mut bound = "the adapter's cell rate".to_string();
                if counts != PacedQuantity::Cells {
                    link = link * 48.0 / 53.0;
                    bound = format!("the {} the adapter's cells carry", counts.describe());
                }
                let rate = (mbps.is_finite() && mbps > 0.0 && mbps <= link)
                    .then(|| BitRate((mbps * 1e6).round() as u64))
                    .ok_or_else(|| {
                        err(format!(
                            "{what}: pacing {mbps} Mb/s: must be > 0 and at most {bound}, \
                             {link} Mb/s"
                        ))
                    })?;
                let pace = VcPacing::of(fwd, rate, counts);
                pacing.push(pace.map_err(|e| err(format!("{what}: {e}")))?);
            }
            let mut transaction = None;
            let (blocksize, limit, pace) = match c.traffic {
                Traffic::Full {
                    blocksize,
                    nbytes,
                    duration_s,
                } => {
                    let limit = match (nbytes, duration_s) {
                        (Some(n), None) => Limit::Bytes(n),
                        (None, Some(d)) => {
                            Limit::Duration(seconds(&format!("{what}: duration"), d, true)?)
                        }
                        (None, None) => Limit::Bytes(32 * 1024 * 1024),
                        (Some(_), Some(_)) => {
                            return Err(err(format!("{what}: give nbytes or duration_s, not both")))
                        }
                    };
                    (blocksize, limit, Pace::Full)
                }
                Traffic::Burst {
                    blocksize,
                    period_us,
                    duration_s,
                    blocks,
                }
                | Traffic::Burstq {
                    blocksize,
                    period_us,
                    duration_s,
                    blocks,
                } => {
                    let queue = matches!(c.traffic, Traffic::Burstq { .. });
                    let d = seconds(&format!("{what}: duration"), duration_s, true)?;
                    if !(1..=1_000_000).contains(&blocks) {
                        return Err(err(format!(
                            "{what}: blocks {blocks}: blocks per period must be 1 to 1000000"
                        )));
                    }
                    (
                        blocksize,
                        Limit::Duration(d),
                        Pace::Every {
                            period_us: period_us.dist(),
                            queue,
                            blocks,
                        },
                    )
                }
                Traffic::Rr {
                    request,
                    response,
                    duration_s,
                } => {
                    if protocol != Protocol::Tcp {
                        return Err(err(format!(
                            "{what}: traffic rr is TCP_RR: protocol {:?} must be tcp",
                            c.protocol
                        )));
                    }
                    for (name, v) in [("request", request), ("response", response)] {
                        if !(1..=MAX_BLOCK as u32).contains(&v) {
                            return Err(err(format!(
                                "{what}: {name} {v} bytes: must be 1 to {MAX_BLOCK} bytes"
                            )));
                        }
                    }
                    transaction = Some(Transaction { request, response });
                    let d = seconds(&format!("{what}: duration"), duration_s, true)?;
                    // The request is the transmitter's write.
                    (Param::Value(request as f64), Limit::Duration(d), Pace::Full)
                }
            };
            // A fixed block size is the write size; a drawn one is capped by it.
            let max_block = if protocol == Protocol::Udp {
                65_507.0
            } else {
                MAX_BLOCK
            };
            let size = blocksize.dist();
            size.check(&format!("{what}: blocksize"), max_block)
                .map_err(|e| err(e.to_string()))?;
            if let Dist::Fixed(least) | Dist::Uniform(least, _) = size {
                if least < 1.0 {
                    return Err(err(format!(
                        "{what}: blocksize {size}: a block is at least 1 byte"
                    )));
                }
            }
            if let Pace::Every { period_us, .. } = pace {
                // A source cannot write blocks more often than one write() takes: a
                // shorter period only adds due-and-skipped blocks (events) to the run.
                let floor = profiles[src].syscall.as_us_f64();
                let least = match period_us {
                    Dist::Fixed(v) | Dist::Uniform(v, _) | Dist::Exponential(v) => v,
                };
                if least < floor {
                    return Err(err(format!(
                        "{what}: block period {period_us} µs: at least {floor} µs, the time \
                         one write() takes on {} (no host writes blocks more often)",
                        profiles[src].name
                    )));
                }
            }
            let (buflen, block_size) = match size {
                Dist::Fixed(v) => (v.round() as u32, None),
                Dist::Uniform(_, hi) => (hi.round() as u32, Some(size)),
                Dist::Exponential(_) => (max_block as u32, Some(size)),
            };
            transfers.push(TransferSpec {
                protocol,
                sender: src,
                receiver: dst,
                circuit: fwd,
                return_circuit: fwd + 1,
                flavour,
                receiver_flavour,
                mtu,
                encap_header: encap.header_len() as u32,
                sndbuf: c.sndbuf,
                rcvbuf: c.rcvbuf,
                nodelay: c.nodelay,
                buflen,
                read_size: c.receiver_blocksize.unwrap_or(buflen),
                limit,
                pace,
                block_size,
                transaction,
                start: seconds(&format!("{what}: start"), c.start_s, false)?,
                after: c.after.clone(),
            });
        }
        let scenario = Scenario {
            topology: Topology {
                adapters,
                ports,
                circuits,
                policers,
                pacing,
                flow_control,
                ..Default::default()
            },
            hosts: profiles,
            transfers,
            seed: self.seed,
            replication: self.replication,
            fidelity: if self.per_cell {
                Fidelity::PerCell
            } else {
                Fidelity::Train
            },
            trace: self.trace,
            series: self.series,
            time_limit: seconds("time_limit_s", self.time_limit_s, true)?,
            event_budget: self.max_events.unwrap_or(DEFAULT_EVENT_BUDGET),
        };
        validate(&scenario)?;
        Ok(scenario)
    }

    /// One output port per trunk direction (after the hosts' ports); the
    /// routes between sites over them.
    fn trunk_ports(
        &self,
        ports: &mut Vec<PortSpec>,
        policers: &mut Vec<PolicerSpec>,
        flow_control: &mut Vec<FlowControl>,
        rules_of: &dyn Fn(&str) -> PortRules,
    ) -> Result<Routes, ScenarioError> {
        // A site without hosts is a transit switch (a public network's).
        let mut links = Vec::new();
        for (i, t) in self.trunks.iter().enumerate() {
            let what = format!("trunk {i} ({} -> {})", t.from, t.to);
            if t.from == t.to {
                return Err(err(format!("{what}: a trunk joins two different sites")));
            }
            let phy: Phy = t.phy.parse().map_err(|e| err(format!("{what}: {e}")))?;
            let rate = phy.cell_rate(Framing::Modelled);
            let delay = time_in(&format!("{what}: delay"), t.delay_ms, 1e3, "ms", false)?;
            if let Some(u) = &t.upc {
                policers.push(PolicerSpec {
                    port: ports.len(),
                    vpi: 0,
                    vci: None,
                    contract: u.contract(&what)?,
                    action: match u.action.as_str() {
                        "discard" => Action::Discard,
                        "tag" => Action::Tag,
                        other => {
                            return Err(err(format!(
                                "{what}: UPC action {other:?}: expected discard or tag"
                            )))
                        }
                    },
                });
            }
            for (from, to) in [(&t.from, &t.to), (&t.to, &t.from)] {
                // The port onto the trunk is the `from` site's switch's.
                let rules = rules_of(from);
                if let Some(credits) = rules.credits {
                    flow_control.push(FlowControl {
                        port: ports.len(),
                        credits,
                    });
                }
                links.push((from.clone(), to.clone(), ports.len()));
                ports.push(PortSpec {
                    rate,
                    delay,
                    buffer_cells: rules.buffer_cells,
                    policy: rules.policy,
                    clp1_threshold_cells: rules.clp1_threshold_cells,
                });
            }
        }
        Ok(Routes { links })
    }

    /// Check, build and run; results per connection and per switch port.
    pub fn run(&self) -> Result<SpecResult, ScenarioError> {
        let scenario = self.scenario()?;
        let Some(cells) = &self.cells else {
            let r: RunResult = run(&scenario)?;
            return Ok(self.results(&scenario, &r));
        };
        let (place, link, phy, cell_time, slot) =
            self.describe_capture(&scenario, &cells.place, cells.slot_us, "sim", &cells.path)?;
        let fail =
            |e: &dyn std::fmt::Display| err(format!("cells: cannot write {}: {e}", cells.path));
        let file = std::fs::File::create(&cells.path).map_err(|e| fail(&e))?;
        let out: Box<dyn std::io::Write> =
            Box::new(std::io::BufWriter::with_capacity(64 << 10, file));
        let (r, counts) = run_captured(&scenario, &mut FlatOut, Some((place, out)))?;
        let counts = counts.expect("a tester was given");
        let mut result = self.results(&scenario, &r);
        result.cells = Some(CellsResult {
            place: cells.place.clone(),
            link,
            path: cells.path.clone(),
            phy,
            cell_time_ps: cell_time.as_ps(),
            slot_ps: slot.as_ps(),
            cells: counts.cells,
            pdus: counts.pdus,
            cells_after_end: counts.after_end,
        });
        Ok(result)
    }

    /// Where a capture is taken (`place`, a name of [`RunSpec::tester_places`]),
    /// written down beside its file in `PATH.json` for readers (`cellbench
    /// cells`): the link in words, its physical layer and modelled cell time,
    /// and the slot a tester counts in (`slot_us`, or that cell time). The
    /// simulator's captures and the emulator's `--pcap` are described alike.
    /// Returns the place, the link, the phy, the cell time and the slot.
    pub fn describe_capture(
        &self,
        scenario: &Scenario,
        place: &str,
        slot_us: Option<f64>,
        engine: &str,
        path: &str,
    ) -> Result<(Place, String, String, SimTime, SimTime), ScenarioError> {
        let (at, link, phy) = self.tester_place(place)?;
        let cell_time = match at {
            Place::Adapter(h) => scenario.topology.adapters[h].rate,
            Place::Port(p) => scenario.topology.ports[p].rate,
            Place::Receiver(_) => unreachable!("tester_place names no receiver"),
        }
        .time_for_bits(CELL_BITS);
        let slot = match slot_us {
            Some(us) => time_in("cells: slot", us, 1e6, "µs", true)?,
            None => cell_time,
        };
        let payload = match engine {
            "sim" => {
                "simulated PDUs: the PDU's number in the run (8 bytes, big-endian), \
                      zeros, and a valid AAL5 trailer"
            }
            _ => "the emulated datagrams' own AAL5 PDUs",
        };
        let description = serde_json::json!({
            "format": "cellbench-cells",
            "version": 1,
            "engine": engine,
            "place": place,
            "link": link,
            "phy": phy,
            "cell_time_ps": cell_time.as_ps(),
            "slot_ps": slot.as_ps(),
            "seed": self.seed,
            "replication": self.replication,
            "time": match engine {
                "sim" => "each cell's start on the link, from the run's start",
                _ => "each cell's start on the link, from the emulator's start",
            },
            "payload": payload,
        });
        let fail = |e: &dyn std::fmt::Display| err(format!("cells: cannot write {path}.json: {e}"));
        let text = serde_json::to_string_pretty(&description).map_err(|e| fail(&e))?;
        std::fs::write(format!("{path}.json"), text + "\n").map_err(|e| fail(&e))?;
        Ok((at, link, phy, cell_time, slot))
    }

    /// Every place a cell tester can sit, by the name `cells` takes: each
    /// switch output port as the ports table names it (a host's name for the
    /// port to it, `trunk a->b`), then each host's adapter (`adapter:HOST`).
    pub fn tester_places(&self) -> Vec<String> {
        let mut names = self.port_labels();
        names.extend(self.hosts.iter().map(|h| format!("adapter:{}", h.name)));
        names
    }

    /// The place a tester name means (a name of [`RunSpec::tester_places`], or a
    /// port's number), the link in words and its physical layer.
    pub fn tester_place(&self, name: &str) -> Result<(Place, String, String), ScenarioError> {
        let labels = self.port_labels();
        let port = labels
            .iter()
            .position(|l| l == name)
            .or_else(|| name.parse::<usize>().ok().filter(|&p| p < labels.len()));
        if let Some(p) = port {
            let phy = match self.hosts.get(p) {
                Some(h) => h.phy.clone(),
                None => self.trunks[(p - self.hosts.len()) / 2].phy.clone(),
            };
            let to = match self.hosts.get(p) {
                Some(h) => format!("to host {}", h.name),
                None => format!("onto {}", labels[p]),
            };
            return Ok((Place::Port(p), format!("switch output port {p} {to}"), phy));
        }
        if let Some(host) = name.strip_prefix("adapter:") {
            if let Some(h) = self.hosts.iter().position(|x| x.name == host) {
                let link = format!("host {host}'s adapter onto its access link");
                return Ok((Place::Adapter(h), link, self.hosts[h].phy.clone()));
            }
        }
        Err(err(format!(
            "cells {name:?}: no such switch output port or adapter: expected one of {} \
             (a port also by its number, 0..={})",
            self.tester_places().join(", "),
            labels.len().saturating_sub(1)
        )))
    }

    /// What a switch output port leads to: its host's name, or "trunk a->b".
    /// Every switch output port's name, in port order (the ports table's `host`):
    /// one per host (the port to it), then two per trunk (one per direction).
    pub fn port_labels(&self) -> Vec<String> {
        (0..self.hosts.len() + 2 * self.trunks.len())
            .map(|p| self.port_label(p))
            .collect()
    }

    fn port_label(&self, p: usize) -> String {
        match self.hosts.get(p) {
            Some(h) => h.name.clone(),
            None => {
                let Some(t) = self.trunks.get((p - self.hosts.len()) / 2) else {
                    return format!("port {p}");
                };
                let (a, b) = if (p - self.hosts.len()).is_multiple_of(2) {
                    (&t.from, &t.to)
                } else {
                    (&t.to, &t.from)
                };
                format!("trunk {a}->{b}")
            }
        }
    }

    /// Per switch port and per UPC, what the network's counters say, and with
    /// `series` each port's occupancy samples (`queue_series`, per port, as
    /// `Network::queue_series` gives them): the simulator's and the emulator's
    /// results share it.
    pub fn network_results(
        &self,
        ports: &[PortCounters],
        policers: &[PolicerCounters],
        queue_series: &[Vec<(SimTime, u32)>],
    ) -> (Vec<PortResult>, Vec<PolicerResult>) {
        let ports = ports
            .iter()
            .enumerate()
            .map(|(p, c)| PortResult {
                port: p,
                host: self.port_label(p),
                cells_in: c.cells_in,
                cells_out: c.cells_out,
                cells_lost: c.cells_lost.total(),
                peak_occupancy: c.peak_occupancy,
                cells_lost_clp: c.cells_lost.clp,
                cells_lost_overflow: c.cells_lost.overflow,
                cells_lost_ppd: c.cells_lost.ppd,
                cells_lost_epd: c.cells_lost.epd,
                cells_lost_policed: c.cells_lost.policing,
                pdus_damaged: c.pdus_damaged,
                cells_tagged: c.cells_tagged,
                queue_series: queue_series
                    .get(p)
                    .filter(|_| self.series)
                    .map(|s| s.iter().map(|&(t, n)| (t.as_secs_f64(), n)).collect()),
            })
            .collect();
        let policed: Vec<&TrunkSpec> = self.trunks.iter().filter(|t| t.upc.is_some()).collect();
        let policers = policers
            .iter()
            .zip(policed)
            .map(|(p, t)| PolicerResult {
                trunk: format!("{}->{}", t.from, t.to),
                cells_in: p.cells_in,
                conforming: p.conforming,
                non_conforming: p.non_conforming(),
                met_contract: p.non_conforming() == 0,
            })
            .collect();
        (ports, policers)
    }

    fn results(&self, scenario: &Scenario, r: &RunResult) -> SpecResult {
        let connections = r
            .transfers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let c = &self.connections[i];
                let records: Vec<TraceRecord> = r
                    .trace
                    .iter()
                    .filter(|x| x.transfer == i)
                    .copied()
                    .collect();
                let facts = Facts::gather(scenario, r, i, &|p| match self.hosts.get(p) {
                    Some(h) => format!("the port to {}", h.name),
                    None => format!("the {}", self.port_label(p)),
                });
                let mut why = classify(&facts);
                if let Some(n) = t.transactions {
                    // A stream's bounds (a rate against the path, the window, a paced
                    // load) say nothing of a transaction: what one took against the
                    // request's round trip does. The lock-step, losses and a saturated
                    // CPU bind a transaction as they bind a stream (two CPUs' shares
                    // added are a transaction's host work, which its evidence gives).
                    let saturated = facts
                        .cpu_busy
                        .is_some_and(|b| b[0].max(b[1]) >= explain::CPU_BUSY);
                    let binds = match why.limited_by {
                        LimitedBy::Lockstep | LimitedBy::Policing | LimitedBy::CellLoss => true,
                        LimitedBy::HostCpu => saturated,
                        _ => false,
                    };
                    if !binds {
                        why.limited_by = LimitedBy::Undetermined;
                        why.evidence = transaction_evidence(n, t);
                    }
                }
                // A cut run reports its rate so far (world.rs) and says it was cut.
                if !t.completed {
                    // Whatever else bound it, the run did not finish: say so first.
                    let by = match r.budget_cut {
                        Some(at) => format!(
                            "the event budget ({} events, max_events) at {:.3} s of \
                             simulated time",
                            scenario.event_budget,
                            at.as_secs_f64()
                        ),
                        None => format!("the simulated-time limit ({} s)", self.time_limit_s),
                    };
                    why.evidence = format!(
                        "truncated: cut by {by} after {} of its bytes were written, {:.3} \
                         Mb/s so far; {}",
                        t.bytes,
                        t.throughput_bps() / 1e6,
                        why.evidence
                    );
                }
                ConnResult {
                    transmitter: c.transmitter.clone(),
                    receiver: c.receiver.clone(),
                    start_s: t.started_at.map(SimTime::as_secs_f64),
                    end_s: t.ended_at.map(SimTime::as_secs_f64),
                    completed: t.completed,
                    bytes: t.bytes,
                    bytes_received: t.bytes_received,
                    sender_seconds: t.sender_seconds,
                    receiver_seconds: t.receiver_seconds,
                    throughput_bps: t.throughput_bps(),
                    throughput_mbit_ttcp: t.mbit_ttcp(),
                    goodput_bps: if t.receiver_seconds > 0.0 {
                        t.bytes_received as f64 * 8.0 / t.receiver_seconds
                    } else {
                        0.0
                    },
                    lockstep: t.lockstep(),
                    circular_wait_seconds: t.circular_wait_seconds,
                    writes: t.writes,
                    reads: t.reads,
                    data_segments: t.sender.data_segs_sent,
                    retransmitted_segments: t.sender.segs_retransmitted,
                    timeouts: t.sender.timeouts,
                    receiver_acks: t.receiver.acks_sent,
                    delayed_acks: t.receiver.delayed_acks,
                    window_updates: t.receiver.window_updates,
                    pdus_dropped_at_adapter: t.pdus_dropped_at_adapter,
                    cells_lost: r.circuits[scenario.transfers[i].circuit].cells_lost
                        + r.circuits[scenario.transfers[i].return_circuit].cells_lost,
                    data_pdus_sent: r.circuits[scenario.transfers[i].circuit].pdus_sent,
                    data_pdus_lost: r.circuits[scenario.transfers[i].circuit].pdus_lost,
                    cells_policed: r.circuits[scenario.transfers[i].circuit]
                        .lost_by_cause
                        .policing,
                    cells_tagged: r.circuits[scenario.transfers[i].circuit].cells_tagged,
                    cells_lost_clp: r.circuits[scenario.transfers[i].circuit].lost_by_cause.clp,
                    datagrams_sent: t.udp.map(|u| u.datagrams_sent),
                    datagrams_received: t.udp.map(|u| u.datagrams_received),
                    datagrams_dropped_no_buffer: t.udp.map(|u| u.dropped_no_buffer),
                    transactions: t.transactions,
                    transaction_rate: t.transactions.map(|n| {
                        if t.sender_seconds > 0.0 {
                            n as f64 / t.sender_seconds
                        } else {
                            0.0
                        }
                    }),
                    trace: records.iter().map(|x| x.line()).collect(),
                    lockstep_cycle: lockstep_cycle(&records).map(CycleResult::from),
                    // A cut run keeps a bound the evidence shows; without one, the cut is it.
                    limited_by: if t.completed || why.limited_by != LimitedBy::Undetermined {
                        why.limited_by.as_str()
                    } else if r.budget_cut.is_some() {
                        BUDGET_CUT
                    } else {
                        TRUNCATED
                    },
                    limit_evidence: why.evidence,
                    min_rtt_s: t.probe.min_rtt.map(|x| x.as_secs_f64()),
                    peak_flight_bytes: t.probe.peak_flight,
                    sender_cpu_busy: t.probe.cpu_busy.map(|b| b[0]),
                    receiver_cpu_busy: t.probe.cpu_busy.map(|b| b[1]),
                    path_payload_bps: facts.path.as_ref().map(|p| p.payload_bps),
                    cwnd_series: r.cwnd_series.get(i).filter(|_| self.series).map(|s| {
                        s.iter()
                            .map(|x| (x.at.as_secs_f64(), x.cwnd, x.ssthresh, x.flight))
                            .collect()
                    }),
                }
            })
            .collect();
        let (ports, policers) = self.network_results(&r.ports, &r.policers, &r.queue_series);
        SpecResult {
            connections,
            ports,
            policers,
            events: r.events,
            sim_seconds: r.end_time.as_secs_f64(),
            cells: None,
        }
    }
}

/// What one request/response transaction took: its period against the
/// shortest round trip of a request, and how busy each host's CPU was.
fn transaction_evidence(n: u64, t: &super::world::TransferResult) -> String {
    let mut s = format!(
        "request/response: {n} transactions in {:.2} s",
        t.sender_seconds
    );
    if n > 0 {
        s += &format!(", one every {:.3} ms", t.sender_seconds * 1e3 / n as f64);
    }
    if let Some(rtt) = t.probe.min_rtt {
        s += &format!(
            "; a request's round trip (to the response acknowledging it) at least {:.3} ms",
            rtt.as_secs_f64() * 1e3
        );
    }
    if let Some([a, b]) = t.probe.cpu_busy {
        s += &format!(
            "; CPU busy {:.0}% sender, {:.0}% receiver",
            a * 100.0,
            b * 100.0
        );
    }
    s
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::testbeds::LanBuffers;

    const TWO_HOSTS: &str = r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [
        {"transmitter": "a", "receiver": "b", "traffic": {"type": "full", "nbytes": 1048576}}]}"#;

    #[test]
    fn a_star_spec_runs_like_the_lan_testbed() {
        let r = RunSpec::from_json(TWO_HOSTS).unwrap().run().unwrap();
        let c = &r.connections[0];
        assert!(c.completed && c.bytes == 1 << 20 && c.throughput_mbit_ttcp > 10.0);
        // Data cells went out of port 1 (to b), ACK cells out of port 0 (to a).
        assert!(r.ports[1].cells_out > 20 * r.ports[0].cells_out);
    }

    #[test]
    fn paced_sources_send_one_block_per_period() {
        let paced = |kind: &str| {
            let traffic = format!(
                r#"{{"type": "{kind}", "blocksize": 8192, "period_us": 10000, "duration_s": 2}}"#
            );
            let text = TWO_HOSTS.replace(r#"{"type": "full", "nbytes": 1048576}"#, &traffic);
            RunSpec::from_json(&text)
                .unwrap()
                .run()
                .unwrap()
                .connections[0]
                .clone()
        };
        // burstq: every block that falls due is written: one at the start and one
        // every 10 ms of the 2 s (the clock starts at the first write).
        let q = paced("burstq");
        assert_eq!(q.writes, 201);
        assert_eq!(q.bytes, q.writes * 8192);
        // burst skips blocks that fall due while the writer is blocked: slow start
        // with a delayed first ACK fills the 52428-byte buffer in the first 80 ms.
        let b = paced("burst");
        assert!(b.writes < q.writes && b.writes > 190, "{}", b.writes);
    }

    #[test]
    fn random_rate_traffic_draws_sizes_and_gaps_from_its_laws() {
        let traffic = r#"{"type": "burstq", "blocksize": {"uniform": [1024, 7168]},
            "period_us": {"exponential": 10000}, "duration_s": 20}"#;
        let text = TWO_HOSTS.replace(r#"{"type": "full", "nbytes": 1048576}"#, traffic);
        let spec = RunSpec::from_json(&text).unwrap();
        let c = spec.run().unwrap().connections[0].clone();
        // About 20 s / 10 ms = 2000 blocks; the count of a Poisson process has sd ~45.
        assert!((1800..=2200).contains(&c.writes), "{}", c.writes);
        let mean = c.bytes as f64 / c.writes as f64;
        assert!((mean - 4096.0).abs() < 150.0, "{mean}");
        // Same seed, same draws; another replication, other draws.
        assert_eq!(spec.run().unwrap().connections[0].bytes, c.bytes);
        let other = RunSpec {
            replication: 1,
            ..spec.clone()
        };
        assert_ne!(other.run().unwrap().connections[0].bytes, c.bytes);
        // A law that makes no sense is refused.
        let bad = text.replace("[1024, 7168]", "[7168, 1024]");
        let e = RunSpec::from_json(&bad).unwrap().scenario().unwrap_err();
        assert!(
            e.to_string().contains("blocksize uniform(7168, 1024)"),
            "{e}"
        );
        let bad = text.replace(r#"{"exponential": 10000}"#, r#"{"pareto": 3}"#);
        assert!(RunSpec::from_json(&bad).is_err());
    }

    #[test]
    fn udp_loses_datagrams_to_a_slower_receiver_and_none_to_a_faster_one() {
        let udp = |receiver_profile: &str, blocksize: u32| {
            let text = format!(
                r#"{{"hosts": [{{"name": "a"}}, {{"name": "b", "profile": "{receiver_profile}"}}],
                "connections": [{{"transmitter": "a", "receiver": "b", "protocol": "udp",
                "traffic": {{"type": "full", "blocksize": {blocksize}, "nbytes": 2097152}}}}]}}"#
            );
            RunSpec::from_json(&text)
                .unwrap()
                .run()
                .unwrap()
                .connections[0]
                .clone()
        };
        // Receiving costs the IPC more than sending: its socket buffer overflows.
        let slow = udp("sparc-ipc", 8192);
        let (sent, got, dropped) = (
            slow.datagrams_sent.unwrap(),
            slow.datagrams_received.unwrap(),
            slow.datagrams_dropped_no_buffer.unwrap(),
        );
        assert_eq!(sent, 256);
        assert!(
            dropped > 0 && got + dropped == sent,
            "{got} + {dropped} != {sent}"
        );
        assert_eq!(slow.bytes_received, got * 8192);
        // A SPARCstation 10 keeps up with an IPC.
        let fast = udp("sparc-10", 8192);
        assert_eq!(fast.datagrams_received, Some(256));
        // 20000-byte datagrams leave as three IP fragments (three PDUs) each.
        let frag = udp("sparc-10", 20_000);
        assert_eq!(frag.datagrams_received, frag.datagrams_sent);
    }

    /// One-MSS streams both ways between an IRIX (4.4BSD rules) host and an NT host (or, with
    /// `flavour`, the connection's flavour at both ends).
    fn bsd_and_nt(flavour: &str) -> SpecResult {
        let conn = |from: &str, to: &str| {
            format!(
                r#"{{"transmitter": "{from}", "receiver": "{to}", {flavour} "mtu": 9188,
                "sndbuf": 9148, "rcvbuf": 9148,
                "traffic": {{"type": "full", "blocksize": 9148, "duration_s": 2}}}}"#
            )
        };
        let text = format!(
            r#"{{"hosts": [{{"name": "b", "site": "east", "phy": "oc3c", "profile": "sparc-20",
                        "flavour": "irix601"}},
                      {{"name": "n", "site": "east", "phy": "oc3c", "profile": "sparc-20",
                        "flavour": "nt351"}}],
            "connections": [{}, {}]}}"#,
            conn("b", "n"),
            conn("n", "b")
        );
        RunSpec::from_json(&text).unwrap().run().unwrap()
    }

    #[test]
    fn each_end_runs_its_own_hosts_tcp() {
        // A one-MSS window: the receiver's window-update rule decides. Into the NT
        // host it waits for NT's 200 ms delayed-ACK timer, whoever sends; into the
        // BSD host (update on half the buffer reopened) it goes at once.
        let r = bsd_and_nt("");
        let (into_nt, into_bsd) = (&r.connections[0], &r.connections[1]);
        let per_tick = 9148.0 * 8.0 / 0.2;
        assert!(into_nt.throughput_bps < 1.3 * per_tick, "{into_nt:?}");
        assert!(into_bsd.throughput_bps > 20.0 * into_nt.throughput_bps);
        assert_eq!(into_nt.limited_by, "lockstep");
        // A connection's flavour still sets both ends: NT's receiving into the IRIX host.
        let both = bsd_and_nt(r#""flavour": "nt351","#);
        assert!(both.connections[1].throughput_bps < 1.3 * per_tick);
    }

    /// Host l (local, OC-3c) and host m (remote: west, across a 1 ms OC-3c trunk)
    /// send to host r on the local switch (TAXI: the port to r is the bottleneck),
    /// each with `protocols`; `switch` is the switch block's JSON.
    fn local_and_remote(switch: &str, protocols: [&str; 2], per_cell: bool) -> SpecResult {
        let text = format!(
            r#"{{"switch": {switch}, "per_cell": {per_cell},
            "hosts": [{{"name": "l", "site": "east", "phy": "oc3c", "profile": "alpha-3000",
                        "flavour": "osf1"}},
                      {{"name": "m", "site": "west", "phy": "oc3c", "profile": "alpha-3000",
                        "flavour": "osf1"}},
                      {{"name": "r", "site": "east", "profile": "alpha-3000",
                        "flavour": "osf1"}}],
            "trunks": [{{"from": "west", "to": "east", "delay_ms": 1}}],
            "connections": [
              {{"transmitter": "l", "receiver": "r", "protocol": "{}", "sndbuf": 262144,
                "rcvbuf": 262144, "traffic": {{"type": "full", "duration_s": 0.3}}}},
              {{"transmitter": "m", "receiver": "r", "protocol": "{}", "sndbuf": 262144,
                "rcvbuf": 262144, "traffic": {{"type": "full", "duration_s": 0.3}}}}]}}"#,
            protocols[0], protocols[1]
        );
        RunSpec::from_json(&text).unwrap().run().unwrap()
    }

    #[test]
    fn credits_keep_every_port_from_overflowing() {
        // The 1 ms trunk hop's round trip at the OC-3c cell rate, and then some.
        let credits = r#"{"flow_control": "credit", "credits": 800}"#;
        for protocols in [["tcp", "tcp"], ["udp", "udp"], ["tcp", "udp"]] {
            let without = local_and_remote("{}", protocols, false);
            let lost: u64 = without.ports.iter().map(|p| p.cells_lost).sum();
            assert!(lost > 0, "{protocols:?}: no contention without credits");
            let with = local_and_remote(credits, protocols, false);
            for p in &with.ports {
                assert_eq!(p.cells_lost, 0, "{protocols:?}: {p:?}");
            }
            for c in &with.connections {
                assert_eq!(c.cells_lost, 0, "{protocols:?}: {c:?}");
                assert!(c.bytes_received > 0, "{protocols:?}: {c:?}");
            }
            // Both streams together fill the port to r (TAXI, 100 Mb/s of cells).
            let carried: u64 = with.connections.iter().map(|c| c.bytes_received).sum();
            let cells_per_s = (carried as f64 / 0.3) / 9140.0 * 192.0;
            assert!(
                cells_per_s > 0.7 * 100e6 / 424.0,
                "{protocols:?}: {cells_per_s}"
            );
            // Credit mode is deterministic.
            let again = local_and_remote(credits, protocols, false);
            assert_eq!(
                serde_json::to_string(&with).unwrap(),
                serde_json::to_string(&again).unwrap()
            );
        }
    }

    #[test]
    fn credits_that_never_run_out_change_nothing() {
        // One UDP stream alone, lossless: the credit FIFOs forward every cell when
        // the per-cell reference does.
        let one = |switch: &str| {
            let text = format!(
                r#"{{"switch": {switch}, "per_cell": true,
                "hosts": [{{"name": "m", "site": "west", "phy": "oc3c", "profile": "alpha-3000"}},
                          {{"name": "r", "site": "east", "phy": "oc3c", "profile": "alpha-3000"}}],
                "trunks": [{{"from": "west", "to": "east", "delay_ms": 1}}],
                "connections": [{{"transmitter": "m", "receiver": "r", "protocol": "tcp",
                  "traffic": {{"type": "full", "nbytes": 1048576}}}}]}}"#
            );
            RunSpec::from_json(&text).unwrap().run().unwrap()
        };
        let plain = one("{}");
        let credited = one(r#"{"flow_control": "credit", "credits": 100000}"#);
        let (a, b) = (&plain.connections[0], &credited.connections[0]);
        assert_eq!(a.throughput_bps, b.throughput_bps);
        assert_eq!(a.bytes_received, b.bytes_received);
        assert_eq!(a.end_s, b.end_s);
    }

    #[test]
    fn a_burst_of_blocks_is_written_back_to_back_every_period() {
        let run = |blocks: u32| {
            let text = format!(
                r#"{{"hosts": [{{"name": "a", "phy": "oc3c", "profile": "alpha-3000"}},
                          {{"name": "b", "phy": "oc3c", "profile": "alpha-3000"}}],
                "connections": [{{"transmitter": "a", "receiver": "b", "protocol": "udp",
                  "traffic": {{"type": "burstq", "blocksize": 8192, "period_us": 10000,
                               "duration_s": 0.1, "blocks": {blocks}}}}}]}}"#
            );
            RunSpec::from_json(&text)
                .unwrap()
                .run()
                .unwrap()
                .connections[0]
                .clone()
        };
        let (one, four) = (run(1), run(4));
        assert_eq!(
            four.datagrams_sent.unwrap(),
            4 * one.datagrams_sent.unwrap()
        );
        assert_eq!(four.datagrams_received, four.datagrams_sent);
        let e = RunSpec::from_json(
            r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [{"transmitter": "a",
            "receiver": "b", "traffic": {"type": "burst", "blocksize": 8192,
            "period_us": 10000, "duration_s": 1, "blocks": 0}}]}"#,
        )
        .unwrap()
        .scenario()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("blocks 0: blocks per period must be 1 to 1000000"),
            "{e}"
        );
    }

    #[test]
    fn credits_without_flow_control_are_refused() {
        let spec = |switch: &str| {
            RunSpec::from_json(&format!(
                r#"{{"switch": {switch}, "hosts": [{{"name": "a"}}, {{"name": "b"}}],
                "connections": [{{"transmitter": "a", "receiver": "b",
                  "traffic": {{"type": "full", "nbytes": 1000}}}}]}}"#
            ))
            .unwrap()
            .scenario()
        };
        let e = spec(r#"{"credits": 8}"#).unwrap_err().to_string();
        assert!(
            e.contains("credits 8: credits need flow_control = credit"),
            "{e}"
        );
        let e = spec(r#"{"flow_control": "credit"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected credits >= 1"), "{e}");
        let e = spec(r#"{"flow_control": "xon"}"#).unwrap_err().to_string();
        assert!(e.contains("expected none or credit"), "{e}");
        assert!(spec(r#"{"flow_control": "credit", "credits": 8}"#).is_ok());
        let e = RunSpec::from_json(
            r#"{"sites": {"nowhere": {"buffer_cells": 8}}, "hosts": [{"name": "a"},
            {"name": "b"}], "connections": [{"transmitter": "a", "receiver": "b",
            "traffic": {"type": "full", "nbytes": 1000}}]}"#,
        )
        .unwrap()
        .scenario()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("switch nowhere: no host or trunk is at site"),
            "{e}"
        );
    }

    /// Host a (west, OC-3c) and host b (east, OC-3c, paced at 60 Mb/s) blast
    /// UDP at host r (east, TAXI); the trunk west -> east polices VP 0 at one
    /// cell per 21.2 µs (20 Mb/s) and tags the excess. The port to r carries
    /// 100 Mb/s; the CLP = 0 load is 80 Mb/s.
    fn tagged_and_clean(clp1: Option<u32>, per_cell: bool) -> SpecResult {
        let switch = match clp1 {
            Some(t) => format!(r#"{{"clp1_threshold_cells": {t}}}"#),
            None => "{}".into(),
        };
        let text = format!(
            r#"{{"switch": {switch}, "per_cell": {per_cell},
            "hosts": [{{"name": "a", "site": "west", "phy": "oc3c", "profile": "alpha-3000"}},
                      {{"name": "b", "site": "east", "phy": "oc3c", "profile": "alpha-3000"}},
                      {{"name": "r", "site": "east", "profile": "alpha-3000"}}],
            "trunks": [{{"from": "west", "to": "east", "delay_ms": 0.1,
                         "upc": {{"t_us": 21.2, "tau_us": 0, "action": "tag"}}}}],
            "connections": [
              {{"transmitter": "a", "receiver": "r", "protocol": "udp",
                "traffic": {{"type": "full", "nbytes": 4194304}}}},
              {{"transmitter": "b", "receiver": "r", "protocol": "udp", "pacing_mbps": 60,
                "traffic": {{"type": "full", "nbytes": 4194304}}}}]}}"#
        );
        RunSpec::from_json(&text).unwrap().run().unwrap()
    }

    #[test]
    fn a_clp1_threshold_sacrifices_tagged_cells_to_spare_conforming_ones() {
        let without = tagged_and_clean(None, false);
        let (a, b) = (&without.connections[0], &without.connections[1]);
        assert!(a.cells_tagged > 0 && a.cells_lost > 0, "{a:?}");
        assert!(b.cells_lost > 0 && b.cells_tagged == 0, "{b:?}");
        assert_eq!(a.cells_lost_clp + b.cells_lost_clp, 0);

        let with = tagged_and_clean(Some(64), false);
        let (a, b) = (&with.connections[0], &with.connections[1]);
        assert_eq!(b.cells_lost, 0, "{b:?}");
        // (The 60 Mb/s pacing holds b's datagrams back: its interface queue
        // drops the excess before the network sees it.)
        assert_eq!(b.data_pdus_lost, 0);
        assert_eq!(b.datagrams_received, Some(b.data_pdus_sent));
        assert!(
            a.cells_lost_clp > 0 && a.cells_lost_clp == a.cells_lost,
            "{a:?}"
        );
        let to_r = &with.ports[2];
        assert_eq!(to_r.host, "r");
        assert_eq!(to_r.cells_lost_clp, to_r.cells_lost);
        assert!(to_r.peak_occupancy < 256, "{to_r:?}");
        // The tags are counted where the UPC is: the trunk port west -> east.
        let trunk = with.ports.iter().find(|p| p.host == "trunk west->east");
        assert_eq!(trunk.map(|p| p.cells_tagged), Some(a.cells_tagged));
        // The per-cell reference agrees on every count.
        let reference = tagged_and_clean(Some(64), true);
        let json = |r: &SpecResult| serde_json::to_string(&(&r.connections, &r.ports)).unwrap();
        assert_eq!(json(&reference), json(&with));
    }

    #[test]
    fn a_clp1_threshold_outside_the_buffer_is_refused() {
        for (bad, buffer) in [(0, 256), (257, 256), (101, 100)] {
            let text = TWO_HOSTS.replace(
                r#"{"hosts""#,
                &format!(
                    r#"{{"switch": {{"buffer_cells": {buffer}, "clp1_threshold_cells": {bad}}}, "hosts""#
                ),
            );
            let e = RunSpec::from_json(&text).unwrap().scenario().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("switch clp1_threshold_cells {bad}: must be 1 to buffer_cells ({buffer})")
            );
        }
        let ok = TWO_HOSTS.replace(
            r#"{"hosts""#,
            r#"{"switch": {"clp1_threshold_cells": 256}, "hosts""#,
        );
        let r = RunSpec::from_json(&ok).unwrap().run().unwrap();
        assert!(r.connections[0].completed);
    }

    #[test]
    fn constructors_give_what_json_defaults_give() {
        // One set of defaults: the presets' constructors and a spec's omitted keys.
        let text = r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [
            {"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}]}"#;
        let traffic = Traffic::Full {
            blocksize: default_block(),
            nbytes: None,
            duration_s: None,
        };
        let built = RunSpec::new(
            vec![HostSpec::named("a"), HostSpec::named("b")],
            vec![ConnSpec::new("a", "b", traffic)],
        );
        let parsed = RunSpec::from_json(text).unwrap();
        assert_eq!(format!("{built:?}"), format!("{parsed:?}"));
    }

    #[test]
    fn a_spec_reads_back_from_its_json() {
        let spec = LanBuffers {
            sndbuf: 20_480,
            nodelay: true,
            ..LanBuffers::default()
        }
        .spec(3, 2, true);
        let text = serde_json::to_string(&spec).unwrap();
        let back = RunSpec::from_json(&text).unwrap();
        assert_eq!(format!("{spec:?}"), format!("{back:?}"));
        assert!(text.contains(r#""sndbuf":20480"#), "{text}");
    }

    #[test]
    fn a_trace_carries_the_lockstep_cycle() {
        // 16K send, 24K receive: 8 KB released per 200 ms timer tick.
        let study = LanBuffers {
            sndbuf: 16_384,
            rcvbuf: 24_576,
            nbytes: 2 << 20,
            ..LanBuffers::default()
        };
        let traced = study.spec(1, 0, true).run().unwrap().connections[0].clone();
        assert!(traced.lockstep && !traced.trace.is_empty());
        let cycle = traced.lockstep_cycle.clone().expect("a timer-paced cycle");
        assert_eq!(cycle.pattern, ["B 0 [delack-timer]", "A 8192 [idle]"]);
        assert_eq!(cycle.bytes_per_tick, 8192.0);
        assert!((cycle.period_s - 0.2).abs() < 1e-4, "{}", cycle.period_s);
        assert!(cycle.pattern_repeats > 0 && cycle.pattern_repeats < cycle.ticks);
        let json = serde_json::to_string(&traced).unwrap();
        assert!(json.contains(r#""lockstep_cycle":{"ticks":"#), "{json}");
        // The evidence is read from the trace: none without one, nor without a lock-step.
        let untraced = study.spec(1, 0, false).run().unwrap().connections[0].clone();
        assert!(untraced.lockstep && untraced.lockstep_cycle.is_none());
        assert_eq!(untraced.throughput_bps, traced.throughput_bps);
        let free = LanBuffers {
            sndbuf: 52_428,
            ..study
        };
        assert!(free.spec(1, 0, true).run().unwrap().connections[0]
            .lockstep_cycle
            .is_none());
    }

    #[test]
    fn bad_specs_name_the_value() {
        let e = RunSpec::from_json(r#"{"hosts": [], "connections": [], "sed": 1}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `sed`"), "{e}");
        let e = RunSpec::from_json(&TWO_HOSTS.replace("\"b\"}]", "\"b\", \"phy\": \"oc48\"}]"))
            .unwrap()
            .scenario()
            .unwrap_err();
        assert!(e.to_string().contains("oc48"), "{e}");
        let e =
            RunSpec::from_json(&TWO_HOSTS.replace("\"receiver\": \"b\"", "\"receiver\": \"a\""))
                .unwrap()
                .scenario()
                .unwrap_err();
        assert!(e.to_string().contains("same host"), "{e}");
        // What the simulator itself would refuse is refused with the spec.
        let e =
            RunSpec::from_json(&TWO_HOSTS.replace("\"traffic\"", "\"sndbuf\": 60000, \"traffic\""))
                .unwrap()
                .scenario()
                .unwrap_err();
        assert!(e.to_string().contains("send buffer 60000"), "{e}");
        let e = RunSpec::from_json(&TWO_HOSTS.replace(
            "{\"hosts\"",
            "{\"switch\": {\"buffer_cells\": 0}, \"hosts\"",
        ))
        .unwrap()
        .scenario()
        .unwrap_err();
        assert!(e.to_string().contains("buffer_cells 0"), "{e}");
    }

    /// An OC-3c sender 600 km from a TAXI receiver: cells pile up and are lost
    /// at the receiver's port (the wan-mismatch setup, case 1, unpaced).
    fn mismatch(series: bool, per_cell: bool) -> SpecResult {
        let j = r#"{"hosts": [
            {"name": "alpha1", "site": "west", "profile": "alpha-3000", "phy": "oc3c", "flavour": "osf1"},
            {"name": "sparc10", "site": "east", "profile": "sparc-10", "phy": "taxi100", "flavour": "osf1"}],
          "trunks": [{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": 3.0}],
          "connections": [{"transmitter": "alpha1", "receiver": "sparc10", "encap": "llc-snap",
            "sndbuf": 131072, "rcvbuf": 131072,
            "traffic": {"type": "full", "blocksize": 65536, "duration_s": 2.0}}]}"#;
        let mut spec = RunSpec::from_json(j).unwrap();
        spec.series = series;
        spec.per_cell = per_cell;
        spec.run().unwrap()
    }

    #[test]
    fn a_cwnd_series_shows_slow_start_then_the_loss_halving() {
        let r = mismatch(true, false);
        let c = &r.connections[0];
        assert!(c.cells_lost > 0 && c.retransmitted_segments > 0, "{c:?}");
        let s = c.cwnd_series.as_ref().expect("series on");
        let mss = s[0].1;
        assert!(s.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
        // Slow start: from one segment, one more per ACK (so the window doubles
        // each round trip) while ssthresh stays at its initial, huge value.
        let first_cut = s
            .iter()
            .position(|x| x.2 != s[0].2)
            .expect("a loss cuts ssthresh");
        let slow = &s[..first_cut];
        assert!(s[0].2 > 1 << 20, "initial ssthresh {}", s[0].2);
        assert!(slow
            .windows(2)
            .all(|w| w[1].1 == w[0].1 || w[1].1 == w[0].1 + mss));
        let top = slow.last().unwrap();
        assert!(top.1 >= 8 * mss, "slow start reached {} bytes", top.1);
        // The loss: ssthresh becomes half the window in flight (in whole segments).
        let cut = s[first_cut].2;
        let flight = slow.iter().map(|x| x.3).max().unwrap();
        assert!(
            cut <= flight / 2 && cut + mss > flight / 2,
            "{cut} from {flight}"
        );
        assert!(s[first_cut].1 < top.1, "cwnd falls too");
        // A retransmit timeout later sends cwnd back to one segment.
        assert!(s[first_cut..].iter().any(|x| x.1 == mss));
    }

    #[test]
    fn a_queue_series_peaks_at_the_buffer_and_at_the_peak_counter() {
        let train = mismatch(true, false);
        let cell = mismatch(true, true);
        for r in [&train, &cell] {
            let p = r.ports.iter().find(|p| p.host == "sparc10").unwrap();
            let q = p.queue_series.as_ref().expect("series on");
            assert!(p.cells_lost > 0);
            assert_eq!(p.peak_occupancy, DEFAULT_PORT_BUFFER_CELLS);
            for p in &r.ports {
                let q = p.queue_series.as_ref().unwrap();
                let top = q.iter().map(|x| x.1).max().unwrap_or(0);
                assert_eq!(top, p.peak_occupancy, "port {}", p.host);
                assert!(q.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
            }
            // It empties between bursts.
            assert!(q.iter().any(|x| x.1 == 0));
        }
        // Train samples fewer points, but each of them is a PerCell point.
        for (a, b) in train.ports.iter().zip(&cell.ports) {
            let (qa, qb) = (
                a.queue_series.as_ref().unwrap(),
                b.queue_series.as_ref().unwrap(),
            );
            assert!(qa.len() <= qb.len());
            let mut it = qb.iter();
            for x in qa {
                assert!(
                    it.any(|y| y == x),
                    "port {}: {x:?} not in the PerCell series",
                    a.host
                );
            }
        }
    }

    #[test]
    fn series_change_nothing_else_and_repeat_exactly() {
        let on = mismatch(true, false);
        let off = mismatch(false, false);
        let json = |r: &SpecResult| serde_json::to_string(r).unwrap();
        assert!(!json(&off).contains("series"));
        let mut stripped = on.clone();
        for c in &mut stripped.connections {
            c.cwnd_series = None;
        }
        for p in &mut stripped.ports {
            p.queue_series = None;
        }
        assert_eq!(json(&stripped), json(&off));
        assert_eq!(json(&on), json(&mismatch(true, false)));
        assert!(json(&on).contains("\"cwnd_series\":[["));
        assert!(json(&on).contains("\"queue_series\":[["));
    }

    /// Three fast hosts sending into c's port: `long` (a -> c, full blast for
    /// 6 s) beside the serial pair x then y (b -> c, 8 MB each, y after x);
    /// without `long` when `alone`.
    fn serial_pair(alone: bool) -> RunSpec {
        let host = |name: &str| HostSpec {
            profile: "ultra-1".into(),
            phy: "oc3c".into(),
            flavour: "reno".into(),
            ..HostSpec::named(name)
        };
        let full = |nbytes, duration_s| Traffic::Full {
            blocksize: Param::Value(8192.0),
            nbytes,
            duration_s,
        };
        // TCP_NODELAY: no delayed-ACK lock-step; the port is what x and y share.
        let pair = ConnSpec {
            nodelay: true,
            ..ConnSpec::new("b", "c", full(Some(8 << 20), None))
        };
        let mut conns = vec![
            pair.clone(),
            ConnSpec {
                after: vec![0],
                ..pair
            },
        ];
        if !alone {
            conns.insert(0, ConnSpec::new("a", "c", full(None, Some(6.0))));
            conns[2].after = vec![1];
        }
        let mut spec = RunSpec::new(vec![host("a"), host("b"), host("c")], conns);
        // Room for both windows: the port shares its rate, losing nothing.
        spec.switch.buffer_cells = 4096;
        spec
    }

    #[test]
    fn a_serial_step_starts_the_instant_its_predecessor_ends_on_the_same_network() {
        let spec = serial_pair(false);
        let r = spec.run().unwrap();
        let [long, x, y] = [0, 1, 2].map(|i| r.connections[i].clone());
        assert!(long.completed && x.completed && y.completed);
        // y starts on the event that ends x, to the picosecond, not at t = 0 ...
        let x_end = x.end_s.unwrap();
        assert_eq!(y.start_s, Some(x_end));
        assert!(x_end > x.start_s.unwrap() && y.end_s.unwrap() > x_end);
        // ... while `long` still runs: they share the port to c.
        assert!(y.start_s.unwrap() < long.end_s.unwrap());
        // The same y on an idle network (what a separate simulation gave) is faster.
        let alone = serial_pair(true).run().unwrap();
        assert_eq!(alone.connections[1].start_s, alone.connections[0].end_s);
        let idle = alone.connections[1].throughput_bps;
        assert!(
            y.throughput_bps < 0.8 * idle,
            "y beside long {} b/s, alone {idle} b/s",
            y.throughput_bps
        );
        // One timeline, still deterministic.
        let json = |r: &SpecResult| serde_json::to_string(r).unwrap();
        assert_eq!(json(&spec.run().unwrap()), json(&r));
    }

    #[test]
    fn only_connections_running_at_the_same_time_share_a_port() {
        let shared = |spec: &RunSpec, i: usize| {
            let scenario = spec.scenario().unwrap();
            let r = run(&scenario).unwrap();
            let f = Facts::gather(&scenario, &r, i, &|p| format!("port {p}"));
            f.shared.expect("a path with a port").connections
        };
        // x has ended when y starts: y has the port to itself ...
        let alone = serial_pair(true);
        assert_eq!((shared(&alone, 0), shared(&alone, 1)), (1, 1));
        // ... but shares it with `long`, which runs throughout, as x does.
        let beside = serial_pair(false);
        assert_eq!(
            (shared(&beside, 0), shared(&beside, 1), shared(&beside, 2)),
            (3, 2, 2)
        );
    }

    #[test]
    fn a_connection_waits_only_for_earlier_ones() {
        let mut spec = serial_pair(true);
        spec.connections[0].after = vec![1];
        let e = spec.scenario().unwrap_err();
        assert_eq!(
            e.to_string(),
            "transfer 0: starts after transfer 1, which is not an earlier transfer: \
             a transfer waits only for ones before it"
        );
        // A transfer whose predecessor never ends never starts.
        let mut spec = serial_pair(true);
        spec.time_limit_s = 0.01;
        let r = spec.run().unwrap();
        assert_eq!(r.connections[1].start_s, None);
        assert!(!r.connections[1].completed);
    }
}
