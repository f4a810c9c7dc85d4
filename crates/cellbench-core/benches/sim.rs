//! Simulator benchmarks: one 32 MB lan-buffers transfer at 52428/52428 (the
//! issue's target: ≤ 7 ms wall, cell-exact), a lock-step transfer, and the
//! per-cell reference mode beside the train mode (the same 5 replications in
//! each, so their throughputs must agree).
//!
//! Run: `cargo bench -p cellbench-core --bench sim`. Prints wall time per
//! transfer and events per second; ratios side by side.

use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::run;
use std::time::Instant;

fn time_transfer(study: &LanBuffers, per_cell: bool, reps: u32) -> (f64, u64, f64) {
    let mut events = 0;
    let mut mbit = 0.0;
    let start = Instant::now();
    for rep in 0..reps {
        let mut spec = study.spec(1, rep, false);
        spec.per_cell = per_cell;
        let s = spec.scenario().expect("valid");
        let r = run(&s).expect("runs");
        events += r.events;
        mbit += r.transfers[0].mbit_ttcp();
    }
    let per = start.elapsed().as_secs_f64() / reps as f64;
    (per, events / reps as u64, mbit / reps as f64)
}

fn main() {
    let cases = [
        ("32 MB, 52428/52428 (no lock-step)", LanBuffers::default()),
        (
            "32 MB, 16K/24K (lock-step)",
            LanBuffers {
                sndbuf: 16 * 1024,
                rcvbuf: 24 * 1024,
                ..LanBuffers::default()
            },
        ),
    ];
    println!(
        "{:<36} {:>10} {:>12} {:>14} {:>12}",
        "transfer", "mode", "wall/xfer", "events/s", "Mbit/s(ttcp)"
    );
    for (name, study) in &cases {
        let mut train_wall = 0.0;
        for (mode, per_cell, reps) in [("train", false, 5), ("per-cell", true, 5)] {
            let (wall, events, mbit) = time_transfer(study, per_cell, reps);
            let ratio = if mode == "train" {
                train_wall = wall;
                String::new()
            } else {
                format!("  ({:.1}x train)", wall / train_wall)
            };
            println!(
                "{:<36} {:>10} {:>9.2} ms {:>14.0} {:>12.3}{}",
                name,
                mode,
                wall * 1e3,
                events as f64 / wall,
                mbit,
                ratio
            );
        }
    }
    println!("target: <= 7 ms per 32 MB transfer in train mode (ns-3 3.37 packet-level: ~70 ms)");
}
