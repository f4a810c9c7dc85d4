//! Speed with many connections: N parallel TCP transfers of 1 MB, either all
//! from one host to another through one switch port (`one-pair`, ns3_flows.cc's
//! shape) or from N sender hosts into one receiver (`many-hosts`). Prints one
//! line per run: wall time, events, µs per event, and a fingerprint of the
//! results (to check that a change to the engine left them as they were).
//! Runs shorter than 0.2 s are repeated; the times are per run.
//! `cargo run --release --example flows -- [one-pair|many-hosts] N [N ...]`
use cellbench_core::sim::spec::{ConnSpec, HostSpec, Param, RunSpec, Traffic};
use cellbench_core::sim::world::run;
use std::hash::{DefaultHasher, Hash, Hasher};

const BYTES: u64 = 1 << 20;

fn spec(many_hosts: bool, n: usize) -> RunSpec {
    let traffic = Traffic::Full {
        blocksize: Param::Value(8192.0),
        nbytes: Some(BYTES),
        duration_s: None,
    };
    let mut hosts = vec![HostSpec::named("B")];
    let senders = if many_hosts { n } else { 1 };
    hosts.extend((0..senders).map(|i| HostSpec::named(&format!("A{i}"))));
    let conns = (0..n)
        .map(|i| {
            let from = format!("A{}", if many_hosts { i } else { 0 });
            ConnSpec::new(&from, "B", traffic.clone())
        })
        .collect();
    RunSpec {
        // 10,000 transfers through one IPC receiver take over an hour of simulated time.
        time_limit_s: if many_hosts { 3600.0 } else { 86_400.0 },
        ..RunSpec::new(hosts, conns)
    }
}

/// CPU time this process has run so far (Linux), in seconds: on a shared
/// machine it says more than the wall time.
fn cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Peak resident memory of this process so far (Linux), in MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let many_hosts = match args.first().map(String::as_str) {
        Some("one-pair") => false,
        Some("many-hosts") => true,
        _ => {
            eprintln!("usage: flows one-pair|many-hosts N [N ...]");
            std::process::exit(2);
        }
    };
    for a in &args[1..] {
        let Ok(n) = a.parse::<usize>() else {
            eprintln!("flows: N must be a whole number, got {a:?}");
            std::process::exit(2);
        };
        let scenario = spec(many_hosts, n).scenario().unwrap_or_else(|e| {
            eprintln!("flows: {e}");
            std::process::exit(2);
        });
        // Short runs are repeated for a measurable time; figures are per run.
        let (t0, cpu0) = (std::time::Instant::now(), cpu_s());
        let mut runs = 0;
        let r = loop {
            let r = run(&scenario).expect("checked scenario");
            runs += 1;
            if t0.elapsed().as_secs_f64() >= 0.2 {
                break r;
            }
        };
        let wall = t0.elapsed().as_secs_f64() / runs as f64;
        let cpu = cpu_s()
            .zip(cpu0)
            .map_or(f64::NAN, |(b, a)| (b - a) / runs as f64);
        let done = r.transfers.iter().filter(|t| t.completed).count();
        let segs: u64 = r.transfers.iter().map(|t| t.sender.segs_sent).sum();
        let rexmt: u64 = r
            .transfers
            .iter()
            .map(|t| t.sender.segs_retransmitted)
            .sum();
        let mut h = DefaultHasher::new();
        format!("{:?}", r.transfers).hash(&mut h);
        r.end_time.hash(&mut h);
        println!(
            "flows={n} wall_s={wall:.6} cpu_s={cpu:.6} events={} us_per_event={:.3} sim_s={:.3} completed={done} segs={segs} rexmt={rexmt} peak_rss_mb={:.1} results={:016x}",
            r.events,
            wall * 1e6 / r.events.max(1) as f64,
            r.end_time.as_secs_f64(),
            peak_rss_mb().unwrap_or(f64::NAN),
            h.finish()
        );
    }
}
