//! Ethernet frame links through the run spec: hosts with an Ethernet interface
//! beside their ATM adapter, connections over either, the errors a bad one gets,
//! and the lan-buffers footnote's lock-step (docs/lan-buffers.md).

use cellbench_core::sim::net::ether::Duplex;
use cellbench_core::sim::spec::ether::{parse_phy, NAMED_PHYS};
use cellbench_core::sim::spec::{RunSpec, SpecResult};
use cellbench_core::BitRate;

/// Two SPARCstation IPCs (SunOS 4.1.1) with TAXI and an Ethernet interface
/// each; one TCP connection over `interface`, `nbytes` in 8 KB writes.
fn pair(ethernet: &str, interface: &str, snd: u32, rcv: u32, nbytes: u64) -> String {
    format!(
        r#"{{"hosts": [{{"name": "a", "ethernet": "{ethernet}"}},
                      {{"name": "b", "ethernet": "{ethernet}"}}],
            "connections": [{{"transmitter": "a", "receiver": "b", "interface": "{interface}",
                              "sndbuf": {snd}, "rcvbuf": {rcv},
                              "traffic": {{"type": "full", "nbytes": {nbytes}}}}}]}}"#
    )
}

fn run(json: &str) -> SpecResult {
    RunSpec::from_json(json).unwrap().run().unwrap()
}

#[test]
fn ethernet_phys_parse_with_their_duplex() {
    assert_eq!(
        parse_phy("ethernet10"),
        Ok((BitRate(10_000_000), Duplex::Half))
    );
    assert_eq!(
        parse_phy("ethernet100"),
        Ok((BitRate(100_000_000), Duplex::Full))
    );
    assert_eq!(
        parse_phy("ethernet:2.5"),
        Ok((BitRate(2_500_000), Duplex::Full))
    );
    // Every name the vocabulary gives the experiment language parses.
    for name in NAMED_PHYS {
        assert!(parse_phy(name).is_ok(), "{name}");
    }
    for bad in [
        "ethernet",
        "ethernet:0",
        "ethernet:fast",
        "rate:10",
        "taxi100",
    ] {
        assert!(parse_phy(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_connection_over_ethernet_runs_below_the_medium_rate() {
    let r = run(&pair("ethernet10", "ethernet", 16384, 16384, 1 << 20));
    let c = &r.connections[0];
    assert!(c.completed, "{c:?}");
    // 1460 bytes of data per 1538 byte times of 10 Mb/s: 9.49 Mb/s at most.
    assert!(c.throughput_bps < 9.4928e6, "{}", c.throughput_bps);
    assert!(c.throughput_bps > 8.0e6, "{}", c.throughput_bps);
    assert_eq!(c.limited_by, "link", "{}", c.limit_evidence);
    assert!(
        c.limit_evidence.contains("Ethernet"),
        "{}",
        c.limit_evidence
    );
    // No cell crossed the switch.
    assert!(r.ports.iter().all(|p| p.cells_in == 0));
    // The same hosts over their ATM interface are not held to 10 Mb/s.
    let atm = run(&pair("ethernet10", "atm", 16384, 16384, 1 << 20));
    assert!(atm.connections[0].throughput_bps > 1.3 * c.throughput_bps);
}

#[test]
fn acks_on_a_shared_medium_cost_the_data_time() {
    let half = run(&pair("ethernet10", "ethernet", 16384, 16384, 1 << 20));
    let full = run(&pair("ethernet:10", "ethernet", 16384, 16384, 1 << 20));
    let (h, f) = (
        half.connections[0].throughput_bps,
        full.connections[0].throughput_bps,
    );
    assert!(h < f, "half {h} full {f}");
}

#[test]
fn bad_ethernet_specs_name_the_value() {
    let e = |json: &str| {
        RunSpec::from_json(json)
            .unwrap()
            .run()
            .unwrap_err()
            .to_string()
    };
    let msg = e(&pair("ethernet7", "ethernet", 4096, 4096, 1000));
    assert!(
        msg.contains("\"ethernet7\"") && msg.contains("ethernet10"),
        "{msg}"
    );
    let msg = e(&pair("ethernet10", "token-ring", 4096, 4096, 1000));
    assert!(
        msg.contains("\"token-ring\"") && msg.contains("atm, ethernet"),
        "{msg}"
    );
    let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000)
        .replace("\"interface\"", "\"mtu\": 9188, \"interface\""));
    assert!(msg.contains("MTU 9188") && msg.contains("1500"), "{msg}");
    let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000).replace(
        "{\"name\": \"b\", \"ethernet\": \"ethernet10\"}",
        "{\"name\": \"b\"}",
    ));
    assert!(msg.contains("\"b\" has no Ethernet interface"), "{msg}");
    let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000).replace(
        "{\"name\": \"b\", \"ethernet\": \"ethernet10\"}",
        "{\"name\": \"b\", \"ethernet\": \"ethernet100\"}",
    ));
    assert!(msg.contains("one segment per site"), "{msg}");
}

#[test]
fn the_footnote_locks_3k_send_6k_receive_and_neither_equal_pair() {
    // MSS 1460: a 3K send buffer holds 2 segments + 152 bytes; a 6K receive
    // buffer makes half the largest window 3K, more than that remainder.
    let mbps = |snd, rcv| {
        let r = run(&pair("ethernet10", "ethernet", snd, rcv, 1 << 20));
        let c = r.connections[0].clone();
        (c.throughput_bps / 1e6, c.lockstep, c.limited_by)
    };
    let locked = mbps(3072, 6144);
    assert!(locked.1 && locked.0 < 0.2, "{locked:?}");
    assert_eq!(locked.2, "lockstep");
    for (snd, rcv) in [(3072, 3072), (6144, 6144)] {
        let flowed = mbps(snd, rcv);
        assert!(
            !flowed.1 && flowed.0 > 20.0 * locked.0,
            "{snd}/{rcv}: {flowed:?}"
        );
    }
}
