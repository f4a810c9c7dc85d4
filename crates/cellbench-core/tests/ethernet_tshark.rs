//! Real tshark reads the Ethernet pcap files cellbench writes: addresses, type,
//! the IPv4/UDP datagram inside, the pad, and the FCS (which tshark verifies
//! itself). tshark is a requirement of the test suite (scripts/test.sh installs
//! Debian's tshark), so a missing tshark fails rather than skips.

use cellbench_core::time::SimTime;
use cellbench_core::wire::ethernet::{self, Address, Repr, ETHERTYPE_IPV4};
use cellbench_core::wire::pcap::{PcapLink, PcapWriter};
use std::process::Command;

const SRC: [u8; 4] = [10, 1, 2, 3];
const DST: [u8; 4] = [192, 168, 40, 7];
const SPORT: u16 = 40000;
const DPORT: u16 = 5001;

/// The Internet checksum (RFC 1071), the simulator's own.
fn checksum(data: &[u8]) -> u16 {
    cellbench_core::sim::net::ether::internet_checksum(data)
}

/// A valid IPv4/UDP datagram carrying `data`, both checksums right.
fn ipv4_udp(data: &[u8]) -> Vec<u8> {
    let udp_len = (8 + data.len()) as u16;
    let mut udp = Vec::new();
    udp.extend_from_slice(&SPORT.to_be_bytes());
    udp.extend_from_slice(&DPORT.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(data);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&SRC);
    pseudo.extend_from_slice(&DST);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&udp_len.to_be_bytes());
    pseudo.extend_from_slice(&udp);
    let ck = checksum(&pseudo);
    udp[6..8].copy_from_slice(&ck.to_be_bytes());
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&(20 + udp_len).to_be_bytes());
    ip.extend_from_slice(&[0x12, 0x34, 0, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&SRC);
    ip.extend_from_slice(&DST);
    let ck = checksum(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    ip.extend_from_slice(&udp);
    ip
}

#[test]
fn tshark_decodes_ethernet_frames() {
    // A short datagram (padded to the 64-byte minimum) and a full 1500-byte one.
    let short = b"hi".to_vec();
    let long = vec![0x5a; ethernet::MTU - 28];
    let repr = Repr {
        src_addr: Address([0x08, 0x00, 0x20, 0x01, 0x02, 0x03]),
        dst_addr: Address([0x08, 0x00, 0x20, 0x0a, 0x0b, 0x0c]),
        ethertype: ETHERTYPE_IPV4,
    };
    let frames: Vec<Vec<u8>> = [&short, &long]
        .iter()
        .map(|d| ethernet::build_frame(&repr, &ipv4_udp(d)).unwrap())
        .collect();
    assert_eq!(frames[0].len(), ethernet::MIN_FRAME_LEN);
    assert_eq!(frames[1].len(), ethernet::MAX_FRAME_LEN);

    let path = std::env::temp_dir().join(format!("cellbench-eth-{}.pcap", std::process::id()));
    let mut w = PcapWriter::new(Vec::new(), PcapLink::Ethernet).unwrap();
    // Back to back at 10 Mb/s: the second starts one wire time (preamble to gap) later.
    let t1 = SimTime::from_ns(ethernet::wire_bits(short.len() + 28) * 100);
    w.write_frame(SimTime::ZERO, &frames[0]).unwrap();
    w.write_frame(t1, &frames[1]).unwrap();
    std::fs::write(&path, w.into_inner()).unwrap();

    let fields = [
        "eth.src",
        "eth.dst",
        "eth.type",
        "eth.fcs",
        "eth.fcs.status",
        "eth.padding",
        "ip.src",
        "ip.dst",
        "udp.srcport",
        "udp.dstport",
        // The UDP payload as bytes: a 2-byte payload on port 5001 tempts a
        // heuristic dissector (CPFI), so not data.data.
        "udp.payload",
        "frame.time_relative",
        "frame.protocols",
    ];
    let mut cmd = Command::new("tshark");
    cmd.args([
        "-r",
        path.to_str().unwrap(),
        "-o",
        "eth.check_fcs:TRUE",
        "-T",
        "fields",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd
        .output()
        .expect("tshark not found: install Debian's tshark (scripts/test.sh does)");
    if std::env::var_os("KEEP_PCAP").is_none() {
        std::fs::remove_file(&path).unwrap();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (row, (frame, data)) in rows.iter().zip(frames.iter().zip([&short, &long])) {
        assert_eq!(row[0], "08:00:20:01:02:03");
        assert_eq!(row[1], "08:00:20:0a:0b:0c");
        assert_eq!(row[2], "0x0800");
        // tshark shows the FCS field as its 4 bytes in order (so the CRC value,
        // sent least significant byte first, appears byte-swapped), and finds
        // it good by its own computation (status 1).
        let n = frame.len();
        let fcs = ethernet::fcs(&frame[..n - 4]);
        assert_eq!(row[3], format!("{:#010x}", fcs.swap_bytes()));
        assert_eq!(row[4], "1", "FCS status: {row:?}");
        assert_eq!((row[6], row[7]), ("10.1.2.3", "192.168.40.7"));
        assert_eq!((row[8], row[9]), ("40000", "5001"));
        assert_eq!(row[10].replace(':', ""), hex(data));
        assert!(row[12].starts_with("eth:ethertype:ip:udp"), "{row:?}");
    }
    // 2 + 28 = 30 bytes of datagram in 46: 16 bytes of pad, zeros; none in the full frame.
    assert_eq!(rows[0][5].replace(':', ""), "00".repeat(16));
    assert_eq!(rows[1][5], "");
    // 84 byte times at 10 Mb/s = 67.2 µs.
    assert_eq!(rows[1][11], "0.000067200");
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The simulator's own frames: a framed circuit each way on a shared 10 Mb/s
/// segment, data one way and a short datagram back, tapped on the segment and
/// written with the pcap writer's `write_frame`; tshark decodes every frame as
/// Ethernet II carrying IPv4 with a good FCS, at the times the medium gave them.
#[test]
fn tshark_decodes_the_simulators_frames() {
    use cellbench_core::sim::net::ether::{
        simulated_frame, wire_time, Duplex, FrameRecord, FramedCircuit, SegmentSpec,
    };
    use cellbench_core::sim::net::{
        AdapterSpec, CircuitSpec, Fidelity, Network, Topology, TxSpacing,
    };
    use cellbench_core::BitRate;

    let adapter = AdapterSpec {
        rate: BitRate(100_000_000),
        delay: SimTime::ZERO,
        tx: TxSpacing::None,
        pdu_gap: SimTime::ZERO,
        tx_queue_pdus: 50,
    };
    let circuit = |src, dst, vci| CircuitSpec {
        src,
        dst,
        vpi: 0,
        vci,
        hops: vec![],
    };
    let ten = BitRate(10_000_000);
    let topo = Topology {
        adapters: vec![adapter; 2],
        circuits: vec![circuit(0, 1, 100), circuit(1, 0, 101)],
        segments: vec![SegmentSpec {
            rate: ten,
            delay: SimTime::from_ns(200),
            duplex: Duplex::Half,
            stations: vec![0, 1],
            tx_queue_frames: 50,
        }],
        framed: vec![
            FramedCircuit {
                circuit: 0,
                segment: 0,
            },
            FramedCircuit {
                circuit: 1,
                segment: 0,
            },
        ],
        ..Default::default()
    };
    let mut net = Network::new(topo, Fidelity::Train).unwrap();
    net.set_segment_tap(0);
    // Two full datagrams from host 0, and host 1's 40-byte datagram handed over
    // while the first is on the medium: with no collision model the medium takes
    // frames in the order they were handed over, so it follows both.
    assert!(net.send(SimTime::ZERO, 0, 1500, 1));
    assert!(net.send(SimTime::ZERO, 0, 1500, 2));
    assert!(net.send(SimTime::from_us(100), 1, 40, 3));
    let mut delivered = Vec::new();
    net.poll(SimTime::from_secs(1), &mut delivered);
    assert_eq!(delivered.len(), 3);
    let mut log: Vec<FrameRecord> = Vec::new();
    net.drain_frame_log(&mut log);
    let starts: Vec<SimTime> = log.iter().map(|r| r.at).collect();
    let full = wire_time(ten, 1500);
    assert_eq!(starts, vec![SimTime::ZERO, full, full + full]);
    log.sort_by_key(|r| r.at);
    let c = net.segment_counters(0);
    assert_eq!((c.frames, c.bytes, c.deferred), (3, 2 * 1518 + 64, 2));

    let path = std::env::temp_dir().join(format!("cellbench-simeth-{}.pcap", std::process::id()));
    let mut w = PcapWriter::new(Vec::new(), PcapLink::Ethernet).unwrap();
    for r in &log {
        w.write_frame(r.at, &simulated_frame(r).unwrap()).unwrap();
    }
    std::fs::write(&path, w.into_inner()).unwrap();
    let out = Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "-o",
            "eth.check_fcs:TRUE",
            "-T",
            "fields",
        ])
        .args([
            "-e",
            "eth.src",
            "-e",
            "eth.dst",
            "-e",
            "eth.fcs.status",
            "-e",
            "ip.src",
        ])
        .args([
            "-e",
            "ip.dst",
            "-e",
            "ip.len",
            "-e",
            "ip.checksum.status",
            "-e",
            "frame.len",
        ])
        .args(["-e", "frame.time_relative", "-o", "ip.check_checksum:TRUE"])
        .output()
        .expect("tshark not found: install Debian's tshark (scripts/test.sh does)");
    if std::env::var_os("KEEP_PCAP").is_none() {
        std::fs::remove_file(&path).unwrap();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let a = (
        "02:00:00:00:00:00",
        "02:00:00:00:00:01",
        "10.0.0.1",
        "10.0.0.2",
        "1500",
        "1518",
    );
    let b = (
        "02:00:00:00:00:01",
        "02:00:00:00:00:00",
        "10.0.0.2",
        "10.0.0.1",
        "40",
        "64",
    );
    let want = [a, a, b];
    assert_eq!(rows.len(), 3, "{text}");
    for (row, w) in rows.iter().zip(want) {
        assert_eq!((row[0], row[1]), (w.0, w.1), "{row:?}");
        assert_eq!(row[2], "1", "FCS status: {row:?}");
        assert_eq!((row[3], row[4], row[5]), (w.2, w.3, w.4), "{row:?}");
        assert_eq!(
            row[6], "1",
            "IPv4 header checksum status (1: good, as the FCS's): {row:?}"
        );
        assert_eq!(row[7], w.5, "{row:?}");
    }
    // Each frame starts when the one before and its gap are done: 1230.4 µs apart.
    assert!(rows[1][8].starts_with("0.0012304"), "{:?}", rows[1]);
    assert!(rows[2][8].starts_with("0.0024608"), "{:?}", rows[2]);
}
