//! A run described as data: a star testbed (every host on one output-buffered
//! switch) and a list of connections with NetSpec-style traffic. This is what
//! the experiment language and the front ends hand to the simulator, as JSON;
//! unknown keys are errors, and every value is checked before anything runs.
//!
//! Here: the schema and its defaults. `build.rs` checks a spec and builds the
//! simulator's scenario from it, routing circuits between sites by `routing.rs`;
//! `report.rs` runs it and gives the results in the spec's terms; `tester.rs`
//! names the places a cell tester can sit and describes its capture.

mod build;
pub mod ether;
mod report;
mod routing;
#[cfg(test)]
mod test;
mod tester;

pub use report::{
    CellsResult, ConnResult, CycleResult, PolicerResult, PortResult, SpecResult, BUDGET_CUT,
    TRUNCATED,
};
// A host's `distance_m` is fibre at the era's delay; named here too, beside the spec's limits.
pub use crate::sim::era::FIBRE_PS_PER_M;
// The traffic laws belong to every engine (`traffic`); a run spec's traffic speaks them.
pub use crate::traffic::{Law, Param};

use crate::sim::era::{DEFAULT_EPD_THRESHOLD_CELLS, DEFAULT_PORT_BUFFER_CELLS, MACHINE_ROOM_DELAY};
use crate::sim::world::ScenarioError;
use crate::time::SimTime;
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
    /// With policy `epd`: cells queued from which a new PDU's cells are refused.
    #[serde(default = "epd_threshold")]
    pub epd_threshold_cells: u32,
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
    /// ABR feedback at every output port (`sim::net::abr`): EFCI marking,
    /// relative-rate marking or ERICA's explicit rate. None: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrSwitchSpec>,
}

/// A switch's ABR behaviour (TM 4.0 §5.10.6). `kind`: `efci`, `relative` or
/// `erica`. Left out: a queue threshold of half the buffer (an *assumption*:
/// TM 4.0 leaves the thresholds to the switch), ERICA's target 0.9 and
/// averaging interval 1 ms (*assumptions*: ERICA's authors leave both to the
/// operator and simulate targets of 0.85–0.95 and intervals of a few hundred
/// cells to a few ms).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AbrSwitchSpec {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_cells: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<f64>,
}

/// A connection's data circuit as an ABR circuit (its ACK circuit stays UBR).
/// Rates are bit/s of whole 53-byte cells (424 bits each). Left out, TM 4.0's
/// defaults (§5.10.2): PCR the transmitter's access link, MCR 0, ICR = PCR,
/// RIF = RDF = 1/16, Nrm = 32.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AbrSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcr_bps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcr_bps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icr_bps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rif: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdf: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nrm: Option<u32>,
}

fn no_flow_control() -> String {
    "none".into()
}
fn is_none_text(s: &str) -> bool {
    s == "none"
}

impl Default for SwitchSpec {
    fn default() -> Self {
        SwitchSpec {
            buffer_cells: DEFAULT_PORT_BUFFER_CELLS,
            policy: tail_drop(),
            epd_threshold_cells: epd_threshold(),
            clp1_threshold_cells: None,
            flow_control: no_flow_control(),
            credits: None,
            abr: None,
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
    /// An Ethernet interface beside the ATM adapter: `ethernet10`, `ethernet100`
    /// or `ethernet:<Mb/s>` (`ether::parse_phy`); the hosts' interfaces at
    /// one site share one segment. None: ATM only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ethernet: Option<String>,
    /// `half` (a shared medium) or `full` (point to point); None: half for
    /// ethernet10, full otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ethernet_duplex: Option<String>,
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
            ethernet: None,
            ethernet_duplex: None,
        }
    }
}

/// A connection. Each key left out reads as its serde default, each with its
/// source below; the front ends send only the keys a file sets and read these
/// defaults from the vocabulary (`sim::vocabulary`, `defaults.connection`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConnSpec {
    pub transmitter: String,
    pub receiver: String,
    /// `tcp` or `udp`; left out, TCP: ttcp's transfer unless `-u` (000 §2.1).
    #[serde(default = "tcp")]
    pub protocol: String,
    /// Both ends' TCP; None: each end runs its own host's `flavour`.
    #[serde(default)]
    pub flavour: Option<String>,
    /// The IP MTU; None: the encapsulation's (`Encap::default_mtu`: 9188 for
    /// VC-mux, the Fore interface's MTU in 000 §2; 9180 for LLC/SNAP, RFC 1626),
    /// or Ethernet II's 1500 over `interface = ethernet`.
    #[serde(default)]
    pub mtu: Option<u32>,
    /// Left out, VC multiplexing: Fore IP over AAL5, the lan-buffers testbed's
    /// (000 §2: its 9188-byte MTU is VC-mux's, no LLC/SNAP header).
    #[serde(default = "vc_mux")]
    pub encap: String,
    #[serde(default = "max_buf")]
    pub sndbuf: u32,
    #[serde(default = "max_buf")]
    pub rcvbuf: u32,
    /// TCP_NODELAY; left out, off: a BSD socket runs Nagle's algorithm (RFC 896)
    /// unless the application sets it (ttcp's `-D`; 000 §4.1.2).
    #[serde(default)]
    pub nodelay: bool,
    pub traffic: Traffic,
    /// The receiver's read size, bytes; left out, ttcp's default buffer
    /// length (`TTCP_BUFLEN`): a sink reads as `ttcp -r` does without `-l`.
    #[serde(default = "ttcp_buflen")]
    pub receiver_blocksize: u32,
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
    /// The interface both ends use: `atm` (None: the adapters and switches) or
    /// `ethernet` (frames on their site's Ethernet segment; MTU at most 1500,
    /// no encapsulation header: Ethernet II's type field says IPv4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// The data circuit's service: ABR with these parameters (None: UBR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrSpec>,
}

impl ConnSpec {
    /// A connection with every default but its ends and traffic: TCP of the
    /// transmitter's flavour, VC-mux at its MTU, the largest SunOS buffers, a
    /// receiver reading ttcp's default buffer length.
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
            receiver_blocksize: ttcp_buflen(),
            pacing_mbps: None,
            start_s: 0.0,
            after: Vec::new(),
            interface: None,
            abr: None,
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
        #[serde(default = "default_block")]
        blocksize: Param,
        period_us: Param,
        duration_s: f64,
        #[serde(default = "one_block", skip_serializing_if = "is_one_block")]
        blocks: u32,
    },
    /// As `burst`, but a block due while a write is pending is queued.
    Burstq {
        #[serde(default = "default_block")]
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

// The serde defaults: what a key left out of a spec reads as (the constructors
// `RunSpec::new`, `HostSpec::named` and `ConnSpec::new` give the same).
fn one() -> u64 {
    1
}
fn an_hour() -> f64 {
    3600.0
}
fn default_buffer() -> u32 {
    DEFAULT_PORT_BUFFER_CELLS
}
fn epd_threshold() -> u32 {
    DEFAULT_EPD_THRESHOLD_CELLS
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
/// SunOS 4.1.1's largest socket buffer (000 §2.2): a connection's send and
/// receive buffer when it names none.
fn max_buf() -> u32 {
    52_428
}
/// ttcp's default buffer length, bytes (ttcp.c: `buflen = 8 * 1024`, its `-l`):
/// what a transmitter writes and a sink reads when a test names no block size.
/// 000 §2.1 measures with ttcp, and its lock-step (§4.1.4) is in 8K writes.
pub const TTCP_BUFLEN: u32 = 8 * 1024;
fn ttcp_buflen() -> u32 {
    TTCP_BUFLEN
}
fn default_block() -> Param {
    Param::Value(TTCP_BUFLEN as f64)
}

/// One block a period: NetSpec's burst writes a block each period unless a
/// test asks for a burst of several (`blocks`, `size`).
fn one_block() -> u32 {
    1
}
fn is_one_block(n: &u32) -> bool {
    *n == 1
}

/// The longest time a spec may give (any duration, delay, start or limit), seconds.
pub const MAX_SECONDS: f64 = 1e6;

/// The longest fibre from a host to its switch, metres (40000 km: round the Earth).
pub const MAX_DISTANCE_M: f64 = 4.0e7;

/// How an adapter meets a host's `spacing_us` (`HostSpec::spacing`).
pub const SPACING_MODES: [&str; 2] = ["cell-level", "cell-burst"];

/// The largest write a drawn block size may ask for (TCP); UDP datagrams stop at 65507.
pub const MAX_BLOCK: f64 = 1_048_576.0;
/// The most blocks a burst writes back to back each period: a bound on one
/// period's writes (each an event), as the core has always taken it.
pub const MAX_BLOCKS: u32 = 1_000_000;

/// ERICA's target utilisation and averaging interval (µs) when a switch's `abr`
/// leaves them out: *assumptions*, since ERICA's authors (R. Jain et al., "ERICA
/// switch algorithm: a complete description", ATM Forum/96-1172, as
/// docs/mechanisms.md cites it) leave both to the operator and simulate targets of
/// 0.85-0.95 and intervals of a few hundred cells to a few ms. The vocabulary
/// gives them as the `abr_switch` record's defaults.
pub const ERICA_TARGET: f64 = 0.9;
pub const ERICA_INTERVAL_US: f64 = 1000.0;

/// A time in seconds from the user: finite and >= 0 (or > 0 when `positive`);
/// the refusal's reason (the caller knows the key).
fn seconds(what: &str, v: f64, positive: bool) -> Result<SimTime, String> {
    time_in(what, v, 1.0, "s", positive)
}

/// A time the user gave in `unit` (`per_second` of them make a second), checked
/// finite and >= 0 (> 0 when `positive`), at most 10^6 s; the refusal's reason
/// speaks its unit (the caller knows the key).
fn time_in(
    what: &str,
    v: f64,
    per_second: f64,
    unit: &str,
    positive: bool,
) -> Result<SimTime, String> {
    let secs = v / per_second;
    if !v.is_finite() || v < 0.0 || (positive && v == 0.0) || secs > MAX_SECONDS {
        let want = if positive { "> 0" } else { ">= 0" };
        let most = MAX_SECONDS * per_second;
        return Err(format!(
            "{what} {v} {unit}: must be a finite number {want} and at most {most:e} {unit}"
        ));
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
        serde_json::from_str(text).map_err(|e| ScenarioError::spec(format!("run spec: {e}")))
    }
}
