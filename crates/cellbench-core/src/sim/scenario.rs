//! The run types: what a simulation is given (a [`Scenario`] of
//! [`TransferSpec`]s) and what it gives back (a [`RunResult`] of
//! [`TransferResult`]s, traces and series), and [`ScenarioError`], the error
//! of a scenario that cannot run. Apart from the world that runs them, so that
//! the front ends (`sim::spec`), the run's bounds (`sim::guard`) and the
//! explanations (`sim::explain`) name them without importing the event loop.

use super::net::{
    AbrPortCounters, AbrSourceCounters, CircuitCounters, CircuitId, Fidelity, HostId,
    PolicerCounters, PortCounters, Topology,
};
use crate::host::profile::HostProfile;
use crate::host::rr::Transaction;
use crate::host::ttcp::{Limit, Pace};
use crate::host::udp::UdpStats;
use crate::tcp::{Flavour, Segment, SendReason, TcpStats};
use crate::time::SimTime;
use crate::traffic::Dist;
use std::fmt;

/// One ttcp transfer between two hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferSpec {
    pub protocol: Protocol,
    pub sender: HostId,
    pub receiver: HostId,
    /// The circuit carrying data (sender → receiver) and the one carrying ACKs back.
    pub circuit: CircuitId,
    pub return_circuit: CircuitId,
    /// The sender's TCP and the receiver's: each end runs its own host's
    /// (a heterogeneous pair acknowledges and reopens its window by the
    /// receiver's rules, sends by the sender's).
    pub flavour: Flavour,
    pub receiver_flavour: Flavour,
    /// IP MTU of the interface: MSS = MTU − 40.
    pub mtu: u32,
    /// Bytes of encapsulation header before the IP datagram in each PDU (RFC 1483 LLC/SNAP: 8; VC-mux: 0).
    pub encap_header: u32,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    pub nodelay: bool,
    /// ttcp -l: bytes per write.
    pub buflen: u32,
    /// Bytes per read at the receiver.
    pub read_size: u32,
    /// How much the transmitter sends (bytes, or for how long).
    pub limit: Limit,
    /// How it spaces its writes.
    pub pace: Pace,
    /// Random-rate traffic: each write's size drawn from this law (at most `buflen`).
    pub block_size: Option<Dist>,
    /// netperf TCP_RR instead of a stream: the transmitter sends requests of
    /// this size, the receiver answers each (`host::rr`), for `limit`'s duration.
    pub transaction: Option<Transaction>,
    /// When the transmitter connects: from t = 0, or with `after`, from the
    /// instant the last of those transfers ended.
    pub start: SimTime,
    /// Start dependencies (NetSpec's `serial { }`): earlier transfers that must
    /// all have ended, both applications finished, before this one starts. The
    /// network, the hosts' timers and other transfers run on meanwhile: one timeline.
    pub after: Vec<usize>,
}

/// The transport a transfer runs over.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
}

/// A whole run: topology, hosts, transfers, seed.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub topology: Topology,
    pub hosts: Vec<HostProfile>,
    pub transfers: Vec<TransferSpec>,
    pub seed: u64,
    pub replication: u32,
    pub fidelity: Fidelity,
    pub trace: bool,
    /// Record time series: each TCP sender's congestion window, and each
    /// switch port's occupancy ([`RunResult::cwnd_series`], [`RunResult::queue_series`]).
    pub series: bool,
    /// Give up (and report the transfer incomplete) at this simulated time.
    pub time_limit: SimTime,
    /// Fail the run (`sim::guard`) after this many steps of the event loop.
    pub event_budget: u64,
}

/// A segment in a trace: sent by one end of a transfer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub at: SimTime,
    pub transfer: usize,
    /// true when the transmitter (data side) sent it.
    pub from_sender: bool,
    pub seg: Segment,
}

/// A TCP sender's congestion state at a time: a sample of a cwnd series.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CwndSample {
    pub at: SimTime,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Data sent and not yet acknowledged: snd_max − snd_una.
    pub flight: u32,
}

impl TraceRecord {
    /// A tcpdump-like line: `0.123456 A > B: . 1:9149(9148) ack 1 win 24576 [full-mss]`.
    pub fn line(&self) -> String {
        let (src, dst) = if self.from_sender {
            ("A", "B")
        } else {
            ("B", "A")
        };
        format!(
            "{} {src} > {dst}: {} [{}]",
            self.at,
            self.seg,
            self.seg.reason.as_str()
        )
    }
}

/// What the application saw, and what TCP did, for one transfer.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferResult {
    pub completed: bool,
    /// Bytes the transmitter wrote.
    pub bytes: u64,
    /// Bytes the receiver read.
    pub bytes_received: u64,
    /// ttcp -t's interval: before the first write to after the last returned.
    pub sender_seconds: f64,
    /// ttcp -r's interval: first read to the read that took the last byte.
    pub receiver_seconds: f64,
    pub writes: u64,
    pub reads: u64,
    pub sender: TcpStats,
    pub receiver: TcpStats,
    /// PDUs a full interface queue refused (`IF_DROP`), at the sender's adapter
    /// (its data) and at the receiver's (its ACKs).
    pub pdus_dropped_at_adapter: [u64; 2],
    /// Time spent in the Nagle/delayed-ACK circular wait: the sender holding a
    /// short segment for an ACK (or its write waiting for one: NT's unbuffered
    /// send, a send buffer short of room; or its data waiting on a closed
    /// window), the receiver (buffer read empty, everything sent has arrived)
    /// holding that ACK for its timer.
    pub circular_wait_seconds: f64,
    /// For UDP transfers: datagram counts at the transmitter (sent) and receiver.
    pub udp: Option<UdpStats>,
    /// For request/response transfers: transactions the client completed
    /// within its test length (`sender_seconds`).
    pub transactions: Option<u64>,
    /// What `sim::explain` needs to say what bound the transfer.
    pub probe: ProbeResult,
    /// When the transmitter started (None: the transfers it waited for never
    /// ended), and when the transfer ended: both applications finished.
    pub started_at: Option<SimTime>,
    pub ended_at: Option<SimTime>,
}

/// Facts about a transfer gathered while it ran, for `sim::explain`: a few
/// comparisons per segment and a snapshot of two CPUs at the start and end of
/// ttcp -t's interval, never anything per cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeResult {
    /// The shortest round trip TCP saw for a segment of the largest size sent:
    /// a new data segment leaving the sender's host to the start of the
    /// sender's processing of the ACK that covers it (timed one segment at a
    /// time; Karn: none that was resent). Only the largest count, since a
    /// segment's time on a slow or spaced link is part of its round trip.
    pub min_rtt: Option<SimTime>,
    /// The most data in flight (snd_max − snd_una) after the sender sent.
    pub peak_flight: u32,
    /// The largest data segment sent: data bytes and IP datagram bytes.
    pub largest_segment: Option<(u32, u32)>,
    /// The CPCS payload offsets where a 1 KB cluster mbuf of that segment's
    /// PDU ended (see `Network::send_gathered`).
    pub largest_segment_buffers: Vec<u32>,
    /// Fraction of ttcp -t's interval each CPU was busy: the sender's host and the
    /// receiver's (None when the interval never closed).
    pub cpu_busy: Option<[f64; 2]>,
    /// Time the sender held back data its usable window allowed (a sub-MSS
    /// segment waiting for an ACK: Nagle or sender SWS avoidance), until its
    /// application finished.
    pub holding_seconds: f64,
    /// The window's own round trip, host work included: each time a new data
    /// segment left with the window closed behind it (the offered or congestion
    /// window full, or the send buffer full and all of it in flight), the time
    /// to the next new data segment leaving, which the ACK or window update
    /// opening the window let go. It covers both hosts' work in the loop (the
    /// receiver's input, read and copy, the sender's ACK input, write, copy and
    /// output) besides the path. Cycles with a resend in them are not counted
    /// (Karn: they time recovery). Count, window bytes in flight summed, time summed.
    pub window_cycles: (u32, u64, SimTime),
    /// The part of the circular wait in which the window the sender knew was
    /// closed: the receiver had read everything, but left the window update
    /// that would reopen it to its delayed-ACK timer.
    pub window_wait_seconds: f64,
}

impl TransferResult {
    /// The sending application's rate as ttcp -t reports it: bytes written over
    /// its interval, bit/s. For UDP that is the load offered, not what was carried.
    pub fn sender_bps(&self) -> f64 {
        if self.sender_seconds > 0.0 {
            self.bytes as f64 * 8.0 / self.sender_seconds
        } else {
            0.0
        }
    }
    /// What crossed the path, bit/s: the bytes the receiving application read
    /// over its interval, as ttcp -r reports it (a cut run: so far).
    pub fn goodput_bps(&self) -> f64 {
        if self.receiver_seconds > 0.0 {
            self.bytes_received as f64 * 8.0 / self.receiver_seconds
        } else {
            0.0
        }
    }
    /// The connection's throughput, bit/s (10^6 = 1 Mb/s): over TCP ttcp -t's figure
    /// (what is written is delivered, though data still in the socket buffer when
    /// the writes ended counts in it); over UDP what arrived (`goodput_bps`), since
    /// a datagram written may be dropped on the way (the adapter's queue, a switch
    /// port, a policer, the receiving socket).
    pub fn throughput_bps(&self) -> f64 {
        if self.udp.is_none() {
            self.sender_bps()
        } else {
            self.goodput_bps()
        }
    }
    /// The transfer ran in the delayed-ACK lock-step: it spent most of its
    /// time in the circular wait, released only by the receiver's timer.
    pub fn lockstep(&self) -> bool {
        self.sender_seconds > 0.0 && self.circular_wait_seconds > 0.5 * self.sender_seconds
    }
    /// ttcp's "Mbit/sec": 2^20 bits per second.
    pub fn mbit_ttcp(&self) -> f64 {
        self.throughput_bps() / 1_048_576.0
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub transfers: Vec<TransferResult>,
    /// Per switch output port, at the end of the run.
    pub ports: Vec<PortCounters>,
    /// Per circuit, at the end of the run.
    pub circuits: Vec<CircuitCounters>,
    /// Per usage-parameter-control policer, at the end of the run.
    pub policers: Vec<PolicerCounters>,
    pub end_time: SimTime,
    /// Where the run spent its event budget and ended, if it did (`guard`).
    pub budget_cut: Option<SimTime>,
    pub events: u64,
    pub trace: Vec<TraceRecord>,
    /// With `Scenario::series`, per transfer: its sender's cwnd, ssthresh and
    /// flight, a sample whenever one of them changed (empty for UDP).
    pub cwnd_series: Vec<Vec<CwndSample>>,
    /// With `Scenario::series`, per switch output port: `(t, cells)` occupancy
    /// samples (resolution: `Network::set_queue_series`).
    pub queue_series: Vec<Vec<(SimTime, u32)>>,
    /// Per circuit, its ABR source's counters (None: not ABR), and with
    /// `Scenario::series` its ACR over time (cells/s).
    pub abr_sources: Vec<Option<AbrSourceCounters>>,
    pub acr_series: Vec<Vec<(SimTime, f64)>>,
    /// Per switch output port, its ABR counters (None: no ABR behaviour).
    pub abr_ports: Vec<Option<AbrPortCounters>>,
}

/// Where in a run spec a refused value sits, so that a front end can point at
/// the line that set it: the record (`run`, `switch`, `host`, `trunk`,
/// `connection`; `sim::vocabulary::SPEC_KEYS` names their keys), which one (a
/// host's name, a site's switch, a trunk's or a connection's index), the key
/// (a sub-record's key after a dot: `traffic.blocksize`, `upc.t_us`) and the
/// value as the spec gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPath {
    pub record: &'static str,
    /// A list's record by its index (trunks, connections).
    pub index: Option<usize>,
    /// A record by its name: a host's, a site's switch (None: the testbed-wide one).
    pub name: Option<String>,
    pub key: &'static str,
    pub value: String,
}

impl KeyPath {
    /// `record`'s `key`, whose value was `value` (which one: [`KeyPath::index`],
    /// [`KeyPath::named`]).
    pub fn new(record: &'static str, key: &'static str, value: impl fmt::Display) -> KeyPath {
        KeyPath {
            record,
            index: None,
            name: None,
            key,
            value: value.to_string(),
        }
    }

    /// Which record of a list: by index.
    pub fn index(mut self, index: usize) -> KeyPath {
        self.index = Some(index);
        self
    }

    /// Which record: by name (a host's; a site's switch).
    pub fn named(mut self, name: Option<&str>) -> KeyPath {
        self.name = name.map(str::to_string);
        self
    }
}

/// A scenario that cannot run, by what is refused: one setting, two that
/// conflict, a record as a whole, the spec as a whole, or the run. Each says
/// its reason in one line (naming the value and what was expected: `Display`);
/// the ones a spec's keys hold carry their key path, so a front end points at
/// the line that set the value rather than re-checking it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScenarioError {
    /// A value refused at one key (a range, a name none of the choices).
    Setting { path: KeyPath, reason: String },
    /// Two settings refused together: `path`'s value (the one the reason leads
    /// with) against `other`'s (an EPD threshold past the buffer, credits without
    /// credit flow control, an MTU past the Ethernet's); either may be the one to
    /// move. (Boxed: an error stays the size of a one-key refusal.)
    Conflict {
        path: Box<KeyPath>,
        other: Box<KeyPath>,
        reason: String,
    },
    /// A record refused as a whole, no one key of it to blame (a connection
    /// whose hosts' sites no trunk joins, a site's switch at no site).
    Record {
        record: &'static str,
        index: Option<usize>,
        name: Option<String>,
        reason: String,
    },
    /// The spec as a whole: not a run spec (its JSON, a key's type).
    Spec { reason: String },
    /// The run, not its spec: stopped, its capture not written, a network
    /// the checks passed and the model refused.
    Run { reason: String },
}

impl ScenarioError {
    /// The refusal of `record`'s `key`, whose value was `value`.
    pub fn setting(
        record: &'static str,
        key: &'static str,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Setting {
            path: KeyPath::new(record, key, value),
            reason: reason.into(),
        }
    }

    /// The refusal of `path`'s value against `other`'s.
    pub fn conflict(path: KeyPath, other: KeyPath, reason: impl Into<String>) -> ScenarioError {
        ScenarioError::Conflict {
            path: Box::new(path),
            other: Box::new(other),
            reason: reason.into(),
        }
    }

    /// The refusal of a `record` as a whole.
    pub fn record(record: &'static str, reason: impl Into<String>) -> ScenarioError {
        ScenarioError::Record {
            record,
            index: None,
            name: None,
            reason: reason.into(),
        }
    }

    /// The refusal of the spec as a whole.
    pub fn spec(reason: impl Into<String>) -> ScenarioError {
        ScenarioError::Spec {
            reason: reason.into(),
        }
    }

    /// A run that could not go on or finish.
    pub fn run(reason: impl Into<String>) -> ScenarioError {
        ScenarioError::Run {
            reason: reason.into(),
        }
    }

    /// The one-line reason (what `Display` writes).
    pub fn reason(&self) -> &str {
        match self {
            ScenarioError::Setting { reason, .. }
            | ScenarioError::Conflict { reason, .. }
            | ScenarioError::Record { reason, .. }
            | ScenarioError::Spec { reason }
            | ScenarioError::Run { reason } => reason,
        }
    }

    /// The key path of the setting to blame (a conflict's first), if one is.
    pub fn path(&self) -> Option<&KeyPath> {
        match self {
            ScenarioError::Setting { path, .. } => Some(path),
            ScenarioError::Conflict { path, .. } => Some(path),
            _ => None,
        }
    }

    /// A refusal said by code that checks one of a list's records without
    /// knowing which (a connection, a trunk): the paths of `record` that name no
    /// index get `index`; other records' paths (a connection's host) are kept.
    pub fn in_list(mut self, record: &'static str, index: usize) -> ScenarioError {
        let set = |r: &'static str, i: &mut Option<usize>| {
            if r == record && i.is_none() {
                *i = Some(index);
            }
        };
        match &mut self {
            ScenarioError::Setting { path, .. } => set(path.record, &mut path.index),
            ScenarioError::Conflict { path, other, .. } => {
                set(path.record, &mut path.index);
                set(other.record, &mut other.index);
            }
            ScenarioError::Record {
                record: r,
                index: i,
                ..
            } => set(r, i),
            ScenarioError::Spec { .. } | ScenarioError::Run { .. } => {}
        }
        self
    }

    /// Which record: by name (a host's; a site's switch), said of every path of
    /// the refusal.
    pub fn named(mut self, name: Option<&str>) -> ScenarioError {
        let name = name.map(str::to_string);
        match &mut self {
            ScenarioError::Setting { path, .. } => path.name = name,
            ScenarioError::Conflict { path, other, .. } => {
                path.name.clone_from(&name);
                other.name = name;
            }
            ScenarioError::Record { name: n, .. } => *n = name,
            ScenarioError::Spec { .. } | ScenarioError::Run { .. } => {}
        }
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for ScenarioError {}

/// Used by reports: why a segment was sent, for a whole trace.
pub fn reason_counts(trace: &[TraceRecord]) -> Vec<(SendReason, usize)> {
    let mut counts: Vec<(SendReason, usize)> = Vec::new();
    for r in trace {
        match counts.iter_mut().find(|(k, _)| *k == r.seg.reason) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.seg.reason, 1)),
        }
    }
    counts.sort();
    counts
}
