//! ABR in the cell network (`sim/net/abr.rs`): RM cells on the wire, the source
//! and destination rules, and the switch behaviours, each held to what TM 4.0
//! and ERICA say must happen.

mod net_harness;

use cellbench_core::sim::capture::simulated_cell;
use cellbench_core::sim::net::{
    AbrPort, AbrSource, AbrSwitch, CellFate, DropPolicy, Fidelity, Network, Place, Topology,
};
use cellbench_core::wire::rm::RmCell;
use cellbench_core::SimTime;
use net_harness::{adapter, circuit, port, FULL, OC3};

/// OC-3c's cell rate, 149.76 Mb/s / 424 bits (cells/s).
const OC3_CELLS: f64 = 149_760_000.0 / 424.0;
/// The same as the RM cell's rate format carries it, rounded down (`wire::rm`:
/// 2^18 · (1 + 177/512)): the ER a source puts in its FRMs, hence its ceiling.
const OC3_ER: f64 = 352_768.0;

/// `n` sources (hosts 0..n) to host n through port 0 (OC-3c, 256 cells), each
/// circuit ABR with these parameters, port 0 with `switch`.
fn bottleneck(n: usize, switch: Option<AbrSwitch>, src: impl Fn(usize) -> AbrSource) -> Topology {
    Topology {
        adapters: (0..=n).map(|_| adapter(OC3)).collect(),
        ports: vec![port(OC3, 256, DropPolicy::TailDrop)],
        circuits: (0..n).map(|i| circuit(i, n, 32 + i as u16, &[0])).collect(),
        abr_sources: (0..n).map(src).collect(),
        abr_ports: switch
            .map(|s| AbrPort { port: 0, switch: s })
            .into_iter()
            .collect(),
        ..Default::default()
    }
}

/// Greedy sources: every 100 µs each circuit's interface queue is topped up
/// with full PDUs, until `end`. Returns the network.
fn run_greedy(topo: Topology, end: SimTime, series: bool) -> Network {
    let n = topo.circuits.len();
    let mut net = Network::new(topo, Fidelity::Train).unwrap();
    net.set_abr_series(series);
    let step = SimTime::from_us(100);
    let mut t = SimTime::ZERO;
    let mut token = 0;
    while t < end {
        for c in 0..n {
            // Top up to a few PDUs waiting: a bulk sender never idle.
            for _ in 0..4 {
                token += 1;
                if !net.send(t, c, FULL, token) {
                    break;
                }
            }
        }
        t += step;
        poll_until(&mut net, t);
    }
    net
}

/// Handle the network's events one instant at a time up to `t` (the hosts'
/// loop does the same: the network is never polled past an event it has not seen).
fn poll_until(net: &mut Network, t: SimTime) {
    let mut out = Vec::new();
    while let Some(at) = net.poll_at().filter(|&at| at <= t) {
        net.poll(at, &mut out);
    }
}

#[test]
fn erica_converges_to_the_fair_share() {
    // ERICA's fixed point (Jain et al. 1996): with N equal greedy sources on one
    // bottleneck, each ACR -> target × link rate / N. By construction: 4 sources
    // starting at ICR = PCR, target 0.9, 1 ms averaging.
    let n = 4;
    let target = 0.9;
    let topo = bottleneck(
        n,
        Some(AbrSwitch::Erica {
            target,
            interval: SimTime::from_ms(1),
        }),
        |c| AbrSource::new(c, OC3_CELLS),
    );
    let net = run_greedy(topo, SimTime::from_ms(200), true);
    let fair = target * OC3_CELLS / n as f64;
    for c in 0..n {
        let k = net.abr_source_counters(c).unwrap();
        // After the transient (the last half of the run), every ACR point within 5%.
        let late: Vec<f64> = net
            .acr_series(c)
            .iter()
            .filter(|(t, _)| *t >= SimTime::from_ms(100))
            .map(|x| x.1)
            .collect();
        assert!(
            !late.is_empty(),
            "circuit {c}: ACR never moved late in the run"
        );
        for acr in &late {
            assert!(
                (acr / fair - 1.0).abs() < 0.05,
                "circuit {c}: ACR {acr:.0} vs fair share {fair:.0}"
            );
        }
        assert!((k.acr / fair - 1.0).abs() < 0.05, "{k:?}");
        assert!(k.frm_sent > 0 && k.brm_returned > 0, "{k:?}");
    }
    let pk = net.abr_port_counters(0).unwrap();
    assert!(pk.er_lowered > 0, "{pk:?}");
    assert!((pk.er_last / fair - 1.0).abs() < 0.05, "{pk:?} vs {fair}");
}

#[test]
fn one_frm_every_nrm_cells_and_each_comes_back() {
    // One source alone, never congested: every Nrm-th in-rate cell is an FRM
    // (rule 3a(ii)), and the destination turns each around.
    let topo = bottleneck(1, None, |c| AbrSource::new(c, OC3_CELLS));
    let mut net = run_greedy(topo, SimTime::from_ms(20), false);
    poll_until(&mut net, SimTime::from_ms(100));
    let k = net.abr_source_counters(0).unwrap();
    let data = net.circuit_counters(0).cells_sent;
    let pc = net.port_counters(0);
    // Cells through the port: data + FRMs, one FRM per Nrm - 1 data cells.
    let frms = pc.cells_out - (data - net.circuit_counters(0).cells_lost);
    assert_eq!(frms, k.frm_sent);
    let expected = data as f64 / 31.0;
    assert!(
        (k.frm_sent as f64 - expected).abs() <= 2.0,
        "{} FRMs for {data} data cells",
        k.frm_sent
    );
    assert_eq!(
        k.brm_returned, k.frm_sent,
        "every FRM back after the run drained"
    );
    // Alone on the link, ACR stays at PCR as the ER field carries it (ICR = PCR,
    // no CI; rule 9 holds it to ER): never at MCR.
    assert_eq!(k.acr, OC3_ER);
    assert_eq!(k.time_at_mcr, SimTime::ZERO);
}

#[test]
fn binary_feedback_slows_sources_that_overload_a_port() {
    // Two sources at PCR into one port of the same rate: EFCI marking (through the
    // destination's CI) and relative-rate marking both cut ACR below PCR, and
    // fewer cells are lost than with no ABR switch behaviour.
    let end = SimTime::from_ms(100);
    let lost = |switch| {
        let net = run_greedy(
            bottleneck(2, switch, |c| AbrSource::new(c, OC3_CELLS)),
            end,
            false,
        );
        let k = net.abr_source_counters(0).unwrap();
        (net.port_counters(0).cells_lost.total(), k)
    };
    let (none, k0) = lost(None);
    assert_eq!(k0.acr_min, OC3_ER, "no feedback, no cut");
    for switch in [
        AbrSwitch::Efci {
            threshold_cells: 64,
        },
        AbrSwitch::Relative {
            threshold_cells: 64,
        },
    ] {
        let (with, k) = lost(Some(switch));
        assert!(k.acr_min < 0.6 * OC3_CELLS, "{switch:?}: {k:?}");
        assert!(with < none / 4, "{switch:?}: {with} cells lost vs {none}");
    }
}

#[test]
fn rm_cells_decode_from_the_adapter_tap() {
    // The tester on the source's access link sees the FRMs like any cell: PTI 110,
    // CCR = ACR, ER = PCR, DIR forward.
    let topo = bottleneck(1, None, |c| AbrSource::new(c, OC3_CELLS));
    let mut net = Network::new(topo, Fidelity::Train).unwrap();
    net.set_tap(Place::Adapter(0));
    for k in 0..4 {
        net.send(SimTime::ZERO, 0, FULL, k);
    }
    poll_until(&mut net, SimTime::from_ms(10));
    let mut log = Vec::new();
    net.drain_cell_log(&mut log);
    let sent: Vec<_> = log.iter().filter(|r| r.fate == CellFate::Sent).collect();
    // One FRM first, then one after every Nrm - 1 = 31 data cells.
    assert_eq!(sent.len(), 4 * 192 + (4 * 192_usize).div_ceil(31));
    let rms: Vec<RmCell> = sent
        .iter()
        .filter_map(|r| RmCell::parse_cell(&simulated_cell(r).unwrap()).ok())
        .collect();
    assert_eq!(rms.len(), (4 * 192_usize).div_ceil(31));
    // The first cell on the link is an FRM (rule 2).
    assert!(sent[0].rm.is_some());
    for (i, rm) in rms.iter().enumerate() {
        assert!(!rm.backward && !rm.ci);
        assert_eq!(rm.sn, i as u32);
        assert!((rm.ccr.cells_per_sec() / OC3_CELLS - 1.0).abs() < 1.0 / 512.0);
    }
}

#[test]
fn bad_abr_parameters_are_refused() {
    let mut topo = bottleneck(1, None, |c| AbrSource {
        icr: 0.0,
        ..AbrSource::new(c, OC3_CELLS)
    });
    let e = Network::new(topo.clone(), Fidelity::Train).err().unwrap();
    assert!(e.to_string().contains("ICR must be above 0"), "{e}");
    topo.abr_sources.clear();
    topo.abr_ports.push(AbrPort {
        port: 0,
        switch: AbrSwitch::Erica {
            target: 1.5,
            interval: SimTime::from_ms(1),
        },
    });
    let e = Network::new(topo, Fidelity::Train).err().unwrap();
    assert!(e.to_string().contains("target in (0, 1]"), "{e}");
}

#[test]
fn rm_cells_decode_from_a_run_spec_capture() {
    // The cell tester of a run (`sim::capture`) on the port an ABR TCP transfer's
    // data leaves by: the FRMs are in the pcap with PTI 110 among the data cells,
    // decodable, one per Nrm - 1 = 31 data cells, with the ACR the source had.
    use cellbench_core::sim::spec::{CellsSpec, RunSpec};
    use cellbench_core::wire::pcap::{read_pcap, Record};
    let text = r#"{
      "hosts": [
        {"name": "a", "profile": "ultra-1", "phy": "oc3c", "flavour": "reno"},
        {"name": "b", "profile": "ultra-1", "phy": "oc3c", "flavour": "reno"}
      ],
      "switch": {"abr": {"kind": "erica"}},
      "connections": [
        {"transmitter": "a", "receiver": "b", "sndbuf": 52428, "rcvbuf": 52428,
         "abr": {"icr_bps": 10000000},
         "traffic": {"type": "full", "blocksize": 8192, "nbytes": 1048576}}
      ]
    }"#;
    let dir = std::env::temp_dir().join(format!("cellbench-abr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("b.pcap");
    let mut spec = RunSpec::from_json(text).unwrap();
    spec.cells = Some(CellsSpec {
        place: "b".into(),
        path: path.to_string_lossy().into_owned(),
        slot_us: None,
    });
    let result = spec.run().unwrap();
    let c = &result.connections[0];
    let pcap = read_pcap(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let cells: Vec<[u8; 53]> = pcap
        .records
        .iter()
        .map(|r| match r {
            Record::Cell { cell, .. } => *cell,
            other => panic!("not a cell: {other:?}"),
        })
        .collect();
    let rms: Vec<RmCell> = cells
        .iter()
        .filter(|c| (c[3] >> 1) & 7 == 0b110)
        .map(|c| RmCell::parse_cell(c).expect("every PTI-110 cell decodes"))
        .collect();
    let data = cells.len() - rms.len();
    assert_eq!(
        rms.len() as u64,
        c.abr_frm_sent.unwrap(),
        "every FRM passed port b"
    );
    assert!(
        (rms.len() as f64 - data as f64 / 31.0).abs() <= 2.0,
        "{} / {data}",
        rms.len()
    );
    // Forward cells; the first at ICR, sequence numbers in order.
    assert!(rms.iter().all(|r| !r.backward));
    assert!((rms[0].ccr.cells_per_sec() * 424.0 / 10e6 - 1.0).abs() < 0.01);
    assert!(rms.windows(2).all(|w| w[1].sn == w[0].sn + 1));
}
