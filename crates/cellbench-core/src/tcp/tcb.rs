//! The TCP control block and the BSD mechanisms over it: tcp_output's send
//! decision, tcp_input's ACK and data processing, the 500 ms slow timer (RTO,
//! persist) and the 200 ms fast timer (delayed ACK).
//!
//! Sans-IO: every entry point takes the socket's state and pushes the segments
//! it sends into `out`; the caller owns time, hosts and the network. Timers are
//! counted in slow-timer ticks as in 4.3BSD.

use super::flavour::{Flavour, Policy};
use super::segment::{Flags, Segment, SendReason};
use super::seq::Seq;

/// 4.3BSD tcp_timer.h: ticks of the 500 ms slow timer.
const TCPTV_MIN: u32 = 2; // 1 s minimum RTO
const TCPTV_REXMTMAX: u32 = 128; // 64 s
const TCPTV_SRTTDFLT: u32 = 6; // 3 s initial RTO basis
const TCPTV_PERSMIN: u32 = 10; // 5 s
const TCPTV_PERSMAX: u32 = 120; // 60 s
const TCPTV_MSL: u32 = 60; // 30 s
const TCP_MAXRXTSHIFT: u32 = 12;
const TCP_BACKOFF: [u32; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// Largest unscaled window (16-bit field).
pub const TCP_MAXWIN: u32 = 65_535;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    CloseWait,
    FinWait1,
    Closing,
    LastAck,
    FinWait2,
    TimeWait,
}

impl State {
    /// tcp_outflags: states whose output carries FIN.
    fn sends_fin(self) -> bool {
        matches!(self, State::FinWait1 | State::Closing | State::LastAck)
    }
    fn have_rcvd_syn(self) -> bool {
        !matches!(self, State::Closed | State::Listen | State::SynSent)
    }
}

/// A socket buffer: only its byte count and high-water mark matter here.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SockBuf {
    pub cc: u32,
    pub hiwat: u32,
}

impl SockBuf {
    pub fn new(hiwat: u32) -> SockBuf {
        SockBuf { cc: 0, hiwat }
    }
    /// sbspace().
    pub fn space(&self) -> u32 {
        self.hiwat.saturating_sub(self.cc)
    }
}

/// Timers in slow ticks; 0 = off.
#[derive(Copy, Clone, Debug, Default)]
struct Timers {
    rexmt: u32,
    persist: u32,
    msl2: u32,
}

/// What an input or timer did that the socket layer must hear about
/// (sorwakeup/sowwakeup and connection state changes).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wakeups {
    pub readable: bool,
    pub writable: bool,
    pub established: bool,
    pub peer_fin: bool,
    pub closed: bool,
}

/// Per-connection counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segs_sent: u64,
    pub data_segs_sent: u64,
    pub bytes_sent: u64,
    pub segs_retransmitted: u64,
    pub bytes_retransmitted: u64,
    pub acks_sent: u64,
    pub delayed_acks: u64,
    pub window_updates: u64,
    pub segs_received: u64,
    pub dup_acks: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub out_of_order: u64,
}

/// The TCP control block plus the socket buffers tcp_output reads.
#[derive(Clone, Debug)]
pub struct Tcb {
    pub flavour: Flavour,
    policy: Policy,
    pub state: State,
    pub t_maxseg: u32,
    /// MSS our interface allows (offered in our SYN).
    pub if_mss: u32,
    pub nodelay: bool,

    pub snd: SockBuf,
    pub rcv: SockBuf,

    pub iss: Seq,
    pub snd_una: Seq,
    pub snd_nxt: Seq,
    pub snd_max: Seq,
    pub snd_wnd: u32,
    pub snd_wl1: Seq,
    pub snd_wl2: Seq,
    pub max_sndwnd: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub t_dupacks: u32,

    pub irs: Seq,
    pub rcv_nxt: Seq,
    pub rcv_adv: Seq,
    /// Out-of-order segments held for reassembly: (seq, len), sorted, disjoint.
    reass: Vec<(Seq, u32)>,

    ack_now: bool,
    del_ack: bool,
    sent_fin: bool,
    /// Forced send by the persist timer (t_force).
    force: bool,
    /// The user closed: send FIN once the buffer drains.
    user_closed: bool,
    /// The last tcp_output held back data the window would have allowed.
    holding: bool,

    timers: Timers,
    t_rtt: u32,
    t_rtseq: Seq,
    t_srtt: i32,
    t_rttvar: i32,
    t_rxtshift: u32,
    t_rxtcur: u32,

    pub stats: TcpStats,
}

impl Tcb {
    pub fn new(flavour: Flavour, if_mss: u32, sndbuf: u32, rcvbuf: u32, iss: Seq) -> Tcb {
        let policy = flavour.policy();
        Tcb {
            flavour,
            policy,
            state: State::Closed,
            // Until the peer's MSS is known: tcp_mss's default.
            t_maxseg: 512.min(if_mss),
            if_mss,
            nodelay: false,
            snd: SockBuf::new(sndbuf),
            rcv: SockBuf::new(rcvbuf),
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            snd_wnd: 0,
            snd_wl1: Seq(0),
            snd_wl2: Seq(0),
            max_sndwnd: 0,
            snd_cwnd: TCP_MAXWIN,
            snd_ssthresh: TCP_MAXWIN,
            t_dupacks: 0,
            irs: Seq(0),
            rcv_nxt: Seq(0),
            rcv_adv: Seq(0),
            reass: Vec::new(),
            ack_now: false,
            del_ack: false,
            sent_fin: false,
            force: false,
            user_closed: false,
            holding: false,
            timers: Timers::default(),
            t_rtt: 0,
            t_rtseq: iss,
            t_srtt: 0,
            // tcp_newtcpcb: rttvar such that the first RTO is about 6 s.
            t_rttvar: (TCPTV_SRTTDFLT << 2) as i32,
            t_rxtshift: 0,
            t_rxtcur: ((TCPTV_SRTTDFLT << 2) >> 1).clamp(TCPTV_MIN, TCPTV_REXMTMAX),
            stats: TcpStats::default(),
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Bytes sent and not yet acknowledged.
    pub fn outstanding(&self) -> u32 {
        (self.snd_max - self.snd_una).max(0) as u32
    }

    /// A delayed ACK is pending (TF_DELACK).
    pub fn delack_pending(&self) -> bool {
        self.del_ack
    }

    /// The last tcp_output held back data the usable window allowed
    /// (a sub-MSS segment waiting for an ACK: Nagle or sender SWS avoidance).
    pub fn holding(&self) -> bool {
        self.holding
    }

    // ----- user requests -------------------------------------------------

    /// Active open: send SYN.
    pub fn connect(&mut self, out: &mut Vec<Segment>) {
        self.state = State::SynSent;
        self.output(SendReason::Control, out);
    }

    /// Passive open.
    pub fn listen(&mut self) {
        self.state = State::Listen;
    }

    /// PRU_SEND: the socket layer appended `n` bytes; run tcp_output.
    pub fn append(&mut self, n: u32, out: &mut Vec<Segment>) {
        debug_assert!(n <= self.snd.space());
        self.snd.cc += n;
        self.output(SendReason::Idle, out);
    }

    /// soreceive took `n` bytes; PRU_RCVD runs tcp_output (window update test).
    pub fn read(&mut self, n: u32, out: &mut Vec<Segment>) {
        debug_assert!(n <= self.rcv.cc);
        self.rcv.cc -= n;
        self.output(SendReason::WindowUpdate, out);
    }

    /// PRU_SHUTDOWN / close: tcp_usrclosed, then output (FIN when the data is out).
    pub fn close(&mut self, out: &mut Vec<Segment>) {
        self.user_closed = true;
        self.state = match self.state {
            State::Closed | State::Listen | State::SynSent => State::Closed,
            State::SynReceived | State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        };
        if self.state != State::Closed {
            self.output(SendReason::Control, out);
        }
    }

    // ----- tcp_output ----------------------------------------------------

    /// tcp_output. `hint` names the caller's reason for branches that are
    /// not otherwise distinguished (a control segment, a timer's ACK).
    pub fn output(&mut self, hint: SendReason, out: &mut Vec<Segment>) {
        // `idle` is decided once per call and holds for every segment it sends.
        let idle = self.snd_max == self.snd_una;
        loop {
            let off = self.snd_nxt - self.snd_una;
            let mut win = self.snd_wnd.min(self.snd_cwnd) as i64;
            if self.force {
                if win == 0 {
                    win = 1;
                } else {
                    self.timers.persist = 0;
                    self.t_rxtshift = 0;
                }
            }
            let mut len = (self.snd.cc as i64).min(win) - off;
            let mut fin = self.state.sends_fin();
            let syn = matches!(self.state, State::SynSent | State::SynReceived)
                && self.snd_nxt == self.iss;
            if len < 0 {
                // Window shrank after we sent into it (or FIN sent, unacked).
                len = 0;
                if win == 0 {
                    self.timers.rexmt = 0;
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
            let rwin = self.rcv.space();

            let reason = self.send_decision(len, off as u32, idle, rwin, fin, syn, hint);
            // Data the window allows but the send rules hold back (Nagle, sender SWS).
            self.holding = reason.is_none() && len > 0;
            let Some(reason) = reason else {
                // Nothing to send: arm the persist timer if data waits on a closed window.
                if self.snd.cc > 0 && self.timers.rexmt == 0 && self.timers.persist == 0 {
                    self.t_rxtshift = 0;
                    self.set_persist();
                }
                return;
            };
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
            let adv = rwin as i64 - (self.rcv_adv - self.rcv_nxt);
            if self.policy.window_update_when_empty
                && self.rcv.cc == 0
                && adv >= 2 * self.t_maxseg as i64
            {
                return Some(SendReason::WindowUpdate);
            }
            if 100 * adv / self.rcv.hiwat.max(1) as i64 >= 35 {
                return Some(SendReason::WindowUpdate);
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
        if win < self.rcv.hiwat / 4 && win < self.t_maxseg {
            win = 0;
        }
        win = win.min(TCP_MAXWIN);
        let offered = (self.rcv_adv - self.rcv_nxt).max(0) as u32;
        if self.state.have_rcvd_syn() && win < offered {
            win = offered;
        }
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
            win,
            mss: syn.then_some(self.if_mss),
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
        if !self.force || self.timers.persist == 0 {
            let startseq = self.snd_nxt;
            if syn {
                self.snd_nxt = self.snd_nxt + 1;
            }
            if fin {
                self.snd_nxt = self.snd_nxt + 1;
                self.sent_fin = true;
            }
            self.snd_nxt = self.snd_nxt + len;
            if self.snd_nxt.gt(self.snd_max) {
                self.snd_max = self.snd_nxt;
                // Karn: time only new data, one segment at a time.
                if self.t_rtt == 0 {
                    self.t_rtt = 1;
                    self.t_rtseq = startseq;
                }
            }
            if self.timers.rexmt == 0 && self.snd_nxt != self.snd_una {
                self.timers.rexmt = self.t_rxtcur;
                if self.timers.persist != 0 {
                    self.timers.persist = 0;
                    self.t_rxtshift = 0;
                }
            }
        } else if (self.snd_nxt + len).gt(self.snd_max) {
            self.snd_max = self.snd_nxt + len;
        }

        // Remember the largest window advertised; any pending ACK has now gone.
        if win > 0 && (self.rcv_nxt + win).gt(self.rcv_adv) {
            self.rcv_adv = self.rcv_nxt + win;
        }
        self.ack_now = false;
        self.del_ack = false;
        out.push(seg);
    }

    // ----- tcp_input -----------------------------------------------------

    /// tcp_input for one segment addressed to this connection.
    pub fn input(&mut self, seg: &Segment, out: &mut Vec<Segment>) -> Wakeups {
        let mut wake = Wakeups::default();
        self.stats.segs_received += 1;
        match self.state {
            State::Closed => return wake,
            State::Listen => {
                if !seg.flags.syn {
                    return wake;
                }
                self.irs = seg.seq;
                self.rcv_nxt = seg.seq + 1;
                self.rcv_adv = self.rcv_nxt;
                self.apply_mss(seg.mss);
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
                self.timers.rexmt = 0;
                self.apply_mss(seg.mss);
                self.snd_wnd = seg.win;
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = seg.ack;
                self.max_sndwnd = seg.win;
                if self.t_rtt != 0 {
                    self.xmit_timer(self.t_rtt);
                }
                self.state = State::Established;
                wake.established = true;
                wake.writable = true;
                self.ack_now = true;
                self.output(SendReason::Control, out);
                return wake;
            }
            _ => {}
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
                self.timers.rexmt = 0;
                if self.t_rtt != 0 {
                    self.xmit_timer(self.t_rtt);
                }
                self.snd_wnd = seg.win;
                self.snd_wl2 = seg.ack;
                self.max_sndwnd = self.max_sndwnd.max(seg.win);
            } else {
                return wake;
            }
        }

        let mut needoutput = false;
        self.process_ack(seg, &mut needoutput, &mut wake, out);

        // Window update (step 6): newer segment, or same with a newer ACK/larger window.
        if self.snd_wl1.lt(seg.seq)
            || (self.snd_wl1 == seg.seq
                && (self.snd_wl2.lt(seg.ack)
                    || (self.snd_wl2 == seg.ack && seg.win > self.snd_wnd)))
        {
            self.snd_wnd = seg.win;
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

    fn apply_mss(&mut self, offered: Option<u32>) {
        // tcp_mss: the smaller of the peer's offer and our interface's MSS.
        let mss = offered.unwrap_or(536).min(self.if_mss);
        self.t_maxseg = mss;
        // Slow start from one segment.
        self.snd_cwnd = mss;
    }

    fn process_ack(
        &mut self,
        seg: &Segment,
        needoutput: &mut bool,
        wake: &mut Wakeups,
        out: &mut Vec<Segment>,
    ) {
        if seg.ack.le(self.snd_una) {
            // Possibly a duplicate ACK.
            if seg.len == 0 && seg.win == self.snd_wnd && !seg.flags.fin {
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
        // Leaving fast recovery: deflate the window.
        if let Some(th) = self.policy.dupack_threshold {
            if self.t_dupacks >= th && self.snd_cwnd > self.snd_ssthresh {
                self.snd_cwnd = self.snd_ssthresh;
            }
        }
        self.t_dupacks = 0;
        let mut acked = (seg.ack - self.snd_una) as u32;

        if self.t_rtt != 0 && seg.ack.gt(self.t_rtseq) {
            self.xmit_timer(self.t_rtt);
        }
        if seg.ack == self.snd_max {
            self.timers.rexmt = 0;
            *needoutput = true;
        } else if self.timers.persist == 0 {
            self.timers.rexmt = self.t_rxtcur;
        }

        // Open the congestion window: slow start below ssthresh, linear above.
        let cw = self.snd_cwnd;
        let mut incr = self.t_maxseg;
        if cw > self.snd_ssthresh {
            incr = incr * incr / cw;
            if self.policy.ca_increment_eighth {
                incr += self.t_maxseg / 8;
            }
        }
        self.snd_cwnd = (cw + incr).min(TCP_MAXWIN);

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
        self.snd_una = seg.ack;
        if self.snd_nxt.lt(self.snd_una) {
            self.snd_nxt = self.snd_una;
        }

        match self.state {
            State::FinWait1 if fin_acked => self.state = State::FinWait2,
            State::Closing if fin_acked => {
                self.state = State::TimeWait;
                self.timers = Timers {
                    msl2: 2 * TCPTV_MSL,
                    ..Timers::default()
                };
                wake.closed = true;
            }
            State::LastAck if fin_acked => {
                self.state = State::Closed;
                wake.closed = true;
            }
            _ => {}
        }
    }

    fn duplicate_ack(&mut self, seg: &Segment, out: &mut Vec<Segment>) {
        let Some(threshold) = self.policy.dupack_threshold else {
            return;
        };
        if self.timers.rexmt == 0 || seg.ack != self.snd_una {
            self.t_dupacks = 0;
            return;
        }
        self.t_dupacks += 1;
        if self.t_dupacks == threshold {
            // Fast retransmit of the segment the receiver is missing.
            let onxt = self.snd_nxt;
            let win = (self.snd_wnd.min(self.snd_cwnd) / 2 / self.t_maxseg).max(2);
            self.snd_ssthresh = win * self.t_maxseg;
            self.timers.rexmt = 0;
            self.t_rtt = 0;
            self.snd_nxt = seg.ack;
            self.snd_cwnd = self.t_maxseg;
            self.stats.fast_retransmits += 1;
            self.output(SendReason::Retransmit, out);
            if self.policy.fast_recovery {
                self.snd_cwnd = self.snd_ssthresh + self.t_maxseg * self.t_dupacks;
            }
            if onxt.gt(self.snd_nxt) {
                self.snd_nxt = onxt;
            }
        } else if self.t_dupacks > threshold && self.policy.fast_recovery {
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
            // TCP_REASS fast path: in order, nothing queued: ACK is only delayed.
            if len > 0 {
                self.del_ack = true;
                self.rcv_nxt = self.rcv_nxt + len;
                self.rcv.cc += len;
                wake.readable = true;
            }
        } else if len > 0 {
            // Out of order (or filling a hole): queue, and ACK at once.
            self.stats.out_of_order += 1;
            self.reass_insert(seq, len);
            self.ack_now = true;
            let before = self.rcv.cc;
            self.reass_pull();
            if self.rcv.cc > before {
                wake.readable = true;
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
                    self.timers = Timers {
                        msl2: 2 * TCPTV_MSL,
                        ..Timers::default()
                    };
                    wake.closed = true;
                    State::TimeWait
                }
                s => s,
            };
        }
    }

    fn reass_insert(&mut self, seq: Seq, len: u32) {
        let pos = self
            .reass
            .iter()
            .position(|&(s, _)| seq.lt(s))
            .unwrap_or(self.reass.len());
        self.reass.insert(pos, (seq, len));
    }

    /// Move now-contiguous queued segments into the receive buffer.
    fn reass_pull(&mut self) {
        while let Some(&(s, l)) = self.reass.first() {
            if s.gt(self.rcv_nxt) {
                break;
            }
            self.reass.remove(0);
            let end = s + l;
            if end.gt(self.rcv_nxt) {
                let n = (end - self.rcv_nxt) as u32;
                self.rcv_nxt = end;
                self.rcv.cc += n;
            }
        }
    }

    // ----- timers --------------------------------------------------------

    /// tcp_fasttimo: the global 200 ms tick sends a pending delayed ACK.
    pub fn fast_timer(&mut self, out: &mut Vec<Segment>) {
        if self.del_ack {
            self.del_ack = false;
            self.ack_now = true;
            self.output(SendReason::DelayedAck, out);
        }
    }

    /// tcp_slowtimo: the 500 ms tick runs the retransmit, persist and 2MSL timers
    /// and counts the round trip being timed.
    pub fn slow_timer(&mut self, out: &mut Vec<Segment>) -> Wakeups {
        let mut wake = Wakeups::default();
        if self.t_rtt != 0 {
            self.t_rtt += 1;
        }
        if self.timers.rexmt != 0 {
            self.timers.rexmt -= 1;
            if self.timers.rexmt == 0 {
                self.retransmit_timeout(out);
            }
        }
        if self.timers.persist != 0 {
            self.timers.persist -= 1;
            if self.timers.persist == 0 {
                self.set_persist();
                self.force = true;
                self.output(SendReason::Persist, out);
                self.force = false;
            }
        }
        if self.timers.msl2 != 0 {
            self.timers.msl2 -= 1;
            if self.timers.msl2 == 0 {
                self.state = State::Closed;
                wake.closed = true;
            }
        }
        wake
    }

    fn retransmit_timeout(&mut self, out: &mut Vec<Segment>) {
        self.t_rxtshift += 1;
        if self.t_rxtshift > TCP_MAXRXTSHIFT {
            // tcp_drop: give up.
            self.state = State::Closed;
            return;
        }
        self.stats.timeouts += 1;
        let rexmt = self.rexmtval() * TCP_BACKOFF[self.t_rxtshift as usize];
        self.t_rxtcur = rexmt.clamp(TCPTV_MIN, TCPTV_REXMTMAX);
        self.timers.rexmt = self.t_rxtcur;
        self.snd_nxt = self.snd_una;
        // Karn: don't time a retransmitted segment.
        self.t_rtt = 0;
        // Slow-start from one segment; remember half the window as ssthresh.
        let win = (self.snd_wnd.min(self.snd_cwnd) / 2 / self.t_maxseg.max(1)).max(2);
        self.snd_cwnd = self.t_maxseg;
        self.snd_ssthresh = win * self.t_maxseg;
        self.t_dupacks = 0;
        self.output(SendReason::Retransmit, out);
    }

    /// Jacobson's estimator in ticks: srtt scaled by 8, rttvar by 4.
    fn xmit_timer(&mut self, rtt: u32) {
        let rtt = rtt as i32;
        if self.t_srtt != 0 {
            let mut delta = rtt - 1 - (self.t_srtt >> 3);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.t_rttvar >> 2;
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = rtt << 3;
            self.t_rttvar = rtt << 1;
        }
        self.t_rtt = 0;
        self.t_rxtshift = 0;
        self.t_rxtcur = self.rexmtval().clamp(TCPTV_MIN, TCPTV_REXMTMAX);
    }

    /// TCP_REXMTVAL: srtt + 4 × mean deviation, in ticks.
    fn rexmtval(&self) -> u32 {
        (((self.t_srtt >> 3) + self.t_rttvar).max(0) as u32).max(1)
    }

    /// tcp_setpersist: back off the persist interval with the RTO estimate.
    fn set_persist(&mut self) {
        let t = ((self.t_srtt >> 2) + self.t_rttvar) >> 1;
        let v = (t.max(1) as u32) * TCP_BACKOFF[self.t_rxtshift.min(12) as usize];
        self.timers.persist = v.clamp(TCPTV_PERSMIN, TCPTV_PERSMAX);
        if self.t_rxtshift < TCP_MAXRXTSHIFT {
            self.t_rxtshift += 1;
        }
    }

    /// Current retransmit timeout in slow ticks (for reports and tests).
    pub fn rto_ticks(&self) -> u32 {
        self.t_rxtcur
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const MSS: u32 = 9148;

    /// Two connected control blocks, SYN exchange done by hand.
    fn pair(sndbuf: u32, rcvbuf: u32) -> (Tcb, Tcb) {
        let mut a = Tcb::new(Flavour::Sunos411, MSS, sndbuf, rcvbuf, Seq(1000));
        let mut b = Tcb::new(Flavour::Sunos411, MSS, sndbuf, rcvbuf, Seq(5000));
        let mut out = Vec::new();
        b.listen();
        a.connect(&mut out);
        let syn = out.pop().unwrap();
        assert!(syn.flags.syn && syn.mss == Some(MSS));
        b.input(&syn, &mut out);
        let synack = out.pop().unwrap();
        assert!(synack.flags.syn && synack.flags.ack);
        let w = a.input(&synack, &mut out);
        assert!(w.established);
        let ack = out.pop().unwrap();
        assert!(b.input(&ack, &mut out).established);
        assert!(out.is_empty());
        (a, b)
    }

    #[test]
    fn handshake_negotiates_mss_and_slow_start() {
        let (a, b) = pair(16384, 24576);
        assert_eq!(a.t_maxseg, MSS);
        assert_eq!(b.t_maxseg, MSS);
        assert_eq!(a.snd_cwnd, MSS);
        assert_eq!(a.max_sndwnd, 24576);
    }

    #[test]
    fn idle_connection_sends_short_segment_then_nagle_holds() {
        let (mut a, _b) = pair(16384, 24576);
        a.snd_cwnd = TCP_MAXWIN; // look at the send rule alone
        let mut out = Vec::new();
        a.append(4096, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].len, out[0].reason), (4096, SendReason::Idle));
        out.clear();
        // Not idle now: 4096 < max_sndwnd/2 = 12288, so the next 4 KB waits.
        a.append(4096, &mut out);
        assert!(out.is_empty());
        a.append(4096, &mut out);
        assert!(out.is_empty());
        // 12288 >= 12288: half-window fires, and sends an MSS first.
        a.append(4096, &mut out);
        let lens: Vec<(u32, SendReason)> = out.iter().map(|s| (s.len, s.reason)).collect();
        assert_eq!(lens, vec![(MSS, SendReason::FullMss)]);
    }

    #[test]
    fn in_order_data_only_delays_the_ack_until_the_fast_timer() {
        let (mut a, mut b) = pair(52428, 52428);
        let mut out = Vec::new();
        a.append(4096, &mut out);
        let seg = out.pop().unwrap();
        b.input(&seg, &mut out);
        assert!(out.is_empty() && b.delack_pending());
        b.fast_timer(&mut out);
        let ack = out.pop().unwrap();
        assert_eq!(
            (ack.reason, ack.ack),
            (SendReason::DelayedAck, seg.seq + 4096)
        );
    }

    #[test]
    fn reading_reopens_window_by_35_percent_and_acks() {
        let (mut a, mut b) = pair(52428, 24576);
        a.snd_cwnd = TCP_MAXWIN;
        let mut out = Vec::new();
        a.append(MSS, &mut out);
        let seg = out.pop().unwrap();
        b.input(&seg, &mut out);
        assert!(out.is_empty());
        // 9148/24576 = 37% >= 35%: the read triggers a window update.
        b.read(MSS, &mut out);
        assert_eq!(out.pop().unwrap().reason, SendReason::WindowUpdate);
    }

    #[test]
    fn out_of_order_is_acked_at_once_and_reassembled() {
        let (mut a, mut b) = pair(52428, 52428);
        a.snd_cwnd = TCP_MAXWIN;
        let mut out = Vec::new();
        a.append(2 * MSS, &mut out);
        assert_eq!(out.len(), 2);
        let second = out.pop().unwrap();
        let first = out.pop().unwrap();
        b.input(&second, &mut out);
        assert_eq!(out.pop().unwrap().ack, first.seq);
        let w = b.input(&first, &mut out);
        assert!(w.readable);
        assert_eq!(b.rcv.cc, 2 * MSS);
    }

    #[test]
    fn timeout_retransmits_from_snd_una_with_one_segment_window() {
        let (mut a, _b) = pair(52428, 52428);
        a.snd_cwnd = TCP_MAXWIN;
        let mut out = Vec::new();
        a.append(2 * MSS, &mut out);
        out.clear();
        let mut ticks = 0;
        while out.is_empty() {
            a.slow_timer(&mut out);
            ticks += 1;
            assert!(ticks < 100);
        }
        assert_eq!(out[0].seq, a.snd_una);
        assert_eq!(out[0].reason, SendReason::Retransmit);
        assert_eq!(a.snd_cwnd, MSS);
        assert_eq!(a.stats.timeouts, 1);
    }
}
