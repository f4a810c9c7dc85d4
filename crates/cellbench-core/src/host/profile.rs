//! Host processing-cost profiles: what a system call, a byte copied, a byte
//! checksummed, a segment sent or received costs the CPU of one of the era's
//! hosts. A host saturates where the real one did because its CPU is a serial
//! resource in the simulator (see `sim::world`).

use crate::time::SimTime;
use std::fmt;

/// Costs charged to a host's CPU. Per-byte costs are in picoseconds per byte.
#[derive(Clone, Debug, PartialEq)]
pub struct HostProfile {
    pub name: &'static str,
    pub os: &'static str,
    /// A read()/write() system call: trap, socket-layer entry, process switch.
    pub syscall: SimTime,
    /// Copying user data to or from the kernel (uiomove).
    pub copy_ps_per_byte: u64,
    /// The TCP checksum over a segment's data (sent and received).
    pub checksum_ps_per_byte: u64,
    /// Moving a PDU's bytes to the adapter (programmed I/O on first SBus adapters; 0 for DMA).
    pub driver_tx_ps_per_byte: u64,
    /// Moving a PDU's bytes from the adapter.
    pub driver_rx_ps_per_byte: u64,
    /// tcp_output + ip_output + driver start, per segment sent.
    pub segment_out: SimTime,
    /// Interrupt + ip_input + tcp_input, per segment received (ACKs included).
    pub segment_in: SimTime,
    /// Per cell when the host does SAR in software (zero when the adapter does AAL5).
    pub sar_per_cell: SimTime,
    /// One run of the fast or slow timer routine.
    pub timer_tick: SimTime,
    /// Each piece of work takes its nominal cost times a factor drawn uniformly
    /// from 1 ± jitter_permille/1000: real hosts never take the same time twice
    /// (cache state, interrupts, other processes).
    pub jitter_permille: u32,
    /// The published loopback TCP throughput this profile is calibrated to (Mb/s, 10^6).
    pub loopback_mbps: Option<f64>,
}

impl HostProfile {
    /// Cost of copying `n` bytes between user and kernel.
    pub fn copy(&self, n: u32) -> SimTime {
        SimTime(self.copy_ps_per_byte * n as u64)
    }
    /// Cost of sending one segment with `data` bytes in an IP datagram of `ip_len` bytes.
    pub fn send_cost(&self, data: u32, ip_len: u32, cells: u32) -> SimTime {
        self.segment_out
            + SimTime(
                self.checksum_ps_per_byte * data as u64
                    + self.driver_tx_ps_per_byte * ip_len as u64,
            )
            + self.sar_per_cell.times(cells as u64)
    }
    /// Cost of receiving one segment (interrupt to tcp_input done).
    pub fn receive_cost(&self, data: u32, ip_len: u32, cells: u32) -> SimTime {
        self.segment_in
            + SimTime(
                self.checksum_ps_per_byte * data as u64
                    + self.driver_rx_ps_per_byte * ip_len as u64,
            )
            + self.sar_per_cell.times(cells as u64)
    }

    /// The same host `factor` times faster (every cost divided by `factor`).
    pub fn scaled_by(
        &self,
        name: &'static str,
        os: &'static str,
        factor: f64,
        loopback: f64,
    ) -> HostProfile {
        let t = |x: SimTime| SimTime((x.0 as f64 / factor).round() as u64);
        let b = |x: u64| (x as f64 / factor).round() as u64;
        HostProfile {
            name,
            os,
            syscall: t(self.syscall),
            copy_ps_per_byte: b(self.copy_ps_per_byte),
            checksum_ps_per_byte: b(self.checksum_ps_per_byte),
            driver_tx_ps_per_byte: b(self.driver_tx_ps_per_byte),
            driver_rx_ps_per_byte: b(self.driver_rx_ps_per_byte),
            segment_out: t(self.segment_out),
            segment_in: t(self.segment_in),
            sar_per_cell: t(self.sar_per_cell),
            timer_tick: t(self.timer_tick),
            jitter_permille: self.jitter_permille,
            loopback_mbps: Some(loopback),
        }
    }

    /// SPARCstation IPC, SunOS 4.1.1, with a first-generation SBus adapter
    /// (AAL5 in hardware, data moved by programmed I/O). Calibrated so that the
    /// un-anomalous part of the LAN buffer table comes out right: a random local
    /// search over these seven costs (`scripts/calibrate_lan.py`) for the fewest
    /// cells outside ±25%, then the smallest worst error, every anomalous cell
    /// still locking. Stop-and-wait cells (receive buffer 16K, send buffer 28K
    /// up) fix the sum of the per-segment costs, the big-buffer cells the
    /// receiver's per-byte costs.
    pub fn sparc_ipc() -> HostProfile {
        HostProfile {
            name: "sparc-ipc",
            os: "SunOS 4.1.1",
            syscall: SimTime::from_us(127),
            copy_ps_per_byte: 207_279,
            checksum_ps_per_byte: 36_581,
            driver_tx_ps_per_byte: 21_620,
            // Reading the adapter's FIFO costs more than writing it.
            driver_rx_ps_per_byte: 76_866,
            segment_out: SimTime::from_us(195),
            segment_in: SimTime::from_us(303),
            sar_per_cell: SimTime::ZERO,
            timer_tick: SimTime::from_us(20),
            jitter_permille: 100,
            loopback_mbps: None,
        }
    }

    /// The era's hosts of docs/design.md §6.3, each with the IPC's cost structure made
    /// `speed` times faster, `speed` found by simulating a loopback ttcp
    /// transfer until it matched the host's published loopback throughput
    /// (`cargo run --release --example calibrate_loopback`; checked by the
    /// test in `sim::testbeds`).
    pub fn by_name(name: &str) -> Option<HostProfile> {
        let ipc = HostProfile::sparc_ipc();
        // (name, OS, published loopback Mb/s, speed relative to the IPC)
        let table: [(&'static str, &'static str, f64, f64); 7] = [
            ("pentium-90", "Windows NT 3.51", 36.27, 2.8988),
            ("sparc-10", "SunOS 4.1.3", 43.55, 3.5149),
            ("pentium-100", "Windows NT 3.51", 49.30, 4.0113),
            ("power-challenge", "IRIX 6.0.1", 135.80, 12.5650),
            ("sparc-20", "Solaris 2.4", 230.94, 25.1934),
            ("ultra-1", "Solaris 2.5", 335.89, 45.5838),
            // Not in the published table: fast enough to fill OC-3c both ways
            // (taken as 400 Mb/s loopback).
            ("alpha-3000", "OSF/1", 400.0, 63.8666),
        ];
        if name == ipc.name {
            return Some(ipc);
        }
        table
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|&(n, os, loopback, speed)| ipc.scaled_by(n, os, speed, loopback))
    }

    pub fn names() -> Vec<&'static str> {
        vec![
            "sparc-ipc",
            "pentium-90",
            "sparc-10",
            "pentium-100",
            "power-challenge",
            "sparc-20",
            "ultra-1",
            "alpha-3000",
        ]
    }
}

/// An unknown profile name (the message lists the known ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown host profile {:?}: expected one of {}",
            self.0,
            HostProfile::names().join(", ")
        )
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn every_named_profile_exists() {
        for name in HostProfile::names() {
            assert_eq!(HostProfile::by_name(name).unwrap().name, name);
        }
        assert!(HostProfile::by_name("vax-780").is_none());
    }

    #[test]
    fn receiving_costs_more_than_sending() {
        let p = HostProfile::sparc_ipc();
        assert!(p.receive_cost(9148, 9188, 192) > p.send_cost(9148, 9188, 192));
    }
}
