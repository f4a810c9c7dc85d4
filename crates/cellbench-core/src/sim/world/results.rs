//! A run's results: what each transfer's applications saw (ttcp's and
//! netperf's figures, a cut transfer's rate so far), its TCP statistics and
//! probe, and the network's counters and series. Apart from the loop: it reads
//! the world once, after it stopped.

use super::apps::App;
use super::{ProbeResult, Protocol, RunResult, Scenario, TransferResult, World};
use crate::host::ttcp::Limit;
use crate::host::udp::UdpStats;
use crate::time::SimTime;

impl World {
    pub(super) fn results(&mut self, scenario: &Scenario) -> RunResult {
        let mut transfers = Vec::new();
        for (i, spec) in scenario.transfers.iter().enumerate() {
            let (s, r) = (&self.eps[2 * i], &self.eps[2 * i + 1]);
            let secs = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
                (Some(a), Some(b)) if b > a => (b - a).as_secs_f64(),
                _ => 0.0,
            };
            // A side the time limit (or the event budget) cut ran until then: its
            // rate so far.
            let cut = Some(self.budget_cut.unwrap_or(scenario.time_limit));
            let ends = match (&s.app, &r.app) {
                (App::Source(src), App::Sink(sink)) => Ends {
                    completed: src.finished.is_some()
                        && match (spec.protocol, spec.limit) {
                            // A UDP receiver takes what arrives; losses do not make it incomplete.
                            (Protocol::Udp, _) => sink.finished.is_some(),
                            (Protocol::Tcp, Limit::Bytes(n)) => sink.read >= n,
                            (Protocol::Tcp, Limit::Duration(_)) => sink.finished.is_some(),
                        },
                    bytes: src.written,
                    bytes_received: sink.read,
                    sender_seconds: secs(src.started, src.finished.or(cut)),
                    receiver_seconds: secs(sink.started, sink.finished.or(cut)),
                    writes: src.writes,
                    reads: sink.reads,
                    transactions: None,
                },
                // Request/response: the transmitter's figures are the client's
                // (its requests out, its elapsed time to the alarm); the receiver's
                // the server's (the requests it read).
                (App::Exchange(client), App::Exchange(server)) => Ends {
                    completed: client.finished.is_some() && server.finished.is_some(),
                    bytes: client.written,
                    bytes_received: server.read,
                    sender_seconds: secs(client.started, client.interval_end().or(cut)),
                    receiver_seconds: secs(client.started, server.finished.or(cut)),
                    writes: client.writes,
                    reads: server.reads,
                    transactions: Some(client.transactions),
                },
                _ => unreachable!("endpoints are created in pairs"),
            };
            transfers.push(TransferResult {
                completed: ends.completed,
                bytes: ends.bytes,
                bytes_received: ends.bytes_received,
                sender_seconds: ends.sender_seconds,
                receiver_seconds: ends.receiver_seconds,
                writes: ends.writes,
                reads: ends.reads,
                transactions: ends.transactions,
                sender: s.tcb.stats,
                receiver: r.tcb.stats,
                pdus_dropped_at_adapter: self.adapter_drops[i],
                // A client's wait after its alarm (finishing the last transaction) is
                // past netperf's elapsed time.
                circular_wait_seconds: match ends.transactions {
                    Some(_) => self.wait_total[i].as_secs_f64().min(ends.sender_seconds),
                    None => self.wait_total[i].as_secs_f64(),
                },
                probe: {
                    let p = &self.probes[i];
                    ProbeResult {
                        min_rtt: p.min_rtt,
                        peak_flight: p.peak_flight,
                        largest_segment: p.largest_segment,
                        largest_segment_buffers: p.largest_segment_buffers.clone(),
                        cpu_busy: p.cpu_busy,
                        holding_seconds: p.hold_total.as_secs_f64(),
                        window_cycles: p.window_cycles,
                        window_wait_seconds: p.window_wait_total.as_secs_f64(),
                    }
                },
                started_at: self.starts.started_at[i],
                ended_at: self.starts.ended_at[i],
                udp: s.udp.as_ref().map(|u| UdpStats {
                    datagrams_received: r.udp.as_ref().map_or(0, |v| v.stats.datagrams_received),
                    dropped_no_buffer: r.udp.as_ref().map_or(0, |v| v.stats.dropped_no_buffer),
                    ..u.stats
                }),
            });
        }
        RunResult {
            transfers,
            ports: (0..scenario.topology.ports.len())
                .map(|p| self.net.port_counters(p))
                .collect(),
            policers: (0..scenario.topology.policers.len())
                .map(|p| self.net.policer_counters(p))
                .collect(),
            circuits: (0..scenario.topology.circuits.len())
                .map(|c| self.net.circuit_counters(c))
                .collect(),
            end_time: self.now,
            budget_cut: self.budget_cut,
            events: self.events_handled + self.net.events_processed(),
            trace: self.trace.take().unwrap_or_default(),
            cwnd_series: self.cwnd_series.take().unwrap_or_default(),
            queue_series: if scenario.series {
                (0..scenario.topology.ports.len())
                    .map(|p| self.net.queue_series(p, self.now))
                    .collect()
            } else {
                Vec::new()
            },
            abr_sources: (0..scenario.topology.circuits.len())
                .map(|c| self.net.abr_source_counters(c))
                .collect(),
            acr_series: if scenario.series {
                (0..scenario.topology.circuits.len())
                    .map(|c| self.net.acr_series(c).to_vec())
                    .collect()
            } else {
                Vec::new()
            },
            abr_ports: (0..scenario.topology.ports.len())
                .map(|p| self.net.abr_port_counters(p))
                .collect(),
        }
    }
}

/// What one transfer's two applications saw (`World::results`).
struct Ends {
    completed: bool,
    bytes: u64,
    bytes_received: u64,
    sender_seconds: f64,
    receiver_seconds: f64,
    writes: u64,
    reads: u64,
    transactions: Option<u64>,
}
