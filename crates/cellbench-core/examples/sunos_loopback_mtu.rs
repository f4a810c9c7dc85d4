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
use cellbench_core::sim::testbeds::{loopback, speed_for, LanBuffers, LOOPBACK_MTU};
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
    let speed = speed_for(target, (1.0, 16.0), 24, mbps);
    (speed, at(speed))
}

fn main() {
    for mtu in [LOOPBACK_MTU, SUNOS_LOMTU] {
        let (speed, p) = sparc10_at(mtu);
        println!(
            "loopback MTU {mtu}: sparc-10 {speed:.4} x the IPC -> SPARCstation 10 pair best {:.2} Mb/s (MKK94 ~70)",
            LanBuffers::sunos413_oc3c_best(&p).unwrap()
        );
    }
}
