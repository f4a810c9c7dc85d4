//! What the SPARC-10's loopback calibration becomes at SunOS 4.1.3's own loopback MTU.
//! The era profiles are calibrated to 001 Table 2 with a loopback MTU of 8232
//! (`testbeds::LOOPBACK_MTU`, Solaris's and IRIX's); SunOS 4.1.x keeps 4.3BSD's loopback
//! interface, whose MTU is 1536 (4.3BSD net/if_loop.c, `LOMTU (1024+512)`). At 1536 a
//! loopback transfer carries six times the segments per byte, so the same 43.55 Mb/s asks
//! for a faster CPU; this prints that speed and what it does to Moldeklev, Klovning and
//! Kure's SPARCstation 10 pair (about 70 Mb/s, the figure `calibrate_mkk94` fits the
//! receive/send split to), the split held at `RECEIVE_OVER_SEND_PERMILLE`.
//! docs/hetero-lan.md ("Two rows stay off") reads the result.
//! `cargo run --release --example sunos_loopback_mtu`
use cellbench_core::host::profile::{HostProfile, RECEIVE_OVER_SEND_PERMILLE};
use cellbench_core::sim::testbeds::{loopback, LanBuffers, LOOPBACK_MTU};
use cellbench_core::sim::world::run;

/// 4.3BSD's loopback MTU (net/if_loop.c), which SunOS 4.1.x kept.
const SUNOS_LOMTU: u32 = 1024 + 512;

/// The SPARC-10 (IPC cost structure, the era split) sped up until a loopback ttcp at
/// `mtu` gives its published figure.
fn sparc10_at(mtu: u32) -> (f64, HostProfile) {
    let ipc = HostProfile::sparc_ipc();
    let named = HostProfile::by_name("sparc-10").unwrap();
    let target = named.loopback_mbps.unwrap();
    let at = |f: f64| ipc.scaled_by("sparc-10", named.os, f, target, RECEIVE_OVER_SEND_PERMILLE);
    let mbps = |f: f64| {
        let mut sc = loopback(&at(f), 16 << 20, 1);
        sc.transfers[0].mtu = mtu;
        run(&sc).unwrap().transfers[0].throughput_bps() / 1e6
    };
    let (mut lo, mut hi) = (1.0_f64, 16.0_f64);
    for _ in 0..24 {
        let mid = (lo * hi).sqrt();
        if mbps(mid) < target {
            lo = mid
        } else {
            hi = mid
        }
    }
    (hi, at(hi))
}

/// The SPARC-10 pair's best point (as `calibrate_mkk94` runs it).
fn pair_best(p: &HostProfile) -> f64 {
    let mut best: f64 = 0.0;
    for buflen in [8192, 9148, 2 * 9148, 3 * 9148, 5 * 9148] {
        let sc = LanBuffers::sunos413_oc3c(buflen, 32 << 20, p, p).unwrap();
        best = best.max(run(&sc).unwrap().transfers[0].throughput_bps() / 1e6);
    }
    best
}

fn main() {
    for mtu in [LOOPBACK_MTU, SUNOS_LOMTU] {
        let (speed, p) = sparc10_at(mtu);
        println!(
            "loopback MTU {mtu}: sparc-10 {speed:.4} x the IPC -> SPARCstation 10 pair best {:.2} Mb/s (MKK94 ~70)",
            pair_best(&p)
        );
    }
}
