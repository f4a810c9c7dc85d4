//! What each era host's loopback calibration becomes at each loopback MTU its OS may have
//! had. A host's speed is calibrated to its 001 Table 2 figure over its OS's loopback
//! interface (`HostProfile::loopback_mtu`: SunOS 4.1.3 1536, Solaris 2.4/2.5 8232, NT 3.51
//! and IRIX 6.0.1 assumptions; host/profile.rs names each source); the smaller the MTU, the
//! more segments per byte the figure paid for, so the faster the CPU it asks for. For the
//! SPARC-10 this also prints Moldeklev, Klovning and Kure's SPARCstation 10 pair (about 70
//! Mb/s, 002 §2.2) with and without the SBA-200 work `calibrate_mkk94` fits to it.
//! docs/hetero-lan.md ("Host limits") reads the result.
//! `cargo run --release --example loopback_mtu`
use cellbench_core::host::profile::{
    HostProfile, SOLARIS2_LOOPBACK_MTU, SPARC10_SBA200_PS_PER_BYTE, SUNOS4_LOOPBACK_MTU,
};
use cellbench_core::sim::testbeds::{loopback_mbps, speed_for, LanBuffers};

/// The MTUs the assumptions' ranges span: Windows XP's loopback (1520), 4.3BSD's (1536),
/// Solaris's (8232), the 4.4BSD descendants' 32 KB.
const MTUS: [u32; 4] = [1520, SUNOS4_LOOPBACK_MTU, SOLARIS2_LOOPBACK_MTU, 32768];

/// The fastest speed tried: a loopback that cannot reach its figure by then never does (its
/// per-segment work at that MTU is not what bounds it).
const FASTEST: f64 = 200.0;

/// `name` sped up until a loopback ttcp at `mtu` gives its published figure.
fn at_mtu(name: &str, mtu: u32) -> (f64, HostProfile) {
    let target = HostProfile::by_name(name).unwrap().loopback_mbps.unwrap();
    let mbps = |f: f64| {
        let p = HostProfile {
            loopback_mtu: mtu,
            ..HostProfile::era_host(name, f).unwrap()
        };
        loopback_mbps(&p).unwrap()
    };
    let speed = speed_for(target, (0.5, FASTEST), 40, mbps);
    (speed, HostProfile::era_host(name, speed).unwrap())
}

fn main() {
    for name in HostProfile::names() {
        let named = HostProfile::by_name(name).unwrap();
        if named.loopback_mbps.is_none() || name == "alpha-3000" {
            continue;
        }
        let speeds: Vec<String> = MTUS
            .iter()
            .map(|&m| {
                let own = if m == named.loopback_mtu { "*" } else { "" };
                match at_mtu(name, m).0 {
                    s if s >= FASTEST => format!("{m}{own}: unreachable"),
                    s => format!("{m}{own}: {s:.2}"),
                }
            })
            .collect();
        println!(
            "{name:>16} ({}): x the IPC at loopback MTU {}",
            named.os,
            speeds.join(", ")
        );
    }
    for mtu in [SOLARIS2_LOOPBACK_MTU, SUNOS4_LOOPBACK_MTU] {
        let (speed, mut p) = at_mtu("sparc-10", mtu);
        let ipc = HostProfile::sparc_ipc();
        let mut best = |tx: u64, rx: u64| {
            p.driver_tx_ps_per_byte = tx;
            p.driver_rx_ps_per_byte = rx;
            LanBuffers::sunos413_oc3c_best(&p).unwrap()
        };
        let sba200 = best(SPARC10_SBA200_PS_PER_BYTE, SPARC10_SBA200_PS_PER_BYTE);
        // The era hosts' default: the IPC's programmed-I/O driver work, scaled.
        let scaled = |x: u64| (x as f64 / speed).round() as u64;
        let ipc_driver = best(
            scaled(ipc.driver_tx_ps_per_byte),
            scaled(ipc.driver_rx_ps_per_byte),
        );
        let none = best(0, 0);
        println!(
            "sparc-10 at loopback MTU {mtu} ({speed:.4} x the IPC): SPARCstation 10 pair best {none:.2} Mb/s with no driver work, {ipc_driver:.2} with the IPC's scaled, {sba200:.2} with {SPARC10_SBA200_PS_PER_BYTE} ps/B each way (MKK94 ~70)",
        );
    }
}
