//! The emulator (`--engine emu`, Linux): real kernel TCP between network
//! namespaces, joined by the simulator's own cell network in real time.
//!
//! ```text
//!  ns a: kernel TCP ─▶ tun ─read─▶ RFC 1483 + AAL5, check CRC ─▶ Network::send ─┐
//!                                                                                │ the simulator's adapters,
//!  ns b: kernel TCP ◀─ tun ◀─write─ the PDU's datagram ◀──────── Network::poll ◀┘ links, ports, UPC (sim::net)
//! ```
//!
//! One model per mechanism: the cells, their spacing, the switch buffers, drop
//! policies and policers are `sim::net::Network`, driven through the clock
//! seam (`sim::clock::WallClock`) instead of the simulator's event loop. Each
//! datagram read from a host's TUN device is encapsulated (LLC/SNAP or VC-mux)
//! into a real CPCS-PDU (`wire::aal5`), handed to the network at the moment it
//! was read, and written into the receiver's TUN when the network says its last
//! cell arrived; a PDU that lost a cell never arrives. The gap between that
//! ideal instant and the actual write is the emulator's *lateness*, recorded
//! per PDU: a run is real-time when its p99 stays within one cell time of the
//! slowest link.
//!
//! A host's TUN device is read only while its adapter's interface queue has
//! room (`ifq`): a host writing faster than its adapter sends is held back at
//! the host, its kernel dropping beyond the TUN device's `txqueuelen`, as a real
//! Linux host's driver stops its transmit queue.
//!
//! A datagram goes on the circuit of its connection: the transfer whose sink
//! port it is addressed to (forward) or comes from (return); anything else
//! between two hosts (ICMP, say) goes on the first circuit between them.

mod ifq;
mod tap;
mod tun;
mod wait;

use crate::sim::clock::WallClock;
use crate::sim::net::{CircuitId, Delivery, Fidelity, Network};
use crate::sim::spec::{PolicerResult, PortResult, RunSpec};
use crate::time::SimTime;
use crate::wire::aal5::{self, CpcsPdu};
use crate::wire::llc_snap::Encap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use ifq::HostQueue;
pub use tap::PcapSpec;
pub use tun::{enter_netns, SetupError, Tun};

/// An empty TUN read takes about a µs; reading a 9 KB datagram and building its
/// PDU (two CRC-32 passes) about 7: closer than this to a cell event, the loop
/// waits for the event instead. On a loaded machine, or with the network's
/// models doing more per PDU sent (an ABR source places its cells as it takes the
/// PDU), reads take longer: the guard follows the recent reads (`wait::Recent`)
/// up to READ_GUARD_MAX, a third of a 9 KB datagram's time on OC-12c.
const READ_GUARD: Duration = Duration::from_micros(12);
const READ_GUARD_MAX: Duration = Duration::from_micros(40);
/// The longest a datagram waiting in a TUN device is left there for a gap
/// between cell events as long as the guard: with an ABR circuit's RM cells the
/// events can follow each other for longer than that. Under half a 9 KB
/// datagram's time on OC-12c, so a sender's datagrams do not queue behind it.
const READ_WAIT: Duration = Duration::from_micros(50);
/// The longest the loop sleeps without looking at its stop flag.
const TICK: Duration = Duration::from_millis(10);
/// The loop's recent activities kept to find what a late delivery waited for.
const BUSY_LOG: usize = 64;
/// Larger than any IP datagram.
const BUF_LEN: usize = 65_536;

/// What the emulator needs besides the simulator's spec: each host's
/// namespace, TUN device and address (in the order of `run.hosts`), and each
/// connection's sink port.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuSpec {
    pub run: RunSpec,
    pub hosts: Vec<EmuHost>,
    /// Per connection (in `run.connections` order): the sink's port.
    pub ports: Vec<u16>,
    /// The CPU the loop's thread keeps to, if any. The caller steers the hosts'
    /// kernel input to the other CPUs (receive packet steering), so that a TUN
    /// write only queues the datagram there instead of running the receiver's IP
    /// and TCP input, and its ACK, on this thread while later cells fall due.
    #[serde(default)]
    pub cpu: Option<usize>,
    /// `--pcap`: the cells leaving one switch port, into a file.
    #[serde(default)]
    pub pcap: Option<PcapSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuHost {
    /// `/run/netns/NAME`.
    pub netns: String,
    pub tun: String,
    pub address: Ipv4Addr,
}

/// Percentiles of a per-PDU duration (the lateness, a TUN write), µs.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Lateness {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Lateness {
    /// p50, p99 and max of durations in ps (sorted in place), in µs.
    fn of(ps: &mut [u64]) -> Lateness {
        ps.sort_unstable();
        let pick = |q: f64| -> f64 {
            if ps.is_empty() {
                return 0.0;
            }
            let i = ((ps.len() - 1) as f64 * q).round() as usize;
            ps[i] as f64 / 1e6
        };
        Lateness {
            p50: pick(0.5),
            p99: pick(0.99),
            max: pick(1.0),
        }
    }
}

/// What the loop's thread was busy with: a PDU that fell due during it waited
/// for its end.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Busy {
    /// Reading a datagram from a TUN device and encapsulating it.
    Read,
    /// Finding the TUN device empty.
    Poll,
    Write,
    Sleep,
}

/// The PDUs delivered later than one cell time of the slowest link, by what the
/// emulator's thread was doing when each fell due: what bounds the lateness.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LateCauses {
    /// Writing another PDU's datagram into a TUN device.
    pub write: u64,
    /// Reading a TUN device (and encapsulating what it read), or finding it empty.
    pub read: u64,
    /// Sleeping: the wake-up came later than the loop's spin margin (a timer's
    /// latency, or the core busy with another task).
    pub sleep: u64,
    /// Anything else: the network's own work, or the thread preempted.
    pub other: u64,
}

/// What one circuit saw, as the simulator's per-connection columns name it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CircuitResult {
    pub pdus_sent: u64,
    pub pdus_delivered: u64,
    pub pdus_lost: u64,
    pub cells_lost: u64,
    pub cells_policed: u64,
    pub cells_tagged: u64,
    pub cells_lost_clp: u64,
    pub pdus_dropped_at_adapter: u64,
}

/// Per connection: its data circuit and its return (ACK) circuit, and the data
/// circuit's ABR source when it is ABR.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionCircuits {
    pub data: CircuitResult,
    pub ack: CircuitResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrResult>,
}

/// An ABR data circuit's source (`sim::net::abr`), in the simulator's row terms
/// (`sim::spec::report`): ACR at the end and lowest (bit/s of cells), RM cells
/// sent, returned and lost, the time at MCR, and with `series` the ACR over time
/// (`[t_s, acr_bps]` on the network's clock).
#[derive(Debug, Clone, Serialize)]
pub struct AbrResult {
    pub abr_acr_bps: f64,
    pub abr_acr_min_bps: f64,
    pub abr_acr_mean_bps: f64,
    pub abr_frm_sent: u64,
    pub abr_brm_returned: u64,
    pub abr_rm_lost: u64,
    pub abr_time_at_mcr_s: f64,
    pub acr_series: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DatagramCounts {
    /// Read from the TUN devices.
    pub read: u64,
    /// Written into a receiver's TUN.
    pub delivered: u64,
    /// To an address no testbed host has, or not IPv4: dropped.
    pub unroutable: u64,
    /// Too large for one AAL5 PDU (cannot happen at the hosts' MTU).
    pub oversized: u64,
    /// Failed the AAL5 CRC or the LLC/SNAP check (a bug if ever seen).
    pub corrupt: u64,
    /// The receiving kernel refused the write.
    pub write_errors: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmuReport {
    pub lateness_us: Lateness,
    /// How long each TUN write took (the receiving kernel's IP and TCP input, its
    /// ACK included, run on the emulator's thread): what delays later deliveries.
    pub write_us: Lateness,
    pub late_pdus: LateCauses,
    /// p99 lateness within one cell time of the slowest link.
    pub real_time: bool,
    pub slowest_cell_time_us: f64,
    pub pdus_timed: u64,
    pub datagrams: DatagramCounts,
    pub connections: Vec<ConnectionCircuits>,
    pub ports: Vec<PortResult>,
    pub policers: Vec<PolicerResult>,
    /// Wall-clock seconds the emulator ran, and its thread's CPU seconds.
    pub seconds: f64,
    /// When the network's time 0 was, s since the Unix epoch: the queue series'
    /// times are on the network's clock, the agents' on the system clock.
    pub clock_start_unix: f64,
    pub cpu_seconds: f64,
    /// Of the wall-clock seconds, those spent reading datagrams from the TUN
    /// devices (and encapsulating them) and writing them: the datagrams' own cost.
    /// The rest of the CPU seconds is the loop waiting for cell events: spinning,
    /// and looking at the TUN devices (an empty read) as it spins.
    pub read_seconds: f64,
    pub write_seconds: f64,
    /// Cells the links carried (every adapter's and port's), for the CPU cost per cell rate.
    pub cells_carried: u64,
    /// Whether the emulator's thread ran at a real-time scheduling priority.
    pub realtime_priority: bool,
    /// The CPU the emulator's thread kept to, if it was pinned.
    pub cpu: Option<usize>,
    /// How often the kernel took the CPU from the emulator's thread (involuntary
    /// context switches): each a late delivery if a PDU fell due meanwhile.
    pub preemptions: u64,
    /// `--pcap`: the cells written, or why the file is incomplete.
    pub pcap_cells: Option<u64>,
    pub pcap_error: Option<String>,
    /// Where the loop's time went besides reading and writing: the network's
    /// models (its events, `events` of them), and asleep between cell events.
    pub network_seconds: f64,
    pub events: u64,
    /// Finding the TUN devices empty (a system call each).
    pub poll_seconds: f64,
    /// Each datagram's read and encapsulation (what the read guard covers), and
    /// the largest guard taken (µs).
    pub read_us: Lateness,
    pub read_guard_max_us: f64,
    pub sleep_seconds: f64,
    pub sleeps: u64,
    /// Of the sleeps, those taken only to leave the CPU's other tasks their share
    /// (the kernel's fair server would otherwise take it in one 50 ms piece).
    pub yields: u64,
    /// How much later than asked the loop woke from each sleep that ran its time
    /// (the timer, the CPU waking, the kernel's work before it): what the spin
    /// margin before each cell event covers, and the largest margin used (µs).
    pub wake_us: Lateness,
    pub spin_margin_max_us: f64,
    /// The PDUs' lateness by powers of two: `[upper bound µs, PDUs]`, the first
    /// bin everything up to 1 µs, empty bins left out.
    pub lateness_histogram: Vec<(f64, u64)>,
    /// Per host (in `run.hosts` order): how often and how long its TUN device was
    /// left unread, its adapter's interface queue full (`ifq`).
    pub host_queues: Vec<HostQueue>,
}

/// How a datagram is assigned to a circuit.
#[derive(Debug, Clone, Copy)]
struct Route {
    sender: usize,
    receiver: usize,
    port: u16,
    data: CircuitId,
    ack: CircuitId,
}

pub struct Emulator {
    spec: RunSpec,
    net: Network,
    tuns: Vec<Tun>,
    addresses: Vec<Ipv4Addr>,
    routes: Vec<Route>,
    /// Per circuit: how its datagrams are encapsulated.
    encap: Vec<Encap>,
    /// PDUs in flight, by the token given to the network: the CPCS-PDU and
    /// where in it the datagram lies.
    in_flight: Vec<Option<(Vec<u8>, Range<usize>)>>,
    free: Vec<usize>,
    cpu: Option<usize>,
    lateness_ps: Vec<u64>,
    /// Per TUN write: how long the receiving kernel held this thread.
    write_ps: Vec<u64>,
    /// The loop's last activities: (start, end, what).
    busy: VecDeque<(SimTime, SimTime, Busy)>,
    /// Total time reading and writing.
    read_time: SimTime,
    write_time: SimTime,
    late: LateCauses,
    counts: DatagramCounts,
    slowest_cell: SimTime,
    /// `--pcap`: the cells leaving one port.
    tap: Option<tap::CellTap>,
    /// Sleeps between cell events and the spin margin before each.
    waiter: wait::Waiter,
    /// Total time the network's models took (`Network::poll` with events due).
    network_time: SimTime,
    /// Total time finding the TUN devices empty.
    poll_time: SimTime,
    /// No read starts closer than this to a cell event.
    read_guard: wait::Recent,
    /// Per datagram: its read and encapsulation.
    read_ps: Vec<u64>,
    /// Per host: its transmit queue, stopped while its adapter's is full.
    queues: ifq::HostQueues,
}

impl Emulator {
    /// Build the network from the simulator's spec and open every host's TUN
    /// device in its namespace (the namespaces exist already).
    pub fn open(spec: EmuSpec) -> Result<Emulator, SetupError> {
        let mut emu = Emulator::build(&spec)?;
        if let Some(p) = &spec.pcap {
            emu.tap = Some(tap::CellTap::open(p, &mut emu.net)?);
            // Its link and cell time beside it, as the simulator's (`cellbench cells`).
            let scenario = spec.run.scenario().map_err(|e| SetupError(e.to_string()))?;
            spec.run
                .describe_capture(&scenario, &p.port.to_string(), None, "emu", &p.path)
                .map_err(|e| SetupError(e.to_string()))?;
        }
        emu.tuns = spec
            .hosts
            .iter()
            .map(|h| Tun::open_in(&h.netns, &h.tun))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(emu)
    }

    /// Everything but the TUN devices.
    fn build(spec: &EmuSpec) -> Result<Emulator, SetupError> {
        let scenario = spec.run.scenario().map_err(|e| SetupError(e.to_string()))?;
        if spec.hosts.len() != spec.run.hosts.len() {
            return Err(SetupError(format!(
                "{} emulated hosts for {} testbed hosts",
                spec.hosts.len(),
                spec.run.hosts.len()
            )));
        }
        if spec.ports.len() != scenario.transfers.len() {
            return Err(SetupError(format!(
                "{} sink ports for {} connections",
                spec.ports.len(),
                scenario.transfers.len()
            )));
        }
        let topo = &scenario.topology;
        if let Some(p) = spec.pcap.as_ref().filter(|p| p.port >= topo.ports.len()) {
            return Err(SetupError(format!(
                "pcap: no port {} (the network has {})",
                p.port,
                topo.ports.len()
            )));
        }
        let mut encap = vec![Encap::VcMux; topo.circuits.len()];
        let mut routes = Vec::new();
        // Per host, the circuits it sends on: its connections' data, its sinks' ACKs.
        let mut sends_on = vec![Vec::new(); spec.hosts.len()];
        for (t, &port) in scenario.transfers.iter().zip(&spec.ports) {
            sends_on[t.sender].push(t.circuit);
            sends_on[t.receiver].push(t.return_circuit);
            let e = if t.encap_header == 0 {
                Encap::VcMux
            } else {
                Encap::LlcSnap
            };
            encap[t.circuit] = e;
            encap[t.return_circuit] = e;
            routes.push(Route {
                sender: t.sender,
                receiver: t.receiver,
                port,
                data: t.circuit,
                ack: t.return_circuit,
            });
        }
        let slowest_cell = topo
            .adapters
            .iter()
            .map(|a| a.rate)
            .chain(topo.ports.iter().map(|p| p.rate))
            .map(|r| r.time_for_bits(crate::atm::phy::CELL_BITS))
            .max()
            .unwrap_or_default();
        let mut net = Network::new(scenario.topology.clone(), Fidelity::Train)
            .map_err(|e| SetupError(e.to_string()))?;
        // --series: each port's occupancy, as the simulator records it.
        net.set_queue_series(spec.run.series);
        net.set_abr_series(spec.run.series);
        Ok(Emulator {
            addresses: spec.hosts.iter().map(|h| h.address).collect(),
            spec: spec.run.clone(),
            net,
            tuns: Vec::new(),
            routes,
            encap,
            in_flight: Vec::new(),
            free: Vec::new(),
            cpu: spec.cpu,
            lateness_ps: Vec::new(),
            write_ps: Vec::new(),
            busy: VecDeque::with_capacity(BUSY_LOG),
            read_time: SimTime::ZERO,
            write_time: SimTime::ZERO,
            late: LateCauses::default(),
            counts: DatagramCounts::default(),
            slowest_cell,
            tap: None,
            waiter: wait::Waiter::default(),
            network_time: SimTime::ZERO,
            poll_time: SimTime::ZERO,
            read_guard: wait::Recent::new(READ_GUARD, READ_GUARD_MAX),
            read_ps: Vec::new(),
            queues: ifq::HostQueues::new(sends_on),
        })
    }

    /// Move datagrams until `stop` is set; then the report. With a CPU of its
    /// own, the loop has it kept awake while it sleeps (`keep_awake`).
    pub fn run(self, stop: &AtomicBool) -> std::io::Result<EmuReport> {
        let Some(cpu) = self.cpu else {
            return self.run_loop(stop);
        };
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| keep_awake(cpu, &done));
            let report = self.run_loop(stop);
            done.store(true, Ordering::Relaxed);
            report
        })
    }

    fn run_loop(mut self, stop: &AtomicBool) -> std::io::Result<EmuReport> {
        // Timer slack: the kernel may otherwise defer our wake-ups by 50 µs.
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        let realtime_priority = raise_priority();
        let cpu = self.cpu.filter(|&c| pin_to_cpu(c));
        let clock = WallClock::new(1.0);
        let cpu0 = thread_cpu_seconds();
        let preempted0 = thread_preemptions();
        let started = Instant::now();
        let mut buf = vec![0u8; BUF_LEN];
        let mut delivered: Vec<Delivery> = Vec::new();
        let mut pfds: Vec<libc::pollfd> = self
            .tuns
            .iter()
            .map(|t| libc::pollfd {
                fd: t.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while !stop.load(Ordering::Relaxed) {
            // Deliveries first and again after each datagram read: one due while
            // a datagram is encapsulated waits only for that one.
            self.deliver_due(&clock, &mut delivered);
            for h in 0..self.tuns.len() {
                // Every datagram waiting (until EAGAIN), each as soon as read.
                loop {
                    // The host's transmit queue stopped: its datagrams wait in the
                    // TUN device (its kernel drops beyond txqueuelen), not read.
                    if self.queues.stopped(&mut self.net, h, clock.now()) {
                        break;
                    }
                    // A read must not straddle a cell event: within the read guard
                    // of one, wait for it on the clock alone and handle it first.
                    self.spin_if_due_within(self.read_guard.get(), &clock, &mut delivered);
                    let start = clock.now();
                    let Some(n) = self.tuns[h].recv(&mut buf)? else {
                        let end = clock.now();
                        self.poll_time += end.saturating_sub(start);
                        self.note(start, end, Busy::Poll);
                        break;
                    };
                    self.inject(clock.now(), h, &buf[..n]);
                    let end = clock.now();
                    self.read_guard.push(Duration::from_nanos(
                        end.saturating_sub(start).as_ps() / 1000,
                    ));
                    self.read_ps.push(end.saturating_sub(start).as_ps());
                    self.note(start, end, Busy::Read);
                    self.deliver_due(&clock, &mut delivered);
                }
            }
            let now = Instant::now();
            // A stopped host's TUN device does not wake the loop; its queue's room does.
            for (h, p) in pfds.iter_mut().enumerate() {
                p.events = if self.queues.is_stopped(h) {
                    0
                } else {
                    libc::POLLIN
                };
            }
            let next = match self.net.poll_at() {
                Some(t) => clock.instant_of(t).min(now + TICK),
                None => now + TICK,
            };
            // A stopped queue's room needs no spin before it: a read a wake-up late
            // finds the interface queue still sending the PDUs waiting in it.
            let room =
                (self.queues.room_at(&self.net)).map_or(next, |t| clock.instant_of(t).min(next));
            let margin = self.waiter.margin();
            if next.saturating_duration_since(now) > margin && room > now {
                let start = clock.now();
                self.waiter.sleep(&mut pfds, (next - margin).min(room));
                self.note(start, clock.now(), Busy::Sleep);
            } else if next.saturating_duration_since(now) > 2 * wait::YIELD_LEAD
                && room > now
                && self.waiter.owes_yield(now)
            {
                // Events closer together than the margin all along (an ABR circuit's
                // RM cells): sleep in a gap between them now and then, or the kernel
                // takes the CPU for 50 ms at once (`wait`).
                let start = clock.now();
                self.waiter.stats.yields += 1;
                self.waiter
                    .sleep(&mut pfds, (next - wait::YIELD_LEAD).min(room));
                self.note(start, clock.now(), Busy::Sleep);
            } else {
                std::hint::spin_loop();
            }
        }
        let mut report = self.report(started.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu0);
        report.realtime_priority = realtime_priority;
        report.cpu = cpu;
        report.preemptions = thread_preemptions().saturating_sub(preempted0);
        Ok(report)
    }

    /// While the next cell event is due within `guard`, spin on the clock until it
    /// is (no system call: each costs a µs or more), then handle it.
    fn spin_if_due_within(
        &mut self,
        guard: Duration,
        clock: &WallClock,
        delivered: &mut Vec<Delivery>,
    ) {
        // Until the next event is beyond the guard: the one just handled may have
        // made another due a cell time later (a PDU's last cell leaving its last
        // port makes its delivery), which a read started now would straddle. A read
        // waits at most READ_WAIT for a gap in the events.
        let give_up = Instant::now() + READ_WAIT;
        while let Some(t) = self.net.poll_at() {
            let due = clock.instant_of(t);
            let now = Instant::now();
            if due.saturating_duration_since(now) > guard || now >= give_up {
                return;
            }
            while clock.now() < t {
                std::hint::spin_loop();
            }
            self.deliver_due(clock, delivered);
        }
    }

    /// The loop was busy with `what` from `start` to `end`.
    fn note(&mut self, start: SimTime, end: SimTime, what: Busy) {
        match what {
            Busy::Read => self.read_time += end.saturating_sub(start),
            Busy::Write => self.write_time += end.saturating_sub(start),
            Busy::Poll | Busy::Sleep => {}
        }
        if self.busy.len() == BUSY_LOG {
            self.busy.pop_front();
        }
        self.busy.push_back((start, end, what));
    }

    /// A PDU due at `at` was handed over at `now`: if later than one cell time
    /// of the slowest link, count what the loop was busy with at `at`.
    fn count_late(&mut self, at: SimTime, now: SimTime) {
        if now.saturating_sub(at) <= self.slowest_cell {
            return;
        }
        let during = self
            .busy
            .iter()
            .rev()
            .find(|&&(start, end, _)| start <= at && at < end)
            .map(|&(_, _, what)| what);
        let n = match during {
            Some(Busy::Write) => &mut self.late.write,
            Some(Busy::Read | Busy::Poll) => &mut self.late.read,
            Some(Busy::Sleep) => &mut self.late.sleep,
            None => &mut self.late.other,
        };
        *n += 1;
    }

    /// Hand over every PDU whose last cell has arrived by now.
    fn deliver_due(&mut self, clock: &WallClock, delivered: &mut Vec<Delivery>) {
        let start = clock.now();
        let due = self.net.poll_at().is_some_and(|t| t <= start);
        self.net.poll(start, delivered);
        if due {
            self.network_time += clock.now().saturating_sub(start);
        }
        // Before the deliveries: a delivered PDU's bytes are let go.
        self.tap_cells();
        for d in delivered.drain(..) {
            self.deliver(clock, d);
        }
    }

    /// A datagram host `src` sent, read at `now`: onto its circuit.
    fn inject(&mut self, now: SimTime, src: usize, datagram: &[u8]) {
        self.counts.read += 1;
        let Some(circuit) = self.classify(src, datagram) else {
            self.counts.unroutable += 1;
            return;
        };
        let encap = self.encap[circuit];
        let sdu = encap.encapsulate(datagram);
        let Ok(pdu) = aal5::build_pdu(&sdu, 0, 0) else {
            self.counts.oversized += 1;
            return;
        };
        // Checked as the receiving adapter checks it (CRC-32, then the LLC/SNAP
        // header) now rather than when it arrives: the cells carry these bytes
        // unchanged, and the CRC of 9 KB would add its 2 µs to every delivery.
        let Some(datagram) = checked_datagram(&pdu, encap) else {
            self.counts.corrupt += 1;
            return;
        };
        // The network's cell count comes from the CPCS payload's length.
        let payload_len = sdu.len() as u32;
        let token = match self.free.pop() {
            Some(i) => {
                self.in_flight[i] = Some((pdu, datagram));
                i
            }
            None => {
                self.in_flight.push(Some((pdu, datagram)));
                self.in_flight.len() - 1
            }
        };
        // The datagram comes from a TUN device as one linear buffer, not a chain
        // of SunOS's 1 KB cluster mbufs: nothing in it makes the SBA-200 stall
        // (`host/socket.rs` says why the stall belongs to those).
        if !self
            .net
            .send_gathered(now, circuit, payload_len, &[], token as u64)
        {
            // The adapter's interface queue was full: counted by the network.
            self.in_flight[token] = None;
            self.free.push(token);
        }
        self.tap_cells();
    }

    /// `--pcap`: write the cells the tapped port has sent by now.
    fn tap_cells(&mut self) {
        if let Some(tap) = &mut self.tap {
            let in_flight = &self.in_flight;
            tap.write(&mut self.net, |token| {
                in_flight
                    .get(token as usize)
                    .and_then(|p| p.as_ref())
                    .map(|(pdu, _)| &pdu[..])
            });
        }
    }

    /// The circuit an IPv4 datagram from host `src` goes on.
    fn classify(&self, src: usize, d: &[u8]) -> Option<CircuitId> {
        if d.len() < 20 || d[0] >> 4 != 4 {
            return None;
        }
        let dst_addr = Ipv4Addr::new(d[16], d[17], d[18], d[19]);
        let dst = self.addresses.iter().position(|&a| a == dst_addr)?;
        if dst == src {
            return None;
        }
        // TCP (6) and UDP (17) ports, in the first fragment only.
        let ihl = ((d[0] & 0x0f) as usize) * 4;
        let first_fragment = u16::from_be_bytes([d[6], d[7]]) & 0x1fff == 0;
        let ports = (matches!(d[9], 6 | 17) && first_fragment && d.len() >= ihl + 4).then(|| {
            (
                u16::from_be_bytes([d[ihl], d[ihl + 1]]),
                u16::from_be_bytes([d[ihl + 2], d[ihl + 3]]),
            )
        });
        let mut fallback = None;
        for r in &self.routes {
            if (r.sender, r.receiver) == (src, dst) {
                if ports.is_some_and(|(_, dport)| dport == r.port) {
                    return Some(r.data);
                }
                fallback = fallback.or(Some(r.data));
            } else if (r.receiver, r.sender) == (src, dst) {
                if ports.is_some_and(|(sport, _)| sport == r.port) {
                    return Some(r.ack);
                }
                fallback = fallback.or(Some(r.ack));
            }
        }
        fallback
    }

    /// The network says a PDU's last cell arrived at `d.at`: hand its datagram
    /// to the receiver's kernel.
    fn deliver(&mut self, clock: &WallClock, d: Delivery) {
        let token = d.token as usize;
        let Some((pdu, datagram)) = self.in_flight.get_mut(token).and_then(Option::take) else {
            return;
        };
        self.free.push(token);
        // Lateness is taken as the datagram is handed over: the write itself runs
        // the receiving kernel's IP and TCP input on this thread, which is the
        // host's time, not the network's.
        let now = clock.now();
        self.lateness_ps.push(now.saturating_sub(d.at).as_ps());
        match self.tuns[d.host].send(&pdu[datagram]) {
            Ok(()) => self.counts.delivered += 1,
            Err(_) => self.counts.write_errors += 1,
        }
        // What bounds the lateness of the deliveries after this one.
        let end = clock.now();
        self.write_ps.push(end.saturating_sub(now).as_ps());
        self.count_late(d.at, now);
        self.note(now, end, Busy::Write);
    }

    fn report(mut self, seconds: f64, cpu_seconds: f64) -> EmuReport {
        let lateness_histogram = histogram(&self.lateness_ps);
        let lateness_us = Lateness::of(&mut self.lateness_ps);
        let mut wake_ps: Vec<u64> = (self.waiter.stats.overshoot_ns.iter())
            .map(|ns| ns.saturating_mul(1000))
            .collect();
        let write_us = Lateness::of(&mut self.write_ps);
        let slowest_us = self.slowest_cell.as_us_f64();
        let circuit = |c: CircuitId| {
            let k = self.net.circuit_counters(c);
            CircuitResult {
                pdus_sent: k.pdus_sent,
                pdus_delivered: k.pdus_delivered,
                pdus_lost: k.pdus_lost,
                cells_lost: k.cells_lost,
                cells_policed: k.lost_by_cause.policing,
                cells_tagged: k.cells_tagged,
                cells_lost_clp: k.lost_by_cause.clp,
                pdus_dropped_at_adapter: k.adapter_queue_drops,
            }
        };
        const CELL_BITS: f64 = crate::atm::phy::CELL_BITS as f64;
        let abr = |c: CircuitId| {
            let k = self.net.abr_source_counters(c)?;
            Some(AbrResult {
                abr_acr_bps: k.acr * CELL_BITS,
                abr_acr_min_bps: k.acr_min * CELL_BITS,
                abr_acr_mean_bps: k.acr_mean * CELL_BITS,
                abr_frm_sent: k.frm_sent,
                abr_brm_returned: k.brm_returned,
                abr_rm_lost: k.rm_lost,
                abr_time_at_mcr_s: k.time_at_mcr.as_secs_f64(),
                acr_series: self
                    .net
                    .acr_series(c)
                    .iter()
                    .map(|&(t, a)| (t.as_secs_f64(), a * CELL_BITS))
                    .collect(),
            })
        };
        let connections = self
            .routes
            .iter()
            .map(|r| ConnectionCircuits {
                data: circuit(r.data),
                ack: circuit(r.ack),
                abr: abr(r.data),
            })
            .collect();
        let nports = self.spec.hosts.len() + 2 * self.spec.trunks.len();
        let port_counters: Vec<_> = (0..nports).map(|p| self.net.port_counters(p)).collect();
        let npolicers = self.spec.trunks.iter().filter(|t| t.upc.is_some()).count();
        let policer_counters: Vec<_> = (0..npolicers)
            .map(|p| self.net.policer_counters(p))
            .collect();
        let until = SimTime::from_secs_f64(seconds);
        let queue_series: Vec<_> = (0..nports)
            .map(|p| self.net.queue_series(p, until))
            .collect();
        let (ports, policers) =
            self.spec
                .network_results(&port_counters, &policer_counters, &queue_series);
        let sent: u64 = (0..2 * self.routes.len())
            .map(|c| self.net.circuit_counters(c).cells_sent)
            .sum();
        let cells_carried = sent + port_counters.iter().map(|p| p.cells_out).sum::<u64>();
        // `seconds` is the time since the clock's start, measured just now.
        let clock_start_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
            - seconds;
        let (pcap_cells, pcap_error) = match self.tap.take().map(tap::CellTap::finish) {
            None => (None, None),
            Some(Ok(n)) => (Some(n), None),
            Some(Err(e)) => (None, Some(e)),
        };
        EmuReport {
            pcap_cells,
            pcap_error,
            clock_start_unix,
            real_time: lateness_us.p99 <= slowest_us,
            lateness_us,
            write_us,
            late_pdus: self.late.clone(),
            slowest_cell_time_us: slowest_us,
            pdus_timed: self.lateness_ps.len() as u64,
            datagrams: self.counts.clone(),
            connections,
            ports,
            policers,
            seconds,
            cpu_seconds,
            read_seconds: self.read_time.as_secs_f64(),
            write_seconds: self.write_time.as_secs_f64(),
            cells_carried,
            realtime_priority: false,
            cpu: None,
            preemptions: 0,
            network_seconds: self.network_time.as_secs_f64(),
            events: self.net.events_processed(),
            poll_seconds: self.poll_time.as_secs_f64(),
            read_us: Lateness::of(&mut self.read_ps),
            read_guard_max_us: self.read_guard.largest.as_secs_f64() * 1e6,
            sleep_seconds: self.waiter.stats.slept.as_secs_f64(),
            sleeps: self.waiter.stats.sleeps,
            yields: self.waiter.stats.yields,
            wake_us: Lateness::of(&mut wake_ps),
            spin_margin_max_us: self.waiter.margin_max().as_secs_f64() * 1e6,
            lateness_histogram,
            host_queues: self.queues.report(SimTime::from_secs_f64(seconds)),
        }
    }
}

/// Durations (ps) counted in power-of-two bins of µs: `[upper bound µs, count]`,
/// the first bin everything up to 1 µs, empty bins left out.
fn histogram(ps: &[u64]) -> Vec<(f64, u64)> {
    let mut bins = [0u64; 64];
    for &p in ps {
        // Bin k holds (2^(k-1), 2^k] µs; bin 0 up to 1 µs.
        let us = p.div_ceil(1_000_000);
        let k = if us <= 1 {
            0
        } else {
            64 - (us - 1).leading_zeros() as usize
        };
        bins[k.min(63)] += 1;
    }
    (bins.iter().enumerate())
        .filter(|&(_, &n)| n > 0)
        .map(|(k, &n)| ((1u64 << k) as f64, n))
        .collect()
}

/// Where the datagram lies in a CPCS-PDU, if its CRC and encapsulation check.
fn checked_datagram(pdu: &[u8], encap: Encap) -> Option<Range<usize>> {
    let p = CpcsPdu::new_checked(pdu).ok()?;
    let d = encap.decapsulate(&pdu[..p.payload().len()]).ok()?;
    let start = d.as_ptr() as usize - pdu.as_ptr() as usize;
    Some(start..start + d.len())
}

/// Real-time scheduling for the calling thread (SCHED_FIFO, when the process may:
/// root or CAP_SYS_NICE): on a busy machine an ordinary thread waits for a core
/// for milliseconds, which would add to every packet's delay. The loop sleeps
/// between cell events and spins only a margin before each (`wait`), so it takes
/// little from the other tasks (and the kernel's RT throttling bounds it).
fn raise_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Spin at SCHED_IDLE on the loop's CPU until `done`: a CPU with nothing to run
/// halts, and in a virtual machine waking a halted CPU takes tens of µs to over a
/// millisecond, which the loop's sleeps between cell events would pay (measured on
/// this project's Firecracker VMs: OC-3c p99 lateness 57 µs idle, 1.9 µs with the CPU
/// kept busy). SCHED_IDLE runs only when nothing else wants the CPU and yields to the
/// loop at once; the cost is that CPU's idle time, not the other tasks' share.
fn keep_awake(cpu: usize, done: &AtomicBool) {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0 };
    if !(idle && pin_to_cpu(cpu)) {
        return;
    }
    while !done.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
}

/// Keep the calling thread on CPU `cpu`; false if the kernel refuses (no such CPU,
/// or outside this process's cpuset).
fn pin_to_cpu(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it (cpu is
    // checked against its size); pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// CPU time of the calling thread, s.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Involuntary context switches of the calling thread so far.
fn thread_preemptions() -> u64 {
    // SAFETY: a zeroed rusage is valid; getrusage writes one.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD reports on the calling thread into `ru`.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_nivcsw.max(0) as u64
}

#[cfg(test)]
mod test {
    use super::*;

    /// Two hosts, one connection a -> b to port 5001, LLC/SNAP.
    fn emulator() -> Emulator {
        let spec: EmuSpec = serde_json::from_str(
            r#"{"run": {"hosts": [{"name": "a"}, {"name": "b"}], "connections": [
                 {"transmitter": "a", "receiver": "b", "encap": "llc-snap",
                  "traffic": {"type": "full", "nbytes": 1000}}]},
                "hosts": [{"netns": "/run/netns/x", "tun": "atm0", "address": "10.9.0.1"},
                          {"netns": "/run/netns/y", "tun": "atm0", "address": "10.9.0.2"}],
                "ports": [5001]}"#,
        )
        .unwrap();
        Emulator::build(&spec).unwrap()
    }

    /// An IPv4 header (20 bytes) of `proto` from `src` to `dst`, then ports.
    fn datagram(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16) -> Vec<u8> {
        let mut d = vec![0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, proto, 0, 0];
        d.extend_from_slice(&src);
        d.extend_from_slice(&dst);
        d.extend_from_slice(&sport.to_be_bytes());
        d.extend_from_slice(&dport.to_be_bytes());
        d.resize(40, 0);
        d
    }

    #[test]
    fn a_datagram_goes_on_its_connections_circuit() {
        let e = emulator();
        let (a, b) = ([10, 9, 0, 1], [10, 9, 0, 2]);
        let r = e.routes[0];
        // To the sink's port: data; from it: the return (ACK) circuit.
        assert_eq!(e.classify(0, &datagram(a, b, 6, 40000, 5001)), Some(r.data));
        assert_eq!(e.classify(1, &datagram(b, a, 6, 5001, 40000)), Some(r.ack));
        // Anything else between the two: the first circuit their way (ICMP, say).
        assert_eq!(e.classify(1, &datagram(b, a, 1, 0, 0)), Some(r.ack));
        // Not a testbed address, to itself, or not IPv4: nowhere.
        assert_eq!(e.classify(0, &datagram(a, [8, 8, 8, 8], 6, 1, 5001)), None);
        assert_eq!(e.classify(0, &datagram(a, a, 6, 1, 5001)), None);
        let mut v6 = datagram(a, b, 6, 1, 5001);
        v6[0] = 0x60;
        assert_eq!(e.classify(0, &v6), None);
        assert_eq!(e.encap[r.data], Encap::LlcSnap);
    }

    #[test]
    fn a_datagram_crosses_the_network_whole_and_is_timed() {
        let mut e = emulator();
        let d = datagram([10, 9, 0, 1], [10, 9, 0, 2], 6, 40000, 5001);
        e.inject(SimTime::ZERO, 0, &d);
        let at = e.net.poll_at().expect("cells in flight");
        let mut delivered = Vec::new();
        e.net.poll(SimTime::from_secs(1), &mut delivered);
        assert_eq!(delivered.len(), 1);
        assert!(delivered[0].at >= at);
        let token = delivered[0].token as usize;
        let (pdu, datagram) = e.in_flight[token].clone().unwrap();
        // LLC/SNAP + the datagram, padded, with a trailer whose CRC checks.
        let p = CpcsPdu::new_checked(&pdu[..]).unwrap();
        assert_eq!(Encap::LlcSnap.decapsulate(p.payload()).unwrap(), &d[..]);
        assert_eq!(&pdu[datagram], &d[..]);
        // 8 + 40 bytes and the 8-byte trailer: two cells.
        assert_eq!(e.net.circuit_counters(e.routes[0].data).cells_sent, 2);
    }

    #[test]
    fn a_hosts_queue_stops_while_its_adapters_interface_queue_is_full() {
        // A five-PDU interface queue at the sender.
        let spec: EmuSpec = serde_json::from_str(
            r#"{"run": {"hosts": [{"name": "a", "tx_queue_pdus": 5}, {"name": "b"}],
                 "connections": [{"transmitter": "a", "receiver": "b", "protocol": "udp",
                  "traffic": {"type": "full", "nbytes": 1000}}]},
                "hosts": [{"netns": "/run/netns/x", "tun": "atm0", "address": "10.9.0.1"},
                          {"netns": "/run/netns/y", "tun": "atm0", "address": "10.9.0.2"}],
                "ports": [5001]}"#,
        )
        .unwrap();
        let mut e = Emulator::build(&spec).unwrap();
        let mut d = datagram([10, 9, 0, 1], [10, 9, 0, 2], 17, 40000, 5001);
        d.resize(9000, 0);
        let t0 = SimTime::ZERO;
        // Datagrams read while the queue has room: one on the link, five waiting.
        let mut read = 0;
        while !e.queues.stopped(&mut e.net, 0, t0) {
            e.inject(t0, 0, &d);
            read += 1;
            assert!(read <= 6, "the queue never filled");
        }
        assert_eq!(read, 6);
        let data = e.routes[0].data;
        assert_eq!(e.net.circuit_counters(data).adapter_queue_drops, 0);
        // The receiver sends on its own adapter: not stopped.
        assert!(!e.queues.stopped(&mut e.net, 1, t0));
        // Room again when the first waiting PDU starts: the first one's 188 cells
        // (9000 bytes and the 8-byte trailer, VC-mux) later, and not before.
        let at = e.queues.room_at(&e.net).expect("a PDU waits");
        let cell = spec.run.scenario().unwrap().topology.adapters[0]
            .rate
            .time_for_bits(crate::atm::phy::CELL_BITS);
        assert_eq!(at, cell.times(188));
        assert!(e
            .queues
            .stopped(&mut e.net, 0, at.saturating_sub(SimTime::from_ps(1))));
        assert!(!e.queues.stopped(&mut e.net, 0, at));
        let r = e.queues.report(at);
        assert_eq!(r[0].stops, 1);
        assert_eq!(r[0].stopped_seconds, at.as_secs_f64());
        assert_eq!(r[1], HostQueue::default());
    }

    #[test]
    fn a_late_pdu_is_counted_against_what_the_loop_was_doing_when_it_fell_due() {
        let mut e = emulator();
        let us = SimTime::from_us;
        e.note(us(0), us(10), Busy::Read);
        e.note(us(10), us(30), Busy::Write);
        e.note(us(40), us(100), Busy::Sleep);
        assert_eq!((e.read_time, e.write_time), (us(10), us(20)));
        // Within one cell time of the slowest link: on time, not counted.
        e.count_late(us(5), us(5) + e.slowest_cell);
        assert_eq!(e.late, LateCauses::default());
        e.count_late(us(5), us(12));
        e.count_late(us(20), us(31));
        e.count_late(us(50), us(101));
        // Between two activities: the loop's own work.
        e.count_late(us(35), us(41));
        let one_each = LateCauses {
            write: 1,
            read: 1,
            sleep: 1,
            other: 1,
        };
        assert_eq!(e.late, one_each);
    }

    #[test]
    fn lateness_is_binned_by_powers_of_two_of_a_microsecond() {
        let us = |x: u64| x * 1_000_000;
        let h = histogram(&[0, us(1), us(1) + 1, us(2), us(3), us(1000), us(1025)]);
        assert_eq!(
            h,
            vec![(1.0, 2), (2.0, 2), (4.0, 1), (1024.0, 1), (2048.0, 1)]
        );
        assert!(histogram(&[]).is_empty());
    }

    #[test]
    fn a_tapped_port_writes_the_pdus_own_cells() {
        use crate::wire::cell::Cell;
        use crate::wire::pcap::{read_pcap, Record};
        let mut e = emulator();
        let path = std::env::temp_dir().join(format!("cellbench-tap-{}.pcap", std::process::id()));
        let spec = PcapSpec {
            port: 1, // the port to host b
            path: path.to_string_lossy().into_owned(),
        };
        e.tap = Some(tap::CellTap::open(&spec, &mut e.net).unwrap());
        let d = datagram([10, 9, 0, 1], [10, 9, 0, 2], 6, 40000, 5001);
        e.inject(SimTime::ZERO, 0, &d);
        let pdu = e.in_flight[0].clone().unwrap().0;
        let mut delivered = Vec::new();
        e.net.poll(SimTime::from_secs(1), &mut delivered);
        e.tap_cells();
        assert_eq!(e.tap.take().unwrap().finish(), Ok(2));
        let pcap = read_pcap(&std::fs::read(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let cells: Vec<_> = pcap
            .records
            .iter()
            .map(|r| match r {
                Record::Cell { time, cell } => (*time, *cell),
                other => panic!("not a cell: {other:?}"),
            })
            .collect();
        assert_eq!(cells.len(), 2);
        // Sent by the port before the PDU was delivered; the PDU's bytes, AUU on the last.
        assert!(cells[0].0 < cells[1].0 && cells[1].0 < delivered[0].at);
        for (i, (_, bytes)) in cells.iter().enumerate() {
            let c = Cell::new_checked(&bytes[..]).unwrap();
            assert_eq!(c.payload(), &pdu[48 * i..48 * (i + 1)]);
            assert_eq!(c.pti().auu(), i == 1);
            assert_eq!(c.hec(), c.expected_hec());
        }
    }
}
