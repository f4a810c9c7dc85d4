//! The sink: listen (TCP) or bind (UDP) from the moment it exists, then read
//! until the source has finished, a stall or the deadline. Its clock, as ttcp
//! -r's: over TCP from the moment accept() returns (ttcp.c calls prep_timer()
//! right after accept; netperf's recv_tcp_stream starts its own there too), over
//! UDP from the first datagram; to the last byte read.

use super::clock::{instant_of, EpochMap};
use super::limits;
use super::measure::HostProbe;
use super::report::SinkReport;
use super::socket::{self, is_timeout, SocketOptions};
use super::spec::{Protocol, SinkSpec};
use super::stop::{Stop, SLICE};
use super::tcp_info::TcpInfo;
use super::AgentError;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// A sink ready for its source: listening (TCP) or bound (UDP) from the moment
/// it exists, so a source starting at the agreed time finds it.
pub struct Sink {
    spec: SinkSpec,
    socket: SinkSocket,
}

enum SinkSocket {
    Tcp(std::net::TcpListener),
    Udp(std::net::UdpSocket),
}

impl Sink {
    pub fn bind(spec: SinkSpec) -> Result<Sink, AgentError> {
        if spec.blocksize == 0 {
            return Err(AgentError("blocksize 0: expected at least 1 byte".into()));
        }
        let opts = SocketOptions {
            rcvbuf: spec.rcvbuf,
            window_clamp: spec.window_clamp,
            ..SocketOptions::default()
        };
        let socket = match spec.protocol {
            Protocol::Tcp => SinkSocket::Tcp(socket::tcp_listen(spec.bind, &opts)?),
            Protocol::Udp => SinkSocket::Udp(socket::udp_socket(Some(spec.bind), None, &opts)?),
        };
        Ok(Sink { spec, socket })
    }

    /// Read until the source has finished or the deadline; report.
    pub fn run(self) -> Result<SinkReport, AgentError> {
        let clock = EpochMap::new();
        let mut deadline = instant_of(self.spec.deadline_at);
        // A daemon's sink waits at most its --max-duration and a grace, whatever it was asked.
        if let Some(l) = limits::process_limits() {
            deadline = deadline.min(Instant::now() + l.max_duration + limits::SINK_GRACE);
        }
        let mut report = SinkReport::default();
        let mut buf = vec![0u8; self.spec.blocksize.max(1)];
        let (mut first, mut last) = (None, None);
        // TCP: when accept() returned, where the receiver's clock starts.
        let mut accepted = None;
        let left = || deadline.saturating_duration_since(Instant::now());
        let stop = Stop(self.spec.group.as_deref());
        let mut probe = HostProbe::counting();
        match self.socket {
            SinkSocket::Tcp(listener) => {
                loop {
                    stop.check()?;
                    let wait = left();
                    if wait.is_zero() {
                        report.timed_out = true;
                        return Ok(report);
                    }
                    if socket::wait_readable(listener.as_raw_fd(), wait.min(SLICE))? {
                        break;
                    }
                }
                let (mut s, peer) = listener.accept()?;
                accepted = Some(Instant::now());
                drop(listener);
                let stall = self
                    .spec
                    .stall_timeout_s
                    .map(|s| Duration::from_secs_f64(s.max(0.001)));
                let mut progress = Instant::now();
                probe.towards(Some(peer.ip()));
                probe.start_cpu();
                report.rcvbuf_granted = socket::buffer_sizes(s.as_raw_fd()).1;
                loop {
                    let wait = left();
                    if wait.is_zero() {
                        report.timed_out = true;
                        break;
                    }
                    s.set_read_timeout(Some(wait.min(SLICE)))?;
                    match s.read(&mut buf) {
                        // The source's close may be the echo of a stop of the group:
                        // then this sink was stopped too, not finished.
                        Ok(0) => {
                            stop.check()?;
                            break;
                        }
                        Ok(n) => {
                            let t = Instant::now();
                            first.get_or_insert(t);
                            last = Some(t);
                            progress = t;
                            report.bytes += n as u64;
                            report.reads += 1;
                            if let Some(w) = self.spec.window_clamp {
                                socket::reclamp_window(s.as_raw_fd(), w);
                            }
                            stop.check()?;
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if is_timeout(&e) => {
                            stop.check()?;
                            // Nothing for the stall timeout: over, as at the deadline.
                            if stall.is_some_and(|d| progress.elapsed() >= d) {
                                report.timed_out = true;
                                break;
                            }
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                // What the receiver's autotuning reached (it only grows the buffer).
                report.rcvbuf_end = socket::buffer_sizes(s.as_raw_fd()).1;
                report.rcv_space = TcpInfo::read(s.as_raw_fd()).ok().map(|i| i.rcv_space);
            }
            SinkSocket::Udp(s) => {
                report.rcvbuf_granted = socket::buffer_sizes(s.as_raw_fd()).1;
                let idle = Duration::from_secs_f64(self.spec.idle_timeout_s.max(0.001));
                loop {
                    stop.check()?;
                    // Before the first datagram, wait up to the deadline; after, idle ends it.
                    if let Some(t) = last {
                        if t.elapsed() >= idle {
                            break;
                        }
                    }
                    let wait = left();
                    if wait.is_zero() {
                        report.timed_out = true;
                        break;
                    }
                    s.set_read_timeout(Some(wait.min(SLICE)))?;
                    match s.recv_from(&mut buf) {
                        Ok((0, _)) if first.is_some() => break,
                        Ok((0, _)) => {}
                        Ok((n, from)) => {
                            let t = Instant::now();
                            if first.is_none() {
                                probe.towards(Some(from.ip()));
                                probe.start_cpu();
                            }
                            first.get_or_insert(t);
                            last = Some(t);
                            report.bytes += n as u64;
                            report.datagrams += 1;
                            report.reads += 1;
                            stop.check()?;
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // A slice without data: the loop looks at idle, deadline and stop.
                        // (Idle after data: the end marker was lost; the data is all there is.)
                        Err(e) if is_timeout(&e) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
        report.host = probe.finish();
        report.accepted_at = accepted.map(|t| clock.at(t));
        if let (Some(a), Some(b)) = (first, last) {
            report.first_at = Some(clock.at(a));
            report.last_at = Some(clock.at(b));
            report.read_seconds = (b - a).as_secs_f64();
            report.seconds = (b - accepted.unwrap_or(a)).as_secs_f64();
            if report.seconds > 0.0 {
                report.throughput_bps = report.bytes as f64 * 8.0 / report.seconds;
            }
        }
        Ok(report)
    }
}
