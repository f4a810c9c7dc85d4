//! TCP flavours: one core (`Tcb`), a flavour is a small set of policy choices.

use crate::time::SimTime;
use std::fmt;
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// 4.3BSD-Tahoe as in SunOS 4.1.x: slow start, congestion avoidance, Tahoe's
    /// fast retransmit (three duplicate ACKs, then slow start from one segment) without
    /// fast recovery, Tahoe's window-update rule, 200 ms delayed ACK.
    Sunos411,
    /// 4.3BSD-Reno / 4.4BSD: adds fast retransmit and fast recovery, the 4.4BSD
    /// window-update rule and Reno's congestion-avoidance increment.
    Reno,
    /// As `reno`, but ACKs at least every second full-sized segment (RFC 1122 4.2.3.2).
    Rfc1122,
    /// NewReno (RFC 6582) with SACK (RFC 2018, RFC 6675 loss recovery), window
    /// scaling and timestamps (RFC 7323), ACK every second segment, 40 ms
    /// delayed-ACK timer, RFC 6928 initial window; timers of each connection's
    /// own, as Linux keeps them (RFC 6298 RTO, at least 200 ms).
    Modern,
    /// DEC OSF/1, as on the MAGIC testbed's Alphas: `reno` with the RFC 1323
    /// extensions (window scaling, timestamps) for windows beyond 64 KB. Its loss
    /// recovery is 4.3BSD-Reno's (tcp_input.c 7.25, tcp_timer.c 7.18; unchanged in
    /// 4.4BSD 8.1 but for RFC 1323's timing of every ACK): a partial ACK ends fast
    /// recovery, a later hole waits for the retransmit timer, then go-back-N. Its
    /// tcp_mss leaves room for the timestamp option so that segments still
    /// carry whole mbuf clusters of data.
    Osf1,
    /// SunOS 4.1.3 (SPARCstation 10/512): the same 4.3BSD-Tahoe TCP and socket
    /// layer as 4.1.1.
    Sunos413,
    /// Solaris 2.4 (SPARCstation 20): Mentat's STREAMS TCP, ACK every second
    /// segment, per-connection delayed-ACK timer, no RFC 1323.
    Solaris24,
    /// Solaris 2.5 (Ultra-1): as Solaris 2.4 on the sun4u's 8 KB pages.
    Solaris25,
    /// IRIX 6.0.1 (SGI Power Challenge): 4.3BSD-Reno-derived, with RFC 1323.
    Irix601,
    /// Windows NT 3.51 (Pentium PCs): its own TCP under the Winsock AFD layer;
    /// ACK every second segment (of any size) or after 200 ms, a window update on a read only
    /// for two segments' worth, no RFC 1323, and a send of at least SO_SNDBUF
    /// bytes completes only once acknowledged.
    Nt351,
}

impl Flavour {
    pub const ALL: [Flavour; 10] = [
        Flavour::Sunos411,
        Flavour::Reno,
        Flavour::Rfc1122,
        Flavour::Modern,
        Flavour::Osf1,
        Flavour::Sunos413,
        Flavour::Solaris24,
        Flavour::Solaris25,
        Flavour::Irix601,
        Flavour::Nt351,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Flavour::Sunos411 => "sunos411",
            Flavour::Reno => "reno",
            Flavour::Rfc1122 => "rfc1122",
            Flavour::Modern => "modern",
            Flavour::Osf1 => "osf1",
            Flavour::Sunos413 => "sunos413",
            Flavour::Solaris24 => "solaris24",
            Flavour::Solaris25 => "solaris25",
            Flavour::Irix601 => "irix601",
            Flavour::Nt351 => "nt351",
        }
    }

    pub fn policy(self) -> Policy {
        let sunos411 = Policy {
            max_sockbuf: 52_428,
            // SunOS 4.1.3 sys/netinet/tcp_input.c: `tcprexmtthresh = 3`, and on that
            // many duplicates Tahoe's fast retransmit (ssthresh half the window, cwnd
            // one segment, resend snd_una's segment); no fast recovery (Reno's cwnd
            // inflation is not there). 4.1.1 is taken to have 4.1.3's TCP: the
            // nearest source the project holds, and 4.3BSD-Tahoe had it (7.11, 1987).
            dupack_threshold: Some(3),
            recovery: Recovery::None,
            sack: false,
            window_update: WindowUpdateRule::Tahoe,
            ca_increment_eighth: false,
            ssthresh_from_flight: false,
            ack: AckPolicy::Delayed,
            delack_interval: SimTime::from_ms(200),
            timers: TimerModel::SlowTick,
            window_scaling: false,
            timestamps: false,
            rtt_unit: SLOW_TICK,
            idle_restart: false,
            initial_window_rfc6928: false,
            // SunOS 4.1.x keeps MSS = MTU − 40 (9148 on Fore IP, as the LAN
            // study saw); its socket layer has its own append rule.
            mclbytes: 4096,
            mss_in_clusters: false,
            tstamp_within_mtu: false,
            send_completes_on_ack: false,
            // Linux's TCP_RTO_MIN (include/net/tcp.h); only per-connection timers use it.
            rto_min: SimTime::from_ms(200),
            split_at_window: true,
            sockbuf_doubled: false,
            window_tail: false,
            whole_segment_window: false,
        };
        // 4.3BSD-Reno tcp_input/tcp_output as kept in 4.4BSD-Lite.
        let reno = Policy {
            dupack_threshold: Some(3),
            recovery: Recovery::Reno,
            // 4.4BSD: window update when it opens by 2 MSS or by half the buffer;
            // Tahoe's "receive buffer empty" condition on the 2 MSS test is gone.
            window_update: WindowUpdateRule::Bsd44,
            // tcp_input: incr = maxseg²/cwnd + maxseg/8 above ssthresh.
            ca_increment_eighth: true,
            // tcp_output: idle for an RTO with nothing outstanding → slow start.
            idle_restart: true,
            // tcp_mss: an MSS above MCLBYTES (2048 on 4.4BSD) is rounded down to
            // a multiple of it "to utilize large mbufs": MTU 9180 gives 8192.
            mclbytes: 2048,
            mss_in_clusters: true,
            ..sunos411
        };
        // Solaris 2.4/2.5's TCP (Mentat, STREAMS). Sources: the Solaris Tunable
        // Parameters Reference Manual (docs.oracle.com, 806-6779): tcp_deferred_acks_max
        // 2 (an ACK for every second full segment), tcp_deferred_ack_interval 100 ms
        // on a timer of the connection's own. Assumptions (the manual documents
        // Solaris 8; 2.4/2.5 are taken to have the same defaults): those two, a
        // largest socket buffer (tcp_max_buf) of 256 KB, no RFC 1323 (window
        // scaling came with Solaris 2.6), MSS = MTU − 40 (no cluster rounding).
        // Nagle and sender SWS avoidance as RFC 896 and RFC 1122 4.2.3.4 give them,
        // which the core's BSD send test is (a full segment; everything when idle;
        // at least half the largest window offered): the same for NT below.
        let solaris = Policy {
            max_sockbuf: 262_144,
            ack: AckPolicy::SecondFullSegment,
            delack_interval: SimTime::from_ms(100),
            timers: TimerModel::PerConnection,
            rtt_unit: SimTime::from_ms(1),
            // tcp_rexmit_interval_min (the same manual): 400 ms.
            rto_min: SimTime::from_ms(400),
            mss_in_clusters: false,
            // The stream head copies a write into the send queue a page at a
            // time (assumption: 4 KB pages on sun4m).
            mclbytes: 4096,
            ..reno
        };
        match self {
            Flavour::Sunos411 | Flavour::Sunos413 => sunos411,
            Flavour::Solaris24 => solaris,
            // The Ultra-1 (sun4u) has 8 KB pages.
            Flavour::Solaris25 => Policy {
                mclbytes: 8192,
                ..solaris
            },
            // IRIX 6.0.1: SGI's BSD-derived TCP (IRIX network administration guide,
            // "Kernel Configuration": tcp_sendspace/tcp_recvspace in master.d/bsd,
            // default 60 KB, the 4.3BSD names). Assumptions: Reno's loss recovery and
            // window update; RFC 1323 window scaling and timestamps offered; a
            // largest socket buffer of 512 KB; mbuf clusters of the 64-bit kernel's
            // 16 KB page, so an ATM MSS of ~9 KB is below one cluster and tcp_mss
            // keeps it. None of its peers here offers RFC 1323, so the options
            // never take effect in hetero-lan.
            Flavour::Irix601 => Policy {
                max_sockbuf: 512 * 1024,
                window_scaling: true,
                timestamps: true,
                mclbytes: 16_384,
                ..reno
            },
            // Windows NT 3.51. Sources: TcpDelAckTicks (Windows TCP/IP registry
            // reference, technet cc938206): default 2 × 100 ms, an ACK for every
            // other segment, else when 200 ms have passed since the segment (neither
            // it nor the Embedded CE text below asks for full-sized segments, as
            // RFC 1122 does: `AckPolicy::SecondSegment`, whatever their size);
            // KB Q199947: NT 3.5/3.51/4.0 have no window scale option, so 65535
            // is the largest window; MSDN Magazine Oct 2000 ("Winsock", AFD.SYS)
            // and KB 823764: AFD copies a send into its buffer up to SO_SNDBUF and
            // completes it at once, but a send of at least SO_SNDBUF bytes is not
            // buffered and completes only when all its data is acknowledged.
            // Microsoft's description of its stack's delayed ACK ("Delayed
            // Acknowledgments", Windows Embedded CE 6.0 docs, learn.microsoft.com
            // ee493431: the Microsoft stack sends an ACK only when no ACK went for the
            // previous segment or 200 ms passed with no other segment) names no ACK
            // for a read that reopens the window.
            // Assumptions: Reno's fast retransmit and recovery; MSS = MTU − 40;
            // AFD hands TCP a send whole (copied when it fits the free quota, else
            // the user's buffer itself), not in mbuf clusters: one append per send.
            // A read sends a window update only when the window the peer knows would
            // grow by two full segments (`WindowUpdateRule::TwoSegments`: what an
            // ACK for every second segment amounts to for a reopened window; NT's
            // TCP is its own code, not BSD's, and no public source gives BSD's
            // "half the buffer" clause for it): with a socket buffer of one MSS the
            // read that empties it leaves the update to the 200 ms timer.
            Flavour::Nt351 => Policy {
                max_sockbuf: 65_535,
                window_update: WindowUpdateRule::TwoSegments,
                ack: AckPolicy::SecondSegment,
                delack_interval: SimTime::from_ms(200),
                timers: TimerModel::PerConnection,
                rtt_unit: SimTime::from_ms(1),
                // Assumption (no public source gives NT 3.51's floor): 500 ms, RFC 1122's
                // bound on an ACK's delay, so that a lone segment whose ACK its NT peer
                // holds for 200 ms is not resent.
                rto_min: SimTime::from_ms(500),
                mss_in_clusters: false,
                mclbytes: 65_535,
                send_completes_on_ack: true,
                ..reno
            },
            Flavour::Reno => reno,
            Flavour::Rfc1122 => Policy {
                ack: AckPolicy::SecondFullSegment,
                ..reno
            },
            Flavour::Osf1 => Policy {
                max_sockbuf: 1 << 20,
                window_scaling: true,
                timestamps: true,
                tstamp_within_mtu: true,
                // The Alpha port's mbuf cluster is its 8 KB page (an assumption:
                // MCLBYTES may not exceed the page size, and 8 KB clusters keep
                // sosend's appends whole segments).
                mclbytes: 8192,
                ..reno
            },
            Flavour::Modern => Policy {
                max_sockbuf: 16 << 20,
                recovery: Recovery::NewReno,
                sack: true,
                ca_increment_eighth: false,
                ssthresh_from_flight: true,
                ack: AckPolicy::SecondSegment,
                // Linux's ATO minimum, on a timer of the connection's own.
                delack_interval: SimTime::from_ms(40),
                timers: TimerModel::PerConnection,
                window_scaling: true,
                timestamps: true,
                rtt_unit: SimTime::from_ms(1),
                initial_window_rfc6928: true,
                // Linux: MSS = MTU − 40, no rounding.
                mss_in_clusters: false,
                split_at_window: false,
                sockbuf_doubled: true,
                window_tail: true,
                whole_segment_window: true,
                ..reno
            },
        }
    }
}

/// The period of the 4.3BSD slow timer (retransmit, persist, 2MSL), in which
/// the BSD flavours count their timers.
pub const SLOW_TICK: SimTime = SimTime::from_ms(500);

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown flavour name (the message lists the known ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFlavour(pub String);

impl fmt::Display for UnknownFlavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Flavour::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "unknown TCP flavour {:?}: expected one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFlavour {}

impl FromStr for Flavour {
    type Err = UnknownFlavour;
    fn from_str(s: &str) -> Result<Flavour, UnknownFlavour> {
        Flavour::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFlavour(s.to_string()))
    }
}

/// What the sender does once duplicate ACKs signal a loss.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// No fast recovery: after a fast retransmit (if any), slow start.
    None,
    /// 4.3BSD-Reno: inflate cwnd by one MSS per duplicate ACK; the first new
    /// ACK deflates it and ends recovery.
    Reno,
    /// RFC 6582: a partial ACK retransmits the next hole and stays in recovery
    /// until everything sent before the loss is acknowledged. With SACK
    /// negotiated, recovery is RFC 6675's scoreboard and pipe instead.
    NewReno,
}

/// When tcp_output sends a pure window update after the application reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WindowUpdateRule {
    /// 4.3BSD-Tahoe: the window opens by 2 MSS with the receive buffer empty,
    /// or by 35% of the buffer.
    Tahoe,
    /// 4.4BSD: the window opens by 2 MSS, or by 50% of the buffer.
    Bsd44,
    /// Only when the window opens by 2 MSS: 4.4BSD's test without its
    /// fraction-of-the-buffer clause. A receive buffer under two segments then
    /// never sends an update on a read; the delayed-ACK timer (or the ACK the
    /// next segment earns) tells the sender the window opened.
    TwoSegments,
}

/// How the receiver acknowledges in-order data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// BSD: in-order data only marks the ACK delayed (the fast timer sends it).
    Delayed,
    /// RFC 1122 4.2.3.2: an in-order segment arriving while an ACK is delayed
    /// for a full-sized segment is ACKed at once.
    SecondFullSegment,
    /// Linux-like: an in-order segment arriving while an ACK is delayed is
    /// ACKed at once (every second segment, whatever its size).
    SecondSegment,
}

/// How a flavour keeps its retransmit, persist, 2MSL and delayed-ACK timers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimerModel {
    /// 4.3BSD: counters decremented by the host's 500 ms slow tick (an RTO of
    /// whole ticks, 1 s to 64 s) and a pending delayed ACK sent at the next
    /// tick of the host's fast timer, every `delack_interval` on a global grid.
    SlowTick,
    /// Linux-like: deadlines of the connection's own. RFC 6298's RTO =
    /// SRTT + max(G, 4·RTTVAR) within [200 ms, 120 s] (Linux's TCP_RTO_MIN and
    /// TCP_RTO_MAX), 1 s before the first sample, doubled per timeout; persist
    /// probes at the same backed-off interval; a delayed ACK falls due
    /// `delack_interval` after the first segment it covers.
    PerConnection,
}

/// The policy differences between flavours.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Largest SO_SNDBUF/SO_RCVBUF the kernel accepts (SunOS 4.1.1: 52428).
    pub max_sockbuf: u32,
    /// Duplicate ACKs that trigger a fast retransmit (None: no fast retransmit).
    pub dupack_threshold: Option<u32>,
    /// Loss recovery after a fast retransmit.
    pub recovery: Recovery,
    /// Offer SACK (RFC 2018) on the SYN; recover with RFC 6675 when both ends do.
    pub sack: bool,
    /// The receiver's window-update test in tcp_output.
    pub window_update: WindowUpdateRule,
    /// 4.3BSD-Reno congestion avoidance adds maxseg/8 per ACK.
    pub ca_increment_eighth: bool,
    /// ssthresh after a loss: RFC 5681's max(FlightSize/2, 2 MSS) (true) or
    /// BSD's max(min(snd_wnd, cwnd)/2, 2 MSS) rounded down to whole segments.
    pub ssthresh_from_flight: bool,
    /// When in-order data is ACKed.
    pub ack: AckPolicy,
    /// How long an ACK may be delayed: the fast timer's period under
    /// `TimerModel::SlowTick`, the delay from the first unacknowledged segment
    /// under `TimerModel::PerConnection`.
    pub delack_interval: SimTime,
    /// Global ticks (4.3BSD) or per-connection deadlines (Linux).
    pub timers: TimerModel,
    /// Offer the RFC 7323 window-scale option (scaling is used when both ends offer it).
    pub window_scaling: bool,
    /// Offer RFC 7323 timestamps (RTTM on every ACK; 12 header bytes per segment).
    pub timestamps: bool,
    /// Unit of the RTT estimator and of the timestamp clock: the slow tick for
    /// the BSD flavours, 1 ms for `modern`.
    pub rtt_unit: SimTime,
    /// Slow start again after an idle period of one RTO (4.3BSD-Reno tcp_output).
    pub idle_restart: bool,
    /// Initial window min(10 MSS, max(2 MSS, 14600)) (RFC 6928) instead of 1 MSS.
    pub initial_window_rfc6928: bool,
    /// The mbuf cluster (MCLBYTES): the unit sosend appends in and its
    /// low-water mark (the BSD socket layer).
    pub mclbytes: u32,
    /// tcp_mss rounds an MSS larger than one cluster down to a whole number of
    /// clusters (4.3BSD-Reno, 4.4BSD and OSF/1 do).
    pub mss_in_clusters: bool,
    /// OSF/1's tcp_mss: with RFC 1323 on, the MSS grows by the 12-byte
    /// timestamp option when the MTU has room, so that data segments stay a
    /// whole number of clusters (otherwise the option eats 12 bytes of each).
    pub tstamp_within_mtu: bool,
    /// Winsock AFD (Windows NT): a write of at least SO_SNDBUF bytes is not
    /// buffered; it returns only when every byte of it is acknowledged.
    pub send_completes_on_ack: bool,
    /// The floor of the retransmit timeout under `TimerModel::PerConnection`.
    pub rto_min: SimTime,
    /// BSD's tcp_output sends the part of a segment the window allows (when
    /// the sender SWS test lets it). Linux's tcp_snd_wnd_test sends a queued
    /// segment only when all of it fits in the window: a window of 16 KB with a
    /// 9128-byte MSS carries one segment, not one and a half.
    pub split_at_window: bool,
    /// Linux doubles SO_SNDBUF and SO_RCVBUF "to allow space for bookkeeping
    /// overhead" (socket(7)), and the window it advertises is clamped to the size
    /// asked (TCP_WINDOW_CLAMP, as the emulator sets it): data waiting to be read
    /// does not close the window until it exceeds the clamp.
    pub sockbuf_doubled: bool,
    /// Linux sends from skbs of several segments (GSO): tcp_snd_wnd_test asks
    /// only that the first segment fit, and tcp_mss_split_point then sends up to
    /// the window's edge, a sub-MSS last segment included, unless Nagle holds it
    /// (tcp_nagle_check with Minshall's rule: a sub-MSS segment already sent is
    /// unacknowledged). A 64 KB window with a 9128-byte MSS then carries 7 whole
    /// segments and a 1640-byte one: the whole 65536 bytes, in an even count.
    pub window_tail: bool,
    /// Linux's receiver without window scaling offers its window in whole
    /// segments (__tcp_select_window: rounddown(free_space, mss)); with scaling
    /// it offers the free space as it is.
    pub whole_segment_window: bool,
}

impl Policy {
    /// The largest window this kernel can advertise: 65535 without RFC 1323
    /// window scaling, else 65535 << 14.
    pub fn max_window(&self) -> u32 {
        if self.window_scaling {
            65_535 << 14
        } else {
            65_535
        }
    }

    /// The MSS this kernel derives from an interface's MTU − 40.
    pub fn interface_mss(&self, mtu_mss: u32) -> u32 {
        let cl = self.mclbytes;
        if self.mss_in_clusters && mtu_mss > cl {
            mtu_mss / cl * cl
        } else {
            mtu_mss
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_lists_all() {
        for f in Flavour::ALL {
            assert_eq!(f.name().parse::<Flavour>(), Ok(f));
        }
        let e = "vegas".parse::<Flavour>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown TCP flavour \"vegas\": expected one of sunos411, reno, rfc1122, modern, osf1, \
             sunos413, solaris24, solaris25, irix601, nt351"
        );
    }

    #[test]
    fn flavours_differ_only_where_they_should() {
        let (s, r, c, m) = (
            Flavour::Sunos411.policy(),
            Flavour::Reno.policy(),
            Flavour::Rfc1122.policy(),
            Flavour::Modern.policy(),
        );
        assert_eq!(s.max_sockbuf, 52_428);
        assert_eq!((r.max_sockbuf, c.max_sockbuf), (52_428, 52_428));
        assert!(m.max_sockbuf > 1 << 20);
        assert_eq!(
            c,
            Policy {
                ack: AckPolicy::SecondFullSegment,
                ..r
            }
        );
        assert_eq!((s.dupack_threshold, s.recovery), (Some(3), Recovery::None));
        assert_eq!(m.delack_interval, SimTime::from_ms(40));
        assert_eq!(m.timers, TimerModel::PerConnection);
        for f in [s, r, c, Flavour::Osf1.policy()] {
            assert_eq!(f.timers, TimerModel::SlowTick);
        }
        assert!(m.window_scaling && m.timestamps && m.sack);
        assert!(!r.window_scaling && !r.timestamps && !r.sack);
        // OSF/1: Reno plus RFC 1323, nothing else.
        let o = Flavour::Osf1.policy();
        assert_eq!(
            o,
            Policy {
                max_sockbuf: 1 << 20,
                window_scaling: true,
                timestamps: true,
                tstamp_within_mtu: true,
                mclbytes: 8192,
                ..r
            }
        );
    }

    #[test]
    fn the_era_hosts_flavours_are_small_policy_sets() {
        let (sunos, reno) = (Flavour::Sunos411.policy(), Flavour::Reno.policy());
        // SunOS 4.1.3 keeps 4.1.1's TCP.
        assert_eq!(Flavour::Sunos413.policy(), sunos);
        // Solaris 2.5 is 2.4 on 8 KB pages.
        let (s24, s25) = (Flavour::Solaris24.policy(), Flavour::Solaris25.policy());
        assert_eq!(
            s25,
            Policy {
                mclbytes: 8192,
                ..s24
            }
        );
        assert_eq!(s24.ack, AckPolicy::SecondFullSegment);
        assert_eq!(s24.delack_interval, SimTime::from_ms(100));
        // No RFC 1323 but a buffer beyond 64 KB: a window it cannot advertise.
        assert!(s24.max_sockbuf > s24.max_window());
        assert_eq!(s24.max_window(), 65_535);
        // IRIX 6.0.1: Reno with the RFC 1323 options.
        let irix = Flavour::Irix601.policy();
        assert!(irix.window_scaling && irix.max_window() > irix.max_sockbuf);
        assert_eq!(
            (irix.ack, irix.window_update),
            (reno.ack, reno.window_update)
        );
        // NT 3.51: 64 KB at most, every second segment or 200 ms, AFD's unbuffered send.
        let nt = Flavour::Nt351.policy();
        assert_eq!((nt.max_sockbuf, nt.max_window()), (65_535, 65_535));
        assert_eq!(nt.delack_interval, SimTime::from_ms(200));
        assert_eq!(nt.ack, AckPolicy::SecondSegment);
        assert_eq!(nt.interface_mss(9148), 9148);
        for f in Flavour::ALL {
            assert_eq!(f.policy().send_completes_on_ack, f == Flavour::Nt351, "{f}");
            // NT alone drops 4.4BSD's "half the buffer" window update; SunOS keeps Tahoe's.
            let rule = match f {
                Flavour::Nt351 => WindowUpdateRule::TwoSegments,
                Flavour::Sunos411 | Flavour::Sunos413 => WindowUpdateRule::Tahoe,
                _ => WindowUpdateRule::Bsd44,
            };
            assert_eq!(f.policy().window_update, rule, "{f}");
        }
    }

    #[test]
    fn bsd_kernels_round_a_large_mss_to_whole_clusters() {
        // Classical IP's MTU 9180: 9140 → 8192 on the 4.4BSD line, kept by SunOS and Linux.
        for f in [Flavour::Reno, Flavour::Rfc1122, Flavour::Osf1] {
            assert_eq!(f.policy().interface_mss(9140), 8192, "{f}");
            assert_eq!(f.policy().interface_mss(1460), 1460, "{f}: under a cluster");
            assert_eq!(f.policy().interface_mss(2048), 2048, "{f}: one cluster");
        }
        for f in [Flavour::Sunos411, Flavour::Modern] {
            assert_eq!(f.policy().interface_mss(9148), 9148, "{f}");
        }
    }
}
