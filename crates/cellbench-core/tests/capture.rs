//! The cell tester (`sim::capture`): both fidelities write the same file at
//! every place, the file holds what the network's counters say left there, and
//! a tester changes nothing of the run.

use cellbench_core::sim::spec::{CellsSpec, RunSpec};
use cellbench_core::wire::aal5::CpcsPdu;
use cellbench_core::wire::pcap::{read_pcap, Record};

/// Two OC-3c senders into one TAXI receiver through one 256-cell port: the port
/// where the rates meet has two inputs and loses cells.
const MISMATCH: &str = r#"{
  "hosts": [
    {"name": "a", "profile": "sparc-10", "phy": "oc3c", "flavour": "reno"},
    {"name": "b", "profile": "sparc-10", "phy": "oc3c", "flavour": "reno"},
    {"name": "c", "profile": "sparc-10", "phy": "taxi100", "flavour": "reno"}
  ],
  "connections": [
    {"transmitter": "a", "receiver": "c", "mtu": 9180, "sndbuf": 52428, "rcvbuf": 52428,
     "traffic": {"type": "full", "blocksize": 8192, "nbytes": 262144}},
    {"transmitter": "b", "receiver": "c", "mtu": 9180, "sndbuf": 52428, "rcvbuf": 52428,
     "traffic": {"type": "full", "blocksize": 8192, "nbytes": 262144}}
  ]
}"#;

/// The policed VP of europe-vp, unspaced: the UPC discards cells.
const POLICED: &str = r#"{
  "hosts": [
    {"name": "sparc10-a", "profile": "sparc-10", "phy": "oc3c", "site": "lan-a"},
    {"name": "sparc10-b", "profile": "sparc-10", "phy": "taxi100", "site": "lan-b"}
  ],
  "trunks": [
    {"phy": "e3", "from": "lan-a", "to": "public", "delay_ms": 0.05},
    {"phy": "e3", "from": "public", "to": "lan-b", "delay_ms": 3.95,
     "upc": {"t_us": 16.39, "tau_us": 101.0, "action": "discard"}}
  ],
  "connections": [
    {"transmitter": "sparc10-a", "receiver": "sparc10-b", "mtu": 9188, "encap": "vc-mux",
     "sndbuf": 49152, "rcvbuf": 49152,
     "traffic": {"type": "full", "blocksize": 8192, "duration_s": 2}}
  ]
}"#;

fn run(text: &str, per_cell: bool, place: Option<&str>, path: &str) -> serde_json::Value {
    run_until(text, None, per_cell, place, path)
}

/// `limit_s`: the run's time limit, to end it with cells on the way.
fn run_until(
    text: &str,
    limit_s: Option<f64>,
    per_cell: bool,
    place: Option<&str>,
    path: &str,
) -> serde_json::Value {
    let mut spec = RunSpec::from_json(text).unwrap();
    if let Some(t) = limit_s {
        spec.time_limit_s = t;
    }
    spec.per_cell = per_cell;
    spec.cells = place.map(|p| CellsSpec {
        place: p.to_string(),
        path: path.to_string(),
        slot_us: None,
    });
    serde_json::to_value(spec.run().unwrap()).unwrap()
}

#[test]
fn both_fidelities_write_the_same_capture_at_every_place() {
    let dir = std::env::temp_dir().join(format!("cellbench-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The cut run ends by its time limit 1 ns after the 5000th cell to c
    // started, with cells queued and on every link: the capture holds those
    // that started by then, whichever fidelity decided them when.
    let full = dir.join("full.pcap").to_str().unwrap().to_string();
    run(MISMATCH, false, Some("c"), &full);
    let pcap = read_pcap(&std::fs::read(&full).unwrap()).unwrap();
    let cut = pcap.records[5000].time().as_secs_f64() + 1e-9;
    let cases = [
        ("mismatch", MISMATCH, None),
        ("cut", MISMATCH, Some(cut)),
        ("policed", POLICED, None),
    ];
    for (name, text, limit) in cases {
        let spec = RunSpec::from_json(text).unwrap();
        let plain = run_until(text, limit, false, None, "");
        for place in spec.tester_places() {
            let mut files = Vec::new();
            for per_cell in [false, true] {
                let path = dir.join(format!(
                    "{name}-{}-{per_cell}.pcap",
                    place.replace(['>', ' ', ':'], "_")
                ));
                let path = path.to_str().unwrap().to_string();
                let out = run_until(text, limit, per_cell, Some(&place), &path);
                let cells = out["cells"].clone();
                assert!(
                    cells["cells"].as_u64().unwrap() > 0,
                    "{name} {place}: {cells}"
                );
                // A tester changes nothing of the run.
                let mut without = out.clone();
                without.as_object_mut().unwrap().remove("cells");
                if !per_cell {
                    assert_eq!(without, plain, "{name} {place}");
                }
                let bytes = std::fs::read(&path).unwrap();
                let pcap = read_pcap(&bytes).unwrap();
                assert_eq!(pcap.records.len() as u64, cells["cells"].as_u64().unwrap());
                let times: Vec<_> = pcap.records.iter().map(Record::time).collect();
                assert!(
                    times.windows(2).all(|w| w[0] < w[1]),
                    "{name} {place}: time order"
                );
                let sidecar: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(format!("{path}.json")).unwrap())
                        .unwrap();
                assert_eq!(sidecar["place"], place.as_str());
                assert_eq!(sidecar["cell_time_ps"], cells["cell_time_ps"]);
                // Cells start at least one cell time apart on their link.
                let c = cells["cell_time_ps"].as_u64().unwrap();
                assert!(times
                    .windows(2)
                    .all(|w| w[1].as_ps() - w[0].as_ps() + 1_000 >= c));
                files.push(bytes);
            }
            assert!(
                files[0] == files[1],
                "{name} {place}: Train and PerCell captures differ"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_adapters_cells_reassemble_into_numbered_pdus() {
    let dir = std::env::temp_dir().join(format!("cellbench-capture-pdus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.pcap").to_str().unwrap().to_string();
    let out = run(MISMATCH, false, Some("adapter:a"), &path);
    let pcap = read_pcap(&std::fs::read(&path).unwrap()).unwrap();
    let mut pdu = Vec::new();
    let mut numbers = Vec::new();
    for r in &pcap.records {
        let Record::Cell { cell, .. } = r else {
            panic!("a cell record")
        };
        pdu.extend_from_slice(&cell[5..]);
        if cell[3] & 0x02 != 0 {
            // AUU: the PDU's last cell.
            let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
            view.check_crc().unwrap();
            numbers.push(u64::from_be_bytes(view.payload()[..8].try_into().unwrap()));
            pdu.clear();
        }
    }
    assert!(pdu.is_empty());
    assert_eq!(numbers.len() as u64, out["cells"]["pdus"].as_u64().unwrap());
    // The adapter's PDUs, numbered in the run's order: increasing.
    assert!(numbers.windows(2).all(|w| w[0] < w[1]));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_place_names_every_good_one() {
    let spec = RunSpec::from_json(POLICED).unwrap();
    let e = spec.tester_place("nowhere").unwrap_err().to_string();
    assert!(e.contains("sparc10-b"), "{e}");
    assert!(e.contains("trunk public->lan-b"), "{e}");
    assert!(e.contains("adapter:sparc10-a"), "{e}");
}
