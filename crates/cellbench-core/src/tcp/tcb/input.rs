//! tcp_input (4.3BSD-Tahoe, 4.4BSD netinet/tcp_input.c) for one segment: the
//! handshake and the SYN's options (tcp_mss), ACK processing with the
//! congestion window, the window update, duplicate ACKs with fast retransmit and
//! each flavour's recovery (Reno, NewReno RFC 6582, SACK RFC 6675), and the
//! data, delayed or acknowledged at once.

use super::{State, Tcb, Wakeups, TCP_MAXWIN};
use crate::tcp::flavour::{AckPolicy, Recovery, TimerModel};
use crate::tcp::segment::{Segment, SendReason, TCPOLEN_TSTAMP_APPA, TCP_MAX_WINSHIFT};

impl Tcb {
    /// tcp_input for one segment addressed to this connection.
    pub fn input(&mut self, seg: &Segment, out: &mut Vec<Segment>) -> Wakeups {
        let mut wake = Wakeups::default();
        self.stats.segs_received += 1;
        self.t_idle = 0;
        self.t_rcvtime = self.now;
        match self.state {
            State::Closed => return wake,
            State::Listen => {
                if !seg.flags.syn {
                    return wake;
                }
                self.irs = seg.seq;
                self.rcv_nxt = seg.seq + 1;
                self.rcv_adv = self.rcv_nxt;
                self.syn_options(seg);
                self.apply_mss(seg.mss);
                // A SYN's window is never scaled.
                self.snd_wnd = seg.win;
                self.snd_wl1 = seg.seq;
                self.max_sndwnd = seg.win;
                self.state = State::SynReceived;
                self.ack_now = true;
                self.output(SendReason::Control, out);
                return wake;
            }
            State::SynSent => {
                if !(seg.flags.syn && seg.flags.ack && seg.ack == self.iss + 1) {
                    return wake;
                }
                self.irs = seg.seq;
                self.rcv_nxt = seg.seq + 1;
                self.rcv_adv = self.rcv_nxt;
                self.snd_una = seg.ack;
                if self.snd_nxt.lt(self.snd_una) {
                    self.snd_nxt = self.snd_una;
                }
                self.stop_rexmt();
                self.syn_options(seg);
                self.start_scaling();
                self.apply_mss(seg.mss);
                self.snd_wnd = seg.win;
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = seg.ack;
                self.max_sndwnd = seg.win;
                self.rtt_sample(seg);
                self.state = State::Established;
                wake.established = true;
                wake.writable = true;
                self.ack_now = true;
                self.output(SendReason::Control, out);
                return wake;
            }
            _ => {}
        }

        // RFC 7323 4.3: echo the timestamp of the segment our last ACK asked for.
        if self.ts_ok {
            if let Some(ts) = seg.ts {
                if seg.seq.le(self.last_ack_sent) && ts.val.wrapping_sub(self.ts_recent) as i32 >= 0
                {
                    self.ts_recent = ts.val;
                }
            }
        }

        // Acceptability: data entirely before rcv_nxt is a duplicate; re-ACK it.
        if seg.len > 0 && (seg.seq + seg.len).le(self.rcv_nxt) {
            self.ack_now = true;
        }

        if seg.flags.syn {
            // A retransmitted SYN/SYN-ACK: our ACK was lost; answer it.
            self.ack_now = true;
            self.output(SendReason::AckNow, out);
            return wake;
        }
        if !seg.flags.ack {
            return wake;
        }

        if self.state == State::SynReceived {
            if seg.ack.gt(self.snd_una) && seg.ack.le(self.snd_max) {
                self.state = State::Established;
                wake.established = true;
                wake.writable = true;
                self.snd_una = self.snd_una + 1; // our SYN
                self.snd_wl1 = seg.seq.max(self.snd_wl1);
                self.stop_rexmt();
                self.rtt_sample(seg);
                // Both SYNs are through: windows are scaled from now on.
                self.start_scaling();
                let tiwin = seg.win << self.snd_scale;
                self.snd_wnd = tiwin;
                self.snd_wl2 = seg.ack;
                self.max_sndwnd = self.max_sndwnd.max(tiwin);
            } else {
                return wake;
            }
        }

        // The peer's window in bytes.
        let tiwin = seg.win << self.snd_scale;
        let mut needoutput = false;
        self.process_ack(seg, tiwin, &mut needoutput, &mut wake, out);

        // Window update (step 6): newer segment, or same with a newer ACK/larger window.
        if self.snd_wl1.lt(seg.seq)
            || (self.snd_wl1 == seg.seq
                && (self.snd_wl2.lt(seg.ack) || (self.snd_wl2 == seg.ack && tiwin > self.snd_wnd)))
        {
            self.snd_wnd = tiwin;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = seg.ack;
            if self.snd_wnd > self.max_sndwnd {
                self.max_sndwnd = self.snd_wnd;
            }
            needoutput = true;
        }

        // Data and FIN.
        if (seg.len > 0 || seg.flags.fin) && !matches!(self.state, State::TimeWait) {
            self.process_data(seg, &mut wake);
        }

        if needoutput || self.ack_now {
            self.output(SendReason::AckNow, out);
        }
        wake
    }

    /// The options of the peer's SYN: what both ends agreed on.
    fn syn_options(&mut self, seg: &Segment) {
        if self.policy.window_scaling {
            self.requested_s_scale = seg.wscale.map(|s| s.min(TCP_MAX_WINSHIFT));
        }
        self.sack_ok = self.policy.sack && seg.sack_permitted;
        self.ts_ok = self.policy.timestamps && seg.ts.is_some();
        if let (true, Some(ts)) = (self.ts_ok, seg.ts) {
            self.ts_recent = ts.val;
        }
    }

    /// RFC 7323 2.2: scaling only when both SYNs carried the option.
    fn start_scaling(&mut self) {
        if let Some(s) = self.requested_s_scale {
            self.snd_scale = s;
            self.rcv_scale = self.request_r_scale;
        }
    }

    fn apply_mss(&mut self, offered: Option<u32>) {
        // tcp_mss: the smaller of the peer's offer and our interface's MSS
        // (never under 32 bytes: 4.4BSD's sanity bound), less the timestamp
        // option every segment will carry.
        let mut mss = offered.unwrap_or(536).min(self.if_mss).max(32);
        let option_fits = mss + TCPOLEN_TSTAMP_APPA <= self.mtu_mss;
        if self.ts_ok && !(self.policy.tstamp_within_mtu && option_fits) {
            mss -= TCPOLEN_TSTAMP_APPA;
        }
        self.t_maxseg = mss;
        // Slow start from the initial window.
        self.snd_cwnd = self.initial_window();
    }

    pub(super) fn initial_window(&self) -> u32 {
        let mss = self.t_maxseg;
        if self.policy.initial_window_rfc6928 {
            (10 * mss).min((2 * mss).max(14_600))
        } else {
            mss
        }
    }

    fn process_ack(
        &mut self,
        seg: &Segment,
        tiwin: u32,
        needoutput: &mut bool,
        wake: &mut Wakeups,
        out: &mut Vec<Segment>,
    ) {
        if self.sack_ok && !seg.sack.is_empty() {
            self.scoreboard
                .update(&seg.sack, self.snd_una, self.snd_max);
        }
        if seg.ack.le(self.snd_una) {
            // Possibly a duplicate ACK.
            if seg.len == 0 && tiwin == self.snd_wnd && !seg.flags.fin {
                self.stats.dup_acks += 1;
                self.duplicate_ack(seg, out);
            } else {
                self.t_dupacks = 0;
            }
            return;
        }
        if seg.ack.gt(self.snd_max) {
            // ACK for data we never sent: ACK back and ignore.
            self.ack_now = true;
            return;
        }
        if self.policy.recovery == Recovery::Reno {
            // Leaving Reno fast recovery: deflate the window, on any new ACK (a
            // partial one too). 4.3BSD-Reno (tcp_input.c 7.23-7.25, 1990) and 4.4BSD
            // test t_dupacks > tcprexmtthresh, so after exactly the threshold of
            // duplicates the window stays inflated by it.
            if let Some(th) = self.policy.dupack_threshold {
                if self.t_dupacks > th && self.snd_cwnd > self.snd_ssthresh {
                    self.snd_cwnd = self.snd_ssthresh;
                }
            }
        }
        self.t_dupacks = 0;
        let mut acked = (seg.ack - self.snd_una) as u32;

        self.rtt_sample(seg);
        // RFC 6298 5.2, 5.3: all acknowledged: stop the timer; else restart it.
        if seg.ack == self.snd_max {
            self.stop_rexmt();
            *needoutput = true;
        } else if !self.persist_running() {
            self.start_rexmt();
        }

        // Open the congestion window: slow start below ssthresh, linear above
        // (not during NewReno/SACK recovery, which sets it on its own).
        if !self.in_recovery {
            let cw = self.snd_cwnd;
            let mut incr = self.t_maxseg;
            if cw > self.snd_ssthresh {
                incr = incr * incr / cw;
                if self.policy.ca_increment_eighth {
                    incr += self.t_maxseg / 8;
                }
            }
            self.snd_cwnd = (cw + incr).min(TCP_MAXWIN << self.snd_scale);
        }

        let fin_acked;
        if acked > self.snd.cc {
            // Our FIN is acknowledged too.
            self.snd_wnd = self.snd_wnd.saturating_sub(self.snd.cc);
            acked = self.snd.cc;
            fin_acked = self.sent_fin;
        } else {
            self.snd_wnd = self.snd_wnd.saturating_sub(acked);
            fin_acked = false;
        }
        self.snd.cc -= acked;
        if acked > 0 {
            wake.writable = true;
        }
        let newly_acked = (seg.ack - self.snd_una) as u32;
        self.snd_una = seg.ack;
        if self.snd_nxt.lt(self.snd_una) {
            self.snd_nxt = self.snd_una;
        }
        if self.sack_ok {
            self.scoreboard.advance(self.snd_una);
        }
        if self.in_recovery {
            self.recovery_ack(newly_acked, out);
        }

        match self.state {
            State::FinWait1 if fin_acked => self.state = State::FinWait2,
            State::Closing if fin_acked => {
                self.state = State::TimeWait;
                self.start_2msl();
                wake.closed = true;
            }
            State::LastAck if fin_acked => {
                self.state = State::Closed;
                wake.closed = true;
            }
            _ => {}
        }
    }

    /// A new ACK during NewReno/SACK recovery (snd_una already advanced).
    fn recovery_ack(&mut self, acked: u32, out: &mut Vec<Segment>) {
        if self.snd_una.lt(self.recover) {
            // Partial ACK: the next hole is lost too. With SACK the pipe
            // loop of tcp_output resends it; NewReno resends it now, deflates
            // the window by what was acked and adds back one segment (RFC 6582 3.2).
            if !self.sack_ok {
                self.retransmit_one(out);
                self.snd_cwnd = self.snd_cwnd.saturating_sub(acked);
                if acked >= self.t_maxseg {
                    self.snd_cwnd += self.t_maxseg;
                }
            }
            return;
        }
        // Full ACK: recovery is over; cwnd to min(ssthresh, FlightSize + MSS).
        self.in_recovery = false;
        let flight = self.outstanding();
        self.snd_cwnd = self
            .snd_ssthresh
            .min(flight.max(self.t_maxseg) + self.t_maxseg);
    }

    /// Resend the segment at snd_una alone (BSD's kludge: snd_nxt pulled back,
    /// cwnd one segment for one tcp_output call).
    fn retransmit_one(&mut self, out: &mut Vec<Segment>) {
        let onxt = self.snd_nxt;
        let ocwnd = self.snd_cwnd;
        self.stop_rexmt();
        self.t_rtt = 0;
        self.snd_nxt = self.snd_una;
        self.snd_cwnd = self.t_maxseg;
        self.output(SendReason::Retransmit, out);
        self.snd_cwnd = ocwnd;
        if onxt.gt(self.snd_nxt) {
            self.snd_nxt = onxt;
        }
    }

    /// ssthresh after a loss.
    pub(super) fn loss_ssthresh(&self) -> u32 {
        let mss = self.t_maxseg.max(1);
        if self.policy.ssthresh_from_flight {
            // RFC 5681 (4): max(FlightSize / 2, 2 × SMSS).
            (self.outstanding() / 2).max(2 * mss)
        } else {
            // 4.3BSD: half the window, in whole segments, at least two.
            let win = (self.snd_wnd.min(self.snd_cwnd) / 2 / mss).max(2);
            win * mss
        }
    }

    fn duplicate_ack(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        let Some(threshold) = self.policy.dupack_threshold else {
            return;
        };
        if !self.rexmt_running() || seg.ack != self.snd_una {
            self.t_dupacks = 0;
            return;
        }
        if self.in_recovery {
            // NewReno: each duplicate means a segment left the network. With
            // SACK the scoreboard has already shrunk the pipe.
            if !self.sack_ok {
                self.snd_cwnd += self.t_maxseg;
            }
            self.output(SendReason::FullMss, out);
            return;
        }
        self.t_dupacks += 1;
        if self.t_dupacks == threshold {
            if self.policy.recovery == Recovery::NewReno {
                // RFC 6582 3.2 (2): not for losses from before the last
                // recovery or timeout.
                if !seg.ack.gt(self.recover) {
                    return;
                }
                self.stats.fast_retransmits += 1;
                self.snd_ssthresh = self.loss_ssthresh();
                self.recover = self.snd_max;
                self.in_recovery = true;
                if self.sack_ok {
                    // RFC 6675 (4): resend the first segment, then let pipe rule.
                    self.snd_cwnd = self.snd_ssthresh;
                    self.scoreboard.high_rxt = self.snd_una;
                    self.stop_rexmt();
                    self.t_rtt = 0;
                    let len = self.t_maxseg.min(self.snd.cc);
                    if len > 0 {
                        self.send_hole(self.snd_una, len, out);
                    }
                    self.output(SendReason::FullMss, out);
                } else {
                    self.retransmit_one(out);
                    self.snd_cwnd = self.snd_ssthresh + threshold * self.t_maxseg;
                }
                return;
            }
            // Fast retransmit of the segment the receiver is missing: 4.3BSD-Tahoe's
            // (tcp_input.c 7.11, 1987, cwnd one segment after it), with Reno's fast
            // recovery (7.23, 1990) inflating cwnd by the duplicates.
            self.snd_ssthresh = self.loss_ssthresh();
            self.stats.fast_retransmits += 1;
            self.retransmit_one(out);
            self.snd_cwnd = self.t_maxseg;
            if self.policy.recovery == Recovery::Reno {
                self.snd_cwnd = self.snd_ssthresh + self.t_maxseg * self.t_dupacks;
            }
        } else if self.t_dupacks > threshold && self.policy.recovery == Recovery::Reno {
            self.snd_cwnd += self.t_maxseg;
            self.output(SendReason::FullMss, out);
        }
    }

    fn process_data(&mut self, seg: &Segment, wake: &mut Wakeups) {
        // Trim what we already have; what lies beyond the window is dropped.
        let mut seq = seg.seq;
        let mut len = seg.len;
        let mut fin = seg.flags.fin;
        if seq.lt(self.rcv_nxt) {
            let dup = (self.rcv_nxt - seq) as u32;
            if dup >= len {
                if !(fin && seq + len == self.rcv_nxt) {
                    // Entirely old: ACK it at once.
                    self.ack_now = true;
                    return;
                }
                len = 0;
            } else {
                len -= dup;
            }
            seq = self.rcv_nxt;
        }
        let rwnd = self
            .rcv
            .space()
            .max((self.rcv_adv - self.rcv_nxt).max(0) as u32);
        let limit = self.rcv_nxt + rwnd;
        if (seq + len).gt(limit) {
            let over = ((seq + len) - limit) as u32;
            len = len.saturating_sub(over);
            fin = false;
            self.ack_now = true;
        }

        if seq == self.rcv_nxt && self.reass.is_empty() {
            // TCP_REASS fast path: in order, nothing queued: the ACK is
            // delayed, unless the flavour ACKs every second segment.
            if len > 0 {
                let second = match self.policy.ack {
                    AckPolicy::Delayed => false,
                    AckPolicy::SecondFullSegment => self.del_ack && self.delack_full,
                    AckPolicy::SecondSegment => self.del_ack,
                };
                if second {
                    self.ack_now = true;
                } else {
                    if !self.del_ack {
                        // The first segment left unacknowledged starts the delay.
                        if self.policy.timers == TimerModel::PerConnection {
                            self.deadlines.delack = Some(self.now + self.policy.delack_interval);
                        }
                        self.del_ack = true;
                    }
                    self.delack_full |= len >= self.t_maxseg;
                }
                self.rcv_nxt = self.rcv_nxt + len;
                self.rcv.cc += len;
                wake.readable = true;
            }
        } else if len > 0 {
            // Out of order (or filling a hole): queue, and ACK at once.
            self.stats.out_of_order += 1;
            self.reass_insert(seq, len);
            if self.sack_ok {
                let run = self.reass_run(seq);
                self.rcv_sack.record(run);
            }
            self.ack_now = true;
            let before = self.rcv.cc;
            self.reass_pull();
            if self.rcv.cc > before {
                wake.readable = true;
            }
            if self.sack_ok {
                self.rcv_sack.prune(self.rcv_nxt);
            }
            // A FIN beyond a hole is not yet in order: the peer will resend it.
            if fin && (seq + len) != self.rcv_nxt {
                fin = false;
            }
        }

        if fin && seq + len == self.rcv_nxt {
            self.rcv_nxt = self.rcv_nxt + 1;
            self.ack_now = true;
            wake.peer_fin = true;
            wake.readable = true;
            self.state = match self.state {
                State::SynReceived | State::Established => State::CloseWait,
                State::FinWait1 => State::Closing,
                State::FinWait2 => {
                    self.start_2msl();
                    wake.closed = true;
                    State::TimeWait
                }
                s => s,
            };
        }
    }
}
