//! Time WAN transfers of `modern` and `osf1` (Reno with RFC 1323): wan-mismatch case 1 unpaced (an OC-3c
//! Alpha 600 km from a 100 Mb/s TAXI receiver; the 256-cell port where the
//! rates meet drops cells, so TCP times out) and wan-window at 128 KB (no loss).
//! `cargo run --release -p cellbench-core --example wan_modern -- [FLAVOUR] [REPS]`
//! Prints wall time per run, events, throughput, retransmissions and timeouts.
use cellbench_core::sim::spec::RunSpec;
use std::time::Instant;

fn spec(case: &str, flavour: &str, rep: u32) -> RunSpec {
    let (receiver, delay, seconds) = match case {
        "mismatch" => (
            r#"{"name": "rx", "site": "east", "profile": "sparc-10", "phy": "taxi100"}"#,
            3.0,
            10.0,
        ),
        _ => (
            r#"{"name": "rx", "site": "east", "profile": "alpha-3000", "phy": "oc3c"}"#,
            4.4,
            10.0,
        ),
    };
    let text = format!(
        r#"{{"replication": {rep},
        "hosts": [{{"name": "tx", "site": "west", "profile": "alpha-3000", "phy": "oc3c"}},
                  {receiver}],
        "trunks": [{{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": {delay}}}],
        "connections": [{{"transmitter": "tx", "receiver": "rx", "encap": "llc-snap",
            "flavour": "{flavour}", "sndbuf": 131072, "rcvbuf": 131072, "receiver_blocksize": 65536,
            "traffic": {{"type": "full", "blocksize": 65536, "duration_s": {seconds}}}}}]}}"#
    );
    RunSpec::from_json(&text).expect("valid spec")
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let flavours: Vec<String> = match a.get(1) {
        Some(f) => vec![f.clone()],
        None => vec!["modern".into(), "osf1".into()],
    };
    let reps: u32 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    println!(
        "{:<10} {:<8} {:>11} {:>10} {:>9} {:>8} {:>8}",
        "case", "flavour", "wall/run", "events", "Mb/s", "rexmt", "timeouts"
    );
    for case in ["mismatch", "window"] {
        for f in &flavours {
            let specs: Vec<RunSpec> = (0..reps).map(|r| spec(case, f, r)).collect();
            let start = Instant::now();
            let results: Vec<_> = specs.iter().map(|s| s.run().expect("runs")).collect();
            let wall = start.elapsed().as_secs_f64() / reps as f64;
            let n = reps as f64;
            let sum = |g: &dyn Fn(&cellbench_core::sim::spec::ConnResult) -> f64| {
                results.iter().map(|r| g(&r.connections[0])).sum::<f64>() / n
            };
            let events = results.iter().map(|r| r.events).sum::<u64>() as f64 / n;
            println!(
                "{:<10} {:<8} {:>8.2} ms {:>10.0} {:>9.3} {:>8.1} {:>8.1}",
                case,
                f,
                wall * 1e3,
                events,
                sum(&|c| c.throughput_bps) / 1e6,
                sum(&|c| c.retransmitted_segments as f64),
                sum(&|c| c.timeouts as f64),
            );
        }
    }
}
