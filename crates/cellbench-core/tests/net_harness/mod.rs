//! Shared by the cell-network tests: topology helpers and the harness that
//! runs a scenario in both fidelities and insists on the same outcome.
#![allow(dead_code)]

use cellbench_core::sim::net::{
    AbrPortCounters, AbrSourceCounters, AdapterSpec, CellFate, CellRecord, CircuitCounters,
    CircuitId, CircuitSpec, Delivery, DropPolicy, Fidelity, Hop, LossCause, Network, Place,
    PolicerCounters, PortCounters, PortSpec, Topology, TxSpacing,
};
use cellbench_core::{BitRate, SimTime};

pub const OC3: BitRate = BitRate(149_760_000);
pub const TAXI: BitRate = BitRate(100_000_000);
/// 424 bits at 149.76 Mb/s, rounded down to the picosecond.
pub const C_OC3: u64 = 2_831_196;
/// 424 bits at 100 Mb/s.
pub const C_TAXI: u64 = 4_240_000;
/// The payload of a full Classical-IP PDU: 9180-byte MTU + 8-byte LLC/SNAP = 192 cells.
pub const FULL: u32 = 9188;

pub fn adapter(rate: BitRate) -> AdapterSpec {
    AdapterSpec {
        rate,
        delay: SimTime::from_us(1),
        tx: TxSpacing::None,
        pdu_gap: SimTime::ZERO,
        tx_queue_pdus: 50,
    }
}

pub fn port(rate: BitRate, buffer_cells: u32, policy: DropPolicy) -> PortSpec {
    PortSpec {
        rate,
        delay: SimTime::from_us(2),
        buffer_cells,
        policy,
        clp1_threshold_cells: None,
    }
}

pub fn circuit(src: usize, dst: usize, vci: u16, ports: &[usize]) -> CircuitSpec {
    CircuitSpec {
        src,
        dst,
        vpi: 0,
        vci,
        hops: ports
            .iter()
            .map(|&p| Hop {
                port: p,
                vpi: 1,
                vci: vci + 100,
            })
            .collect(),
    }
}

/// A host's reaction to a delivery: (circuit, payload) to send back at once.
pub type React<'a> = &'a dyn Fn(&Delivery) -> Option<(CircuitId, u32)>;

#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub deliveries: Vec<Delivery>,
    pub log: Vec<CellRecord>,
    pub ports: Vec<PortCounters>,
    pub circuits: Vec<CircuitCounters>,
    pub policers: Vec<PolicerCounters>,
    pub refused: usize,
    /// ABR: per circuit its source's counters and ACR series, per port its
    /// counters and ER series (all None or empty without ABR).
    pub abr_sources: Vec<Option<AbrSourceCounters>>,
    pub acr: Vec<Vec<(SimTime, f64)>>,
    pub abr_ports: Vec<Option<AbrPortCounters>>,
    pub er: Vec<Vec<(SimTime, f64)>>,
}

/// Where every run's counters are read, an hour in: later than any scenario's last event.
pub const HARNESS_END: SimTime = SimTime::from_ms(3_600_000);

/// Drives a network the way the host side does: poll up to the next instant
/// something happens, then hand over the PDUs due then.
pub fn run(
    topo: &Topology,
    fidelity: Fidelity,
    sends: &[(u64, CircuitId, u32)],
    react: React,
) -> (Outcome, u64) {
    run_logged(topo, fidelity, sends, react, true)
}

/// As [`run`], with the cell log on or off. Runs keep no cell log unless asked
/// (`--cells`), while the equivalence checks log every cell: off, the outcome
/// must be the same.
pub fn run_logged(
    topo: &Topology,
    fidelity: Fidelity,
    sends: &[(u64, CircuitId, u32)],
    react: React,
    logged: bool,
) -> (Outcome, u64) {
    let mut net = Network::new(topo.clone(), fidelity).expect("valid topology");
    net.set_cell_log(logged);
    net.set_abr_series(true);
    let mut sends: Vec<(SimTime, CircuitId, u32)> =
        sends.iter().map(|&(t, c, l)| (SimTime(t), c, l)).collect();
    sends.sort_by_key(|s| s.0);
    let mut pending = std::collections::VecDeque::from(sends);
    let mut deliveries = Vec::new();
    let mut token = 0u64;
    let mut refused = 0;
    loop {
        let t = match (pending.front().map(|s| s.0), net.poll_at()) {
            (None, None) => break,
            (a, b) => a.into_iter().chain(b).min().expect("one is some"),
        };
        let before = deliveries.len();
        net.poll(t, &mut deliveries);
        for d in &deliveries[before..] {
            assert_eq!(d.at, t, "a delivery is handed over at its own time");
            if let Some((c, len)) = react(d) {
                pending.push_front((t, c, len));
            }
        }
        while pending.front().is_some_and(|s| s.0 == t) {
            let (_, c, len) = pending.pop_front().expect("front");
            token += 1;
            if !net.send(t, c, len, token) {
                refused += 1;
            }
        }
    }
    // Counters that run with the clock (an ABR source's time at MCR, its mean
    // ACR) are read at one instant in both fidelities: each run's clock
    // stops at its last event, and Train has fewer events than the reference.
    net.poll(HARNESS_END, &mut deliveries);
    let mut log = net.cell_log().to_vec();
    log.sort();
    let outcome = Outcome {
        deliveries,
        log,
        ports: (0..topo.ports.len())
            .map(|p| net.port_counters(p))
            .collect(),
        circuits: (0..topo.circuits.len())
            .map(|c| net.circuit_counters(c))
            .collect(),
        policers: (0..topo.policers.len())
            .map(|i| net.policer_counters(i))
            .collect(),
        refused,
        abr_sources: (0..topo.circuits.len())
            .map(|c| net.abr_source_counters(c))
            .collect(),
        acr: (0..topo.circuits.len())
            .map(|c| net.acr_series(c).to_vec())
            .collect(),
        abr_ports: (0..topo.ports.len())
            .map(|p| net.abr_port_counters(p))
            .collect(),
        er: (0..topo.ports.len())
            .map(|p| net.er_series(p).to_vec())
            .collect(),
    };
    (outcome, net.events_processed())
}

pub fn no_reaction(_: &Delivery) -> Option<(CircuitId, u32)> {
    None
}

/// Runs both fidelities and insists on the same outcome; returns it.
pub fn equivalent(topo: &Topology, sends: &[(u64, CircuitId, u32)], react: React) -> Outcome {
    let (train, train_events) = run(topo, Fidelity::Train, sends, react);
    let (reference, cell_events) = run(topo, Fidelity::PerCell, sends, react);
    assert_eq!(train.deliveries, reference.deliveries, "deliveries differ");
    assert_eq!(
        train.log.len(),
        reference.log.len(),
        "cell log sizes differ"
    );
    for (a, b) in train.log.iter().zip(&reference.log) {
        assert_eq!(a, b, "first differing cell record (train, reference)");
    }
    assert_eq!(train.ports, reference.ports, "port counters differ");
    assert_eq!(
        train.circuits, reference.circuits,
        "circuit counters differ"
    );
    assert_eq!(
        train.policers, reference.policers,
        "policer counters differ"
    );
    assert_eq!(train.refused, reference.refused);
    assert_eq!(
        train.abr_sources, reference.abr_sources,
        "ABR sources differ"
    );
    assert_eq!(train.acr, reference.acr, "ACR series differ");
    assert_eq!(train.abr_ports, reference.abr_ports, "ABR ports differ");
    assert_eq!(train.er, reference.er, "ER series differ");
    // Without the cell log, everything else as with it.
    let (quiet, _) = run_logged(topo, Fidelity::Train, sends, react, false);
    assert_eq!(
        Outcome {
            log: train.log.clone(),
            ..quiet
        },
        train,
        "Train without the cell log differs"
    );
    assert!(
        train_events <= cell_events,
        "train {train_events} events > per-cell {cell_events}"
    );
    train
}

pub fn lost(o: &Outcome, p: usize, cause: LossCause) -> Vec<(CircuitId, u64, u32)> {
    o.log
        .iter()
        .filter(|r| r.place == Place::Port(p) && r.fate == CellFate::Lost(cause))
        .map(|r| (r.circuit, r.token, r.cell))
        .collect()
}

/// A proptest configuration of `n` cases, unless `PROPTEST_CASES` asks for
/// another number (a longer search by hand: `PROPTEST_CASES=3000 cargo test
/// --release --test net_abr_train`); CI runs `n`.
pub fn cases(n: u32) -> proptest::test_runner::Config {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    proptest::test_runner::Config {
        cases: n,
        ..Default::default()
    }
}
