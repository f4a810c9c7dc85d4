//! One seed, one schedule: the simulator's random-rate source and the real
//! engine's agent, each built from its own engine's spec, write the same
//! blocks at the same intervals (both draw through `traffic`). The simulator
//! is read from outside, through a cell tester on the transmitter's adapter:
//! each UDP datagram leaves as one AAL5 PDU whose trailer gives its length.

#![cfg(target_os = "linux")]

use cellbench_core::real::SourceSpec;
use cellbench_core::sim::spec::{CellsSpec, RunSpec};
use cellbench_core::wire::aal5::CpcsPdu;
use cellbench_core::wire::pcap::{read_pcap, Record};

/// IP and UDP headers before a datagram's payload (VC-mux: no LLC/SNAP).
const HEADERS: u64 = 20 + 8;
const SEED: u64 = 11;
const REPLICATION: u32 = 2;
const DURATION_S: f64 = 0.3;

/// The simulator: connection 1 (a to b) is random-rate UDP under `traffic`;
/// connection 0 (c to b) runs beside it so that the drawn one is not the first.
/// Returns each datagram's payload length and when its first cell left a's adapter (s).
fn simulated(traffic: &str, dir: &std::path::Path) -> Vec<(u64, f64)> {
    let text = format!(
        r#"{{
  "seed": {SEED}, "replication": {REPLICATION},
  "hosts": [
    {{"name": "a", "profile": "sparc-10", "phy": "oc3c"}},
    {{"name": "b", "profile": "sparc-10", "phy": "oc3c"}},
    {{"name": "c", "profile": "sparc-10", "phy": "oc3c"}}
  ],
  "connections": [
    {{"transmitter": "c", "receiver": "b", "mtu": 9180,
     "traffic": {{"type": "full", "blocksize": 8192, "nbytes": 65536}}}},
    {{"transmitter": "a", "receiver": "b", "protocol": "udp", "mtu": 9180,
     "traffic": {traffic}}}
  ]
}}"#
    );
    let path = dir.join("a.pcap").to_str().unwrap().to_string();
    let mut spec = RunSpec::from_json(&text).unwrap();
    spec.cells = Some(CellsSpec {
        place: "adapter:a".into(),
        path: path.clone(),
        slot_us: None,
    });
    spec.run().unwrap();
    let pcap = read_pcap(&std::fs::read(&path).unwrap()).unwrap();
    let mut pdu = Vec::new();
    let mut first = None;
    let mut datagrams = Vec::new();
    for r in &pcap.records {
        let Record::Cell { cell, .. } = r else {
            panic!("a cell record")
        };
        first.get_or_insert(r.time().as_secs_f64());
        pdu.extend_from_slice(&cell[5..]);
        if cell[3] & 0x02 != 0 {
            // AUU: the PDU's last cell.
            let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
            let len = view.payload().len() as u64 - HEADERS;
            datagrams.push((len, first.take().unwrap()));
            pdu.clear();
        }
    }
    datagrams
}

/// The real engine: the agent's source spec for the same connection, as the
/// controller writes it; its blocks due before the end, with their due times (s).
fn real(source: &str) -> Vec<(u64, f64)> {
    let text = format!(
        r#"{{"protocol": "udp", "peer": "127.0.0.1:5001", "duration_s": {DURATION_S},
            "start_at": 0, {source}}}"#
    );
    let spec: SourceSpec = serde_json::from_str(&text).unwrap();
    let mut schedule = spec.schedule();
    let mut blocks = Vec::new();
    loop {
        let b = schedule.next(None);
        let due = b.due.expect("a paced source").as_secs_f64();
        if due >= DURATION_S {
            return blocks;
        }
        blocks.push((b.len as u64, due));
    }
}

#[test]
fn both_engines_draw_the_same_schedule_for_one_seed() {
    let dir = std::env::temp_dir().join(format!("cellbench-traffic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let draws = format!(r#""seed": {SEED}, "replication": {REPLICATION}, "connection": 1"#);
    let cases = [
        // Random rate: sizes and periods drawn, from one stream.
        (
            format!(
                r#"{{"type": "burst", "duration_s": {DURATION_S},
                    "blocksize": {{"uniform": [64, 8000]}},
                    "period_us": {{"uniform": [1500, 4500]}}}}"#
            ),
            format!(
                r#""blocksize": 8000, "random": {{{draws},
                    "blocksize": {{"uniform": [64, 8000]}},
                    "period_us": {{"uniform": [1500, 4500]}}}}"#
            ),
        ),
        // Constant rate with drawn sizes: only sizes come from the stream.
        (
            format!(
                r#"{{"type": "burst", "duration_s": {DURATION_S},
                    "blocksize": {{"uniform": [100, 9000]}}, "period_us": 2500}}"#
            ),
            format!(
                r#""blocksize": 9000, "period_us": 2500, "random": {{{draws},
                    "blocksize": {{"uniform": [100, 9000]}}}}"#
            ),
        ),
    ];
    for (sim_traffic, real_source) in &cases {
        let sim = simulated(sim_traffic, &dir);
        let real = real(real_source);
        assert!(real.len() > 50, "{}", real.len());
        // The simulator writes every block due before the end but one that falls
        // due so late that its write() would start after it.
        assert!(
            sim.len() == real.len() || sim.len() + 1 == real.len(),
            "{} {}",
            sim.len(),
            real.len()
        );
        let sizes = |s: &[(u64, f64)]| s.iter().map(|b| b.0).collect::<Vec<_>>();
        assert_eq!(sizes(&sim), sizes(&real[..sim.len()]), "{sim_traffic}");
        // Drawn sizes, not one size: the stream reached both.
        assert!(sizes(&sim).windows(2).any(|w| w[0] != w[1]));
        // Each datagram's first cell leaves after its block fell due by the
        // write's CPU work (syscall, copy, udp_output: 0.1 to 0.8 ms here, with
        // the copy's share growing with the block), less than the shortest
        // period: a period drawn otherwise in either engine would show.
        for (i, ((_, t), (_, due))) in sim.iter().zip(&real).enumerate() {
            let lag = t - due;
            assert!(
                lag > 0.0 && lag < 1e-3,
                "block {i}: {lag} s after it fell due"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
