//! Building the world from a scenario: its hosts (their fast tick and cost
//! jitter), both endpoints of every transfer (TCP, sockets, applications),
//! and the random phases of the hosts' global timers. Apart from the loop: it
//! runs once, before the first event.

use super::apps::{App, Starts};
use super::cpu::Host;
use super::probe::Probe;
use super::{Endpoint, Event, Protocol, Scenario, World};
use crate::host::profile::HostProfile;
use crate::host::socket::SendMbufs;
use crate::host::udp::UdpSock;
use crate::rng;
use crate::sim::event::EventQueue;
use crate::sim::net::{HostId, Network};
use crate::tcp::flavour::SLOW_TICK;
use crate::tcp::{Seq, Tcb, TimerModel};
use crate::time::SimTime;
use rand::Rng;
use std::collections::{BinaryHeap, VecDeque};

impl World {
    /// The world at t = 0 over `net`: its hosts, no endpoints yet.
    pub(super) fn new(scenario: &Scenario, net: Network) -> World {
        World {
            now: SimTime::ZERO,
            events: EventQueue::new(),
            net,
            hosts: scenario
                .hosts
                .iter()
                .enumerate()
                .map(|(h, p)| new_host(scenario, h, p))
                .collect(),
            eps: Vec::new(),
            segs: Vec::new(),
            gathers: Vec::new(),
            next_dgram: 0,
            free_tokens: Vec::new(),
            trace: scenario.trace.then(Vec::new),
            cwnd_series: scenario
                .series
                .then(|| vec![Vec::new(); scenario.transfers.len()]),
            scratch: Vec::new(),
            job_scale: 1000,
            deliveries: Vec::new(),
            adapter_drops: vec![[0; 2]; scenario.transfers.len()],
            wait_since: vec![None; scenario.transfers.len()],
            wait_total: vec![SimTime::ZERO; scenario.transfers.len()],
            probes: scenario
                .transfers
                .iter()
                .map(|t| Probe {
                    hosts: [t.sender, t.receiver],
                    ..Probe::default()
                })
                .collect(),
            starts: Starts::new(&scenario.transfers),
            apps_running: 0,
            touched: Vec::new(),
            events_handled: 0,
            budget_cut: None,
            capture: None,
            loop_end: SimTime::ZERO,
        }
    }

    /// Both ends of transfer `i`: endpoints `2i` (the transmitter) and
    /// `2i + 1` (the receiver), each in its host's list; a transfer that
    /// waits for none starts at its offset.
    pub(super) fn open_transfer(&mut self, scenario: &Scenario, i: usize) {
        let t = &scenario.transfers[i];
        let mss = t.mtu - crate::tcp::TCPIP_HEADER;
        for is_sender in [true, false] {
            let (host, circuit_out) = if is_sender {
                (t.sender, t.circuit)
            } else {
                (t.receiver, t.return_circuit)
            };
            // Initial send sequence numbers: distinct, fixed (they never matter to timing).
            let iss = Seq(if is_sender { 1_000_000 } else { 5_000_000 } + 100_000 * i as u32);
            let (sndbuf, rcvbuf) = match (t.transaction, is_sender) {
                // netperf -s and -S: each end's buffers, both ways (both ends write).
                (Some(_), true) => (t.sndbuf, t.sndbuf),
                (Some(_), false) => (t.rcvbuf, t.rcvbuf),
                (None, _) => (t.sndbuf, t.rcvbuf),
            };
            let flavour = if is_sender {
                t.flavour
            } else {
                t.receiver_flavour
            };
            let mut tcb = Tcb::new(flavour, mss, sndbuf, rcvbuf, iss);
            tcb.nodelay = t.nodelay;
            let udp = (t.protocol == Protocol::Udp).then(|| UdpSock::new(t.rcvbuf));
            let app = App::new(scenario, i, is_sender, &mut tcb, udp.is_some());
            let ep = self.eps.len();
            self.eps.push(Endpoint {
                host,
                udp,
                mtu: t.mtu,
                transfer: i,
                is_sender,
                tcb,
                app,
                circuit_out,
                encap_header: t.encap_header,
                mbufs: SendMbufs::default(),
                app_queued: false,
                // The receiver is already waiting in read() (ttcp -r starts first).
                app_blocked: !is_sender,
                app_sleeping: false,
                app_done: false,
                started: !is_sender,
                timer_at: None,
                timer_gen: 0,
                timer_queued: false,
                delack_listed: false,
                slow_at: None,
                ticks_seen: 0,
                finished: false,
            });
            self.hosts[host].endpoints.push(ep);
            self.hosts[host].live_eps += 1;
            self.apps_running += 1;
            if is_sender && t.after.is_empty() {
                self.events.schedule(t.start, Event::Start { ep });
            }
        }
    }

    /// Start each host's global timers.
    pub(super) fn start_host_timers(&mut self, scenario: &Scenario) {
        // The global timers of each host start at a random phase: a delayed ACK
        // waits anywhere from 0 to 200 ms. A host whose connections all keep
        // timers of their own has none.
        for h in 0..self.hosts.len() {
            let Some(fast_interval) = self.hosts[h].fast_interval else {
                continue;
            };
            let mut r = rng::stream(
                scenario.seed,
                scenario.replication,
                rng::ids::host_timers(h),
            );
            let fast = SimTime(r.gen_range(0..fast_interval.0));
            let slow = SimTime(r.gen_range(0..SLOW_TICK.0));
            self.events.schedule(fast, Event::FastTick(h));
            self.events.schedule(slow, Event::SlowTick(h));
        }
    }
}

/// Host `h` of a scenario, idle.
fn new_host(scenario: &Scenario, h: HostId, p: &HostProfile) -> Host {
    Host {
        profile: p.clone(),
        fast_interval: scenario
            .transfers
            .iter()
            .flat_map(|t| [(t.sender, t.flavour), (t.receiver, t.receiver_flavour)])
            .filter(|&(host, _)| host == h)
            .map(|(_, f)| f.policy())
            .filter(|p| p.timers == TimerModel::SlowTick)
            .map(|p| p.delack_interval)
            .min(),
        jitter: rng::stream(
            scenario.seed,
            scenario.replication,
            rng::ids::host_jitter(h),
        ),
        busy: false,
        busy_total: SimTime::ZERO,
        busy_until: SimTime::ZERO,
        interrupts: VecDeque::new(),
        processes: VecDeque::new(),
        endpoints: Vec::new(),
        delack: Vec::new(),
        slow: BinaryHeap::new(),
        slow_ticks: 0,
        live_eps: 0,
        fast_dormant: None,
        slow_dormant: None,
    }
}
