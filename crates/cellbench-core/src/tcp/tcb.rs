//! The TCP control block and the BSD mechanisms over it: tcp_output's send
//! decision, tcp_input's ACK and data processing, the 500 ms slow timer (RTO,
//! persist) and the fast timer (delayed ACK). The flavours' additions ride on
//! the same code: fast retransmit and Reno/NewReno recovery, SACK (RFC 2018,
//! RFC 6675), window scaling and timestamps (RFC 7323), ACK every second segment.
//!
//! Sans-IO: every entry point takes the socket's state and pushes the segments
//! it sends into `out`; the caller owns time, hosts and the network, and tells
//! the time with [`Tcb::set_now`]. The BSD flavours count their timers in the
//! host's slow ticks ([`Tcb::slow_timer`], [`Tcb::fast_timer`]); `modern` keeps
//! deadlines of its own ([`Tcb::next_timer`], [`Tcb::expire_timers`]).

use super::flavour::{
    AckPolicy, Flavour, Policy, Recovery, TimerModel, WindowUpdateRule, SLOW_TICK,
};
use super::sack::{ReceivedBlocks, Scoreboard};
use super::segment::{
    Flags, SackBlocks, Segment, SendReason, Timestamps, MAX_SACK_BLOCKS, TCPOLEN_SACK_APPA,
    TCPOLEN_SACK_BLOCK, TCPOLEN_TSTAMP_APPA, TCP_MAX_WINSHIFT,
};
use super::seq::Seq;
use crate::time::SimTime;

/// 4.3BSD tcp_timer.h: ticks of the 500 ms slow timer.
const TCPTV_MIN: u32 = 2; // 1 s minimum RTO
const TCPTV_REXMTMAX: u32 = 128; // 64 s
const TCPTV_SRTTDFLT: u32 = 6; // 3 s initial RTO basis
const TCPTV_PERSMIN: u32 = 10; // 5 s
const TCPTV_PERSMAX: u32 = 120; // 60 s
const TCPTV_MSL: u32 = 60; // 30 s
const TCP_MAXRXTSHIFT: u32 = 12;
const TCP_BACKOFF: [u32; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// Linux (include/net/tcp.h), for `TimerModel::PerConnection`: the RTO's
/// upper bound (its floor is the flavour's `rto_min`), the RTO before any RTT
/// sample (RFC 6298 2.1), TIME_WAIT's length.
const TCP_RTO_MAX: SimTime = SimTime::from_secs(120);
const TCP_TIMEOUT_INIT: SimTime = SimTime::from_secs(1);
const TCP_TIMEWAIT_LEN: SimTime = SimTime::from_secs(60);
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

/// Timers in slow ticks; 0 = off (`TimerModel::SlowTick`).
#[derive(Copy, Clone, Debug, Default)]
struct Timers {
    rexmt: u32,
    persist: u32,
    msl2: u32,
}

/// When each timer falls due; None = off (`TimerModel::PerConnection`).
#[derive(Copy, Clone, Debug, Default)]
struct Deadlines {
    rexmt: Option<SimTime>,
    persist: Option<SimTime>,
    msl2: Option<SimTime>,
    delack: Option<SimTime>,
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
    /// The most consecutive retransmit timeouts of one segment (t_rxtshift
    /// at its highest): the backoff multiplier reached is 2^this.
    pub max_backoff: u32,
    /// Time from each retransmit timer's last start to its firing, summed:
    /// the sender's wait on a timer that expired, with nothing acknowledged.
    pub rexmt_wait: SimTime,
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
    /// The interface MTU less 40, before any rounding.
    mtu_mss: u32,
    pub nodelay: bool,

    pub snd: SockBuf,
    pub rcv: SockBuf,
    /// The largest window this end advertises: the receive buffer asked for
    /// (smaller than `rcv.hiwat` when the kernel doubles the buffer).
    rcv_clamp: u32,

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
    /// Out-of-order segments held for reassembly: (seq, len), sorted.
    reass: Vec<(Seq, u32)>,

    /// RFC 7323 window shifts in effect: the peer's windows are shifted left
    /// by `snd_scale`, ours right by `rcv_scale` (0 unless both SYNs offered it).
    pub snd_scale: u8,
    pub rcv_scale: u8,
    /// The shift our SYN offers (the least that covers the receive buffer).
    request_r_scale: u8,
    /// The shift the peer's SYN offered (kept only when we offer scaling too).
    requested_s_scale: Option<u8>,
    /// Timestamps negotiated: both SYNs carried the option.
    pub ts_ok: bool,
    /// SACK negotiated: both SYNs carried SACK-permitted.
    pub sack_ok: bool,
    /// TS.Recent: the peer's timestamp to echo (RFC 7323 4.3).
    ts_recent: u32,
    /// Last.ACK.sent: rcv_nxt in the last segment we sent.
    last_ack_sent: Seq,
    /// The caller's clock, for the timestamp option.
    now: SimTime,
    /// Slow ticks since a segment last arrived (t_idle; `TimerModel::SlowTick`).
    t_idle: u32,
    /// When a segment last arrived (`TimerModel::PerConnection`).
    t_rcvtime: SimTime,

    /// NewReno/SACK loss recovery in progress, and its end: recovery lasts
    /// until `recover` (snd_max when it began) is acknowledged (RFC 6582).
    in_recovery: bool,
    recover: Seq,
    scoreboard: Scoreboard,
    /// The blocks our ACKs report.
    rcv_sack: ReceivedBlocks,

    ack_now: bool,
    del_ack: bool,
    /// The pending delayed ACK covers a full-sized segment (RFC 1122 rule).
    delack_full: bool,
    sent_fin: bool,
    /// Forced send by the persist timer (t_force).
    force: bool,
    /// The user closed: send FIN once the buffer drains.
    user_closed: bool,
    /// The last tcp_output held back data the window would have allowed.
    holding: bool,
    /// The end of the last sub-MSS data segment sent (Linux's snd_sml, for
    /// Minshall's Nagle test).
    snd_sml: Seq,

    timers: Timers,
    deadlines: Deadlines,
    /// A segment is being timed: slow ticks since it was sent, plus one (0: none).
    t_rtt: u32,
    t_rtseq: Seq,
    /// When the timed segment was sent (`TimerModel::PerConnection`).
    t_rtt_start: SimTime,
    /// Jacobson's estimator in units of `Policy::rtt_unit`: srtt × 8, rttvar × 4.
    t_srtt: i32,
    t_rttvar: i32,
    t_rxtshift: u32,
    /// The current retransmit timeout, backed off (whole slow ticks for BSD).
    t_rxtcur: SimTime,
    /// When the retransmit timer was last started (for `TcpStats::rexmt_wait`).
    rexmt_started: SimTime,

    pub stats: TcpStats,
}

impl Tcb {
    /// `mtu_mss` is the interface MTU less 40; the flavour's tcp_mss may round it.
    pub fn new(flavour: Flavour, mtu_mss: u32, sndbuf: u32, rcvbuf: u32, iss: Seq) -> Tcb {
        let policy = flavour.policy();
        let if_mss = policy.interface_mss(mtu_mss);
        // tcp_newtcpcb/tcp_connect: the least shift whose window covers the buffer.
        let mut request_r_scale = 0;
        if policy.window_scaling {
            while request_r_scale < TCP_MAX_WINSHIFT && (TCP_MAXWIN << request_r_scale) < rcvbuf {
                request_r_scale += 1;
            }
        }
        let ssthresh_max = if policy.window_scaling {
            TCP_MAXWIN << TCP_MAX_WINSHIFT
        } else {
            TCP_MAXWIN
        };
        let mut tcb = Tcb {
            flavour,
            policy,
            state: State::Closed,
            // Until the peer's MSS is known: tcp_mss's default.
            t_maxseg: 512.min(if_mss),
            if_mss,
            mtu_mss,
            nodelay: false,
            snd: SockBuf::new(if policy.sockbuf_doubled {
                2 * sndbuf
            } else {
                sndbuf
            }),
            rcv: SockBuf::new(if policy.sockbuf_doubled {
                2 * rcvbuf
            } else {
                rcvbuf
            }),
            rcv_clamp: rcvbuf,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            snd_wnd: 0,
            snd_wl1: Seq(0),
            snd_wl2: Seq(0),
            max_sndwnd: 0,
            snd_cwnd: TCP_MAXWIN,
            snd_ssthresh: ssthresh_max,
            t_dupacks: 0,
            irs: Seq(0),
            rcv_nxt: Seq(0),
            rcv_adv: Seq(0),
            reass: Vec::new(),
            snd_scale: 0,
            rcv_scale: 0,
            request_r_scale,
            requested_s_scale: None,
            ts_ok: false,
            sack_ok: false,
            ts_recent: 0,
            last_ack_sent: Seq(0),
            now: SimTime::ZERO,
            t_idle: 0,
            t_rcvtime: SimTime::ZERO,
            in_recovery: false,
            recover: iss,
            scoreboard: Scoreboard::default(),
            rcv_sack: ReceivedBlocks::default(),
            ack_now: false,
            del_ack: false,
            delack_full: false,
            sent_fin: false,
            force: false,
            user_closed: false,
            holding: false,
            snd_sml: iss,
            timers: Timers::default(),
            deadlines: Deadlines::default(),
            t_rtt: 0,
            t_rtseq: iss,
            t_rtt_start: SimTime::ZERO,
            t_srtt: 0,
            t_rttvar: 0,
            t_rxtshift: 0,
            t_rxtcur: match policy.timers {
                TimerModel::SlowTick => {
                    ticks_time(((TCPTV_SRTTDFLT << 2) >> 1).clamp(TCPTV_MIN, TCPTV_REXMTMAX))
                }
                TimerModel::PerConnection => TCP_TIMEOUT_INIT,
            },
            rexmt_started: SimTime::ZERO,
            stats: TcpStats::default(),
        };
        // tcp_newtcpcb: rttvar such that the first RTO is about 6 s.
        tcb.t_rttvar = (tcb.ticks_to_units(TCPTV_SRTTDFLT) << 2) as i32;
        tcb
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Tell the control block the time (the timestamp option's clock). Call
    /// before every entry point when timestamps may be in use.
    pub fn set_now(&mut self, now: SimTime) {
        self.now = now;
    }

    /// Bytes sent and not yet acknowledged.
    pub fn outstanding(&self) -> u32 {
        (self.snd_max - self.snd_una).max(0) as u32
    }

    /// With `flight` bytes outstanding, the window (the peer's or the
    /// congestion window) lets no more new data go: it is used up, or, for a
    /// flavour that sends segments only whole, what is left of it is less
    /// than a segment.
    pub fn window_full(&self, flight: u32) -> bool {
        let wnd = self.snd_wnd.min(self.snd_cwnd);
        if self.policy.split_at_window {
            flight >= wnd
        } else {
            flight.saturating_add(self.t_maxseg) > wnd
        }
    }

    /// A delayed ACK is pending (TF_DELACK).
    pub fn delack_pending(&self) -> bool {
        self.del_ack
    }

    /// No timer runs and no delayed ACK is pending: the host's ticks have
    /// nothing to do for this connection until it is next touched.
    pub fn timers_idle(&self) -> bool {
        self.next_slow_timer().is_none() && self.next_timer().is_none() && !self.del_ack
    }

    /// Slow ticks until the first of the retransmit, persist and 2MSL timers
    /// expires, if one runs (`TimerModel::SlowTick`): the slow tick need
    /// visit the connection only then.
    pub fn next_slow_timer(&self) -> Option<u32> {
        let t = &self.timers;
        [t.rexmt, t.persist, t.msl2]
            .into_iter()
            .filter(|&v| v != 0)
            .min()
    }

    /// `n` slow ticks passed in which no timer of this connection expired
    /// (fewer than [`Tcb::next_slow_timer`]): count them as tcp_slowtimo
    /// would have (t_idle, the round trip being timed, the timers).
    pub fn skip_slow_ticks(&mut self, n: u32) {
        if self.policy.timers != TimerModel::SlowTick || n == 0 {
            return;
        }
        debug_assert!(
            self.next_slow_timer().is_none_or(|left| left > n),
            "a timer would have expired"
        );
        self.t_idle = self.t_idle.saturating_add(n);
        if self.t_rtt != 0 {
            self.t_rtt += n;
        }
        let t = &mut self.timers;
        for v in [&mut t.rexmt, &mut t.persist, &mut t.msl2] {
            *v = v.saturating_sub(n);
        }
    }

    /// The last tcp_output held back data the usable window allowed
    /// (a sub-MSS segment waiting for an ACK: Nagle or sender SWS avoidance).
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// NewReno or SACK loss recovery is in progress.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The smoothed round-trip time, once measured.
    pub fn srtt(&self) -> Option<SimTime> {
        (self.t_srtt != 0).then(|| SimTime(self.t_srtt as u64 * self.policy.rtt_unit.0 / 8))
    }

    /// The ranges the peer has SACKed above snd_una (sender's scoreboard).
    pub fn sacked(&self) -> &[(Seq, Seq)] {
        self.scoreboard.sacked_ranges()
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

    /// The timestamp clock: `now` in units of the RTT estimator, offset by one
    /// so that a real timestamp is never 0 (an echo of 0 means "none").
    fn ts_now(&self) -> u32 {
        ((self.now.0 / self.policy.rtt_unit.0.max(1)) as u32).wrapping_add(1)
    }

    /// Resend `len` bytes at `seq` without moving snd_nxt (a SACK hole).
    fn send_hole(&mut self, seq: Seq, len: u32, out: &mut Vec<Segment>) {
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

    // ----- tcp_input -----------------------------------------------------

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

    fn initial_window(&self) -> u32 {
        let mss = self.t_maxseg;
        if self.policy.initial_window_rfc6928 {
            (10 * mss).min((2 * mss).max(14_600))
        } else {
            mss
        }
    }

    /// Feed the RTT estimator from an ACK of new data: the echoed timestamp
    /// (RFC 7323 RTTM) when there is one, else the timed segment (Karn).
    fn rtt_sample(&mut self, seg: &Segment) {
        if let (true, Some(ts)) = (self.ts_ok, seg.ts) {
            let rtt = self.ts_now().wrapping_sub(ts.ecr) as i32;
            // An echo older than the longest RTO is not a round trip.
            let longest = (self.rto_max().0 / self.policy.rtt_unit.0.max(1)) as i32;
            if ts.ecr != 0 && (0..=longest).contains(&rtt) {
                // 4.4BSD: tcp_xmit_timer(tp, tcp_now − tsecr + 1).
                self.xmit_timer(rtt as u32 + 1);
                return;
            }
        }
        if self.t_rtt != 0 && (seg.ack.gt(self.t_rtseq) || !self.state.have_rcvd_syn()) {
            let rtt = match self.policy.timers {
                TimerModel::SlowTick => self.ticks_to_units(self.t_rtt),
                // As the slow-tick count, one more than the whole units elapsed.
                TimerModel::PerConnection => {
                    let units =
                        self.now.saturating_sub(self.t_rtt_start).0 / self.policy.rtt_unit.0.max(1);
                    u32::try_from(units).unwrap_or(u32::MAX - 1) + 1
                }
            };
            self.xmit_timer(rtt);
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
            // Leaving Reno fast recovery: deflate the window. 4.4BSD tests
            // t_dupacks > tcprexmtthresh, so after exactly the threshold of
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
    fn loss_ssthresh(&self) -> u32 {
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
            // 4.3BSD-Reno: fast retransmit of the segment the receiver is missing.
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

    fn reass_insert(&mut self, seq: Seq, len: u32) {
        let pos = self
            .reass
            .iter()
            .position(|&(s, _)| seq.lt(s))
            .unwrap_or(self.reass.len());
        self.reass.insert(pos, (seq, len));
    }

    /// The contiguous run of queued data that contains `seq`.
    fn reass_run(&self, seq: Seq) -> (Seq, Seq) {
        let mut run: Option<(Seq, Seq)> = None;
        for &(s, l) in &self.reass {
            let e = s + l;
            run = match run {
                Some((a, b)) if s.le(b) => Some((a, b.max(e))),
                Some((a, b)) if seq.ge(a) && seq.lt(b) => return (a, b),
                _ => Some((s, e)),
            };
        }
        run.unwrap_or((seq, seq))
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

    /// tcp_fasttimo: the fast timer's tick sends a pending delayed ACK
    /// (`TimerModel::SlowTick`; a no-op for per-connection timers).
    pub fn fast_timer(&mut self, out: &mut Vec<Segment>) {
        if self.policy.timers == TimerModel::SlowTick {
            self.delack_timeout(out);
        }
    }

    /// tcp_slowtimo: the 500 ms tick runs the retransmit, persist and 2MSL timers
    /// and counts the round trip being timed (`TimerModel::SlowTick`; a no-op
    /// for per-connection timers).
    pub fn slow_timer(&mut self, out: &mut Vec<Segment>) -> Wakeups {
        let mut wake = Wakeups::default();
        if self.policy.timers != TimerModel::SlowTick {
            return wake;
        }
        self.t_idle = self.t_idle.saturating_add(1);
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
                self.persist_timeout(out);
            }
        }
        if self.timers.msl2 != 0 {
            self.timers.msl2 -= 1;
            if self.timers.msl2 == 0 {
                self.msl2_timeout(&mut wake);
            }
        }
        wake
    }

    /// The earliest deadline of the connection's own timers (retransmit,
    /// persist, 2MSL, delayed ACK), if any runs (`TimerModel::PerConnection`;
    /// always None under slow ticks). The caller calls [`Tcb::expire_timers`] then.
    pub fn next_timer(&self) -> Option<SimTime> {
        let d = &self.deadlines;
        [d.rexmt, d.persist, d.msl2, d.delack]
            .into_iter()
            .flatten()
            .min()
    }

    /// Run the connection's timers whose deadline has come by the time last
    /// told with [`Tcb::set_now`]: retransmit, persist, 2MSL, then the delayed
    /// ACK (which a retransmission has usually carried already).
    pub fn expire_timers(&mut self, out: &mut Vec<Segment>) -> Wakeups {
        let mut wake = Wakeups::default();
        let now = self.now;
        let due = |d: &mut Option<SimTime>| d.take_if(|at| *at <= now).is_some();
        if due(&mut self.deadlines.rexmt) {
            self.retransmit_timeout(out);
        }
        if due(&mut self.deadlines.persist) {
            self.persist_timeout(out);
        }
        if due(&mut self.deadlines.msl2) {
            self.msl2_timeout(&mut wake);
        }
        if due(&mut self.deadlines.delack) {
            self.delack_timeout(out);
        }
        wake
    }

    fn delack_timeout(&mut self, out: &mut Vec<Segment>) {
        if self.del_ack {
            self.del_ack = false;
            self.ack_now = true;
            self.output(SendReason::DelayedAck, out);
        }
    }

    /// The persist timer: probe the closed window with one byte, back off.
    fn persist_timeout(&mut self, out: &mut Vec<Segment>) {
        self.set_persist();
        self.force = true;
        self.output(SendReason::Persist, out);
        self.force = false;
    }

    fn msl2_timeout(&mut self, wake: &mut Wakeups) {
        self.state = State::Closed;
        wake.closed = true;
    }

    fn retransmit_timeout(&mut self, out: &mut Vec<Segment>) {
        self.t_rxtshift += 1;
        if self.t_rxtshift > TCP_MAXRXTSHIFT {
            // tcp_drop: give up.
            self.state = State::Closed;
            return;
        }
        self.stats.timeouts += 1;
        self.stats.max_backoff = self.stats.max_backoff.max(self.t_rxtshift);
        self.stats.rexmt_wait += self.now.saturating_sub(self.rexmt_started);
        // RFC 6298 5.5, 5.6: back off the timer and start it again.
        self.t_rxtcur = self.rto_backed_off();
        self.start_rexmt();
        self.snd_nxt = self.snd_una;
        // Karn: don't time a retransmitted segment.
        self.t_rtt = 0;
        // Slow-start from one segment; remember half the window as ssthresh.
        let ssthresh = self.loss_ssthresh();
        self.snd_cwnd = self.t_maxseg;
        self.snd_ssthresh = ssthresh;
        self.t_dupacks = 0;
        // Recovery is abandoned; no fast retransmit for what was sent before
        // now (RFC 6582 4.2), and SACK information is not trusted (RFC 2018 8).
        self.in_recovery = false;
        self.recover = self.snd_max;
        self.scoreboard.clear(self.snd_una);
        self.output(SendReason::Retransmit, out);
    }

    /// Jacobson's estimator in RTT units: srtt scaled by 8, rttvar by 4. `rtt`
    /// is one more than the units measured (4.3BSD's t_rtt starts at 1).
    fn xmit_timer(&mut self, rtt: u32) {
        let rtt = rtt.min(i32::MAX as u32) as i32;
        if self.t_srtt != 0 {
            let mut delta = rtt - 1 - (self.t_srtt >> 3);
            self.t_srtt = self.t_srtt.saturating_add(delta);
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.t_rttvar >> 2;
            self.t_rttvar = self.t_rttvar.saturating_add(delta);
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = rtt.saturating_mul(8);
            self.t_rttvar = rtt.saturating_mul(2);
        }
        self.t_rtt = 0;
        self.t_rxtshift = 0;
        self.t_rxtcur = self.rto_backed_off();
    }

    /// The retransmit timeout from the estimator, backed off by t_rxtshift.
    fn rto_backed_off(&self) -> SimTime {
        match self.policy.timers {
            TimerModel::SlowTick => {
                // TCPT_RANGESET(TCP_REXMTVAL × tcp_backoff[shift], TCPTV_MIN, TCPTV_REXMTMAX).
                let backoff = TCP_BACKOFF[(self.t_rxtshift as usize).min(TCP_BACKOFF.len() - 1)];
                let ticks = self.units_to_ticks(self.rexmtval()).saturating_mul(backoff);
                ticks_time(ticks.clamp(TCPTV_MIN, TCPTV_REXMTMAX))
            }
            TimerModel::PerConnection => {
                // RFC 6298: SRTT + max(G, 4·RTTVAR) (1 s before any sample),
                // bounded as Linux does, then doubled per timeout up to the maximum.
                let base = if self.t_srtt == 0 {
                    TCP_TIMEOUT_INIT
                } else {
                    let unit = self.policy.rtt_unit.0;
                    let srtt = self.t_srtt as u64 * unit / 8;
                    let var4 = (self.t_rttvar as u64 * unit).max(unit);
                    SimTime(srtt + var4).clamp(self.policy.rto_min, TCP_RTO_MAX)
                };
                let backoff = 1u64 << self.t_rxtshift.min(TCP_MAXRXTSHIFT);
                SimTime(base.0.saturating_mul(backoff)).min(TCP_RTO_MAX)
            }
        }
    }

    /// The longest retransmit timeout.
    fn rto_max(&self) -> SimTime {
        match self.policy.timers {
            TimerModel::SlowTick => ticks_time(TCPTV_REXMTMAX),
            TimerModel::PerConnection => TCP_RTO_MAX,
        }
    }

    /// TCP_REXMTVAL: srtt + 4 × mean deviation, in RTT units.
    fn rexmtval(&self) -> u32 {
        (((self.t_srtt >> 3) + self.t_rttvar).max(0) as u32).max(1)
    }

    /// RTT units to slow ticks, rounded up (the identity for the BSD flavours).
    fn units_to_ticks(&self, units: u32) -> u32 {
        (units as u64 * self.policy.rtt_unit.0).div_ceil(SLOW_TICK.0) as u32
    }

    fn ticks_to_units(&self, ticks: u32) -> u32 {
        (ticks as u64 * SLOW_TICK.0 / self.policy.rtt_unit.0.max(1)) as u32
    }

    /// tcp_setpersist: back off the persist interval with the RTO estimate.
    fn set_persist(&mut self) {
        match self.policy.timers {
            TimerModel::SlowTick => {
                let t = ((self.t_srtt >> 2) + self.t_rttvar) >> 1;
                let v = self.units_to_ticks(t.max(1) as u32)
                    * TCP_BACKOFF[self.t_rxtshift.min(12) as usize];
                self.timers.persist = v.clamp(TCPTV_PERSMIN, TCPTV_PERSMAX);
            }
            // Linux tcp_probe0_when: the RTO backed off, within [200 ms, 120 s].
            TimerModel::PerConnection => {
                self.deadlines.persist = Some(self.now + self.rto_backed_off());
            }
        }
        if self.t_rxtshift < TCP_MAXRXTSHIFT {
            self.t_rxtshift += 1;
        }
    }

    /// Time since a segment last arrived (4.3BSD t_idle).
    fn idle_time(&self) -> SimTime {
        match self.policy.timers {
            TimerModel::SlowTick => SimTime(SLOW_TICK.0.saturating_mul(self.t_idle as u64)),
            TimerModel::PerConnection => self.now.saturating_sub(self.t_rcvtime),
        }
    }

    /// Start the retransmit timer at the current timeout.
    fn start_rexmt(&mut self) {
        self.rexmt_started = self.now;
        match self.policy.timers {
            TimerModel::SlowTick => self.timers.rexmt = (self.t_rxtcur.0 / SLOW_TICK.0) as u32,
            TimerModel::PerConnection => self.deadlines.rexmt = Some(self.now + self.t_rxtcur),
        }
    }

    fn stop_rexmt(&mut self) {
        self.timers.rexmt = 0;
        self.deadlines.rexmt = None;
    }

    fn rexmt_running(&self) -> bool {
        self.timers.rexmt != 0 || self.deadlines.rexmt.is_some()
    }

    fn stop_persist(&mut self) {
        self.timers.persist = 0;
        self.deadlines.persist = None;
    }

    fn persist_running(&self) -> bool {
        self.timers.persist != 0 || self.deadlines.persist.is_some()
    }

    /// TIME_WAIT: every other timer off, 2MSL started.
    fn start_2msl(&mut self) {
        match self.policy.timers {
            TimerModel::SlowTick => {
                self.timers = Timers {
                    msl2: 2 * TCPTV_MSL,
                    ..Timers::default()
                }
            }
            TimerModel::PerConnection => {
                self.deadlines = Deadlines {
                    msl2: Some(self.now + TCP_TIMEWAIT_LEN),
                    delack: self.deadlines.delack,
                    ..Deadlines::default()
                }
            }
        }
    }

    /// The current retransmit timeout, backed off (for reports and tests).
    pub fn rto(&self) -> SimTime {
        self.t_rxtcur
    }
}

/// Slow ticks as time.
fn ticks_time(ticks: u32) -> SimTime {
    SLOW_TICK.times(ticks as u64)
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
