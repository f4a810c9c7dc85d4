//! Naming the limit of one connection: [`classify`]'s rules, tried in order,
//! each with the sentence of evidence it gives. Apart from the facts: the
//! judgement, and its order, is the one place that decides what bound a
//! transfer.

use super::facts::{AbrRate, Facts, WindowFacts};
use super::limits::{
    LimitedBy, ACR_DRIFT, APPLICATION_SHARE, CPU_BUSY, CPU_BUSY_JOINT, LINK_SHARE, NAGLE_HOLD,
    WINDOW_CLOSED, WINDOW_SHARE,
};

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
/// Every rule whose bound is a rate (the offered load, the ACR, the path, the
/// window over the round trip) compares it with what was delivered, the bytes
/// the receiver read over the transfer's span (`Facts::delivered_bps`), never with
/// ttcp -t's figure, which counts data the socket buffer still held when the
/// writes ended: a transfer is not explained by a rate its path never carried.
///
/// The rules, tried in this order (the first that holds wins):
/// 1. `application`: a paced source got >= [`APPLICATION_SHARE`] of its offered
///    load delivered, and its offer was the fullest bound: no bound that holds
///    by its own rule below (the path's rate or a port parallel connections
///    fill, the ACR, a CPU busy >= [`CPU_BUSY`], the window by either
///    reckoning) has a larger share, for a rate bound a lower rate than the
///    offer. First, because a source that gets what it asks for, where nothing
///    lets through less, was bound by nothing else (its writes may well wait
///    in the circular wait, harmlessly). Where a bound lets through less than
///    the offer, the writes wait on it and what arrives is its rate: its own
///    rule decides (a window of 33.3 Mb/s under a 33.6 Mb/s disk: `window`).
/// 2. `lockstep`: the circular wait took most of the transfer. It paces the
///    transfer at one release per timer tick, far below every other bound.
/// 3. `abr-rate`: an ABR circuit whose allowed cell rate carries less than
///    the path, and delivered >= [`LINK_SHARE`] of what the ACR carries (the
///    same reckoning and tolerance as the adapter's pacing under `link`): the
///    switches' feedback, not the link, set the rate. Before `link`, since the
///    connections an ERICA port shares out also fill that port together. The
///    ACR is its time-weighted mean over the circuit's active time (its first
///    cell to its last): a transfer that delivered more than [`ACR_DRIFT`]
///    above what that carries was not paced by it, and is judged by the rules after.
/// 4. `link`: delivered >= [`LINK_SHARE`] of the path's rate; or parallel
///    connections through the path's slowest port together carry that share of
///    it; and the link was the fullest bound: no CPU busy >= [`CPU_BUSY`] for a
///    larger share of the transfer, no window (rule 6, either reckoning) with a
///    larger delivered share of what it lets through. A link binds only while
///    it is busy: a window-bound sender leaves it idle each round trip, its
///    window out and waiting for the ACKs; a CPU-bound host leaves it idle
///    while the CPU, busy all along, works on the next segment; each shows as
///    a delivered share of the link below the rival's. Where the sender's
///    interface queue refused PDUs the link had a backlog, so it was busy
///    and binds whatever its rivals (a UDP source writing faster than its
///    adapter sends is busy all along on what is refused). A full link is the hard
///    ceiling; tried before the CPU and the window, since a host that keeps a
///    link full may be busy doing so, and a window larger than the path's
///    bandwidth-delay product is also "reached" when the link is full.
/// 5. `host-cpu`: the sender's or receiver's CPU busy >= [`CPU_BUSY`] of the
///    transfer. Before the window: a saturated CPU stretches the round trip,
///    which would make the window look like the limit.
/// 6. `window`: delivered >= [`WINDOW_SHARE`] of peak flight / minimum RTT;
///    or of the mean window in flight when it closed / the mean time until it
///    let the next new segment go (the round trip with both hosts' work in it:
///    a stop-and-wait of one segment spends most of its loop in the hosts),
///    if those closed cycles span >= [`WINDOW_CLOSED`] of the transfer.
/// 7. `policing`: the UPC discarded cells of this connection and data PDUs were lost.
/// 8. `interface-queue`: the sender's own interface queue refused more PDUs
///    than the network lost of its data, and TCP retransmitted or timed out
///    (the receiver's queue refusing ACKs is said beside, not weighed).
///    Where the losses were decides: a PDU refused at the host never became
///    cells; the window let out more than the queue holds while the adapter
///    sends at its rate, a limit of the host and its window, not of the network.
/// 9. `cell-loss`: cells lost in switch buffers (and PDUs at the interface
///    queues, the sender's as many or fewer), and TCP retransmitted or timed out.
/// 10. `nagle`: the sender held back data its window allowed for >= [`NAGLE_HOLD`]
///     of the transfer (a window that is not whole segments, a receiver that
///     ACKs late): measured like the circular wait, but not timer-paced.
/// 11. `host-cpu`, jointly: neither CPU reached [`CPU_BUSY`], but their busy
///     shares add up to >= [`CPU_BUSY_JOINT`] of the transfer. Each host's work
///     waits for the other's: a window of a few segments passes the turn back
///     and forth (the receiver takes a segment in and reads it before it
///     acknowledges, the sender takes the ACK in and writes and copies before
///     the next segment goes), so the per-segment work of both, added along
///     that cycle, sets the pace. Last: any bound or loss above explains the
///     transfer better than the sum of two CPUs' shares.
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
    RULES
        .iter()
        .find_map(|rule| rule(f))
        .unwrap_or_else(|| undetermined(f))
}

/// One rule of [`classify`]: the explanation if it holds.
type Rule = fn(&Facts) -> Option<Explanation>;

/// [`classify`]'s rules in their order (see there why).
const RULES: [Rule; 13] = [
    application,
    lockstep,
    abr_rate,
    link,
    shared_link,
    host_cpu,
    window_over_rtt,
    window_closed,
    policing,
    interface_queue,
    cell_loss,
    nagle,
    host_cpus_jointly,
];

/// Whether a bound `full` of it delivered was the fullest against `rivals`
/// (each with how full it was): the evidence's words for the rivals it beat
/// ("" for none), or None where one was fuller and its own rule decides.
fn fuller_than(full: f64, rivals: Vec<(String, f64)>) -> Option<String> {
    if rivals.iter().any(|&(_, share)| share > full) {
        return None;
    }
    let names: Vec<String> = rivals.into_iter().map(|(s, _)| s).collect();
    Some(if names.is_empty() {
        String::new()
    } else {
        format!("; fuller than {}", names.join(" and "))
    })
}

/// A rule that holds: its limit and evidence.
fn done(limited_by: LimitedBy, evidence: String) -> Option<Explanation> {
    Some(Explanation {
        limited_by,
        evidence,
    })
}

impl Facts {
    /// What was delivered as a share of a rate bound (0 for no bound): a bound
    /// on what crosses the path is met by what crossed it, not by what the
    /// sender wrote (`Facts::delivered_bps`).
    fn share(&self, bound: f64) -> f64 {
        if bound > 0.0 {
            self.delivered_bps / bound
        } else {
            0.0
        }
    }

    /// The evidence's close for a rate bound: what was delivered and its share
    /// of the bound; over TCP, ttcp -t's figure beside it where that exceeds the
    /// bound, which only data not yet carried when the writes ended can do.
    fn delivered_of(&self, bound: f64) -> String {
        let mut s = format!(
            "delivered {} ({})",
            mbps(self.delivered_bps),
            pct(self.share(bound))
        );
        // Above the bound as the evidence rounds its shares (a whole percent).
        if self.tcp && self.throughput_bps >= 1.005 * bound {
            s += &format!(
                "; ttcp -t's {} ({}) counts data its socket buffer still held when the writes ended",
                mbps(self.throughput_bps),
                pct(self.throughput_bps / bound)
            );
        }
        s
    }

    /// A share of ttcp -t's interval (none if it never closed).
    fn of_transfer(&self, secs: f64) -> f64 {
        if self.sender_seconds > 0.0 {
            (secs / self.sender_seconds).min(1.0)
        } else {
            0.0
        }
    }

    /// The window in flight over the shortest round trip, bit/s.
    fn window_bound(&self) -> Option<(&WindowFacts, f64)> {
        self.window.as_ref().and_then(|w| {
            let secs = w.min_rtt.as_secs_f64();
            (secs > 0.0 && w.peak_flight > 0).then(|| (w, w.peak_flight as f64 * 8.0 / secs))
        })
    }

    /// The ABR circuit's ACR where it held the transfer (rule 3): below the
    /// path's rate, and [`LINK_SHARE`] to 1 + [`ACR_DRIFT`] of what its mean
    /// carries delivered; with that share.
    fn acr_bound(&self) -> Option<(&AbrRate, f64)> {
        let a = self.abr.as_ref()?;
        let below_path = !matches!(&self.path, Some(p) if p.payload_bps <= a.payload_bps);
        let share = self.share(a.payload_bps);
        (below_path && (LINK_SHARE..=1.0 + ACR_DRIFT).contains(&share)).then_some((a, share))
    }

    /// The closed window's share of the transfer and what it lets through over
    /// the round trip it really took (rule 6's second reckoning), where it
    /// closed for at least [`WINDOW_CLOSED`] of a TCP transfer.
    fn closed_window(&self) -> Option<(&WindowFacts, f64, f64)> {
        let w = self.window.as_ref().filter(|_| self.tcp)?;
        let closed = self.of_transfer(w.closed_time.as_secs_f64());
        let bound = w.closed_bound_bps()?;
        (closed >= WINDOW_CLOSED).then_some((w, closed, bound))
    }

    /// The bounds besides the link that hold by their own rule (a CPU busy at
    /// least [`CPU_BUSY`], the window at [`WINDOW_SHARE`] or more of either of
    /// its reckonings), each with how full it was: a CPU's busy share, the
    /// window's delivered share of what it lets through. Set against the
    /// delivered share of the link's rate, the link's own busy share.
    fn rivals_of_link(&self) -> Vec<(String, f64)> {
        let mut rivals = Vec::new();
        if let Some(busy) = self.cpu_busy {
            let side = if busy[1] >= busy[0] { 1 } else { 0 };
            if busy[side] >= CPU_BUSY {
                let name = ["sender", "receiver"][side];
                rivals.push((
                    format!("the {name} CPU (busy {})", pct(busy[side])),
                    busy[side],
                ));
            }
        }
        if self.tcp {
            let over_rtt = self.window_bound().map(|(_, b)| ("window/RTT", b));
            let closed = self
                .closed_window()
                .map(|(_, _, b)| ("window over the round trip it took", b));
            for (what, bound) in over_rtt.into_iter().chain(closed) {
                let share = self.share(bound);
                if share >= WINDOW_SHARE {
                    let s = format!("the window ({} of {what} {})", pct(share), mbps(bound));
                    rivals.push((s, share));
                }
            }
        }
        rivals
    }

    /// Whether the link, `full` of it carried, was the fullest of the bounds:
    /// the evidence's words for the rivals it beat ("" for none), or None
    /// where a rival was fuller. A link binds only while it is busy: a
    /// window-bound sender leaves it idle every round trip, its window out and
    /// waiting for the ACKs, and a CPU-bound host leaves it idle while its
    /// CPU, busy all along, works on the next segment; either shows as a
    /// delivered share of the link below the rival's. Unless the sender's
    /// interface queue refused PDUs: full, it shows the link backlogged, not
    /// waiting on either (a UDP source writing faster than its adapter sends
    /// keeps its CPU busy all along on datagrams the queue refuses).
    fn link_fullest(&self, full: f64) -> Option<String> {
        let rivals = self.rivals_of_link();
        let refused = self.pdus_dropped_at_adapter[0];
        if refused == 0 {
            return fuller_than(full, rivals);
        }
        let names: Vec<String> = rivals.into_iter().map(|(s, _)| s).collect();
        Some(if names.is_empty() {
            String::new()
        } else {
            format!(
                "; backlogged ({refused} PDUs refused by the sender's interface queue), not waiting on {}",
                names.join(" or ")
            )
        })
    }

    /// The bounds that hold by their own rule and could hold a paced source
    /// below its offer: the link's (the path's rate at [`LINK_SHARE`] or more
    /// of it delivered; a port parallel connections fill together), the ACR's
    /// (as rule 3 takes it), a CPU's and the window's (as the link's rivals),
    /// each with how full it was. A bound that lets through less than the
    /// source offers is the fuller: the source's writes wait on it, and what
    /// arrives is the bound's rate, not the offer's (a rate bound's share of
    /// what was delivered is above the offer's exactly where it is the lower).
    fn rivals_of_application(&self) -> Vec<(String, f64)> {
        let mut rivals = Vec::new();
        if let Some(p) = self.path.as_ref() {
            let share = self.share(p.payload_bps);
            if share >= LINK_SHARE {
                let s = format!(
                    "the link ({} carries at most {}: delivered {} of it)",
                    p.bottleneck,
                    mbps(p.payload_bps),
                    pct(share)
                );
                rivals.push((s, share));
            }
        }
        if let Some(s) = self.shared.as_ref().filter(|s| s.connections > 1) {
            let share = s.total_bps / s.capacity_bps;
            if share >= LINK_SHARE {
                let w = format!(
                    "the link ({} connections together delivered {} of {} ({} at most))",
                    s.connections,
                    pct(share),
                    s.port,
                    mbps(s.capacity_bps)
                );
                rivals.push((w, share));
            }
        }
        if let Some((a, share)) = self.acr_bound() {
            let s = format!(
                "the ACR (its mean {} of cells carries at most {}: delivered {} of it)",
                mbps(a.acr_mean_bps),
                mbps(a.payload_bps),
                pct(share)
            );
            rivals.push((s, share));
        }
        rivals.extend(self.rivals_of_link());
        rivals
    }

    /// For a CPU's or the window's evidence: how full the link was where it
    /// was full enough for its own rule (the rule yielded to this bound), or "".
    fn link_idle(&self) -> String {
        if let Some(p) = self.path.as_ref() {
            let share = self.share(p.payload_bps);
            if share >= LINK_SHARE {
                return format!(
                    "; {} carries at most {}: delivered {} of it, the link idle the rest",
                    p.bottleneck,
                    mbps(p.payload_bps),
                    pct(share)
                );
            }
        }
        if let Some(s) = self.shared.as_ref().filter(|s| s.connections > 1) {
            let share = s.total_bps / s.capacity_bps;
            if share >= LINK_SHARE {
                return format!(
                    "; {} connections together delivered {} of {} ({} at most), the link idle the rest",
                    s.connections,
                    pct(share),
                    s.port,
                    mbps(s.capacity_bps)
                );
            }
        }
        String::new()
    }

    /// Where the interface queues refused PDUs, for a loss rule's evidence: the
    /// sender's (its data), and the receiver's (its ACKs) where it refused any.
    fn refusals(&self) -> String {
        let [data, acks] = self.pdus_dropped_at_adapter;
        match (data, acks) {
            (_, 0) => format!("{data} PDUs refused by the sender's interface queue"),
            (0, _) => format!("{acks} ACKs refused by the receiver's interface queue"),
            _ => format!(
                "{data} PDUs refused by the sender's interface queue and {acks} ACKs by the receiver's"
            ),
        }
    }

    /// The losses, for the evidence of a loss rule.
    fn losses(&self) -> String {
        let mut s = format!(
            "{} of {} data PDUs lost ({:.1}%)",
            self.data_pdus_lost,
            self.data_pdus_sent,
            if self.data_pdus_sent > 0 {
                100.0 * self.data_pdus_lost as f64 / self.data_pdus_sent as f64
            } else {
                0.0
            }
        );
        if self.tcp {
            s += &format!(
                "; {} retransmitted, {} timeouts",
                self.retransmitted_segments, self.timeouts
            );
        }
        s + &format!("; measured {}", mbps(self.throughput_bps))
    }
}

/// Rule 1, `application`: a paced source got its offered load, the fullest
/// bound.
fn application(f: &Facts) -> Option<Explanation> {
    let offered = f.offered_bps?;
    let full = f.share(offered);
    if full < APPLICATION_SHARE {
        return None;
    }
    let rivals = fuller_than(full, f.rivals_of_application())?;
    done(
        LimitedBy::Application,
        format!(
            "paced source offers {}; delivered {} ({}){rivals}",
            mbps(offered),
            mbps(f.delivered_bps),
            pct(full)
        ),
    )
}

/// Rule 2, `lockstep`: the circular wait took most of the transfer.
fn lockstep(f: &Facts) -> Option<Explanation> {
    let measured = f.throughput_bps;
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
                pct(f.of_transfer(f.circular_wait_seconds)),
                mbps(measured)
            ),
        );
    }
    None
}

/// Rule 3, `abr-rate`: the ABR circuit's allowed cell rate.
fn abr_rate(f: &Facts) -> Option<Explanation> {
    let (a, _) = f.acr_bound()?;
    done(
        LimitedBy::AbrRate,
        format!(
            "ACR {} of cells on average ({}; {} to {}, {} at the end) carries at most {} in {}-byte {}; {}",
            mbps(a.acr_mean_bps),
            a.feedback,
            mbps(a.acr_range_bps.0),
            mbps(a.acr_range_bps.1),
            mbps(a.acr_bps),
            mbps(a.payload_bps),
            a.unit_bytes,
            if f.tcp { "segments" } else { "datagrams" },
            f.delivered_of(a.payload_bps)
        ),
    )
}

/// Rule 4, `link`: the path's rate, the fullest bound.
fn link(f: &Facts) -> Option<Explanation> {
    let p = f.path.as_ref()?;
    let full = f.share(p.payload_bps);
    if full < LINK_SHARE {
        return None;
    }
    let rivals = f.link_fullest(full)?;
    done(
        LimitedBy::Link,
        format!(
            "{} carries at most {} in {}-byte {} ({} cells); {}{rivals}",
            p.bottleneck,
            mbps(p.payload_bps),
            p.unit_bytes,
            if f.tcp { "segments" } else { "datagrams" },
            p.unit_cells,
            f.delivered_of(p.payload_bps)
        ),
    )
}

/// Rule 4, `link`, shared: parallel connections fill the path's slowest port,
/// the fullest bound.
fn shared_link(f: &Facts) -> Option<Explanation> {
    let s = f.shared.as_ref().filter(|s| s.connections > 1)?;
    let full = s.total_bps / s.capacity_bps;
    if full < LINK_SHARE {
        return None;
    }
    let rivals = f.link_fullest(full)?;
    done(
        LimitedBy::Link,
        format!(
            "{} connections share {} (at most {}): together delivered {} ({}); this one {}{rivals}",
            s.connections,
            s.port,
            mbps(s.capacity_bps),
            mbps(s.total_bps),
            pct(full),
            mbps(f.delivered_bps)
        ),
    )
}

/// Rule 5, `host-cpu`: the sender's or the receiver's CPU saturated.
fn host_cpu(f: &Facts) -> Option<Explanation> {
    let measured = f.throughput_bps;
    if let Some(busy) = f.cpu_busy {
        let side = if busy[1] >= busy[0] { 1 } else { 0 };
        if busy[side] >= CPU_BUSY {
            let names = ["sender", "receiver"];
            return done(
                LimitedBy::HostCpu,
                format!(
                    "{} CPU ({}) busy {} of the transfer ({} {}){}; measured {}",
                    names[side],
                    f.cpu_profiles[side],
                    pct(busy[side]),
                    names[1 - side],
                    pct(busy[1 - side]),
                    f.link_idle(),
                    mbps(measured)
                ),
            );
        }
    }
    None
}

/// Rule 6, `window`: the peak flight over the shortest round trip.
fn window_over_rtt(f: &Facts) -> Option<Explanation> {
    if let Some((w, bound)) = f.window_bound() {
        if f.tcp && f.share(bound) >= WINDOW_SHARE {
            return done(
                LimitedBy::Window,
                format!(
                    "window {} B in flight (sndbuf {}, rcvbuf {}) / RTT {:.2} ms = {}; {}{}",
                    w.peak_flight,
                    w.sndbuf,
                    w.rcvbuf,
                    w.min_rtt.as_secs_f64() * 1e3,
                    mbps(bound),
                    f.delivered_of(bound),
                    f.link_idle()
                ),
            );
        }
    }
    None
}

/// Rule 6, `window`, closed: the window over the round trip it actually took.
fn window_closed(f: &Facts) -> Option<Explanation> {
    // The same rule over the round trip the window actually took. When the
    // window is as small as a segment or two, the hosts' work is most of the
    // loop (the receiver must take the data in and read it before it opens the
    // window, the sender must take the update in and write and copy the next
    // segment), so a segment's round trip to its ACK overstates what the
    // window allows.
    if let Some((w, closed, bound)) = f.closed_window() {
        if f.share(bound) >= WINDOW_SHARE {
            let n = w.closed_cycles as f64;
            return done(
                LimitedBy::Window,
                format!(
                    "window {:.0} B in flight (sndbuf {}, rcvbuf {}) closed {} times ({} of the transfer); \
                     round trip with both hosts' work {:.2} ms (segment out to its ACK in {:.2} ms) = {}; {}{}",
                    w.closed_bytes as f64 / n,
                    w.sndbuf,
                    w.rcvbuf,
                    w.closed_cycles,
                    pct(closed),
                    w.closed_time.as_secs_f64() * 1e3 / n,
                    w.min_rtt.as_secs_f64() * 1e3,
                    mbps(bound),
                    f.delivered_of(bound),
                    f.link_idle()
                ),
            );
        }
    }
    None
}

/// Rule 7, `policing`: the UPC discarded cells, and data PDUs were lost.
fn policing(f: &Facts) -> Option<Explanation> {
    if f.tcp && f.cells_policed > 0 && f.data_pdus_lost > 0 {
        return done(
            LimitedBy::Policing,
            format!("UPC discarded {} cells; {}", f.cells_policed, f.losses()),
        );
    }
    None
}

/// Rule 8, `interface-queue`: the sender's own interface queue refused more
/// PDUs than the network lost of its data, and TCP recovered.
fn interface_queue(f: &Facts) -> Option<Explanation> {
    // The sender's refusals only: they are its data, as the network's losses
    // weighed against them are; the receiver's are ACKs, said beside them.
    let refused = f.pdus_dropped_at_adapter[0];
    if !(f.tcp && refused > f.data_pdus_lost && (f.retransmitted_segments > 0 || f.timeouts > 0)) {
        return None;
    }
    let network = if f.cells_lost_in_buffers > 0 {
        format!(
            "besides, {} cells lost in switch buffers: {} of {} data PDUs",
            f.cells_lost_in_buffers, f.data_pdus_lost, f.data_pdus_sent
        )
    } else {
        "no cell lost in the network".to_string()
    };
    let mut s = format!("{} ({network})", f.refusals());
    // What the queue holds against what the window lets out: the queue fills
    // when the host hands over segments faster than the adapter sends them.
    if let Some(q) = f.ifq_pdus {
        s += &format!("; it holds {q} PDUs");
        if let Some(p) = &f.path {
            s += &format!(
                " ({} B of {}-byte segments)",
                q as u64 * p.unit_bytes as u64,
                p.unit_bytes
            );
        }
    }
    if let Some(w) = &f.window {
        s += &format!(
            "; window {} B (sndbuf {}, rcvbuf {}), {} B in flight at most",
            w.sndbuf.min(w.rcvbuf),
            w.sndbuf,
            w.rcvbuf,
            w.peak_flight
        );
    }
    if let Some(p) = &f.path {
        s += &format!(" while {} carries {}", p.bottleneck, mbps(p.payload_bps));
    }
    done(
        LimitedBy::InterfaceQueue,
        format!(
            "{s}; {} retransmitted, {} timeouts; measured {}",
            f.retransmitted_segments,
            f.timeouts,
            mbps(f.throughput_bps)
        ),
    )
}

/// Rule 9, `cell-loss`: cells lost at buffers, and TCP recovered.
fn cell_loss(f: &Facts) -> Option<Explanation> {
    let refused = f.pdus_dropped_at_adapter.iter().any(|&n| n > 0);
    let buffer_loss = f.cells_lost_in_buffers > 0 || refused;
    if f.tcp && buffer_loss && (f.retransmitted_segments > 0 || f.timeouts > 0) {
        // Where the losses were, first: a PDU an interface queue refused
        // never became cells, so "cells lost 0" must not read as no loss.
        let queue = f.refusals();
        let buffers = format!("{} cells lost in switch buffers", f.cells_lost_in_buffers);
        let s = match (refused, f.cells_lost_in_buffers > 0) {
            (true, true) => format!("{queue}, {buffers}"),
            (true, false) => format!("{queue} (no cell lost in the network)"),
            _ => buffers,
        };
        return done(LimitedBy::CellLoss, format!("{s}; {}", f.losses()));
    }
    None
}

/// Rule 10, `nagle`: the sender held back data its window allowed.
fn nagle(f: &Facts) -> Option<Explanation> {
    let measured = f.throughput_bps;
    let held = f.of_transfer(f.holding_seconds);
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
    None
}

/// Rule 11, `host-cpu`, jointly: the two CPUs' shares fill the transfer.
fn host_cpus_jointly(f: &Facts) -> Option<Explanation> {
    let measured = f.throughput_bps;
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
                pct(f.of_transfer(w.closed_time.as_secs_f64())),
                w.closed_bytes as f64 / w.closed_cycles as f64
            );
        }
        return done(
            LimitedBy::HostCpu,
            format!("{s}; measured {}", mbps(measured)),
        );
    }
    None
}

/// No rule held: `undetermined`, with how near each bound came.
fn undetermined(f: &Facts) -> Explanation {
    let held = f.of_transfer(f.holding_seconds);
    let mut near = Vec::new();
    if let Some(p) = &f.path {
        near.push(format!(
            "{} of the path's {}",
            pct(f.share(p.payload_bps)),
            mbps(p.payload_bps)
        ));
    }
    if let Some(a) = f
        .abr
        .as_ref()
        .filter(|a| f.share(a.payload_bps) > 1.0 + ACR_DRIFT)
    {
        // Not the bound (rule 3), but what the feedback did: say so.
        near.push(format!(
            "the ACR's mean {} of cells ({} to {}, {} at the end; {}) carries {}, less than was delivered",
            mbps(a.acr_mean_bps),
            mbps(a.acr_range_bps.0),
            mbps(a.acr_range_bps.1),
            mbps(a.acr_bps),
            a.feedback,
            mbps(a.payload_bps)
        ));
    }
    if let Some((_, bound)) = f.window_bound() {
        near.push(format!(
            "{} of window/RTT {}",
            pct(f.share(bound)),
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
            pct(f.of_transfer(f.circular_wait_seconds))
        ));
    }
    let near = if near.is_empty() {
        String::new()
    } else {
        format!(": {}", near.join(", "))
    };
    Explanation {
        limited_by: LimitedBy::Undetermined,
        evidence: format!(
            "no bound reached{near}; delivered {}",
            mbps(f.delivered_bps)
        ),
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::explain::{AbrRate, PathRate, SharedLink};
    use crate::time::SimTime;

    /// A 10 s TCP transfer at 10 Mb/s that reached no bound.
    fn plain() -> Facts {
        Facts {
            tcp: true,
            throughput_bps: 10e6,
            delivered_bps: 10e6,
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
            abr: None,
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
            pdus_dropped_at_adapter: [0, 0],
            ifq_pdus: Some(50),
            data_pdus_sent: 1000,
            data_pdus_lost: 0,
            retransmitted_segments: 0,
            timeouts: 0,
        }
    }

    /// A transfer that delivered at the rate its sender wrote (nothing left in
    /// the socket buffer when the writes ended).
    fn set(f: &mut Facts, bps: f64) {
        f.throughput_bps = bps;
        f.delivered_bps = bps;
    }

    fn scale(f: &mut Facts, k: f64) {
        set(f, f.delivered_bps * k);
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
        set(&mut f, 0.80 * 9148.0 * 8.0 / 0.002);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert!(
            e.evidence.starts_with("window 9148 B in flight (sndbuf 9148, rcvbuf 9148) closed 4000 times (80% of the transfer); round trip with both hosts' work 2.00 ms (segment out to its ACK in 0.50 ms) = 36.59 Mb/s; delivered 29.27 Mb/s (80%)"),
            "{}",
            e.evidence
        );
        scale(&mut f, 0.99);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // A window closed for less than half the transfer did not pace it.
        set(&mut f, 36e6);
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
        set(&mut f, 0.80 * 32768.0 * 8.0 / 0.010);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert!(
            e.evidence.starts_with("window 32768 B in flight (sndbuf 32768, rcvbuf 65536) / RTT 10.00 ms = 26.21 Mb/s; delivered 20.97 Mb/s (80%)"),
            "{}",
            e.evidence
        );
        scale(&mut f, 0.99);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // UDP has no window.
        set(&mut f, 25e6);
        f.tcp = false;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn a_full_path_is_the_link_even_with_losses() {
        let mut f = plain();
        set(&mut f, 86e6);
        f.window.as_mut().unwrap().peak_flight = 200_000;
        f.cells_lost_in_buffers = 40;
        f.retransmitted_segments = 1;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(e.evidence.starts_with("the port to b (100.00 Mb/s of cells) carries at most 100.00 Mb/s in 9148-byte segments (192 cells); delivered 86.00 Mb/s (86%)"), "{}", e.evidence);
        set(&mut f, 84e6);
        assert_eq!(limit(&f), LimitedBy::CellLoss);
    }

    #[test]
    fn an_acr_below_the_path_that_the_connection_fills_is_abr_rate() {
        let mut f = plain();
        f.abr = Some(AbrRate {
            acr_mean_bps: 33.65e6,
            acr_bps: 33.65e6,
            acr_range_bps: (4.24e6, 149.76e6),
            payload_bps: 30e6,
            unit_bytes: 9140,
            feedback: "ERICA's explicit rate at the port to b, target 0.9".into(),
        });
        // Four connections filling the port together: still the ACR, not the link.
        f.shared = Some(SharedLink {
            port: "the port to b".into(),
            connections: 4,
            total_bps: 120e6,
            capacity_bps: 100e6,
        });
        set(&mut f, 30e6 * LINK_SHARE);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::AbrRate);
        assert_eq!(
            e.evidence,
            "ACR 33.65 Mb/s of cells on average (ERICA's explicit rate at the port to b, target 0.9; \
             4.24 Mb/s to 149.76 Mb/s, 33.65 Mb/s at the end) \
             carries at most 30.00 Mb/s in 9140-byte segments; delivered 25.50 Mb/s (85%)"
        );
        // Below the link's tolerance of what the ACR carries: the ACR is not the bound.
        scale(&mut f, 0.99);
        assert_eq!(limit(&f), LimitedBy::Link);
        // Delivered well above what the mean ACR carries: the ACR did not pace it.
        set(&mut f, 30e6 * (1.0 + 0.99 * ACR_DRIFT));
        assert_eq!(limit(&f), LimitedBy::AbrRate);
        set(&mut f, 30e6 * (1.0 + ACR_DRIFT) * 1.01);
        assert_eq!(limit(&f), LimitedBy::Link);
        // Judged by nothing else, it is undetermined, and says how the ACR moved.
        let mut alone = f.clone();
        alone.shared = None;
        alone.window = None;
        let e = classify(&alone);
        assert_eq!(e.limited_by, LimitedBy::Undetermined);
        assert!(
            e.evidence.contains(
                "the ACR's mean 33.65 Mb/s of cells (4.24 Mb/s to 149.76 Mb/s, 33.65 Mb/s at the end; \
                 ERICA's explicit rate at the port to b, target 0.9) carries 30.00 Mb/s, less than was delivered"
            ),
            "{}",
            e.evidence
        );
        // An ACR that carries more than the path (at PCR, say): the path binds
        // (with a window that lets through more than it).
        set(&mut f, 90e6);
        f.window.as_mut().unwrap().peak_flight = 200_000;
        f.abr.as_mut().unwrap().payload_bps = 120e6;
        assert_eq!(limit(&f), LimitedBy::Link);
    }

    #[test]
    fn a_rate_bound_is_judged_on_what_was_delivered() {
        // examples/abr.netspec: 1 MB socket buffers still held data when the
        // writes ended, so ttcp -t's figure (45.95 Mb/s) is above what the ACR
        // carries; the receiver read 29.32 Mb/s over the transfer, which the evidence gives.
        let mut f = plain();
        f.abr = Some(AbrRate {
            acr_mean_bps: 33.65e6,
            acr_bps: 33.65e6,
            acr_range_bps: (4.24e6, 149.76e6),
            payload_bps: 29.27e6,
            unit_bytes: 9136,
            feedback: "ERICA's explicit rate at the port to sink.atm, target 0.9".into(),
        });
        f.throughput_bps = 45.95e6;
        f.delivered_bps = 29.32e6;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::AbrRate);
        assert_eq!(
            e.evidence,
            "ACR 33.65 Mb/s of cells on average (ERICA's explicit rate at the port to sink.atm, target 0.9; \
             4.24 Mb/s to 149.76 Mb/s, 33.65 Mb/s at the end) carries at most 29.27 Mb/s in 9136-byte segments; delivered 29.32 Mb/s (100%); \
             ttcp -t's 45.95 Mb/s (157%) counts data its socket buffer still held when the writes ended"
        );
        // The sender's figure alone names no bound: written fast, delivered slowly.
        f.abr = None;
        f.window.as_mut().unwrap().peak_flight = 200_000;
        f.throughput_bps = 90e6;
        f.delivered_bps = 40e6;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Undetermined);
        assert!(
            e.evidence
                .contains("40% of the path's 100.00 Mb/s, 25% of window/RTT 160.00 Mb/s"),
            "{}",
            e.evidence
        );
        assert!(
            e.evidence.ends_with("; delivered 40.00 Mb/s"),
            "{}",
            e.evidence
        );
        // And a transfer that delivered at the link's rate is the link's, whatever it wrote.
        f.delivered_bps = 86e6;
        assert_eq!(limit(&f), LimitedBy::Link);
        // Not above the bound as the evidence rounds, ttcp -t's figure is not said.
        f.throughput_bps = 100.4e6;
        assert!(
            classify(&f)
                .evidence
                .ends_with("delivered 86.00 Mb/s (86%)"),
            "{}",
            classify(&f).evidence
        );
    }

    /// 004's ttcp NRL -> JPL (wan-contention's ftp part): 8192-byte segments
    /// on a DS-3 paced at 40.70 Mb/s of cells, a 167 KB window (20 segments in
    /// flight) over a 39.31 ms round trip.
    fn ttcp_nrl_jpl() -> Facts {
        let mut f = plain();
        f.throughput_bps = 31.52e6;
        f.delivered_bps = 31.43e6;
        f.sender_seconds = 20.0;
        f.path = Some(PathRate {
            payload_bps: 36.37e6,
            unit_bytes: 8192,
            unit_cells: 173,
            bottleneck: "the adapter paced at 40.70 Mb/s of cells".into(),
        });
        f.cpu_busy = Some([0.020, 0.024]);
        f.window = Some(WindowFacts {
            peak_flight: 163_840,
            min_rtt: SimTime::from_us(39_308),
            sndbuf: 171_008,
            rcvbuf: 171_008,
            closed_cycles: 0,
            closed_bytes: 0,
            closed_time: SimTime::ZERO,
        });
        f
    }

    #[test]
    fn a_window_below_the_link_binds_though_the_link_is_85_percent_full() {
        // 86% of the DS-3, but 94% of what the window lets through each round
        // trip: the sender waits for its ACKs with its window out, and the
        // link idles meanwhile. The window, not the link.
        let f = ttcp_nrl_jpl();
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert_eq!(
            e.evidence,
            "window 163840 B in flight (sndbuf 171008, rcvbuf 171008) / RTT 39.31 ms = 33.34 Mb/s; \
             delivered 31.43 Mb/s (94%); the adapter paced at 40.70 Mb/s of cells carries at most \
             36.37 Mb/s: delivered 86% of it, the link idle the rest"
        );
        // A window that lets through more than the DS-3 (25 segments): the link
        // is the fuller, and its evidence says what it was set against.
        let mut f = ttcp_nrl_jpl();
        f.window.as_mut().unwrap().peak_flight = 204_800;
        f.delivered_bps = 34e6;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(
            e.evidence.ends_with(
                "delivered 34.00 Mb/s (93%); fuller than the window (82% of window/RTT 41.68 Mb/s)"
            ),
            "{}",
            e.evidence
        );
        // A window held to the round trip its closed cycles really took counts
        // as the window does: a stop-and-wait whose hosts' work fills the loop.
        let mut f = ttcp_nrl_jpl();
        let w = f.window.as_mut().unwrap();
        (w.peak_flight, w.closed_cycles, w.closed_bytes) = (204_800, 300, 300 * 163_840);
        w.closed_time = SimTime::from_ms(12_000);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert!(
            e.evidence
                .contains("closed 300 times (60% of the transfer)"),
            "{}",
            e.evidence
        );
    }

    #[test]
    fn a_saturated_cpu_binds_below_a_full_link() {
        // 003 Exp. 4(a)'s single SPARC-10 at gap 0: its CPU busy all along, its
        // adapter idle 11% of the time between the segments the CPU prepares.
        let mut f = plain();
        f.throughput_bps = 79.87e6;
        f.delivered_bps = 79.85e6;
        f.path = Some(PathRate {
            payload_bps: 89.34e6,
            unit_bytes: 8192,
            unit_cells: 173,
            bottleneck: "the sender's adapter (100.00 Mb/s of cells)".into(),
        });
        f.cpu_busy = Some([1.0, 0.32]);
        f.window.as_mut().unwrap().peak_flight = 131_072;
        f.window.as_mut().unwrap().min_rtt = SimTime::from_us(2_000);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::HostCpu);
        assert_eq!(
            e.evidence,
            "sender CPU (sparc-10) busy 100% of the transfer (receiver 32%); the sender's adapter \
             (100.00 Mb/s of cells) carries at most 89.34 Mb/s: delivered 89% of it, the link idle \
             the rest; measured 79.87 Mb/s"
        );
        // The gap of 341 µs holds it to the adapter, its CPU idle a quarter of the time.
        let p = f.path.as_mut().unwrap();
        (p.payload_bps, p.bottleneck) =
            (60.99e6, "the sender's adapter (341 µs between PDUs)".into());
        set(&mut f, 60.96e6);
        f.cpu_busy = Some([0.76, 0.25]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(
            e.evidence.ends_with("delivered 60.96 Mb/s (100%)"),
            "{}",
            e.evidence
        );
        // A source writing faster than its adapter sends (its queue refusing
        // PDUs) keeps its CPU busy on what is refused: the link, backlogged.
        let mut flood = f.clone();
        flood.tcp = false;
        flood.pdus_dropped_at_adapter = [49_987, 0];
        flood.cpu_busy = Some([1.0, 0.1]);
        set(&mut flood, 0.98 * 60.99e6);
        let e = classify(&flood);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(
            e.evidence.ends_with(
                "(98%); backlogged (49987 PDUs refused by the sender's interface queue), \
                 not waiting on the sender CPU (busy 100%)"
            ),
            "{}",
            e.evidence
        );
        // A CPU saturated but less full than the link: the link, and it says so.
        f.cpu_busy = Some([0.95, 0.25]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        assert!(
            e.evidence
                .ends_with("(100%); fuller than the sender CPU (busy 95%)"),
            "{}",
            e.evidence
        );
        // Parallel connections filling a port yield to a busier CPU alike.
        f.path = None;
        f.shared = Some(SharedLink {
            port: "the trunk a->b".into(),
            connections: 2,
            total_bps: 88e6,
            capacity_bps: 100e6,
        });
        f.cpu_busy = Some([0.25, 0.25]);
        assert_eq!(limit(&f), LimitedBy::Link);
        f.cpu_busy = Some([0.25, 0.97]);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::HostCpu);
        assert!(
            e.evidence.contains(
                "; 2 connections together delivered 88% of the trunk a->b (100.00 Mb/s at most), the link idle the rest"
            ),
            "{}",
            e.evidence
        );
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
        set(&mut f, 25e6); // 95% of window/RTT too
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
        set(&mut f, 0.33e6);
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
        // A paced source that gets what it offers was not held back by it
        // (97% of its offer, fuller than the CPUs' 95%)...
        f.offered_bps = Some(0.34e6);
        assert_eq!(limit(&f), LimitedBy::Application);
        // ...but 94% of it, below the CPUs' share, is not the offer's doing:
        // the rules after decide, and the circular wait is the first.
        f.offered_bps = Some(0.35e6);
        assert_eq!(limit(&f), LimitedBy::Lockstep);
        f.offered_bps = Some(1e6);
        assert_eq!(limit(&f), LimitedBy::Lockstep);
    }

    #[test]
    fn a_closed_window_the_receiver_leaves_to_its_timer_is_named_as_such() {
        // The sender held nothing back: its window was closed, and the receiver,
        // everything read, sent the update only when its delayed-ACK timer ran out.
        let mut f = plain();
        set(&mut f, 0.37e6);
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
        // A bound reached first is the better explanation (with a window that
        // lets through more than the link).
        f.cpu_busy = Some([0.55, 0.65]);
        f.window.as_mut().unwrap().peak_flight = 200_000;
        set(&mut f, 90e6);
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
            "paced source offers 11.00 Mb/s; delivered 10.00 Mb/s (91%)"
        );
        f.offered_bps = Some(12e6);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    /// wan-contention's ftp-extended (004 §3): ttcp NRL -> JPL's window and
    /// path, the data read from a disk at 33.55 Mb/s.
    fn ftp_extended() -> Facts {
        let mut f = ttcp_nrl_jpl();
        f.delivered_bps = 31.49e6;
        f.offered_bps = Some(33.55e6);
        f
    }

    #[test]
    fn a_window_below_a_paced_sources_offer_binds() {
        // 94% of the disk's offer and 94.4% of what the window lets through
        // each round trip: the window lets through less, so the writes wait on
        // it; the window, as with ttcp's unpaced source on the same window.
        let e = classify(&ftp_extended());
        assert_eq!(e.limited_by, LimitedBy::Window);
        assert_eq!(
            e.evidence,
            "window 163840 B in flight (sndbuf 171008, rcvbuf 171008) / RTT 39.31 ms = 33.34 Mb/s; \
             delivered 31.49 Mb/s (94%); the adapter paced at 40.70 Mb/s of cells carries at most \
             36.37 Mb/s: delivered 87% of it, the link idle the rest"
        );
        // The path's rate below the offer: the link, fuller than the window.
        let mut f = ftp_extended();
        f.window.as_mut().unwrap().peak_flight = 204_800;
        f.offered_bps = Some(38e6);
        f.delivered_bps = 35e6;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Link);
        // A CPU busier than the offer's share: the CPU.
        let mut f = ftp_extended();
        f.window.as_mut().unwrap().peak_flight = 204_800;
        f.cpu_busy = Some([0.97, 0.2]);
        assert_eq!(limit(&f), LimitedBy::HostCpu);
    }

    #[test]
    fn an_offer_below_every_other_bound_is_the_application() {
        // A disk at 32.5 Mb/s under the same window's 33.34: the offer is the
        // lowest rate, its share of what arrived the largest.
        let mut f = ftp_extended();
        f.offered_bps = Some(32.5e6);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Application);
        assert_eq!(
            e.evidence,
            "paced source offers 32.50 Mb/s; delivered 31.49 Mb/s (97%); fuller than the link \
             (the adapter paced at 40.70 Mb/s of cells carries at most 36.37 Mb/s: delivered 87% \
             of it) and the window (94% of window/RTT 33.34 Mb/s)"
        );
        // An ACR that carries less than the offer: the ACR's rule decides.
        f.abr = Some(AbrRate {
            acr_bps: 32e6,
            acr_mean_bps: 32e6,
            acr_range_bps: (30e6, 34e6),
            payload_bps: 31.6e6,
            unit_bytes: 8192,
            feedback: "ERICA at the port to b".into(),
        });
        assert_eq!(limit(&f), LimitedBy::AbrRate);
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
        set(&mut f, 0.0);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn policing_comes_before_buffer_loss_and_needs_lost_pdus() {
        let mut f = plain();
        set(&mut f, 1e3);
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
        // UDP does not slow down for losses.
        f.tcp = false;
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn losses_only_at_the_senders_interface_queue_are_not_cell_loss() {
        // wan-contention's five pairs with 1 MB windows: the host hands over a
        // window's segments faster than the paced adapter sends them, and its
        // interface queue refuses some; no cell is lost in the network.
        let mut f = plain();
        set(&mut f, 15e6);
        f.pdus_dropped_at_adapter = [39, 0];
        f.data_pdus_sent = 2478;
        f.retransmitted_segments = 115;
        f.timeouts = 4;
        let w = f.window.as_mut().unwrap();
        (w.sndbuf, w.rcvbuf, w.peak_flight) = (1 << 20, 1 << 20, 600_000);
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::InterfaceQueue);
        assert_eq!(
            e.evidence,
            "39 PDUs refused by the sender's interface queue (no cell lost in the network); \
             it holds 50 PDUs (457400 B of 9148-byte segments); window 1048576 B (sndbuf 1048576, \
             rcvbuf 1048576), 600000 B in flight at most while the port to b (100.00 Mb/s of cells) \
             carries 100.00 Mb/s; 115 retransmitted, 4 timeouts; measured 15.00 Mb/s"
        );
        // Some cells lost in the network too (ACKs, or fewer data PDUs than the
        // queue refused): still the queue, and the evidence says both.
        f.cells_lost_in_buffers = 40;
        f.data_pdus_lost = 2;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::InterfaceQueue);
        assert!(
            e.evidence.starts_with(
                "39 PDUs refused by the sender's interface queue (besides, 40 cells lost in \
                 switch buffers: 2 of 2478 data PDUs); "
            ),
            "{}",
            e.evidence
        );
        // The network lost as many data PDUs or more: cell loss, naming both places.
        f.data_pdus_lost = 39;
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::CellLoss);
        assert!(
            e.evidence.starts_with(
                "39 PDUs refused by the sender's interface queue, 40 cells lost in switch buffers; "
            ),
            "{}",
            e.evidence
        );
        // The receiver's queue refusing ACKs too: said as the receiver's, and
        // not weighed against the network's losses of data.
        f.pdus_dropped_at_adapter = [39, 5];
        assert!(
            classify(&f).evidence.starts_with(
                "39 PDUs refused by the sender's interface queue and 5 ACKs by the receiver's, "
            ),
            "{}",
            classify(&f).evidence
        );
        f.data_pdus_lost = 2;
        f.pdus_dropped_at_adapter = [1, 40];
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::CellLoss);
        assert!(
            e.evidence.starts_with(
                "1 PDUs refused by the sender's interface queue and 40 ACKs by the receiver's, 40 cells lost"
            ),
            "{}",
            e.evidence
        );
        (f.cells_lost_in_buffers, f.data_pdus_lost) = (0, 0);
        f.pdus_dropped_at_adapter = [0, 40];
        assert!(
            classify(&f).evidence.starts_with(
                "40 ACKs refused by the receiver's interface queue (no cell lost in the network); "
            ),
            "{}",
            classify(&f).evidence
        );
        f.pdus_dropped_at_adapter = [39, 0];
        // Refusals TCP never had to recover from explain nothing.
        (f.cells_lost_in_buffers, f.data_pdus_lost) = (0, 0);
        (f.retransmitted_segments, f.timeouts) = (0, 0);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
        // UDP does not slow down for losses.
        (f.retransmitted_segments, f.tcp) = (1, false);
        assert_eq!(limit(&f), LimitedBy::Undetermined);
    }

    #[test]
    fn nothing_measured_is_still_an_answer() {
        let f = Facts {
            path: None,
            window: None,
            cpu_busy: None,
            throughput_bps: 0.0,
            delivered_bps: 0.0,
            sender_seconds: 0.0,
            ..plain()
        };
        let e = classify(&f);
        assert_eq!(e.limited_by, LimitedBy::Undetermined);
        assert_eq!(e.evidence, "no bound reached; delivered 0.00 Mb/s");
        let names: Vec<&str> = LimitedBy::ALL.iter().map(|l| l.as_str()).collect();
        assert_eq!(names.len(), 12);
        assert!(names.iter().all(|n| !n.is_empty()));
    }
}
