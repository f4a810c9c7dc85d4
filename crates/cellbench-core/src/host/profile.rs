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
    /// Receiving's per-byte work (the copy out to the reader, the checksum on input)
    /// against sending's (copy in, checksum on output), per mille: 1000 = alike. 001
    /// §5.2, citing Moldeklev et al. (1994), says receiving demands more processing than
    /// sending; the era hosts' value is [`RECEIVE_OVER_SEND_PERMILLE`].
    pub receive_bytes_permille: u32,
    /// Work per byte of a TCP write larger than the MSS, which the host splits into
    /// segments: 001 §5.2 (Fig. 13, the Ultra-1s under Solaris 2.5). 0 where the socket
    /// layer's buffers are shared with the segments (4.4BSD's m_copy of clusters).
    pub fragment_ps_per_byte: u64,
    /// Idle time the adapter's driver on this host's OS leaves between PDUs when the
    /// adapter model gives none (unspaced): a cap on the PDUs it carries per second. 001
    /// §5.1 puts the SPARCstation 20 pair's 93% down to the driver's upper limit.
    pub driver_pdu_gap: SimTime,
    /// The MTU of the loopback interface of this host's OS: what its published loopback
    /// figure (`loopback_mbps`) was measured over, so what its calibration runs at
    /// (`sim::testbeds::loopback`).
    pub loopback_mtu: u32,
}

/// The era hosts' receive/send per-byte ratio (‰): 001 §5.2, citing Moldeklev, Klovning
/// and Kure (1994), says receiving demands more processing than sending, without a size. An
/// *assumption* for every host calibrated to a loopback figure. 1280‰ was first calibrated
/// to that study's SPARCstation 10 pair (SunOS 4.1.3, SBA-200, about 70 Mb/s at best, as
/// 002 §2.2 quotes them) with the SPARC-10 calibrated at 8232, the wrong loopback MTU for
/// SunOS; at SunOS's own 1536 that pair fixes the SBA-200's work instead
/// ([`SPARC10_SBA200_PS_PER_BYTE`], which holds this split), and the split keeps its value
/// as the default of a range: 1000‰ (alike, as 001 §4.2's doubling of the loopback figure
/// presumes) to 1750‰ (the most "about 70" allowed when the split alone carried the pair's
/// network path, "about 70" read as 65).
pub const RECEIVE_OVER_SEND_PERMILLE: u32 = 1280;

/// SunOS 4.1.x's loopback MTU: 4.3BSD's `LOMTU (1024+512)` (4.3BSD net/if_loop.c), which
/// SunOS 4's BSD network code keeps (4.4BSD-Lite's if_loop.c still has it; later BSDs raised
/// it to 16384 and more, keeping 1536 only as `TINY_LOMTU`).
pub const SUNOS4_LOOPBACK_MTU: u32 = 1024 + 512;

/// Solaris 2's loopback MTU: `IP_LOOPBACK_MTU` (8 × 1024, Solaris inet/ip_if.h) plus room
/// for the IP and TCP headers, which ip_if.c adds when it makes lo0 (`ill_max_frag +=
/// IP_SIMPLE_HDR_LENGTH + 20`): the `mtu 8232` Solaris's `ifconfig lo0` and `netstat -i`
/// print. The sources the project found are of later releases (SunOS 5.8's ip_if.h, 1999);
/// nothing says 2.4 and 2.5 differed.
pub const SOLARIS2_LOOPBACK_MTU: u32 = 8 * 1024 + 40;

/// IRIX 6.0.1's loopback MTU: no source the project found gives it (SGI's lo(7) pages give
/// none, IRIX's kernel source is not public). An *assumption*: Solaris's 8232, what every
/// profile was calibrated at before the loopback MTU was taken per OS. Range 1536 (4.3BSD's
/// `LOMTU`, whose network code IRIX's descends from) to 32 KB (the 4.4BSD descendants'
/// `LOMTU`, 32768 plus two mbuf headers): `examples/loopback_mtu.rs` prints the
/// Challenge's speed at both ends.
pub const IRIX6_LOOPBACK_MTU: u32 = SOLARIS2_LOOPBACK_MTU;

/// Windows NT 3.51's loopback MTU: no source the project found gives it for NT 3.51. The one
/// figure found is of a later release of the same TCP/IP stack (Microsoft's own since NT
/// 3.5): Windows XP's "MS TCP Loopback interface" reports MTU 1520 (its interface table, as
/// tools that list it print). An *assumption*, kept at Solaris's 8232, what the Pentiums
/// were calibrated at before the MTU was taken per OS, rather than moved on a release five
/// years later. Range 1520 to 8232: at 1520 the Pentiums' calibration asks for CPUs 1.56
/// times faster (`examples/loopback_mtu.rs`), and 001 Table 3's two pairs with a Pentium
/// receiver would run 89.5 and 124.0 Mb/s against 68.14 and 73.33 (seed 1) unless NT's
/// PCA-200 path hid work loopback cannot see, as the SPARC-10's does.
pub const NT351_LOOPBACK_MTU: u32 = SOLARIS2_LOOPBACK_MTU;

/// The era hosts: (name, OS, published loopback Mb/s (001 Table 2), the OS's loopback MTU,
/// speed relative to the IPC: the *calibration* `calibrate_loopback` prints).
const ERA_HOSTS: [(&str, &str, f64, u32, f64); 7] = [
    (
        "pentium-90",
        "Windows NT 3.51",
        36.27,
        NT351_LOOPBACK_MTU,
        3.2220,
    ),
    (
        "sparc-10",
        "SunOS 4.1.3",
        43.55,
        SUNOS4_LOOPBACK_MTU,
        6.0919,
    ),
    (
        "pentium-100",
        "Windows NT 3.51",
        49.30,
        NT351_LOOPBACK_MTU,
        4.4620,
    ),
    (
        "power-challenge",
        "IRIX 6.0.1",
        135.80,
        IRIX6_LOOPBACK_MTU,
        13.9709,
    ),
    (
        "sparc-20",
        "Solaris 2.4",
        230.94,
        SOLARIS2_LOOPBACK_MTU,
        28.0164,
    ),
    (
        "ultra-1",
        "Solaris 2.5",
        335.89,
        SOLARIS2_LOOPBACK_MTU,
        50.6857,
    ),
    // Not in the published table: fast enough to fill OC-3c both ways (taken as 400 Mb/s
    // loopback, over an MTU that, for an assumed figure, matters not).
    ("alpha-3000", "OSF/1", 400.0, SOLARIS2_LOOPBACK_MTU, 63.8666),
];

/// The SBA-200's work on a SPARCstation 10 under SunOS 4.1.3 that its loopback figure cannot
/// see (001 §4.2: loopback moves no bytes over the adapter or the SBus; 002 §2.2, after
/// Moldeklev et al.: the SBA-200's bottleneck is "mainly the data transfers and the
/// processing within the workstations"), ps per byte of each PDU, sending and receiving alike: a *calibration* to Moldeklev, Klovning and Kure's
/// SPARCstation 10 pair, about 70 Mb/s at best (002 §2.2), with the host's speed calibrated
/// at SunOS's own loopback MTU and the era split held (`cargo run --release --example
/// calibrate_mkk94`). Calibrated at 8232, the IPC's programmed-I/O driver work scaled to the
/// SPARC-10 gave that pair its 70; at 1536 the same gives 107.6 (`examples/loopback_mtu.rs`).
/// Per byte, not per PDU: the bus moves the PDU's bytes, and at 9 KB PDUs the two readings
/// differ little; alike both ways because no source sizes the SBus's sending and receiving
/// apart. About 0.48 ms per 9188-byte PDU: the sending SPARC-10 pays it too, which brings
/// its sending maximum to about 80 Mb/s (001 Table 3's SPARC-10 -> Challenge: 60.98).
pub const SPARC10_SBA200_PS_PER_BYTE: u64 = 52_343;

impl HostProfile {
    /// Cost of copying `n` bytes between user and kernel.
    pub fn copy(&self, n: u32) -> SimTime {
        SimTime(self.copy_ps_per_byte * n as u64)
    }
    /// Receiving's weight on a per-byte cost (`receive_bytes_permille`).
    fn on_receive(&self, ps_per_byte: u64) -> u64 {
        ps_per_byte * self.receive_bytes_permille as u64 / 1000
    }
    /// The copy out of the kernel on a read(), ps per byte.
    pub fn read_copy_ps_per_byte(&self) -> u64 {
        self.on_receive(self.copy_ps_per_byte)
    }
    /// Splitting a write of `message` bytes into segments of `mss`: nothing when it fits
    /// one segment.
    pub fn fragment_cost(&self, message: u32, mss: u32) -> SimTime {
        if message > mss {
            SimTime(self.fragment_ps_per_byte * message as u64)
        } else {
            SimTime::ZERO
        }
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
                self.on_receive(self.checksum_ps_per_byte) * data as u64
                    + self.driver_rx_ps_per_byte * ip_len as u64,
            )
            + self.sar_per_cell.times(cells as u64)
    }

    /// The same host `factor` times faster (every cost divided by `factor`), its
    /// receiving per-byte work weighted by `receive_bytes_permille`.
    pub fn scaled_by(
        &self,
        name: &'static str,
        os: &'static str,
        factor: f64,
        loopback: f64,
        receive_bytes_permille: u32,
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
            receive_bytes_permille,
            fragment_ps_per_byte: b(self.fragment_ps_per_byte),
            driver_pdu_gap: self.driver_pdu_gap,
            loopback_mtu: self.loopback_mtu,
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
            // The calibration to 000's grid fits the receiver's per-byte costs as they
            // are (the driver's FIFO reads carry its receive side's extra work).
            receive_bytes_permille: 1000,
            // SunOS 4.1.1's sosend fills clusters that tcp_output's m_copy shares.
            fragment_ps_per_byte: 0,
            driver_pdu_gap: SimTime::ZERO,
            // SunOS 4.1.1 kept 4.3BSD's loopback interface (unused: the IPC is fitted to
            // 000's grid, not to a loopback figure).
            loopback_mtu: SUNOS4_LOOPBACK_MTU,
        }
    }

    /// The era's hosts of docs/design.md §6.3 (see [`HostProfile::era_host`]), each at the
    /// speed relative to the IPC that is its *calibration*: found by simulating a loopback
    /// ttcp transfer over its OS's loopback interface (`loopback_mtu`) until it matched the
    /// host's published loopback throughput, 001 Table 2 (`cargo run --release --example
    /// calibrate_loopback`; checked by the test in `sim::testbeds`).
    pub fn by_name(name: &str) -> Option<HostProfile> {
        if name == "sparc-ipc" {
            return Some(HostProfile::sparc_ipc());
        }
        let &(.., speed) = ERA_HOSTS.iter().find(|h| h.0 == name)?;
        HostProfile::era_host(name, speed)
    }

    /// An era host with the IPC's cost structure made `speed` times faster and its
    /// receiving per-byte work weighted by [`RECEIVE_OVER_SEND_PERMILLE`], with the limits
    /// its own sources set on top. Loopback moves no bytes through an adapter or the I/O bus
    /// (001 §4.2), so it says nothing of the driver: the per-host driver work, fragmentation
    /// work and driver gap below are set from their own sources. Where none is given, the
    /// driver's per-byte work is the IPC's (a first-generation SBus adapter's programmed
    /// I/O, fitted to 000's grid) scaled with the CPU: an *assumption* for the DMA adapters
    /// of 001 (SBA-200, PCA-200, VMA-200), range 0 (a DMA transfer costs the CPU nothing)
    /// to this (about 40 µs per 9 KB PDU received at the Challenge's speed, the most),
    /// which leaves every receiver-bound pair of 001 Table 3 where it is within its
    /// tolerance. `calibrate_loopback` calls this with candidate speeds.
    pub fn era_host(name: &str, speed: f64) -> Option<HostProfile> {
        let &(n, os, loopback, mtu, _) = ERA_HOSTS.iter().find(|h| h.0 == name)?;
        // The Alpha has no loopback measurement to split: "fast enough both ways" is
        // the assumption, whatever the split.
        let split = if n == "alpha-3000" {
            1000
        } else {
            RECEIVE_OVER_SEND_PERMILLE
        };
        let mut p = HostProfile::sparc_ipc().scaled_by(n, os, speed, loopback, split);
        p.loopback_mtu = mtu;
        if os.starts_with("Solaris") {
            // 001 §5.2: above the MSS the Ultra-1 (Solaris 2.5) pays for splitting the
            // message. How much is not published (Fig. 13 only): an *assumption*, one
            // more pass over the message at the host's copy cost, the most a split into
            // segment buffers does (range 0, a shared-buffer split, to this; Solaris
            // 2.4's STREAMS TCP taken alike).
            p.fragment_ps_per_byte = p.copy_ps_per_byte;
        }
        if n == "sparc-20" {
            // 001 §5.1: the SPARCstation 20s (Solaris 2.4) fill 93% with loopback to
            // spare: the SBA-200 driver's upper limit. Its size is not published: an
            // *assumption*, the SBA-200 firmware's 52 µs between PDUs that 002 §2.5 and §4.3
            // measured (driver 2.2.9, a lower bound there; range 0, as the Ultra-1s'
            // Solaris 2.5 release allows at most ~16 µs by their 97%, to 52 µs).
            p.driver_pdu_gap = SimTime::from_us(52);
        }
        if n == "sparc-10" {
            // The SBA-200's work on the SPARCstation 10's SBus under SunOS 4.1.3, which its
            // loopback figure cannot see: [`SPARC10_SBA200_PS_PER_BYTE`], sending and
            // receiving alike.
            p.driver_tx_ps_per_byte = SPARC10_SBA200_PS_PER_BYTE;
            p.driver_rx_ps_per_byte = SPARC10_SBA200_PS_PER_BYTE;
        }
        Some(p)
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

    /// What one full segment costs its sender (write copy, output) and its receiver
    /// (input, read copy), syscalls apart.
    fn segment_work(p: &HostProfile) -> (SimTime, SimTime) {
        let send = p.copy(9148) + p.send_cost(9148, 9188, 192);
        let receive = SimTime(p.read_copy_ps_per_byte() * 9148) + p.receive_cost(9148, 9188, 192);
        (send, receive)
    }

    #[test]
    fn receiving_costs_more_than_sending() {
        let p = HostProfile::sparc_ipc();
        assert!(p.receive_cost(9148, 9188, 192) > p.send_cost(9148, 9188, 192));
        // The IPC keeps its calibration to 000's grid: no split on top of it.
        assert_eq!(p.read_copy_ps_per_byte(), p.copy_ps_per_byte);
        // 001 §5.2 (Moldeklev et al.): every host calibrated to a loopback figure
        // receives a byte dearer than it sends one, by the split, and a whole
        // segment too.
        for name in [
            "pentium-90",
            "sparc-10",
            "pentium-100",
            "power-challenge",
            "sparc-20",
            "ultra-1",
        ] {
            let p = HostProfile::by_name(name).unwrap();
            assert_eq!(
                p.receive_bytes_permille, RECEIVE_OVER_SEND_PERMILLE,
                "{name}"
            );
            let ratio = p.read_copy_ps_per_byte() as f64 / p.copy_ps_per_byte as f64;
            assert!(
                (ratio - RECEIVE_OVER_SEND_PERMILLE as f64 / 1000.0).abs() < 0.01,
                "{name}: {ratio}"
            );
            let (send, receive) = segment_work(&p);
            assert!(
                receive > send,
                "{name}: receive {receive:?} <= send {send:?}"
            );
        }
    }

    #[test]
    fn the_split_moves_work_from_sending_to_receiving() {
        // The same host at the same speed: weighting the receive side costs the
        // receiver more and leaves the sender's work as it was.
        let ipc = HostProfile::sparc_ipc();
        let alike = ipc.scaled_by("x", "", 4.0, 1.0, 1000);
        let split = ipc.scaled_by("x", "", 4.0, 1.0, 1500);
        let (send_a, recv_a) = segment_work(&alike);
        let (send_s, recv_s) = segment_work(&split);
        assert_eq!(send_a, send_s);
        assert!(recv_s > recv_a);
    }

    #[test]
    fn fragmentation_costs_only_above_the_mss() {
        let u = HostProfile::by_name("ultra-1").unwrap();
        // 001 §5.2: one more pass at the copy cost (the assumption's default).
        assert_eq!(u.fragment_ps_per_byte, u.copy_ps_per_byte);
        assert_eq!(u.fragment_cost(9148, 9148), SimTime::ZERO);
        assert_eq!(u.fragment_cost(4096, 9148), SimTime::ZERO);
        assert_eq!(
            u.fragment_cost(18296, 9148),
            SimTime(u.copy_ps_per_byte * 18296)
        );
        let s20 = HostProfile::by_name("sparc-20").unwrap();
        assert_eq!(s20.fragment_ps_per_byte, s20.copy_ps_per_byte);
        // The 4.3BSD-derived stacks share the socket buffer's clusters (m_copy).
        for name in ["sparc-ipc", "sparc-10", "power-challenge", "alpha-3000"] {
            let p = HostProfile::by_name(name).unwrap();
            assert_eq!(p.fragment_cost(64036, 9148), SimTime::ZERO, "{name}");
        }
    }

    #[test]
    fn only_the_sparc_20s_driver_leaves_a_gap() {
        for name in HostProfile::names() {
            let gap = HostProfile::by_name(name).unwrap().driver_pdu_gap;
            let want = if name == "sparc-20" {
                SimTime::from_us(52)
            } else {
                SimTime::ZERO
            };
            assert_eq!(gap, want, "{name}");
        }
    }

    #[test]
    fn each_era_host_is_calibrated_at_its_own_oss_loopback_mtu() {
        // SunOS 4.1.3: 4.3BSD's LOMTU; Solaris 2: ip_if.c's 8 KB + 40; IRIX 6.0.1 and NT
        // 3.51: the assumptions (no source for those releases).
        for (name, mtu) in [
            ("sparc-10", 1536),
            ("sparc-20", 8232),
            ("ultra-1", 8232),
            ("power-challenge", IRIX6_LOOPBACK_MTU),
            ("pentium-90", NT351_LOOPBACK_MTU),
            ("pentium-100", NT351_LOOPBACK_MTU),
        ] {
            assert_eq!(
                HostProfile::by_name(name).unwrap().loopback_mtu,
                mtu,
                "{name}"
            );
        }
    }

    #[test]
    fn the_sparc_10s_sba200_work_is_the_same_both_ways() {
        // The SBus moves a PDU's bytes alike sending and receiving (no source sizes them
        // apart); the other era hosts keep the IPC's driver work, scaled, receiving dearer.
        let s10 = HostProfile::by_name("sparc-10").unwrap();
        assert_eq!(s10.driver_tx_ps_per_byte, SPARC10_SBA200_PS_PER_BYTE);
        assert_eq!(s10.driver_rx_ps_per_byte, SPARC10_SBA200_PS_PER_BYTE);
        // It dwarfs what the IPC's scaled driver work would charge it, sending.
        let ipc = HostProfile::sparc_ipc();
        assert!(SPARC10_SBA200_PS_PER_BYTE > 5 * ipc.driver_tx_ps_per_byte / 6);
        let u = HostProfile::by_name("ultra-1").unwrap();
        assert!(u.driver_rx_ps_per_byte > u.driver_tx_ps_per_byte);
    }

    #[test]
    fn by_name_is_era_host_at_its_calibrated_speed() {
        for &(name, .., speed) in ERA_HOSTS.iter() {
            assert_eq!(
                HostProfile::by_name(name),
                HostProfile::era_host(name, speed),
                "{name}"
            );
        }
        assert!(HostProfile::era_host("sparc-ipc", 1.0).is_none());
    }
}
