//! A host's CPU: a serial resource with two levels, interrupt work before
//! process work, no piece preempted (see the world's head). Here are the
//! host's state, the queueing and dispatch of its work, the execution of one
//! piece (what it touches, what it does, what it leaves armed), and the
//! jitter of its costs. Apart because it is the model of a host, not of the
//! network or the applications.

use super::{Event, World};
use crate::host::profile::HostProfile;
use crate::sim::net::HostId;
use crate::tcp::TimerModel;
use crate::time::SimTime;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A piece of work for a host's CPU: interrupt work (input, ticks, timers)
/// or process work (an application's step).
#[derive(Copy, Clone, Debug)]
pub(super) enum Job {
    Input { ep: usize, token: usize },
    FastTick,
    SlowTick,
    ConnTimer { ep: usize },
    App { ep: usize },
}

pub(super) struct Host {
    pub(super) profile: HostProfile,
    /// Period of the host's fast (delayed-ACK) timer: its slow-tick TCP
    /// flavour's (the shortest, should connections of several flavours share
    /// the host). None: no connection counts slow ticks, the host has no ticks.
    pub(super) fast_interval: Option<SimTime>,
    /// Draws the variation of each piece of work's cost.
    pub(super) jitter: ChaCha8Rng,
    pub(super) busy: bool,
    /// Total length of the pieces of work started so far, and when the last ends.
    pub(super) busy_total: SimTime,
    pub(super) busy_until: SimTime,
    pub(super) interrupts: VecDeque<Job>,
    pub(super) processes: VecDeque<Job>,
    pub(super) endpoints: Vec<usize>,
    /// Endpoints that had a delayed ACK pending under slow ticks when last
    /// touched: the fast tick serves these, not every connection.
    pub(super) delack: Vec<usize>,
    /// Endpoints with a slow timer running, by the tick it expires at: the
    /// slow tick serves these; the others count its ticks when next touched.
    /// An entry is live while it is its endpoint's `slow_at`; one whose
    /// timer was pushed later since is put back at the new tick when it comes.
    pub(super) slow: BinaryHeap<Reverse<(u64, usize)>>,
    /// Slow ticks so far.
    pub(super) slow_ticks: u64,
    /// Endpoints not yet finished (see `Endpoint::finished`).
    pub(super) live_eps: usize,
    /// A tick chain stopped while the host had nothing left to do, and the
    /// time of its next tick: its ticks are replayed (CPU time, jitter draws)
    /// only if work comes again (see `World::wake_host`).
    pub(super) fast_dormant: Option<SimTime>,
    pub(super) slow_dormant: Option<SimTime>,
}

impl World {
    pub(super) fn enqueue(&mut self, h: HostId, job: Job, interrupt: bool) {
        self.wake_host(h);
        let host = &mut self.hosts[h];
        if interrupt {
            host.interrupts.push_back(job);
        } else {
            host.processes.push_back(job);
        }
        if !host.busy {
            self.dispatch(h);
        }
    }

    /// Start the next piece of work on a free CPU.
    pub(super) fn dispatch(&mut self, h: HostId) {
        let host = &mut self.hosts[h];
        debug_assert!(!host.busy);
        let Some(job) = host
            .interrupts
            .pop_front()
            .or_else(|| host.processes.pop_front())
        else {
            return;
        };
        host.busy = true;
        let end = self.execute(h, job);
        let host = &mut self.hosts[h];
        host.busy_total += end - self.now;
        host.busy_until = end;
        self.events.schedule(end, Event::CpuFree(h));
    }

    /// Do a piece of work at `now`; returns when the CPU is free again.
    /// Every cost of the piece is scaled by one jitter factor (`Host::draw_job_scale`).
    fn execute(&mut self, h: HostId, job: Job) -> SimTime {
        self.job_scale = self.hosts[h].draw_job_scale();
        // The endpoints this work touches, in host order: only their state can
        // change. TCP clocks (timestamps, fine-grained RTT) read the time the work starts.
        let mut touched = std::mem::take(&mut self.touched);
        self.touch(h, job, &mut touched);
        let t = self.work(h, job, &touched);
        for &ep in &touched {
            self.after_work(h, ep);
        }
        touched.clear();
        self.touched = touched;
        t
    }

    /// The first step of a piece of work: the endpoints it touches, in host
    /// order, each brought up to the host's slow ticks and to now.
    fn touch(&mut self, h: HostId, job: Job, touched: &mut Vec<usize>) {
        match job {
            Job::Input { ep, .. } | Job::ConnTimer { ep } | Job::App { ep } => touched.push(ep),
            // tcp_fasttimo: only a connection with a delayed ACK pending has work.
            Job::FastTick => {
                let host = &mut self.hosts[h];
                touched.append(&mut host.delack);
                touched.sort_unstable();
                for &ep in touched.iter() {
                    self.eps[ep].delack_listed = false;
                }
            }
            // tcp_slowtimo: only a connection whose timer expires now has work.
            Job::SlowTick => {
                let host = &mut self.hosts[h];
                let tick = host.slow_ticks + 1;
                while let Some(&Reverse((at, ep))) = host.slow.peek() {
                    if at > tick {
                        break;
                    }
                    host.slow.pop();
                    let e = &mut self.eps[ep];
                    if e.slow_at != Some(at) {
                        continue;
                    }
                    e.slow_at = None;
                    let Some(left) = e.tcb.next_slow_timer() else {
                        continue;
                    };
                    let due = e.ticks_seen + left as u64;
                    if due == tick {
                        touched.push(ep);
                    } else {
                        e.slow_at = Some(due);
                        host.slow.push(Reverse((due, ep)));
                    }
                }
                touched.sort_unstable();
            }
        }
        let ticks = self.hosts[h].slow_ticks;
        for &ep in touched.iter() {
            let e = &mut self.eps[ep];
            e.tcb.skip_slow_ticks((ticks - e.ticks_seen) as u32);
            e.ticks_seen = ticks;
            e.tcb.set_now(self.now);
        }
    }

    /// The second: the work itself, from `now`, with the costs it charges;
    /// returns when the CPU is free again.
    fn work(&mut self, h: HostId, job: Job, touched: &[usize]) -> SimTime {
        let mut t = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        match job {
            Job::Input { ep, token } => self.input(h, ep, token, &mut t, &mut out),
            Job::FastTick => {
                t += self.scaled(self.hosts[h].profile.timer_tick);
                for &ep in touched {
                    self.eps[ep].tcb.fast_timer(&mut out);
                    self.charge_and_send(ep, &mut t, &mut out);
                }
            }
            Job::SlowTick => {
                t += self.scaled(self.hosts[h].profile.timer_tick);
                self.hosts[h].slow_ticks += 1;
                for &ep in touched {
                    self.eps[ep].ticks_seen += 1;
                    let wake = self.eps[ep].tcb.slow_timer(&mut out);
                    self.charge_and_send(ep, &mut t, &mut out);
                    if wake.closed {
                        self.wake_app(ep);
                    }
                }
            }
            Job::ConnTimer { ep } => {
                // One timer routine's run, as a tick costs.
                self.eps[ep].timer_queued = false;
                t += self.scaled(self.hosts[h].profile.timer_tick);
                let wake = self.eps[ep].tcb.expire_timers(&mut out);
                self.charge_and_send(ep, &mut t, &mut out);
                if wake.closed {
                    self.wake_app(ep);
                }
            }
            Job::App { ep } => {
                self.eps[ep].app_queued = false;
                self.run_app(h, ep, &mut t, &mut out);
            }
        }
        self.scratch = out;
        t
    }

    /// The last, for each endpoint the work touched: its timers armed, its
    /// transfer's circular wait and series noted, its place in the host's
    /// fast- and slow-tick lists, whether it is finished.
    fn after_work(&mut self, h: HostId, ep: usize) {
        // The work may have armed, moved or stopped the connection's timers.
        self.arm_conn_timer(ep);
        self.track_circular_wait(self.eps[ep].transfer);
        if self.cwnd_series.is_some() {
            self.sample_cwnd(ep);
        }
        let e = &mut self.eps[ep];
        if !e.delack_listed
            && e.tcb.delack_pending()
            && e.tcb.policy().timers == TimerModel::SlowTick
        {
            e.delack_listed = true;
            self.hosts[h].delack.push(ep);
        }
        if let Some(left) = e.tcb.next_slow_timer() {
            let due = e.ticks_seen + left as u64;
            if e.slow_at.is_none_or(|at| at > due) {
                e.slow_at = Some(due);
                self.hosts[h].slow.push(Reverse((due, ep)));
            }
        }
        self.note_finished(ep);
    }

    /// A cost of the piece of work being executed, with its jitter.
    pub(super) fn scaled(&self, cost: SimTime) -> SimTime {
        scale_cost(cost, self.job_scale)
    }

    /// A host's CPU busy time up to `at`: the work started so far, less what the
    /// last piece still has to run after `at`. (Read inside a piece of work on
    /// the same host it leaves that piece out: an error of at most one piece.)
    pub(super) fn cpu_busy_at(&self, h: HostId, at: SimTime) -> SimTime {
        let host = &self.hosts[h];
        host.busy_total
            .saturating_sub(host.busy_until.saturating_sub(at))
    }
}

impl Host {
    /// The jitter factor of a piece of work starting now, per mille: real
    /// hosts never take the same time twice (cache state, interrupts, other
    /// processes), so every cost of the piece is scaled by one factor drawn
    /// uniformly from 1 ± jitter.
    pub(super) fn draw_job_scale(&mut self) -> u64 {
        let j = self.profile.jitter_permille as u64;
        if j > 0 {
            1000 - j + self.jitter.gen_range(0..=2 * j)
        } else {
            1000
        }
    }
}

/// A cost scaled by a jitter factor per mille.
pub(super) fn scale_cost(cost: SimTime, scale: u64) -> SimTime {
    // In u64 when the product fits (any cost under about 5 hours): a u128
    // division is a library call, and this runs for every cost of every job.
    match cost.0.checked_mul(scale) {
        Some(p) => SimTime(p / 1000),
        None => SimTime((cost.0 as u128 * scale as u128 / 1000) as u64),
    }
}
