//! A run's results in the spec's terms: the scenario run (with the cell tester if the
//! spec has one), then per connection what it did, what bound it and the evidence,
//! and per switch port and per UPC what the network counted.

use super::{RunSpec, TrunkSpec};
use crate::host::udp::UdpStats;
use crate::sim::clock::FlatOut;
use crate::sim::explain::{
    self, capture, classify, lockstep_cycle, Explanation, Facts, LimitedBy, LockstepCycle,
};
use crate::sim::net::{PolicerCounters, PortCounters};
use crate::sim::trace::{TraceColumns, TraceRow};
use crate::sim::world::{
    run, run_captured, RunResult, Scenario, ScenarioError, TraceRecord, TransferResult,
};
use crate::time::SimTime;
use serde::Serialize;

/// `limited_by` of a connection the simulated-time limit cut before it finished
/// when nothing else bound it (its evidence then starts "truncated:" either way).
pub const TRUNCATED: &str = "time-limit";
/// The same for a run that spent its event budget (`guard`) before it finished.
pub const BUDGET_CUT: &str = "event-budget";

/// Per-connection results.
#[derive(Clone, Debug, Serialize)]
pub struct ConnResult {
    pub transmitter: String,
    pub receiver: String,
    /// When the transmitter started and when the connection ended (both
    /// applications finished), seconds; null if it never did.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub completed: bool,
    pub bytes: u64,
    pub bytes_received: u64,
    pub sender_seconds: f64,
    pub receiver_seconds: f64,
    pub throughput_bps: f64,
    pub throughput_mbit_ttcp: f64,
    pub goodput_bps: f64,
    /// The sending application's rate (bytes written over `sender_seconds`): for
    /// UDP the load offered, beside `throughput_bps`, what arrived.
    pub sender_bps: f64,
    pub lockstep: bool,
    pub circular_wait_seconds: f64,
    pub writes: u64,
    /// The receiving application's read (recv) calls, as ttcp -r counts its I/O calls.
    pub reads: u64,
    pub data_segments: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
    pub receiver_acks: u64,
    pub delayed_acks: u64,
    pub window_updates: u64,
    /// PDUs refused by a full interface queue at both ends together (the
    /// sender's data, the receiver's ACKs), and at each end.
    pub pdus_dropped_at_adapter: u64,
    pub pdus_dropped_at_sender_adapter: u64,
    pub pdus_dropped_at_receiver_adapter: u64,
    pub cells_lost: u64,
    /// PDUs of the data direction: sent by the adapter, and lost in the
    /// network (a cell dropped or policed); their ratio is the segment loss rate.
    pub data_pdus_sent: u64,
    pub data_pdus_lost: u64,
    /// Cells of this connection discarded by usage parameter control.
    pub cells_policed: u64,
    /// Cells of this connection tagged CLP = 1 by usage parameter control.
    pub cells_tagged: u64,
    /// Cells of this connection with CLP = 1 dropped at a switch's CLP-1
    /// threshold (CLP-selective discard). Like `cells_policed`, the data direction.
    pub cells_lost_clp: u64,
    /// UDP only: datagrams sent, received, dropped for want of receive buffer.
    pub datagrams_sent: Option<u64>,
    pub datagrams_received: Option<u64>,
    pub datagrams_dropped_no_buffer: Option<u64>,
    /// Request/response only: transactions completed within the test length
    /// (`sender_seconds`), and their rate per second (netperf's "Trans. Rate").
    pub transactions: Option<u64>,
    pub transaction_rate: Option<f64>,
    pub trace: Vec<String>,
    /// The same segments as data, one per line of `trace`, as columns
    /// (`sim::trace::TraceColumns`: `t_s`, `from_sender`, `flags`, `seq`, ...).
    pub trace_records: TraceColumns,
    /// The lock-step's evidence in the trace: the steady timer-driven cycle
    /// (`sim::explain`). Null without a trace, or when timer ACKs do not pace the transfer.
    pub lockstep_cycle: Option<CycleResult>,
    /// What bound the connection (`sim::explain::LimitedBy`: application,
    /// lockstep, abr-rate, link, host-cpu, window, policing, cell-loss,
    /// interface-queue, capture, nagle, undetermined)
    /// and one sentence of evidence with the numbers.
    pub limited_by: &'static str,
    pub limit_evidence: String,
    /// The facts behind it: the shortest round trip TCP saw (s), the most data
    /// in flight (bytes), the share of the transfer each CPU was busy, and the
    /// most TCP (UDP) payload the path carries in the largest segments (datagrams) sent, bit/s.
    pub min_rtt_s: Option<f64>,
    pub peak_flight_bytes: u32,
    pub sender_cpu_busy: Option<f64>,
    pub receiver_cpu_busy: Option<f64>,
    pub path_payload_bps: Option<f64>,
    /// With `series`: `[t_s, cwnd, ssthresh, flight]` (bytes), a sample
    /// whenever one changed, from the connection's establishment. Absent
    /// without `series`; empty for UDP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwnd_series: Option<Vec<(f64, u32, u32, u32)>>,
    /// The most consecutive retransmit timeouts of one segment (the backoff
    /// reached is 2^this), and the time the sender waited on retransmit timers
    /// that expired, from each one's last start to its firing (`TcpStats`).
    pub max_backoff: u32,
    pub rexmt_wait_s: f64,
    /// ABR data circuit (`sim::net::abr`; None without ABR): its ACR at the end
    /// and lowest (bit/s of cells), the forward RM cells sent, the backward ones
    /// returned, RM cells lost, and the time its ACR sat at MCR.
    pub abr_acr_bps: Option<f64>,
    pub abr_acr_min_bps: Option<f64>,
    /// Its ACR's time-weighted mean over the circuit's active time, first cell
    /// to last (bit/s of cells): the rate `abr-rate` is judged against.
    pub abr_acr_mean_bps: Option<f64>,
    pub abr_frm_sent: Option<u64>,
    pub abr_brm_returned: Option<u64>,
    pub abr_rm_lost: Option<u64>,
    pub abr_time_at_mcr_s: Option<f64>,
    /// With `series` on an ABR circuit: `[t_s, acr_bps]`, at the start and at
    /// every change; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acr_series: Option<Vec<(f64, f64)>>,
}

/// Bits of a whole cell: ABR's rates are cell rates, reported in bit/s of cells.
const CELL_BITS: f64 = 424.0;

/// A delayed-ACK lock-step cycle as the trace shows it (`sim::explain::LockstepCycle`).
#[derive(Clone, Debug, Serialize)]
pub struct CycleResult {
    /// Timer-released ACKs in the steady part (the second half) of the trace.
    pub ticks: usize,
    /// Data bytes the transmitter released, on average, per timer ACK.
    pub bytes_per_tick: f64,
    /// Mean time between timer-released ACKs.
    pub period_s: f64,
    /// The throughput the cycle sustains: bytes per tick over the period.
    pub predicted_bps: f64,
    /// The most common pattern between two timer ACKs: `"A 8192 [idle]"`, ...
    pub pattern: Vec<String>,
    /// How many cycles showed exactly that pattern.
    pub pattern_repeats: usize,
}

impl From<LockstepCycle> for CycleResult {
    fn from(c: LockstepCycle) -> CycleResult {
        CycleResult {
            ticks: c.ticks,
            bytes_per_tick: c.bytes_per_tick,
            period_s: c.mean_period.as_secs_f64(),
            predicted_bps: c.predicted_bps(),
            pattern: c.pattern,
            pattern_repeats: c.pattern_repeats,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PortResult {
    pub port: usize,
    pub host: String,
    pub cells_in: u64,
    pub cells_out: u64,
    pub cells_lost: u64,
    pub peak_occupancy: u32,
    /// Of `cells_lost`, CLP = 1 cells refused at the CLP-1 threshold.
    pub cells_lost_clp: u64,
    /// Of `cells_lost`, by the rest of the causes (`CellLoss`): the buffer full
    /// (tail drop), the rest of a damaged PDU (PPD), whole PDUs refused at the
    /// EPD threshold, and cells a UPC at this port discarded.
    pub cells_lost_overflow: u64,
    pub cells_lost_ppd: u64,
    pub cells_lost_epd: u64,
    pub cells_lost_policed: u64,
    /// PDUs of which this port dropped at least one cell (EPD refusals included).
    pub pdus_damaged: u64,
    /// Cells a UPC at this port tagged CLP = 1.
    pub cells_tagged: u64,
    /// Of `cells_out`, cells of PDUs delivered intact, and cells of PDUs that
    /// were not (wasted: a cell of theirs was lost here or elsewhere; `net/waste.rs`).
    pub cells_delivered: u64,
    pub cells_wasted: u64,
    /// The simulator: time the port's link was idle while a connection whose
    /// data crosses it ran (the union of their spans less `cells_out` cell
    /// times), s; null where no connection's data crosses it.
    pub idle_s: Option<f64>,
    /// With `series`: `[t_s, cells]`, the occupancy just after accepted
    /// arrivals and 0 when the buffer empties (resolution:
    /// `Network::set_queue_series`). Absent without `series`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_series: Option<Vec<(f64, u32)>>,
    /// ABR at this port (None: none): the explicit rate ERICA advertised last,
    /// lowest and highest (bit/s of cells; None for EFCI and relative), data
    /// cells marked EFCI, BRMs given CI and NI.
    pub abr_er_bps: Option<f64>,
    pub abr_er_min_bps: Option<f64>,
    pub abr_er_max_bps: Option<f64>,
    pub abr_efci_marked: Option<u64>,
    pub abr_ci_set: Option<u64>,
    pub abr_ni_set: Option<u64>,
}

/// A UPC policer's verdicts: did the stream meet its contract?
#[derive(Clone, Debug, Serialize)]
pub struct PolicerResult {
    pub trunk: String,
    pub cells_in: u64,
    pub conforming: u64,
    pub non_conforming: u64,
    pub met_contract: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct SpecResult {
    pub connections: Vec<ConnResult>,
    pub ports: Vec<PortResult>,
    pub policers: Vec<PolicerResult>,
    pub events: u64,
    pub sim_seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<CellsResult>,
    /// Jain's fairness index over the connections' goodputs, and the
    /// connections ("transmitter->receiver") that got under 5% of their fair
    /// share at the port they shared (`sim::explain::capture`).
    pub fairness_jain: Option<f64>,
    pub starved: Vec<String>,
}

/// What the cell tester wrote.
#[derive(Clone, Debug, Serialize)]
pub struct CellsResult {
    pub place: String,
    /// The link, in words.
    pub link: String,
    pub path: String,
    pub phy: String,
    pub cell_time_ps: u64,
    /// The tester's slot (`CellsSpec::slot_us`), or the link's cell time.
    pub slot_ps: u64,
    pub cells: u64,
    pub pdus: u64,
    /// Cells decided to leave after the run's end (not in the file).
    pub cells_after_end: u64,
}

impl RunSpec {
    /// Check, build and run; results per connection and per switch port.
    pub fn run(&self) -> Result<SpecResult, ScenarioError> {
        let scenario = self.scenario()?;
        let Some(cells) = &self.cells else {
            let r: RunResult = run(&scenario)?;
            return Ok(self.results(&scenario, &r));
        };
        let (place, link, phy, cell_time, slot) =
            self.describe_capture(&scenario, &cells.place, cells.slot_us, "sim", &cells.path)?;
        let fail = |e: &dyn std::fmt::Display| {
            ScenarioError::run(format!("cells: cannot write {}: {e}", cells.path))
        };
        let file = std::fs::File::create(&cells.path).map_err(|e| fail(&e))?;
        let out: Box<dyn std::io::Write> =
            Box::new(std::io::BufWriter::with_capacity(64 << 10, file));
        let (r, counts) = run_captured(&scenario, &mut FlatOut, Some((place, out)))?;
        let counts = counts.expect("a tester was given");
        let mut result = self.results(&scenario, &r);
        result.cells = Some(CellsResult {
            place: cells.place.clone(),
            link,
            path: cells.path.clone(),
            phy,
            cell_time_ps: cell_time.as_ps(),
            slot_ps: slot.as_ps(),
            cells: counts.cells,
            pdus: counts.pdus,
            cells_after_end: counts.after_end,
        });
        Ok(result)
    }

    /// Every switch output port's name, in port order (the ports table's `host`):
    /// one per host (the port to it), then two per trunk (one per direction).
    pub fn port_labels(&self) -> Vec<String> {
        (0..self.hosts.len() + 2 * self.trunks.len())
            .map(|p| self.port_label(p))
            .collect()
    }

    /// What a switch output port leads to: its host's name, or "trunk a->b".
    fn port_label(&self, p: usize) -> String {
        match self.hosts.get(p) {
            Some(h) => h.name.clone(),
            None => {
                let Some(t) = self.trunks.get((p - self.hosts.len()) / 2) else {
                    return format!("port {p}");
                };
                let (a, b) = if (p - self.hosts.len()).is_multiple_of(2) {
                    (&t.from, &t.to)
                } else {
                    (&t.to, &t.from)
                };
                format!("trunk {a}->{b}")
            }
        }
    }

    /// Per switch port and per UPC, what the network's counters say, and with
    /// `series` each port's occupancy samples (`queue_series`, per port, as
    /// `Network::queue_series` gives them): the simulator's and the emulator's
    /// results share it.
    pub fn network_results(
        &self,
        ports: &[PortCounters],
        policers: &[PolicerCounters],
        queue_series: &[Vec<(SimTime, u32)>],
    ) -> (Vec<PortResult>, Vec<PolicerResult>) {
        let ports = ports
            .iter()
            .enumerate()
            .map(|(p, c)| PortResult {
                port: p,
                host: self.port_label(p),
                cells_in: c.cells_in,
                cells_out: c.cells_out,
                cells_lost: c.cells_lost.total(),
                peak_occupancy: c.peak_occupancy,
                cells_lost_clp: c.cells_lost.clp,
                cells_lost_overflow: c.cells_lost.overflow,
                cells_lost_ppd: c.cells_lost.ppd,
                cells_lost_epd: c.cells_lost.epd,
                cells_lost_policed: c.cells_lost.policing,
                pdus_damaged: c.pdus_damaged,
                cells_tagged: c.cells_tagged,
                cells_delivered: c.cells_delivered,
                cells_wasted: c.cells_wasted,
                idle_s: None,
                queue_series: queue_series
                    .get(p)
                    .filter(|_| self.series)
                    .map(|s| s.iter().map(|&(t, n)| (t.as_secs_f64(), n)).collect()),
                abr_er_bps: None,
                abr_er_min_bps: None,
                abr_er_max_bps: None,
                abr_efci_marked: None,
                abr_ci_set: None,
                abr_ni_set: None,
            })
            .collect();
        let policed: Vec<&TrunkSpec> = self.trunks.iter().filter(|t| t.upc.is_some()).collect();
        let policers = policers
            .iter()
            .zip(policed)
            .map(|(p, t)| PolicerResult {
                trunk: format!("{}->{}", t.from, t.to),
                cells_in: p.cells_in,
                conforming: p.conforming,
                non_conforming: p.non_conforming(),
                met_contract: p.non_conforming() == 0,
            })
            .collect();
        (ports, policers)
    }

    /// The spec's results of a finished run: per connection, then per port and UPC.
    fn results(&self, scenario: &Scenario, r: &RunResult) -> SpecResult {
        let connections = (0..r.transfers.len())
            .map(|i| self.connection_result(scenario, r, i))
            .collect();
        let (mut ports, policers) = self.network_results(&r.ports, &r.policers, &r.queue_series);
        for p in &mut ports {
            p.idle_s = port_idle(scenario, r, p.port).map(SimTime::as_secs_f64);
        }
        let starved = (0..r.transfers.len())
            .filter(|&i| {
                capture::sharing(scenario, r, i)
                    .is_some_and(|s| capture::starved(scenario, r, &s, i))
            })
            .map(|i| self.connection_name(i))
            .collect();
        for (port, abr) in ports.iter_mut().zip(&r.abr_ports) {
            let Some(k) = abr else { continue };
            let erica = k.er_last > 0.0;
            port.abr_er_bps = erica.then_some(k.er_last * CELL_BITS);
            port.abr_er_min_bps = erica.then_some(k.er_min * CELL_BITS);
            port.abr_er_max_bps = erica.then_some(k.er_max * CELL_BITS);
            port.abr_efci_marked = Some(k.efci_marked);
            port.abr_ci_set = Some(k.ci_set);
            port.abr_ni_set = Some(k.ni_set);
        }
        SpecResult {
            connections,
            ports,
            policers,
            events: r.events,
            sim_seconds: r.end_time.as_secs_f64(),
            cells: None,
            fairness_jain: capture::run_fairness(scenario, r),
            starved,
        }
    }

    /// A connection by its ends, "transmitter->receiver".
    fn connection_name(&self, i: usize) -> String {
        let c = &self.connections[i];
        format!("{}->{}", c.transmitter, c.receiver)
    }

    /// What connection `i` did, what bound it and the evidence.
    fn connection_result(&self, scenario: &Scenario, r: &RunResult, i: usize) -> ConnResult {
        let t = &r.transfers[i];
        let c = &self.connections[i];
        let records: Vec<TraceRecord> = r
            .trace
            .iter()
            .filter(|x| x.transfer == i)
            .copied()
            .collect();
        let port_name = |p: usize| match self.hosts.get(p) {
            Some(h) => format!("the port to {}", h.name),
            None => format!("the {}", self.port_label(p)),
        };
        let facts = Facts::gather(scenario, r, i, &port_name);
        let captured = capture::capture(scenario, r, i, &port_name, &|j| self.connection_name(j));
        let why = self.why_limited(scenario, r, t, &facts, captured);
        let fwd = scenario.transfers[i].circuit;
        let abr = r.abr_sources.get(fwd).copied().flatten();
        ConnResult {
            transmitter: c.transmitter.clone(),
            receiver: c.receiver.clone(),
            start_s: t.started_at.map(SimTime::as_secs_f64),
            end_s: t.ended_at.map(SimTime::as_secs_f64),
            completed: t.completed,
            bytes: t.bytes,
            bytes_received: t.bytes_received,
            sender_seconds: t.sender_seconds,
            receiver_seconds: t.receiver_seconds,
            throughput_bps: t.throughput_bps(),
            throughput_mbit_ttcp: t.mbit_ttcp(),
            goodput_bps: t.goodput_bps(),
            sender_bps: t.sender_bps(),
            lockstep: t.lockstep(),
            circular_wait_seconds: t.circular_wait_seconds,
            writes: t.writes,
            reads: t.reads,
            data_segments: t.sender.data_segs_sent,
            retransmitted_segments: t.sender.segs_retransmitted,
            timeouts: t.sender.timeouts,
            receiver_acks: t.receiver.acks_sent,
            delayed_acks: t.receiver.delayed_acks,
            window_updates: t.receiver.window_updates,
            pdus_dropped_at_adapter: t.pdus_dropped_at_adapter.iter().sum(),
            pdus_dropped_at_sender_adapter: t.pdus_dropped_at_adapter[0],
            pdus_dropped_at_receiver_adapter: t.pdus_dropped_at_adapter[1],
            cells_lost: r.circuits[scenario.transfers[i].circuit].cells_lost
                + r.circuits[scenario.transfers[i].return_circuit].cells_lost,
            data_pdus_sent: r.circuits[scenario.transfers[i].circuit].pdus_sent,
            data_pdus_lost: r.circuits[scenario.transfers[i].circuit].pdus_lost,
            cells_policed: r.circuits[scenario.transfers[i].circuit]
                .lost_by_cause
                .policing,
            cells_tagged: r.circuits[scenario.transfers[i].circuit].cells_tagged,
            cells_lost_clp: r.circuits[scenario.transfers[i].circuit].lost_by_cause.clp,
            datagrams_sent: t.udp.map(|u| u.datagrams_sent),
            datagrams_received: t.udp.map(|u| u.datagrams_received),
            datagrams_dropped_no_buffer: t.udp.map(|u| u.dropped_no_buffer),
            transactions: t.transactions,
            transaction_rate: t.transactions.map(|n| {
                if t.sender_seconds > 0.0 {
                    n as f64 / t.sender_seconds
                } else {
                    0.0
                }
            }),
            trace: records.iter().map(|x| x.line()).collect(),
            trace_records: records.iter().map(TraceRow::from).collect(),
            lockstep_cycle: lockstep_cycle(&records).map(CycleResult::from),
            // A cut run keeps a bound the evidence shows; without one, the cut is it.
            limited_by: if t.completed || why.limited_by != LimitedBy::Undetermined {
                why.limited_by.as_str()
            } else if r.budget_cut.is_some() {
                BUDGET_CUT
            } else {
                TRUNCATED
            },
            limit_evidence: why.evidence,
            min_rtt_s: t.probe.min_rtt.map(|x| x.as_secs_f64()),
            peak_flight_bytes: t.probe.peak_flight,
            sender_cpu_busy: t.probe.cpu_busy.map(|b| b[0]),
            receiver_cpu_busy: t.probe.cpu_busy.map(|b| b[1]),
            path_payload_bps: facts.path.as_ref().map(|p| p.payload_bps),
            cwnd_series: r.cwnd_series.get(i).filter(|_| self.series).map(|s| {
                s.iter()
                    .map(|x| (x.at.as_secs_f64(), x.cwnd, x.ssthresh, x.flight))
                    .collect()
            }),
            max_backoff: t.sender.max_backoff,
            rexmt_wait_s: t.sender.rexmt_wait.as_secs_f64(),
            abr_acr_bps: abr.map(|k| k.acr * CELL_BITS),
            abr_acr_min_bps: abr.map(|k| k.acr_min * CELL_BITS),
            abr_acr_mean_bps: abr.map(|k| k.acr_mean * CELL_BITS),
            abr_frm_sent: abr.map(|k| k.frm_sent),
            abr_brm_returned: abr.map(|k| k.brm_returned),
            abr_rm_lost: abr.map(|k| k.rm_lost),
            abr_time_at_mcr_s: abr.map(|k| k.time_at_mcr.as_secs_f64()),
            acr_series: r
                .acr_series
                .get(fwd)
                .filter(|_| self.series && abr.is_some())
                .map(|s| {
                    s.iter()
                        .map(|&(t, a)| (t.as_secs_f64(), a * CELL_BITS))
                        .collect()
                }),
        }
    }

    /// What bound a connection: the classification of its facts (`sim::explain`),
    /// except that a transaction has bounds of its own and a run cut short says so first.
    fn why_limited(
        &self,
        scenario: &Scenario,
        r: &RunResult,
        t: &TransferResult,
        facts: &Facts,
        captured: Option<String>,
    ) -> Explanation {
        let mut why = classify(facts);
        if let Some(evidence) = captured {
            // Starved while another held the port: that is what bound it, and
            // the rules' own finding (what the starved sender saw) follows.
            why.evidence = format!("{evidence}; {}: {}", why.limited_by, why.evidence);
            why.limited_by = LimitedBy::Capture;
        }
        if let Some(n) = t.transactions {
            // A stream's bounds (a rate against the path, the window, a paced
            // load) say nothing of a transaction: what one took against the
            // request's round trip does. The lock-step, losses and a saturated
            // CPU bind a transaction as they bind a stream (two CPUs' shares
            // added are a transaction's host work, which its evidence gives).
            let saturated = facts
                .cpu_busy
                .is_some_and(|b| b[0].max(b[1]) >= explain::CPU_BUSY);
            let binds = match why.limited_by {
                LimitedBy::Lockstep | LimitedBy::Policing | LimitedBy::CellLoss => true,
                LimitedBy::HostCpu => saturated,
                _ => false,
            };
            if !binds {
                why.limited_by = LimitedBy::Undetermined;
                why.evidence = transaction_evidence(n, t);
            }
        }
        if let Some(udp) = t.udp {
            why.evidence += &udp_losses(t, &udp, facts);
        }
        // A cut run reports its rate so far (world/results.rs) and says it was cut.
        if !t.completed {
            // Whatever else bound it, the run did not finish: say so first.
            let by = match r.budget_cut {
                Some(at) => format!(
                    "the event budget ({} events, max_events) at {:.3} s of \
                     simulated time",
                    scenario.event_budget,
                    at.as_secs_f64()
                ),
                None => format!("the simulated-time limit ({} s)", self.time_limit_s),
            };
            why.evidence = format!(
                "truncated: cut by {by} after {} of its bytes were written, {:.3} \
                 Mb/s so far; {}",
                t.bytes,
                t.throughput_bps() / 1e6,
                why.evidence
            );
        }
        why
    }
}

/// A UDP connection's offered load and where its datagrams were lost, for its
/// evidence: `throughput_bps` is what arrived, so the rest must be said beside it.
fn udp_losses(t: &TransferResult, udp: &UdpStats, facts: &Facts) -> String {
    let (sent, got) = (udp.datagrams_sent, udp.datagrams_received);
    let mut s = format!(
        "; offered {:.2} Mb/s: {got} of {sent} datagrams arrived",
        t.sender_bps() / 1e6
    );
    if got >= sent {
        return s;
    }
    s += &format!(" ({:.0}% lost", 100.0 * (sent - got) as f64 / sent as f64);
    let places = [
        (
            t.pdus_dropped_at_adapter[0],
            "PDUs refused by the sender's adapter queue",
        ),
        (facts.cells_lost_in_buffers, "cells dropped at switch ports"),
        (facts.cells_policed, "cells discarded by the policer"),
        (
            udp.dropped_no_buffer,
            "datagrams dropped at the receiver's full socket buffer",
        ),
    ];
    let said: Vec<String> = places
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if !said.is_empty() {
        s += &format!(": {}", said.join(", "));
    }
    s + ")"
}

/// What one request/response transaction took: its period against the
/// shortest round trip of a request, and how busy each host's CPU was.
fn transaction_evidence(n: u64, t: &TransferResult) -> String {
    let mut s = format!(
        "request/response: {n} transactions in {:.2} s",
        t.sender_seconds
    );
    if n > 0 {
        s += &format!(", one every {:.3} ms", t.sender_seconds * 1e3 / n as f64);
    }
    if let Some(rtt) = t.probe.min_rtt {
        s += &format!(
            "; a request's round trip (to the response acknowledging it) at least {:.3} ms",
            rtt.as_secs_f64() * 1e3
        );
    }
    if let Some([a, b]) = t.probe.cpu_busy {
        s += &format!(
            "; CPU busy {:.0}% sender, {:.0}% receiver",
            a * 100.0,
            b * 100.0
        );
    }
    s
}

/// Time port `p`'s link was idle while a connection whose data crosses it
/// ran: the union of those connections' spans (start to end, or the run's
/// end), less the time its cells took (`cells_out` cell times). None if no
/// connection's data crosses it.
fn port_idle(scenario: &Scenario, r: &RunResult, p: usize) -> Option<SimTime> {
    let topo = &scenario.topology;
    let mut spans: Vec<(SimTime, SimTime)> = scenario
        .transfers
        .iter()
        .zip(&r.transfers)
        .filter(|(s, _)| {
            topo.circuits
                .get(s.circuit)
                .is_some_and(|c| c.hops.iter().any(|h| h.port == p))
        })
        .filter_map(|(_, t)| Some((t.started_at?, t.ended_at.unwrap_or(r.end_time))))
        .collect();
    if spans.is_empty() {
        return None;
    }
    spans.sort();
    let mut covered = SimTime::ZERO;
    let mut cur = spans[0];
    for &(a, b) in &spans[1..] {
        if a <= cur.1 {
            cur.1 = cur.1.max(b);
        } else {
            covered += cur.1 - cur.0;
            cur = (a, b);
        }
    }
    covered += cur.1 - cur.0;
    let cell = topo.ports.get(p)?.rate.time_for_bits(424);
    let busy = cell.times(r.ports.get(p)?.cells_out);
    Some(covered.saturating_sub(busy))
}
