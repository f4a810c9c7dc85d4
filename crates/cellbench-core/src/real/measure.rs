//! What an agent measures on its host besides its own bytes (NetSpec's
//! measurement processes): the CPU's busy share and the agent's own CPU time
//! over the connection, the byte and drop counters of the interface the
//! connection uses, and (with a series) the sender's TCP_INFO sampled at a
//! fixed interval.
//!
//! The host figures are the kernel's: /proc/stat (every CPU, whatever runs
//! there), getrusage(RUSAGE_THREAD) (this agent's thread), /proc/net/dev (the
//! network namespace the daemon runs in). The interface is the one the main
//! routing table sends the peer's address through (/proc/net/route, longest
//! prefix; `lo` for an address of this host), as `ip route get` would name it
//! without policy rules. An interface carries every connection that uses it:
//! its counters are the interface's, not this connection's alone.

use serde::Serialize;
use std::ffi::CStr;
use std::net::IpAddr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::tcp_info::TcpInfo;

/// The aggregate `cpu` line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    /// user nice system idle iowait irq softirq steal (guest time is inside user).
    fn parse(stat: &str) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 5 {
            return None;
        }
        let total: u64 = v.iter().sum();
        // Idle and iowait are the CPU waiting; everything else is work.
        Some(CpuTimes {
            busy: total - v[3] - v[4],
            total,
        })
    }

    fn read() -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// One interface's counters from /proc/net/dev.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct DevCounters {
    rx_bytes: u64,
    rx_packets: u64,
    rx_drops: u64,
    tx_bytes: u64,
    tx_packets: u64,
    tx_drops: u64,
}

impl DevCounters {
    /// `name: rx bytes packets errs drop fifo frame compressed multicast
    ///        tx bytes packets errs drop fifo colls carrier compressed`
    fn parse(dev: &str, name: &str) -> Option<DevCounters> {
        let rest = dev.lines().find_map(|l| {
            let (n, rest) = l.split_once(':')?;
            (n.trim() == name).then_some(rest)
        })?;
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() >= 12).then(|| DevCounters {
            rx_bytes: v[0],
            rx_packets: v[1],
            rx_drops: v[3],
            tx_bytes: v[8],
            tx_packets: v[9],
            tx_drops: v[11],
        })
    }

    /// Every interface's counters now.
    fn read_all() -> Option<String> {
        std::fs::read_to_string("/proc/net/dev").ok()
    }
}

/// UDP datagrams this host's (network namespace's) sockets dropped because a
/// receive buffer was full: /proc/net/snmp's `Udp: ... RcvbufErrors`.
fn udp_rcvbuf_errors(snmp: &str) -> Option<u64> {
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next()?, udp.next()?);
    let i = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(i)?.parse().ok()
}

fn read_udp_rcvbuf_errors() -> Option<u64> {
    udp_rcvbuf_errors(&std::fs::read_to_string("/proc/net/snmp").ok()?)
}

/// The interface a route in the main table sends `peer` through: the longest
/// prefix that matches, among routes that are up (/proc/net/route for IPv4,
/// /proc/net/ipv6_route for IPv6).
fn route_interface(v4: &str, v6: &str, peer: IpAddr) -> Option<String> {
    const RTF_UP: u32 = 0x1;
    let mut best: Option<(u32, String)> = None;
    let mut consider = |len: u32, iface: &str| {
        if best.as_ref().is_none_or(|(b, _)| len > *b) {
            best = Some((len, iface.to_string()));
        }
    };
    match peer {
        IpAddr::V4(ip) => {
            // Iface Destination Gateway Flags RefCnt Use Metric Mask ...; addresses
            // as the kernel's in-memory (network order) u32 printed in hex.
            let addr = u32::from_ne_bytes(ip.octets());
            for l in v4.lines().skip(1) {
                let f: Vec<&str> = l.split_whitespace().collect();
                let hex = |i: usize| f.get(i).and_then(|x| u32::from_str_radix(x, 16).ok());
                let (Some(dest), Some(flags), Some(mask)) = (hex(1), hex(3), hex(7)) else {
                    continue;
                };
                if flags & RTF_UP != 0 && addr & mask == dest {
                    consider(mask.count_ones(), f[0]);
                }
            }
        }
        IpAddr::V6(ip) => {
            // dest plen src splen nexthop metric refcnt use flags iface
            let addr = u128::from_be_bytes(ip.octets());
            for l in v6.lines() {
                let f: Vec<&str> = l.split_whitespace().collect();
                if f.len() < 10 {
                    continue;
                }
                let (Ok(dest), Ok(plen), Ok(flags)) = (
                    u128::from_str_radix(f[0], 16),
                    u32::from_str_radix(f[1], 16),
                    u32::from_str_radix(f[8], 16),
                ) else {
                    continue;
                };
                let mask = if plen == 0 {
                    0
                } else {
                    u128::MAX << (128 - plen.min(128))
                };
                if flags & RTF_UP != 0 && addr & mask == dest {
                    consider(plen, f[9]);
                }
            }
        }
    }
    best.map(|(_, i)| i)
}

/// The interface this host sends `peer`'s traffic through (`lo` for its own address).
pub fn interface_towards(peer: IpAddr) -> Option<String> {
    if peer.is_loopback() || interface_of(peer).is_some() {
        return Some("lo".into());
    }
    let read = |f: &str| std::fs::read_to_string(f).unwrap_or_default();
    route_interface(
        &read("/proc/net/route"),
        &read("/proc/net/ipv6_route"),
        peer,
    )
}

/// The interface that holds `addr` (the connection's local address), from getifaddrs.
pub fn interface_of(addr: IpAddr) -> Option<String> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list we free below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut p = list;
    while !p.is_null() {
        // SAFETY: p is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
        let ip = unsafe {
            match (*ifa.ifa_addr).sa_family as i32 {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::from(sin.sin_addr.s_addr.to_ne_bytes())
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::from(sin6.sin6_addr.s6_addr)
                }
                _ => continue,
            }
        };
        if ip == addr {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: list came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// CPU seconds this thread has used (user + system).
fn thread_cpu_s() -> Option<f64> {
    // SAFETY: rusage is plain data, filled by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to one rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return None;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(s(ru.ru_utime) + s(ru.ru_stime))
}

/// What the host did while a connection ran: one per agent (sender, receiver).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct HostMeasure {
    /// Share of all the host's CPU time that was busy (0..1; /proc/stat).
    pub cpu_busy: Option<f64>,
    /// The agent's own CPU time over the span: 1.0 is one whole core.
    pub agent_cpu: Option<f64>,
    /// The interface holding the connection's local address.
    pub interface: Option<String>,
    pub if_rx_bytes: Option<u64>,
    pub if_rx_packets: Option<u64>,
    pub if_rx_drops: Option<u64>,
    pub if_tx_bytes: Option<u64>,
    pub if_tx_packets: Option<u64>,
    pub if_tx_drops: Option<u64>,
    /// UDP datagrams dropped at a full socket receive buffer on this host (every
    /// UDP socket of the daemon's network namespace counts).
    pub udp_rcvbuf_errors: Option<u64>,
}

/// Where the CPU's and the agent's time stood when the connection began.
struct CpuMark {
    at: Instant,
    cpu: Option<CpuTimes>,
    thread_cpu: Option<f64>,
}

/// Counters read at the start of a connection; `finish` reads them again.
pub struct HostProbe {
    interface: Option<String>,
    /// /proc/net/dev at the start: every interface, as a sink learns its peer late.
    dev: Option<String>,
    udp_rcvbuf_errors: Option<u64>,
    cpu: Option<CpuMark>,
}

impl HostProbe {
    /// Start measuring, the interface towards `peer` and the CPU, on the agent's own
    /// thread (its CPU time is the thread's).
    pub fn start(peer: Option<IpAddr>) -> HostProbe {
        let mut p = HostProbe::counting();
        p.towards(peer);
        p.start_cpu();
        p
    }

    /// Only the interface counters from now: a sink counts from before its source
    /// may send (on loopback a sender moves hundreds of KB in the moment between a
    /// connection's arrival and its accept); `towards` names the interface once the
    /// peer is known, `start_cpu` starts the CPU span.
    pub fn counting() -> HostProbe {
        HostProbe {
            dev: DevCounters::read_all(),
            udp_rcvbuf_errors: read_udp_rcvbuf_errors(),
            interface: None,
            cpu: None,
        }
    }

    /// The connection's peer: its traffic crosses the interface routed towards it.
    pub fn towards(&mut self, peer: Option<IpAddr>) {
        self.interface = peer.and_then(interface_towards);
    }

    /// The CPU span begins now (the connection's first byte or accept).
    pub fn start_cpu(&mut self) {
        self.cpu = Some(CpuMark {
            at: Instant::now(),
            cpu: CpuTimes::read(),
            thread_cpu: thread_cpu_s(),
        });
    }

    /// The differences since the starts; call on the same thread.
    pub fn finish(self) -> HostMeasure {
        let (cpu, agent) = match self.cpu {
            None => (None, None),
            Some(m) => {
                let wall = m.at.elapsed().as_secs_f64();
                let cpu = m.cpu.zip(CpuTimes::read()).and_then(|(a, b)| {
                    let total = b.total.saturating_sub(a.total);
                    (total > 0).then(|| b.busy.saturating_sub(a.busy) as f64 / total as f64)
                });
                let agent = m
                    .thread_cpu
                    .zip(thread_cpu_s())
                    .and_then(|(a, b)| (wall > 0.0).then(|| (b - a).max(0.0) / wall));
                (cpu, agent)
            }
        };
        let dev = self.interface.as_deref().and_then(|name| {
            let before = DevCounters::parse(self.dev.as_deref()?, name)?;
            Some((before, DevCounters::parse(&DevCounters::read_all()?, name)?))
        });
        let d = |f: fn(&DevCounters) -> u64| dev.map(|(a, b)| f(&b).saturating_sub(f(&a)));
        HostMeasure {
            cpu_busy: cpu,
            agent_cpu: agent,
            if_rx_bytes: d(|c| c.rx_bytes),
            if_rx_packets: d(|c| c.rx_packets),
            if_rx_drops: d(|c| c.rx_drops),
            if_tx_bytes: d(|c| c.tx_bytes),
            if_tx_packets: d(|c| c.tx_packets),
            if_tx_drops: d(|c| c.tx_drops),
            udp_rcvbuf_errors: self
                .udp_rcvbuf_errors
                .zip(read_udp_rcvbuf_errors())
                .map(|(a, b)| b.saturating_sub(a)),
            interface: self.interface,
        }
    }
}

/// One TCP_INFO sample as the cwnd series stores it: epoch seconds, then cwnd,
/// ssthresh and data in flight in bytes (segments × MSS), then srtt in µs.
/// An ssthresh not yet set (Linux's "infinite", 2^31 − 1 segments) stays that
/// many segments' bytes: far off the scale, as the simulator's initial one.
pub type TcpSample = (f64, u64, u64, u64, u32);

fn sample_of(info: &TcpInfo, t: f64) -> TcpSample {
    let mss = info.snd_mss as u64;
    (
        t,
        info.snd_cwnd as u64 * mss,
        info.snd_ssthresh as u64 * mss,
        info.unacked as u64 * mss,
        info.rtt_us,
    )
}

/// A thread reading a TCP socket's TCP_INFO every `interval` until finished.
/// It must finish (or be dropped) before the socket closes: dropping joins it.
pub struct Sampler {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<TcpSample>>>,
}

impl Sampler {
    pub fn start(
        fd: RawFd,
        interval: Duration,
        epoch: impl Fn(Instant) -> f64 + Send + 'static,
    ) -> Sampler {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::spawn(move || {
            let mut out = Vec::new();
            let first = Instant::now();
            let mut k = 0u32;
            loop {
                let now = Instant::now();
                if let Ok(info) = TcpInfo::read(fd) {
                    out.push(sample_of(&info, epoch(now)));
                }
                if flag.load(Ordering::Relaxed) {
                    return out;
                }
                // A fixed grid (not sleep-after-read), so the interval does not drift.
                k += 1;
                let due = first + interval * k;
                // Sleep in short pieces so that finishing costs at most a few ms.
                while Instant::now() < due && !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(
                        (due - Instant::now().min(due)).min(Duration::from_millis(5)),
                    );
                }
            }
        });
        Sampler {
            done,
            thread: Some(thread),
        }
    }

    /// Stop (after one last sample) and return the samples.
    pub fn finish(mut self) -> Vec<TcpSample> {
        self.stop()
    }

    fn stop(&mut self) -> Vec<TcpSample> {
        self.done.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Linux's "no threshold yet" ssthresh (TCP_INFINITE_SSTHRESH).
    const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

    #[test]
    fn test_parse_proc_stat() {
        let stat = "cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n";
        let t = CpuTimes::parse(stat).unwrap();
        assert_eq!(t.total, 980);
        assert_eq!(t.busy, 980 - 800 - 20);
        assert_eq!(CpuTimes::parse("intr 1 2 3\n"), None);
    }

    #[test]
    fn test_parse_proc_net_dev() {
        let dev = "Inter-|   Receive                                                |  Transmit\n \
                   face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
                   lo: 1000 10 0 1 0 0 0 0 2000 20 0 2 0 0 0 0\n  \
                   veth0: 5 6 7 8 0 0 0 0 9 10 11 12 0 0 0 0\n";
        let lo = DevCounters::parse(dev, "lo").unwrap();
        assert_eq!(
            (lo.rx_bytes, lo.rx_drops, lo.tx_bytes, lo.tx_drops),
            (1000, 1, 2000, 2)
        );
        let v = DevCounters::parse(dev, "veth0").unwrap();
        assert_eq!((v.rx_packets, v.tx_packets, v.tx_drops), (6, 10, 12));
        assert_eq!(DevCounters::parse(dev, "eth9"), None);
    }

    #[test]
    fn test_loopback_is_lo() {
        assert_eq!(
            interface_of(IpAddr::from([127, 0, 0, 1])).as_deref(),
            Some("lo")
        );
        assert_eq!(interface_of(IpAddr::from([192, 0, 2, 123])), None);
        assert_eq!(
            interface_towards(IpAddr::from([127, 0, 0, 2])).as_deref(),
            Some("lo")
        );
    }

    #[test]
    fn test_parse_snmp_udp() {
        let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
                    Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                    Udp: 10 2 7 20 6 0\nUdpLite: InDatagrams\nUdpLite: 0\n";
        assert_eq!(udp_rcvbuf_errors(snmp), Some(6));
        assert_eq!(udp_rcvbuf_errors("Ip: a\nIp: 1\n"), None);
    }

    #[test]
    fn test_route_longest_prefix() {
        // Little-endian dumps: 192.0.2.1 is 010200C0; a default route and a /24.
        let v4 =
            "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n\
                  eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                  vab\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
                  down\t050200C0\t00000000\t0000\t0\t0\t0\tFFFFFFFF\t0\t0\t0\n";
        let go = |ip: [u8; 4]| route_interface(v4, "", IpAddr::from(ip));
        if cfg!(target_endian = "little") {
            assert_eq!(go([192, 0, 2, 5]).as_deref(), Some("vab"));
            assert_eq!(go([198, 51, 100, 1]).as_deref(), Some("eth0"));
        }
        let v6 = "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 \
                  00000000000000000000000000000000 00000100 00000001 00000000 00000001 veth6\n\
                  00000000000000000000000000000000 00 00000000000000000000000000000000 00 \
                  00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n";
        let six = |s: &str| route_interface("", v6, s.parse().unwrap());
        assert_eq!(six("fd00::7").as_deref(), Some("veth6"));
        assert_eq!(six("2001:db8::1").as_deref(), Some("eth0"));
    }

    #[test]
    fn test_host_probe_counts_a_busy_thread() {
        let p = HostProbe::start(Some(IpAddr::from([127, 0, 0, 1])));
        assert_eq!(p.interface.as_deref(), Some("lo"));
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(100) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let m = p.finish();
        assert_eq!(m.interface.as_deref(), Some("lo"));
        // A spinning thread uses up to a core (how much depends on the machine's load).
        let agent = m.agent_cpu.unwrap();
        assert!(agent > 0.0 && agent < 1.1, "{m:?}");
        let busy = m.cpu_busy.unwrap();
        assert!(busy > 0.0 && busy <= 1.0, "{m:?}");
        assert!(m.if_rx_bytes.is_some());
    }

    #[test]
    fn test_sample_in_bytes() {
        let info = TcpInfo {
            snd_mss: 1000,
            snd_cwnd: 10,
            snd_ssthresh: INFINITE_SSTHRESH,
            unacked: 4,
            rtt_us: 250,
            ..TcpInfo::default()
        };
        let s = sample_of(&info, 1.5);
        assert_eq!((s.0, s.1, s.3, s.4), (1.5, 10_000, 4000, 250));
        assert!(s.2 > 1 << 40, "an unset ssthresh stays off the scale");
        let info = TcpInfo {
            snd_ssthresh: 7,
            ..info
        };
        assert_eq!(sample_of(&info, 2.0).2, 7000);
    }
}
