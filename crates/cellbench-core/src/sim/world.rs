//! The simulated world: hosts with a CPU each, TCP connections driven by
//! applications, and the cell network between them.
//!
//! A host's CPU is a serial resource with two levels: interrupt work (segment
//! arrivals, timers) is taken before process work (application reads and
//! writes) whenever the CPU comes free; a piece of work is not preempted. A
//! piece's state changes happen when it starts; the CPU is then busy for its
//! cost, and each segment it sends leaves the host when the CPU has paid for
//! it (tcp_output, checksum, copy to the adapter).

use super::capture::{CaptureCounts, CellCapture};
use super::clock::{Clock, FlatOut};
use super::event::EventQueue;
use super::guard;
use super::net::{
    aal5_cells, CircuitCounters, CircuitId, Delivery, Fidelity, HostId, Network, Place,
    PolicerCounters, PortCounters, Topology,
};
use crate::host::profile::HostProfile;
use crate::host::rr::{RequestResponse, Role, Transaction};
use crate::host::socket::{udp_fragment_gather, AppendRule, SendMbufs};
use crate::host::ttcp::{Costs, Limit, Pace, Source, Step, TtcpSink};
use crate::host::udp::{UdpSock, UdpStats, MAX_DATAGRAM};
use crate::rng;
use crate::tcp::flavour::SLOW_TICK;
use crate::tcp::{Flavour, Segment, SendReason, Seq, State, Tcb, TcpStats, TimerModel};
use crate::time::SimTime;
use crate::traffic::Dist;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::io::Write;

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

/// How long a UDP receiver keeps reading after its transmitter finished
/// (ttcp -u ends on marker datagrams; cells still in flight arrive well within this).
const UDP_LINGER: SimTime = SimTime::from_secs(1);

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
    pub pdus_dropped_at_adapter: u64,
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
    /// Throughput as ttcp -t reports it, in bits per second (10^6 = 1 Mb/s).
    pub fn throughput_bps(&self) -> f64 {
        if self.sender_seconds > 0.0 {
            self.bytes as f64 * 8.0 / self.sender_seconds
        } else {
            0.0
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
}

/// A scenario that cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

enum App {
    Source(Box<Source>),
    Sink(TtcpSink),
    /// Either end of a request/response test.
    Exchange(RequestResponse),
}

struct Endpoint {
    host: HostId,
    /// A UDP endpoint; its `tcb` then stays closed and inert.
    udp: Option<UdpSock>,
    /// UDP: the interface MTU datagrams are fragmented to.
    mtu: u32,
    transfer: usize,
    is_sender: bool,
    tcb: Tcb,
    app: App,
    circuit_out: CircuitId,
    encap_header: u32,
    /// Where the send buffer's host buffers begin (what the adapter gathers from).
    mbufs: SendMbufs,
    /// An App job is queued on the host.
    app_queued: bool,
    /// The application sleeps in sbwait until a wakeup.
    app_blocked: bool,
    /// A paced application sleeps until its next block falls due.
    app_sleeping: bool,
    app_done: bool,
    started: bool,
    /// The connection's own timers (`TimerModel::PerConnection`): the time of
    /// the one live `Event::ConnTimer`, its generation (older events are
    /// stale), and whether its work waits for the CPU.
    timer_at: Option<SimTime>,
    timer_gen: u64,
    timer_queued: bool,
    /// In its host's list of endpoints the fast tick serves (`Host::delack`).
    delack_listed: bool,
    /// The slow tick of its live entry in `Host::slow`.
    slow_at: Option<u64>,
    /// The host's slow ticks this connection has counted (`Tcb::skip_slow_ticks`
    /// counts the rest when it is next touched).
    ticks_seen: u64,
    /// Nothing can come of this endpoint any more: its application is done,
    /// its connection closed, no timer runs (counted in `Host::live_eps`).
    finished: bool,
}

/// What a PDU carries: a TCP segment or one IP fragment of a UDP datagram.
#[derive(Copy, Clone, Debug)]
enum Packet {
    Tcp(Segment),
    Udp {
        dgram: u64,
        ip_len: u32,
        data: u32,
        count: u16,
        /// Where the fragment's IP payload starts in the UDP datagram.
        offset: u32,
    },
}

impl Packet {
    fn ip_len(&self) -> u32 {
        match self {
            Packet::Tcp(seg) => seg.ip_len(),
            Packet::Udp { ip_len, .. } => *ip_len,
        }
    }
}

#[derive(Copy, Clone, Debug)]
enum Job {
    Input { ep: usize, token: usize },
    FastTick,
    SlowTick,
    ConnTimer { ep: usize },
    App { ep: usize },
}

struct Host {
    profile: HostProfile,
    /// Period of the host's fast (delayed-ACK) timer: its slow-tick TCP
    /// flavour's (the shortest, should connections of several flavours share
    /// the host). None: no connection counts slow ticks, the host has no ticks.
    fast_interval: Option<SimTime>,
    /// Draws the variation of each piece of work's cost.
    jitter: ChaCha8Rng,
    busy: bool,
    /// Total length of the pieces of work started so far, and when the last ends.
    busy_total: SimTime,
    busy_until: SimTime,
    interrupts: VecDeque<Job>,
    processes: VecDeque<Job>,
    endpoints: Vec<usize>,
    /// Endpoints that had a delayed ACK pending under slow ticks when last
    /// touched: the fast tick serves these, not every connection.
    delack: Vec<usize>,
    /// Endpoints with a slow timer running, by the tick it expires at: the
    /// slow tick serves these; the others count its ticks when next touched.
    /// An entry is live while it is its endpoint's `slow_at`; one whose
    /// timer was pushed later since is put back at the new tick when it comes.
    slow: BinaryHeap<Reverse<(u64, usize)>>,
    /// Slow ticks so far.
    slow_ticks: u64,
    /// Endpoints not yet finished (see `Endpoint::finished`).
    live_eps: usize,
    /// A tick chain stopped while the host had nothing left to do, and the
    /// time of its next tick: its ticks are replayed (CPU time, jitter draws)
    /// only if work comes again (see `World::wake_host`).
    fast_dormant: Option<SimTime>,
    slow_dormant: Option<SimTime>,
}

#[derive(Copy, Clone, Debug)]
enum Event {
    CpuFree(HostId),
    FastTick(HostId),
    SlowTick(HostId),
    /// An endpoint's timer deadline, as armed in generation `gen`.
    ConnTimer {
        ep: usize,
        gen: u64,
    },
    Transmit {
        ep: usize,
        token: usize,
    },
    Start {
        ep: usize,
    },
    BlockDue {
        ep: usize,
    },
    /// A UDP receiver stops waiting for more.
    UdpLinger {
        ep: usize,
    },
}

/// The world while it runs.
struct World {
    now: SimTime,
    events: EventQueue<Event>,
    net: Network,
    hosts: Vec<Host>,
    eps: Vec<Endpoint>,
    /// Packets in flight, by token (the sending endpoint and the packet).
    segs: Vec<(usize, Packet)>,
    /// By token: the CPCS payload offsets where a 1 KB cluster mbuf of the
    /// packet ends and the next buffer begins (what `Network::send_gathered` takes).
    gathers: Vec<Vec<u32>>,
    /// Next UDP datagram id.
    next_dgram: u64,
    free_tokens: Vec<usize>,
    trace: Option<Vec<TraceRecord>>,
    /// Per transfer, its sender's cwnd series (None: series off).
    cwnd_series: Option<Vec<Vec<CwndSample>>>,
    scratch: Vec<Segment>,
    /// The jitter factor of the piece of work being executed, per mille.
    job_scale: u64,
    deliveries: Vec<Delivery>,
    adapter_drops: Vec<u64>,
    /// Per transfer: when the circular wait began (if it holds now), and its total.
    wait_since: Vec<Option<SimTime>>,
    wait_total: Vec<SimTime>,
    /// Per transfer: facts for the explanation of its limit.
    probes: Vec<Probe>,
    starts: Starts,
    /// Endpoints whose application is not done: the run ends at none.
    apps_running: usize,
    /// The endpoints the piece of work being executed touched, in host order.
    touched: Vec<usize>,
    events_handled: u64,
    /// Where the event budget ran out, if it did: the run ends there, cut.
    budget_cut: Option<SimTime>,
    /// The cell tester, if one is on (`sim::capture`).
    capture: Option<Capture>,
    /// When the event loop stopped: the run's end for the capture.
    loop_end: SimTime,
}

/// When transfers start and end (`TransferSpec::after`): a transfer that
/// waits for others starts when the last of them ends, plus its offset.
struct Starts {
    /// Per transfer: the transfers waiting for it to end.
    dependants: Vec<Vec<usize>>,
    /// Per transfer: how many of the transfers it waits for have not ended yet.
    waiting: Vec<usize>,
    offset: Vec<SimTime>,
    started_at: Vec<Option<SimTime>>,
    ended_at: Vec<Option<SimTime>>,
    /// Per endpoint: when its application finished.
    done_at: Vec<Option<SimTime>>,
}

impl Starts {
    fn new(transfers: &[TransferSpec]) -> Starts {
        let n = transfers.len();
        let mut dependants = vec![Vec::new(); n];
        for (j, t) in transfers.iter().enumerate() {
            for &i in &t.after {
                dependants[i].push(j);
            }
        }
        Starts {
            dependants,
            waiting: transfers.iter().map(|t| t.after.len()).collect(),
            offset: transfers.iter().map(|t| t.start).collect(),
            started_at: vec![None; n],
            ended_at: vec![None; n],
            done_at: vec![None; 2 * n],
        }
    }
}

/// A transfer's probe while it runs (see [`ProbeResult`]).
#[derive(Clone, Debug, Default)]
struct Probe {
    /// The sender's and the receiver's host.
    hosts: [HostId; 2],
    /// The end of the data segment being timed, when it left the host, its length.
    timed: Option<(Seq, SimTime, u32)>,
    /// The highest sequence number sent so far (None before the first data).
    sent_hi: Option<Seq>,
    /// The shortest round trip of a segment of `min_rtt_len` bytes, the largest timed.
    min_rtt: Option<SimTime>,
    min_rtt_len: u32,
    peak_flight: u32,
    largest_segment: Option<(u32, u32)>,
    largest_segment_buffers: Vec<u32>,
    /// Both CPUs' busy time at the start of ttcp -t's interval.
    cpu_at_start: Option<[SimTime; 2]>,
    cpu_busy: Option<[f64; 2]>,
    /// Since when the sender holds back data (Nagle, sender SWS avoidance), and the total.
    hold_since: Option<SimTime>,
    hold_total: SimTime,
    /// When a new segment left with the window closed behind it, and the bytes
    /// then in flight; the closed-window cycles so far (see `ProbeResult::window_cycles`).
    closed: Option<(SimTime, u32)>,
    window_cycles: (u32, u64, SimTime),
    /// Since when the circular wait has had the sender's window closed, and the total.
    window_wait_since: Option<SimTime>,
    window_wait_total: SimTime,
}

/// Run a scenario to the end of all transfers (or the time limit), flat out.
pub fn run(scenario: &Scenario) -> Result<RunResult, ScenarioError> {
    run_with_clock(scenario, &mut FlatOut)
}

/// Run a scenario with its events paced by `clock` (see `sim::clock`).
pub fn run_with_clock(
    scenario: &Scenario,
    clock: &mut dyn Clock,
) -> Result<RunResult, ScenarioError> {
    run_captured(scenario, clock, None).map(|(r, _)| r)
}

/// A capture's file: any writer (a buffered file in practice).
pub type Capture = CellCapture<Box<dyn Write>>;

/// Run a scenario, with a cell tester on one place when `tester` is given:
/// `(place, file)`. The file's cells are written as the run goes; the run's
/// results do not depend on it.
pub fn run_captured(
    scenario: &Scenario,
    clock: &mut dyn Clock,
    tester: Option<(Place, Box<dyn Write>)>,
) -> Result<(RunResult, Option<CaptureCounts>), ScenarioError> {
    validate(scenario)?;
    let mut net = Network::new(scenario.topology.clone(), scenario.fidelity)
        .map_err(|e| ScenarioError(format!("topology: {e}")))?;
    let capture = match tester {
        Some((place, out)) => {
            if net.link_cell_time(place).is_none() {
                return Err(ScenarioError(format!(
                    "cells: {place:?} is not a switch output port or adapter of the network"
                )));
            }
            Some(
                CellCapture::new(out, place, &mut net)
                    .map_err(|e| ScenarioError(format!("cells: {e}")))?,
            )
        }
        None => None,
    };
    if scenario.series {
        net.set_queue_series(true);
    }
    let mut world = World {
        now: SimTime::ZERO,
        events: EventQueue::new(),
        net,
        hosts: scenario
            .hosts
            .iter()
            .enumerate()
            .map(|(h, p)| Host {
                profile: p.clone(),
                fast_interval: scenario
                    .transfers
                    .iter()
                    .flat_map(|t| [(t.sender, t.flavour), (t.receiver, t.receiver_flavour)])
                    .filter(|&(host, _)| host == h)
                    .map(|(_, f)| f.policy())
                    .filter(|p| p.timers == TimerModel::SlowTick)
                    .map(|p| p.delack_interval)
                    .min(),
                jitter: rng::stream(
                    scenario.seed,
                    scenario.replication,
                    rng::ids::host_jitter(h),
                ),
                busy: false,
                busy_total: SimTime::ZERO,
                busy_until: SimTime::ZERO,
                interrupts: VecDeque::new(),
                processes: VecDeque::new(),
                endpoints: Vec::new(),
                delack: Vec::new(),
                slow: BinaryHeap::new(),
                slow_ticks: 0,
                live_eps: 0,
                fast_dormant: None,
                slow_dormant: None,
            })
            .collect(),
        eps: Vec::new(),
        segs: Vec::new(),
        gathers: Vec::new(),
        next_dgram: 0,
        free_tokens: Vec::new(),
        trace: scenario.trace.then(Vec::new),
        cwnd_series: scenario
            .series
            .then(|| vec![Vec::new(); scenario.transfers.len()]),
        scratch: Vec::new(),
        job_scale: 1000,
        deliveries: Vec::new(),
        adapter_drops: vec![0; scenario.transfers.len()],
        wait_since: vec![None; scenario.transfers.len()],
        wait_total: vec![SimTime::ZERO; scenario.transfers.len()],
        probes: scenario
            .transfers
            .iter()
            .map(|t| Probe {
                hosts: [t.sender, t.receiver],
                ..Probe::default()
            })
            .collect(),
        starts: Starts::new(&scenario.transfers),
        apps_running: 0,
        touched: Vec::new(),
        events_handled: 0,
        budget_cut: None,
        capture: None,
        loop_end: SimTime::ZERO,
    };

    for (i, t) in scenario.transfers.iter().enumerate() {
        let mss = t.mtu - crate::tcp::TCPIP_HEADER;
        for is_sender in [true, false] {
            let (host, circuit_out) = if is_sender {
                (t.sender, t.circuit)
            } else {
                (t.receiver, t.return_circuit)
            };
            // Initial send sequence numbers: distinct, fixed (they never matter to timing).
            let iss = Seq(if is_sender { 1_000_000 } else { 5_000_000 } + 100_000 * i as u32);
            let (sndbuf, rcvbuf) = match (t.transaction, is_sender) {
                // netperf -s and -S: each end's buffers, both ways (both ends write).
                (Some(_), true) => (t.sndbuf, t.sndbuf),
                (Some(_), false) => (t.rcvbuf, t.rcvbuf),
                (None, _) => (t.sndbuf, t.rcvbuf),
            };
            let flavour = if is_sender {
                t.flavour
            } else {
                t.receiver_flavour
            };
            let mut tcb = Tcb::new(flavour, mss, sndbuf, rcvbuf, iss);
            tcb.nodelay = t.nodelay;
            let udp = (t.protocol == Protocol::Udp).then(|| UdpSock::new(t.rcvbuf));
            let app = if let Some(sizes) = t.transaction {
                let role = match (is_sender, t.limit) {
                    (true, Limit::Duration(duration)) => Role::Client { duration },
                    (true, Limit::Bytes(_)) => unreachable!("validate: a test length"),
                    (false, _) => Role::Server,
                };
                if !is_sender {
                    tcb.listen();
                }
                App::Exchange(RequestResponse::new(sizes, role))
            } else if is_sender {
                let draws = rng::stream(scenario.seed, scenario.replication, rng::ids::app(i));
                App::Source(Box::new(
                    Source::new(t.buflen, t.limit, t.pace).with_random(t.block_size, draws),
                ))
            } else {
                if udp.is_none() {
                    tcb.listen();
                }
                let expect = match t.limit {
                    Limit::Bytes(n) => n,
                    // Read until the transmitter closes.
                    Limit::Duration(_) => u64::MAX,
                };
                App::Sink(TtcpSink::new(t.read_size, expect))
            };
            let ep = world.eps.len();
            world.eps.push(Endpoint {
                host,
                udp,
                mtu: t.mtu,
                transfer: i,
                is_sender,
                tcb,
                app,
                circuit_out,
                encap_header: t.encap_header,
                mbufs: SendMbufs::default(),
                app_queued: false,
                // The receiver is already waiting in read() (ttcp -r starts first).
                app_blocked: !is_sender,
                app_sleeping: false,
                app_done: false,
                started: !is_sender,
                timer_at: None,
                timer_gen: 0,
                timer_queued: false,
                delack_listed: false,
                slow_at: None,
                ticks_seen: 0,
                finished: false,
            });
            world.hosts[host].endpoints.push(ep);
            world.hosts[host].live_eps += 1;
            world.apps_running += 1;
            if is_sender && t.after.is_empty() {
                world.events.schedule(t.start, Event::Start { ep });
            }
        }
    }

    // The global timers of each host start at a random phase: a delayed ACK
    // waits anywhere from 0 to 200 ms. A host whose connections all keep
    // timers of their own has none.
    for h in 0..world.hosts.len() {
        let Some(fast_interval) = world.hosts[h].fast_interval else {
            continue;
        };
        let mut r = rng::stream(
            scenario.seed,
            scenario.replication,
            rng::ids::host_timers(h),
        );
        let fast = SimTime(r.gen_range(0..fast_interval.0));
        let slow = SimTime(r.gen_range(0..SLOW_TICK.0));
        world.events.schedule(fast, Event::FastTick(h));
        world.events.schedule(slow, Event::SlowTick(h));
    }

    world.capture = capture;
    world.run(scenario.time_limit, scenario.event_budget, clock)?;
    let results = world.results(scenario);
    // After the results: settling the network for the capture moves its counters.
    let counts = match world.capture.take() {
        Some(c) => Some(
            c.finish(&mut world.net, world.loop_end)
                .map_err(|e| ScenarioError(format!("cells: {e}")))?,
        ),
        None => None,
    };
    Ok((results, counts))
}

/// Check a scenario before anything runs: a bad value is reported, never half-run.
pub fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    for (i, t) in s.transfers.iter().enumerate() {
        // Both ends take both buffers (a stream's ends, netperf -s/-S).
        for flavour in [t.flavour, t.receiver_flavour] {
            let max = flavour.policy().max_sockbuf;
            for (what, v) in [("send buffer", t.sndbuf), ("receive buffer", t.rcvbuf)] {
                if v == 0 || v > max {
                    return Err(ScenarioError(format!(
                        "transfer {i}: {what} {v} bytes is out of range for {flavour}: 1..={max}"
                    )));
                }
            }
        }
        if t.buflen == 0 {
            return Err(ScenarioError(format!(
                "transfer {i}: write size 0: must be at least 1 byte"
            )));
        }
        if t.protocol == Protocol::Udp {
            let max = MAX_DATAGRAM.min(t.sndbuf);
            if t.buflen > max {
                return Err(ScenarioError(format!(
                    "transfer {i}: UDP datagrams of {} bytes: at most {max} (the send buffer and 65507)",
                    t.buflen
                )));
            }
        }
        if let Some(x) = t.transaction {
            if t.protocol != Protocol::Tcp || !matches!(t.limit, Limit::Duration(_)) {
                return Err(ScenarioError(format!(
                    "transfer {i}: request/response runs over TCP for a duration"
                )));
            }
            if x.request == 0 || x.response == 0 {
                return Err(ScenarioError(format!(
                    "transfer {i}: request {} and response {} bytes: each at least 1 byte",
                    x.request, x.response
                )));
            }
        }
        if t.read_size == 0 {
            return Err(ScenarioError(format!(
                "transfer {i}: read size 0: must be at least 1 byte"
            )));
        }
        match t.limit {
            Limit::Bytes(0) => {
                return Err(ScenarioError(format!(
                    "transfer {i}: 0 bytes to send: must be at least 1"
                )))
            }
            Limit::Duration(SimTime::ZERO) => {
                return Err(ScenarioError(format!(
                    "transfer {i}: duration 0: must be > 0"
                )))
            }
            _ => {}
        }
        if let Pace::Every { period_us, .. } = t.pace {
            let what = format!("transfer {i}: block period (µs)");
            period_us
                .check(&what, 1e12)
                .map_err(|e| ScenarioError(e.to_string()))?;
        }
        if let Some(size) = t.block_size {
            let what = format!("transfer {i}: block size (bytes)");
            size.check(&what, t.buflen as f64)
                .map_err(|e| ScenarioError(e.to_string()))?;
        }
        if !(576..=65_535 - 8 - t.encap_header).contains(&t.mtu) {
            return Err(ScenarioError(format!(
                "transfer {i}: MTU {} is out of range: 576..={} (what one AAL5 PDU carries)",
                t.mtu,
                65_535 - 8 - t.encap_header
            )));
        }
        for h in [t.sender, t.receiver] {
            if h >= s.hosts.len() {
                return Err(ScenarioError(format!("transfer {i}: no host {h}")));
            }
        }
        // Only earlier transfers: the dependencies can then never form a cycle.
        if let Some(&a) = t.after.iter().find(|&&a| a >= i) {
            return Err(ScenarioError(format!(
                "transfer {i}: starts after transfer {a}, which is not an earlier \
                 transfer: a transfer waits only for ones before it"
            )));
        }
    }
    Ok(())
}

impl World {
    /// The event loop: each step costs the same whatever the number of hosts
    /// and connections (no step scans them all). It ends when every
    /// application is done, at the time limit, out of events, or with its event
    /// budget spent (`budget_cut`); or with an error when a stop is requested.
    fn run(
        &mut self,
        limit: SimTime,
        budget: u64,
        clock: &mut dyn Clock,
    ) -> Result<(), ScenarioError> {
        let mut steps: u64 = 0;
        loop {
            if let Some(c) = &mut self.capture {
                c.take(&mut self.net, self.now);
            }
            if self.apps_running == 0 {
                self.loop_end = self.now;
                return Ok(());
            }
            // The one place a run looks outside itself: its event budget and a stop request.
            steps += 1;
            if steps.is_multiple_of(guard::CHECK_EVERY) && guard::check(steps, budget)? {
                self.budget_cut = Some(self.now);
                break;
            }
            let t_ev = self.events.peek_time();
            let t_net = self.net.poll_at();
            let next = match (t_ev, t_net) {
                (None, None) => break,
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (Some(a), Some(b)) => a.min(b),
            };
            if next > limit {
                // Cut by the limit: the capture takes every cell started by then.
                self.loop_end = limit;
                break;
            }
            clock.advance_to(next);
            self.now = next;
            if t_net == Some(next) {
                // The network first at equal times: arrivals precede same-instant work.
                let mut deliveries = std::mem::take(&mut self.deliveries);
                self.net.poll(next, &mut deliveries);
                for d in deliveries.drain(..) {
                    self.deliver(d);
                }
                self.deliveries = deliveries;
                continue;
            }
            let (_, ev) = self.events.pop().expect("peeked");
            self.events_handled += 1;
            self.handle(ev);
        }
        // At the time limit, out of events or budget: the run ends at its last event
        // up to where it was cut, counting the ticks of idle hosts as if they had run.
        let end = self.budget_cut.unwrap_or(limit);
        self.loop_end = self.loop_end.max(self.now);
        for h in 0..self.hosts.len() {
            if let Some(last) = self.replay_ticks(h, SimTime(end.0.saturating_add(1))) {
                self.now = self.now.max(last);
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::CpuFree(h) => {
                self.hosts[h].busy = false;
                self.dispatch(h);
            }
            Event::FastTick(h) => self.tick(h, false),
            Event::SlowTick(h) => self.tick(h, true),
            Event::ConnTimer { ep, gen } => self.conn_timer(ep, gen),
            Event::Transmit { ep, token } => {
                let (circuit, payload) = {
                    let e = &self.eps[ep];
                    (e.circuit_out, self.segs[token].1.ip_len() + e.encap_header)
                };
                let buffers = &self.gathers[token];
                if !self
                    .net
                    .send_gathered(self.now, circuit, payload, buffers, token as u64)
                {
                    self.adapter_drops[self.eps[ep].transfer] += 1;
                    if let Some(u) = &mut self.eps[ep].udp {
                        u.stats.dropped_interface_queue += 1;
                    }
                    self.free_tokens.push(token);
                }
            }
            Event::Start { ep } => {
                let h = self.eps[ep].host;
                self.eps[ep].started = true;
                self.starts.started_at[self.eps[ep].transfer] = Some(self.now);
                self.eps[ep].app_queued = true;
                if let App::Source(s) = &mut self.eps[ep].app {
                    if let Some(period) = s.next_period() {
                        self.events
                            .schedule(self.now + period, Event::BlockDue { ep });
                    }
                }
                self.enqueue(h, Job::App { ep }, false);
            }
            Event::BlockDue { ep } => self.block_due(ep),
            Event::UdpLinger { ep } => {
                let e = &mut self.eps[ep];
                if let App::Sink(s) = &mut e.app {
                    s.finished = s.last_read.or(Some(self.now));
                }
                self.app_finished(ep);
                self.note_finished(ep);
            }
        }
    }

    /// A tick of one of the host's global timers (4.3BSD's 200 ms fast and
    /// 500 ms slow timeouts, at the phases drawn at the start). A host with
    /// nothing left to do stops the chain here, this tick included, and
    /// schedules no more: `wake_host` replays the stopped ticks if work comes.
    fn tick(&mut self, h: HostId, slow: bool) {
        self.catch_up_ticks(h);
        let host = &mut self.hosts[h];
        if host.live_eps == 0
            && !host.busy
            && host.interrupts.is_empty()
            && host.processes.is_empty()
        {
            let chain = if slow {
                &mut host.slow_dormant
            } else {
                &mut host.fast_dormant
            };
            *chain = Some(self.now);
            return;
        }
        if slow {
            self.events
                .schedule(self.now + SLOW_TICK, Event::SlowTick(h));
            self.enqueue(h, Job::SlowTick, true);
        } else if let Some(interval) = host.fast_interval {
            self.events
                .schedule(self.now + interval, Event::FastTick(h));
            self.enqueue(h, Job::FastTick, true);
        }
    }

    /// Account the stopped ticks of a host before `now` as if they had run
    /// (see `replay_ticks`); the CPU is busy if the last still runs.
    fn catch_up_ticks(&mut self, h: HostId) {
        let now = self.now;
        if self.replay_ticks(h, now).is_some() {
            let host = &mut self.hosts[h];
            if host.busy_until >= now {
                host.busy = true;
                let free = host.busy_until;
                self.events.schedule(free, Event::CpuFree(h));
            }
        }
    }

    /// Account the stopped ticks of a host before `before` as if they had run:
    /// each draws its cost's jitter and keeps the CPU busy for a tick's cost
    /// (no connection had anything for them to do), so the host's CPU and
    /// random stream stand as they would have, and the ticks keep their phase.
    /// Returns the time of the last of their events (tick, CPU free) before
    /// `before`, if any tick was replayed.
    fn replay_ticks(&mut self, h: HostId, before: SimTime) -> Option<SimTime> {
        let host = &mut self.hosts[h];
        let mut last = None;
        loop {
            // At equal times the slow tick runs first: its event was scheduled
            // 500 ms before, the fast one's 200 ms before.
            let (at, slow) = match (host.fast_dormant, host.slow_dormant) {
                (Some(f), Some(s)) if s <= f => (s, true),
                (Some(f), _) => (f, false),
                (None, Some(s)) => (s, true),
                (None, None) => break,
            };
            if at >= before {
                break;
            }
            debug_assert!(!host.busy, "a host with stopped ticks had work");
            let scale = host.draw_job_scale();
            let start = at.max(host.busy_until);
            let end = start + scale_cost(host.profile.timer_tick, scale);
            host.busy_total += end - start;
            host.busy_until = end;
            let seen = if end < before { end } else { at };
            last = Some(last.map_or(seen, |l: SimTime| l.max(seen)));
            if slow {
                host.slow_ticks += 1;
                host.slow_dormant = Some(at + SLOW_TICK);
            } else {
                let interval = host.fast_interval.expect("a fast tick chain");
                host.fast_dormant = Some(at + interval);
            }
        }
        last
    }

    /// Work comes to a host: its stopped ticks are replayed up to now and
    /// their chains go on at the same phase.
    fn wake_host(&mut self, h: HostId) {
        self.catch_up_ticks(h);
        // Slow first: its event would have been scheduled first (see `replay_ticks`).
        if let Some(at) = self.hosts[h].slow_dormant.take() {
            self.events.schedule(at, Event::SlowTick(h));
        }
        if let Some(at) = self.hosts[h].fast_dormant.take() {
            self.events.schedule(at, Event::FastTick(h));
        }
    }

    /// An endpoint's application finished (at the start of the work that
    /// finished it, as every state change). Once both ends of its transfer
    /// have, the transfer has ended: a transfer that waited for it and for
    /// nothing else now starts, its offset after this instant.
    fn app_finished(&mut self, ep: usize) {
        if self.eps[ep].app_done {
            return;
        }
        self.eps[ep].app_done = true;
        self.apps_running -= 1;
        let s = &mut self.starts;
        s.done_at[ep] = Some(self.now);
        let transfer = self.eps[ep].transfer;
        let (Some(a), Some(b)) = (s.done_at[2 * transfer], s.done_at[2 * transfer + 1]) else {
            return;
        };
        let end = a.max(b);
        s.ended_at[transfer] = Some(end);
        for k in 0..s.dependants[transfer].len() {
            let j = s.dependants[transfer][k];
            s.waiting[j] -= 1;
            if s.waiting[j] == 0 {
                self.events
                    .schedule(end + s.offset[j], Event::Start { ep: 2 * j });
            }
        }
    }

    /// Count the endpoint in or out of its host's live endpoints.
    fn note_finished(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        let finished =
            e.app_done && e.tcb.state == State::Closed && e.tcb.timers_idle() && !e.timer_queued;
        if finished != e.finished {
            e.finished = finished;
            let host = &mut self.hosts[e.host];
            if finished {
                host.live_eps -= 1;
            } else {
                host.live_eps += 1;
            }
        }
    }

    /// An endpoint's timer event. A deadline that moved later meanwhile gets
    /// one new event (not one per change: an ACK restarting the retransmit
    /// timer costs nothing until the old deadline comes); one that came due
    /// is interrupt work for the host's CPU.
    fn conn_timer(&mut self, ep: usize, gen: u64) {
        let e = &mut self.eps[ep];
        if gen != e.timer_gen {
            // Superseded by an earlier deadline armed since.
            return;
        }
        e.timer_at = None;
        match e.tcb.next_timer() {
            Some(due) if due <= self.now => {
                e.timer_queued = true;
                let h = e.host;
                self.enqueue(h, Job::ConnTimer { ep }, true);
            }
            Some(_) => self.arm_conn_timer(ep),
            None => {}
        }
    }

    /// Make sure an event comes by the endpoint's earliest timer deadline:
    /// schedule one unless an event no later than it is live already.
    fn arm_conn_timer(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        if e.timer_queued {
            // The timer's work is queued; it arms the next deadline when done.
            return;
        }
        let Some(due) = e.tcb.next_timer() else {
            return;
        };
        if e.timer_at.is_some_and(|at| at <= due) {
            return;
        }
        e.timer_gen += 1;
        e.timer_at = Some(due);
        let event = Event::ConnTimer {
            ep,
            gen: e.timer_gen,
        };
        self.events.schedule(due.max(self.now), event);
    }

    fn deliver(&mut self, d: Delivery) {
        let token = d.token as usize;
        let from = self.segs[token].0;
        let to = self.peer(from);
        let h = self.eps[to].host;
        self.enqueue(h, Job::Input { ep: to, token }, true);
    }

    /// The other end of an endpoint's connection.
    fn peer(&self, ep: usize) -> usize {
        ep ^ 1
    }

    fn enqueue(&mut self, h: HostId, job: Job, interrupt: bool) {
        self.wake_host(h);
        let host = &mut self.hosts[h];
        if interrupt {
            host.interrupts.push_back(job);
        } else {
            host.processes.push_back(job);
        }
        if !host.busy {
            self.dispatch(h);
        }
    }

    /// Start the next piece of work on a free CPU.
    fn dispatch(&mut self, h: HostId) {
        let host = &mut self.hosts[h];
        debug_assert!(!host.busy);
        let Some(job) = host
            .interrupts
            .pop_front()
            .or_else(|| host.processes.pop_front())
        else {
            return;
        };
        host.busy = true;
        let end = self.execute(h, job);
        let host = &mut self.hosts[h];
        host.busy_total += end - self.now;
        host.busy_until = end;
        self.events.schedule(end, Event::CpuFree(h));
    }

    /// Do a piece of work at `now`; returns when the CPU is free again.
    /// Every cost of the piece is scaled by one jitter factor (`Host::draw_job_scale`).
    fn execute(&mut self, h: HostId, job: Job) -> SimTime {
        self.job_scale = self.hosts[h].draw_job_scale();
        // The endpoints this work touches, in host order: only their state can
        // change. TCP clocks (timestamps, fine-grained RTT) read the time the work starts.
        let mut touched = std::mem::take(&mut self.touched);
        match job {
            Job::Input { ep, .. } | Job::ConnTimer { ep } | Job::App { ep } => touched.push(ep),
            // tcp_fasttimo: only a connection with a delayed ACK pending has work.
            Job::FastTick => {
                let host = &mut self.hosts[h];
                touched.append(&mut host.delack);
                touched.sort_unstable();
                for &ep in &touched {
                    self.eps[ep].delack_listed = false;
                }
            }
            // tcp_slowtimo: only a connection whose timer expires now has work.
            Job::SlowTick => {
                let host = &mut self.hosts[h];
                let tick = host.slow_ticks + 1;
                while let Some(&Reverse((at, ep))) = host.slow.peek() {
                    if at > tick {
                        break;
                    }
                    host.slow.pop();
                    let e = &mut self.eps[ep];
                    if e.slow_at != Some(at) {
                        continue;
                    }
                    e.slow_at = None;
                    let Some(left) = e.tcb.next_slow_timer() else {
                        continue;
                    };
                    let due = e.ticks_seen + left as u64;
                    if due == tick {
                        touched.push(ep);
                    } else {
                        e.slow_at = Some(due);
                        host.slow.push(Reverse((due, ep)));
                    }
                }
                touched.sort_unstable();
            }
        }
        let ticks = self.hosts[h].slow_ticks;
        for &ep in &touched {
            let e = &mut self.eps[ep];
            e.tcb.skip_slow_ticks((ticks - e.ticks_seen) as u32);
            e.ticks_seen = ticks;
            e.tcb.set_now(self.now);
        }
        let mut t = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        match job {
            Job::Input { ep, token } => {
                let packet = self.segs[token].1;
                self.free_tokens.push(token);
                let ip_len = packet.ip_len();
                let cells = aal5_cells(ip_len + self.eps[ep].encap_header);
                match packet {
                    Packet::Tcp(seg) => {
                        let cost = self.hosts[h].profile.receive_cost(seg.len, ip_len, cells);
                        t += self.scaled(cost);
                        if self.eps[ep].is_sender && seg.flags.ack {
                            self.probe_ack(self.eps[ep].transfer, seg.ack);
                        }
                        let wake = self.eps[ep].tcb.input(&seg, &mut out);
                        let una = self.eps[ep].tcb.snd_una;
                        self.eps[ep].mbufs.acknowledged(una);
                        self.charge_and_send(ep, &mut t, &mut out);
                        if wake.writable || wake.readable || wake.established {
                            self.wake_app(ep);
                        }
                    }
                    Packet::Udp {
                        dgram, data, count, ..
                    } => {
                        // ip_input reassembles; the UDP checksum covers the whole datagram.
                        let data_here = ip_len.saturating_sub(crate::host::udp::IP_HEADER);
                        let cost = self.hosts[h].profile.receive_cost(data_here, ip_len, cells);
                        t += self.scaled(cost);
                        let sock = self.eps[ep]
                            .udp
                            .as_mut()
                            .expect("UDP packets go to UDP endpoints");
                        if sock.input(dgram, count, data) {
                            self.wake_app(ep);
                        }
                    }
                }
            }
            Job::FastTick => {
                t += self.scaled(self.hosts[h].profile.timer_tick);
                for &ep in &touched {
                    self.eps[ep].tcb.fast_timer(&mut out);
                    self.charge_and_send(ep, &mut t, &mut out);
                }
            }
            Job::SlowTick => {
                t += self.scaled(self.hosts[h].profile.timer_tick);
                self.hosts[h].slow_ticks += 1;
                for &ep in &touched {
                    self.eps[ep].ticks_seen += 1;
                    let wake = self.eps[ep].tcb.slow_timer(&mut out);
                    self.charge_and_send(ep, &mut t, &mut out);
                    if wake.closed {
                        self.wake_app(ep);
                    }
                }
            }
            Job::ConnTimer { ep } => {
                // One timer routine's run, as a tick costs.
                self.eps[ep].timer_queued = false;
                t += self.scaled(self.hosts[h].profile.timer_tick);
                let wake = self.eps[ep].tcb.expire_timers(&mut out);
                self.charge_and_send(ep, &mut t, &mut out);
                if wake.closed {
                    self.wake_app(ep);
                }
            }
            Job::App { ep } => {
                self.eps[ep].app_queued = false;
                self.run_app(h, ep, &mut t, &mut out);
            }
        }
        self.scratch = out;
        for &ep in &touched {
            // The work may have armed, moved or stopped the connection's timers.
            self.arm_conn_timer(ep);
            self.track_circular_wait(self.eps[ep].transfer);
            if self.cwnd_series.is_some() {
                self.sample_cwnd(ep);
            }
            let e = &mut self.eps[ep];
            if !e.delack_listed
                && e.tcb.delack_pending()
                && e.tcb.policy().timers == TimerModel::SlowTick
            {
                e.delack_listed = true;
                self.hosts[h].delack.push(ep);
            }
            if let Some(left) = e.tcb.next_slow_timer() {
                let due = e.ticks_seen + left as u64;
                if e.slow_at.is_none_or(|at| at > due) {
                    e.slow_at = Some(due);
                    self.hosts[h].slow.push(Reverse((due, ep)));
                }
            }
            self.note_finished(ep);
        }
        touched.clear();
        self.touched = touched;
        t
    }

    /// Series: after a piece of work, a sample of a TCP sender's congestion
    /// state if it changed. The work's state changes happen when it starts
    /// (see the module's head), so the sample carries that time.
    fn sample_cwnd(&mut self, ep: usize) {
        let e = &self.eps[ep];
        let Some(series) = &mut self.cwnd_series else {
            return;
        };
        if !e.is_sender
            || e.udp.is_some()
            || matches!(
                e.tcb.state,
                State::Closed | State::Listen | State::SynSent | State::SynReceived
            )
        {
            return;
        }
        let tcb = &e.tcb;
        let sample = CwndSample {
            at: self.now,
            cwnd: tcb.snd_cwnd,
            ssthresh: tcb.snd_ssthresh,
            flight: (tcb.snd_max - tcb.snd_una).max(0) as u32,
        };
        let s = &mut series[e.transfer];
        let same = |x: &CwndSample| {
            (x.cwnd, x.ssthresh, x.flight) == (sample.cwnd, sample.ssthresh, sample.flight)
        };
        if !s.last().is_some_and(same) {
            s.push(sample);
        }
    }

    /// A cost of the piece of work being executed, with its jitter.
    fn scaled(&self, cost: SimTime) -> SimTime {
        scale_cost(cost, self.job_scale)
    }

    /// Account the time a transfer spends in the Nagle/delayed-ACK circular
    /// wait, and (for explanations) the time its sender holds back data.
    fn track_circular_wait(&mut self, transfer: usize) {
        let (s, r) = (&self.eps[2 * transfer].tcb, &self.eps[2 * transfer + 1].tcb);
        let exchange = matches!(self.eps[2 * transfer].app, App::Exchange(_));
        // Data held back (Nagle, sender SWS avoidance): the sender's; in a
        // request/response test the server's responses too.
        let holding = (s.holding() && !self.eps[2 * transfer].app_done)
            || (exchange && r.holding() && !self.eps[2 * transfer + 1].app_done);
        let p = &mut self.probes[transfer];
        match (holding, p.hold_since) {
            (true, None) => p.hold_since = Some(self.now),
            (false, Some(since)) => {
                p.hold_total += self.now - since;
                p.hold_since = None;
            }
            _ => {}
        }
        // One end waits for an ACK the other, having read all that came, delays:
        // Nagle holds a short segment, the sender's write waits (Winsock AFD's
        // unbuffered send until acknowledged, a send buffer short of room), or
        // data it has not sent waits on a closed window. A stream's receiver
        // sends no data; in a request/response test the server holds responses
        // as the client requests.
        let src = &self.eps[2 * transfer];
        let write_waits = matches!(&src.app, App::Source(_)) && src.app_blocked && !src.app_done;
        let unsent = s.snd.cc > s.outstanding();
        let waits = |a: &Tcb, b: &Tcb, held: bool| {
            (a.holding() || held) && b.delack_pending() && b.rcv.cc == 0 && a.snd_max == b.rcv_nxt
        };
        let stream_wait = waits(s, r, write_waits || unsent);
        let waiting = stream_wait || (exchange && waits(r, s, false));
        match (waiting, self.wait_since[transfer]) {
            (true, None) => self.wait_since[transfer] = Some(self.now),
            (false, Some(since)) => {
                self.wait_total[transfer] += self.now - since;
                self.wait_since[transfer] = None;
            }
            _ => {}
        }
        // Of that, the time the window the sender knows is closed: only the
        // receiver's update (which its timer sends) lets anything more go.
        let window_wait = stream_wait && s.snd_wnd <= s.outstanding();
        let p = &mut self.probes[transfer];
        match (window_wait, p.window_wait_since) {
            (true, None) => p.window_wait_since = Some(self.now),
            (false, Some(since)) => {
                p.window_wait_total += self.now - since;
                p.window_wait_since = None;
            }
            _ => {}
        }
    }

    fn run_app(&mut self, h: HostId, ep: usize, t: &mut SimTime, out: &mut Vec<Segment>) {
        if self.eps[ep].app_done {
            return;
        }
        let p = &self.hosts[h].profile;
        let costs = Costs {
            syscall: self.scaled(p.syscall),
            copy_ps_per_byte: p.copy_ps_per_byte * self.job_scale / 1000,
            // The socket layer goes with the kernel: SunOS's for SunOS 4.1.x, 4.4BSD's otherwise.
            append: match self.eps[ep].tcb.flavour {
                Flavour::Sunos411 | Flavour::Sunos413 => AppendRule::SunOs,
                _ => AppendRule::Bsd44 {
                    mclbytes: self.eps[ep].tcb.policy().mclbytes,
                },
            },
            send_completes_on_ack: self.eps[ep].tcb.policy().send_completes_on_ack,
        };
        if self.eps[ep].udp.is_some() {
            self.run_udp_app(h, ep, t, &costs);
            return;
        }
        let e = &mut self.eps[ep];
        if e.is_sender && e.tcb.state == State::Closed {
            // Active open first; the application runs when the connection is up.
            e.tcb.connect(out);
            e.app_blocked = true;
            self.charge_and_send(ep, t, out);
            return;
        }
        if matches!(
            e.tcb.state,
            State::Listen | State::SynSent | State::SynReceived
        ) {
            e.app_blocked = true;
            return;
        }
        // After the peer's FIN, a read of an empty buffer returns end of file.
        let eof = !matches!(
            e.tcb.state,
            State::Established | State::FinWait1 | State::FinWait2
        );
        match &mut e.app {
            App::Sink(s) => s.eof = eof,
            App::Exchange(x) => x.eof = eof,
            App::Source(_) => {}
        }
        // What the write appended (tcp_output ran on it inside the step, so its
        // segments are not handed over yet): note the host buffers it filled.
        let cc = e.tcb.snd.cc;
        let step = match &mut e.app {
            App::Source(s) => s.step(&mut e.tcb, &costs, t, out),
            App::Sink(s) => s.step(&mut e.tcb, &costs, t, out),
            App::Exchange(x) => x.step(&mut e.tcb, &costs, t, out),
        };
        if e.tcb.snd.cc > cc {
            let first = e.tcb.iss + 1;
            e.mbufs.append(costs.append, first, e.tcb.snd.cc - cc);
        }
        // tcp_output ran inside the write: the call returns once it is paid for.
        self.charge_and_send(ep, t, out);
        if let App::Source(s) = &mut self.eps[ep].app {
            s.note_return(*t);
        }
        if self.settle_step(h, ep, step) {
            self.eps[ep].tcb.close(out);
            self.charge_and_send(ep, t, out);
        }
    }

    /// Schedule what an application step asked for: run again, sleep until a
    /// wakeup, or finish (true). ttcp -t stops its clock when the last write returns.
    fn settle_step(&mut self, h: HostId, ep: usize, step: Step) -> bool {
        self.probe_interval(ep, matches!(step, Step::Done));
        let e = &mut self.eps[ep];
        match step {
            Step::Continue => {
                e.app_queued = true;
                self.hosts[h].processes.push_back(Job::App { ep });
            }
            Step::Blocked => e.app_blocked = true,
            Step::Sleep => e.app_sleeping = true,
            Step::Done => {
                if let App::Source(s) = &mut e.app {
                    s.finished = s.last_return;
                }
                self.app_finished(ep);
                return true;
            }
        }
        false
    }

    /// One step of a UDP application: a write() sends one datagram as IP
    /// fragments; a read() takes one datagram.
    fn run_udp_app(&mut self, h: HostId, ep: usize, t: &mut SimTime, costs: &Costs) {
        let e = &mut self.eps[ep];
        let sock = e.udp.as_mut().expect("UDP endpoint");
        let step = match &mut e.app {
            App::Sink(s) => s.step_udp(sock, costs, t),
            App::Exchange(_) => unreachable!("validate: request/response runs over TCP"),
            App::Source(s) => match s.step_udp(costs, t) {
                Err(step) => step,
                Ok(len) => {
                    let frags = crate::host::udp::fragments(len, e.mtu);
                    sock.stats.datagrams_sent += 1;
                    sock.stats.fragments_sent += frags.len() as u64;
                    let dgram = self.next_dgram;
                    self.next_dgram += 1;
                    let count = frags.len() as u16;
                    let mut offset = 0;
                    for (i, &ip_len) in frags.iter().enumerate() {
                        // The checksum pass covers the datagram's data once.
                        let sum = if i == 0 { len } else { 0 };
                        let cells = aal5_cells(ip_len + self.eps[ep].encap_header);
                        let cost = self.hosts[h].profile.send_cost(sum, ip_len, cells);
                        *t += self.scaled(cost);
                        self.emit(
                            ep,
                            *t,
                            Packet::Udp {
                                dgram,
                                ip_len,
                                data: len,
                                count,
                                offset,
                            },
                        );
                        offset += ip_len - crate::host::udp::IP_HEADER;
                    }
                    let App::Source(s) = &mut self.eps[ep].app else {
                        unreachable!("matched a source above")
                    };
                    s.note_return(*t);
                    if s.all_written() {
                        Step::Done
                    } else {
                        Step::Continue
                    }
                }
            },
        };
        if self.settle_step(h, ep, step) && self.eps[ep].is_sender {
            // The receiver reads what still arrives, then stops.
            let sink = self.peer(ep);
            self.events
                .schedule(*t + UDP_LINGER, Event::UdpLinger { ep: sink });
        }
    }

    /// A paced source's next block falls due.
    fn block_due(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        let App::Source(s) = &mut e.app else { return };
        if e.app_done {
            return;
        }
        let Some(period) = s.next_period() else {
            return;
        };
        if s.block_due() && e.app_sleeping {
            e.app_sleeping = false;
            e.app_queued = true;
            let h = e.host;
            self.enqueue(h, Job::App { ep }, false);
        }
        self.events
            .schedule(self.now + period, Event::BlockDue { ep });
    }

    fn wake_app(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        if e.app_blocked && !e.app_queued && e.started && !e.app_done {
            e.app_blocked = false;
            e.app_queued = true;
            let h = e.host;
            self.hosts[h].processes.push_back(Job::App { ep });
        }
    }

    /// Charge the CPU for each segment tcp_output produced and hand it to the
    /// adapter when paid for.
    fn charge_and_send(&mut self, ep: usize, t: &mut SimTime, out: &mut Vec<Segment>) {
        let h = self.eps[ep].host;
        let encap = self.eps[ep].encap_header;
        for seg in out.drain(..) {
            let ip_len = seg.ip_len();
            let cost = self.hosts[h]
                .profile
                .send_cost(seg.len, ip_len, aal5_cells(ip_len + encap));
            *t += self.scaled(cost);
            if self.eps[ep].is_sender && seg.len > 0 {
                self.probe_segment(ep, &seg, ip_len, *t);
            }
            if let Some(trace) = &mut self.trace {
                let e = &self.eps[ep];
                trace.push(TraceRecord {
                    at: *t,
                    transfer: e.transfer,
                    from_sender: e.is_sender,
                    seg,
                });
            }
            self.emit(ep, *t, Packet::Tcp(seg));
        }
    }

    /// A data segment left the sender's host at `at`: time it if it is new
    /// and none is being timed (one at a time, as BSD does); forget the timing
    /// if it resends what is timed (Karn); note the window in flight.
    fn probe_segment(&mut self, ep: usize, seg: &Segment, ip_len: u32, at: SimTime) {
        let e = &self.eps[ep];
        let p = &mut self.probes[e.transfer];
        let end = seg.seq + seg.len;
        let new = p.sent_hi.is_none_or(|hi| end.gt(hi));
        match p.timed {
            Some((timed_end, _, _)) if seg.seq.lt(timed_end) && !new => p.timed = None,
            None if new => p.timed = Some((end, at, seg.len)),
            _ => {}
        }
        if new {
            p.sent_hi = Some(end);
        }
        let flight = (end - e.tcb.snd_una).max(0) as u32;
        p.peak_flight = p.peak_flight.max(flight);
        if new {
            if let Some((since, window)) = p.closed.take() {
                let (n, bytes, time) = &mut p.window_cycles;
                *n += 1;
                *bytes += window as u64;
                *time += at.saturating_sub(since);
            }
            let tcb = &e.tcb;
            let window_full = tcb.window_full(flight);
            let sndbuf_full = tcb.snd.space() == 0 && flight >= tcb.snd.cc;
            if window_full || sndbuf_full {
                p.closed = Some((at, flight));
            }
        } else {
            p.closed = None;
        }
        if p.largest_segment.is_none_or(|(len, _)| seg.len > len) {
            p.largest_segment = Some((seg.len, ip_len));
            let header = e.encap_header + ip_len - seg.len;
            e.mbufs
                .gather(seg.seq, seg.len, header, &mut p.largest_segment_buffers);
        }
    }

    /// The sender starts processing an ACK: a round-trip sample if it covers
    /// the timed segment (kept if that is the largest timed so far).
    fn probe_ack(&mut self, transfer: usize, ack: Seq) {
        let p = &mut self.probes[transfer];
        if let Some((end, sent, len)) = p.timed {
            if ack.ge(end) {
                let rtt = self.now.saturating_sub(sent);
                if len > p.min_rtt_len {
                    p.min_rtt_len = len;
                    p.min_rtt = Some(rtt);
                } else if len == p.min_rtt_len {
                    p.min_rtt = Some(p.min_rtt.map_or(rtt, |m| m.min(rtt)));
                }
                p.timed = None;
            }
        }
    }

    /// A host's CPU busy time up to `at`: the work started so far, less what the
    /// last piece still has to run after `at`. (Read inside a piece of work on
    /// the same host it leaves that piece out: an error of at most one piece.)
    fn cpu_busy_at(&self, h: HostId, at: SimTime) -> SimTime {
        let host = &self.hosts[h];
        host.busy_total
            .saturating_sub(host.busy_until.saturating_sub(at))
    }

    /// After a step of the sender's application: note both CPUs' busy time when
    /// ttcp -t's interval opens (the first write) and, when it `done`, the
    /// fraction of the interval each was busy.
    fn probe_interval(&mut self, ep: usize, done: bool) {
        let e = &self.eps[ep];
        let (started, finished) = match &e.app {
            App::Source(src) => (src.started, src.last_return),
            // The client's whole run (a CPU snapshot is only good for now).
            App::Exchange(x) if e.is_sender => (x.started, x.finished),
            _ => return,
        };
        let p = &self.probes[e.transfer];
        let hosts = p.hosts;
        let busy = |at| hosts.map(|h| self.cpu_busy_at(h, at));
        let start = match (p.cpu_at_start, started) {
            (Some(b), _) => b,
            (None, Some(at)) => busy(at),
            (None, None) => return,
        };
        let end = match (done, started, finished) {
            (true, Some(a), Some(b)) if b > a => Some((busy(b), (b - a).as_secs_f64())),
            _ => None,
        };
        let p = &mut self.probes[e.transfer];
        p.cpu_at_start = Some(start);
        if let Some((b, secs)) = end {
            // The snapshots may each be off by one piece of work: keep it a fraction.
            p.cpu_busy =
                Some([0, 1].map(|i| (b[i].saturating_sub(start[i]).as_secs_f64() / secs).min(1.0)));
        }
    }

    /// Hand a packet to the endpoint's adapter at `at`, with the host buffers
    /// the adapter gathers it from.
    fn emit(&mut self, ep: usize, at: SimTime, packet: Packet) {
        let token = match self.free_tokens.pop() {
            Some(tok) => {
                self.segs[tok] = (ep, packet);
                tok
            }
            None => {
                self.segs.push((ep, packet));
                self.gathers.push(Vec::new());
                self.segs.len() - 1
            }
        };
        let e = &self.eps[ep];
        let out = &mut self.gathers[token];
        match packet {
            Packet::Tcp(seg) => {
                let header = e.encap_header + seg.ip_len() - seg.len;
                e.mbufs.gather(seg.seq, seg.len, header, out);
            }
            Packet::Udp { ip_len, offset, .. } => {
                let ip = crate::host::udp::IP_HEADER;
                udp_fragment_gather(offset, ip_len - ip, e.encap_header + ip, out);
            }
        }
        self.events.schedule(at, Event::Transmit { ep, token });
    }

    fn results(&mut self, scenario: &Scenario) -> RunResult {
        let mut transfers = Vec::new();
        for (i, spec) in scenario.transfers.iter().enumerate() {
            let (s, r) = (&self.eps[2 * i], &self.eps[2 * i + 1]);
            let secs = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
                (Some(a), Some(b)) if b > a => (b - a).as_secs_f64(),
                _ => 0.0,
            };
            // A side the time limit (or the event budget) cut ran until then: its
            // rate so far.
            let cut = Some(self.budget_cut.unwrap_or(scenario.time_limit));
            let ends = match (&s.app, &r.app) {
                (App::Source(src), App::Sink(sink)) => Ends {
                    completed: src.finished.is_some()
                        && match (spec.protocol, spec.limit) {
                            // A UDP receiver takes what arrives; losses do not make it incomplete.
                            (Protocol::Udp, _) => sink.finished.is_some(),
                            (Protocol::Tcp, Limit::Bytes(n)) => sink.read >= n,
                            (Protocol::Tcp, Limit::Duration(_)) => sink.finished.is_some(),
                        },
                    bytes: src.written,
                    bytes_received: sink.read,
                    sender_seconds: secs(src.started, src.finished.or(cut)),
                    receiver_seconds: secs(sink.started, sink.finished.or(cut)),
                    writes: src.writes,
                    reads: sink.reads,
                    transactions: None,
                },
                // Request/response: the transmitter's figures are the client's
                // (its requests out, its elapsed time to the alarm); the receiver's
                // the server's (the requests it read).
                (App::Exchange(client), App::Exchange(server)) => Ends {
                    completed: client.finished.is_some() && server.finished.is_some(),
                    bytes: client.written,
                    bytes_received: server.read,
                    sender_seconds: secs(client.started, client.interval_end().or(cut)),
                    receiver_seconds: secs(client.started, server.finished.or(cut)),
                    writes: client.writes,
                    reads: server.reads,
                    transactions: Some(client.transactions),
                },
                _ => unreachable!("endpoints are created in pairs"),
            };
            transfers.push(TransferResult {
                completed: ends.completed,
                bytes: ends.bytes,
                bytes_received: ends.bytes_received,
                sender_seconds: ends.sender_seconds,
                receiver_seconds: ends.receiver_seconds,
                writes: ends.writes,
                reads: ends.reads,
                transactions: ends.transactions,
                sender: s.tcb.stats,
                receiver: r.tcb.stats,
                pdus_dropped_at_adapter: self.adapter_drops[i],
                // A client's wait after its alarm (finishing the last transaction) is
                // past netperf's elapsed time.
                circular_wait_seconds: match ends.transactions {
                    Some(_) => self.wait_total[i].as_secs_f64().min(ends.sender_seconds),
                    None => self.wait_total[i].as_secs_f64(),
                },
                probe: {
                    let p = &self.probes[i];
                    ProbeResult {
                        min_rtt: p.min_rtt,
                        peak_flight: p.peak_flight,
                        largest_segment: p.largest_segment,
                        largest_segment_buffers: p.largest_segment_buffers.clone(),
                        cpu_busy: p.cpu_busy,
                        holding_seconds: p.hold_total.as_secs_f64(),
                        window_cycles: p.window_cycles,
                        window_wait_seconds: p.window_wait_total.as_secs_f64(),
                    }
                },
                started_at: self.starts.started_at[i],
                ended_at: self.starts.ended_at[i],
                udp: s.udp.as_ref().map(|u| UdpStats {
                    datagrams_received: r.udp.as_ref().map_or(0, |v| v.stats.datagrams_received),
                    dropped_no_buffer: r.udp.as_ref().map_or(0, |v| v.stats.dropped_no_buffer),
                    ..u.stats
                }),
            });
        }
        RunResult {
            transfers,
            ports: (0..scenario.topology.ports.len())
                .map(|p| self.net.port_counters(p))
                .collect(),
            policers: (0..scenario.topology.policers.len())
                .map(|p| self.net.policer_counters(p))
                .collect(),
            circuits: (0..scenario.topology.circuits.len())
                .map(|c| self.net.circuit_counters(c))
                .collect(),
            end_time: self.now,
            budget_cut: self.budget_cut,
            events: self.events_handled + self.net.events_processed(),
            trace: self.trace.take().unwrap_or_default(),
            cwnd_series: self.cwnd_series.take().unwrap_or_default(),
            queue_series: if scenario.series {
                (0..scenario.topology.ports.len())
                    .map(|p| self.net.queue_series(p, self.now))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }
}

/// What one transfer's two applications saw (`World::results`).
struct Ends {
    completed: bool,
    bytes: u64,
    bytes_received: u64,
    sender_seconds: f64,
    receiver_seconds: f64,
    writes: u64,
    reads: u64,
    transactions: Option<u64>,
}

impl Host {
    /// The jitter factor of a piece of work starting now, per mille: real
    /// hosts never take the same time twice (cache state, interrupts, other
    /// processes), so every cost of the piece is scaled by one factor drawn
    /// uniformly from 1 ± jitter.
    fn draw_job_scale(&mut self) -> u64 {
        let j = self.profile.jitter_permille as u64;
        if j > 0 {
            1000 - j + self.jitter.gen_range(0..=2 * j)
        } else {
            1000
        }
    }
}

/// A cost scaled by a jitter factor per mille.
fn scale_cost(cost: SimTime, scale: u64) -> SimTime {
    // In u64 when the product fits (any cost under about 5 hours): a u128
    // division is a library call, and this runs for every cost of every job.
    match cost.0.checked_mul(scale) {
        Some(p) => SimTime(p / 1000),
        None => SimTime((cost.0 as u128 * scale as u128 / 1000) as u64),
    }
}

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

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::explain::lockstep_cycle;
    use crate::sim::testbeds::LanBuffers;

    fn lan(sndbuf: u32, rcvbuf: u32, nbytes: u64) -> LanBuffers {
        LanBuffers {
            sndbuf,
            rcvbuf,
            nbytes,
            ..LanBuffers::default()
        }
    }

    fn lan_scenario(study: &LanBuffers, seed: u64, trace: bool) -> Scenario {
        study.spec(seed, 0, trace).scenario().unwrap()
    }

    fn run_lan(study: &LanBuffers, seed: u64, trace: bool) -> RunResult {
        run(&lan_scenario(study, seed, trace)).unwrap()
    }

    #[test]
    fn same_seed_same_result_byte_for_byte() {
        let study = lan(16384, 20480, 4 << 20);
        let a = run_lan(&study, 7, true);
        let b = run_lan(&study, 7, true);
        assert_eq!(format!("{:?}", a.transfers), format!("{:?}", b.transfers));
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.events, b.events);
        // Another seed moves the timer phases and the cost jitter.
        let c = run_lan(&study, 8, true);
        assert_ne!(a.trace, c.trace);
    }

    #[test]
    fn hosts_with_nothing_left_to_do_stop_their_ticks() {
        use crate::sim::spec::{ConnSpec, HostSpec, Param, RunSpec, Traffic};
        let conn = |from, to, nbytes, sndbuf, rcvbuf| ConnSpec {
            sndbuf,
            rcvbuf,
            ..ConnSpec::new(
                from,
                to,
                Traffic::Full {
                    blocksize: Param::Value(8192.0),
                    nbytes: Some(nbytes),
                    duration_s: None,
                },
            )
        };
        // A long lock-step transfer C -> D (about 400 s), and A -> B done in under a second.
        let long = conn("C", "D", 16 << 20, 16_384, 24_576);
        let short = conn("A", "B", 1 << 20, 52_428, 52_428);
        let hosts: Vec<HostSpec> = ["A", "B", "C", "D"].map(HostSpec::named).to_vec();
        let run_of = |conns| run(&RunSpec::new(hosts.clone(), conns).scenario().unwrap()).unwrap();
        let both = run_of(vec![long.clone(), short.clone()]);
        let long_alone = run_of(vec![long]);
        let short_alone = run_of(vec![short]);
        // Other hosts, other switch ports: the long transfer runs as it does alone.
        assert_eq!(both.transfers[0], long_alone.transfers[0]);
        assert_eq!(both.end_time, long_alone.end_time);
        assert!(both.end_time > SimTime::from_secs(300), "{}", both.end_time);
        // A and B tick on through TIME_WAIT (2MSL: 60 s of 200 and 500 ms ticks,
        // two events each), then not at all: 400 s more would be over 10,000 events.
        let extra = both.events - long_alone.events;
        let time_wait = 2 * (300 + 120) * 2;
        assert!(
            extra <= short_alone.events + time_wait + 100,
            "{extra} events for the short transfer, {} alone",
            short_alone.events
        );
    }

    #[test]
    fn large_buffers_run_near_the_hosts_limit() {
        let r = run_lan(&lan(52_428, 52_428, 8 << 20), 1, false);
        let t = &r.transfers[0];
        assert!(t.completed && !t.lockstep());
        assert!(t.mbit_ttcp() > 10.0, "{}", t.mbit_ttcp());
        assert_eq!(t.bytes, 8 << 20);
        assert_eq!(t.sender.segs_retransmitted, 0);
    }

    #[test]
    fn small_send_buffer_locks_into_the_delayed_ack_cycle() {
        // 16K send, 24K receive: the study's lock-step. Every 200 ms tick the
        // receiver's timer ACK releases the 8 KB the sender was holding.
        let r = run_lan(&lan(16_384, 24_576, 8 << 20), 1, true);
        let t = &r.transfers[0];
        assert!(t.completed && t.lockstep());
        assert!(t.mbit_ttcp() < 2.0);
        let cycle = lockstep_cycle(&r.trace).expect("a timer-paced cycle");
        // The tick is exact; the ACK leaves after the host's (jittered) processing.
        let period_ms = cycle.mean_period.as_secs_f64() * 1e3;
        assert!((period_ms - 200.0).abs() < 0.1, "{period_ms}");
        assert_eq!(cycle.bytes_per_tick, 8192.0);
        assert_eq!(
            cycle.pattern,
            vec![
                "B 0 [delack-timer]".to_string(),
                "A 8192 [idle]".to_string()
            ]
        );
        // The mechanism's rate: 8 KB per 200 ms = 0.3125 Mbit/s in ttcp's unit.
        let predicted = cycle.predicted_bps() / 1_048_576.0;
        assert!((predicted - 0.3125).abs() < 1e-3);
        assert!((t.mbit_ttcp() - predicted).abs() / predicted < 0.05);
    }

    #[test]
    fn modern_delays_each_ack_40ms_from_the_segment_not_on_a_grid() {
        // Nagle against the delayed ACK with `modern`: 4 KB writes into a
        // 4 KB send buffer, so each short segment waits for the ACK of the one
        // before, which the receiver's own timer sends 40 ms after the segment
        // arrived (a global 40 ms tick would send it after 0–40 ms, 20 ms on
        // average). A short read opens too little window for an update.
        let study = LanBuffers {
            flavour: Flavour::Modern,
            buflen: 4096,
            ..lan(4096, 52_428, 1 << 20)
        };
        let r = run_lan(&study, 1, true);
        assert!(r.transfers[0].completed);
        let mut last_data = None;
        let mut delays = Vec::new();
        for rec in &r.trace {
            if rec.from_sender && rec.seg.len > 0 {
                last_data = Some(rec.at);
            } else if !rec.from_sender && rec.seg.reason == SendReason::DelayedAck {
                delays.push(rec.at - last_data.expect("data before its ACK"));
            }
        }
        assert!(delays.len() > 50, "{}", delays.len());
        // 40 ms, plus the segment's time on the wire and both hosts' work.
        for d in &delays {
            assert!(
                (SimTime::from_ms(40)..SimTime::from_ms(43)).contains(d),
                "{d}"
            );
        }
        let cycle = lockstep_cycle(&r.trace).expect("a timer-paced cycle");
        let period_ms = cycle.mean_period.as_secs_f64() * 1e3;
        assert!((41.0..43.0).contains(&period_ms), "{period_ms}");
    }

    #[test]
    fn the_probe_sees_the_cpus_the_round_trip_and_the_window() {
        // Big buffers: the IPC receiver's CPU is the limit (receiving costs more).
        let r = run_lan(&lan(52_428, 52_428, 8 << 20), 1, false);
        let p = &r.transfers[0].probe;
        let [snd, rcv] = p.cpu_busy.expect("the interval closed");
        assert!(rcv > 0.95 && snd < rcv, "{snd} {rcv}");
        // Every segment full: 9188 - 40 data bytes, no options after the SYN.
        assert_eq!(p.largest_segment, Some((9148, 9188)));
        assert!(
            p.peak_flight >= 3 * 9148 && p.peak_flight <= 52_428,
            "{}",
            p.peak_flight
        );
        // A round trip: a 192-cell PDU at 100 Mb/s each way through the switch (2 x
        // 0.8 ms), the receiver's processing; well under the 200 ms timer.
        let rtt = p.min_rtt.expect("timed").as_secs_f64();
        assert!(rtt > 1.6e-3 && rtt < 10e-3, "{rtt}");
        // In the lock-step the sender holds its 8 KB nearly all the time.
        let r = run_lan(&lan(16_384, 24_576, 1 << 20), 1, false);
        let t = &r.transfers[0];
        assert!(t.probe.holding_seconds > 0.9 * t.sender_seconds);
        assert!(t.probe.holding_seconds >= t.circular_wait_seconds);
        let [snd, rcv] = t.probe.cpu_busy.unwrap();
        assert!(snd < 0.05 && rcv < 0.05, "{snd} {rcv}");
    }

    #[test]
    fn three_mss_send_buffer_never_locks() {
        // 3 x MSS + 272: below it a new write() finds less than the whole 4 KB
        // cluster it waits for behind the 16 KB a timer ACK releases to a 51K
        // receiver (tests/test_lan_buffers.py, REMEDY).
        for rcvbuf in [16_384, 24_576, 36_864, 52_428] {
            let r = run_lan(&lan(3 * 9148 + 272, rcvbuf, 4 << 20), 3, false);
            assert!(!r.transfers[0].lockstep(), "rcvbuf {rcvbuf}");
            assert!(r.transfers[0].mbit_ttcp() > 10.0, "rcvbuf {rcvbuf}");
        }
    }

    #[test]
    fn per_cell_reference_gives_the_same_transfer() {
        let study = lan(24_576, 32_768, 1 << 20);
        let mut s = lan_scenario(&study, 3, true);
        let train = run(&s).unwrap();
        s.fidelity = Fidelity::PerCell;
        let cell = run(&s).unwrap();
        assert_eq!(train.trace, cell.trace);
        assert_eq!(
            format!("{:?}", train.transfers),
            format!("{:?}", cell.transfers)
        );
    }

    #[test]
    fn bad_values_are_refused_before_running() {
        let refused =
            |study: &LanBuffers| study.spec(1, 0, false).scenario().unwrap_err().to_string();
        let mut study = lan(60_000, 16_384, 1 << 20);
        let err = refused(&study);
        assert!(
            err.contains("send buffer 60000") && err.contains("1..=52428"),
            "{err}"
        );
        // run() checks a scenario built by hand just as well.
        let mut s = lan_scenario(&lan(16_384, 16_384, 1 << 20), 1, false);
        s.transfers[0].sndbuf = 60_000;
        assert_eq!(run(&s).unwrap_err().to_string(), err);
        s.transfers[0].sndbuf = 16_384;
        s.transfers[0].buflen = 0;
        let err = run(&s).unwrap_err().to_string();
        assert!(err.contains("write size 0"), "{err}");
        study.sndbuf = 16_384;
        study.buflen = 0;
        let err = refused(&study);
        assert!(err.contains("blocksize 0"), "{err}");
        study.buflen = 8192;
        study.mtu = 500;
        let err = refused(&study);
        assert!(err.contains("MTU 500") && err.contains("576"), "{err}");
        study.mtu = 9188;
        study.profile = "cray-2".into();
        let err = refused(&study);
        assert!(err.contains("cray-2") && err.contains("sparc-ipc"), "{err}");
    }
}
