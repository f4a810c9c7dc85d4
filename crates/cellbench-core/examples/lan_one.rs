//! Run one lan-buffers transfer and print its figures (and optionally its trace).
//! `cargo run --release --example lan_one -- SNDBUF RCVBUF [SEED] [trace]`
use cellbench_core::sim::explain::lockstep_cycle;
use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::run;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let snd: u32 = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(52428);
    let rcv: u32 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(52428);
    let seed: u64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let trace = a.get(4).is_some();
    let study = LanBuffers {
        sndbuf: snd,
        rcvbuf: rcv,
        ..LanBuffers::default()
    };
    let s = study.spec(seed, 0, true).scenario().unwrap();
    let t0 = std::time::Instant::now();
    let r = run(&s).unwrap();
    let wall = t0.elapsed();
    let t = &r.transfers[0];
    println!(
        "snd {snd} rcv {rcv}: {:.3} Mbit/s(ttcp) completed={} secs={:.3} lockstep={} events={} wall={:?}",
        t.mbit_ttcp(), t.completed, t.sender_seconds, t.lockstep(), r.events, wall
    );
    println!("sender {:?}\nreceiver {:?}", t.sender, t.receiver);
    if let Some(c) = lockstep_cycle(&r.trace) {
        println!(
            "cycle: {:.0} bytes/tick, period {} s, predicted {:.3} Mbit/s, repeats {}: {:?}",
            c.bytes_per_tick,
            c.mean_period,
            c.predicted_bps() / 1048576.0,
            c.pattern_repeats,
            c.pattern
        );
    }
    if trace {
        for x in r.trace.iter().take(400) {
            println!("{}", x.line());
        }
    }
}
