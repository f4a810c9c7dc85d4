//! The connection's timers (4.3BSD/4.4BSD netinet/tcp_timer.c): the 500 ms slow
//! timer's retransmit, persist and 2MSL timers and the 200 ms fast timer's
//! delayed ACK, or (`TimerModel::PerConnection`) deadlines of the connection's
//! own as Linux keeps them; and the RTT estimator that sets the retransmit
//! timeout (Jacobson, SIGCOMM 1988; Karn's rule; RFC 6298; RFC 7323 RTTM).

use super::{State, Tcb, Wakeups};
use crate::tcp::flavour::{TimerModel, SLOW_TICK};
use crate::tcp::segment::{Segment, SendReason};
use crate::time::SimTime;

/// 4.3BSD tcp_timer.h: ticks of the 500 ms slow timer.
pub(super) const TCPTV_MIN: u32 = 2; // 1 s minimum RTO
pub(super) const TCPTV_REXMTMAX: u32 = 128; // 64 s
pub(super) const TCPTV_SRTTDFLT: u32 = 6; // 3 s initial RTO basis
const TCPTV_PERSMIN: u32 = 10; // 5 s
const TCPTV_PERSMAX: u32 = 120; // 60 s
const TCPTV_MSL: u32 = 60; // 30 s
const TCP_MAXRXTSHIFT: u32 = 12;
const TCP_BACKOFF: [u32; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// Linux (include/net/tcp.h), for `TimerModel::PerConnection`: the RTO's
/// upper bound (its floor is the flavour's `rto_min`), the RTO before any RTT
/// sample (RFC 6298 2.1), TIME_WAIT's length.
const TCP_RTO_MAX: SimTime = SimTime::from_secs(120);
pub(super) const TCP_TIMEOUT_INIT: SimTime = SimTime::from_secs(1);
const TCP_TIMEWAIT_LEN: SimTime = SimTime::from_secs(60);

/// Timers in slow ticks; 0 = off (`TimerModel::SlowTick`).
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Timers {
    rexmt: u32,
    persist: u32,
    msl2: u32,
}

/// When each timer falls due; None = off (`TimerModel::PerConnection`).
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Deadlines {
    rexmt: Option<SimTime>,
    persist: Option<SimTime>,
    msl2: Option<SimTime>,
    pub(super) delack: Option<SimTime>,
}

/// Slow ticks as time.
pub(super) fn ticks_time(ticks: u32) -> SimTime {
    SLOW_TICK.times(ticks as u64)
}

impl Tcb {
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

    /// tcp_setpersist: back off the persist interval with the RTO estimate.
    pub(super) fn set_persist(&mut self) {
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
    pub(super) fn idle_time(&self) -> SimTime {
        match self.policy.timers {
            TimerModel::SlowTick => SimTime(SLOW_TICK.0.saturating_mul(self.t_idle as u64)),
            TimerModel::PerConnection => self.now.saturating_sub(self.t_rcvtime),
        }
    }

    /// Start the retransmit timer at the current timeout.
    pub(super) fn start_rexmt(&mut self) {
        self.rexmt_started = self.now;
        match self.policy.timers {
            TimerModel::SlowTick => self.timers.rexmt = (self.t_rxtcur.0 / SLOW_TICK.0) as u32,
            TimerModel::PerConnection => self.deadlines.rexmt = Some(self.now + self.t_rxtcur),
        }
    }

    pub(super) fn stop_rexmt(&mut self) {
        self.timers.rexmt = 0;
        self.deadlines.rexmt = None;
    }

    pub(super) fn rexmt_running(&self) -> bool {
        self.timers.rexmt != 0 || self.deadlines.rexmt.is_some()
    }

    pub(super) fn stop_persist(&mut self) {
        self.timers.persist = 0;
        self.deadlines.persist = None;
    }

    pub(super) fn persist_running(&self) -> bool {
        self.timers.persist != 0 || self.deadlines.persist.is_some()
    }

    /// TIME_WAIT: every other timer off, 2MSL started.
    pub(super) fn start_2msl(&mut self) {
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

    // ----- the RTT estimator and the retransmit timeout ---------------

    /// Feed the RTT estimator from an ACK of new data: the echoed timestamp
    /// (RFC 7323 RTTM) when there is one, else the timed segment (Karn).
    pub(super) fn rtt_sample(&mut self, seg: &Segment) {
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

    /// The timestamp clock: `now` in units of the RTT estimator, offset by one
    /// so that a real timestamp is never 0 (an echo of 0 means "none").
    pub(super) fn ts_now(&self) -> u32 {
        ((self.now.0 / self.policy.rtt_unit.0.max(1)) as u32).wrapping_add(1)
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

    pub(super) fn ticks_to_units(&self, ticks: u32) -> u32 {
        (ticks as u64 * SLOW_TICK.0 / self.policy.rtt_unit.0.max(1)) as u32
    }

    /// The smoothed round-trip time, once measured.
    pub fn srtt(&self) -> Option<SimTime> {
        (self.t_srtt != 0).then(|| SimTime(self.t_srtt as u64 * self.policy.rtt_unit.0 / 8))
    }

    /// The current retransmit timeout, backed off (for reports and tests).
    pub fn rto(&self) -> SimTime {
        self.t_rxtcur
    }
}
