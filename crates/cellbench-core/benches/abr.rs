//! What ABR costs per cell, side by side with the same run under UBR
//! (`sim/net/abr.rs`; issue 29 asks for at most 1.5x per cell).
//!
//! Two workloads on OC-3c (149.76 Mb/s of cells), each run under UBR in both
//! fidelities and under ABR in both (Train: `sim/net/abr_train.rs`; PerCell:
//! the per-cell FIFOs, the reference):
//! - `transfer`: 3700 full PDUs host 0 -> 1 through one port, window-limited
//!   (8 PDUs in flight, two more per 1-cell ACK PDU on the way back), ABR with
//!   ICR = PCR and no switch behaviour: the source's rate gate and its RM cells;
//! - `four-into-one`: four greedy senders (each keeps 4 PDUs queued) into one
//!   port for 100 ms of simulated time; ABR with an ERICA port (target 0.9, 1 ms),
//!   UBR with tail drop; and UBR with each VC paced (per-VC pacing, `VcPacing`)
//!   at ERICA's fair share, 0.9/4 of the link: the cell pattern ABR converges
//!   to (every input's cells interleaved at the port, which costs a train port
//!   a merge step per cell), without RM cells or feedback.
//!
//! The figure is wall time per cell handled at the switch port (data cells and
//! RM cells arriving there), best of 5 runs, with the network's events per
//! cell. `cargo bench --bench abr`.

use cellbench_core::sim::net::{
    AbrPort, AbrSource, AbrSwitch, AdapterSpec, CircuitSpec, Delivery, DropPolicy, Fidelity, Hop,
    Network, PacedQuantity, PortSpec, Topology, TxSpacing, VcPacing,
};
use cellbench_core::{BitRate, SimTime};
use std::hint::black_box;
use std::time::Instant;

const OC3: BitRate = BitRate(149_760_000);
const OC3_CELLS: f64 = 149_760_000.0 / 424.0;
const FULL: u32 = 9188;
const ACK: u32 = 48;
const DATA_PDUS: u64 = 3700;
const WINDOW: u64 = 8;
const RUNS: usize = 5;

fn adapter() -> AdapterSpec {
    AdapterSpec {
        rate: OC3,
        delay: SimTime::from_us(1),
        tx: TxSpacing::None,
        pdu_gap: SimTime::ZERO,
        tx_queue_pdus: 50,
    }
}

fn port(buffer_cells: u32) -> PortSpec {
    PortSpec {
        rate: OC3,
        delay: SimTime::from_us(1),
        buffer_cells,
        policy: DropPolicy::TailDrop,
        clp1_threshold_cells: None,
    }
}

fn vc(src: usize, dst: usize, p: usize, vci: u16) -> CircuitSpec {
    CircuitSpec {
        src,
        dst,
        vpi: 0,
        vci,
        hops: vec![Hop {
            port: p,
            vpi: 0,
            vci,
        }],
    }
}

#[derive(Copy, Clone, PartialEq)]
enum Service {
    Ubr(Fidelity),
    /// UBR, each VC paced at ERICA's fair share (four-into-one only).
    UbrPaced,
    Abr(Fidelity),
}

/// Wall time (s), cells arriving at the ports, the network's events, FRMs sent.
type Figures = (f64, u64, u64, u64);

/// FRMs the ABR sources of `net` sent (0 without ABR).
fn frms(net: &Network, circuits: usize) -> u64 {
    (0..circuits)
        .filter_map(|c| net.abr_source_counters(c))
        .map(|k| k.frm_sent)
        .sum()
}

fn transfer(service: Service) -> Figures {
    let mut topo = Topology {
        adapters: vec![adapter(), adapter()],
        ports: vec![port(256), port(256)],
        circuits: vec![vc(0, 1, 0, 32), vc(1, 0, 1, 33)],
        ..Default::default()
    };
    let fidelity = match service {
        Service::Ubr(f) => f,
        Service::UbrPaced => Fidelity::Train,
        Service::Abr(f) => {
            topo.abr_sources.push(AbrSource::new(0, OC3_CELLS));
            f
        }
    };
    let mut net = Network::new(topo, fidelity).expect("valid");
    let start = Instant::now();
    let (mut sent, mut data_in) = (0u64, 0u64);
    let mut out: Vec<Delivery> = Vec::with_capacity(16);
    let mut now = SimTime::ZERO;
    while sent < WINDOW {
        net.send(now, 0, FULL, sent);
        sent += 1;
    }
    while let Some(t) = net.poll_at() {
        now = t;
        out.clear();
        net.poll(now, &mut out);
        for d in &out {
            if d.circuit == 0 {
                data_in += 1;
                if data_in % 2 == 0 || data_in == DATA_PDUS {
                    net.send(now, 1, ACK, data_in);
                }
            } else {
                for _ in 0..2 {
                    if sent < DATA_PDUS {
                        net.send(now, 0, FULL, sent);
                        sent += 1;
                    }
                }
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(data_in, DATA_PDUS, "every data PDU arrives");
    black_box(now);
    (
        wall,
        net.port_counters(0).cells_in + net.port_counters(1).cells_in,
        net.events_processed(),
        frms(&net, 2),
    )
}

fn four_into_one(service: Service) -> Figures {
    let n = 4;
    let mut topo = Topology {
        adapters: (0..=n).map(|_| adapter()).collect(),
        ports: vec![port(1024)],
        circuits: (0..n).map(|i| vc(i, n, 0, 32 + i as u16)).collect(),
        ..Default::default()
    };
    let fidelity = match service {
        Service::Ubr(f) => f,
        Service::UbrPaced => {
            let interval = OC3.time_for_bits(424).as_ps() as f64 * n as f64 / 0.9;
            topo.pacing = (0..n)
                .map(|c| VcPacing {
                    circuit: c,
                    interval: SimTime::from_ps(interval as u64),
                    counts: PacedQuantity::Cells,
                })
                .collect();
            Fidelity::Train
        }
        Service::Abr(f) => {
            topo.abr_sources = (0..n).map(|c| AbrSource::new(c, OC3_CELLS)).collect();
            topo.abr_ports.push(AbrPort {
                port: 0,
                switch: AbrSwitch::Erica {
                    target: 0.9,
                    interval: SimTime::from_ms(1),
                },
            });
            f
        }
    };
    let mut net = Network::new(topo, fidelity).expect("valid");
    let start = Instant::now();
    let mut out = Vec::new();
    let (mut t, mut token) = (SimTime::ZERO, 0u64);
    let step = SimTime::from_us(100);
    while t < SimTime::from_ms(100) {
        for c in 0..n {
            for _ in 0..4 {
                token += 1;
                if !net.send(t, c, FULL, token) {
                    break;
                }
            }
        }
        t += step;
        while let Some(at) = net.poll_at().filter(|&at| at <= t) {
            out.clear();
            net.poll(at, &mut out);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    black_box(token);
    (
        wall,
        net.port_counters(0).cells_in,
        net.events_processed(),
        frms(&net, n),
    )
}

fn best(f: fn(Service) -> Figures, s: Service) -> Figures {
    (0..RUNS)
        .map(|_| f(s))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("RUNS > 0")
}

fn main() {
    println!("ABR against UBR, wall time per cell at the ports, best of {RUNS} runs");
    println!(
        "{:<14} {:<14} {:>10} {:>10} {:>9} {:>11}",
        "workload", "service", "wall ms", "cells", "ns/cell", "events/cell"
    );
    type Workload = fn(Service) -> Figures;
    let workloads: [(&str, Workload, bool); 2] = [
        ("transfer", transfer, false),
        ("four-into-one", four_into_one, true),
    ];
    for (name, f, paced) in workloads {
        let mut services = vec![
            ("UBR Train", Service::Ubr(Fidelity::Train)),
            ("UBR PerCell", Service::Ubr(Fidelity::PerCell)),
            ("ABR Train", Service::Abr(Fidelity::Train)),
            ("ABR PerCell", Service::Abr(Fidelity::PerCell)),
        ];
        if paced {
            services.push(("UBR paced", Service::UbrPaced));
        }
        let (mut per_cell, mut runs) = (Vec::new(), Vec::new());
        for (label, s) in services {
            let (wall, cells, events, frms) = best(f, s);
            let ns = wall * 1e9 / cells as f64;
            per_cell.push(ns);
            runs.push((wall, cells, frms));
            println!(
                "{:<14} {:<14} {:>10.2} {:>10} {:>9.1} {:>11.3}",
                name,
                label,
                wall * 1e3,
                cells,
                ns,
                events as f64 / cells as f64
            );
        }
        // What an FRM adds: ABR Train's wall time beyond its cells at UBR
        // Train's cost a cell, over the FRMs sent; and what it may add for
        // 1.5x UBR Train a cell (issue 29; scripts/bench_abr.py's `ns/FRM`).
        let (wall, cells, frms) = runs[2];
        let per_frm = (wall * 1e9 - per_cell[0] * cells as f64) / frms.max(1) as f64;
        let budget = 0.5 * per_cell[0] * cells as f64 / frms.max(1) as f64;
        println!(
            "{:<14} ABR Train: {} FRMs, {:.0} ns an FRM beyond UBR Train's cost a cell (at 1.5x: {:.0})",
            name, frms, per_frm, budget
        );
        print!(
            "{:<14} ABR Train per cell: {:.2}x UBR Train, {:.2}x UBR PerCell, {:.2}x ABR PerCell",
            name,
            per_cell[2] / per_cell[0],
            per_cell[2] / per_cell[1],
            per_cell[2] / per_cell[3]
        );
        if paced {
            print!(", {:.2}x UBR paced", per_cell[2] / per_cell[4]);
        }
        println!();
    }
}
