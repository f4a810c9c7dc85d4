//! The TCP control block (4.4BSD tcpcb, created as tcp_subr.c's
//! tcp_newtcpcb does) and the BSD mechanisms over it, one file each:
//! [`output`] tcp_output's send decision (Nagle, silly-window avoidance), [`input`]
//! tcp_input's ACK and data processing with fast retransmit and recovery,
//! [`reass`] the out-of-order queue, [`timer`] the 500 ms slow timer (RTO,
//! persist, 2MSL), the fast timer (delayed ACK) and the RTT estimator, and
//! [`usrreq`] the socket layer's requests. The flavours' additions ride on
//! the same code: fast retransmit and Reno/NewReno recovery, SACK (RFC 2018,
//! RFC 6675), window scaling and timestamps (RFC 7323), ACK every second segment.
//!
//! Sans-IO: every entry point takes the socket's state and pushes the segments
//! it sends into `out`; the caller owns time, hosts and the network, and tells
//! the time with [`Tcb::set_now`]. The BSD flavours count their timers in the
//! host's slow ticks ([`Tcb::slow_timer`], [`Tcb::fast_timer`]); `modern` keeps
//! deadlines of its own ([`Tcb::next_timer`], [`Tcb::expire_timers`]).

mod input;
mod output;
mod reass;
mod timer;
mod usrreq;

#[cfg(test)]
mod test;

use super::flavour::{Flavour, Policy, TimerModel};
use super::sack::{ReceivedBlocks, Scoreboard};
use super::segment::TCP_MAX_WINSHIFT;
use super::seq::Seq;
use crate::time::SimTime;
use timer::{
    ticks_time, Deadlines, Timers, TCPTV_MIN, TCPTV_REXMTMAX, TCPTV_SRTTDFLT, TCP_TIMEOUT_INIT,
};

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

    /// The last tcp_output held back data the usable window allowed
    /// (a sub-MSS segment waiting for an ACK: Nagle or sender SWS avoidance).
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// NewReno or SACK loss recovery is in progress.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The ranges the peer has SACKed above snd_una (sender's scoreboard).
    pub fn sacked(&self) -> &[(Seq, Seq)] {
        self.scoreboard.sacked_ranges()
    }
}
