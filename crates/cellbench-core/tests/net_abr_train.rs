//! ABR in Train mode (`sim/net/abr_train.rs`) against the per-cell reference:
//! the same scenario run both ways gives every cell (data and RM) at the same
//! place and time with the same fate, the same deliveries, counters, ACR and
//! ER series (`net_harness::equivalent`).

mod net_harness;

use cellbench_core::sim::net::{
    AbrPort, AbrSource, AbrSwitch, CircuitId, Delivery, DropPolicy, Fidelity, Network, Topology,
};
use cellbench_core::{BitRate, SimTime};
use net_harness::{adapter, circuit, equivalent, port, run, FULL, OC3, TAXI};
use proptest::prelude::*;

const OC3_CELLS: f64 = 149_760_000.0 / 424.0;

/// `n` ABR sources (hosts 0..n) into host n through port 0, then (with `two`)
/// port 2; host n ACKs circuit 0 over a UBR circuit n back to host 0 through port 1.
fn topology(
    n: usize,
    switch: Option<AbrSwitch>,
    two: bool,
    src: &dyn Fn(usize) -> AbrSource,
) -> Topology {
    let path: &[usize] = if two { &[0, 2] } else { &[0] };
    let mut circuits: Vec<_> = (0..n).map(|i| circuit(i, n, 32 + i as u16, path)).collect();
    circuits.push(circuit(n, 0, 90, &[1]));
    let mut abr_ports: Vec<AbrPort> = Vec::new();
    if let Some(s) = switch {
        abr_ports.push(AbrPort { port: 0, switch: s });
        if two {
            abr_ports.push(AbrPort { port: 2, switch: s });
        }
    }
    Topology {
        adapters: (0..=n).map(|_| adapter(OC3)).collect(),
        ports: vec![
            port(OC3, 256, DropPolicy::TailDrop),
            port(OC3, 256, DropPolicy::TailDrop),
            port(
                TAXI,
                128,
                DropPolicy::Epd {
                    threshold_cells: 64,
                },
            ),
        ],
        circuits,
        abr_sources: (0..n).map(src).collect(),
        abr_ports,
        ..Default::default()
    }
}

/// Each source hands over `pdus` full PDUs every `every` ps from 0 to `until`.
fn greedy(n: usize, pdus: usize, every: u64, until: u64) -> Vec<(u64, CircuitId, u32)> {
    let mut v = Vec::new();
    let mut t = 0;
    while t <= until {
        for c in 0..n {
            v.extend((0..pdus).map(|_| (t, c, FULL)));
        }
        t += every;
    }
    v
}

fn ack(n: usize) -> impl Fn(&Delivery) -> Option<(CircuitId, u32)> {
    move |d: &Delivery| (d.circuit == 0).then_some((n, 40))
}

#[test]
fn each_switch_behaviour_gives_the_same_cells_both_ways() {
    let switches = [
        None,
        Some(AbrSwitch::Efci {
            threshold_cells: 32,
        }),
        Some(AbrSwitch::Relative {
            threshold_cells: 48,
        }),
        Some(AbrSwitch::Erica {
            target: 0.9,
            interval: SimTime::from_us(300),
        }),
    ];
    for switch in switches {
        for two in [false, true] {
            let topo = topology(3, switch, two, &|c| AbrSource {
                icr: OC3_CELLS / 4.0,
                ..AbrSource::new(c, OC3_CELLS)
            });
            let sends = greedy(3, 3, 400_000_000, 8_000_000_000);
            let out = equivalent(&topo, &sends, &ack(3));
            let k = out.abr_sources[0].expect("circuit 0 is ABR");
            assert!(k.frm_sent > 10 && k.brm_returned > 10, "{switch:?}: {k:?}");
        }
    }
}

#[test]
fn sources_held_to_one_share_give_the_same_cells_a_period_at_a_time() {
    // ERICA holds every source to one ER, so the port's inputs interleave in a
    // repeating pattern that Train decides whole periods at a time
    // (`Network::steady`, train.rs): four inputs, and ten (more than it takes
    // at once, so cell by cell).
    for n in [4, 10] {
        let erica = AbrSwitch::Erica {
            target: 0.9,
            interval: SimTime::from_ms(1),
        };
        let topo = topology(n, Some(erica), false, &|c| AbrSource::new(c, OC3_CELLS));
        let sends = greedy(n, 4, 1_000_000_000, 20_000_000_000);
        let out = equivalent(&topo, &sends, &ack(n));
        for (c, k) in out.abr_sources.iter().take(n).enumerate() {
            let k = k.expect("an ABR circuit");
            assert!(k.brm_returned > 10, "circuit {c}: {k:?}");
        }
    }
}

#[test]
fn sources_at_different_rates_meet_cell_by_cell_the_same_both_ways() {
    // Sources held to different peak rates interleave cell by cell at the port
    // to their receiver, where Train decides the cells in bulk
    // (`Network::merge_sinks`, train.rs): under the link together (1/2 + 1/3
    // + 1/7) and over it (0.7 + 0.6, the excess growing the queue), with no
    // switch rule, with EFCI marking near the queue those rates build, and
    // with ERICA.
    let switches = [
        None,
        Some(AbrSwitch::Efci { threshold_cells: 4 }),
        Some(AbrSwitch::Erica {
            target: 0.9,
            interval: SimTime::from_us(500),
        }),
    ];
    let shares: [&[f64]; 2] = [&[2.0, 3.0, 7.0], &[1.0 / 0.7, 1.0 / 0.6]];
    for switch in switches {
        for divisors in shares {
            let n = divisors.len();
            let topo = topology(n, switch, false, &|c| AbrSource {
                icr: OC3_CELLS / divisors[c] / 2.0,
                ..AbrSource::new(c, OC3_CELLS / divisors[c])
            });
            let sends = greedy(n, 3, 500_000_000, 10_000_000_000);
            let out = equivalent(&topo, &sends, &ack(n));
            let k = out.abr_sources[n - 1].expect("an ABR circuit");
            assert!(k.brm_returned > 10, "{switch:?} {divisors:?}: {k:?}");
        }
    }
}

#[test]
fn sources_over_the_link_meet_every_threshold_the_same_both_ways() {
    // Two sources over the link (0.7 + 0.6 of it) into a small EPD buffer
    // that marks EFCI: the queue those rates build reaches EFCI's threshold,
    // then EPD's, then the buffer's, inside the passes `Network::merge_sinks`
    // makes (its checked two-input loop), where each check must fall on the
    // same cell as cell by cell.
    for (buffer, epd, marks) in [(96, 24, 12), (36, 30, 20), (64, 16, 30)] {
        let mut topo = topology(
            2,
            Some(AbrSwitch::Efci {
                threshold_cells: marks,
            }),
            false,
            &|c| AbrSource {
                icr: OC3_CELLS * [0.7, 0.6][c] / 2.0,
                ..AbrSource::new(c, OC3_CELLS * [0.7, 0.6][c])
            },
        );
        topo.ports[0] = port(
            OC3,
            buffer,
            DropPolicy::Epd {
                threshold_cells: epd,
            },
        );
        let sends = greedy(2, 3, 500_000_000, 10_000_000_000);
        let out = equivalent(&topo, &sends, &ack(2));
        let (port, abr) = (out.ports[0], out.abr_ports[0].expect("EFCI port"));
        assert!(abr.efci_marked > 0, "{buffer}/{epd}/{marks}: {abr:?}");
        assert!(port.cells_lost.epd > 0, "{buffer}/{epd}/{marks}: {port:?}");
        assert!(
            buffer > 64 || port.cells_lost.overflow > 0,
            "{buffer}/{epd}/{marks}: {port:?}"
        );
    }
}

#[test]
fn a_starved_source_sends_out_of_rate_rm_cells_the_same_both_ways() {
    // ACR below TCR (rule 11): out-of-rate FRMs at 10 cells/s.
    let topo = topology(
        1,
        Some(AbrSwitch::Efci { threshold_cells: 8 }),
        false,
        &|c| AbrSource {
            icr: 5.0,
            pcr: 50.0,
            ..AbrSource::new(c, 50.0)
        },
    );
    let out = equivalent(&topo, &[(0, 0, 400), (1_000_000_000, 0, 400)], &ack(1));
    assert!(out.abr_sources[0].unwrap().frm_sent >= 2);
}

#[test]
fn train_mode_takes_fewer_events() {
    let topo = topology(
        2,
        Some(AbrSwitch::Erica {
            target: 0.9,
            interval: SimTime::from_ms(1),
        }),
        false,
        &|c| AbrSource::new(c, OC3_CELLS),
    );
    let sends = greedy(2, 4, 1_000_000_000, 30_000_000_000);
    let (_, train) = run(&topo, Fidelity::Train, &sends, &ack(2));
    let (_, cell) = run(&topo, Fidelity::PerCell, &sends, &ack(2));
    assert!(train * 4 < cell, "train {train} events, per cell {cell}");
}

#[test]
fn an_adapter_with_another_circuit_runs_the_per_cell_fifos() {
    // Host 0 carries its ABR circuit and a second one: still the same cells.
    let mut topo = topology(1, None, false, &|c| AbrSource::new(c, OC3_CELLS));
    topo.circuits.push(circuit(0, 1, 77, &[0]));
    let sends = [(0, 0, FULL), (0, 2, FULL), (0, 0, FULL)];
    equivalent(&topo, &sends, &ack(1));
    assert!(Network::new(topo, Fidelity::Train).is_ok());
}

fn switch() -> impl Strategy<Value = Option<AbrSwitch>> {
    prop_oneof![
        Just(None),
        (1u32..100).prop_map(|t| Some(AbrSwitch::Efci { threshold_cells: t })),
        (1u32..100).prop_map(|t| Some(AbrSwitch::Relative { threshold_cells: t })),
        (0.5f64..1.0, 50u64..2000).prop_map(|(target, us)| Some(AbrSwitch::Erica {
            target,
            interval: SimTime::from_us(us)
        })),
    ]
}

prop_compose! {
    fn scenario()(
        n in 1usize..4,
        switch in switch(),
        two in any::<bool>(),
        icr in 0.02f64..1.0,
        mcr in 0.0f64..0.3,
        rif in 1u32..7,
        rdf in 1u32..7,
        nrm in 2u32..40,
        delays in proptest::array::uniform4(0u64..400_000_000),
        buffers in proptest::array::uniform2(8u32..300),
        rate in 20_000_000u64..150_000_000,
        sends in proptest::collection::vec((0u64..6_000_000_000, 0usize..3, 1u32..9300), 1..40),
    ) -> (Topology, Vec<(u64, CircuitId, u32)>, usize) {
        let mut topo = topology(n, switch, two, &|c| AbrSource {
            icr: OC3_CELLS * icr.max(mcr),
            mcr: OC3_CELLS * mcr,
            rif: 1.0 / (1u32 << rif) as f64,
            rdf: 1.0 / (1u32 << rdf) as f64,
            nrm,
            ..AbrSource::new(c, OC3_CELLS)
        });
        topo.adapters[0].delay = SimTime(delays[0]);
        topo.ports[0].delay = SimTime(delays[1]);
        topo.ports[2].delay = SimTime(delays[2]);
        topo.ports[1].delay = SimTime(delays[3]);
        topo.ports[0].buffer_cells = buffers[0];
        topo.ports[2].buffer_cells = buffers[1];
        topo.ports[2].policy = DropPolicy::Epd { threshold_cells: buffers[1] / 2 + 1 };
        topo.ports[2].rate = BitRate(rate);
        // Cluster the send times so that trains from different inputs collide.
        let sends = sends
            .into_iter()
            .map(|(t, c, l)| (t / 100_000_000 * 100_000_000, c % n, l))
            .collect();
        (topo, sends, n)
    }
}

proptest! {
    #![proptest_config(net_harness::cases(64))]
    #[test]
    fn abr_train_equals_per_cell((topo, sends, n) in scenario()) {
        equivalent(&topo, &sends, &ack(n));
    }
}

/// A run's whole result as JSON, less what differs between the fidelities by
/// design: the event count, and the queue series (Train keeps a subset of the
/// per-cell samples with the same peaks, `Network::set_queue_series`).
fn run_json(text: &str, per_cell: bool) -> serde_json::Value {
    use cellbench_core::sim::spec::RunSpec;
    let mut spec = RunSpec::from_json(text).unwrap();
    spec.per_cell = per_cell;
    spec.series = true;
    let mut v = serde_json::to_value(spec.run().unwrap()).unwrap();
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("events");
                m.remove("queue_series");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

#[test]
fn tcp_runs_over_abr_give_the_same_result_both_ways() {
    // Three TCPs over ABR into one receiver, through an ERICA switch and through an
    // EFCI one: every field of the run's result (goodputs, retransmissions, cells
    // lost, ABR counters, ACR series, what limited each) as the per-cell reference.
    for abr in [
        r#"{"kind": "erica"}"#,
        r#"{"kind": "efci", "threshold_cells": 64}"#,
    ] {
        let conn = |h: &str| {
            format!(
                r#"{{"transmitter": "{h}", "receiver": "d", "sndbuf": 52428, "rcvbuf": 52428,
                    "abr": {{"icr_bps": 10000000}},
                    "traffic": {{"type": "full", "blocksize": 8192, "nbytes": 2097152}}}}"#
            )
        };
        let host = |h: &str| {
            format!(r#"{{"name": "{h}", "profile": "ultra-1", "phy": "oc3c", "flavour": "reno"}}"#)
        };
        let text = format!(
            r#"{{"hosts": [{}, {}, {}, {}], "switch": {{"abr": {abr}}},
                "connections": [{}, {}, {}]}}"#,
            host("a"),
            host("b"),
            host("c"),
            host("d"),
            conn("a"),
            conn("b"),
            conn("c")
        );
        let train = run_json(&text, false);
        assert_eq!(train, run_json(&text, true), "{abr}");
        assert!(train.to_string().contains("abr_frm_sent"));
    }
}

#[test]
fn sources_in_lock_step_tie_at_every_instant_the_same_both_ways() {
    // Sources at one fixed rate (ICR = PCR) handed their PDUs at the same
    // instants put their cells into the port at the same instants, so every
    // merge step breaks a tie by circuit, and one source's FRM (whose arrival
    // the port resolves at) meets the others' data cells arriving with it.
    // Different Nrm put the FRMs at different cells of each source.
    for switch in [None, Some(AbrSwitch::Efci { threshold_cells: 8 })] {
        for (nrm, share) in [([8, 12, 32], 3.0), ([5, 32, 7], 4.0), ([2, 3, 4], 2.5)] {
            let topo = topology(3, switch, false, &|c| AbrSource {
                icr: OC3_CELLS / share,
                nrm: nrm[c],
                ..AbrSource::new(c, OC3_CELLS / share)
            });
            let sends = greedy(3, 2, 700_000_000, 6_000_000_000);
            let out = equivalent(&topo, &sends, &ack(3));
            let k = out.abr_sources[1].expect("an ABR circuit");
            assert!(k.frm_sent > 10, "{switch:?} {nrm:?}: {k:?}");
        }
    }
}
