//! The cell network: hand-checked cases, and the fast Train mode against the
//! PerCell reference (every cell's departure time and fate, every delivery).

use cellbench_core::atm::gcra::{Action, CellRate, Contract};
use cellbench_core::sim::net::{
    aal5_cells, CellFate, CircuitId, Delivery, DropPolicy, Fidelity, Hop, LossCause, Network,
    PacedQuantity, Place, PolicerSpec, Topology, TopologyError, TxSpacing, VcPacing,
};
use cellbench_core::{BitRate, SimTime};
use proptest::prelude::*;

mod net_harness;
use net_harness::*;

/// Two OC-3c hosts into one TAXI port to host 2.
fn two_into_taxi(buffer: u32, policy: DropPolicy) -> Topology {
    Topology {
        adapters: vec![adapter(OC3), adapter(OC3), adapter(TAXI)],
        ports: vec![port(TAXI, buffer, policy)],
        circuits: vec![circuit(0, 2, 32, &[0]), circuit(1, 2, 33, &[0])],
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------
// Hand-checked cases.

#[test]
fn aal5_cell_counts() {
    assert_eq!(aal5_cells(FULL), 192);
    assert_eq!(aal5_cells(40), 1);
    assert_eq!(aal5_cells(41), 2);
    assert_eq!(aal5_cells(65535), 1366);
}

#[test]
fn one_pdu_oc3_into_empty_taxi_port() {
    let topo = two_into_taxi(256, DropPolicy::TailDrop);
    let o = equivalent(&topo, &[(0, 0, FULL)], &no_reaction);
    // Cells arrive every T_i = 2.831196 µs and leave every T_o = 4.24 µs. At the
    // last arrival (191·T_i after the first) ⌊191·T_i/T_o⌋ = 127 cells have left,
    // so 192 − 127 = 65 are in the buffer: 192 − ⌊192·T_i/T_o⌋ = 64, plus the one
    // on the wire.
    assert_eq!(o.ports[0].peak_occupancy, 65);
    // The port is busy from the first arrival (C_i + 1 µs) for 192 cell times, then
    // the link delay (2 µs): the last cell is reassembled at
    // C_i + 1 µs + 192·C_o + 2 µs.
    let at = SimTime(C_OC3 + 1_000_000 + 192 * C_TAXI + 2_000_000);
    assert_eq!(
        o.deliveries,
        vec![Delivery {
            at,
            host: 2,
            circuit: 0,
            token: 1
        }]
    );
}

#[test]
fn five_back_to_back_pdus_overflow_at_cell_768() {
    // One OC-3c sender, PDUs back to back: cell j (of the whole stream) finds a
    // backlog of W_j = j·(C_o − C_i) = j·1,408,804 ps while nothing is lost, and
    // is refused once ceil(W_j / C_o) >= 256, i.e. W_j > 255·C_o = 1,081,200,000:
    // W_767 = 1,080,552,668 (accepted), W_768 = 1,081,961,472 (lost). A 256-cell
    // buffer absorbs L/(1 − T_i/T_o) ≈ 771 cells of such a burst, so two PDUs
    // (384 cells) fit; the first loss is cell 0 of the fifth PDU.
    let sends: Vec<_> = (0..5).map(|_| (0, 0, FULL)).collect();
    let o = equivalent(
        &two_into_taxi(256, DropPolicy::TailDrop),
        &sends,
        &no_reaction,
    );
    let first = lost(&o, 0, LossCause::Overflow)[0];
    assert_eq!(first, (0, 5, 0));
    assert_eq!(o.deliveries.len(), 4);
    assert_eq!(o.ports[0].peak_occupancy, 256);

    // Under PPD the fifth PDU loses its first cell to overflow, the next 190 to
    // PPD, and its last cell is kept (the queue has drained by then).
    let o = equivalent(&two_into_taxi(256, DropPolicy::Ppd), &sends, &no_reaction);
    assert_eq!(o.ports[0].cells_lost.overflow, 1);
    assert_eq!(o.ports[0].cells_lost.ppd, 190);
    assert_eq!(o.ports[0].pdus_damaged, 1);
    assert_eq!(o.circuits[0].pdus_lost, 1);
}

#[test]
fn two_senders_lose_the_last_cell_of_the_second() {
    // Both OC-3c senders start at 0: cells arrive in pairs every T_i, circuit 0
    // first. Before pair j's cells 2j cells were accepted back to back, so circuit
    // 1's cell j finds W = (2j+1)·C_o − j·C_i = j·5,648,804 + 4,240,000 ps of
    // work: ceil(W/C_o) reaches 256 first at j = 191 (W = 1,083,161,564 >
    // 1,081,200,000), circuit 0's cells never (W = j·5,648,804 <= 1,078,921,564).
    // So exactly one cell is lost: circuit 1's last, and with it the AAL5 frame
    // boundary, which also sinks circuit 1's next PDU (glued to the remainder).
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 200,
        },
    ] {
        let sends = [
            (0, 0, FULL),
            (0, 1, FULL),
            (2_000_000_000, 1, 40),
            (2_100_000_000, 1, 40),
        ];
        let o = equivalent(&two_into_taxi(256, policy), &sends, &no_reaction);
        assert_eq!(
            lost(&o, 0, LossCause::Overflow),
            vec![(1, 2, 191)],
            "{policy:?}"
        );
        assert_eq!(o.ports[0].cells_lost.total(), 1);
        let delivered: Vec<u64> = o.deliveries.iter().map(|d| d.token).collect();
        assert_eq!(delivered, vec![1, 4], "{policy:?}");
        assert_eq!(o.circuits[1].pdus_lost, 2);
    }
}

#[test]
fn epd_refuses_a_whole_pdu() {
    // Two back-to-back PDUs from one OC-3c sender; EPD threshold 64. The second
    // PDU's first cell (j = 192) finds ceil(192·1,408,804 / 4,240,000) =
    // ceil(63.79) = 64 cells: refused, all 192 cells including the last. The
    // third (j = 384) finds the port idle again (the first PDU left by
    // C_i + 1 µs + 192·C_o ≈ 817 µs, cell 384 arrives at ≈ 1090 µs).
    let sends = [(0, 0, FULL), (0, 0, FULL), (0, 0, FULL)];
    let o = equivalent(
        &two_into_taxi(
            256,
            DropPolicy::Epd {
                threshold_cells: 64,
            },
        ),
        &sends,
        &no_reaction,
    );
    assert_eq!(o.ports[0].cells_lost.epd, 192);
    assert_eq!(o.ports[0].cells_lost.total(), 192);
    assert_eq!(lost(&o, 0, LossCause::Epd)[0], (0, 2, 0));
    assert_eq!(o.ports[0].pdus_damaged, 1);
    let delivered: Vec<u64> = o.deliveries.iter().map(|d| d.token).collect();
    assert_eq!(delivered, vec![1, 3]);
}

#[test]
fn interface_queue_drops_when_full() {
    let mut topo = two_into_taxi(256, DropPolicy::TailDrop);
    topo.adapters[0].tx_queue_pdus = 3;
    // One PDU starts at once; three wait; the fifth and sixth are refused.
    let sends: Vec<_> = (0..6).map(|_| (0, 0, FULL)).collect();
    let o = equivalent(&topo, &sends, &no_reaction);
    assert_eq!(o.refused, 2);
    assert_eq!(o.circuits[0].adapter_queue_drops, 2);
    assert_eq!(o.circuits[0].pdus_sent, 4);
}

#[test]
fn peak_cell_rate_and_pdu_gap_space_the_cells() {
    let mut topo = two_into_taxi(256, DropPolicy::TailDrop);
    topo.adapters[0].tx = TxSpacing::PeakCellRate {
        interval: SimTime(3 * C_OC3),
    };
    topo.adapters[0].pdu_gap = SimTime::from_us(52);
    let o = equivalent(&topo, &[(0, 0, 100), (0, 0, 100)], &no_reaction);
    let starts: Vec<u64> = o
        .log
        .iter()
        .filter(|r| r.place == Place::Adapter(0))
        .map(|r| r.at.as_ps())
        .collect();
    // 3 cells per PDU, every 3·C_i; the second PDU waits one spacing interval
    // after the last cell's start (2·3·C_i + 3·C_i) plus 52 µs: with spacing on,
    // the gap is idle time beyond the spacing interval (docs/design.md §5).
    let second = 9 * C_OC3 + 52_000_000;
    assert_eq!(
        starts,
        vec![
            0,
            3 * C_OC3,
            6 * C_OC3,
            second,
            second + 3 * C_OC3,
            second + 6 * C_OC3
        ]
    );
    // Slower than the port: nothing ever waits behind another cell.
    assert_eq!(o.ports[0].peak_occupancy, 1);
}

#[test]
fn bad_topologies_are_refused_by_name() {
    let mut topo = two_into_taxi(0, DropPolicy::TailDrop);
    let err = Network::new(topo.clone(), Fidelity::Train).err();
    assert_eq!(err, Some(TopologyError::ZeroBuffer { port: 0 }));
    topo.ports[0].buffer_cells = 10;
    topo.ports[0].policy = DropPolicy::Epd {
        threshold_cells: 11,
    };
    let err = Network::new(topo.clone(), Fidelity::Train)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("threshold 11"), "{err}");
    topo.ports[0].policy = DropPolicy::Ppd;
    for bad in [0, 11] {
        topo.ports[0].clp1_threshold_cells = Some(bad);
        let err = Network::new(topo.clone(), Fidelity::Train)
            .err()
            .expect("refused");
        assert_eq!(
            err.to_string(),
            format!("port 0: CLP-1 threshold {bad} cells not allowed: 1 to the buffer size 10")
        );
    }
    topo.ports[0].clp1_threshold_cells = Some(10);
    Network::new(topo.clone(), Fidelity::Train)
        .expect("a threshold of the whole buffer is allowed");
    topo.ports[0].clp1_threshold_cells = None;
    topo.circuits[1].hops[0].vci = topo.circuits[0].hops[0].vci;
    let err = Network::new(topo.clone(), Fidelity::Train)
        .err()
        .expect("refused");
    assert!(matches!(err, TopologyError::LabelClash { .. }), "{err}");
    topo.circuits[1].hops[0].vci += 1;
    topo.circuits[1].hops.push(Hop {
        port: 0,
        vpi: 0,
        vci: 5,
    });
    assert!(matches!(
        Network::new(topo.clone(), Fidelity::Train),
        Err(TopologyError::PortTwice {
            circuit: 1,
            port: 0
        })
    ));
    topo.circuits[1].hops.pop();
    topo.adapters[1].rate = BitRate(0);
    let err = Network::new(topo.clone(), Fidelity::Train)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("rate 0 b/s"), "{err}");
    topo.adapters[1].rate = OC3;
    topo.adapters[1].tx = TxSpacing::PeakCellRate {
        interval: SimTime(C_OC3 - 1),
    };
    assert!(matches!(
        Network::new(topo.clone(), Fidelity::Train),
        Err(TopologyError::SpacingTooShort { host: 1, .. })
    ));
    topo.adapters[1].tx = TxSpacing::None;
    topo.circuits[0].dst = 7;
    assert!(matches!(
        Network::new(topo, Fidelity::Train),
        Err(TopologyError::NoSuchHost {
            circuit: 0,
            host: 7,
            hosts: 3
        })
    ));
}

// ---------------------------------------------------------------------------
// Train against PerCell on named scenarios.

#[test]
fn congested_port_all_policies() {
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 160,
        },
    ] {
        let mut sends = Vec::new();
        for k in 0..12u64 {
            sends.push((k * 300_000_000, 0, FULL));
            sends.push((k * 250_000_000 + 7_000_000, 1, FULL));
        }
        let o = equivalent(&two_into_taxi(256, policy), &sends, &no_reaction);
        assert!(
            o.ports[0].cells_lost.total() > 0,
            "{policy:?}: the scenario must congest"
        );
        assert!(!o.deliveries.is_empty());
    }
}

#[test]
fn rate_mismatch_back_to_back() {
    let sends: Vec<_> = (0..20).map(|_| (0, 0, FULL)).collect();
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 128,
        },
    ] {
        let o = equivalent(&two_into_taxi(256, policy), &sends, &no_reaction);
        assert!(o.ports[0].cells_lost.total() > 0, "{policy:?}");
    }
}

#[test]
fn spaced_senders() {
    let mut topo = two_into_taxi(64, DropPolicy::Ppd);
    for a in &mut topo.adapters[..2] {
        a.tx = TxSpacing::PeakCellRate {
            interval: SimTime(2 * C_TAXI - 1_000),
        };
        a.pdu_gap = SimTime::from_us(52);
    }
    let mut sends = Vec::new();
    for k in 0..10u64 {
        sends.push((k * 100_000_000, 0, FULL));
        sends.push((k * 100_000_000 + 3_333_333, 1, 4000));
    }
    let o = equivalent(&topo, &sends, &no_reaction);
    assert_eq!(
        o.deliveries.len() as u64,
        o.circuits[0].pdus_delivered + o.circuits[1].pdus_delivered
    );
}

/// Hosts 0 and 1 on one switch exchange data and ACKs; host 2 (OC-3c) also
/// sends data to host 0, so ACKs and 192-cell PDUs meet at the port to host 0.
fn acks_topology(policy: DropPolicy) -> Topology {
    Topology {
        adapters: vec![adapter(TAXI), adapter(TAXI), adapter(OC3)],
        ports: vec![port(TAXI, 256, policy), port(TAXI, 256, policy)],
        circuits: vec![
            circuit(0, 1, 40, &[1]),
            circuit(1, 0, 41, &[0]),
            circuit(2, 0, 42, &[0]),
        ],
        ..Default::default()
    }
}

fn ack_every_data_pdu(d: &Delivery) -> Option<(CircuitId, u32)> {
    (d.circuit == 0).then_some((1, 40))
}

#[test]
fn acks_mixed_with_data_in_reverse_direction() {
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 100,
        },
    ] {
        let mut sends = Vec::new();
        for k in 0..30u64 {
            sends.push((k * 2_000_000, 0, if k % 3 == 0 { 512 } else { FULL }));
            sends.push((k * 1_000_000, 2, FULL));
        }
        let o = equivalent(&acks_topology(policy), &sends, &ack_every_data_pdu);
        assert!(o.circuits[1].pdus_sent > 10, "ACKs flow");
        assert!(
            o.ports[0].cells_lost.total() > 0,
            "{policy:?}: data from host 2 congests the port"
        );
    }
}

/// Two switches in series with different rates and cross traffic at each:
/// host 0 → port 0 (OC-3c) → port 1 (TAXI) → host 2; host 3 → port 0;
/// host 1 → port 1; ACKs host 2 → port 2 → host 0.
fn two_switches(rates: [BitRate; 4], buffers: [u32; 2], policy: DropPolicy) -> Topology {
    Topology {
        adapters: vec![
            adapter(rates[0]),
            adapter(rates[1]),
            adapter(TAXI),
            adapter(rates[2]),
        ],
        ports: vec![
            port(rates[3], buffers[0], policy),
            port(TAXI, buffers[1], policy),
            port(TAXI, 256, policy),
        ],
        circuits: vec![
            circuit(0, 2, 50, &[0, 1]),
            circuit(1, 2, 51, &[1]),
            circuit(3, 2, 52, &[0, 1]),
            circuit(2, 0, 53, &[2]),
        ],
        ..Default::default()
    }
}

#[test]
fn two_switches_in_series() {
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 20,
        },
    ] {
        let mut sends = Vec::new();
        for k in 0..15u64 {
            sends.push((k * 400_000_000, 0, FULL));
            sends.push((k * 370_000_000 + 1_000, 1, 2000 + 300 * k as u32));
            sends.push((k * 500_000_000 + 50_000_000, 2, FULL));
        }
        let topo = two_switches([OC3, OC3, OC3, OC3], [64, 100], policy);
        let react = |d: &Delivery| (d.circuit == 0).then_some((3, 40));
        let o = equivalent(&topo, &sends, &react);
        assert!(
            o.ports[0].cells_lost.total() + o.ports[1].cells_lost.total() > 0,
            "{policy:?}"
        );
    }
}

#[test]
fn a_port_tap_records_what_the_cell_log_records_there() {
    // Two switches, both fidelities, the tap drained as a real-time caller drains
    // it (after every send and poll): the same records as the full log's at that
    // port, each cell sent or lost once, the sent ones in time order.
    let mut sends = Vec::new();
    for k in 0..10u64 {
        sends.push((k * 400_000_000, 0, FULL));
        sends.push((k * 370_000_000 + 1_000, 1, 2000 + 300 * k as u32));
        sends.push((k * 500_000_000 + 50_000_000, 2, FULL));
    }
    sends.sort_by_key(|s| s.0);
    let topo = two_switches([OC3, OC3, OC3, OC3], [64, 100], DropPolicy::Ppd);
    for fidelity in [Fidelity::Train, Fidelity::PerCell] {
        let (full, _) = run(&topo, fidelity, &sends, &no_reaction);
        for port in 0..topo.ports.len() {
            let mut net = Network::new(topo.clone(), fidelity).unwrap();
            net.set_port_tap(port);
            let (mut tapped, mut delivered) = (Vec::new(), Vec::new());
            let mut pending = sends.iter().copied().enumerate().peekable();
            loop {
                let next_send = pending.peek().map(|&(_, (t, _, _))| SimTime(t));
                let Some(t) = next_send.into_iter().chain(net.poll_at()).min() else {
                    break;
                };
                net.poll(t, &mut delivered);
                net.drain_cell_log(&mut tapped);
                while let Some((token, (_, c, len))) = pending.next_if(|s| SimTime(s.1 .0) == t) {
                    net.send(t, c, len, token as u64 + 1);
                    net.drain_cell_log(&mut tapped);
                }
            }
            assert!(net.cell_log().is_empty());
            let sent: Vec<_> = tapped.iter().filter(|r| r.fate == CellFate::Sent).collect();
            assert!(sent.windows(2).all(|w| w[0].at <= w[1].at), "{fidelity:?}");
            let counters = net.port_counters(port);
            assert_eq!(sent.len() as u64, counters.cells_out);
            assert_eq!(tapped.len() as u64, counters.cells_in);
            tapped.sort();
            let want: Vec<_> = full
                .log
                .iter()
                .filter(|r| r.place == Place::Port(port))
                .copied()
                .collect();
            assert_eq!(tapped, want, "{fidelity:?} port {port}");
        }
    }
}

// ---------------------------------------------------------------------------
// Random scenarios.

fn rate() -> impl Strategy<Value = BitRate> {
    prop_oneof![
        Just(OC3),
        Just(TAXI),
        Just(BitRate(140_000_000)),
        Just(BitRate(40_704_000)),
        Just(BitRate(599_040_000)),
        (10_000_000u64..700_000_000).prop_map(BitRate),
    ]
}

fn policy() -> impl Strategy<Value = DropPolicy> {
    prop_oneof![
        Just(DropPolicy::TailDrop),
        Just(DropPolicy::Ppd),
        (1u32..40).prop_map(|t| DropPolicy::Epd { threshold_cells: t }),
    ]
}

prop_compose! {
    fn scenario()(
        rates in proptest::array::uniform4(rate()),
        buffers in proptest::array::uniform2(1u32..120),
        policy in policy(),
        delays in proptest::array::uniform4(0u64..30_000_000),
        gaps in proptest::array::uniform2(0u64..60_000_000),
        spacing in proptest::option::of(1u64..4),
        sends in proptest::collection::vec((0u64..3_000_000_000, 0usize..4, 1u32..9300), 1..40),
    ) -> (Topology, Vec<(u64, CircuitId, u32)>) {
        let mut topo = two_switches(rates, buffers, policy);
        if let DropPolicy::Epd { threshold_cells } = policy {
            for p in &mut topo.ports {
                p.policy = DropPolicy::Epd { threshold_cells: threshold_cells.min(p.buffer_cells) };
            }
        }
        topo.adapters[0].delay = SimTime(delays[0]);
        topo.adapters[1].delay = SimTime(delays[1]);
        topo.ports[0].delay = SimTime(delays[2]);
        topo.ports[1].delay = SimTime(delays[3]);
        topo.adapters[0].pdu_gap = SimTime(gaps[0]);
        topo.adapters[3].pdu_gap = SimTime(gaps[1]);
        if let Some(k) = spacing {
            let cell = topo.adapters[1].rate.time_for_bits(424);
            topo.adapters[1].tx = TxSpacing::PeakCellRate { interval: SimTime(cell.as_ps() * k + 123) };
        }
        // Cluster the send times so that trains from different inputs collide.
        let sends = sends.into_iter().map(|(t, c, l)| (t / 50_000_000 * 50_000_000, c, l)).collect();
        (topo, sends)
    }
}

proptest! {
    #![proptest_config(net_harness::cases(96))]
    #[test]
    fn train_equals_per_cell((topo, sends) in scenario()) {
        let react = |d: &Delivery| (d.circuit == 0).then_some((3, 40));
        equivalent(&topo, &sends, &react);
    }
}

/// A transmission mode for an adapter of cell time `cell`, from random numbers.
fn tx_mode(kind: u8, a: u64, b: u32, stall: bool, rate: BitRate) -> TxSpacing {
    let cell = rate.time_for_bits(424);
    match kind {
        0 => TxSpacing::None,
        1 => TxSpacing::PeakCellRate {
            interval: SimTime(cell.as_ps() * (1 + a % 4) + a * 997),
        },
        2 => TxSpacing::Packet {
            interval: SimTime(a * 20_000_000),
        },
        3 => TxSpacing::Cell {
            idle_units: b,
            host_buffer_stall: stall,
        },
        4 => TxSpacing::cell_burst(rate, SimTime(cell.as_ps() * (1 + a % 5) + a * 1234))
            .expect("slower than the line"),
        _ => {
            let burst = 1 + b % 12;
            TxSpacing::CellBurst {
                burst,
                period: SimTime(cell.as_ps() * burst as u64 + a * 1000),
            }
        }
    }
}

prop_compose! {
    fn contract()(
        t_us in 2u64..40,
        extra_ps in 0u64..1_000_000,
        cdvt in 0u64..300_000_000,
        vbr in proptest::option::of((1u64..5, 0u64..600_000_000)),
    ) -> Contract {
        let pcr = CellRate::from_interval(SimTime(t_us * 1_000_000 + extra_ps)).expect("> 0");
        match vbr {
            None => Contract::Cbr { pcr, cdvt: SimTime(cdvt) },
            Some((k, bt)) => Contract::Vbr {
                pcr,
                cdvt: SimTime(cdvt),
                scr: CellRate::from_interval(pcr.interval().times(k)).expect("> 0"),
                bt: SimTime(bt),
            },
        }
    }
}

prop_compose! {
    /// The two-switch scenario with adapter transmission modes, per-VC pacing of
    /// circuit 2, and a policer: on the VP arriving at port 0 from two adapters
    /// (circuits 0 and 2, shared across input links), on the VP arriving at port
    /// 1 from port 0 (circuits 0 and 2), or on circuit 1's VC at port 1.
    fn wan_scenario()(
        (mut topo, sends) in scenario(),
        modes in proptest::array::uniform3((0u8..6, 1u64..40, 0u32..40, any::<bool>())),
        pace in proptest::option::of(1u64..6),
        place in 0usize..4,
        contract in contract(),
        tag in any::<bool>(),
        clp1 in proptest::array::uniform3(proptest::option::of(1u32..120)),
    ) -> (Topology, Vec<(u64, CircuitId, u32)>) {
        for (&h, &(kind, a, b, stall)) in [0usize, 1, 3].iter().zip(&modes) {
            topo.adapters[h].tx = tx_mode(kind, a, b, stall, topo.adapters[h].rate);
        }
        if let Some(k) = pace {
            let cell = topo.adapters[3].rate.time_for_bits(424);
            topo.pacing.push(VcPacing {
                circuit: 2,
                interval: SimTime(cell.as_ps() * k + 77),
                counts: PacedQuantity::Cells,
            });
        }
        let action = if tag { Action::Tag } else { Action::Discard };
        let (port, vpi, vci) = match place {
            0 => (0, 0, None),
            1 => (1, 1, None),
            2 => (1, 0, Some(51)),
            _ => (usize::MAX, 0, None),
        };
        if port != usize::MAX {
            topo.policers.push(PolicerSpec { port, vpi, vci, contract, action });
        }
        for (p, t) in topo.ports.iter_mut().zip(clp1) {
            p.clp1_threshold_cells = t.map(|t| t.min(p.buffer_cells));
        }
        (topo, sends)
    }
}

prop_compose! {
    /// The WAN scenario with tagging always on and a CLP-1 threshold at every
    /// port: tagged cells meet thresholds at the policing port and downstream
    /// of it, mixed with CLP = 0 cells, under every drop policy.
    fn clp_scenario()(
        (mut topo, sends) in wan_scenario(),
        place in 0usize..3,
        contract in contract(),
        clp1 in proptest::array::uniform3(1u32..120),
    ) -> (Topology, Vec<(u64, CircuitId, u32)>) {
        let (port, vpi, vci) = [(0, 0, None), (1, 1, None), (1, 0, Some(51))][place];
        topo.policers = vec![PolicerSpec { port, vpi, vci, contract, action: Action::Tag }];
        for (p, t) in topo.ports.iter_mut().zip(clp1) {
            p.clp1_threshold_cells = Some(t.min(p.buffer_cells));
        }
        (topo, sends)
    }
}

proptest! {
    #![proptest_config(net_harness::cases(128))]
    #[test]
    fn train_equals_per_cell_wan((topo, sends) in wan_scenario()) {
        let react = |d: &Delivery| (d.circuit == 0).then_some((3, 40));
        let o = equivalent(&topo, &sends, &react);
        // Every cell is accounted for, per port and per circuit.
        for p in &o.ports {
            prop_assert_eq!(p.cells_in, p.cells_out + p.cells_lost.total());
        }
        for c in &o.circuits {
            prop_assert_eq!(c.cells_lost, c.lost_by_cause.total());
        }
    }
}

proptest! {
    #![proptest_config(net_harness::cases(128))]
    #[test]
    fn train_equals_per_cell_clp((topo, sends) in clp_scenario()) {
        let react = |d: &Delivery| (d.circuit == 0).then_some((3, 40));
        let o = equivalent(&topo, &sends, &react);
        for p in &o.ports {
            prop_assert_eq!(p.cells_in, p.cells_out + p.cells_lost.total());
        }
        // Only tagged cells are refused for their CLP bit.
        let clp_lost = o.log.iter().filter(|r| r.fate == CellFate::Lost(LossCause::Clp));
        for r in clp_lost {
            prop_assert!(r.clp);
        }
    }
}
