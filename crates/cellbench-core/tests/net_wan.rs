//! The wide-area network: policing (UPC/NPC) in the data path, adapter
//! transmission modes, per-VC pacing, VP cross-connects, slow long links.
//! Hand-checked cases, each also run in both fidelities (Train = PerCell).

use cellbench_core::atm::gcra::{Action, CellRate, Contract, Policer, Verdict};
use cellbench_core::atm::phy::{Framing, Phy};
use cellbench_core::sim::net::{
    CellFate, CircuitId, CircuitSpec, Delivery, DropPolicy, Fidelity, Hop, LossCause, Network,
    PacedQuantity, Place, PolicerSpec, Topology, TopologyError, TxSpacing, VcPacing,
    VpCrossConnect,
};
use cellbench_core::{BitRate, SimTime};

mod net_harness;
use net_harness::*;

/// The europe-vp contract: GCRA(T = 16.39 µs, τ = 101 µs) on the peak cell rate.
const T_VP: u64 = 16_390_000;
const TAU_VP: u64 = 101_000_000;
/// E3 (G.832): 424 bits at 33.92 Mb/s = 12.5 µs.
const C_E3: u64 = 12_500_000;
/// DS-3 (PLCP): 96,000 cells/s, 424 bits at 40.704 Mb/s = 10.41666… µs, rounded down.
const C_DS3: u64 = 10_416_666;
/// 600 km of fibre at 5 µs/km.
const FIBRE_600KM: SimTime = SimTime::from_ms(3);

fn cells(phy: Phy) -> BitRate {
    phy.cell_rate(Framing::Modelled)
}

fn cbr(t: u64, tau: u64) -> Contract {
    Contract::Cbr {
        pcr: CellRate::from_interval(SimTime(t)).expect("T > 0"),
        cdvt: SimTime(tau),
    }
}

fn policer(
    port: usize,
    vpi: u16,
    vci: Option<u16>,
    contract: Contract,
    action: Action,
) -> PolicerSpec {
    PolicerSpec {
        port,
        vpi,
        vci,
        contract,
        action,
    }
}

/// Indices of the cells of a train arriving every `step` (from 0) that
/// GCRA(T, τ) passes, from a fresh state: cell j is the k-th conforming one
/// iff j = max(k, ⌈(k·T − τ)/step⌉) (the burst, then one per T).
fn conforming_by_hand(n: u64, step: u64, t: u64, tau: u64) -> Vec<u64> {
    (0..)
        .map(|k: u64| k.max((k * t).saturating_sub(tau).div_ceil(step)))
        .take_while(|&j| j < n)
        .collect()
}

/// Host 0 (OC-3c) → port 0 (OC-3c, policed on arrival) → host 1.
fn policed_oc3(contract: Contract, action: Action) -> Topology {
    Topology {
        adapters: vec![adapter(OC3), adapter(OC3)],
        ports: vec![port(OC3, 256, DropPolicy::TailDrop)],
        circuits: vec![circuit(0, 1, 32, &[0])],
        policers: vec![policer(0, 0, Some(32), contract, action)],
        ..Default::default()
    }
}

fn cells_at(o: &Outcome, place: Place, fate: CellFate) -> Vec<u64> {
    o.log
        .iter()
        .filter(|r| r.place == place && r.fate == fate)
        .map(|r| r.cell as u64)
        .collect()
}

// ---------------------------------------------------------------------------
// Policing, hand-checked.

#[test]
fn back_to_back_oc3_into_gcra_passes_eight_then_one_per_t() {
    let o = equivalent(
        &policed_oc3(cbr(T_VP, TAU_VP), Action::Discard),
        &[(0, 0, FULL)],
        &no_reaction,
    );
    // Cells every C = 2.831196 µs: the burst is 1 + ⌊101 / (16.39 − 2.831196)⌋ =
    // 1 + ⌊7.449⌋ = 8 cells, then TAT = a0 + 8T and cell j passes when
    // j·C ≥ 8T − τ = 30.12 µs: j = 11; then j·C ≥ 9T − τ = 46.51 µs: j = 17; …
    // up to k = ⌊(191·C + τ)/T⌋ = ⌊39.155⌋ = 39: 40 cells of 192 pass.
    let passed = cells_at(&o, Place::Port(0), CellFate::Sent);
    assert_eq!(&passed[..10], &[0, 1, 2, 3, 4, 5, 6, 7, 11, 17]);
    assert_eq!(passed, conforming_by_hand(192, C_OC3, T_VP, TAU_VP));
    assert_eq!(passed.len(), 40);
    let pc = o.policers[0];
    assert_eq!(
        (pc.cells_in, pc.conforming, pc.discarded, pc.tagged),
        (192, 40, 152, 0)
    );
    assert_eq!(o.ports[0].cells_lost.policing, 152);
    assert_eq!(o.ports[0].cells_lost.total(), 152);
    assert_eq!(o.ports[0].pdus_damaged, 1);
    assert_eq!(o.circuits[0].lost_by_cause.policing, 152);
    assert_eq!(o.circuits[0].pdus_lost, 1);
    assert!(o.deliveries.is_empty());
}

#[test]
fn tagging_passes_every_cell_with_clp_set() {
    let o = equivalent(
        &policed_oc3(cbr(T_VP, TAU_VP), Action::Tag),
        &[(0, 0, FULL)],
        &no_reaction,
    );
    let conforming = conforming_by_hand(192, C_OC3, T_VP, TAU_VP);
    let clp0: Vec<u64> = o
        .log
        .iter()
        .filter(|r| r.place == Place::Receiver(1) && !r.clp)
        .map(|r| r.cell as u64)
        .collect();
    assert_eq!(clp0, conforming);
    assert_eq!(o.policers[0].tagged, 152);
    assert_eq!(o.ports[0].cells_tagged, 152);
    assert_eq!(o.circuits[0].cells_tagged, 152);
    assert_eq!(o.ports[0].cells_lost.total(), 0);
    // No CLP-1 threshold at the port: a tagged PDU is delivered.
    assert_eq!(o.deliveries.len(), 1);
}

#[test]
fn vbr_passes_the_maximum_burst_size_then_the_sustainable_rate() {
    // PCR = the line (T = C, CDVT 0: back-to-back cells conform exactly), SCR one
    // cell per 10 µs, MBS 32: BT = 31·(10 − 2.831196) µs. The SCR bucket passes
    // exactly 32 back-to-back cells, then cell j for the k-th time when
    // j·C + BT ≥ k·10 µs: ⌊(191·C + BT)/10 µs⌋ + 1 = ⌊76.30⌋ + 1 = 77 cells.
    let pcr = CellRate::from_interval(SimTime(C_OC3)).expect("> 0");
    let scr = CellRate::from_interval(SimTime::from_us(10)).expect("> 0");
    let vbr = Contract::vbr_from_mbs(pcr, SimTime::ZERO, scr, 32).expect("valid");
    let o = equivalent(
        &policed_oc3(vbr, Action::Discard),
        &[(0, 0, FULL)],
        &no_reaction,
    );
    let passed = cells_at(&o, Place::Port(0), CellFate::Sent);
    assert_eq!(passed[..32], (0..32).collect::<Vec<u64>>()[..]);
    assert_ne!(passed[32], 32);
    let bt = 31 * (10_000_000 - C_OC3);
    assert_eq!(passed, conforming_by_hand(192, C_OC3, 10_000_000, bt));
    assert_eq!(passed.len(), 77);
}

#[test]
fn a_policed_last_cell_sinks_the_next_pdu_too() {
    // Two 3-cell PDUs back to back into GCRA(T = 3C, τ = 0): only every third
    // arrival conforms, so each PDU keeps its first cell and loses the other
    // two, its last included. PDU 2's first cell is glued to PDU 1's remainder,
    // and PDU 3 (one conforming cell, much later) to PDU 2's: three PDUs fail,
    // and PDU 4 finds the reassembler in sync again.
    let topo = policed_oc3(cbr(3 * C_OC3, 0), Action::Discard);
    let sends = [
        (0, 0, 100),
        (0, 0, 100),
        (1_000_000_000, 0, 40),
        (2_000_000_000, 0, 40),
    ];
    let o = equivalent(&topo, &sends, &no_reaction);
    assert_eq!(o.policers[0].discarded, 4);
    let delivered: Vec<u64> = o.deliveries.iter().map(|d| d.token).collect();
    assert_eq!(delivered, vec![4]);
    assert_eq!(o.circuits[0].pdus_lost, 3);
}

// ---------------------------------------------------------------------------
// CLP-selective discard: tagged cells give way at a port's CLP-1 threshold.

/// Host 0 (OC-3c, VC 32, policed with `contract` on arrival at port 0, action
/// tag) and host 1 (`rate1`, VC 33, not policed) → port 0 (TAXI, 256 cells,
/// CLP-1 threshold `clp1`) → host 2.
fn tagged_and_clean(
    contract: Contract,
    rate1: BitRate,
    clp1: Option<u32>,
    policy: DropPolicy,
) -> Topology {
    let mut p = port(TAXI, 256, policy);
    p.clp1_threshold_cells = clp1;
    Topology {
        adapters: vec![adapter(OC3), adapter(rate1), adapter(TAXI)],
        ports: vec![p],
        circuits: vec![circuit(0, 2, 32, &[0]), circuit(1, 2, 33, &[0])],
        policers: vec![policer(0, 0, Some(32), contract, Action::Tag)],
        ..Default::default()
    }
}

#[test]
fn tagged_cells_give_way_at_the_clp1_threshold() {
    // One PDU back to back at OC-3c into TAXI; GCRA(1 s, 0) passes only cell 0,
    // the other 191 go on tagged. While all are accepted cell j finds
    // ⌈j·(C_o − C_i)/C_o⌉ = ⌈j·1,408,804/4,240,000⌉ cells: 9 for j = 27, 10 for
    // j = 28, the first to reach the threshold of 10: lost, cause CLP. Under PPD
    // cells 29..190 follow it (PPD); the last cell (j = 191, 540.8 µs) finds the
    // port idle (28 cells left by 1 µs + 29·C_o ≈ 124 µs) and is kept.
    let contract = cbr(1_000_000_000_000, 0);
    let topo = tagged_and_clean(contract, OC3, Some(10), DropPolicy::Ppd);
    let o = equivalent(&topo, &[(0, 0, FULL)], &no_reaction);
    assert_eq!(
        cells_at(&o, Place::Port(0), CellFate::Lost(LossCause::Clp)),
        vec![28]
    );
    let l = o.ports[0].cells_lost;
    assert_eq!((l.clp, l.ppd, l.overflow), (1, 162, 0));
    assert_eq!(o.circuits[0].lost_by_cause.clp, 1);
    assert_eq!(o.ports[0].peak_occupancy, 10);
    assert_eq!(
        cells_at(&o, Place::Port(0), CellFate::Sent),
        (0..28).chain([191]).collect::<Vec<u64>>()
    );
    assert!(o.deliveries.is_empty());
    // Tail drop goes on taking tagged cells whenever the queue is below 10, so
    // it holds 9 or 10 cells from cell 28 on: about C_i/C_o of the rest pass.
    let topo = tagged_and_clean(contract, OC3, Some(10), DropPolicy::TailDrop);
    let o = equivalent(&topo, &[(0, 0, FULL)], &no_reaction);
    let lost = cells_at(&o, Place::Port(0), CellFate::Lost(LossCause::Clp));
    assert_eq!(lost[0], 28);
    assert!((50..=60).contains(&lost.len()), "{}", lost.len());
    assert_eq!(o.ports[0].cells_lost.total(), lost.len() as u64);
    assert_eq!(o.ports[0].peak_occupancy, 10);
    // CLP = 0 cells ignore the threshold: untagged, nothing is lost.
    let topo = tagged_and_clean(cbr(C_OC3, 0), OC3, Some(10), DropPolicy::TailDrop);
    let o = equivalent(&topo, &[(0, 0, FULL)], &no_reaction);
    assert_eq!(o.ports[0].cells_lost.total(), 0);
    assert_eq!(o.ports[0].peak_occupancy, 65);
}

#[test]
fn a_tagged_vc_loses_its_excess_and_spares_a_conforming_one() {
    // VC 32 sends 20 PDUs back to back at OC-3c (150 Mb/s) under a contract of
    // one cell per 20 µs: of every 8 arrivals (22.6 µs) one conforms, 19 Mb/s
    // of CLP = 0, the rest is tagged. VC 33 sends 20 PDUs at 75 Mb/s, all
    // CLP = 0. The TAXI port carries 100 Mb/s: 225 Mb/s offered overflows its
    // 256 cells and both VCs lose; with a CLP-1 threshold of 64 only tagged
    // cells are refused, the CLP = 0 load (94 Mb/s) fits, and VC 33 loses nothing.
    let contract = cbr(20_000_000, 0);
    let slower = BitRate(75_000_000);
    let sends: Vec<_> = (0..20).flat_map(|_| [(0, 0, FULL), (0, 1, FULL)]).collect();
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 200,
        },
    ] {
        let without = equivalent(
            &tagged_and_clean(contract, slower, None, policy),
            &sends,
            &no_reaction,
        );
        assert!(without.circuits[0].cells_lost > 0, "{policy:?}");
        assert!(without.circuits[1].cells_lost > 0, "{policy:?}");
        assert_eq!(without.ports[0].cells_lost.clp, 0);

        let with = equivalent(
            &tagged_and_clean(contract, slower, Some(64), policy),
            &sends,
            &no_reaction,
        );
        let (tagged, clean) = (with.circuits[0], with.circuits[1]);
        assert_eq!(clean.cells_lost, 0, "{policy:?}");
        assert_eq!(clean.pdus_delivered, 20, "{policy:?}");
        assert!(tagged.lost_by_cause.clp > 0, "{policy:?}");
        // Only the threshold (and the PPD/EPD that follow it) discard cells.
        assert_eq!(tagged.lost_by_cause.overflow, 0, "{policy:?}");
        assert_eq!(with.ports[0].cells_lost.overflow, 0, "{policy:?}");
        assert!(with.ports[0].peak_occupancy < 256, "{policy:?}");
        assert!(
            tagged.cells_tagged > 0 && tagged.pdus_lost > 0,
            "{policy:?}"
        );
        // Every cell dropped for its CLP bit carried CLP = 1.
        assert!(with
            .log
            .iter()
            .filter(|r| r.fate == CellFate::Lost(LossCause::Clp))
            .all(|r| r.clp && r.circuit == 0));
    }
}

// ---------------------------------------------------------------------------
// The europe-vp setup: a cell-spaced OC-3c adapter, an E3 link over 600 km into
// a public network whose VP cross-connect polices the VP at GCRA(16.39, 101).

/// Host 0 (OC-3c, `tx`, 52 µs PDU gap) → port 0 (the customer switch's E3
/// port, VPI 5) → port 1 (public VP cross-connect 5 → 9, VP policed on
/// arrival) → host 1.
fn europe_vp(adapter_rate: BitRate, tx: TxSpacing) -> Topology {
    let e3 = cells(Phy::E3);
    let mut a = adapter(adapter_rate);
    a.tx = tx;
    a.pdu_gap = SimTime::from_us(52);
    let mut p0 = port(e3, 256, DropPolicy::TailDrop);
    p0.delay = FIBRE_600KM;
    Topology {
        adapters: vec![a, adapter(e3)],
        ports: vec![p0, port(e3, 256, DropPolicy::TailDrop)],
        circuits: vec![CircuitSpec {
            src: 0,
            dst: 1,
            vpi: 0,
            vci: 32,
            hops: vec![
                Hop {
                    port: 0,
                    vpi: 5,
                    vci: 32,
                },
                Hop {
                    port: 1,
                    vpi: 9,
                    vci: 32,
                },
            ],
        }],
        policers: vec![policer(1, 5, None, cbr(T_VP, TAU_VP), Action::Discard)],
        vp_cross_connects: vec![VpCrossConnect { port: 1, vpi: 9 }],
        ..Default::default()
    }
}

/// Sends `pdus` full PDUs, one every 3 ms: faster than the spaced adapter
/// sends them (>= 3.1 ms each), so they leave back to back, and its interface
/// queue (50 PDUs) never fills. Checks both
/// fidelities agree, and checks the policer's decisions against the
/// foundation's GCRA run on the arrival times at port 1 worked out from the
/// adapter's schedule (port 0 never queues: the spaced cells are slower than E3).
/// Returns the policed cells per PDU.
fn europe_vp_discards(adapter_rate: BitRate, tx: TxSpacing, pdus: u64) -> Vec<u64> {
    let topo = europe_vp(adapter_rate, tx);
    let sends: Vec<_> = (0..pdus).map(|n| (n * 3_000_000_000, 0, FULL)).collect();
    let o = equivalent(&topo, &sends, &no_reaction);
    let c = adapter_rate.time_for_bits(424).as_ps();
    let to_port1 = c + 1_000_000 + C_E3 + FIBRE_600KM.as_ps();
    let mut gcra = Policer::<cellbench_core::atm::gcra::VirtualScheduling>::new(
        &cbr(T_VP, TAU_VP),
        Action::Discard,
    )
    .expect("valid");
    let mut expect = vec![0u64; pdus as usize];
    for r in o.log.iter().filter(|r| r.place == Place::Adapter(0)) {
        if gcra.police(SimTime(r.at.as_ps() + to_port1)) == Verdict::Discarded {
            expect[r.token as usize - 1] += 1;
        }
    }
    let mut got = vec![0u64; pdus as usize];
    for r in &o.log {
        if r.fate == CellFate::Lost(LossCause::Policing) {
            assert_eq!(r.place, Place::Port(1));
            got[r.token as usize - 1] += 1;
        }
    }
    assert_eq!(got, expect);
    assert_eq!(o.ports[0].cells_lost.total(), 0, "port 0 never overflows");
    assert_eq!(o.ports[0].peak_occupancy, 1, "port 0 never queues");
    assert_eq!(
        o.circuits[0].pdus_delivered,
        got.iter().filter(|&&n| n == 0).count() as u64
    );
    // Labels: the VP cross-connect keeps the VCI and maps VPI 5 to 9.
    assert!(o
        .log
        .iter()
        .filter(|r| r.place == Place::Port(1))
        .all(|r| (r.vpi, r.vci) == (9, 32)));
    got
}

#[test]
fn europe_vp_spaced_streams_with_the_sbus_stall_conform() {
    // Cell spacing on our OC-3c (C = 2.831196 µs): the requested 16.01, 16.50,
    // 17.98 and 19.45 µs become 27, 28, 31 and 34 idle units, i.e. 16.115,
    // 16.607, 18.083 and 19.559 µs. At or above T = 16.39 µs a spaced PDU never
    // gains on the GCRA, so it conforms. At 16.115 µs each cell gains
    // 0.275 µs, but at most 22 cells pass between two host-buffer stalls
    // (>= 7·C = 19.8 µs each, during which the TAT is caught up): the lead
    // never exceeds 22 × 0.275 = 6 µs < τ. And the 52 µs gap between PDUs
    // exceeds T. So all four conform: no cell is policed.
    for (us, units) in [(16.01, 27), (16.50, 28), (17.98, 31), (19.45, 34)] {
        let (tx, actual) = TxSpacing::cell_level(OC3, SimTime::from_us_f64(us), true).expect("ok");
        assert_eq!(actual, SimTime(C_OC3 + units * 492_000));
        assert_eq!(europe_vp_discards(OC3, tx, 12), vec![0; 12], "{us} µs");
    }
}

#[test]
fn europe_vp_without_the_stall_16_01_exceeds_the_contract() {
    // Without the stall a 192-cell PDU at I = 16.115196 µs per cell, then the
    // 52 µs gap beyond the spacing interval (docs/design.md §5), takes 192·I + 52 =
    // 3146.08 µs, while the contract allows 192 cells in 192·T = 3146.88 µs:
    // 0.8 µs too fast per PDU. Within a PDU the lead TAT − t_a grows by
    // d = T − I = 0.274804 µs per cell, 191·d = 52.487564 µs; the gap's
    // interval I + 52 µs gives back 51.725196 µs: the lead at the start of
    // PDU n is (n − 1)·0.762368 µs, so it first exceeds τ = 101 µs in PDU 65,
    // at cell ⌊(101 − 64·0.762368)/d⌋ + 1 = 190. From then on the excess
    // costs a cell about every 16.39/0.76 = 21.5 PDUs.
    let (tx, _) = TxSpacing::cell_level(OC3, SimTime::from_us_f64(16.01), false).expect("ok");
    let got = europe_vp_discards(OC3, tx, 120);
    assert_eq!(&got[..65], &[vec![0; 64], vec![1]].concat()[..]);
    assert!(got.iter().all(|&n| n <= 1), "{got:?}");
    let lost = got.iter().sum::<u64>();
    assert!(
        (3..=4).contains(&lost),
        "{lost}: PDU 65, then one every ~21.5"
    );
    let o = equivalent(
        &europe_vp(OC3, tx),
        &(0..65)
            .map(|n| (n * 3_000_000_000, 0, FULL))
            .collect::<Vec<_>>(),
        &no_reaction,
    );
    let first = o
        .log
        .iter()
        .find(|r| r.fate == CellFate::Lost(LossCause::Policing))
        .map(|r| (r.token, r.cell));
    assert_eq!(first, Some((65, 190)));
    // 16.50 µs (16.607) is slower than T: it conforms even without the stall.
    let (tx, _) = TxSpacing::cell_level(OC3, SimTime::from_us_f64(16.50), false).expect("ok");
    assert_eq!(europe_vp_discards(OC3, tx, 40), vec![0; 40]);
}

#[test]
fn europe_vp_unspaced_pdu_is_cut_to_152_cells() {
    // Unspaced, port 0 reshapes the PDU to E3's 12.5 µs per cell (it queues at
    // most 150 cells, below 256). The VP policer passes 1 + ⌊101/(16.39 − 12.5)⌋
    // = 26 cells, then one per T up to ⌊(191·12.5 + 101)/16.39⌋ = 151: 152 pass,
    // 40 are policed.
    let topo = europe_vp(OC3, TxSpacing::None);
    let o = equivalent(&topo, &[(0, 0, FULL)], &no_reaction);
    let sent: Vec<u64> = cells_at(&o, Place::Port(1), CellFate::Sent);
    assert_eq!(sent, conforming_by_hand(192, C_E3, T_VP, TAU_VP));
    assert_eq!(sent.len(), 152);
    assert_eq!(o.policers[0].discarded, 40);
    assert_eq!(o.ports[1].cells_lost.policing, 40);
}

// ---------------------------------------------------------------------------
// VP cross-connects.

/// Hosts 0 and 1 (OC-3c) → port 0 (E3, 1000 cells, both VCs leave on VPI 5) →
/// port 1 (VP cross-connect 5 → 9, VP policed) → host 2.
fn shared_vp() -> Topology {
    let e3 = cells(Phy::E3);
    let vc = |src: usize, vci: u16| CircuitSpec {
        src,
        dst: 2,
        vpi: 0,
        vci,
        hops: vec![
            Hop {
                port: 0,
                vpi: 5,
                vci,
            },
            Hop {
                port: 1,
                vpi: 9,
                vci,
            },
        ],
    };
    Topology {
        adapters: vec![adapter(OC3), adapter(OC3), adapter(e3)],
        ports: vec![
            port(e3, 1000, DropPolicy::TailDrop),
            port(e3, 256, DropPolicy::TailDrop),
        ],
        circuits: vec![vc(0, 40), vc(1, 41)],
        policers: vec![policer(1, 5, None, cbr(T_VP, TAU_VP), Action::Discard)],
        vp_cross_connects: vec![VpCrossConnect { port: 1, vpi: 9 }],
        ..Default::default()
    }
}

#[test]
fn vp_policer_polices_the_aggregate_of_its_vcs() {
    // Both PDUs at once: port 0 interleaves their 384 cells and sends them back
    // to back at 12.5 µs. The VP policer sees one stream of 384 cells: it passes
    // ⌊(383·12.5 + 101)/16.39⌋ + 1 = 299 and polices 85, from both VCs.
    let o = equivalent(&shared_vp(), &[(0, 0, FULL), (0, 1, FULL)], &no_reaction);
    let pc = o.policers[0];
    assert_eq!((pc.cells_in, pc.conforming, pc.discarded), (384, 299, 85));
    assert_eq!(
        conforming_by_hand(384, C_E3, T_VP, TAU_VP).len(),
        pc.conforming as usize
    );
    assert!(o.circuits[0].lost_by_cause.policing > 0);
    assert!(o.circuits[1].lost_by_cause.policing > 0);
    for r in o
        .log
        .iter()
        .filter(|r| r.place == Place::Port(1) && r.fate == CellFate::Sent)
    {
        assert_eq!((r.vpi, r.vci), (9, 40 + r.circuit as u16));
    }
}

#[test]
fn vp_cross_connect_and_policer_mistakes_are_refused() {
    let mut topo = shared_vp();
    topo.circuits[1].hops[1].vci = 77;
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert_eq!(
        err,
        TopologyError::VpChangesVci {
            circuit: 1,
            port: 1,
            vci_in: 41,
            vci_out: 77
        }
    );
    assert!(err.to_string().contains("VCI 41 becomes 77"), "{err}");

    let mut topo = shared_vp();
    topo.circuits[1].hops[0].vpi = 6;
    topo.policers.clear();
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert!(
        matches!(
            err,
            TopologyError::VpMerge {
                port: 1,
                vpi: 9,
                ..
            }
        ),
        "{err}"
    );

    let mut topo = shared_vp();
    topo.policers[0].vpi = 4;
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert!(
        err.to_string()
            .contains("no circuit arrives at port 1 with VPI 4"),
        "{err}"
    );

    let mut topo = shared_vp();
    let extra = policer(1, 5, Some(41), cbr(T_VP, 0), Action::Tag);
    topo.policers.push(extra);
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert_eq!(
        err,
        TopologyError::PolicerOverlap {
            port: 1,
            circuit: 1,
            policers: (0, 1)
        }
    );

    let mut topo = shared_vp();
    topo.vp_cross_connects[0].vpi = 3;
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert_eq!(err, TopologyError::VpCrossConnectUnused { port: 1, vpi: 3 });

    let mut topo = shared_vp();
    topo.policers[0].port = 9;
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert_eq!(
        err,
        TopologyError::PolicerPort {
            policer: 0,
            port: 9
        }
    );
}

// ---------------------------------------------------------------------------
// Transmission modes and pacing.

fn adapter_starts(o: &Outcome, host: usize) -> Vec<(u64, u64)> {
    o.log
        .iter()
        .filter(|r| r.place == Place::Adapter(host))
        .map(|r| (r.token, r.at.as_ps()))
        .collect()
}

/// Host 0 (OC-3c) with circuits 0 and 1 → port 0 (TAXI) → host 1.
fn one_adapter_two_vcs() -> Topology {
    Topology {
        adapters: vec![adapter(OC3), adapter(TAXI)],
        ports: vec![port(TAXI, 256, DropPolicy::TailDrop)],
        circuits: vec![circuit(0, 1, 32, &[0]), circuit(0, 1, 33, &[0])],
        ..Default::default()
    }
}

#[test]
fn per_vc_pacing_spaces_its_own_cells_across_pdus() {
    let mut topo = one_adapter_two_vcs();
    topo.pacing = vec![VcPacing::at_rate(0, BitRate(42_400_000)).expect("> 0")];
    assert_eq!(topo.pacing[0].interval, SimTime::from_us(10));
    // Paced 3 cells, unpaced 1 cell, paced 3 cells, all handed over at 0.
    let o = equivalent(&topo, &[(0, 0, 100), (0, 1, 40), (0, 0, 100)], &no_reaction);
    let us = 1_000_000;
    let c = C_OC3;
    // The unpaced PDU follows the first at once (its last cell's end); the
    // second paced PDU waits for its VC's pace, 10 µs after cell 2 (the
    // unpaced cell has left by 20 µs + 2C).
    assert_eq!(
        adapter_starts(&o, 0),
        vec![
            (1, 0),
            (1, 10 * us),
            (1, 20 * us),
            (2, 20 * us + c),
            (3, 30 * us),
            (3, 40 * us),
            (3, 50 * us)
        ]
    );
    let mut topo = one_adapter_two_vcs();
    topo.pacing = vec![VcPacing {
        circuit: 1,
        interval: SimTime(C_OC3 - 1),
        counts: PacedQuantity::Cells,
    }];
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert!(
        matches!(err, TopologyError::BadPacing { circuit: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("2831196 ps"), "{err}");
}

#[test]
fn packet_spacing_and_cell_bursts() {
    let mut topo = one_adapter_two_vcs();
    topo.adapters[0].tx = TxSpacing::Packet {
        interval: SimTime::from_us(700),
    };
    let o = equivalent(&topo, &[(0, 0, 100), (0, 1, 100)], &no_reaction);
    let starts: Vec<u64> = adapter_starts(&o, 0).into_iter().map(|s| s.1).collect();
    let p = 700_000_000;
    assert_eq!(
        starts,
        vec![0, C_OC3, 2 * C_OC3, p, p + C_OC3, p + 2 * C_OC3]
    );

    // Bursts at a mean of 10 µs per cell: 6 + round(5 × 2.831196/10) = 7 cells per
    // 70 µs; 10 cells are two bursts (7 + 3); the next PDU waits for the next
    // burst slot, 140 µs.
    let tx = TxSpacing::cell_burst(OC3, SimTime::from_us(10)).expect("ok");
    assert_eq!(
        tx,
        TxSpacing::CellBurst {
            burst: 7,
            period: SimTime::from_us(70)
        }
    );
    topo.adapters[0].tx = tx;
    let o = equivalent(&topo, &[(0, 0, 440), (0, 1, 40)], &no_reaction);
    let starts: Vec<u64> = adapter_starts(&o, 0).into_iter().map(|s| s.1).collect();
    let b = 70_000_000;
    let expect: Vec<u64> = (0..7)
        .map(|j| j * C_OC3)
        .chain((0..3).map(|j| b + j * C_OC3))
        .chain([2 * b])
        .collect();
    assert_eq!(starts, expect);

    topo.adapters[0].tx = TxSpacing::CellBurst {
        burst: 4,
        period: SimTime(4 * C_OC3 - 1),
    };
    let err = Network::new(topo, Fidelity::Train).err().expect("refused");
    assert!(
        matches!(
            err,
            TopologyError::BadBurst {
                host: 0,
                burst: 4,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn spaced_bursty_and_paced_senders_congest_a_policed_port_alike() {
    // Three OC-3c hosts, each in another mode, into one E3 port (64 cells, PPD)
    // policed per VP at its input; the receiver ACKs every PDU.
    let e3 = cells(Phy::E3);
    let mut topo = Topology {
        adapters: vec![adapter(OC3), adapter(OC3), adapter(OC3), adapter(e3)],
        ports: vec![
            port(e3, 64, DropPolicy::Ppd),
            port(OC3, 256, DropPolicy::Ppd),
        ],
        circuits: vec![
            circuit(0, 3, 40, &[0]),
            circuit(1, 3, 41, &[0]),
            circuit(2, 3, 42, &[0]),
            circuit(3, 0, 43, &[1]),
        ],
        policers: vec![policer(
            0,
            0,
            None,
            cbr(8_000_000, 300_000_000),
            Action::Discard,
        )],
        pacing: vec![VcPacing {
            circuit: 2,
            interval: SimTime::from_us(30),
            counts: PacedQuantity::Cells,
        }],
        ..Default::default()
    };
    topo.adapters[0].tx = TxSpacing::Cell {
        idle_units: 20,
        host_buffer_stall: true,
    };
    topo.adapters[1].tx = TxSpacing::cell_burst(OC3, SimTime::from_us(20)).expect("ok");
    let mut sends = Vec::new();
    for k in 0..10u64 {
        sends.push((k * 3_000_000_000, 0, FULL));
        sends.push((k * 2_500_000_000 + 1_000_000, 1, FULL));
        sends.push((k * 2_000_000_000 + 7_000_000, 2, 4000));
    }
    let react = |d: &Delivery| (d.circuit < 3).then_some((3, 40));
    let o = equivalent(&topo, &sends, &react);
    assert!(o.ports[0].cells_lost.policing > 0);
    assert!(o.ports[0].cells_lost.overflow + o.ports[0].cells_lost.ppd > 0);
    assert!(!o.deliveries.is_empty());
}

// ---------------------------------------------------------------------------
// Slow, long links.

/// Host 0 (OC-3c) → port 0 (DS-3, 600 km) → port 1 (E3, 600 km) → host 2;
/// host 1 (TAXI) → port 1; ACKs host 2 → port 2 (DS-3, 600 km) → host 0.
fn ds3_e3_wan(buffer: u32, policy: DropPolicy) -> Topology {
    let (ds3, e3) = (cells(Phy::Ds3), cells(Phy::E3));
    let long = |rate, buffer| {
        let mut p = port(rate, buffer, policy);
        p.delay = FIBRE_600KM;
        p
    };
    Topology {
        adapters: vec![adapter(OC3), adapter(TAXI), adapter(e3)],
        ports: vec![long(ds3, 256), long(e3, buffer), long(ds3, 256)],
        circuits: vec![
            circuit(0, 2, 50, &[0, 1]),
            circuit(1, 2, 51, &[1]),
            circuit(2, 0, 52, &[2]),
        ],
        ..Default::default()
    }
}

#[test]
fn one_pdu_over_ds3_then_e3_and_1200_km() {
    assert_eq!(cells(Phy::Ds3).time_for_bits(424).as_ps(), C_DS3);
    assert_eq!(cells(Phy::E3).time_for_bits(424).as_ps(), C_E3);
    let o = equivalent(
        &ds3_e3_wan(256, DropPolicy::TailDrop),
        &[(0, 0, FULL)],
        &no_reaction,
    );
    // Port 0 is busy from the first arrival a0 = C_oc3 + 1 µs, one cell per
    // C_ds3; port 1 (slower) is busy from its first arrival a0 + C_ds3 + 3 ms
    // for 192·C_e3; then 3 ms more to host 2.
    let at = C_OC3 + 1_000_000 + C_DS3 + 3_000_000_000 + 192 * C_E3 + 3_000_000_000;
    assert_eq!(o.deliveries.len(), 1);
    assert_eq!(o.deliveries[0].at, SimTime(at));
    // At the last arrival at port 1 (191·C_ds3 after the first) ⌊191·C_ds3/C_e3⌋ =
    // 159 cells have left: 33 wait, the one on the wire included.
    assert_eq!(o.ports[1].peak_occupancy, 33);
}

#[test]
fn two_senders_into_e3_over_long_links() {
    for policy in [
        DropPolicy::TailDrop,
        DropPolicy::Ppd,
        DropPolicy::Epd {
            threshold_cells: 100,
        },
    ] {
        let mut sends = Vec::new();
        for k in 0..8u64 {
            sends.push((k * 1_000_000_000, 0, FULL));
            sends.push((k * 1_300_000_000 + 5_000_000, 1, FULL));
        }
        let react =
            |d: &Delivery| -> Option<(CircuitId, u32)> { (d.circuit < 2).then_some((2, 40)) };
        let o = equivalent(&ds3_e3_wan(200, policy), &sends, &react);
        assert!(o.ports[1].cells_lost.total() > 0, "{policy:?}");
        assert!(o.circuits[2].pdus_delivered > 0, "ACKs come back");
    }
}
