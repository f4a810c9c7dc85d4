//! The simulated world: hosts with a CPU each, TCP connections driven by
//! applications, and the cell network between them.
//!
//! A host's CPU is a serial resource with two levels: interrupt work (segment
//! arrivals, timers) is taken before process work (application reads and
//! writes) whenever the CPU comes free; a piece of work is not preempted. A
//! piece's state changes happen when it starts; the CPU is then busy for its
//! cost, and each segment it sends leaves the host when the CPU has paid for
//! it (tcp_output, checksum, copy to the adapter).
//!
//! The run types it takes and gives live in `sim::scenario` (re-exported
//! here); the world's pieces each hold one idea: building it from a scenario
//! (`build`), checking a scenario first (`validate`), the CPUs and their work
//! (`cpu`), the hosts' ticks and the connections' timers (`timers`), the
//! applications and when transfers start (`apps`), packets between the hosts
//! and the network (`packets`), the facts gathered for explanations and
//! series (`probe`), the circular wait (`circular_wait`), and the results
//! (`results`). This file holds the state they share and the event loop.

mod apps;
mod build;
mod circular_wait;
mod cpu;
mod packets;
mod probe;
mod results;
mod timers;
mod validate;

pub use super::scenario::{
    reason_counts, CwndSample, KeyPath, ProbeResult, Protocol, RunResult, Scenario, ScenarioError,
    TraceRecord, TransferResult, TransferSpec,
};
pub use validate::{validate, MTU_RANGE};

use super::capture::{CaptureCounts, CellCapture};
use super::clock::{Clock, FlatOut};
use super::event::EventQueue;
use super::guard;
use super::net::{CircuitId, Delivery, HostId, Network, Place};
use crate::host::socket::SendMbufs;
use crate::host::udp::UdpSock;
use crate::tcp::{Segment, Tcb};
use crate::time::SimTime;
use apps::{App, Starts};
use cpu::{Host, Job};
use packets::Packet;
use probe::Probe;
use std::io::Write;

/// One end of a transfer: its TCP (or UDP socket), its application, and
/// where it stands with its host's CPU and timers.
struct Endpoint {
    host: HostId,
    /// A UDP endpoint; its `tcb` then stays closed and inert.
    udp: Option<UdpSock>,
    /// UDP: the interface MTU datagrams are fragmented to.
    mtu: u32,
    transfer: usize,
    is_sender: bool,
    tcb: Tcb,
    app: App,
    circuit_out: CircuitId,
    encap_header: u32,
    /// Where the send buffer's host buffers begin (what the adapter gathers from).
    mbufs: SendMbufs,
    /// An App job is queued on the host.
    app_queued: bool,
    /// The application sleeps in sbwait until a wakeup.
    app_blocked: bool,
    /// A paced application sleeps until its next block falls due.
    app_sleeping: bool,
    app_done: bool,
    started: bool,
    /// The connection's own timers (`TimerModel::PerConnection`): the time of
    /// the one live `Event::ConnTimer`, its generation (older events are
    /// stale), and whether its work waits for the CPU.
    timer_at: Option<SimTime>,
    timer_gen: u64,
    timer_queued: bool,
    /// In its host's list of endpoints the fast tick serves (`Host::delack`).
    delack_listed: bool,
    /// The slow tick of its live entry in `Host::slow`.
    slow_at: Option<u64>,
    /// The host's slow ticks this connection has counted (`Tcb::skip_slow_ticks`
    /// counts the rest when it is next touched).
    ticks_seen: u64,
    /// Nothing can come of this endpoint any more: its application is done,
    /// its connection closed, no timer runs (counted in `Host::live_eps`).
    finished: bool,
}

#[derive(Copy, Clone, Debug)]
enum Event {
    CpuFree(HostId),
    FastTick(HostId),
    SlowTick(HostId),
    /// An endpoint's timer deadline, as armed in generation `gen`.
    ConnTimer {
        ep: usize,
        gen: u64,
    },
    Transmit {
        ep: usize,
        token: usize,
    },
    Start {
        ep: usize,
    },
    BlockDue {
        ep: usize,
    },
    /// A UDP receiver stops waiting for more.
    UdpLinger {
        ep: usize,
    },
}

/// The world while it runs.
struct World {
    now: SimTime,
    events: EventQueue<Event>,
    net: Network,
    hosts: Vec<Host>,
    eps: Vec<Endpoint>,
    /// Packets in flight, by token (the sending endpoint and the packet).
    segs: Vec<(usize, Packet)>,
    /// By token: the CPCS payload offsets where a 1 KB cluster mbuf of the
    /// packet ends and the next buffer begins (what `Network::send_gathered` takes).
    gathers: Vec<Vec<u32>>,
    /// Next UDP datagram id.
    next_dgram: u64,
    free_tokens: Vec<usize>,
    trace: Option<Vec<TraceRecord>>,
    /// Per transfer, its sender's cwnd series (None: series off).
    cwnd_series: Option<Vec<Vec<CwndSample>>>,
    scratch: Vec<Segment>,
    /// The jitter factor of the piece of work being executed, per mille.
    job_scale: u64,
    deliveries: Vec<Delivery>,
    /// Per transfer: PDUs refused by the sender's and the receiver's interface queue.
    adapter_drops: Vec<[u64; 2]>,
    /// Per transfer: when the circular wait began (if it holds now), and its total.
    wait_since: Vec<Option<SimTime>>,
    wait_total: Vec<SimTime>,
    /// Per transfer: facts for the explanation of its limit.
    probes: Vec<Probe>,
    starts: Starts,
    /// Endpoints whose application is not done: the run ends at none.
    apps_running: usize,
    /// The endpoints the piece of work being executed touched, in host order.
    touched: Vec<usize>,
    events_handled: u64,
    /// Where the event budget ran out, if it did: the run ends there, cut.
    budget_cut: Option<SimTime>,
    /// The cell tester, if one is on (`sim::capture`).
    capture: Option<Capture>,
    /// When the event loop stopped: the run's end for the capture.
    loop_end: SimTime,
}

/// Run a scenario to the end of all transfers (or the time limit), flat out.
pub fn run(scenario: &Scenario) -> Result<RunResult, ScenarioError> {
    run_with_clock(scenario, &mut FlatOut)
}

/// Run a scenario with its events paced by `clock` (see `sim::clock`).
pub fn run_with_clock(
    scenario: &Scenario,
    clock: &mut dyn Clock,
) -> Result<RunResult, ScenarioError> {
    run_captured(scenario, clock, None).map(|(r, _)| r)
}

/// A capture's file: any writer (a buffered file in practice).
pub type Capture = CellCapture<Box<dyn Write>>;

/// Run a scenario, with a cell tester on one place when `tester` is given:
/// `(place, file)`. The file's cells are written as the run goes; the run's
/// results do not depend on it.
pub fn run_captured(
    scenario: &Scenario,
    clock: &mut dyn Clock,
    tester: Option<(Place, Box<dyn Write>)>,
) -> Result<(RunResult, Option<CaptureCounts>), ScenarioError> {
    validate(scenario)?;
    let mut net = Network::new(scenario.topology.clone(), scenario.fidelity)
        .map_err(|e| ScenarioError::run(format!("topology: {e}")))?;
    let capture = match tester {
        Some((place, out)) => Some(open_capture(&mut net, place, out)?),
        None => None,
    };
    if scenario.series {
        net.set_queue_series(true);
        net.set_abr_series(true);
    }
    let mut world = World::new(scenario, net);
    for i in 0..scenario.transfers.len() {
        world.open_transfer(scenario, i);
    }
    world.start_host_timers(scenario);
    world.capture = capture;
    world.run(scenario.time_limit, scenario.event_budget, clock)?;
    let results = world.results(scenario);
    // After the results: settling the network for the capture moves its counters.
    let counts = match world.capture.take() {
        Some(c) => Some(
            c.finish(&mut world.net, world.loop_end)
                .map_err(|e| ScenarioError::run(format!("cells: {e}")))?,
        ),
        None => None,
    };
    Ok((results, counts))
}

/// A cell tester on `place` of the network, writing to `out`.
fn open_capture(
    net: &mut Network,
    place: Place,
    out: Box<dyn Write>,
) -> Result<Capture, ScenarioError> {
    if net.link_cell_time(place).is_none() {
        return Err(ScenarioError::run(format!(
            "cells: {place:?} is not a switch output port or adapter of the network"
        )));
    }
    CellCapture::new(out, place, net).map_err(|e| ScenarioError::run(format!("cells: {e}")))
}

impl World {
    /// The event loop: each step costs the same whatever the number of hosts
    /// and connections (no step scans them all). It ends when every
    /// application is done, at the time limit, out of events, or with its event
    /// budget spent (`budget_cut`); or with an error when a stop is requested.
    fn run(
        &mut self,
        limit: SimTime,
        budget: u64,
        clock: &mut dyn Clock,
    ) -> Result<(), ScenarioError> {
        let mut steps: u64 = 0;
        loop {
            if let Some(c) = &mut self.capture {
                c.take(&mut self.net, self.now);
            }
            if self.apps_running == 0 {
                self.loop_end = self.now;
                return Ok(());
            }
            // The one place a run looks outside itself: its event budget and a stop request.
            steps += 1;
            if steps.is_multiple_of(guard::CHECK_EVERY) && guard::check(steps, budget)? {
                self.budget_cut = Some(self.now);
                break;
            }
            let t_ev = self.events.peek_time();
            let t_net = self.net.poll_at();
            let next = match (t_ev, t_net) {
                (None, None) => break,
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (Some(a), Some(b)) => a.min(b),
            };
            if next > limit {
                // Cut by the limit: the capture takes every cell started by then.
                self.loop_end = limit;
                break;
            }
            clock.advance_to(next);
            self.now = next;
            if t_net == Some(next) {
                // The network first at equal times: arrivals precede same-instant work.
                let mut deliveries = std::mem::take(&mut self.deliveries);
                self.net.poll(next, &mut deliveries);
                for d in deliveries.drain(..) {
                    self.deliver(d);
                }
                self.deliveries = deliveries;
                continue;
            }
            let (_, ev) = self.events.pop().expect("peeked");
            self.events_handled += 1;
            self.handle(ev);
        }
        // At the time limit, out of events or budget: the run ends at its last event
        // up to where it was cut, counting the ticks of idle hosts as if they had run.
        let end = self.budget_cut.unwrap_or(limit);
        self.loop_end = self.loop_end.max(self.now);
        for h in 0..self.hosts.len() {
            if let Some(last) = self.replay_ticks(h, SimTime(end.0.saturating_add(1))) {
                self.now = self.now.max(last);
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::CpuFree(h) => {
                self.hosts[h].busy = false;
                self.dispatch(h);
            }
            Event::FastTick(h) => self.tick(h, false),
            Event::SlowTick(h) => self.tick(h, true),
            Event::ConnTimer { ep, gen } => self.conn_timer(ep, gen),
            Event::Transmit { ep, token } => self.transmit(ep, token),
            Event::Start { ep } => {
                let h = self.eps[ep].host;
                self.eps[ep].started = true;
                self.starts.started_at[self.eps[ep].transfer] = Some(self.now);
                self.eps[ep].app_queued = true;
                if let App::Source(s) = &mut self.eps[ep].app {
                    if let Some(period) = s.next_period() {
                        self.events
                            .schedule(self.now + period, Event::BlockDue { ep });
                    }
                }
                self.enqueue(h, Job::App { ep }, false);
            }
            Event::BlockDue { ep } => self.block_due(ep),
            Event::UdpLinger { ep } => {
                let e = &mut self.eps[ep];
                if let App::Sink(s) = &mut e.app {
                    s.finished = s.last_read.or(Some(self.now));
                }
                self.app_finished(ep);
                self.note_finished(ep);
            }
        }
    }

    /// The other end of an endpoint's connection.
    fn peer(&self, ep: usize) -> usize {
        ep ^ 1
    }
}

#[cfg(test)]
mod test;
