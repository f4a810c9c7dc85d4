//! Time-driven work: the hosts' global ticks (4.3BSD's 200 ms fast and
//! 500 ms slow timeouts), stopped while a host has nothing to do and replayed
//! when work comes, and each connection's own timer events. Apart from the
//! CPU's dispatch because it decides when work arrives, not how it runs.

use super::cpu::{scale_cost, Job};
use super::{Event, World};
use crate::sim::net::HostId;
use crate::tcp::flavour::SLOW_TICK;
use crate::tcp::State;
use crate::time::SimTime;

impl World {
    /// A tick of one of the host's global timers (4.3BSD's 200 ms fast and
    /// 500 ms slow timeouts, at the phases drawn at the start). A host with
    /// nothing left to do stops the chain here, this tick included, and
    /// schedules no more: `wake_host` replays the stopped ticks if work comes.
    pub(super) fn tick(&mut self, h: HostId, slow: bool) {
        self.catch_up_ticks(h);
        let host = &mut self.hosts[h];
        if host.live_eps == 0
            && !host.busy
            && host.interrupts.is_empty()
            && host.processes.is_empty()
        {
            let chain = if slow {
                &mut host.slow_dormant
            } else {
                &mut host.fast_dormant
            };
            *chain = Some(self.now);
            return;
        }
        if slow {
            self.events
                .schedule(self.now + SLOW_TICK, Event::SlowTick(h));
            self.enqueue(h, Job::SlowTick, true);
        } else if let Some(interval) = host.fast_interval {
            self.events
                .schedule(self.now + interval, Event::FastTick(h));
            self.enqueue(h, Job::FastTick, true);
        }
    }

    /// Account the stopped ticks of a host before `now` as if they had run
    /// (see `replay_ticks`); the CPU is busy if the last still runs.
    fn catch_up_ticks(&mut self, h: HostId) {
        let now = self.now;
        if self.replay_ticks(h, now).is_some() {
            let host = &mut self.hosts[h];
            if host.busy_until >= now {
                host.busy = true;
                let free = host.busy_until;
                self.events.schedule(free, Event::CpuFree(h));
            }
        }
    }

    /// Account the stopped ticks of a host before `before` as if they had run:
    /// each draws its cost's jitter and keeps the CPU busy for a tick's cost
    /// (no connection had anything for them to do), so the host's CPU and
    /// random stream stand as they would have, and the ticks keep their phase.
    /// Returns the time of the last of their events (tick, CPU free) before
    /// `before`, if any tick was replayed.
    pub(super) fn replay_ticks(&mut self, h: HostId, before: SimTime) -> Option<SimTime> {
        let host = &mut self.hosts[h];
        let mut last = None;
        loop {
            // At equal times the slow tick runs first: its event was scheduled
            // 500 ms before, the fast one's 200 ms before.
            let (at, slow) = match (host.fast_dormant, host.slow_dormant) {
                (Some(f), Some(s)) if s <= f => (s, true),
                (Some(f), _) => (f, false),
                (None, Some(s)) => (s, true),
                (None, None) => break,
            };
            if at >= before {
                break;
            }
            debug_assert!(!host.busy, "a host with stopped ticks had work");
            let scale = host.draw_job_scale();
            let start = at.max(host.busy_until);
            let end = start + scale_cost(host.profile.timer_tick, scale);
            host.busy_total += end - start;
            host.busy_until = end;
            let seen = if end < before { end } else { at };
            last = Some(last.map_or(seen, |l: SimTime| l.max(seen)));
            if slow {
                host.slow_ticks += 1;
                host.slow_dormant = Some(at + SLOW_TICK);
            } else {
                let interval = host.fast_interval.expect("a fast tick chain");
                host.fast_dormant = Some(at + interval);
            }
        }
        last
    }

    /// Work comes to a host: its stopped ticks are replayed up to now and
    /// their chains go on at the same phase.
    pub(super) fn wake_host(&mut self, h: HostId) {
        self.catch_up_ticks(h);
        // Slow first: its event would have been scheduled first (see `replay_ticks`).
        if let Some(at) = self.hosts[h].slow_dormant.take() {
            self.events.schedule(at, Event::SlowTick(h));
        }
        if let Some(at) = self.hosts[h].fast_dormant.take() {
            self.events.schedule(at, Event::FastTick(h));
        }
    }

    /// Count the endpoint in or out of its host's live endpoints.
    pub(super) fn note_finished(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        let finished =
            e.app_done && e.tcb.state == State::Closed && e.tcb.timers_idle() && !e.timer_queued;
        if finished != e.finished {
            e.finished = finished;
            let host = &mut self.hosts[e.host];
            if finished {
                host.live_eps -= 1;
            } else {
                host.live_eps += 1;
            }
        }
    }

    /// An endpoint's timer event. A deadline that moved later meanwhile gets
    /// one new event (not one per change: an ACK restarting the retransmit
    /// timer costs nothing until the old deadline comes); one that came due
    /// is interrupt work for the host's CPU.
    pub(super) fn conn_timer(&mut self, ep: usize, gen: u64) {
        let e = &mut self.eps[ep];
        if gen != e.timer_gen {
            // Superseded by an earlier deadline armed since.
            return;
        }
        e.timer_at = None;
        match e.tcb.next_timer() {
            Some(due) if due <= self.now => {
                e.timer_queued = true;
                let h = e.host;
                self.enqueue(h, Job::ConnTimer { ep }, true);
            }
            Some(_) => self.arm_conn_timer(ep),
            None => {}
        }
    }

    /// Make sure an event comes by the endpoint's earliest timer deadline:
    /// schedule one unless an event no later than it is live already.
    pub(super) fn arm_conn_timer(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        if e.timer_queued {
            // The timer's work is queued; it arms the next deadline when done.
            return;
        }
        let Some(due) = e.tcb.next_timer() else {
            return;
        };
        if e.timer_at.is_some_and(|at| at <= due) {
            return;
        }
        e.timer_gen += 1;
        e.timer_at = Some(due);
        let event = Event::ConnTimer {
            ep,
            gen: e.timer_gen,
        };
        self.events.schedule(due.max(self.now), event);
    }
}
