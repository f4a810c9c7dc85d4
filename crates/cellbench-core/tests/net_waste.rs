//! Wasted cells (`sim/net/waste.rs`), held to the cell log: what each port
//! carried of PDUs delivered and of PDUs not, in both fidelities (the harness
//! insists they agree), and EPD's promise never to forward any cell of a PDU it
//! refused.

use cellbench_core::sim::net::{CellFate, DropPolicy, LossCause, Place, Topology};
use std::collections::BTreeSet;

mod net_harness;
use net_harness::*;

/// Four OC-3c hosts into one TAXI port to host 4, then one more switch: a
/// congested port with a second stage behind it.
fn four_into_taxi(buffer: u32, policy: DropPolicy) -> Topology {
    Topology {
        adapters: vec![
            adapter(OC3),
            adapter(OC3),
            adapter(OC3),
            adapter(OC3),
            adapter(TAXI),
        ],
        ports: vec![port(TAXI, buffer, policy), port(OC3, 256, policy)],
        circuits: (0..4)
            .map(|h| circuit(h, 4, 40 + h as u16, &[0, 1]))
            .collect(),
        ..Default::default()
    }
}

fn policies() -> [DropPolicy; 3] {
    [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 128,
        },
    ]
}

/// Each host sends PDUs of its own size on its own period: cells of four PDUs
/// interleave at the port.
fn sends() -> Vec<(u64, usize, u32)> {
    let mut s = Vec::new();
    for k in 0..20u64 {
        for h in 0..4u64 {
            let len = [FULL, 4000, 1500, 9000][h as usize];
            s.push((
                k * (180_000_000 + 37_000_000 * h) + h * 1_000_000,
                h as usize,
                len,
            ));
        }
    }
    s
}

#[test]
fn wasted_and_delivered_cells_are_what_the_log_shows() {
    for buffer in [160, 256] {
        for policy in policies() {
            let o = equivalent(&four_into_taxi(buffer, policy), &sends(), &no_reaction);
            let delivered: BTreeSet<u64> = o.deliveries.iter().map(|d| d.token).collect();
            assert!(
                o.ports[0].cells_lost.total() > 0,
                "{policy:?}: must congest"
            );
            for p in 0..2 {
                let sent = o
                    .log
                    .iter()
                    .filter(|r| r.place == Place::Port(p) && r.fate == CellFate::Sent);
                let (good, waste) = sent.fold((0, 0), |(g, w), r| {
                    if delivered.contains(&r.token) {
                        (g + 1, w)
                    } else {
                        (g, w + 1)
                    }
                });
                let c = &o.ports[p];
                assert_eq!(
                    (c.cells_delivered, c.cells_wasted),
                    (good, waste),
                    "{policy:?} {p}"
                );
                // Every PDU's fate is known by the end: nothing is in flight.
                assert_eq!(
                    c.cells_delivered + c.cells_wasted,
                    c.cells_out,
                    "{policy:?}"
                );
            }
            if policy == DropPolicy::TailDrop {
                assert!(
                    o.ports[1].cells_wasted > 0,
                    "tail drop carries doomed cells on"
                );
            }
        }
    }
}

#[test]
fn epd_never_forwards_a_cell_of_a_pdu_it_refused() {
    let policy = DropPolicy::Epd {
        threshold_cells: 128,
    };
    let o = equivalent(&four_into_taxi(256, policy), &sends(), &no_reaction);
    let refused: BTreeSet<u64> = o
        .log
        .iter()
        .filter(|r| r.place == Place::Port(0) && r.fate == CellFate::Lost(LossCause::Epd))
        .map(|r| r.pdu)
        .collect();
    assert!(!refused.is_empty(), "the scenario must reach the threshold");
    let leaked = o
        .log
        .iter()
        .filter(|r| r.place != Place::Port(0) || r.fate == CellFate::Sent)
        .filter(|r| matches!(r.place, Place::Port(_) | Place::Receiver(_)))
        .filter(|r| refused.contains(&r.pdu))
        .count();
    assert_eq!(leaked, 0, "cells of refused PDUs left the port");
}
