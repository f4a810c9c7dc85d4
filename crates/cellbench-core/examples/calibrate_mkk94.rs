//! Calibrate the SPARCstation 10's SBA-200 work (`SPARC10_SBA200_PS_PER_BYTE`) to the one
//! measured pair of its kind. Moldeklev, Klovning and Kure (1994), whom 001 §5.2 cites for
//! receiving demanding more processing than sending, measured TCP between SPARCstation 10s
//! (SunOS 4.1.3, SBA-200) at about 70 Mb/s at best, on TAXI 100 and OC-3c alike (as 002
//! §2.2 quotes them). The SPARC-10's loopback figure (001 Table 2, over SunOS's 1536-byte
//! loopback) fixes its send + receive work in the kernel; what its adapter and SBus cost
//! loopback cannot see (001 §4.2). This holds the receive/send split at the era hosts'
//! `RECEIVE_OVER_SEND_PERMILLE` (an assumption), charges the same work per byte to sending
//! and receiving through the SBA-200, and runs the pair over OC-3c (Fore IP, SunOS 4.1.3's
//! largest socket buffers, writes of 8 KB and 1, 2, 3, 5 MSS) until its best is 70.
//! `cargo run --release --example calibrate_mkk94 [-- PS_PER_BYTE]` (one value: print it)
use cellbench_core::host::profile::HostProfile;
use cellbench_core::sim::testbeds::LanBuffers;

/// MKK94's best TCP throughput between two SPARCstation 10s (002 §2.2: about 70).
const TARGET_MBPS: f64 = 70.0;

fn main() {
    let report = |d: u64| {
        let mut p = HostProfile::by_name("sparc-10").unwrap();
        p.driver_tx_ps_per_byte = d;
        p.driver_rx_ps_per_byte = d;
        let b = LanBuffers::sunos413_oc3c_best(&p).unwrap();
        println!(
            "SBA-200 work {d} ps/B each way: sparc-10 copy {} ps/B, read copy {} ps/B -> pair best {b:.2} Mb/s (MKK94 ~{TARGET_MBPS})",
            p.copy_ps_per_byte,
            p.read_copy_ps_per_byte()
        );
        b
    };
    if let Some(d) = std::env::args().nth(1).and_then(|s| s.parse::<u64>().ok()) {
        report(d);
        return;
    }
    let (mut lo, mut hi) = (0_u64, 200_000_u64);
    while hi - lo > 100 {
        let mid = (lo + hi) / 2;
        if report(mid) > TARGET_MBPS {
            lo = mid
        } else {
            hi = mid
        }
    }
    println!("SBA-200 work {hi} ps/B");
}
