//! Find, for each host of docs/design.md §6.3, how many times faster than the IPC its
//! costs must be for the simulated loopback transfer to match the published
//! figure (bisection). The factors are then written into `HostProfile::by_name`.
//! `cargo run --release --example calibrate_loopback`
use cellbench_core::host::profile::HostProfile;
use cellbench_core::host::profile::RECEIVE_OVER_SEND_PERMILLE;
use cellbench_core::sim::testbeds::{loopback, speed_for};
use cellbench_core::sim::world::run;

fn main() {
    let ipc = HostProfile::sparc_ipc();
    for name in HostProfile::names() {
        let named = HostProfile::by_name(name).unwrap();
        let Some(target) = named.loopback_mbps else {
            continue;
        };
        let split = named.receive_bytes_permille;
        let mbps = |f: f64| {
            let p = ipc.scaled_by(name, "", f, target, split);
            let r = run(&loopback(&p, 16 << 20, 1)).unwrap();
            r.transfers[0].throughput_bps() / 1e6
        };
        let hi = speed_for(target, (0.5, 200.0), 40, mbps);
        println!(
            "{name:>16}: factor {:.4} -> {:.2} Mb/s (published {target}; receive/send {split}‰, era hosts {RECEIVE_OVER_SEND_PERMILLE}‰)",
            hi,
            mbps(hi)
        );
    }
}
