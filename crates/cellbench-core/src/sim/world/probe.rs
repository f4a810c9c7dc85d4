//! What a transfer's run is watched for while it runs, never per cell: the
//! facts `sim::explain` needs (round trip, flight, largest segment and its
//! buffers, the CPUs over ttcp -t's interval, the closed window's cycles) and
//! the cwnd series. Apart from the loop: it watches and never steers.

use super::apps::App;
use super::{CwndSample, World};
use crate::sim::net::HostId;
use crate::tcp::{Segment, Seq, State};
use crate::time::SimTime;

/// A transfer's probe while it runs (see [`ProbeResult`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Probe {
    /// The sender's and the receiver's host.
    pub(super) hosts: [HostId; 2],
    /// The end of the data segment being timed, when it left the host, its length.
    pub(super) timed: Option<(Seq, SimTime, u32)>,
    /// The highest sequence number sent so far (None before the first data).
    pub(super) sent_hi: Option<Seq>,
    /// The shortest round trip of a segment of `min_rtt_len` bytes, the largest timed.
    pub(super) min_rtt: Option<SimTime>,
    pub(super) min_rtt_len: u32,
    pub(super) peak_flight: u32,
    pub(super) largest_segment: Option<(u32, u32)>,
    pub(super) largest_segment_buffers: Vec<u32>,
    /// Both CPUs' busy time at the start of ttcp -t's interval.
    pub(super) cpu_at_start: Option<[SimTime; 2]>,
    pub(super) cpu_busy: Option<[f64; 2]>,
    /// Since when the sender holds back data (Nagle, sender SWS avoidance), and the total.
    pub(super) hold_since: Option<SimTime>,
    pub(super) hold_total: SimTime,
    /// When a new segment left with the window closed behind it, and the bytes
    /// then in flight; the closed-window cycles so far (see `ProbeResult::window_cycles`).
    pub(super) closed: Option<(SimTime, u32)>,
    pub(super) window_cycles: (u32, u64, SimTime),
    /// Since when the circular wait has had the sender's window closed, and the total.
    pub(super) window_wait_since: Option<SimTime>,
    pub(super) window_wait_total: SimTime,
}

impl World {
    /// A data segment left the sender's host at `at`: time it if it is new
    /// and none is being timed (one at a time, as BSD does); forget the timing
    /// if it resends what is timed (Karn); note the window in flight.
    pub(super) fn probe_segment(&mut self, ep: usize, seg: &Segment, ip_len: u32, at: SimTime) {
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
    pub(super) fn probe_ack(&mut self, transfer: usize, ack: Seq) {
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

    /// After a step of the sender's application: note both CPUs' busy time when
    /// ttcp -t's interval opens (the first write) and, when it `done`, the
    /// fraction of the interval each was busy.
    pub(super) fn probe_interval(&mut self, ep: usize, done: bool) {
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

    /// Series: after a piece of work, a sample of a TCP sender's congestion
    /// state if it changed. The work's state changes happen when it starts
    /// (see the module's head), so the sample carries that time.
    pub(super) fn sample_cwnd(&mut self, ep: usize) {
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
}
