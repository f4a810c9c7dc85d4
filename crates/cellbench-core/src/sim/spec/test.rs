//! The run spec end to end: specs read from JSON, checked, built and run.

use super::*;
use crate::sim::explain::Facts;
use crate::sim::testbeds::LanBuffers;
use crate::sim::world::{run, KeyPath};

const TWO_HOSTS: &str = r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [
    {"transmitter": "a", "receiver": "b", "traffic": {"type": "full", "nbytes": 1048576}}]}"#;

#[test]
fn a_star_spec_runs_like_the_lan_testbed() {
    let r = RunSpec::from_json(TWO_HOSTS).unwrap().run().unwrap();
    let c = &r.connections[0];
    assert!(c.completed && c.bytes == 1 << 20 && c.throughput_mbit_ttcp > 10.0);
    // Data cells went out of port 1 (to b), ACK cells out of port 0 (to a).
    assert!(r.ports[1].cells_out > 20 * r.ports[0].cells_out);
}

#[test]
fn paced_sources_send_one_block_per_period() {
    let paced = |kind: &str| {
        let traffic = format!(
            r#"{{"type": "{kind}", "blocksize": 8192, "period_us": 10000, "duration_s": 2}}"#
        );
        let text = TWO_HOSTS.replace(r#"{"type": "full", "nbytes": 1048576}"#, &traffic);
        RunSpec::from_json(&text)
            .unwrap()
            .run()
            .unwrap()
            .connections[0]
            .clone()
    };
    // burstq: every block that falls due is written: one at the start and one
    // every 10 ms of the 2 s (the clock starts at the first write).
    let q = paced("burstq");
    assert_eq!(q.writes, 201);
    assert_eq!(q.bytes, q.writes * 8192);
    // burst skips blocks that fall due while the writer is blocked: slow start
    // with a delayed first ACK fills the 52428-byte buffer in the first 80 ms.
    let b = paced("burst");
    assert!(b.writes < q.writes && b.writes > 190, "{}", b.writes);
}

#[test]
fn random_rate_traffic_draws_sizes_and_gaps_from_its_laws() {
    let traffic = r#"{"type": "burstq", "blocksize": {"uniform": [1024, 7168]},
        "period_us": {"exponential": 10000}, "duration_s": 20}"#;
    let text = TWO_HOSTS.replace(r#"{"type": "full", "nbytes": 1048576}"#, traffic);
    let spec = RunSpec::from_json(&text).unwrap();
    let c = spec.run().unwrap().connections[0].clone();
    // About 20 s / 10 ms = 2000 blocks; the count of a Poisson process has sd ~45.
    assert!((1800..=2200).contains(&c.writes), "{}", c.writes);
    let mean = c.bytes as f64 / c.writes as f64;
    assert!((mean - 4096.0).abs() < 150.0, "{mean}");
    // Same seed, same draws; another replication, other draws.
    assert_eq!(spec.run().unwrap().connections[0].bytes, c.bytes);
    let other = RunSpec {
        replication: 1,
        ..spec.clone()
    };
    assert_ne!(other.run().unwrap().connections[0].bytes, c.bytes);
    // A law that makes no sense is refused.
    let bad = text.replace("[1024, 7168]", "[7168, 1024]");
    let e = RunSpec::from_json(&bad).unwrap().scenario().unwrap_err();
    assert!(
        e.to_string().contains("blocksize uniform(7168, 1024)"),
        "{e}"
    );
    let bad = text.replace(r#"{"exponential": 10000}"#, r#"{"pareto": 3}"#);
    assert!(RunSpec::from_json(&bad).is_err());
}

#[test]
fn udp_loses_datagrams_to_a_slower_receiver_and_none_to_a_faster_one() {
    let udp = |receiver_profile: &str, blocksize: u32| {
        let text = format!(
            r#"{{"hosts": [{{"name": "a"}}, {{"name": "b", "profile": "{receiver_profile}"}}],
            "connections": [{{"transmitter": "a", "receiver": "b", "protocol": "udp",
            "traffic": {{"type": "full", "blocksize": {blocksize}, "nbytes": 2097152}}}}]}}"#
        );
        RunSpec::from_json(&text)
            .unwrap()
            .run()
            .unwrap()
            .connections[0]
            .clone()
    };
    // Receiving costs the IPC more than sending: its socket buffer overflows.
    let slow = udp("sparc-ipc", 8192);
    let (sent, got, dropped) = (
        slow.datagrams_sent.unwrap(),
        slow.datagrams_received.unwrap(),
        slow.datagrams_dropped_no_buffer.unwrap(),
    );
    assert_eq!(sent, 256);
    assert!(
        dropped > 0 && got + dropped == sent,
        "{got} + {dropped} != {sent}"
    );
    assert_eq!(slow.bytes_received, got * 8192);
    // A SPARCstation 10 keeps up with an IPC.
    let fast = udp("sparc-10", 8192);
    assert_eq!(fast.datagrams_received, Some(256));
    // 20000-byte datagrams leave as three IP fragments (three PDUs) each.
    let frag = udp("sparc-10", 20_000);
    assert_eq!(frag.datagrams_received, frag.datagrams_sent);
}

/// One-MSS streams both ways between an IRIX (4.4BSD rules) host and an NT host (or, with
/// `flavour`, the connection's flavour at both ends), each end reading and writing one MSS.
fn bsd_and_nt(flavour: &str) -> SpecResult {
    let conn = |from: &str, to: &str| {
        format!(
            r#"{{"transmitter": "{from}", "receiver": "{to}", {flavour} "mtu": 9188,
            "sndbuf": 9148, "rcvbuf": 9148, "receiver_blocksize": 9148,
            "traffic": {{"type": "full", "blocksize": 9148, "duration_s": 2}}}}"#
        )
    };
    let text = format!(
        r#"{{"hosts": [{{"name": "b", "site": "east", "phy": "oc3c", "profile": "sparc-20",
                    "flavour": "irix601"}},
                  {{"name": "n", "site": "east", "phy": "oc3c", "profile": "sparc-20",
                    "flavour": "nt351"}}],
        "connections": [{}, {}]}}"#,
        conn("b", "n"),
        conn("n", "b")
    );
    RunSpec::from_json(&text).unwrap().run().unwrap()
}

#[test]
fn each_end_runs_its_own_hosts_tcp() {
    // A one-MSS window: the receiver's window-update rule decides. Into the NT
    // host it waits for NT's 200 ms delayed-ACK timer, whoever sends; into the
    // BSD host (update on half the buffer reopened) it goes at once.
    let r = bsd_and_nt("");
    let (into_nt, into_bsd) = (&r.connections[0], &r.connections[1]);
    let per_tick = 9148.0 * 8.0 / 0.2;
    assert!(into_nt.throughput_bps < 1.3 * per_tick, "{into_nt:?}");
    assert!(into_bsd.throughput_bps > 20.0 * into_nt.throughput_bps);
    assert_eq!(into_nt.limited_by, "lockstep");
    // A connection's flavour still sets both ends: NT's receiving into the IRIX host.
    let both = bsd_and_nt(r#""flavour": "nt351","#);
    assert!(both.connections[1].throughput_bps < 1.3 * per_tick);
}

/// Host l (local, OC-3c) and host m (remote: west, across a 1 ms OC-3c trunk)
/// send to host r on the local switch (TAXI: the port to r is the bottleneck),
/// each with `protocols`; `switch` is the switch block's JSON.
fn local_and_remote(switch: &str, protocols: [&str; 2], per_cell: bool) -> SpecResult {
    let text = format!(
        r#"{{"switch": {switch}, "per_cell": {per_cell},
        "hosts": [{{"name": "l", "site": "east", "phy": "oc3c", "profile": "alpha-3000",
                    "flavour": "osf1"}},
                  {{"name": "m", "site": "west", "phy": "oc3c", "profile": "alpha-3000",
                    "flavour": "osf1"}},
                  {{"name": "r", "site": "east", "profile": "alpha-3000",
                    "flavour": "osf1"}}],
        "trunks": [{{"from": "west", "to": "east", "delay_ms": 1}}],
        "connections": [
          {{"transmitter": "l", "receiver": "r", "protocol": "{}", "sndbuf": 262144,
            "rcvbuf": 262144, "traffic": {{"type": "full", "duration_s": 0.3}}}},
          {{"transmitter": "m", "receiver": "r", "protocol": "{}", "sndbuf": 262144,
            "rcvbuf": 262144, "traffic": {{"type": "full", "duration_s": 0.3}}}}]}}"#,
        protocols[0], protocols[1]
    );
    RunSpec::from_json(&text).unwrap().run().unwrap()
}

#[test]
fn credits_keep_every_port_from_overflowing() {
    // The 1 ms trunk hop's round trip at the OC-3c cell rate, and then some.
    let credits = r#"{"flow_control": "credit", "credits": 800}"#;
    for protocols in [["tcp", "tcp"], ["udp", "udp"], ["tcp", "udp"]] {
        let without = local_and_remote("{}", protocols, false);
        let lost: u64 = without.ports.iter().map(|p| p.cells_lost).sum();
        assert!(lost > 0, "{protocols:?}: no contention without credits");
        let with = local_and_remote(credits, protocols, false);
        for p in &with.ports {
            assert_eq!(p.cells_lost, 0, "{protocols:?}: {p:?}");
        }
        for c in &with.connections {
            assert_eq!(c.cells_lost, 0, "{protocols:?}: {c:?}");
            assert!(c.bytes_received > 0, "{protocols:?}: {c:?}");
        }
        // Both streams together fill the port to r (TAXI, 100 Mb/s of cells).
        let carried: u64 = with.connections.iter().map(|c| c.bytes_received).sum();
        let cells_per_s = (carried as f64 / 0.3) / 9140.0 * 192.0;
        assert!(
            cells_per_s > 0.7 * 100e6 / 424.0,
            "{protocols:?}: {cells_per_s}"
        );
        // Credit mode is deterministic.
        let again = local_and_remote(credits, protocols, false);
        assert_eq!(
            serde_json::to_string(&with).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
    }
}

#[test]
fn credits_that_never_run_out_change_nothing() {
    // One UDP stream alone, lossless: the credit FIFOs forward every cell when
    // the per-cell reference does.
    let one = |switch: &str| {
        let text = format!(
            r#"{{"switch": {switch}, "per_cell": true,
            "hosts": [{{"name": "m", "site": "west", "phy": "oc3c", "profile": "alpha-3000"}},
                      {{"name": "r", "site": "east", "phy": "oc3c", "profile": "alpha-3000"}}],
            "trunks": [{{"from": "west", "to": "east", "delay_ms": 1}}],
            "connections": [{{"transmitter": "m", "receiver": "r", "protocol": "tcp",
              "traffic": {{"type": "full", "nbytes": 1048576}}}}]}}"#
        );
        RunSpec::from_json(&text).unwrap().run().unwrap()
    };
    let plain = one("{}");
    let credited = one(r#"{"flow_control": "credit", "credits": 100000}"#);
    let (a, b) = (&plain.connections[0], &credited.connections[0]);
    assert_eq!(a.throughput_bps, b.throughput_bps);
    assert_eq!(a.bytes_received, b.bytes_received);
    assert_eq!(a.end_s, b.end_s);
}

#[test]
fn a_burst_of_blocks_is_written_back_to_back_every_period() {
    let run = |blocks: u32| {
        let text = format!(
            r#"{{"hosts": [{{"name": "a", "phy": "oc3c", "profile": "alpha-3000"}},
                      {{"name": "b", "phy": "oc3c", "profile": "alpha-3000"}}],
            "connections": [{{"transmitter": "a", "receiver": "b", "protocol": "udp",
              "traffic": {{"type": "burstq", "blocksize": 8192, "period_us": 10000,
                           "duration_s": 0.1, "blocks": {blocks}}}}}]}}"#
        );
        RunSpec::from_json(&text)
            .unwrap()
            .run()
            .unwrap()
            .connections[0]
            .clone()
    };
    let (one, four) = (run(1), run(4));
    assert_eq!(
        four.datagrams_sent.unwrap(),
        4 * one.datagrams_sent.unwrap()
    );
    assert_eq!(four.datagrams_received, four.datagrams_sent);
    let e = RunSpec::from_json(
        r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [{"transmitter": "a",
        "receiver": "b", "traffic": {"type": "burst", "blocksize": 8192,
        "period_us": 10000, "duration_s": 1, "blocks": 0}}]}"#,
    )
    .unwrap()
    .scenario()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("blocks 0: blocks per period must be 1 to 1000000"),
        "{e}"
    );
}

#[test]
fn credits_without_flow_control_are_refused() {
    let spec = |switch: &str| {
        RunSpec::from_json(&format!(
            r#"{{"switch": {switch}, "hosts": [{{"name": "a"}}, {{"name": "b"}}],
            "connections": [{{"transmitter": "a", "receiver": "b",
              "traffic": {{"type": "full", "nbytes": 1000}}}}]}}"#
        ))
        .unwrap()
        .scenario()
    };
    let e = spec(r#"{"credits": 8}"#).unwrap_err().to_string();
    assert!(
        e.contains("credits 8: credits need flow_control = credit"),
        "{e}"
    );
    let e = spec(r#"{"flow_control": "credit"}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected credits >= 1"), "{e}");
    let e = spec(r#"{"flow_control": "xon"}"#).unwrap_err().to_string();
    assert!(e.contains("expected none or credit"), "{e}");
    assert!(spec(r#"{"flow_control": "credit", "credits": 8}"#).is_ok());
    let e = RunSpec::from_json(
        r#"{"sites": {"nowhere": {"buffer_cells": 8}}, "hosts": [{"name": "a"},
        {"name": "b"}], "connections": [{"transmitter": "a", "receiver": "b",
        "traffic": {"type": "full", "nbytes": 1000}}]}"#,
    )
    .unwrap()
    .scenario()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("switch nowhere: no host or trunk is at site"),
        "{e}"
    );
}

/// Host a (west, OC-3c) and host b (east, OC-3c, paced at 60 Mb/s) blast
/// UDP at host r (east, TAXI); the trunk west -> east polices VP 0 at one
/// cell per 21.2 µs (20 Mb/s) and tags the excess. The port to r carries
/// 100 Mb/s; the CLP = 0 load is 80 Mb/s.
fn tagged_and_clean(clp1: Option<u32>, per_cell: bool) -> SpecResult {
    let switch = match clp1 {
        Some(t) => format!(r#"{{"clp1_threshold_cells": {t}}}"#),
        None => "{}".into(),
    };
    let text = format!(
        r#"{{"switch": {switch}, "per_cell": {per_cell},
        "hosts": [{{"name": "a", "site": "west", "phy": "oc3c", "profile": "alpha-3000"}},
                  {{"name": "b", "site": "east", "phy": "oc3c", "profile": "alpha-3000"}},
                  {{"name": "r", "site": "east", "profile": "alpha-3000"}}],
        "trunks": [{{"from": "west", "to": "east", "delay_ms": 0.1,
                     "upc": {{"t_us": 21.2, "tau_us": 0, "action": "tag"}}}}],
        "connections": [
          {{"transmitter": "a", "receiver": "r", "protocol": "udp",
            "traffic": {{"type": "full", "nbytes": 4194304}}}},
          {{"transmitter": "b", "receiver": "r", "protocol": "udp", "pacing_mbps": 60,
            "traffic": {{"type": "full", "nbytes": 4194304}}}}]}}"#
    );
    RunSpec::from_json(&text).unwrap().run().unwrap()
}

#[test]
fn a_clp1_threshold_sacrifices_tagged_cells_to_spare_conforming_ones() {
    let without = tagged_and_clean(None, false);
    let (a, b) = (&without.connections[0], &without.connections[1]);
    assert!(a.cells_tagged > 0 && a.cells_lost > 0, "{a:?}");
    assert!(b.cells_lost > 0 && b.cells_tagged == 0, "{b:?}");
    assert_eq!(a.cells_lost_clp + b.cells_lost_clp, 0);

    let with = tagged_and_clean(Some(64), false);
    let (a, b) = (&with.connections[0], &with.connections[1]);
    assert_eq!(b.cells_lost, 0, "{b:?}");
    // (The 60 Mb/s pacing holds b's datagrams back: its interface queue
    // drops the excess before the network sees it.)
    assert_eq!(b.data_pdus_lost, 0);
    assert_eq!(b.datagrams_received, Some(b.data_pdus_sent));
    assert!(
        a.cells_lost_clp > 0 && a.cells_lost_clp == a.cells_lost,
        "{a:?}"
    );
    let to_r = &with.ports[2];
    assert_eq!(to_r.host, "r");
    assert_eq!(to_r.cells_lost_clp, to_r.cells_lost);
    assert!(to_r.peak_occupancy < 256, "{to_r:?}");
    // The tags are counted where the UPC is: the trunk port west -> east.
    let trunk = with.ports.iter().find(|p| p.host == "trunk west->east");
    assert_eq!(trunk.map(|p| p.cells_tagged), Some(a.cells_tagged));
    // The per-cell reference agrees on every count.
    let reference = tagged_and_clean(Some(64), true);
    let json = |r: &SpecResult| serde_json::to_string(&(&r.connections, &r.ports)).unwrap();
    assert_eq!(json(&reference), json(&with));
}

#[test]
fn a_clp1_threshold_outside_the_buffer_is_refused() {
    for (bad, buffer) in [(0, 256), (257, 256), (101, 100)] {
        let text = TWO_HOSTS.replace(
            r#"{"hosts""#,
            &format!(
                r#"{{"switch": {{"buffer_cells": {buffer}, "clp1_threshold_cells": {bad}}}, "hosts""#
            ),
        );
        let e = RunSpec::from_json(&text).unwrap().scenario().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("switch clp1_threshold_cells {bad}: must be 1 to buffer_cells ({buffer})")
        );
    }
    let ok = TWO_HOSTS.replace(
        r#"{"hosts""#,
        r#"{"switch": {"clp1_threshold_cells": 256}, "hosts""#,
    );
    let r = RunSpec::from_json(&ok).unwrap().run().unwrap();
    assert!(r.connections[0].completed);
}

#[test]
fn constructors_give_what_json_defaults_give() {
    // One set of defaults: the presets' constructors and a spec's omitted keys.
    let text = r#"{"hosts": [{"name": "a"}, {"name": "b"}], "connections": [
        {"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}]}"#;
    let traffic = Traffic::Full {
        blocksize: default_block(),
        nbytes: None,
        duration_s: None,
    };
    let built = RunSpec::new(
        vec![HostSpec::named("a"), HostSpec::named("b")],
        vec![ConnSpec::new("a", "b", traffic)],
    );
    let parsed = RunSpec::from_json(text).unwrap();
    assert_eq!(format!("{built:?}"), format!("{parsed:?}"));
}

#[test]
fn a_spec_reads_back_from_its_json() {
    let spec = LanBuffers {
        sndbuf: 20_480,
        nodelay: true,
        ..LanBuffers::default()
    }
    .spec(3, 2, true);
    let text = serde_json::to_string(&spec).unwrap();
    let back = RunSpec::from_json(&text).unwrap();
    assert_eq!(format!("{spec:?}"), format!("{back:?}"));
    assert!(text.contains(r#""sndbuf":20480"#), "{text}");
}

#[test]
fn a_trace_carries_the_lockstep_cycle() {
    // 16K send, 24K receive: 8 KB released per 200 ms timer tick.
    let study = LanBuffers {
        sndbuf: 16_384,
        rcvbuf: 24_576,
        nbytes: 2 << 20,
        ..LanBuffers::default()
    };
    let traced = study.spec(1, 0, true).run().unwrap().connections[0].clone();
    assert!(traced.lockstep && !traced.trace.is_empty());
    let cycle = traced.lockstep_cycle.clone().expect("a timer-paced cycle");
    assert_eq!(cycle.pattern, ["B 0 [delack-timer]", "A 8192 [idle]"]);
    assert_eq!(cycle.bytes_per_tick, 8192.0);
    assert!((cycle.period_s - 0.2).abs() < 1e-4, "{}", cycle.period_s);
    assert!(cycle.pattern_repeats > 0 && cycle.pattern_repeats < cycle.ticks);
    let json = serde_json::to_string(&traced).unwrap();
    assert!(json.contains(r#""lockstep_cycle":{"ticks":"#), "{json}");
    // The evidence is read from the trace: none without one, nor without a lock-step.
    let untraced = study.spec(1, 0, false).run().unwrap().connections[0].clone();
    assert!(untraced.lockstep && untraced.lockstep_cycle.is_none());
    assert_eq!(untraced.throughput_bps, traced.throughput_bps);
    let free = LanBuffers {
        sndbuf: 52_428,
        ..study
    };
    assert!(free.spec(1, 0, true).run().unwrap().connections[0]
        .lockstep_cycle
        .is_none());
}

#[test]
fn bad_specs_name_the_value() {
    let e = RunSpec::from_json(r#"{"hosts": [], "connections": [], "sed": 1}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `sed`"), "{e}");
    let e = RunSpec::from_json(&TWO_HOSTS.replace("\"b\"}]", "\"b\", \"phy\": \"oc48\"}]"))
        .unwrap()
        .scenario()
        .unwrap_err();
    assert!(e.to_string().contains("oc48"), "{e}");
    let e = RunSpec::from_json(&TWO_HOSTS.replace("\"receiver\": \"b\"", "\"receiver\": \"a\""))
        .unwrap()
        .scenario()
        .unwrap_err();
    assert!(e.to_string().contains("same host"), "{e}");
    // What the simulator itself would refuse is refused with the spec.
    let e = RunSpec::from_json(&TWO_HOSTS.replace("\"traffic\"", "\"sndbuf\": 60000, \"traffic\""))
        .unwrap()
        .scenario()
        .unwrap_err();
    assert!(e.to_string().contains("send buffer 60000"), "{e}");
    let e = RunSpec::from_json(&TWO_HOSTS.replace(
        "{\"hosts\"",
        "{\"switch\": {\"buffer_cells\": 0}, \"hosts\"",
    ))
    .unwrap()
    .scenario()
    .unwrap_err();
    assert!(e.to_string().contains("buffer_cells 0"), "{e}");
}

/// An OC-3c sender 600 km from a TAXI receiver: cells pile up and are lost
/// at the receiver's port (the wan-mismatch setup, case 1, unpaced).
fn mismatch(series: bool, per_cell: bool) -> SpecResult {
    let j = r#"{"hosts": [
        {"name": "alpha1", "site": "west", "profile": "alpha-3000", "phy": "oc3c", "flavour": "osf1"},
        {"name": "sparc10", "site": "east", "profile": "sparc-10", "phy": "taxi100", "flavour": "osf1"}],
      "trunks": [{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": 3.0}],
      "connections": [{"transmitter": "alpha1", "receiver": "sparc10", "encap": "llc-snap",
        "sndbuf": 131072, "rcvbuf": 131072,
        "traffic": {"type": "full", "blocksize": 65536, "duration_s": 2.0}}]}"#;
    let mut spec = RunSpec::from_json(j).unwrap();
    spec.series = series;
    spec.per_cell = per_cell;
    spec.run().unwrap()
}

#[test]
fn a_cwnd_series_shows_slow_start_then_the_loss_halving() {
    let r = mismatch(true, false);
    let c = &r.connections[0];
    assert!(c.cells_lost > 0 && c.retransmitted_segments > 0, "{c:?}");
    let s = c.cwnd_series.as_ref().expect("series on");
    let mss = s[0].1;
    assert!(s.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
    // Slow start: from one segment, one more per ACK (so the window doubles
    // each round trip) while ssthresh stays at its initial, huge value.
    let first_cut = s
        .iter()
        .position(|x| x.2 != s[0].2)
        .expect("a loss cuts ssthresh");
    let slow = &s[..first_cut];
    assert!(s[0].2 > 1 << 20, "initial ssthresh {}", s[0].2);
    assert!(slow
        .windows(2)
        .all(|w| w[1].1 == w[0].1 || w[1].1 == w[0].1 + mss));
    let top = slow.last().unwrap();
    assert!(top.1 >= 8 * mss, "slow start reached {} bytes", top.1);
    // The loss: ssthresh becomes half the window in flight (in whole segments).
    let cut = s[first_cut].2;
    let flight = slow.iter().map(|x| x.3).max().unwrap();
    assert!(
        cut <= flight / 2 && cut + mss > flight / 2,
        "{cut} from {flight}"
    );
    assert!(s[first_cut].1 < top.1, "cwnd falls too");
    // A retransmit timeout later sends cwnd back to one segment.
    assert!(s[first_cut..].iter().any(|x| x.1 == mss));
}

#[test]
fn a_queue_series_peaks_at_the_buffer_and_at_the_peak_counter() {
    let train = mismatch(true, false);
    let cell = mismatch(true, true);
    for r in [&train, &cell] {
        let p = r.ports.iter().find(|p| p.host == "sparc10").unwrap();
        let q = p.queue_series.as_ref().expect("series on");
        assert!(p.cells_lost > 0);
        assert_eq!(p.peak_occupancy, DEFAULT_PORT_BUFFER_CELLS);
        for p in &r.ports {
            let q = p.queue_series.as_ref().unwrap();
            let top = q.iter().map(|x| x.1).max().unwrap_or(0);
            assert_eq!(top, p.peak_occupancy, "port {}", p.host);
            assert!(q.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
        }
        // It empties between bursts.
        assert!(q.iter().any(|x| x.1 == 0));
    }
    // Train samples fewer points, but each of them is a PerCell point.
    for (a, b) in train.ports.iter().zip(&cell.ports) {
        let (qa, qb) = (
            a.queue_series.as_ref().unwrap(),
            b.queue_series.as_ref().unwrap(),
        );
        assert!(qa.len() <= qb.len());
        let mut it = qb.iter();
        for x in qa {
            assert!(
                it.any(|y| y == x),
                "port {}: {x:?} not in the PerCell series",
                a.host
            );
        }
    }
}

#[test]
fn series_change_nothing_else_and_repeat_exactly() {
    let on = mismatch(true, false);
    let off = mismatch(false, false);
    let json = |r: &SpecResult| serde_json::to_string(r).unwrap();
    assert!(!json(&off).contains("series"));
    let mut stripped = on.clone();
    for c in &mut stripped.connections {
        c.cwnd_series = None;
    }
    for p in &mut stripped.ports {
        p.queue_series = None;
    }
    assert_eq!(json(&stripped), json(&off));
    assert_eq!(json(&on), json(&mismatch(true, false)));
    assert!(json(&on).contains("\"cwnd_series\":[["));
    assert!(json(&on).contains("\"queue_series\":[["));
}

/// Three fast hosts sending into c's port: `long` (a -> c, full blast for
/// 6 s) beside the serial pair x then y (b -> c, 8 MB each, y after x);
/// without `long` when `alone`.
fn serial_pair(alone: bool) -> RunSpec {
    let host = |name: &str| HostSpec {
        profile: "ultra-1".into(),
        phy: "oc3c".into(),
        flavour: "reno".into(),
        ..HostSpec::named(name)
    };
    let full = |nbytes, duration_s| Traffic::Full {
        blocksize: Param::Value(8192.0),
        nbytes,
        duration_s,
    };
    // TCP_NODELAY: no delayed-ACK lock-step; the port is what x and y share.
    let pair = ConnSpec {
        nodelay: true,
        ..ConnSpec::new("b", "c", full(Some(8 << 20), None))
    };
    let mut conns = vec![
        pair.clone(),
        ConnSpec {
            after: vec![0],
            ..pair
        },
    ];
    if !alone {
        conns.insert(0, ConnSpec::new("a", "c", full(None, Some(6.0))));
        conns[2].after = vec![1];
    }
    let mut spec = RunSpec::new(vec![host("a"), host("b"), host("c")], conns);
    // Room for both windows: the port shares its rate, losing nothing.
    spec.switch.buffer_cells = 4096;
    spec
}

#[test]
fn a_serial_step_starts_the_instant_its_predecessor_ends_on_the_same_network() {
    let spec = serial_pair(false);
    let r = spec.run().unwrap();
    let [long, x, y] = [0, 1, 2].map(|i| r.connections[i].clone());
    assert!(long.completed && x.completed && y.completed);
    // y starts on the event that ends x, to the picosecond, not at t = 0 ...
    let x_end = x.end_s.unwrap();
    assert_eq!(y.start_s, Some(x_end));
    assert!(x_end > x.start_s.unwrap() && y.end_s.unwrap() > x_end);
    // ... while `long` still runs: they share the port to c.
    assert!(y.start_s.unwrap() < long.end_s.unwrap());
    // The same y on an idle network (what a separate simulation gave) is faster.
    let alone = serial_pair(true).run().unwrap();
    assert_eq!(alone.connections[1].start_s, alone.connections[0].end_s);
    let idle = alone.connections[1].throughput_bps;
    assert!(
        y.throughput_bps < 0.8 * idle,
        "y beside long {} b/s, alone {idle} b/s",
        y.throughput_bps
    );
    // One timeline, still deterministic.
    let json = |r: &SpecResult| serde_json::to_string(r).unwrap();
    assert_eq!(json(&spec.run().unwrap()), json(&r));
}

#[test]
fn only_connections_running_at_the_same_time_share_a_port() {
    let shared = |spec: &RunSpec, i: usize| {
        let scenario = spec.scenario().unwrap();
        let r = run(&scenario).unwrap();
        let f = Facts::gather(&scenario, &r, i, &|p| format!("port {p}"));
        f.shared.expect("a path with a port").connections
    };
    // x has ended when y starts: y has the port to itself ...
    let alone = serial_pair(true);
    assert_eq!((shared(&alone, 0), shared(&alone, 1)), (1, 1));
    // ... but shares it with `long`, which runs throughout, as x does.
    let beside = serial_pair(false);
    assert_eq!(
        (shared(&beside, 0), shared(&beside, 1), shared(&beside, 2)),
        (3, 2, 2)
    );
}

#[test]
fn a_connection_waits_only_for_earlier_ones() {
    let mut spec = serial_pair(true);
    spec.connections[0].after = vec![1];
    let e = spec.scenario().unwrap_err();
    assert_eq!(
        e.to_string(),
        "transfer 0: starts after transfer 1, which is not an earlier transfer: \
         a transfer waits only for ones before it"
    );
    // A transfer whose predecessor never ends never starts.
    let mut spec = serial_pair(true);
    spec.time_limit_s = 0.01;
    let r = spec.run().unwrap();
    assert_eq!(r.connections[1].start_s, None);
    assert!(!r.connections[1].completed);
}

/// A 2 s netperf-like stream over OC-3c (Fore IP) between two hosts of `profile` with
/// `flavour`, socket buffers of 7 MSS (SunOS 4.1.3: its largest, 52428) and
/// `message`-byte writes; `extra` is more of the hosts' JSON.
fn host_pair(profile: &str, flavour: &str, message: u32, extra: &str) -> ConnResult {
    let host = |name: &str| {
        format!(
            r#"{{"name": "{name}", "phy": "oc3c", "profile": "{profile}", "flavour": "{flavour}" {extra}}}"#
        )
    };
    let buf = if flavour == "sunos413" { 52428 } else { 64036 };
    let text = format!(
        r#"{{"hosts": [{}, {}], "connections": [{{"transmitter": "a", "receiver": "b",
        "mtu": 9188, "sndbuf": {buf}, "rcvbuf": {buf},
        "traffic": {{"type": "full", "blocksize": {message}, "duration_s": 2}}}}]}}"#,
        host("a"),
        host("b")
    );
    RunSpec::from_json(&text)
        .unwrap()
        .run()
        .unwrap()
        .connections[0]
        .clone()
}

#[test]
fn the_sparc_20s_driver_caps_its_pair_below_the_link() {
    // 001 §5.1: the SPARCstation 20s stop at the driver's limit. 52 µs after each
    // 192-cell PDU of 9148 bytes (cells at 149.76 Mb/s).
    let cell = 53.0 * 8.0 / 149.76e6;
    let cap = 9148.0 * 8.0 / (192.0 * cell + 52e-6);
    let s20 = host_pair("sparc-20", "solaris24", 3 * 9148, "");
    assert!(
        s20.throughput_bps <= cap && s20.throughput_bps > 0.95 * cap,
        "{s20:?}"
    );
    assert_eq!(s20.limited_by, "link");
    assert!(
        s20.limit_evidence.contains("52 µs between PDUs"),
        "{}",
        s20.limit_evidence
    );
    // Another driver: the Ultra-1s' (Solaris 2.5), or a host's own gap, goes past it.
    let u1 = host_pair("ultra-1", "solaris25", 3 * 9148, "");
    assert!(u1.throughput_bps > 1.03 * cap, "{u1:?}");
    let no_gap = host_pair("sparc-20", "solaris24", 3 * 9148, r#", "pdu_gap_us": 0"#);
    assert!(no_gap.throughput_bps > 1.03 * cap, "{no_gap:?}");
    // Another adapter has another driver.
    let pca = host_pair(
        "sparc-20",
        "solaris24",
        3 * 9148,
        r#", "adapter": "pca200""#,
    );
    assert!(pca.throughput_bps > 1.03 * cap, "{pca:?}");
}

#[test]
fn messages_above_the_mss_cost_a_solaris_sender_its_fragmentation() {
    // Both link-bound: what differs is the sender's work. Writes of two MSS halve the
    // system calls, yet the Ultra-1 (001 §5.2) pays a pass over every byte of them;
    // the SPARC-10's SunOS 4.1.3 shares its clusters with the segments and saves.
    let busy = |profile: &str, flavour: &str, message: u32| {
        host_pair(profile, flavour, message, "")
            .sender_cpu_busy
            .unwrap()
    };
    let (one, two) = (
        busy("ultra-1", "solaris25", 9148),
        busy("ultra-1", "solaris25", 2 * 9148),
    );
    assert!(
        two > 1.2 * one,
        "Ultra-1 sender busy {one} at one MSS, {two} at two"
    );
    let (one, two) = (
        busy("sparc-10", "sunos413", 9148),
        busy("sparc-10", "sunos413", 2 * 9148),
    );
    assert!(
        two <= one,
        "SPARC-10 sender busy {one} at one MSS, {two} at two"
    );
}

/// A connection's refusal names the key that set the value (`ScenarioError`'s
/// path), so a front end points at the line: the traffic's keys, pacing, buffers.
#[test]
fn a_connections_refusal_carries_its_key_path() {
    let refuse = |conn: &str| {
        let spec = format!(
            r#"{{"hosts": [{{"name": "a"}}, {{"name": "b"}}], "connections": [
            {{"transmitter": "a", "receiver": "b", "traffic": {{"type": "full", "nbytes": 10}}}},
            {{"transmitter": "a", "receiver": "b", {conn}}}]}}"#
        );
        let e = RunSpec::from_json(&spec).unwrap().scenario().unwrap_err();
        let p = e.path().expect("a key path").clone();
        assert_eq!((p.record, p.index), ("connection", Some(1)), "{e}");
        (p.key, p.value)
    };
    let burst = |keys: &str| format!(r#""traffic": {{"type": "burst", {keys}}}"#);
    assert_eq!(
        refuse(&burst(
            r#""period_us": 1, "duration_s": 1, "blocksize": 100"#
        ))
        .0,
        "traffic.period_us"
    );
    assert_eq!(
        refuse(&burst(
            r#""period_us": 1e4, "duration_s": 1, "blocksize": 100, "blocks": 0"#
        )),
        ("traffic.blocks", "0".to_string())
    );
    assert_eq!(
        refuse(&burst(
            r#""period_us": 1e4, "duration_s": 0, "blocksize": 100"#
        ))
        .0,
        "traffic.duration_s"
    );
    assert_eq!(
        refuse(r#""protocol": "udp", "sndbuf": 1024, "traffic": {"type": "full", "nbytes": 10}"#).0,
        "traffic.blocksize"
    );
    assert_eq!(
        refuse(r#""pacing_mbps": 1000, "traffic": {"type": "full", "nbytes": 10}"#),
        ("pacing_mbps", "1000".to_string())
    );
    assert_eq!(
        refuse(r#""sndbuf": 0, "traffic": {"type": "full", "nbytes": 10}"#).0,
        "sndbuf"
    );
}

/// A refusal says what is refused: one setting, two that conflict (both paths),
/// a record as a whole, or the spec; code checking one connection indexes only
/// that connection's paths (its host's flavour keeps the host's path).
#[test]
fn a_refusal_says_what_it_refuses() {
    let spec = |extra: &str, conn: &str| {
        let json = format!(
            r#"{{"hosts": [{{"name": "a"}}, {{"name": "b", "site": "x"}}],
            "trunks": [{{"from": "lan", "to": "x", "delay_ms": 1}}], {extra}
            "connections": [
            {{"transmitter": "a", "receiver": "b", "traffic": {{"type": "full", "nbytes": 10}}}},
            {{"transmitter": "a", "receiver": "b", {conn}}}]}}"#
        );
        RunSpec::from_json(&json).unwrap().scenario().unwrap_err()
    };
    let full = r#""traffic": {"type": "full", "nbytes": 10}"#;
    let key = |record, index, key, value: &str| KeyPath {
        record,
        index,
        name: None,
        key,
        value: value.to_string(),
    };
    // The default EPD threshold over a smaller buffer: the buffer leads.
    let e = spec(r#""switch": {"policy": "epd", "buffer_cells": 64},"#, full);
    let ScenarioError::Conflict { path, other, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(**path, key("switch", None, "buffer_cells", "64"));
    assert_eq!(**other, key("switch", None, "epd_threshold_cells", "200"));
    assert_eq!(
        e.to_string(),
        "switch epd_threshold_cells 200 exceeds buffer_cells 64: the threshold must fit in \
         the buffer"
    );
    let e = spec(
        "",
        r#""traffic": {"type": "full", "nbytes": 10, "duration_s": 1}"#,
    );
    let ScenarioError::Conflict { path, other, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(**path, key("connection", Some(1), "traffic.nbytes", "10"));
    assert_eq!(
        **other,
        key("connection", Some(1), "traffic.duration_s", "1")
    );
    // No trunk joins the sites: the connection as a whole.
    let json = r#"{"hosts": [{"name": "a"}, {"name": "b", "site": "x"}], "connections": [
        {"transmitter": "a", "receiver": "b", "traffic": {"type": "full", "nbytes": 10}}]}"#;
    let e = RunSpec::from_json(json).unwrap().scenario().unwrap_err();
    assert!(e.path().is_none(), "{e:?}");
    assert!(
        matches!(
            &e,
            ScenarioError::Record {
                record: "connection",
                index: Some(0),
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "connection 0 (a -> b): no trunk joins site \"lan\" to site \"x\""
    );
    // A host's flavour refused while building connection 1: the host's key.
    let json = r#"{"hosts": [{"name": "a", "flavour": "tahoe"}, {"name": "b"}], "connections": [
        {"transmitter": "a", "receiver": "b", "traffic": {"type": "full", "nbytes": 10}}]}"#;
    let e = RunSpec::from_json(json).unwrap().scenario().unwrap_err();
    let ScenarioError::Setting { path, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        (path.record, path.index, path.name.as_deref(), path.key),
        ("host", None, Some("a"), "flavour")
    );
    let e = RunSpec::from_json(r#"{"hosts": 1}"#).unwrap_err();
    assert!(matches!(e, ScenarioError::Spec { .. }), "{e:?}");
}
