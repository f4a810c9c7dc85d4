//! What bound a transfer (docs/design.md §8), and the evidence.
//!
//! [`classify`] names the limit of one connection from facts measured while
//! it ran ([`Facts`], gathered by [`Facts::gather`]): one of [`LimitedBy`], with
//! a sentence giving the numbers.
//!
//! The delayed-ACK lock-step also shows itself in a trace as a cycle: the
//! receiver's 200 ms timer releases an ACK, the sender answers with the data it
//! had been holding back (Nagle and sender silly-window avoidance), and nothing
//! else moves until the next tick. [`lockstep_cycle`] finds that cycle in the
//! steady part of a trace and measures the data released per tick.

use super::net::{aal5_cells, ether, CircuitId, Topology};
use super::world::{Protocol, RunResult, Scenario, TraceRecord};
use crate::atm::phy::CELL_BITS;
use crate::host::ttcp::Pace;
use crate::tcp::SendReason;
use crate::time::SimTime;
use std::fmt;

/// One steady lock-step cycle, as seen in a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct LockstepCycle {
    /// Timer-released ACKs in the steady part of the trace.
    pub ticks: usize,
    /// Data bytes the sender released, on average, per timer ACK.
    pub bytes_per_tick: f64,
    /// Mean time between timer-released ACKs.
    pub mean_period: SimTime,
    /// The most common pattern between two timer ACKs: segment sizes and reasons.
    pub pattern: Vec<String>,
    /// How many cycles showed exactly that pattern.
    pub pattern_repeats: usize,
}

impl LockstepCycle {
    /// The throughput the cycle sustains, in bits per second.
    pub fn predicted_bps(&self) -> f64 {
        let secs = self.mean_period.as_secs_f64();
        if secs > 0.0 {
            self.bytes_per_tick * 8.0 / secs
        } else {
            0.0
        }
    }
}

/// Find the delayed-ACK cycle in the second half of a one-transfer trace.
/// Returns None when timer ACKs do not pace the transfer.
pub fn lockstep_cycle(trace: &[TraceRecord]) -> Option<LockstepCycle> {
    let timer_acks: Vec<usize> = trace
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.from_sender && r.seg.reason == SendReason::DelayedAck)
        .map(|(i, _)| i)
        .collect();
    if timer_acks.len() < 8 {
        return None;
    }
    // The steady state: the second half of the timer ACKs.
    let steady = &timer_acks[timer_acks.len() / 2..];
    let mut patterns: Vec<(Vec<String>, usize)> = Vec::new();
    let mut bytes = 0u64;
    for w in steady.windows(2) {
        let cycle = &trace[w[0]..w[1]];
        let mut pattern = Vec::new();
        for r in cycle {
            if r.from_sender {
                bytes += r.seg.len as u64;
            }
            let side = if r.from_sender { "A" } else { "B" };
            pattern.push(format!("{side} {} [{}]", r.seg.len, r.seg.reason.as_str()));
        }
        match patterns.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, n)) => *n += 1,
            None => patterns.push((pattern, 1)),
        }
    }
    // Timer-paced: the timer, not reading, releases most of the steady ACKs.
    let steady_span = &trace[steady[0]..=*steady.last()?];
    let receiver_acks = steady_span.iter().filter(|r| !r.from_sender).count();
    if steady.len() * 2 <= receiver_acks {
        return None;
    }
    let cycles = steady.len() - 1;
    let span = trace[*steady.last()?].at - trace[steady[0]].at;
    let (pattern, pattern_repeats) = patterns.into_iter().max_by_key(|(_, n)| *n)?;
    let bytes_per_tick = bytes as f64 / cycles as f64;
    let mean_period = SimTime(span.0 / cycles as u64);
    Some(LockstepCycle {
        ticks: steady.len(),
        bytes_per_tick,
        mean_period,
        pattern,
        pattern_repeats,
    })
}

/// What bound a connection, in the order [`classify`] tries them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LimitedBy {
    /// A paced source (constant- or random-rate traffic) got the load it offered.
    Application,
    /// The Nagle/delayed-ACK circular wait: data released by the receiver's timer.
    Lockstep,
    /// The cell rate of the path: the slowest link, or the adapter's pacing,
    /// cell spacing and PDU gap; alone or shared with other connections.
    Link,
    /// The sender's or the receiver's CPU.
    HostCpu,
    /// The window in flight over the round trip (the smaller socket buffer, or
    /// the offered or congestion window).
    Window,
    /// Cells discarded by usage parameter control, and TCP's recovery from it.
    Policing,
    /// Cells lost where a buffer overflowed (a switch port, the interface
    /// queue), and TCP's recovery from it.
    CellLoss,
    /// The sender holding back a short segment for an ACK (Nagle, sender SWS
    /// avoidance) without the receiver's timer pacing it.
    Nagle,
    /// No rule applied; the evidence gives how close each bound came.
    Undetermined,
}

impl LimitedBy {
    pub const ALL: [LimitedBy; 9] = [
        LimitedBy::Application,
        LimitedBy::Lockstep,
        LimitedBy::Link,
        LimitedBy::HostCpu,
        LimitedBy::Window,
        LimitedBy::Policing,
        LimitedBy::CellLoss,
        LimitedBy::Nagle,
        LimitedBy::Undetermined,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LimitedBy::Application => "application",
            LimitedBy::Lockstep => "lockstep",
            LimitedBy::Link => "link",
            LimitedBy::HostCpu => "host-cpu",
            LimitedBy::Window => "window",
            LimitedBy::Nagle => "nagle",
            LimitedBy::Policing => "policing",
            LimitedBy::CellLoss => "cell-loss",
            LimitedBy::Undetermined => "undetermined",
        }
    }
}

impl fmt::Display for LimitedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A paced source got at least this share of its offered load: the network
/// kept up, the application set the rate.
pub const APPLICATION_SHARE: f64 = 0.90;
/// At least this share of what the path carries: the link is full (framing,
/// headers and the PDU gap are already counted in the path's rate, so the rest
/// is start-up and ACK-clocking slack).
pub const LINK_SHARE: f64 = 0.85;
/// A CPU busy at least this share of the transfer has no time left to give
/// (the jitter of each piece of work and the timer ticks take the rest).
pub const CPU_BUSY: f64 = 0.90;
/// At least this share of window / round trip: the window is what holds the
/// sender back (the delayed or every-second-segment ACK costs up to a segment's
/// time per round trip, which is why the share is not nearer 1).
pub const WINDOW_SHARE: f64 = 0.80;
/// The window's closed cycles (a segment out with the window closed behind it,
/// to the next new one) spanned at least this share of the transfer: the
/// closed window, not a moment of it, paced most of the transfer.
pub const WINDOW_CLOSED: f64 = 0.50;
/// Neither CPU was saturated, but the two together were busy at least this
/// share of the transfer: their work, not the path or a timer, filled it (the
/// same share as [`CPU_BUSY`], for the pair taken together).
pub const CPU_BUSY_JOINT: f64 = CPU_BUSY;
/// The sender held back data its window allowed for at least this share of
/// the transfer: for most of it, Nagle's rule, not the window, kept data back
/// (as the circular wait's share makes a lock-step).
pub const NAGLE_HOLD: f64 = 0.50;

/// The rate of a connection's path for its largest PDUs (or datagrams).
#[derive(Clone, Debug, PartialEq)]
pub struct PathRate {
    /// Payload (TCP data or UDP data) the path carries at most, bit/s.
    pub payload_bps: f64,
    /// Data bytes per PDU (per datagram for UDP) it is reckoned for, and its cells.
    pub unit_bytes: u32,
    pub unit_cells: u32,
    /// What sets it: "the adapter paced at 70 Mb/s", "the link trunk west->east (OC-3c)".
    pub bottleneck: String,
}

/// Parallel connections sharing the slowest switch port on this one's path.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedLink {
    pub port: String,
    /// Connections crossing it (this one included), and their throughputs summed, bit/s.
    pub connections: usize,
    pub total_bps: f64,
    /// What the port carries at most in this connection's PDUs, bit/s.
    pub capacity_bps: f64,
}

/// The window a TCP connection used and the round trip it saw.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFacts {
    /// The most data in flight at once, bytes.
    pub peak_flight: u32,
    pub min_rtt: SimTime,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    /// The closed window's cycles, host work included (`ProbeResult::window_cycles`):
    /// how many, the window bytes in flight summed, their time summed.
    pub closed_cycles: u32,
    pub closed_bytes: u64,
    pub closed_time: SimTime,
}

impl WindowFacts {
    /// What the closed window lets through over the round trip it really
    /// took: the mean window over the mean cycle, bit/s (None if it never closed).
    pub fn closed_bound_bps(&self) -> Option<f64> {
        let secs = self.closed_time.as_secs_f64();
        (self.closed_cycles > 0 && secs > 0.0).then(|| self.closed_bytes as f64 * 8.0 / secs)
    }
}

/// Everything [`classify`] looks at, for one connection. Plain data: tests
/// build it by hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub tcp: bool,
    /// Throughput as ttcp -t reports it, bit/s, over `sender_seconds`.
    pub throughput_bps: f64,
    pub sender_seconds: f64,
    /// A paced source's mean offered load, bit/s.
    pub offered_bps: Option<f64>,
    /// Time in the Nagle/delayed-ACK circular wait, and whether it was most of the transfer.
    pub circular_wait_seconds: f64,
    pub lockstep: bool,
    /// Of the circular wait, the time the sender's window was closed (the
    /// receiver left the update reopening it to its timer).
    pub window_wait_seconds: f64,
    /// Time the sender held back data its window allowed (Nagle, sender SWS avoidance).
    pub holding_seconds: f64,
    pub path: Option<PathRate>,
    pub shared: Option<SharedLink>,
    /// Busy share of the transfer of the sender's and the receiver's CPU, and their profiles.
    pub cpu_busy: Option<[f64; 2]>,
    pub cpu_profiles: [String; 2],
    pub window: Option<WindowFacts>,
    pub cells_policed: u64,
    /// Cells dropped at switch buffers (tail drop, PPD, EPD, CLP-1 threshold), both directions.
    pub cells_lost_in_buffers: u64,
    /// PDUs refused by the sender's full interface queue.
    pub pdus_dropped_at_adapter: u64,
    pub data_pdus_sent: u64,
    pub data_pdus_lost: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
}

/// A connection's limit and the evidence for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    pub limited_by: LimitedBy,
    pub evidence: String,
}

fn mbps(bps: f64) -> String {
    format!("{:.2} Mb/s", bps / 1e6)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// Name the limit of one connection.
///
/// The rules, tried in this order (the first that holds wins):
/// 1. `application`: a paced source got >= [`APPLICATION_SHARE`] of its offered
///    load. First, because a source that gets what it asks for was bound by
///    nothing else (its writes may well wait in the circular wait, harmlessly).
/// 2. `lockstep`: the circular wait took most of the transfer. It paces the
///    transfer at one release per timer tick, far below every other bound.
/// 3. `link`: throughput >= [`LINK_SHARE`] of the path's rate; or parallel
///    connections through the path's slowest port together carry that share of
///    it. A full link is the hard ceiling; before the CPU, since a host that
///    keeps a link full may be busy doing so.
/// 4. `host-cpu`: the sender's or receiver's CPU busy >= [`CPU_BUSY`] of the
///    transfer. Before the window: a saturated CPU stretches the round trip,
///    which would make the window look like the limit.
/// 5. `window`: throughput >= [`WINDOW_SHARE`] of peak flight / minimum RTT;
///    or of the mean window in flight when it closed / the mean time until it
///    let the next new segment go (the round trip with both hosts' work in it:
///    a stop-and-wait of one segment spends most of its loop in the hosts),
///    if those closed cycles span >= [`WINDOW_CLOSED`] of the transfer.
/// 6. `policing`: the UPC discarded cells of this connection and data PDUs were lost.
/// 7. `cell-loss`: cells lost in switch buffers (or PDUs at the interface
///    queue), and TCP retransmitted or timed out.
/// 8. `nagle`: the sender held back data its window allowed for >= [`NAGLE_HOLD`]
///    of the transfer (a window that is not whole segments, a receiver that
///    ACKs late): measured like the circular wait, but not timer-paced.
/// 9. `host-cpu`, jointly: neither CPU reached [`CPU_BUSY`], but their busy
///    shares add up to >= [`CPU_BUSY_JOINT`] of the transfer. Each host's work
///    waits for the other's: a window of a few segments passes the turn back
///    and forth (the receiver takes a segment in and reads it before it
///    acknowledges, the sender takes the ACK in and writes and copies before
///    the next segment goes), so the per-segment work of both, added along
///    that cycle, sets the pace. Last: any bound or loss above explains the
///    transfer better than the sum of two CPUs' shares.
///
/// Losses come after the bounds: a transfer that still reached a bound lost
/// too little to matter; one that reached none was held back by recovering
/// from its losses (timeouts, slow start). Policing before buffer loss: when
/// both happen, the contract decides. Nagle after the losses: a sender
/// recovering from loss also holds back the odd piece of its shrunken
/// congestion window. Otherwise `undetermined`, with how near each bound came.
/// Shares of the transfer's time need its interval: a transfer whose last
/// write never returned has none, and is judged by its losses alone.
pub fn classify(f: &Facts) -> Explanation {
    let measured = f.throughput_bps;
    let share = |bound: f64| if bound > 0.0 { measured / bound } else { 0.0 };
    // A share of ttcp -t's interval (none if it never closed).
    let of_transfer = |secs: f64| {
        if f.sender_seconds > 0.0 {
            (secs / f.sender_seconds).min(1.0)
        } else {
            0.0
        }
    };
    let held = of_transfer(f.holding_seconds);
    let done = |limited_by: LimitedBy, evidence: String| Explanation {
        limited_by,
        evidence,
    };
    let losses = || {
        let mut s = format!(
            "{} of {} data PDUs lost ({:.1}%)",
            f.data_pdus_lost,
            f.data_pdus_sent,
            if f.data_pdus_sent > 0 {
                100.0 * f.data_pdus_lost as f64 / f.data_pdus_sent as f64
            } else {
                0.0
            }
        );
        if f.tcp {
            s += &format!(
                "; {} retransmitted, {} timeouts",
                f.retransmitted_segments, f.timeouts
            );
        }
        s + &format!("; measured {}", mbps(measured))
    };

    if let Some(offered) = f.offered_bps {
        if share(offered) >= APPLICATION_SHARE {
            return done(
                LimitedBy::Application,
                format!(
                    "paced source offers {}; measured {} ({})",
                    mbps(offered),
                    mbps(measured),
                    pct(share(offered))
                ),
            );
        }
    }
    if f.tcp && f.lockstep {
        // Without Nagle holding data, the sender waited in the application: a
        // send that returns only once acknowledged (Winsock AFD, `nt351`).
        // With the window the sender knew closed, the receiver (all of it read)
        // held back the update that reopens it until its timer.
        let (who, how) = if f.window_wait_seconds >= 0.5 * f.circular_wait_seconds {
            (
                "window-update/delayed-ACK",
                format!(
                    "; window closed {:.2} s: the receiver, its buffer read, left the update to its delayed-ACK timer",
                    f.window_wait_seconds
                ),
            )
        } else if f.holding_seconds < 0.5 * f.circular_wait_seconds {
            ("unacknowledged-send/delayed-ACK", String::new())
        } else {
            ("Nagle/delayed-ACK", String::new())
        };
        return done(
            LimitedBy::Lockstep,
            format!(
                "{who} circular wait {:.2} s of {:.2} s ({}){how}; measured {}",
                f.circular_wait_seconds,
                f.sender_seconds,
                pct(of_transfer(f.circular_wait_seconds)),
                mbps(measured)
            ),
        );
    }
    if let Some(p) = &f.path {
        if share(p.payload_bps) >= LINK_SHARE {
            return done(
                LimitedBy::Link,
                format!(
                    "{} carries at most {} in {}-byte {} ({} cells); measured {} ({})",
                    p.bottleneck,
                    mbps(p.payload_bps),
                    p.unit_bytes,
                    if f.tcp { "segments" } else { "datagrams" },
                    p.unit_cells,
                    mbps(measured),
                    pct(share(p.payload_bps))
                ),
            );
        }
    }
    if let Some(s) = &f.shared {
        if s.connections > 1 && s.total_bps >= LINK_SHARE * s.capacity_bps {
            return done(
                LimitedBy::Link,
                format!(
                    "{} connections share {} (at most {}): together {} ({}); this one {}",
                    s.connections,
                    s.port,
                    mbps(s.capacity_bps),
                    mbps(s.total_bps),
                    pct(s.total_bps / s.capacity_bps),
                    mbps(measured)
                ),
            );
        }
    }
    if let Some(busy) = f.cpu_busy {
        let side = if busy[1] >= busy[0] { 1 } else { 0 };
        if busy[side] >= CPU_BUSY {
            let names = ["sender", "receiver"];
            return done(
                LimitedBy::HostCpu,
                format!(
                    "{} CPU ({}) busy {} of the transfer ({} {}); measured {}",
                    names[side],
                    f.cpu_profiles[side],
                    pct(busy[side]),
                    names[1 - side],
                    pct(busy[1 - side]),
                    mbps(measured)
                ),
            );
        }
    }
    let window_bound = f.window.as_ref().and_then(|w| {
        let secs = w.min_rtt.as_secs_f64();
        (secs > 0.0 && w.peak_flight > 0).then(|| (w, w.peak_flight as f64 * 8.0 / secs))
    });
    if let Some((w, bound)) = window_bound {
        if f.tcp && share(bound) >= WINDOW_SHARE {
            return done(
                LimitedBy::Window,
                format!(
                    "window {} B in flight (sndbuf {}, rcvbuf {}) / RTT {:.2} ms = {}; measured {} ({})",
                    w.peak_flight,
                    w.sndbuf,
                    w.rcvbuf,
                    w.min_rtt.as_secs_f64() * 1e3,
                    mbps(bound),
                    mbps(measured),
                    pct(share(bound))
                ),
            );
        }
    }
    // The same rule over the round trip the window actually took. When the
    // window is as small as a segment or two, the hosts' work is most of the
    // loop (the receiver must take the data in and read it before it opens the
    // window, the sender must take the update in and write and copy the next
    // segment), so a segment's round trip to its ACK overstates what the
    // window allows.
    if let Some(w) = f.window.as_ref().filter(|_| f.tcp) {
        let closed = of_transfer(w.closed_time.as_secs_f64());
        let bound = w.closed_bound_bps().filter(|&b| share(b) >= WINDOW_SHARE);
        if let Some(bound) = bound.filter(|_| closed >= WINDOW_CLOSED) {
            let n = w.closed_cycles as f64;
            return done(
                LimitedBy::Window,
                format!(
                    "window {:.0} B in flight (sndbuf {}, rcvbuf {}) closed {} times ({} of the transfer); \
                     round trip with both hosts' work {:.2} ms (segment out to its ACK in {:.2} ms) = {}; measured {} ({})",
                    w.closed_bytes as f64 / n,
                    w.sndbuf,
                    w.rcvbuf,
                    w.closed_cycles,
                    pct(closed),
                    w.closed_time.as_secs_f64() * 1e3 / n,
                    w.min_rtt.as_secs_f64() * 1e3,
                    mbps(bound),
                    mbps(measured),
                    pct(share(bound))
                ),
            );
        }
    }
    if f.tcp && f.cells_policed > 0 && f.data_pdus_lost > 0 {
        return done(
            LimitedBy::Policing,
            format!("UPC discarded {} cells; {}", f.cells_policed, losses()),
        );
    }
    let buffer_loss = f.cells_lost_in_buffers > 0 || f.pdus_dropped_at_adapter > 0;
    if f.tcp && buffer_loss && (f.retransmitted_segments > 0 || f.timeouts > 0) {
        let mut s = format!("{} cells lost in switch buffers", f.cells_lost_in_buffers);
        if f.pdus_dropped_at_adapter > 0 {
            s += &format!(
                ", {} PDUs at the sender's interface queue",
                f.pdus_dropped_at_adapter
            );
        }
        return done(LimitedBy::CellLoss, format!("{s}; {}", losses()));
    }
    if f.tcp && held >= NAGLE_HOLD {
        let mut s = format!(
            "sender held back a short segment for an ACK (Nagle/sender SWS avoidance) {} of the transfer",
            pct(held)
        );
        if let (Some(w), Some(p)) = (&f.window, &f.path) {
            let window = w.sndbuf.min(w.rcvbuf);
            let mss = p.unit_bytes.max(1);
            s += &format!(
                "; window {window} B = {} x {mss} B segments + {} B",
                window / mss,
                window % mss
            );
        }
        if let Some(b) = f.cpu_busy {
            s += &format!("; CPU busy {} sender, {} receiver", pct(b[0]), pct(b[1]));
        }
        return done(
            LimitedBy::Nagle,
            format!("{s}; measured {}", mbps(measured)),
        );
    }
    if let Some(busy) = f
        .cpu_busy
        .filter(|b| f.tcp && b[0] + b[1] >= CPU_BUSY_JOINT)
    {
        // The busier first, as the one-CPU rule names it.
        let names = ["sender", "receiver"];
        let (a, b) = if busy[1] >= busy[0] { (1, 0) } else { (0, 1) };
        let mut s = format!(
            "{} CPU ({}) busy {} and {} CPU ({}) {} of the transfer: together {}, \
             each waiting on the other's per-segment work",
            names[a],
            f.cpu_profiles[a],
            pct(busy[a]),
            names[b],
            f.cpu_profiles[b],
            pct(busy[b]),
            pct(busy[0] + busy[1])
        );
        if let Some(w) = f.window.as_ref().filter(|w| w.closed_cycles > 0) {
            s += &format!(
                "; window closed {} times ({} of the transfer), {:.0} B in flight",
                w.closed_cycles,
                pct(of_transfer(w.closed_time.as_secs_f64())),
                w.closed_bytes as f64 / w.closed_cycles as f64
            );
        }
        return done(
            LimitedBy::HostCpu,
            format!("{s}; measured {}", mbps(measured)),
        );
    }
    let mut near = Vec::new();
    if let Some(p) = &f.path {
        near.push(format!(
            "{} of the path's {}",
            pct(share(p.payload_bps)),
            mbps(p.payload_bps)
        ));
    }
    if let Some((_, bound)) = window_bound {
        near.push(format!(
            "{} of window/RTT {}",
            pct(share(bound)),
            mbps(bound)
        ));
    }
    if let Some(b) = f.cpu_busy {
        near.push(format!(
            "CPU busy {} sender, {} receiver",
            pct(b[0]),
            pct(b[1])
        ));
    }
    if f.tcp && f.holding_seconds > 0.0 {
        near.push(format!("sender holding {}", pct(held)));
    }
    if f.tcp && f.circular_wait_seconds > 0.0 {
        near.push(format!(
            "circular wait {}",
            pct(of_transfer(f.circular_wait_seconds))
        ));
    }
    let near = if near.is_empty() {
        String::new()
    } else {
        format!(": {}", near.join(", "))
    };
    done(
        LimitedBy::Undetermined,
        format!("no bound reached{near}; measured {}", mbps(measured)),
    )
}

impl Facts {
    /// The facts of transfer `i` of a run. `port_name` names a switch output
    /// port for the evidence ("the trunk west->east", "the port to sparc10").
    pub fn gather(
        scenario: &Scenario,
        run: &RunResult,
        i: usize,
        port_name: &dyn Fn(usize) -> String,
    ) -> Facts {
        let spec = &scenario.transfers[i];
        let t = &run.transfers[i];
        let tcp = spec.protocol == Protocol::Tcp;
        let data = run.circuits.get(spec.circuit).copied().unwrap_or_default();
        let back = run
            .circuits
            .get(spec.return_circuit)
            .copied()
            .unwrap_or_default();
        let buffer_loss =
            |c: &super::net::CircuitCounters| c.lost_by_cause.total() - c.lost_by_cause.policing;
        let offered_bps = match spec.pace {
            Pace::Full => None,
            Pace::Every {
                period_us, blocks, ..
            } => {
                let block =
                    spec.block_size.map_or(spec.buflen as f64, |d| d.mean()) * blocks as f64;
                let period = period_us.mean() * 1e-6;
                (period > 0.0).then(|| block * 8.0 / period)
            }
        };
        // The PDUs that carry one unit of data: the largest TCP segment seen (the
        // MSS, once options are counted), or one datagram's IP fragments.
        // Each PDU with the host buffers it is gathered from (`Network::send_gathered`).
        let unit: Option<(u32, Vec<Gathered>)> = if tcp {
            t.probe.largest_segment.map(|(len, ip_len)| {
                let buffers = t.probe.largest_segment_buffers.clone();
                (len, vec![(ip_len + spec.encap_header, buffers)])
            })
        } else {
            let ip = crate::host::udp::IP_HEADER;
            let mut offset = 0;
            let frags = crate::host::udp::fragments(spec.buflen, spec.mtu);
            let pdus = frags.iter().map(|&l| {
                let mut buffers = Vec::new();
                crate::host::socket::udp_fragment_gather(
                    offset,
                    l - ip,
                    spec.encap_header + ip,
                    &mut buffers,
                );
                offset += l - ip;
                (l + spec.encap_header, buffers)
            });
            Some((spec.buflen, pdus.collect()))
        };
        let path = unit.as_ref().and_then(|(bytes, pdus)| {
            path_rate(&scenario.topology, spec.circuit, *bytes, pdus, port_name)
        });
        let shared = unit.as_ref().and_then(|(bytes, pdus)| {
            let topo = &scenario.topology;
            let hops = &topo.circuits.get(spec.circuit)?.hops;
            let slowest = hops
                .iter()
                .map(|h| h.port)
                .max_by_key(|&p| topo.ports[p].rate.time_for_bits(CELL_BITS))?;
            let cells: u32 = pdus.iter().map(|(l, _)| aal5_cells(*l)).sum();
            let time = topo.ports[slowest]
                .rate
                .time_for_bits(CELL_BITS)
                .times(cells as u64);
            // Only connections running at the same time share it: one of an
            // earlier serial step has ended before this one starts.
            let span = |j: usize| {
                let t = run.transfers.get(j)?;
                Some((t.started_at?, t.ended_at.unwrap_or(run.end_time)))
            };
            let (from, to) = span(i)?;
            let sharing: Vec<usize> = (0..scenario.transfers.len())
                .filter(|&j| {
                    topo.circuits
                        .get(scenario.transfers[j].circuit)
                        .is_some_and(|c| c.hops.iter().any(|h| h.port == slowest))
                        && span(j).is_some_and(|(a, b)| j == i || (a < to && from < b))
                })
                .collect();
            Some(SharedLink {
                port: port_name(slowest),
                connections: sharing.len(),
                // Each at its mean rate, for the part of this one's span it ran.
                total_bps: sharing
                    .iter()
                    .map(|&j| {
                        let (a, b) = span(j).expect("filtered on its span");
                        let overlap = b.min(to).saturating_sub(a.max(from));
                        let whole = (to - from).as_secs_f64();
                        let part = if whole > 0.0 {
                            overlap.as_secs_f64() / whole
                        } else {
                            1.0
                        };
                        run.transfers[j].throughput_bps() * part
                    })
                    .sum(),
                capacity_bps: *bytes as f64 * 8.0 / time.as_secs_f64().max(f64::MIN_POSITIVE),
            })
        });
        let window = match (tcp, t.probe.min_rtt) {
            (true, Some(min_rtt)) => Some(WindowFacts {
                peak_flight: t.probe.peak_flight,
                min_rtt,
                sndbuf: spec.sndbuf,
                rcvbuf: spec.rcvbuf,
                closed_cycles: t.probe.window_cycles.0,
                closed_bytes: t.probe.window_cycles.1,
                closed_time: t.probe.window_cycles.2,
            }),
            _ => None,
        };
        Facts {
            tcp,
            throughput_bps: t.throughput_bps(),
            sender_seconds: t.sender_seconds,
            offered_bps,
            // Within the sender's time: the last wait may outlast its last
            // write (the data sits in the buffer until the timer releases it).
            circular_wait_seconds: t.circular_wait_seconds.min(t.sender_seconds),
            lockstep: t.lockstep(),
            window_wait_seconds: t.probe.window_wait_seconds.min(t.sender_seconds),
            holding_seconds: t.probe.holding_seconds,
            path,
            shared,
            cpu_busy: t.probe.cpu_busy,
            cpu_profiles: [spec.sender, spec.receiver]
                .map(|h| scenario.hosts.get(h).map_or("?", |p| p.name).to_string()),
            window,
            cells_policed: data.lost_by_cause.policing,
            cells_lost_in_buffers: buffer_loss(&data) + buffer_loss(&back),
            pdus_dropped_at_adapter: t.pdus_dropped_at_adapter,
            data_pdus_sent: data.pdus_sent,
            data_pdus_lost: data.pdus_lost,
            retransmitted_segments: t.sender.segs_retransmitted,
            timeouts: t.sender.timeouts,
        }
    }
}

/// A PDU's CPCS payload length and the offsets where its host buffers after
/// the first begin.
pub type Gathered = (u32, Vec<u32>);

/// What circuit `c` carries at most: `bytes` of data in PDUs of the given
/// CPCS payload lengths and host buffers, through the sender's adapter (its
/// pacing or spacing and PDU gap) and every switch port on the way; the
/// slowest of them decides.
pub fn path_rate(
    topo: &Topology,
    c: CircuitId,
    bytes: u32,
    pdus: &[Gathered],
    port_name: &dyn Fn(usize) -> String,
) -> Option<PathRate> {
    let circuit = topo.circuits.get(c)?;
    if let Some(f) = topo.framed.iter().find(|f| f.circuit == c) {
        // Frames: the segment's medium time per frame, preamble to gap; on a
        // shared (half-duplex) medium the ACKs' frames come on top of it.
        let seg = topo.segments.get(f.segment)?;
        let time: SimTime = pdus
            .iter()
            .map(|(len, _)| ether::wire_time(seg.rate, *len))
            .fold(SimTime::ZERO, |a, b| a + b);
        let secs = time.as_secs_f64();
        return (secs > 0.0).then(|| PathRate {
            payload_bps: bytes as f64 * 8.0 / secs,
            unit_bytes: bytes,
            unit_cells: 0,
            bottleneck: format!(
                "the Ethernet segment ({:.0} Mb/s, {} duplex{})",
                seg.rate.mbps(),
                seg.duplex.name(),
                if seg.duplex == ether::Duplex::Half {
                    ": ACKs share it"
                } else {
                    ""
                }
            ),
        });
    }
    let adapter = topo.adapters.get(circuit.src)?;
    let cell = adapter.rate.time_for_bits(CELL_BITS);
    let pacing = topo.pacing.iter().find(|p| p.circuit == c);
    let cells: Vec<u32> = pdus.iter().map(|(l, _)| aal5_cells(*l)).collect();
    let total_cells: u32 = cells.iter().sum();
    let at_adapter: SimTime = pdus
        .iter()
        .zip(&cells)
        .map(|((len, buffers), &n)| {
            let paced = pacing.map(|p| p.cell_interval(n, *len, cell));
            adapter.pdu_period(paced, n, buffers)
        })
        .fold(SimTime::ZERO, |a, b| a + b);
    let adapter_what = match (pacing, adapter.tx) {
        (Some(p), _) => format!(
            "the adapter paced at {:.2} Mb/s of {}",
            p.rate_bps() / 1e6,
            p.counts.describe()
        ),
        (None, super::net::TxSpacing::None) if adapter.pdu_gap > SimTime::ZERO => format!(
            "the sender's adapter ({:.2} Mb/s of cells, {:.0} µs between PDUs)",
            adapter.rate.mbps(),
            adapter.pdu_gap.as_us_f64()
        ),
        (None, super::net::TxSpacing::None) => format!(
            "the sender's adapter ({:.2} Mb/s of cells)",
            adapter.rate.mbps()
        ),
        (None, tx) => format!(
            "the adapter spacing cells {:.2} µs apart",
            tx.mean_interval(adapter.rate.time_for_bits(CELL_BITS))
                .as_us_f64()
        ),
    };
    let mut slowest = (at_adapter, adapter_what);
    for h in &circuit.hops {
        let port = topo.ports.get(h.port)?;
        let time = port.rate.time_for_bits(CELL_BITS).times(total_cells as u64);
        if time > slowest.0 {
            slowest = (
                time,
                format!(
                    "{} ({:.2} Mb/s of cells)",
                    port_name(h.port),
                    port.rate.mbps()
                ),
            );
        }
    }
    let secs = slowest.0.as_secs_f64();
    (secs > 0.0).then(|| PathRate {
        payload_bps: bytes as f64 * 8.0 / secs,
        unit_bytes: bytes,
        unit_cells: total_cells,
        bottleneck: slowest.1,
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::net::{
        AdapterSpec, CircuitSpec, DropPolicy, Hop, PortSpec, TxSpacing, VcPacing,
    };
    use crate::time::BitRate;

    /// A 10 s TCP transfer at 10 Mb/s that reached no bound.
    fn plain() -> Facts {
        Facts {
            tcp: true,
            throughput_bps: 10e6,
            sender_seconds: 10.0,
            offered_bps: None,
            circular_wait_seconds: 0.0,
            lockstep: false,
            window_wait_seconds: 0.0,
            holding_seconds: 0.0,
            path: Some(PathRate {
                payload_bps: 100e6,
                unit_bytes: 9148,
                unit_cells: 192,
                bottleneck: "the port to b (100.00 Mb/s of cells)".into(),
            }),
            shared: None,
            cpu_busy: Some([0.3, 0.4]),
            cpu_profiles: ["sparc-10".into(), "sparc-ipc".into()],
            window: Some(WindowFacts {
                peak_flight: 32768,
                min_rtt: SimTime::from_ms(10),
                sndbuf: 32768,
                rcvbuf: 65536,
                closed_cycles: 0,
                closed_bytes: 0,
                closed_time: SimTime::ZERO,
            }),
            cells_policed: 0,
            cells_lost_in_buffers: 0,
            pdus_dropped_at_adapter: 0,
            data_pdus_sent: 1000,
            data_pdus_lost: 0,
            retransmitted_segments: 0,
            timeouts: 0,
        }
    }

    fn limit(f: &Facts) -> LimitedBy {
        classify(f).limited_by
    }

    #[test]
    fn nothing_reached_is_undetermined_with_the_distances() {
        let e = classify(&plain());
        assert_eq!(e.limited_by, LimitedBy::Undetermined);
        // window 32768 B / 10 ms = 26.2 Mb/s; 10 Mb/s is 38% of it.
        assert!(
            e.evidence.contains("38% of window/RTT 26.21 Mb/s"),
            "{}",
            e.evidence
        );
        assert!(
            e.evidence.contains("10% of the path's 100.00 Mb/s"),
            "{}",
            e.evidence
        );
    }

    #[test]
    fn a_closed_window_over_its_round_trip_with_host_work() {
        // Stop-and-wait: one 9148-byte segment per cycle of 2 ms, of which the
        // path is 0.5 ms; window/path RTT says 146 Mb/s, the cycle 36.6 Mb/s.
        let mut f = plain();
        let w = f.window.as_mut().expect("window");
        (w.peak_flight, w.sndbuf, w.rcvbuf) = (9148, 9148, 9148);
        w.min_rtt = SimTime::from_us(500);
        (w.closed_cycles, w.closed_bytes) = (4000, 4000 * 9148);
        w.closed_time = SimTime::from_ms(8000);
        f.throughput_bps = 0.80 * 9148.0 * 8.0 / 0.002;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert!(
            e.evidence.starts_with("window 9148 B in flight (sndbuf 9148, rcvbuf 9148) closed 4000 times (80% of the transfer); round trip with both hosts' work 2.00 ms (segment out to its ACK in 0.50 ms) = 36.59 Mb/s; measured 29.27 Mb/s (80%)"),
            "{}",
            e.evidence
        );
        f.throughput_bps *= 0.99;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // A window closed for less than half the transfer did not pace it.
        f.throughput_bps = 36e6;
        assert_eq!(limit(&f), LimitedBy::Window);
        let w = f.window.as_mut().expect("window");
        (w.closed_cycles, w.closed_bytes) = (2400, 2400 * 9148);
        w.closed_time = SimTime::from_ms(4800);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // A window that never closed says nothing about it.
        let w = f.window.as_mut().expect("window");
        (w.closed_cycles, w.closed_bytes, w.closed_time) = (0, 0, SimTime::ZERO);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn window_over_rtt_at_its_threshold() {
        let mut f = plain();
        f.throughput_bps = 0.80 * 32768.0 * 8.0 / 0.010;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert!(
            e.evidence.starts_with("window 32768 B in flight (sndbuf 32768, rcvbuf 65536) / RTT 10.00 ms = 26.21 Mb/s; measured 20.97 Mb/s (80%)"),
            "{}",
            e.evidence
        );
        f.throughput_bps *= 0.99;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // UDP has no window.
        f.throughput_bps = 25e6;
        f.tcp = false;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn a_full_path_is_the_link_even_with_losses() {
        let mut f = plain();
        f.throughput_bps = 86e6;
        f.window.as_mut().unwrap().peak_flight = 200_000;
        f.cells_lost_in_buffers = 40;
        f.retransmitted_segments = 1;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(e.evidence.starts_with("the port to b (100.00 Mb/s of cells) carries at most 100.00 Mb/s in 9148-byte segments (192 cells); measured 86.00 Mb/s (86%)"), "{}", e.evidence);
        f.throughput_bps = 84e6;
        assert_eq!(limit(&f), LimitedBy::CellLoss);
    }

    #[test]
    fn a_shared_port_full_of_parallel_connections_is_the_link() {
        let mut f = plain();
        f.shared = Some(SharedLink {
            port: "the trunk a->b".into(),
            connections: 3,
            total_bps: 90e6,
            capacity_bps: 100e6,
        });
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(
            e.evidence.starts_with("3 connections share the trunk a->b"),
            "{}",
            e.evidence
        );
        // Alone on the port, the same numbers say nothing.
        f.shared.as_mut().unwrap().connections = 1;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn a_busy_cpu_comes_before_the_window() {
        let mut f = plain();
        f.throughput_bps = 25e6; // 95% of window/RTT too
        f.cpu_busy = Some([0.7, 0.93]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::HostCpu);
        assert_eq!(
            e.evidence,
            "receiver CPU (sparc-ipc) busy 93% of the transfer (sender 70%); measured 25.00 Mb/s"
        );
        f.cpu_busy = Some([0.90, 0.5]);
        assert!(classify(&f)
            .evidence
            .starts_with("sender CPU (sparc-10) busy 90%"));
        f.cpu_busy = Some([0.89, 0.89]);
        assert_eq!(limit(&f), LimitedBy::Window);
        f.cpu_busy = None;
        assert_eq!(limit(&f), LimitedBy::Window);
    }

    #[test]
    fn the_lockstep_comes_before_every_bound_but_the_application() {
        let mut f = plain();
        f.throughput_bps = 0.33e6;
        f.lockstep = true;
        f.circular_wait_seconds = 9.8;
        f.holding_seconds = 9.9;
        f.cells_lost_in_buffers = 5;
        f.timeouts = 1;
        f.cpu_busy = Some([0.95, 0.95]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Lockstep);
        assert!(
            e.evidence
                .starts_with("Nagle/delayed-ACK circular wait 9.80 s of 10.00 s (98%)"),
            "{}",
            e.evidence
        );
        // A paced source that gets what it offers was not held back by it.
        f.offered_bps = Some(0.35e6);
        assert_eq!(limit(&f), LimitedBy::Application);
        f.offered_bps = Some(1e6);
        assert_eq!(limit(&f), LimitedBy::Lockstep);
    }

    #[test]
    fn a_closed_window_the_receiver_leaves_to_its_timer_is_named_as_such() {
        // The sender held nothing back: its window was closed, and the receiver,
        // everything read, sent the update only when its delayed-ACK timer ran out.
        let mut f = plain();
        f.throughput_bps = 0.37e6;
        f.lockstep = true;
        f.circular_wait_seconds = 9.9;
        f.window_wait_seconds = 9.8;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Lockstep);
        assert!(
            e.evidence
                .starts_with("window-update/delayed-ACK circular wait 9.90 s of 10.00 s (99%); window closed 9.80 s"),
            "{}",
            e.evidence
        );
        // With the window open most of the wait, the sender's write was waiting.
        f.window_wait_seconds = 2.0;
        assert!(classify(&f)
            .evidence
            .starts_with("unacknowledged-send/delayed-ACK circular wait"));
    }

    #[test]
    fn two_cpus_that_fill_the_transfer_together_bind_it() {
        // Neither CPU is saturated, nothing else bound it; together they were
        // busy for more than the transfer: each waited on the other's work.
        let mut f = plain();
        f.cpu_busy = Some([0.55, 0.65]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::HostCpu);
        assert!(
            e.evidence.starts_with(
                "receiver CPU (sparc-ipc) busy 65% and sender CPU (sparc-10) 55% of the transfer: together 120%"
            ),
            "{}",
            e.evidence
        );
        // Short of the joint share: undetermined, as `plain` (30% + 40%) is.
        f.cpu_busy = Some([0.4, 0.45]);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // A bound reached first is the better explanation.
        f.cpu_busy = Some([0.55, 0.65]);
        f.throughput_bps = 90e6;
        assert_eq!(limit(&f), LimitedBy::Link);
    }

    #[test]
    fn a_paced_source_that_gets_its_load_is_the_application() {
        let mut f = plain();
        f.offered_bps = Some(11e6);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Application);
        assert_eq!(
            e.evidence,
            "paced source offers 11.00 Mb/s; measured 10.00 Mb/s (91%)"
        );
        f.offered_bps = Some(12e6);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn nagle_needs_most_of_the_transfer_held() {
        let mut f = plain();
        f.holding_seconds = 5.0;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Nagle);
        // min(sndbuf, rcvbuf) = 32768 = 3 x 9148 + 5324.
        assert!(
            e.evidence
                .contains("50% of the transfer; window 32768 B = 3 x 9148 B segments + 5324 B"),
            "{}",
            e.evidence
        );
        f.holding_seconds = 4.9;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // Recovering from losses, a sender holds back pieces of its congestion window.
        f.holding_seconds = 9.0;
        f.cells_lost_in_buffers = 300;
        f.timeouts = 4;
        assert_eq!(limit(&f), LimitedBy::CellLoss);
        // A transfer whose interval never closed has no shares of it.
        f.cells_lost_in_buffers = 0;
        f.sender_seconds = 0.0;
        f.throughput_bps = 0.0;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn policing_comes_before_buffer_loss_and_needs_lost_pdus() {
        let mut f = plain();
        f.throughput_bps = 1e3;
        f.cells_policed = 495;
        f.cells_lost_in_buffers = 10;
        f.data_pdus_sent = 15;
        f.data_pdus_lost = 13;
        f.retransmitted_segments = 12;
        f.timeouts = 12;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Policing);
        assert_eq!(
            e.evidence,
            "UPC discarded 495 cells; 13 of 15 data PDUs lost (86.7%); 12 retransmitted, 12 timeouts; measured 0.00 Mb/s"
        );
        // Tagged, not discarded: nothing lost to the UPC.
        f.cells_policed = 0;
        assert_eq!(limit(&f), LimitedBy::CellLoss);
        // Losses TCP never had to recover from explain nothing.
        f.retransmitted_segments = 0;
        f.timeouts = 0;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // A full interface queue is a buffer too.
        f.cells_lost_in_buffers = 0;
        f.pdus_dropped_at_adapter = 3;
        f.timeouts = 1;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::CellLoss);
        assert!(
            e.evidence
                .contains("3 PDUs at the sender's interface queue"),
            "{}",
            e.evidence
        );
        // UDP does not slow down for losses.
        f.tcp = false;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn nothing_measured_is_still_an_answer() {
        let f = Facts {
            path: None,
            window: None,
            cpu_busy: None,
            throughput_bps: 0.0,
            sender_seconds: 0.0,
            ..plain()
        };
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Undetermined);
        assert_eq!(e.evidence, "no bound reached; measured 0.00 Mb/s");
        let names: Vec<&str> = LimitedBy::ALL.iter().map(|l| l.as_str()).collect();
        assert_eq!(names.len(), 9);
        assert!(names.iter().all(|n| !n.is_empty()));
    }

    fn two_hosts(adapter_tx: TxSpacing, port_mbps: u64, pacing: Option<u64>) -> Topology {
        let adapter = AdapterSpec {
            rate: BitRate(149_760_000),
            delay: SimTime::ZERO,
            tx: adapter_tx,
            pdu_gap: SimTime::from_us(52),
            tx_queue_pdus: 50,
        };
        let port = |mbps: u64| PortSpec {
            rate: BitRate(mbps * 1_000_000),
            delay: SimTime::ZERO,
            buffer_cells: 256,
            policy: DropPolicy::TailDrop,
            clp1_threshold_cells: None,
        };
        Topology {
            adapters: vec![adapter, adapter],
            ports: vec![port(150), port(port_mbps)],
            circuits: vec![CircuitSpec {
                src: 0,
                dst: 1,
                vpi: 0,
                vci: 100,
                hops: vec![Hop {
                    port: 1,
                    vpi: 0,
                    vci: 100,
                }],
            }],
            pacing: pacing
                .map(|mbps| vec![VcPacing::at_rate(0, BitRate(mbps * 1_000_000)).unwrap()])
                .unwrap_or_default(),
            ..Default::default()
        }
    }

    #[test]
    fn the_path_rate_is_its_slowest_element() {
        let name = |p: usize| format!("port {p}");
        // 9188 bytes (vc-mux) = 192 cells; at 100 Mb/s a cell takes 4.24 µs.
        let topo = two_hosts(TxSpacing::None, 100, None);
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        assert_eq!(p.unit_cells, 192);
        let expect = 9148.0 * 8.0 / (192.0 * 4.24e-6);
        assert!(
            (p.payload_bps - expect).abs() < 1.0,
            "{} {expect}",
            p.payload_bps
        );
        assert_eq!(p.bottleneck, "port 1 (100.00 Mb/s of cells)");
        // At OC-3c the adapter's 52 µs PDU gap is the slower: 191 cell slots + 1 + gap.
        let topo = two_hosts(TxSpacing::None, 150, None);
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        let cell = 424.0 / 149.76e6;
        let expect = 9148.0 * 8.0 / (192.0 * cell + 52e-6);
        assert!(
            (p.payload_bps - expect).abs() / expect < 1e-6,
            "{} {expect}",
            p.payload_bps
        );
        assert!(
            p.bottleneck.starts_with("the sender's adapter"),
            "{}",
            p.bottleneck
        );
        // Paced at 70 Mb/s: one cell every 6.06 µs, then the gap after the last.
        let topo = two_hosts(TxSpacing::None, 150, Some(70));
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        let paced = 424.0 / 70e6;
        let expect = 9148.0 * 8.0 / (191.0 * paced + cell + 52e-6);
        assert!(
            (p.payload_bps - expect).abs() / expect < 1e-6,
            "{} {expect}",
            p.payload_bps
        );
        assert_eq!(p.bottleneck, "the adapter paced at 70.00 Mb/s of cells");
        // No such circuit: no rate.
        assert!(path_rate(&topo, 5, 9148, &[(9188, vec![])], &name).is_none());
    }
}
