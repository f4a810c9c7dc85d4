//! The applications at each end of a transfer (ttcp's transmitter and
//! receiver, UDP's, netperf's request/response), their steps on the CPU, and
//! when transfers start and end (`TransferSpec::after`). Apart from the TCP
//! and CPU machinery: this is what the hosts are asked to do.

use super::cpu::Job;
use super::packets::Packet;
use super::{Event, Scenario, TransferSpec, World};
use crate::host::rr::{RequestResponse, Role};
use crate::host::socket::AppendRule;
use crate::host::ttcp::{Costs, Limit, Source, Step, TtcpSink};
use crate::rng;
use crate::sim::net::HostId;
use crate::tcp::{Flavour, Segment, State, Tcb};
use crate::time::SimTime;

/// How long a UDP receiver keeps reading after its transmitter finished
/// (ttcp -u ends on marker datagrams; cells still in flight arrive well within this).
const UDP_LINGER: SimTime = SimTime::from_secs(1);

pub(super) enum App {
    Source(Box<Source>),
    Sink(TtcpSink),
    /// Either end of a request/response test.
    Exchange(RequestResponse),
}

impl App {
    /// The application at one end of transfer `i` (a TCP receiver's connection
    /// then listens): a request/response test's client or server, ttcp's
    /// transmitter or receiver.
    pub(super) fn new(
        scenario: &Scenario,
        i: usize,
        is_sender: bool,
        tcb: &mut Tcb,
        udp: bool,
    ) -> App {
        let t = &scenario.transfers[i];
        if let Some(sizes) = t.transaction {
            let role = match (is_sender, t.limit) {
                (true, Limit::Duration(duration)) => Role::Client { duration },
                (true, Limit::Bytes(_)) => unreachable!("validate: a test length"),
                (false, _) => Role::Server,
            };
            if !is_sender {
                tcb.listen();
            }
            App::Exchange(RequestResponse::new(sizes, role))
        } else if is_sender {
            let draws = rng::stream(scenario.seed, scenario.replication, rng::ids::app(i));
            App::Source(Box::new(
                Source::new(t.buflen, t.limit, t.pace).with_random(t.block_size, draws),
            ))
        } else {
            if !udp {
                tcb.listen();
            }
            let expect = match t.limit {
                Limit::Bytes(n) => n,
                // Read until the transmitter closes.
                Limit::Duration(_) => u64::MAX,
            };
            App::Sink(TtcpSink::new(t.read_size, expect))
        }
    }
}

/// When transfers start and end (`TransferSpec::after`): a transfer that
/// waits for others starts when the last of them ends, plus its offset.
pub(super) struct Starts {
    /// Per transfer: the transfers waiting for it to end.
    pub(super) dependants: Vec<Vec<usize>>,
    /// Per transfer: how many of the transfers it waits for have not ended yet.
    pub(super) waiting: Vec<usize>,
    pub(super) offset: Vec<SimTime>,
    pub(super) started_at: Vec<Option<SimTime>>,
    pub(super) ended_at: Vec<Option<SimTime>>,
    /// Per endpoint: when its application finished.
    pub(super) done_at: Vec<Option<SimTime>>,
}

impl Starts {
    pub(super) fn new(transfers: &[TransferSpec]) -> Starts {
        let n = transfers.len();
        let mut dependants = vec![Vec::new(); n];
        for (j, t) in transfers.iter().enumerate() {
            for &i in &t.after {
                dependants[i].push(j);
            }
        }
        Starts {
            dependants,
            waiting: transfers.iter().map(|t| t.after.len()).collect(),
            offset: transfers.iter().map(|t| t.start).collect(),
            started_at: vec![None; n],
            ended_at: vec![None; n],
            done_at: vec![None; 2 * n],
        }
    }
}

impl World {
    /// An endpoint's application finished (at the start of the work that
    /// finished it, as every state change). Once both ends of its transfer
    /// have, the transfer has ended: a transfer that waited for it and for
    /// nothing else now starts, its offset after this instant.
    pub(super) fn app_finished(&mut self, ep: usize) {
        if self.eps[ep].app_done {
            return;
        }
        self.eps[ep].app_done = true;
        self.apps_running -= 1;
        let s = &mut self.starts;
        s.done_at[ep] = Some(self.now);
        let transfer = self.eps[ep].transfer;
        let (Some(a), Some(b)) = (s.done_at[2 * transfer], s.done_at[2 * transfer + 1]) else {
            return;
        };
        let end = a.max(b);
        s.ended_at[transfer] = Some(end);
        for k in 0..s.dependants[transfer].len() {
            let j = s.dependants[transfer][k];
            s.waiting[j] -= 1;
            if s.waiting[j] == 0 {
                self.events
                    .schedule(end + s.offset[j], Event::Start { ep: 2 * j });
            }
        }
    }

    pub(super) fn run_app(
        &mut self,
        h: HostId,
        ep: usize,
        t: &mut SimTime,
        out: &mut Vec<Segment>,
    ) {
        if self.eps[ep].app_done {
            return;
        }
        let p = &self.hosts[h].profile;
        let costs = Costs {
            syscall: self.scaled(p.syscall),
            copy_ps_per_byte: p.copy_ps_per_byte * self.job_scale / 1000,
            read_copy_ps_per_byte: p.read_copy_ps_per_byte() * self.job_scale / 1000,
            fragment_ps_per_byte: p.fragment_ps_per_byte * self.job_scale / 1000,
            // The socket layer goes with the kernel: SunOS's for SunOS 4.1.x, 4.4BSD's otherwise.
            append: match self.eps[ep].tcb.flavour {
                Flavour::Sunos411 | Flavour::Sunos413 => AppendRule::SunOs,
                _ => AppendRule::Bsd44 {
                    mclbytes: self.eps[ep].tcb.policy().mclbytes,
                },
            },
            send_completes_on_ack: self.eps[ep].tcb.policy().send_completes_on_ack,
        };
        if self.eps[ep].udp.is_some() {
            self.run_udp_app(h, ep, t, &costs);
            return;
        }
        let e = &mut self.eps[ep];
        if e.is_sender && e.tcb.state == State::Closed {
            // Active open first; the application runs when the connection is up.
            e.tcb.connect(out);
            e.app_blocked = true;
            self.charge_and_send(ep, t, out);
            return;
        }
        if matches!(
            e.tcb.state,
            State::Listen | State::SynSent | State::SynReceived
        ) {
            e.app_blocked = true;
            return;
        }
        // After the peer's FIN, a read of an empty buffer returns end of file.
        let eof = !matches!(
            e.tcb.state,
            State::Established | State::FinWait1 | State::FinWait2
        );
        match &mut e.app {
            App::Sink(s) => s.eof = eof,
            App::Exchange(x) => x.eof = eof,
            App::Source(_) => {}
        }
        // What the write appended (tcp_output ran on it inside the step, so its
        // segments are not handed over yet): note the host buffers it filled.
        let cc = e.tcb.snd.cc;
        let step = match &mut e.app {
            App::Source(s) => s.step(&mut e.tcb, &costs, t, out),
            App::Sink(s) => s.step(&mut e.tcb, &costs, t, out),
            App::Exchange(x) => x.step(&mut e.tcb, &costs, t, out),
        };
        if e.tcb.snd.cc > cc {
            let first = e.tcb.iss + 1;
            e.mbufs.append(costs.append, first, e.tcb.snd.cc - cc);
        }
        // tcp_output ran inside the write: the call returns once it is paid for.
        self.charge_and_send(ep, t, out);
        if let App::Source(s) = &mut self.eps[ep].app {
            s.note_return(*t);
        }
        if self.settle_step(h, ep, step) {
            self.eps[ep].tcb.close(out);
            self.charge_and_send(ep, t, out);
        }
    }

    /// Schedule what an application step asked for: run again, sleep until a
    /// wakeup, or finish (true). ttcp -t stops its clock when the last write returns.
    fn settle_step(&mut self, h: HostId, ep: usize, step: Step) -> bool {
        self.probe_interval(ep, matches!(step, Step::Done));
        let e = &mut self.eps[ep];
        match step {
            Step::Continue => {
                e.app_queued = true;
                self.hosts[h].processes.push_back(Job::App { ep });
            }
            Step::Blocked => e.app_blocked = true,
            Step::Sleep => e.app_sleeping = true,
            Step::Done => {
                if let App::Source(s) = &mut e.app {
                    s.finished = s.last_return;
                }
                self.app_finished(ep);
                return true;
            }
        }
        false
    }

    /// One step of a UDP application: a write() sends one datagram as IP
    /// fragments; a read() takes one datagram.
    fn run_udp_app(&mut self, h: HostId, ep: usize, t: &mut SimTime, costs: &Costs) {
        let e = &mut self.eps[ep];
        let sock = e.udp.as_mut().expect("UDP endpoint");
        let step = match &mut e.app {
            App::Sink(s) => s.step_udp(sock, costs, t),
            App::Exchange(_) => unreachable!("validate: request/response runs over TCP"),
            App::Source(s) => match s.step_udp(costs, t) {
                Err(step) => step,
                Ok(len) => {
                    let frags = crate::host::udp::fragments(len, e.mtu);
                    sock.stats.datagrams_sent += 1;
                    sock.stats.fragments_sent += frags.len() as u64;
                    let dgram = self.next_dgram;
                    self.next_dgram += 1;
                    let count = frags.len() as u16;
                    let mut offset = 0;
                    for (i, &ip_len) in frags.iter().enumerate() {
                        // The checksum pass covers the datagram's data once.
                        let sum = if i == 0 { len } else { 0 };
                        let e = &self.eps[ep];
                        let cells = self.net.cells_on(e.circuit_out, ip_len + e.encap_header);
                        let cost = self.hosts[h].profile.send_cost(sum, ip_len, cells);
                        *t += self.scaled(cost);
                        self.emit(
                            ep,
                            *t,
                            Packet::Udp {
                                dgram,
                                ip_len,
                                data: len,
                                count,
                                offset,
                            },
                        );
                        offset += ip_len - crate::host::udp::IP_HEADER;
                    }
                    let App::Source(s) = &mut self.eps[ep].app else {
                        unreachable!("matched a source above")
                    };
                    s.note_return(*t);
                    if s.all_written() {
                        Step::Done
                    } else {
                        Step::Continue
                    }
                }
            },
        };
        if self.settle_step(h, ep, step) && self.eps[ep].is_sender {
            // The receiver reads what still arrives, then stops.
            let sink = self.peer(ep);
            self.events
                .schedule(*t + UDP_LINGER, Event::UdpLinger { ep: sink });
        }
    }

    /// A paced source's next block falls due.
    pub(super) fn block_due(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        let App::Source(s) = &mut e.app else { return };
        if e.app_done {
            return;
        }
        let Some(period) = s.next_period() else {
            return;
        };
        if s.block_due() && e.app_sleeping {
            e.app_sleeping = false;
            e.app_queued = true;
            let h = e.host;
            self.enqueue(h, Job::App { ep }, false);
        }
        self.events
            .schedule(self.now + period, Event::BlockDue { ep });
    }

    pub(super) fn wake_app(&mut self, ep: usize) {
        let e = &mut self.eps[ep];
        if e.app_blocked && !e.app_queued && e.started && !e.app_done {
            e.app_blocked = false;
            e.app_queued = true;
            let h = e.host;
            self.hosts[h].processes.push_back(Job::App { ep });
        }
    }
}
