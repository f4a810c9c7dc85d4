//! Find, for each host of docs/design.md §6.3, how many times faster than the IPC its
//! costs must be for a simulated loopback transfer over its OS's loopback interface
//! (`HostProfile::loopback_mtu`) to match the published figure, 001 Table 2 (bisection).
//! The factors are then written into `ERA_HOSTS` (host/profile.rs).
//! `cargo run --release --example calibrate_loopback`
use cellbench_core::host::profile::HostProfile;
use cellbench_core::sim::testbeds::{loopback_mbps, speed_for};

fn main() {
    for name in HostProfile::names() {
        let named = HostProfile::by_name(name).unwrap();
        let Some(target) = named.loopback_mbps else {
            continue;
        };
        let mbps = |f: f64| loopback_mbps(&HostProfile::era_host(name, f).unwrap()).unwrap();
        let hi = speed_for(target, (0.5, 200.0), 40, mbps);
        println!(
            "{name:>16}: loopback MTU {:>5}, factor {:.4} -> {:.2} Mb/s (published {target}; receive/send {}‰)",
            named.loopback_mtu,
            hi,
            mbps(hi),
            named.receive_bytes_permille,
        );
    }
}
