//! The cell network alone, Train against PerCell: a 32 MB-class transfer
//! (3700 PDUs of 192 cells) from host 0 through an adapter, a TAXI access link,
//! one switch output port (TAXI, 256 cells) to host 1, with a 1-cell ACK PDU
//! back through a second port for every second data PDU; the sender keeps 8 PDUs
//! in flight and sends two more per ACK (as a window-limited TCP would).
//! The others congest: two OC-3c senders into one TAXI port (tail drop, PPD, EPD 128;
//! `cong-clp`: PPD, host 0's VC policed at GCRA(5 µs, 0) with tagging, so most of
//! its cells carry CLP = 1, and a CLP-1 threshold of 128 cells).
//! The WAN ones are the europe-vp setup: an OC-3c adapter with cell-level spacing
//! (16.01 µs requested, 52 µs PDU gap) into an E3 link over 600 km, a public
//! switch that polices the VP at GCRA(16.39 µs, 101 µs) before the receiver, ACKs
//! back over E3: `wan-stall` with the SBus stall (conforming), `wan-policed`
//! without it (0.8 µs per PDU faster than the contract: from the 65th PDU on
//! about one PDU in 21.5 loses a cell at the policer, tests/net_wan.rs).
//!
//! `cargo bench --bench net` prints wall time, PDUs/s, events/s and ns per PDU per hop.

use cellbench_core::atm::gcra::{Action, CellRate, Contract};
use cellbench_core::sim::net::{
    aal5_cells, AdapterSpec, CircuitSpec, Delivery, DropPolicy, Fidelity, Hop, Network,
    PolicerSpec, PortSpec, Topology, TxSpacing, HOST_BUFFER_BYTES,
};
use cellbench_core::{BitRate, SimTime};
use std::hint::black_box;
use std::time::Instant;

const DATA_PDUS: u64 = 3700;
const FULL: u32 = 9188;
const ACK: u32 = 48;
const WINDOW: u64 = 8;
const RUNS: usize = 5;

fn adapter(rate: BitRate) -> AdapterSpec {
    AdapterSpec {
        rate,
        delay: SimTime::from_us(1),
        tx: TxSpacing::None,
        pdu_gap: SimTime::ZERO,
        tx_queue_pdus: 50,
    }
}

fn port(rate: BitRate, policy: DropPolicy) -> PortSpec {
    PortSpec {
        rate,
        delay: SimTime::from_us(1),
        buffer_cells: 256,
        policy,
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

type Scenario = fn(Fidelity) -> Figures;

struct Figures {
    wall_s: f64,
    pdus: u64,
    events: u64,
    delivered: u64,
}

/// Data 0 → 1 over circuit 0 (port 0), ACKs 1 → 0 over circuit 1 (port 1).
fn transfer(fidelity: Fidelity) -> Figures {
    let taxi = BitRate(100_000_000);
    let topo = Topology {
        adapters: vec![adapter(taxi), adapter(taxi)],
        ports: vec![
            port(taxi, DropPolicy::TailDrop),
            port(taxi, DropPolicy::TailDrop),
        ],
        circuits: vec![vc(0, 1, 0, 32), vc(1, 0, 1, 33)],
        ..Default::default()
    };
    let mut net = Network::new(topo, fidelity).expect("valid");
    let start = Instant::now();
    let (mut sent, mut data_in, mut acks) = (0u64, 0u64, 0u64);
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
                    acks += 1;
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
    let wall_s = start.elapsed().as_secs_f64();
    assert_eq!(data_in, DATA_PDUS, "every data PDU arrives");
    black_box(now);
    Figures {
        wall_s,
        pdus: sent + acks,
        events: net.events_processed(),
        delivered: data_in,
    }
}

fn congested_ppd(fidelity: Fidelity) -> Figures {
    congested(fidelity, DropPolicy::Ppd)
}

fn congested_tail(fidelity: Fidelity) -> Figures {
    congested(fidelity, DropPolicy::TailDrop)
}

fn congested_clp(fidelity: Fidelity) -> Figures {
    let contract = Contract::Cbr {
        pcr: CellRate::from_interval(SimTime::from_us(5)).expect("> 0"),
        cdvt: SimTime::ZERO,
    };
    congested_with(fidelity, DropPolicy::Ppd, Some((contract, 128)))
}

fn congested_epd(fidelity: Fidelity) -> Figures {
    congested(
        fidelity,
        DropPolicy::Epd {
            threshold_cells: 128,
        },
    )
}

fn congested(fidelity: Fidelity, policy: DropPolicy) -> Figures {
    congested_with(fidelity, policy, None)
}

/// Two OC-3c hosts each send 1850 full PDUs into one TAXI port; optionally
/// host 0's VC is policed with tagging and the port has a CLP-1 threshold.
fn congested_with(
    fidelity: Fidelity,
    policy: DropPolicy,
    tagged: Option<(Contract, u32)>,
) -> Figures {
    let oc3 = BitRate(149_760_000);
    let taxi = BitRate(100_000_000);
    let mut topo = Topology {
        adapters: vec![adapter(oc3), adapter(oc3), adapter(taxi)],
        ports: vec![port(taxi, policy)],
        circuits: vec![vc(0, 2, 0, 32), vc(1, 2, 0, 33)],
        ..Default::default()
    };
    if let Some((contract, threshold)) = tagged {
        topo.ports[0].clp1_threshold_cells = Some(threshold);
        topo.policers.push(PolicerSpec {
            port: 0,
            vpi: 0,
            vci: Some(32),
            contract,
            action: Action::Tag,
        });
    }
    let mut net = Network::new(topo, fidelity).expect("valid");
    let start = Instant::now();
    let mut out: Vec<Delivery> = Vec::new();
    let (mut sent, mut delivered) = ([0u64; 2], 0u64);
    let mut now = SimTime::ZERO;
    let per_host = DATA_PDUS / 2;
    loop {
        // Each host offers one PDU per 1400 µs, host 1 300 µs after host 0:
        // 16% more than the port's 814 µs per PDU carries.
        let due = |c: usize, n: u64| SimTime::from_us(1400 * n + 300 * c as u64);
        for (c, n) in sent.iter_mut().enumerate() {
            if *n < per_host && now >= due(c, *n) && net.send(now, c, FULL, *n) {
                *n += 1;
            }
        }
        let next_send = sent
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n < per_host)
            .map(|(c, &n)| due(c, n))
            .min();
        let next = match (net.poll_at(), next_send) {
            (None, None) => break,
            (a, b) => a.into_iter().chain(b).min().expect("some"),
        };
        now = next.max(now);
        out.clear();
        net.poll(now, &mut out);
        delivered += out.len() as u64;
    }
    let wall_s = start.elapsed().as_secs_f64();
    Figures {
        wall_s,
        pdus: sent[0] + sent[1],
        events: net.events_processed(),
        delivered,
    }
}

fn wan_stall(fidelity: Fidelity) -> Figures {
    wan(fidelity, true)
}

fn wan_policed(fidelity: Fidelity) -> Figures {
    wan(fidelity, false)
}

/// Host 0 → port 0 (E3, 600 km, VPI 5) → port 1 (E3, VP 5 policed) → host 1;
/// ACKs host 1 → port 2 (E3, 600 km) → host 0. Host 0 offers full PDUs a
/// little faster than the spaced adapter sends them, so the adapter is never
/// idle, and only so much faster that the backlog this builds over the run
/// stays within the interface queue; host 1 ACKs every second PDU it receives.
fn wan(fidelity: Fidelity, stall: bool) -> Figures {
    let oc3 = BitRate(149_760_000);
    let e3 = BitRate(33_920_000);
    let (tx, _) =
        TxSpacing::cell_level(oc3, SimTime::from_us_f64(16.01), stall).expect("coarser than OC-3c");
    let mut sender = adapter(oc3);
    sender.tx = tx;
    sender.pdu_gap = SimTime::from_us(52);
    // The adapter sends a full PDU every `pdu_period`: 191 spacing intervals of
    // 16.115 µs, one more before the 52 µs gap (idle time beyond the spacing,
    // docs/design.md §5), and with the stall 8 stalls of 7-8 tester slots: 3146.1
    // µs without the stall, 3309.7 µs with it. Offered every `period` below that,
    // the backlog grows by 1 − period/pdu_period PDU per PDU sent, so the period
    // is set for it to reach half the interface queue by the last PDU. (The fixed
    // 3100 µs this bench had overflowed the 50-PDU queue at PDU 3411: it was set
    // when the gap followed the last cell's end, a 3132.8 µs PDU, and the backlog
    // reached 39 PDUs.)
    let kb: Vec<u32> = (1..)
        .map(|b| b * HOST_BUFFER_BYTES as u32)
        .take_while(|&b| b < FULL)
        .collect();
    let pdu_period = sender.pdu_period(None, aal5_cells(FULL), &kb);
    let backlog = (sender.tx_queue_pdus / 2) as u64;
    let period = SimTime(pdu_period.0 - pdu_period.0 * backlog / DATA_PDUS);
    let long = |rate| PortSpec {
        delay: SimTime::from_ms(3),
        ..port(rate, DropPolicy::Ppd)
    };
    let vp = |src, dst, vci, hops: &[(usize, u16)]| CircuitSpec {
        src,
        dst,
        vpi: 0,
        vci,
        hops: hops
            .iter()
            .map(|&(port, vpi)| Hop { port, vpi, vci })
            .collect(),
    };
    let contract = Contract::Cbr {
        pcr: CellRate::from_interval(SimTime(16_390_000)).expect("> 0"),
        cdvt: SimTime::from_us(101),
    };
    let topo = Topology {
        adapters: vec![sender, adapter(e3)],
        ports: vec![long(e3), port(e3, DropPolicy::Ppd), long(e3)],
        circuits: vec![vp(0, 1, 32, &[(0, 5), (1, 9)]), vp(1, 0, 33, &[(2, 0)])],
        policers: vec![PolicerSpec {
            port: 1,
            vpi: 5,
            vci: None,
            contract,
            action: Action::Discard,
        }],
        ..Default::default()
    };
    let mut net = Network::new(topo, fidelity).expect("valid");
    let start = Instant::now();
    let mut out: Vec<Delivery> = Vec::new();
    let (mut sent, mut data_in, mut acks) = (0u64, 0u64, 0u64);
    let mut now = SimTime::ZERO;
    let due = |n: u64| period.times(n);
    loop {
        if sent < DATA_PDUS && now >= due(sent) {
            assert!(
                net.send(now, 0, FULL, sent),
                "the interface queue never fills"
            );
            sent += 1;
        }
        let next_send = (sent < DATA_PDUS).then(|| due(sent));
        let next = match (net.poll_at(), next_send) {
            (None, None) => break,
            (a, b) => a.into_iter().chain(b).min().expect("some"),
        };
        now = next.max(now);
        out.clear();
        net.poll(now, &mut out);
        for d in &out {
            if d.circuit == 0 {
                data_in += 1;
                if data_in % 2 == 0 {
                    net.send(now, 1, ACK, data_in);
                    acks += 1;
                }
            }
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    if stall {
        assert_eq!(data_in, DATA_PDUS, "a conforming stream loses nothing");
    } else {
        // One cell about every 21.5 PDUs from PDU 65 (a lost last cell costs the
        // next PDU too): some 170-340 PDUs of 3700.
        let lost = DATA_PDUS - data_in;
        assert!(
            (DATA_PDUS / 25..DATA_PDUS / 10).contains(&lost),
            "the policer sinks about one PDU in 21.5, not {lost}"
        );
    }
    Figures {
        wall_s,
        pdus: sent + acks,
        events: net.events_processed(),
        delivered: data_in,
    }
}

fn best(f: Scenario, fidelity: Fidelity) -> Figures {
    let mut best: Option<Figures> = None;
    for _ in 0..RUNS {
        let r = f(fidelity);
        if best.as_ref().is_none_or(|b| r.wall_s < b.wall_s) {
            best = Some(r);
        }
    }
    best.expect("RUNS > 0")
}

fn main() {
    // `cargo bench` passes --bench; a filter argument selects nothing here.
    println!("cell network, best of {RUNS} runs (hops per PDU: 2 links and 1 switch port)");
    println!(
        "{:<12} {:<8} {:>10} {:>12} {:>9} {:>10} {:>12} {:>14} {:>10}",
        "scenario",
        "mode",
        "wall ms",
        "PDUs/s",
        "PDUs",
        "events",
        "events/s",
        "ns/PDU/hop(2)",
        "delivered"
    );
    let scenarios: [(&str, Scenario); 7] = [
        ("transfer", transfer),
        ("cong-tail", congested_tail),
        ("cong-ppd", congested_ppd),
        ("cong-epd", congested_epd),
        ("cong-clp", congested_clp),
        ("wan-stall", wan_stall),
        ("wan-policed", wan_policed),
    ];
    for (name, f) in scenarios {
        let mut walls = vec![];
        for fidelity in [Fidelity::Train, Fidelity::PerCell] {
            let r = best(f, fidelity);
            walls.push(r.wall_s);
            println!(
                "{:<12} {:<8} {:>10.3} {:>12.0} {:>9} {:>10} {:>12.0} {:>14.1} {:>10}",
                name,
                format!("{fidelity:?}"),
                r.wall_s * 1e3,
                r.pdus as f64 / r.wall_s,
                r.pdus,
                r.events,
                r.events as f64 / r.wall_s,
                r.wall_s * 1e9 / r.pdus as f64 / 2.0,
                r.delivered
            );
        }
        println!("{:<12} PerCell/Train = {:.1}x", name, walls[1] / walls[0]);
    }
}
