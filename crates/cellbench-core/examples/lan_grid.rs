//! Print the lan-buffers grid (mean of N replications) beside the published one.
//! `cargo run --release --example lan_grid -- [REPS] [SEED]`
//!
//! A calibration aid: CB_COPY, CB_CKSUM, CB_DTX, CB_DRX (ps/byte), CB_SOUT, CB_SIN,
//! CB_SYS (µs) and CB_JIT (‰) override the host profile's costs for a what-if.
use cellbench_core::sim::batch::run_indexed;
use cellbench_core::sim::testbeds::{lan_buffer_sizes, LanBuffers};
use cellbench_core::sim::world::run;

/// The published grid the project carries (rows: send buffer, columns: receive buffer).
fn published() -> Vec<Vec<f64>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/cellbench/data/lan_buffer_table.csv"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| {
            l.split(',')
                .skip(1)
                .map(|v| v.parse().expect("number"))
                .collect()
        })
        .collect()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let reps: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let seed: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let sizes = lan_buffer_sizes();
    let published = published();
    let t0 = std::time::Instant::now();
    let cells: Vec<(f64, f64)> = run_indexed(100 * reps, 0, |i| {
        let (cfg, rep) = (i / reps, i % reps);
        let study = LanBuffers {
            sndbuf: sizes[cfg / 10],
            rcvbuf: sizes[cfg % 10],
            ..LanBuffers::default()
        };
        let mut sc = study.spec(seed, rep as u32, false).scenario().unwrap();
        for h in sc.hosts.iter_mut() {
            let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
            if let Some(v) = env("CB_COPY") {
                h.copy_ps_per_byte = v;
            }
            if let Some(v) = env("CB_CKSUM") {
                h.checksum_ps_per_byte = v;
            }
            if let Some(v) = env("CB_DTX") {
                h.driver_tx_ps_per_byte = v;
            }
            if let Some(v) = env("CB_DRX") {
                h.driver_rx_ps_per_byte = v;
            }
            if let Some(v) = env("CB_SOUT") {
                h.segment_out = cellbench_core::SimTime::from_us(v);
            }
            if let Some(v) = env("CB_SIN") {
                h.segment_in = cellbench_core::SimTime::from_us(v);
            }
            if let Some(v) = env("CB_SYS") {
                h.syscall = cellbench_core::SimTime::from_us(v);
            }
            if let Some(v) = env("CB_JIT") {
                h.jitter_permille = v as u32;
            }
        }
        let r = run(&sc).unwrap();
        (
            r.transfers[0].mbit_ttcp(),
            if r.transfers[0].lockstep() { 1.0 } else { 0.0 },
        )
    });
    let wall = t0.elapsed();
    let mut worst: (f64, usize) = (0.0, 0);
    let mut bad = 0;
    for (s, published_row) in published.iter().enumerate() {
        let mut line = String::new();
        for (r, &p) in published_row.iter().enumerate() {
            let cfg = s * 10 + r;
            let v: f64 = (0..reps).map(|k| cells[cfg * reps + k].0).sum::<f64>() / reps as f64;
            let mark = if p < 2.0 {
                if v < 2.0 {
                    " "
                } else {
                    "!"
                }
            } else {
                let e = (v - p) / p;
                if e.abs() > worst.0 {
                    worst = (e.abs(), cfg);
                }
                if e.abs() > 0.25 || v < 10.0 {
                    bad += 1;
                    "!"
                } else {
                    " "
                }
            };
            line += &format!("{v:6.2}{mark}");
        }
        println!("{line}");
    }
    println!(
        "worst {:.1}% at cfg {}, out of tolerance: {bad}, wall {:?}",
        worst.0 * 100.0,
        worst.1,
        wall
    );
}
