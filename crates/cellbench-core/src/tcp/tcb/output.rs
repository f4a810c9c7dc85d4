//! tcp_output (4.3BSD-Tahoe, 4.4BSD netinet/tcp_output.c): of the data the
//! buffer holds and the window allows, what to send now, and the segment that
//! carries it. The send test is Nagle's rule (RFC 896) and the sender's
//! silly-window avoidance in one; the window field applies the receiver's.
//! RFC 6675's pipe loop sends SACK holes during recovery.

use super::{State, Tcb, TCP_MAXWIN};
use crate::tcp::flavour::WindowUpdateRule;
use crate::tcp::segment::{
    Flags, SackBlocks, Segment, SendReason, Timestamps, MAX_SACK_BLOCKS, TCPOLEN_SACK_APPA,
    TCPOLEN_SACK_BLOCK,
};
use crate::tcp::seq::Seq;

impl Tcb {
    /// tcp_output. `hint` names the caller's reason for branches that are
    /// not otherwise distinguished (a control segment, a timer's ACK).
    pub fn output(&mut self, hint: SendReason, out: &mut Vec<Segment>) {
        // `idle` is decided once per call and holds for every segment it sends.
        let idle = self.snd_max == self.snd_una;
        if idle && self.policy.idle_restart && self.idle_time() >= self.t_rxtcur {
            // 4.3BSD-Reno: idle for an RTO, no ACKs will clock data out: slow start.
            self.snd_cwnd = self.initial_window();
        }
        // This call has just sent a full segment of new data: Linux's skb of
        // several segments passed tcp_snd_wnd_test (`Policy::window_tail`).
        let mut after_full = false;
        loop {
            let off = self.snd_nxt - self.snd_una;
            let mut win = self.snd_wnd.min(self.snd_cwnd) as i64;
            // RFC 6675 loss recovery: send while cwnd − pipe allows a segment,
            // lost holes first (NextSeg rule 1), then new data (rule 2).
            let mut sack_room = None;
            if self.in_recovery && self.sack_ok {
                let pipe = self
                    .scoreboard
                    .pipe(self.snd_una, self.snd_max, self.lost_bytes());
                let avail = self.snd_cwnd.saturating_sub(pipe);
                let room = if avail >= self.t_maxseg { avail } else { 0 };
                if room > 0 {
                    if let Some((seq, len)) = self.next_hole(false) {
                        self.send_hole(seq, len, out);
                        continue;
                    }
                }
                win = (self.snd_wnd as i64).min(off + room as i64);
                sack_room = Some(room);
            }
            if self.force {
                if win == 0 {
                    win = 1;
                } else {
                    self.stop_persist();
                    self.t_rxtshift = 0;
                }
            }
            let mut len = (self.snd.cc as i64).min(win) - off;
            // Linux (tcp_snd_wnd_test): a segment the window would cut waits
            // whole for more window; only a zero-window probe goes short, and
            // the window's sub-MSS rest after a full segment when Nagle allows
            // it (tcp_mss_split_point, `Policy::window_tail`).
            let mut window_tail = false;
            if !self.policy.split_at_window && !self.force {
                let queued = self.snd.cc as i64 - off;
                if len < queued.min(self.t_maxseg as i64) {
                    window_tail = len > 0
                        && self.policy.window_tail
                        && after_full
                        && (self.nodelay || !self.small_unacked());
                    if !window_tail {
                        len = len.min(0);
                    }
                }
            }
            let mut fin = self.state.sends_fin();
            let syn = matches!(self.state, State::SynSent | State::SynReceived)
                && self.snd_nxt == self.iss;
            if len < 0 {
                // Window shrank after we sent into it (or FIN sent, unacked).
                len = 0;
                if win == 0 {
                    self.stop_rexmt();
                    self.snd_nxt = self.snd_una;
                }
            }
            let mut sendalot = false;
            if len > self.t_maxseg as i64 {
                len = self.t_maxseg as i64;
                sendalot = true;
            }
            let len = len as u32;
            // FIN only with the last of the data.
            if (self.snd_nxt + len).lt(self.snd_una + self.snd.cc) {
                fin = false;
            }
            let rwin = self.rcv_window();

            let reason = if window_tail {
                Some(SendReason::WindowTail)
            } else {
                self.send_decision(len, off as u32, idle, rwin, fin, syn, hint)
            };
            // Data the window allows but the send rules hold back (Nagle, sender SWS).
            self.holding = reason.is_none() && len > 0;
            let Some(reason) = reason else {
                // RFC 6675 rule 3: no lost hole and no new data: resend a hole
                // below the highest SACKed byte anyway.
                if sack_room.is_some_and(|r| r > 0) {
                    if let Some((seq, len)) = self.next_hole(true) {
                        self.send_hole(seq, len, out);
                        continue;
                    }
                }
                // Nothing to send: arm the persist timer if data waits on a closed window.
                if self.snd.cc > 0 && !self.rexmt_running() && !self.persist_running() {
                    self.t_rxtshift = 0;
                    self.set_persist();
                }
                return;
            };
            after_full = len == self.t_maxseg && self.snd_nxt == self.snd_max;
            self.send_segment(len, fin, syn, rwin, reason, out);
            if !sendalot {
                return;
            }
        }
    }

    /// The send decision of tcp_output: which branch, if any, says "send".
    #[allow(clippy::too_many_arguments)]
    fn send_decision(
        &self,
        len: u32,
        off: u32,
        idle: bool,
        rwin: u32,
        fin: bool,
        syn: bool,
        hint: SendReason,
    ) -> Option<SendReason> {
        if len > 0 {
            if len == self.t_maxseg {
                return Some(SendReason::FullMss);
            }
            // Nagle: a short segment only when idle (or NODELAY) and it empties the buffer.
            if (idle || self.nodelay) && len + off >= self.snd.cc {
                return Some(if idle {
                    SendReason::Idle
                } else {
                    SendReason::NoDelay
                });
            }
            if self.force {
                return Some(SendReason::Persist);
            }
            // Sender silly-window avoidance: half the largest window the peer offered.
            if len >= self.max_sndwnd / 2 {
                return Some(SendReason::HalfWindow);
            }
            if self.snd_nxt.lt(self.snd_max) {
                return Some(SendReason::Retransmit);
            }
        }
        // Window update: the window known to the peer could grow enough.
        if rwin > 0 && self.state.have_rcvd_syn() {
            match self.policy.window_update {
                WindowUpdateRule::Tahoe => {
                    let adv = rwin as i64 - (self.rcv_adv - self.rcv_nxt);
                    if self.rcv.cc == 0 && adv >= 2 * self.t_maxseg as i64 {
                        return Some(SendReason::WindowUpdate);
                    }
                    if 100 * adv / self.rcv_clamp.max(1) as i64 >= 35 {
                        return Some(SendReason::WindowUpdate);
                    }
                }
                WindowUpdateRule::Bsd44 | WindowUpdateRule::TwoSegments => {
                    let adv = rwin.min(TCP_MAXWIN << self.rcv_scale) as i64
                        - (self.rcv_adv - self.rcv_nxt);
                    let half_buffer = self.policy.window_update == WindowUpdateRule::Bsd44
                        && 2 * adv >= self.rcv_clamp as i64;
                    if adv >= 2 * self.t_maxseg as i64 || half_buffer {
                        return Some(SendReason::WindowUpdate);
                    }
                }
            }
        }
        if self.ack_now {
            return Some(match hint {
                SendReason::DelayedAck => SendReason::DelayedAck,
                _ => SendReason::AckNow,
            });
        }
        if syn {
            return Some(SendReason::Control);
        }
        if fin && (!self.sent_fin || self.snd_nxt == self.snd_una) {
            return Some(if self.snd_nxt.lt(self.snd_max) {
                SendReason::Retransmit
            } else {
                SendReason::Control
            });
        }
        None
    }

    fn send_segment(
        &mut self,
        len: u32,
        fin: bool,
        syn: bool,
        rwin: u32,
        reason: SendReason,
        out: &mut Vec<Segment>,
    ) {
        // Receiver silly-window avoidance, and never shrink the offered window.
        let mut win = rwin;
        if win < self.rcv_clamp / 4 && win < self.t_maxseg {
            win = 0;
        }
        win = win.min(TCP_MAXWIN << self.rcv_scale);
        let offered = (self.rcv_adv - self.rcv_nxt).max(0) as u32;
        if self.state.have_rcvd_syn() && win < offered {
            win = offered;
        }
        // The field carries the window shifted by rcv_scale (0 on SYNs: the
        // scale takes effect after them); round up rather than shrink.
        let mut field = win >> self.rcv_scale;
        if self.state.have_rcvd_syn() && (field << self.rcv_scale) < offered {
            field += 1;
        }
        let advertised = field << self.rcv_scale;
        let ack = self.state != State::SynSent;
        let fin = fin && !syn;
        let retransmission = len > 0 && self.snd_nxt.lt(self.snd_max);
        // Whatever branch fired, a resend is reported as one.
        let reason = if retransmission {
            SendReason::Retransmit
        } else if syn {
            SendReason::Control
        } else {
            reason
        };
        // Options: on a SYN those we offer (an answering SYN only those the
        // peer offered too); afterwards timestamps and SACK blocks if agreed.
        let offering = self.state == State::SynSent;
        let (wscale, sack_permitted) = if syn {
            let ws = self.policy.window_scaling && (offering || self.requested_s_scale.is_some());
            (
                ws.then_some(self.request_r_scale),
                self.policy.sack && (offering || self.sack_ok),
            )
        } else {
            (None, false)
        };
        let ts = (if syn && offering {
            self.policy.timestamps
        } else {
            self.ts_ok
        })
        .then(|| Timestamps {
            val: self.ts_now(),
            ecr: self.ts_recent,
        });
        let sack = if self.sack_ok && !syn && !self.reass.is_empty() {
            let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
            // A data segment carries only the blocks that fit beside its data.
            let fit = if len == 0 {
                max
            } else {
                (self
                    .t_maxseg
                    .saturating_sub(len)
                    .saturating_sub(TCPOLEN_SACK_APPA)
                    / TCPOLEN_SACK_BLOCK) as usize
            };
            self.rcv_sack.blocks(max.min(fit))
        } else {
            SackBlocks::default()
        };
        let seg = Segment {
            seq: self.snd_nxt,
            ack: self.rcv_nxt,
            len,
            flags: Flags {
                syn,
                ack,
                fin,
                rst: false,
            },
            win: field,
            mss: syn.then_some(self.if_mss),
            wscale,
            sack_permitted,
            ts,
            sack,
            reason,
        };
        self.stats.segs_sent += 1;
        if len > 0 {
            self.stats.data_segs_sent += 1;
            self.stats.bytes_sent += len as u64;
            if retransmission {
                self.stats.segs_retransmitted += 1;
                self.stats.bytes_retransmitted += len as u64;
            }
        } else {
            self.stats.acks_sent += 1;
            match reason {
                SendReason::DelayedAck => self.stats.delayed_acks += 1,
                SendReason::WindowUpdate => self.stats.window_updates += 1,
                _ => {}
            }
        }

        // Advance snd_nxt/snd_max, time the segment, arm the retransmit timer.
        if !self.force || !self.persist_running() {
            let startseq = self.snd_nxt;
            if syn {
                self.snd_nxt = self.snd_nxt + 1;
            }
            if fin {
                self.snd_nxt = self.snd_nxt + 1;
                self.sent_fin = true;
            }
            self.snd_nxt = self.snd_nxt + len;
            if len > 0 && len < self.t_maxseg {
                // tcp_minshall_update
                self.snd_sml = self.snd_nxt;
            }
            if self.snd_nxt.gt(self.snd_max) {
                self.snd_max = self.snd_nxt;
                // Karn: time only new data, one segment at a time.
                if self.t_rtt == 0 {
                    self.t_rtt = 1;
                    self.t_rtseq = startseq;
                    self.t_rtt_start = self.now;
                }
            }
            // RFC 6298 5.1: data sent, timer not running: start it.
            if !self.rexmt_running() && self.snd_nxt != self.snd_una {
                self.start_rexmt();
                if self.persist_running() {
                    self.stop_persist();
                    self.t_rxtshift = 0;
                }
            }
        } else if (self.snd_nxt + len).gt(self.snd_max) {
            self.snd_max = self.snd_nxt + len;
        }

        // Remember the largest window advertised; any pending ACK has now gone.
        if advertised > 0 && (self.rcv_nxt + advertised).gt(self.rcv_adv) {
            self.rcv_adv = self.rcv_nxt + advertised;
        }
        if ack {
            self.last_ack_sent = self.rcv_nxt;
        }
        self.ack_now = false;
        self.del_ack = false;
        self.deadlines.delack = None;
        self.delack_full = false;
        out.push(seg);
    }

    /// The window the receive buffer allows now, up to the clamp (in whole
    /// segments for a flavour whose receiver rounds it without window scaling).
    fn rcv_window(&self) -> u32 {
        let w = self.rcv.space().min(self.rcv_clamp);
        if self.policy.whole_segment_window && self.rcv_scale == 0 {
            w / self.t_maxseg * self.t_maxseg
        } else {
            w
        }
    }

    /// Minshall's Nagle (tcp_minshall_check): a sub-MSS segment sent is not yet
    /// acknowledged.
    fn small_unacked(&self) -> bool {
        self.snd_sml.gt(self.snd_una) && self.snd_sml.le(self.snd_nxt)
    }

    /// Resend `len` bytes at `seq` without moving snd_nxt (a SACK hole).
    pub(super) fn send_hole(&mut self, seq: Seq, len: u32, out: &mut Vec<Segment>) {
        let onxt = self.snd_nxt;
        self.snd_nxt = seq;
        let rwin = self.rcv_window();
        self.send_segment(len, false, false, rwin, SendReason::Retransmit, out);
        self.snd_nxt = onxt.max(self.snd_nxt);
        self.scoreboard.high_rxt = self.scoreboard.high_rxt.max(seq + len);
    }

    /// NextSeg's retransmission candidates, clipped to the data in the buffer.
    fn next_hole(&self, rule3: bool) -> Option<(Seq, u32)> {
        let data_end = self.snd_una + self.snd.cc;
        let (seq, len) = self.scoreboard.next_seg(
            self.snd_una,
            self.snd_max,
            self.t_maxseg,
            self.lost_bytes(),
            rule3,
        )?;
        let len = len.min((data_end - seq).max(0) as u32);
        (len > 0).then_some((seq, len))
    }

    /// RFC 6675 IsLost by bytes: more than (DupThresh − 1) × MSS SACKed above.
    fn lost_bytes(&self) -> u32 {
        (self.policy.dupack_threshold.unwrap_or(3) - 1) * self.t_maxseg
    }
}
