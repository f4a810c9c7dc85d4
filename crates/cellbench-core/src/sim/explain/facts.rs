//! What `classify` looks at for one connection ([`Facts`]), gathered
//! from a run's results and its scenario: the offered load, the path's rate
//! for the connection's PDUs, the connections sharing its slowest port, its
//! window and round trip, its CPUs, its losses. Apart from the rules: the
//! facts are measured here and judged there (tests build them by hand).

use crate::atm::phy::CELL_BITS;
use crate::host::ttcp::Pace;
use crate::sim::net::{
    aal5_cells, ether, AbrSwitch, AdapterSpec, CircuitCounters, CircuitId, Topology, TxSpacing,
    VcPacing,
};
use crate::sim::scenario::{Protocol, RunResult, Scenario, TransferResult, TransferSpec};
use crate::time::{BitRate, SimTime};

/// The rate of a connection's path for its largest PDUs (or datagrams).
#[derive(Clone, Debug, PartialEq)]
pub struct PathRate {
    /// Payload (TCP data or UDP data) the path carries at most, bit/s.
    pub payload_bps: f64,
    /// Data bytes per PDU (per datagram for UDP) it is reckoned for, and its cells.
    pub unit_bytes: u32,
    pub unit_cells: u32,
    /// What sets it: "the adapter paced at 70 Mb/s", "the link trunk west->east (OC-3c)".
    pub bottleneck: String,
}

/// What an ABR circuit's allowed cell rate carries of a connection's PDUs.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrRate {
    /// ACR's time-weighted mean over the circuit's active time (its first
    /// cell to its last), bit/s of cells: the rate the source was allowed.
    pub acr_mean_bps: f64,
    /// ACR at the end of the run, and the lowest and highest it was, bit/s of cells.
    pub acr_bps: f64,
    pub acr_range_bps: (f64, f64),
    /// Payload the mean carries at most, bit/s, and the data bytes per PDU it is reckoned for.
    pub payload_bps: f64,
    pub unit_bytes: u32,
    /// The switches' feedback that set it: "ERICA's explicit rate at the port to b, target 0.9".
    pub feedback: String,
}

/// Parallel connections sharing the slowest switch port on this one's path.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedLink {
    pub port: String,
    /// Connections crossing it (this one included), and what they delivered
    /// ([`delivered_bps`]) summed, bit/s.
    pub connections: usize,
    pub total_bps: f64,
    /// What the port carries at most in this connection's PDUs, bit/s.
    pub capacity_bps: f64,
}

/// The window a TCP connection used and the round trip it saw.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFacts {
    /// The most data in flight at once, bytes.
    pub peak_flight: u32,
    pub min_rtt: SimTime,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    /// The closed window's cycles, host work included (`ProbeResult::window_cycles`):
    /// how many, the window bytes in flight summed, their time summed.
    pub closed_cycles: u32,
    pub closed_bytes: u64,
    pub closed_time: SimTime,
}

impl WindowFacts {
    /// What the closed window lets through over the round trip it really
    /// took: the mean window over the mean cycle, bit/s (None if it never closed).
    pub fn closed_bound_bps(&self) -> Option<f64> {
        let secs = self.closed_time.as_secs_f64();
        (self.closed_cycles > 0 && secs > 0.0).then(|| self.closed_bytes as f64 * 8.0 / secs)
    }
}

/// Everything [`classify`](fn@super::classify) looks at, for one connection. Plain data: tests
/// build it by hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub tcp: bool,
    /// Throughput as the row reports it, bit/s: over TCP ttcp -t's, bytes written
    /// over `sender_seconds`; over UDP what arrived (`delivered_bps`).
    pub throughput_bps: f64,
    /// What crossed the path, bit/s ([`delivered_bps`]). Every bound that is a
    /// rate (the offered load, the ACR, the path, the window over the round
    /// trip) is judged on it: ttcp -t's figure also counts what was still in
    /// the socket buffer when the writes ended, which no path had carried yet
    /// (docs/mechanisms.md, "What bound a transfer").
    pub delivered_bps: f64,
    pub sender_seconds: f64,
    /// A paced source's mean offered load, bit/s.
    pub offered_bps: Option<f64>,
    /// Time in the Nagle/delayed-ACK circular wait, and whether it was most of the transfer.
    pub circular_wait_seconds: f64,
    pub lockstep: bool,
    /// Of the circular wait, the time the sender's window was closed (the
    /// receiver left the update reopening it to its timer).
    pub window_wait_seconds: f64,
    /// Time the sender held back data its window allowed (Nagle, sender SWS avoidance).
    pub holding_seconds: f64,
    pub path: Option<PathRate>,
    /// Only for an ABR data circuit.
    pub abr: Option<AbrRate>,
    pub shared: Option<SharedLink>,
    /// Busy share of the transfer of the sender's and the receiver's CPU, and their profiles.
    pub cpu_busy: Option<[f64; 2]>,
    pub cpu_profiles: [String; 2],
    pub window: Option<WindowFacts>,
    pub cells_policed: u64,
    /// Cells dropped at switch buffers (tail drop, PPD, EPD, CLP-1 threshold), both directions.
    pub cells_lost_in_buffers: u64,
    /// PDUs refused by a full interface queue, the sender's (its data) and the
    /// receiver's (its ACKs), and the PDUs the sender's queue holds (`ifq_maxlen`).
    pub pdus_dropped_at_adapter: [u64; 2],
    pub ifq_pdus: Option<usize>,
    pub data_pdus_sent: u64,
    pub data_pdus_lost: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
}

impl Facts {
    /// The facts of transfer `i` of a run. `port_name` names a switch output
    /// port for the evidence ("the trunk west->east", "the port to sparc10").
    pub fn gather(
        scenario: &Scenario,
        run: &RunResult,
        i: usize,
        port_name: &dyn Fn(usize) -> String,
    ) -> Facts {
        let spec = &scenario.transfers[i];
        let t = &run.transfers[i];
        let tcp = spec.protocol == Protocol::Tcp;
        let data = run.circuits.get(spec.circuit).copied().unwrap_or_default();
        let back = run
            .circuits
            .get(spec.return_circuit)
            .copied()
            .unwrap_or_default();
        let buffer_loss = |c: &CircuitCounters| c.lost_by_cause.total() - c.lost_by_cause.policing;
        let offered_bps = offered_bps(spec);
        let unit = unit_pdus(spec, t);
        let path = unit.as_ref().and_then(|(bytes, pdus)| {
            path_rate(&scenario.topology, spec.circuit, *bytes, pdus, port_name)
        });
        let abr = unit.as_ref().and_then(|(bytes, pdus)| {
            abr_rate(
                &scenario.topology,
                run,
                spec.circuit,
                *bytes,
                pdus,
                port_name,
            )
        });
        let shared = unit
            .as_ref()
            .and_then(|(bytes, pdus)| shared_link(scenario, run, i, *bytes, pdus, port_name));
        let window = match (tcp, t.probe.min_rtt) {
            (true, Some(min_rtt)) => Some(WindowFacts {
                peak_flight: t.probe.peak_flight,
                min_rtt,
                sndbuf: spec.sndbuf,
                rcvbuf: spec.rcvbuf,
                closed_cycles: t.probe.window_cycles.0,
                closed_bytes: t.probe.window_cycles.1,
                closed_time: t.probe.window_cycles.2,
            }),
            _ => None,
        };
        Facts {
            tcp,
            throughput_bps: t.throughput_bps(),
            delivered_bps: delivered_bps(run, i),
            sender_seconds: t.sender_seconds,
            offered_bps,
            // Within the sender's time: the last wait may outlast its last
            // write (the data sits in the buffer until the timer releases it).
            circular_wait_seconds: t.circular_wait_seconds.min(t.sender_seconds),
            lockstep: t.lockstep(),
            window_wait_seconds: t.probe.window_wait_seconds.min(t.sender_seconds),
            holding_seconds: t.probe.holding_seconds,
            path,
            abr,
            shared,
            cpu_busy: t.probe.cpu_busy,
            cpu_profiles: [spec.sender, spec.receiver]
                .map(|h| scenario.hosts.get(h).map_or("?", |p| p.name).to_string()),
            window,
            cells_policed: data.lost_by_cause.policing,
            cells_lost_in_buffers: buffer_loss(&data) + buffer_loss(&back),
            pdus_dropped_at_adapter: t.pdus_dropped_at_adapter,
            ifq_pdus: scenario
                .topology
                .circuits
                .get(spec.circuit)
                .and_then(|c| scenario.topology.adapters.get(c.src))
                .map(|a| a.tx_queue_pdus),
            data_pdus_sent: data.pdus_sent,
            data_pdus_lost: data.pdus_lost,
            retransmitted_segments: t.sender.segs_retransmitted,
            timeouts: t.sender.timeouts,
        }
    }
}

/// What transfer `i` delivered, bit/s: the bytes its receiving application
/// read over the transfer's span, from its sender's start to both ends
/// finishing (the last byte read; a cut run: the cut), the row's `start_s` to
/// `end_s`. The span, one interval for TCP and its sender's figures alike,
/// rather than ttcp -r's, which begins when accept() returns, the handshake's
/// last ACK in, a round trip and a half after the sender's start (ttcp.c's
/// prep_timer() follows accept(); `host::ttcp::TtcpSink::step`). UDP, which
/// resends nothing, keeps the receiver's interval, first datagram to last, as
/// its row's throughput does (its span ends a linger after the transmitter,
/// `UDP_LINGER` in world/apps.rs, not at the last datagram), less the first
/// datagram, which arrived before that interval began: n datagrams cross in
/// the time of n - 1 (two of 51157 arriving back to back read as twice the
/// link's rate otherwise).
pub fn delivered_bps(run: &RunResult, i: usize) -> f64 {
    let Some(t) = run.transfers.get(i) else {
        return 0.0;
    };
    if let Some(u) = t.udp {
        let n = u.datagrams_received as f64;
        return if n > 1.0 {
            t.goodput_bps() * (n - 1.0) / n
        } else {
            0.0
        };
    }
    match t.started_at {
        Some(from) => {
            let secs = t
                .ended_at
                .unwrap_or(run.end_time)
                .saturating_sub(from)
                .as_secs_f64();
            if secs > 0.0 {
                t.bytes_received as f64 * 8.0 / secs
            } else {
                0.0
            }
        }
        None => 0.0,
    }
}

/// A paced source's mean offered load, bit/s (None for a full-blast one).
fn offered_bps(spec: &TransferSpec) -> Option<f64> {
    match spec.pace {
        Pace::Full => None,
        Pace::Every {
            period_us, blocks, ..
        } => {
            let block = spec.block_size.map_or(spec.buflen as f64, |d| d.mean()) * blocks as f64;
            let period = period_us.mean() * 1e-6;
            (period > 0.0).then(|| block * 8.0 / period)
        }
    }
}

/// The PDUs that carry one unit of data: the largest TCP segment seen (the
/// MSS, once options are counted), or one datagram's IP fragments.
/// Each PDU with the host buffers it is gathered from (`Network::send_gathered`).
fn unit_pdus(spec: &TransferSpec, t: &TransferResult) -> Option<(u32, Vec<Gathered>)> {
    if spec.protocol == Protocol::Tcp {
        t.probe.largest_segment.map(|(len, ip_len)| {
            let buffers = t.probe.largest_segment_buffers.clone();
            (len, vec![(ip_len + spec.encap_header, buffers)])
        })
    } else {
        let ip = crate::host::udp::IP_HEADER;
        let mut offset = 0;
        let frags = crate::host::udp::fragments(spec.buflen, spec.mtu);
        let pdus = frags.iter().map(|&l| {
            let mut buffers = Vec::new();
            crate::host::socket::udp_fragment_gather(
                offset,
                l - ip,
                spec.encap_header + ip,
                &mut buffers,
            );
            offset += l - ip;
            (l + spec.encap_header, buffers)
        });
        Some((spec.buflen, pdus.collect()))
    }
}

/// The connections (this one among them) that cross the slowest switch port
/// of transfer `i`'s path while it runs, and what that port carries at most
/// in `bytes` of data in the PDUs `pdus`.
fn shared_link(
    scenario: &Scenario,
    run: &RunResult,
    i: usize,
    bytes: u32,
    pdus: &[Gathered],
    port_name: &dyn Fn(usize) -> String,
) -> Option<SharedLink> {
    let spec = &scenario.transfers[i];
    let topo = &scenario.topology;
    let hops = &topo.circuits.get(spec.circuit)?.hops;
    let slowest = hops
        .iter()
        .map(|h| h.port)
        .max_by_key(|&p| topo.ports[p].rate.time_for_bits(CELL_BITS))?;
    let cells: u32 = pdus.iter().map(|(l, _)| aal5_cells(*l)).sum();
    let time = topo.ports[slowest]
        .rate
        .time_for_bits(CELL_BITS)
        .times(cells as u64);
    // Only connections running at the same time share it: one of an
    // earlier serial step has ended before this one starts.
    let span = |j: usize| {
        let t = run.transfers.get(j)?;
        Some((t.started_at?, t.ended_at.unwrap_or(run.end_time)))
    };
    let (from, to) = span(i)?;
    let sharing: Vec<usize> = (0..scenario.transfers.len())
        .filter(|&j| {
            topo.circuits
                .get(scenario.transfers[j].circuit)
                .is_some_and(|c| c.hops.iter().any(|h| h.port == slowest))
                && span(j).is_some_and(|(a, b)| j == i || (a < to && from < b))
        })
        .collect();
    Some(SharedLink {
        port: port_name(slowest),
        connections: sharing.len(),
        // Each at its mean rate, for the part of this one's span it ran.
        total_bps: sharing
            .iter()
            .map(|&j| {
                let (a, b) = span(j).expect("filtered on its span");
                let overlap = b.min(to).saturating_sub(a.max(from));
                let whole = (to - from).as_secs_f64();
                let part = if whole > 0.0 {
                    overlap.as_secs_f64() / whole
                } else {
                    1.0
                };
                delivered_bps(run, j) * part
            })
            .sum(),
        capacity_bps: bytes as f64 * 8.0 / time.as_secs_f64().max(f64::MIN_POSITIVE),
    })
}

/// A PDU's CPCS payload length and the offsets where its host buffers after
/// the first begin.
pub type Gathered = (u32, Vec<u32>);

/// What a framed circuit carries at most: the segment's medium time per frame,
/// preamble to gap; on a shared (half-duplex) medium the ACKs' frames come on
/// top of it.
fn frame_path_rate(
    topo: &Topology,
    segment: usize,
    bytes: u32,
    pdus: &[Gathered],
) -> Option<PathRate> {
    let seg = topo.segments.get(segment)?;
    let time: SimTime = pdus
        .iter()
        .map(|(len, _)| ether::wire_time(seg.rate, *len))
        .fold(SimTime::ZERO, |a, b| a + b);
    let secs = time.as_secs_f64();
    let shared = if seg.duplex == ether::Duplex::Half {
        ": ACKs share it"
    } else {
        ""
    };
    (secs > 0.0).then(|| PathRate {
        payload_bps: bytes as f64 * 8.0 / secs,
        unit_bytes: bytes,
        unit_cells: 0,
        bottleneck: format!(
            "the Ethernet segment ({:.0} Mb/s, {} duplex{shared})",
            seg.rate.mbps(),
            seg.duplex.name()
        ),
    })
}

/// What circuit `c` carries at most: `bytes` of data in PDUs of the given
/// CPCS payload lengths and host buffers, through the sender's adapter (its
/// pacing or spacing and PDU gap) and every switch port on the way; the
/// slowest of them decides.
pub fn path_rate(
    topo: &Topology,
    c: CircuitId,
    bytes: u32,
    pdus: &[Gathered],
    port_name: &dyn Fn(usize) -> String,
) -> Option<PathRate> {
    let circuit = topo.circuits.get(c)?;
    if let Some(f) = topo.framed.iter().find(|f| f.circuit == c) {
        return frame_path_rate(topo, f.segment, bytes, pdus);
    }
    let adapter = topo.adapters.get(circuit.src)?;
    let pacing = topo.pacing.iter().find(|p| p.circuit == c);
    let total_cells: u32 = pdus.iter().map(|(l, _)| aal5_cells(*l)).sum();
    let at_adapter = adapter_time(adapter, pacing, pdus);
    let adapter_what = match (pacing, adapter.tx) {
        (Some(p), _) => format!(
            "the adapter paced at {:.2} Mb/s of {}",
            p.rate_bps() / 1e6,
            p.counts.describe()
        ),
        (None, TxSpacing::None) if adapter.pdu_gap > SimTime::ZERO => format!(
            "the sender's adapter ({:.2} Mb/s of cells, {:.0} µs between PDUs)",
            adapter.rate.mbps(),
            adapter.pdu_gap.as_us_f64()
        ),
        (None, TxSpacing::None) => format!(
            "the sender's adapter ({:.2} Mb/s of cells)",
            adapter.rate.mbps()
        ),
        (None, tx) => format!(
            "the adapter spacing cells {:.2} µs apart",
            tx.mean_interval(adapter.rate.time_for_bits(CELL_BITS))
                .as_us_f64()
        ),
    };
    let mut slowest = (at_adapter, adapter_what);
    for h in &circuit.hops {
        let port = topo.ports.get(h.port)?;
        let time = port.rate.time_for_bits(CELL_BITS).times(total_cells as u64);
        if time > slowest.0 {
            slowest = (
                time,
                format!(
                    "{} ({:.2} Mb/s of cells)",
                    port_name(h.port),
                    port.rate.mbps()
                ),
            );
        }
    }
    let secs = slowest.0.as_secs_f64();
    (secs > 0.0).then(|| PathRate {
        payload_bps: bytes as f64 * 8.0 / secs,
        unit_bytes: bytes,
        unit_cells: total_cells,
        bottleneck: slowest.1,
    })
}

/// The sender's adapter's time for the PDUs, paced or not (its cell spacing
/// and PDU gap counted): one reckoning for pacing and for an ABR circuit's ACR.
fn adapter_time(adapter: &AdapterSpec, pacing: Option<&VcPacing>, pdus: &[Gathered]) -> SimTime {
    let cell = adapter.rate.time_for_bits(CELL_BITS);
    pdus.iter()
        .map(|(len, buffers)| {
            let n = aal5_cells(*len);
            let paced = pacing.map(|p| p.cell_interval(n, *len, cell));
            adapter.pdu_period(paced, n, buffers)
        })
        .fold(SimTime::ZERO, |a, b| a + b)
}

/// What ABR circuit `c`'s allowed cell rate, its time-weighted mean over the
/// circuit's active time, carries at most of `bytes` in these PDUs: the adapter paced at ACR less the in-rate
/// forward RM cells, one of every Nrm cells (TM 4.0 §5.10.4 rule 3), the
/// adapter's time reckoned as for pacing. None for a circuit that is not ABR.
fn abr_rate(
    topo: &Topology,
    run: &RunResult,
    c: CircuitId,
    bytes: u32,
    pdus: &[Gathered],
    port_name: &dyn Fn(usize) -> String,
) -> Option<AbrRate> {
    let counters = run.abr_sources.get(c).copied().flatten()?;
    let acr = counters.acr_mean;
    let nrm = topo.abr_sources.iter().find(|s| s.circuit == c)?.nrm as f64;
    let circuit = topo.circuits.get(c)?;
    let adapter = topo.adapters.get(circuit.src)?;
    let acr_mean_bps = acr * CELL_BITS as f64;
    let data_bps = acr_mean_bps * (nrm - 1.0) / nrm;
    let pacing = VcPacing::at_rate(c, BitRate(data_bps as u64)).ok()?;
    let secs = adapter_time(adapter, Some(&pacing), pdus).as_secs_f64();
    // The ports on the path with an ABR rule. Of ERICA's, the one whose last
    // explicit rate was the lowest set the ACR; a marking port cannot be told
    // apart from another, so each is named.
    let ports: Vec<(usize, AbrSwitch)> = circuit
        .hops
        .iter()
        .filter_map(|h| {
            Some((
                h.port,
                topo.abr_ports.iter().find(|a| a.port == h.port)?.switch,
            ))
        })
        .collect();
    let last_er = |p: usize| {
        run.abr_ports
            .get(p)
            .copied()
            .flatten()
            .map_or(f64::INFINITY, |k| {
                if k.er_last > 0.0 {
                    k.er_last
                } else {
                    f64::INFINITY
                }
            })
    };
    let erica = ports
        .iter()
        .filter(|(_, s)| matches!(s, AbrSwitch::Erica { .. }))
        .min_by(|a, b| last_er(a.0).total_cmp(&last_er(b.0)));
    let named: Vec<&(usize, AbrSwitch)> = match erica {
        Some(e) => vec![e],
        None => ports.iter().collect(),
    };
    let feedback: Vec<String> = named
        .iter()
        .map(|&&(p, switch)| {
            let port = port_name(p);
            match switch {
                AbrSwitch::Erica { target, .. } => {
                    format!("ERICA's explicit rate at {port}, target {target}")
                }
                AbrSwitch::Efci { threshold_cells } => {
                    format!("EFCI marking at {port} above {threshold_cells} cells")
                }
                AbrSwitch::Relative { threshold_cells } => {
                    format!("relative-rate marking at {port} above {threshold_cells} cells")
                }
            }
        })
        .collect();
    (secs > 0.0).then(|| AbrRate {
        acr_mean_bps,
        acr_bps: counters.acr * CELL_BITS as f64,
        acr_range_bps: (
            counters.acr_min * CELL_BITS as f64,
            counters.acr_max * CELL_BITS as f64,
        ),
        payload_bps: bytes as f64 * 8.0 / secs,
        unit_bytes: bytes,
        feedback: if feedback.is_empty() {
            "no switch feedback: the source's own rules".to_string()
        } else {
            feedback.join("; ")
        },
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::net::{CircuitSpec, DropPolicy, Hop, PortSpec};

    fn two_hosts(adapter_tx: TxSpacing, port_mbps: u64, pacing: Option<u64>) -> Topology {
        let adapter = AdapterSpec {
            rate: BitRate(149_760_000),
            delay: SimTime::ZERO,
            tx: adapter_tx,
            pdu_gap: SimTime::from_us(52),
            tx_queue_pdus: 50,
        };
        let port = |mbps: u64| PortSpec {
            rate: BitRate(mbps * 1_000_000),
            delay: SimTime::ZERO,
            buffer_cells: 256,
            policy: DropPolicy::TailDrop,
            clp1_threshold_cells: None,
        };
        Topology {
            adapters: vec![adapter, adapter],
            ports: vec![port(150), port(port_mbps)],
            circuits: vec![CircuitSpec {
                src: 0,
                dst: 1,
                vpi: 0,
                vci: 100,
                hops: vec![Hop {
                    port: 1,
                    vpi: 0,
                    vci: 100,
                }],
            }],
            pacing: pacing
                .map(|mbps| vec![VcPacing::at_rate(0, BitRate(mbps * 1_000_000)).unwrap()])
                .unwrap_or_default(),
            ..Default::default()
        }
    }

    #[test]
    fn the_path_rate_is_its_slowest_element() {
        let name = |p: usize| format!("port {p}");
        // 9188 bytes (vc-mux) = 192 cells; at 100 Mb/s a cell takes 4.24 µs.
        let topo = two_hosts(TxSpacing::None, 100, None);
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        assert_eq!(p.unit_cells, 192);
        let expect = 9148.0 * 8.0 / (192.0 * 4.24e-6);
        assert!(
            (p.payload_bps - expect).abs() < 1.0,
            "{} {expect}",
            p.payload_bps
        );
        assert_eq!(p.bottleneck, "port 1 (100.00 Mb/s of cells)");
        // At OC-3c the adapter's 52 µs PDU gap is the slower: 191 cell slots + 1 + gap.
        let topo = two_hosts(TxSpacing::None, 150, None);
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        let cell = 424.0 / 149.76e6;
        let expect = 9148.0 * 8.0 / (192.0 * cell + 52e-6);
        assert!(
            (p.payload_bps - expect).abs() / expect < 1e-6,
            "{} {expect}",
            p.payload_bps
        );
        assert!(
            p.bottleneck.starts_with("the sender's adapter"),
            "{}",
            p.bottleneck
        );
        // Paced at 70 Mb/s: one cell every 6.06 µs, then the gap after the last.
        let topo = two_hosts(TxSpacing::None, 150, Some(70));
        let p = path_rate(&topo, 0, 9148, &[(9188, vec![])], &name).unwrap();
        let paced = 424.0 / 70e6;
        let expect = 9148.0 * 8.0 / (191.0 * paced + cell + 52e-6);
        assert!(
            (p.payload_bps - expect).abs() / expect < 1e-6,
            "{} {expect}",
            p.payload_bps
        );
        assert_eq!(p.bottleneck, "the adapter paced at 70.00 Mb/s of cells");
        // No such circuit: no rate.
        assert!(path_rate(&topo, 5, 9148, &[(9188, vec![])], &name).is_none());
    }
}
