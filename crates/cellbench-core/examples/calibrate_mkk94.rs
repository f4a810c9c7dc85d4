//! Calibrate the era hosts' receive/send split (`RECEIVE_OVER_SEND_PERMILLE`) to the one
//! measured pair of their kind. Moldeklev, Klovning and Kure (1994), whom 001 §5.2 cites
//! for receiving demanding more processing than sending, measured TCP between
//! SPARCstation 10s (SunOS 4.1.3, SBA-200) at about 70 Mb/s at best, on TAXI 100 and
//! OC-3c alike (as 002 §2.2 quotes them). A host's loopback figure (001 Table 2) fixes its
//! send + receive work; the split decides what the receiving SPARC-10, which bounds the
//! pair, can take. For each split this re-finds the SPARC-10's speed from its loopback
//! figure (as `calibrate_loopback` does), then runs the pair over OC-3c (Fore IP, SunOS
//! 4.1.3's largest socket buffers, writes of 8 KB and 1, 2, 3, 5 MSS) and keeps its best.
//! `cargo run --release --example calibrate_mkk94 [-- PERMILLE]` (one split: print it)
use cellbench_core::host::profile::HostProfile;
use cellbench_core::sim::testbeds::{loopback, speed_for, LanBuffers};
use cellbench_core::sim::world::run;

/// MKK94's best TCP throughput between two SPARCstation 10s (002 §2.2: about 70).
const TARGET_MBPS: f64 = 70.0;

/// The SPARC-10 profile with this split, its speed calibrated to its loopback figure.
fn sparc10(split: u32) -> HostProfile {
    let ipc = HostProfile::sparc_ipc();
    let named = HostProfile::by_name("sparc-10").unwrap();
    let target = named.loopback_mbps.unwrap();
    let at = |f: f64| {
        let mut p = ipc.scaled_by("sparc-10", "SunOS 4.1.3", f, target, split);
        p.fragment_ps_per_byte = named.fragment_ps_per_byte;
        p.driver_pdu_gap = named.driver_pdu_gap;
        p
    };
    let mbps =
        |f: f64| run(&loopback(&at(f), 16 << 20, 1)).unwrap().transfers[0].throughput_bps() / 1e6;
    at(speed_for(target, (1.0, 16.0), 24, mbps))
}

fn main() {
    let report = |split: u32| {
        let p = sparc10(split);
        let b = LanBuffers::sunos413_oc3c_best(&p).unwrap();
        println!(
            "receive/send {split}‰: sparc-10 copy {} ps/B, read copy {} ps/B -> pair best {b:.2} Mb/s (MKK94 ~{TARGET_MBPS})",
            p.copy_ps_per_byte,
            p.read_copy_ps_per_byte()
        );
        b
    };
    if let Some(split) = std::env::args().nth(1).and_then(|s| s.parse::<u32>().ok()) {
        report(split);
        return;
    }
    let (mut lo, mut hi) = (1000_u32, 3000_u32);
    while hi - lo > 5 {
        let mid = (lo + hi) / 2;
        if report(mid) > TARGET_MBPS {
            lo = mid
        } else {
            hi = mid
        }
    }
    println!("split {hi}‰");
}
