//! Traffic agents on real kernel sockets (the `real` engine): a source and a
//! sink per connection, each a blocking loop on its own thread, so the Python
//! side releases the GIL around them and many run side by side.
//!
//! - The source writes blocks of `blocksize` either as fast as the socket takes
//!   them (ttcp's and NetSpec's "full blast") or one block every `period_us`
//!   (NetSpec's burst: constant rate), until `nbytes` are written or `duration_s`
//!   has passed. A paced block is due at `t0 + k * period`; a block that starts
//!   after the next one was due is *late*: it is still written (the schedule
//!   is kept, so the long-run rate holds) and counted, with the timing error of
//!   every block (start of write minus due time) summarised as p50/p99/max.
//! - Throughput is ttcp's: bytes over the time from just before the first write
//!   to just after the last write returns, at the sender.
//! - The sink reads `blocksize` at a time and counts bytes until the source
//!   closes (TCP) or sends its end marker (UDP: empty datagrams, as ttcp's
//!   small ones), or until its deadline.
//! - Random-rate traffic draws each block's size and interval from the
//!   simulator's laws and stream for the same connection (`traffic::Schedule`).
//! - Each agent measures its host over the connection (`measure`: CPU, the
//!   interface's counters) and, with a series, the source samples TCP_INFO.
//!   A congestion control or MSS the kernel refuses is a note, not a failure.
//!
//! Wall-clock instants (`*_at`) are seconds since the Unix epoch on this host's
//! clock; the controller maps them onto its own.

pub mod limits;
pub mod measure;
mod pacer;
mod socket;
pub mod tcp_info;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::traffic::{RandomSpec, Schedule};
use limits::RateCap;
use measure::{HostMeasure, HostProbe, Sampler, TcpSample};
pub use socket::SocketOptions;
pub use tcp_info::TcpInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Udp,
}

/// Empty datagrams a UDP source sends after its data; several, as a lost one
/// would otherwise leave the sink waiting for its idle timeout.
const UDP_END_MARKERS: usize = 5;
/// The largest UDP payload over IPv4.
const UDP_MAX_PAYLOAD: usize = 65507;
/// Pacing sleeps until this close to a block's due time, then spins: a timer
/// wake-up is late by tens of µs, a spin by well under one (pacer.rs).
const SPIN: Duration = Duration::from_micros(60);

/// How far ahead of the daemon's rate cap a full blast may run (as time at the cap).
const CAP_BURST: Duration = Duration::from_millis(10);

/// Sleep until `t` without the final spin, in slices that watch for a stop: a rate
/// cap's wait, where waking late only lowers the rate.
fn wait_until(t: Instant, stop: Stop) -> Result<(), AgentError> {
    loop {
        let now = Instant::now();
        if t <= now {
            return Ok(());
        }
        pacer::sleep_until(t.min(now + SLICE));
        stop.check()?;
    }
}

/// Every blocking wait of an agent is cut into slices this long, so that a stop
/// (the controller interrupted) ends it within one slice.
const SLICE: Duration = Duration::from_millis(100);

/// Groups (one per controller run) whose agents must stop.
static STOPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
/// Whether any group was ever stopped: the per-block check is one relaxed load
/// until then, so a full-blast loop pays nothing for it.
static ANY_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stop every agent of `group` on this host within about 100 ms (they fail with
/// "stopped"); later agents of the group stop at once.
pub fn stop(group: &str) {
    let mut g = STOPPED.lock().unwrap_or_else(|e| e.into_inner());
    if !g.iter().any(|x| x == group) {
        g.push(group.to_string());
    }
    ANY_STOPPED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// An agent's view of the stop registry.
#[derive(Clone, Copy)]
struct Stop<'a>(Option<&'a str>);

impl Stop<'_> {
    fn requested(&self) -> bool {
        match self.0 {
            None => false,
            Some(_) if !ANY_STOPPED.load(std::sync::atomic::Ordering::Relaxed) => false,
            Some(g) => STOPPED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|x| x == g),
        }
    }

    fn check(&self) -> Result<(), AgentError> {
        if self.requested() {
            Err(AgentError("stopped by the controller".into()))
        } else {
            Ok(())
        }
    }
}

/// A transmitter: where to send and what.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub protocol: Protocol,
    /// This host's address to send from (port 0: any).
    #[serde(default)]
    pub bind: Option<IpAddr>,
    pub peer: SocketAddr,
    #[serde(default)]
    pub sndbuf: Option<u32>,
    #[serde(default)]
    pub nodelay: bool,
    #[serde(default)]
    pub congestion: Option<String>,
    #[serde(default)]
    pub mss: Option<u32>,
    /// Bytes per write; with a drawn size (`random`), the largest a write may be.
    pub blocksize: usize,
    /// One block every this many µs; none: full blast.
    #[serde(default)]
    pub period_us: Option<f64>,
    /// Random-rate traffic: block sizes and/or periods drawn for every block.
    #[serde(default)]
    pub random: Option<RandomSpec>,
    /// Sample TCP_INFO every this many µs (the cwnd series); none: no series.
    #[serde(default)]
    pub series_interval_us: Option<f64>,
    #[serde(default)]
    pub nbytes: Option<u64>,
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// When to send the first byte (epoch seconds, this host's clock).
    pub start_at: f64,
    /// How long to keep retrying a refused connection (the sink not yet listening).
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_s: f64,
    /// How long a TCP source waits, after its last write, for the sink to close.
    #[serde(default = "default_drain_timeout")]
    pub drain_timeout_s: f64,
    /// The controller's run: `stop(group)` ends this agent.
    #[serde(default)]
    pub group: Option<String>,
    /// Pace at a real-time priority where the process may (and its limits, if it
    /// set any, allow: limits.rs).
    #[serde(default)]
    pub realtime: bool,
    /// A full-blast source never runs ahead of this rate (the emulator's cap; a
    /// daemon's own cap is its process's, limits.rs, whatever this says).
    #[serde(default)]
    pub max_rate_bps: Option<f64>,
    /// TCP: end the transfer when its writes take nothing for this long (the
    /// emulator's --stall-timeout: a path that discards every segment leaves the
    /// kernel in retransmission backoff for minutes), reporting what was written.
    #[serde(default)]
    pub stall_timeout_s: Option<f64>,
}

fn default_connect_timeout() -> f64 {
    5.0
}

fn default_drain_timeout() -> f64 {
    30.0
}

/// A receiver: where to listen.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SinkSpec {
    pub protocol: Protocol,
    pub bind: SocketAddr,
    #[serde(default)]
    pub rcvbuf: Option<u32>,
    /// TCP: advertise at most this window (TCP_WINDOW_CLAMP; the emulator sets
    /// it to the file's window, which Linux's SO_RCVBUF only approximates).
    #[serde(default)]
    pub window_clamp: Option<u32>,
    pub blocksize: usize,
    /// Give up (and report what arrived) at this instant (epoch seconds).
    pub deadline_at: f64,
    /// UDP: the transfer is over after this long without a datagram.
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_s: f64,
    /// The controller's run: `stop(group)` ends this agent.
    #[serde(default)]
    pub group: Option<String>,
    /// TCP: give up (as at the deadline) after this long without data from the
    /// accept on (the emulator's --stall-timeout).
    #[serde(default)]
    pub stall_timeout_s: Option<f64>,
}

fn default_idle_timeout() -> f64 {
    2.0
}

/// Pacing accuracy of a constant-rate source, µs.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Timing {
    pub late_blocks: u64,
    /// Whether the pacing thread ran at a real-time priority (pacer.rs).
    pub realtime: bool,
    pub error_p50_us: f64,
    pub error_p99_us: f64,
    pub error_max_us: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SourceReport {
    pub bytes: u64,
    pub blocks: u64,
    /// Just before the first write, and just after the last write returned.
    pub started_at: f64,
    pub ended_at: f64,
    pub seconds: f64,
    pub throughput_bps: f64,
    /// How late the first write was against `start_at` (s; 0 when on time).
    pub start_late_s: f64,
    /// Constant rate only.
    pub timing: Option<Timing>,
    /// UDP writes the kernel refused (ENOBUFS and the like): the data was not sent.
    pub send_errors: u64,
    /// Writes that waited for a rate cap (`max_rate_bps`, or the process's: limits.rs)
    /// beyond their own bytes' time at it.
    pub cap_waits: u64,
    /// The rate cap this source ran under (the lower of the two), bit/s.
    pub cap_bps: Option<f64>,
    /// How long its writes waited for a rate cap in all, s.
    pub cap_wait_s: f64,
    pub sndbuf_granted: Option<u32>,
    pub congestion: Option<String>,
    /// TCP, read once the sink has closed (every byte acknowledged).
    pub tcp_info: Option<TcpInfo>,
    /// This host from the first write until the sink closed (TCP) or the last write (UDP).
    pub host: HostMeasure,
    /// TCP_INFO every `series_interval_us`: (epoch s, cwnd, ssthresh, flight bytes, srtt µs).
    pub series: Option<Vec<TcpSample>>,
    /// What the kernel refused or changed (a congestion control, an MSS), one line each.
    pub notes: Vec<String>,
    /// Ended by `stall_timeout_s`: nothing was taken for that long.
    pub stalled: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SinkReport {
    pub bytes: u64,
    pub reads: u64,
    pub datagrams: u64,
    pub first_at: Option<f64>,
    pub last_at: Option<f64>,
    pub seconds: f64,
    pub throughput_bps: f64,
    pub rcvbuf_granted: Option<u32>,
    /// The deadline passed before the source finished.
    pub timed_out: bool,
    /// This host until the end: the CPU from the accept (TCP) or the first datagram
    /// (UDP), the interface from the moment the sink listens.
    pub host: HostMeasure,
}

/// An agent's failure: which step, and the kernel's word for it.
#[derive(Debug)]
pub struct AgentError(pub String);

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AgentError {}

impl From<io::Error> for AgentError {
    fn from(e: io::Error) -> Self {
        AgentError(e.to_string())
    }
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The monotonic instant matching an epoch time on this host's clock.
fn instant_of(epoch: f64) -> Instant {
    let (now, wall) = (Instant::now(), now_epoch());
    if epoch >= wall {
        now + Duration::from_secs_f64(epoch - wall)
    } else {
        now.checked_sub(Duration::from_secs_f64(wall - epoch))
            .unwrap_or(now)
    }
}

/// Epoch seconds of a monotonic instant (for reports).
#[derive(Clone, Copy)]
struct EpochMap {
    base: Instant,
    wall: f64,
}

impl EpochMap {
    fn new() -> Self {
        EpochMap {
            base: Instant::now(),
            wall: now_epoch(),
        }
    }

    fn at(&self, t: Instant) -> f64 {
        if t >= self.base {
            self.wall + (t - self.base).as_secs_f64()
        } else {
            self.wall - (self.base - t).as_secs_f64()
        }
    }
}

/// Sleep until `due`: absolute timer sleeps (in slices, watching for a stop)
/// to within SPIN, then a spin.
fn sleep_until(due: Instant, stop: Stop) -> Result<(), AgentError> {
    loop {
        let now = Instant::now();
        if due <= now + SPIN {
            break;
        }
        pacer::sleep_until((due - SPIN).min(now + SLICE));
        stop.check()?;
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
    Ok(())
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl SourceSpec {
    fn check(&self) -> Result<(), AgentError> {
        if self.blocksize == 0 {
            return Err(AgentError("blocksize 0: expected at least 1 byte".into()));
        }
        if self.protocol == Protocol::Udp && self.blocksize > UDP_MAX_PAYLOAD {
            return Err(AgentError(format!(
                "UDP blocksize {}: expected at most {UDP_MAX_PAYLOAD} bytes (one datagram)",
                self.blocksize
            )));
        }
        if self.nbytes.is_none() == self.duration_s.is_none() {
            return Err(AgentError(
                "a source needs exactly one of nbytes and duration_s".into(),
            ));
        }
        if let Some(p) = self.period_us {
            if !(p > 0.0 && p.is_finite()) {
                return Err(AgentError(format!("period {p} µs: expected > 0")));
            }
        }
        if let Some(i) = self.series_interval_us {
            if !(i >= 100.0 && i.is_finite()) {
                return Err(AgentError(format!(
                    "series interval {i} µs: expected at least 100 µs"
                )));
            }
        }
        Ok(())
    }

    fn options(&self) -> SocketOptions {
        SocketOptions {
            sndbuf: self.sndbuf,
            rcvbuf: None,
            nodelay: self.nodelay,
            congestion: self.congestion.clone(),
            mss: self.mss,
            window_clamp: None,
        }
    }

    /// Whether the transfer is over: `nbytes` sent, or `now` at or past the end.
    fn over(&self, sent: u64, now: Instant, end: Option<Instant>) -> bool {
        match self.nbytes {
            Some(n) => sent >= n,
            None => now >= end.expect("duration_s checked"),
        }
    }

    fn paced(&self) -> bool {
        self.period_us.is_some() || self.random.as_ref().is_some_and(|r| r.period_us.is_some())
    }

    /// The blocks this source writes and when each is due, from its first.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.blocksize, self.period_us, self.random.as_ref())
    }
}

/// The writer half of a source: a TCP stream or a connected UDP socket.
enum Writer {
    Tcp(std::net::TcpStream),
    Udp(std::net::UdpSocket),
}

impl Writer {
    /// Write one block: the bytes the kernel took, None when it refused a UDP
    /// datagram. A TCP write blocked on a full send buffer wakes every SLICE
    /// (SO_SNDTIMEO) to look for a stop, and for a timed stream's `end`: a peer that
    /// takes nothing (a path that discards every segment) cannot hold the writer past
    /// it, and the block counts only the bytes taken by then.
    /// With `stall`, a write that takes nothing for that long ends it too (`stalled`).
    fn write_block(
        &mut self,
        block: &[u8],
        stop: Stop,
        end: Option<Instant>,
        stall: Option<Duration>,
        stalled: &mut bool,
    ) -> Result<Option<usize>, AgentError> {
        match self {
            Writer::Tcp(s) => {
                let mut off = 0;
                let mut progress = Instant::now();
                while off < block.len() {
                    match s.write(&block[off..]) {
                        Ok(n) => {
                            off += n;
                            progress = Instant::now();
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if is_timeout(&e) => {
                            stop.check()?;
                            if end.is_some_and(|end| Instant::now() >= end) {
                                break;
                            }
                            if stall.is_some_and(|d| progress.elapsed() >= d) {
                                *stalled = true;
                                break;
                            }
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(Some(off))
            }
            Writer::Udp(s) => match s.send(block) {
                Ok(_) => Ok(Some(block.len())),
                Err(e)
                    if e.raw_os_error() == Some(libc::ENOBUFS)
                        || e.kind() == io::ErrorKind::ConnectionRefused =>
                {
                    Ok(None)
                }
                Err(e) => Err(e.into()),
            },
        }
    }

    fn raw_fd(&self) -> i32 {
        match self {
            Writer::Tcp(s) => s.as_raw_fd(),
            Writer::Udp(s) => s.as_raw_fd(),
        }
    }
}

/// Run a source to its end and report.
pub fn run_source(spec: &SourceSpec) -> Result<SourceReport, AgentError> {
    spec.check()?;
    let clock = EpochMap::new();
    let start = instant_of(spec.start_at);
    // The process's own limits (a daemon's), whatever the spec says.
    let limits = limits::process_limits();
    if let Some(l) = limits {
        if let Some(why) = l.refuse_destination(spec.peer.ip()) {
            return Err(AgentError(why));
        }
        if start > Instant::now() + l.max_duration {
            return Err(AgentError(format!(
                "refused: a start {:.0} s away is beyond the daemon's --max-duration",
                spec.start_at - now_epoch()
            )));
        }
    }
    let opts = spec.options();
    let local = spec.bind.map(|ip| SocketAddr::new(ip, 0));
    let stop = Stop(spec.group.as_deref());
    let realtime = spec.realtime && limits.is_none_or(|l| l.realtime);
    // Raised for the whole transfer (the start is paced too), put back on return.
    let priority = spec.paced().then(|| pacer::Priority::raise(realtime));
    // TCP connects at the start time (the sink listens from before it), so the
    // handshake is part of no one's throughput but the connection is fresh.
    sleep_until(start, stop)?;
    let mut notes = Vec::new();
    let mut writer = match spec.protocol {
        Protocol::Tcp => {
            let timeout = Duration::from_secs_f64(spec.connect_timeout_s.max(0.0));
            let s = socket::tcp_connect(
                local,
                spec.peer,
                &opts,
                timeout,
                &|| stop.requested(),
                &mut notes,
            )?;
            stop.check()?;
            s.set_write_timeout(Some(SLICE))?;
            Writer::Tcp(s)
        }
        Protocol::Udp => Writer::Udp(socket::udp_socket(local, Some(spec.peer), &opts)?),
    };
    let fd = writer.raw_fd();
    let mut report = SourceReport {
        sndbuf_granted: socket::buffer_sizes(fd).0,
        congestion: (spec.protocol == Protocol::Tcp)
            .then(|| socket::congestion(fd))
            .flatten(),
        ..SourceReport::default()
    };
    if let (Some(asked), Ok(info)) = (spec.mss, TcpInfo::read(fd)) {
        notes.extend(socket::mss_note(asked, info.snd_mss));
    }
    let host = HostProbe::start(Some(spec.peer.ip()));
    let mut sampler = spec
        .series_interval_us
        .filter(|_| spec.protocol == Protocol::Tcp)
        .map(|us| Sampler::start(fd, Duration::from_secs_f64(us * 1e-6), move |t| clock.at(t)));
    let block = vec![0x5au8; spec.blocksize];
    let mut schedule = spec.schedule();
    // The spec's own cap (the emulator's): a full blast may run ahead of it by a
    // burst (10 ms at the cap, at least 4 blocks), so that writes returning at once
    // into an empty send buffer pass without counting as held.
    let own_cap = spec.max_rate_bps.map(RateCap::new);
    let own_burst = own_cap
        .as_ref()
        .map(|c| CAP_BURST.max(c.time_of(4 * spec.blocksize)));
    report.cap_bps = [spec.max_rate_bps, limits.map(|l| l.cap.rate_bps())]
        .into_iter()
        .flatten()
        .reduce(f64::min);
    let t0 = Instant::now();
    report.start_late_s = (t0 - start.min(t0)).as_secs_f64();
    let end = spec.duration_s.map(|d| t0 + Duration::from_secs_f64(d));
    // The daemon's --max-duration ends any transfer, a byte count's too.
    let hard_end = limits.map(|l| t0 + l.max_duration);
    let write_end = match (end, hard_end) {
        (Some(e), Some(h)) => Some(e.min(h)),
        (e, h) => e.or(h),
    };
    let mut errors_ns: Vec<u64> = Vec::new();
    let mut late = 0u64;
    let mut last_return = t0;
    let stall = spec
        .stall_timeout_s
        .map(|s| Duration::from_secs_f64(s.max(0.001)));
    let mut stalled = false;
    loop {
        let next = schedule.next(spec.nbytes.map(|n| n.saturating_sub(report.bytes)));
        let (len, due) = (next.len, next.due.map(|d| t0 + d));
        // A duration ends the schedule: no block is due at or after the end.
        let decide_at = due.unwrap_or_else(Instant::now);
        if spec.over(report.bytes, decide_at, end) {
            break;
        }
        if hard_end.is_some_and(|h| decide_at >= h) {
            notes.push("ended at the daemon's --max-duration".into());
            break;
        }
        stop.check()?;
        let paced = due.zip(next.interval);
        if let Some((due, _)) = paced {
            sleep_until(due, stop)?;
        } else if let (Some(cap), Some(burst)) = (&own_cap, own_burst) {
            let at = cap.reserve(len, burst, false);
            let now = Instant::now();
            if at > now {
                report.cap_waits += 1;
                report.cap_wait_s += (at - now).as_secs_f64();
                wait_until(at, stop)?;
            }
        }
        // The process's cap, shared by all its sources: a full blast's write waits
        // until its own bytes' time at the cap has passed since the previous write
        // of any source (limits::RateCap, no tolerance), so however short the blast
        // its rate stays under the cap; a paced block only for the bytes reserved
        // before it (it is on time whenever the total is under the cap).
        if let Some(l) = limits {
            let tolerance = if paced.is_some() {
                l.cap.time_of(len)
            } else {
                Duration::ZERO
            };
            let fresh = report.blocks == 0;
            let at = l.cap.reserve(len, tolerance, fresh && paced.is_none());
            let now = Instant::now();
            if at > now {
                // Held: the source (or all of them) ran ahead of the cap.
                if !fresh {
                    report.cap_waits += 1;
                    report.cap_wait_s += (at - now).as_secs_f64();
                }
                wait_until(at, stop)?;
            }
        }
        // Late: it starts after the next block was due.
        if let Some((due, p)) = paced {
            let error = Instant::now() - due;
            if error > p {
                late += 1;
            }
            errors_ns.push(error.as_nanos() as u64);
        }
        let took = writer.write_block(&block[..len], stop, write_end, stall, &mut stalled)?;
        match took {
            Some(n) => report.bytes += n as u64,
            None => report.send_errors += 1,
        }
        report.blocks += 1;
        last_return = Instant::now();
        if took.is_some_and(|n| n < len) {
            break; // the end (or a stall) came while the write was blocked
        }
    }
    if stalled {
        report.stalled = true;
        notes.push(format!(
            "ended: nothing delivered for {:.3} s (stall timeout), {} bytes written",
            spec.stall_timeout_s.unwrap_or_default(),
            report.bytes
        ));
    }
    report.started_at = clock.at(t0);
    report.ended_at = clock.at(last_return);
    report.seconds = (last_return - t0).as_secs_f64();
    report.throughput_bps = if report.seconds > 0.0 {
        report.bytes as f64 * 8.0 / report.seconds
    } else {
        0.0
    };
    if spec.paced() {
        let realtime = priority.as_ref().is_some_and(|p| p.realtime());
        report.timing = Some(timing(&mut errors_ns, late, realtime));
    }
    match writer {
        Writer::Tcp(mut s) => {
            // Close our side and wait for the sink's close: then every byte is
            // acknowledged and TCP_INFO's counts are final.
            s.shutdown(Shutdown::Write)?;
            s.set_read_timeout(Some(Duration::from_secs_f64(
                spec.drain_timeout_s.max(0.001),
            )))?;
            let mut buf = [0u8; 512];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
            }
            report.tcp_info = Some(TcpInfo::read(s.as_raw_fd())?);
            // Before the socket closes: the sampler reads its descriptor.
            report.series = sampler.take().map(Sampler::finish);
        }
        Writer::Udp(s) => {
            for _ in 0..UDP_END_MARKERS {
                let _ = s.send(&[]);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    report.host = host.finish();
    report.notes = notes;
    Ok(report)
}

fn timing(errors_ns: &mut [u64], late: u64, realtime: bool) -> Timing {
    if errors_ns.is_empty() {
        return Timing::default();
    }
    errors_ns.sort_unstable();
    let pick = |q: f64| {
        let i = ((errors_ns.len() as f64 - 1.0) * q).round() as usize;
        errors_ns[i] as f64 / 1000.0
    };
    Timing {
        late_blocks: late,
        realtime,
        error_p50_us: pick(0.5),
        error_p99_us: pick(0.99),
        error_max_us: pick(1.0),
    }
}

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
        if let (Some(a), Some(b)) = (first, last) {
            report.first_at = Some(clock.at(a));
            report.last_at = Some(clock.at(b));
            report.seconds = (b - a).as_secs_f64();
            if report.seconds > 0.0 {
                report.throughput_bps = report.bytes as f64 * 8.0 / report.seconds;
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::net::Ipv4Addr;

    fn loopback(port: u16) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
    }

    fn free_port(protocol: Protocol) -> u16 {
        match protocol {
            Protocol::Tcp => std::net::TcpListener::bind(loopback(0)).unwrap(),
            Protocol::Udp => {
                return std::net::UdpSocket::bind(loopback(0))
                    .unwrap()
                    .local_addr()
                    .unwrap()
                    .port()
            }
        }
        .local_addr()
        .unwrap()
        .port()
    }

    fn pair(source: SourceSpec, sink: SinkSpec) -> (SourceReport, SinkReport) {
        let sink = Sink::bind(sink).unwrap();
        let rx = std::thread::spawn(move || sink.run().unwrap());
        let tx = run_source(&source).unwrap();
        (tx, rx.join().unwrap())
    }

    fn specs(protocol: Protocol, blocksize: usize) -> (SourceSpec, SinkSpec) {
        let port = free_port(protocol);
        let now = now_epoch();
        let source = SourceSpec {
            protocol,
            bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            peer: loopback(port),
            sndbuf: None,
            nodelay: false,
            congestion: None,
            mss: None,
            blocksize,
            period_us: None,
            random: None,
            series_interval_us: None,
            nbytes: None,
            duration_s: None,
            start_at: now + 0.05,
            connect_timeout_s: 2.0,
            drain_timeout_s: 5.0,
            group: None,
            realtime: false,
            max_rate_bps: None,
            stall_timeout_s: None,
        };
        let sink = SinkSpec {
            protocol,
            bind: loopback(port),
            rcvbuf: None,
            window_clamp: None,
            blocksize,
            deadline_at: now + 10.0,
            idle_timeout_s: 0.5,
            group: None,
            stall_timeout_s: None,
        };
        (source, sink)
    }

    #[test]
    fn test_a_stalled_source_ends_with_what_it_wrote() {
        // A peer that accepts and never reads: the send buffer fills, writes block.
        let (mut source, _) = specs(Protocol::Tcp, 65536);
        let listener = std::net::TcpListener::bind(source.peer).unwrap();
        let held = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_secs(3));
            drop(s);
        });
        source.nbytes = Some(1 << 34);
        source.stall_timeout_s = Some(0.5);
        source.drain_timeout_s = 0.2;
        let t = Instant::now();
        let tx = run_source(&source).unwrap();
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(tx.stalled && tx.bytes > 0 && tx.bytes < 1 << 34, "{tx:?}");
        assert!(tx
            .notes
            .iter()
            .any(|n| n.contains("nothing delivered for 0.500 s")));
        held.join().unwrap();
    }

    #[test]
    fn test_a_sink_without_data_for_its_stall_timeout_times_out() {
        let (_, mut sink) = specs(Protocol::Tcp, 8192);
        sink.stall_timeout_s = Some(0.5);
        let peer = sink.bind;
        let sink = Sink::bind(sink).unwrap();
        let rx = std::thread::spawn(move || sink.run().unwrap());
        let quiet = std::net::TcpStream::connect(peer).unwrap();
        let t = Instant::now();
        let got = rx.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(got.timed_out && got.bytes == 0);
        drop(quiet);
    }

    #[test]
    fn test_tcp_nbytes_all_delivered() {
        let (mut source, sink) = specs(Protocol::Tcp, 8192);
        source.nbytes = Some(1_000_001); // not a whole number of blocks
        source.sndbuf = Some(65536);
        source.nodelay = true;
        let (tx, rx) = pair(source, sink);
        assert_eq!(tx.bytes, 1_000_001);
        assert_eq!(rx.bytes, 1_000_001);
        assert_eq!(tx.blocks, 123);
        assert!(tx.throughput_bps > 0.0 && tx.ended_at >= tx.started_at);
        let info = tx.tcp_info.expect("TCP_INFO");
        assert_eq!(
            info.unacked, 0,
            "the sink closed only after reading everything"
        );
        assert!(!rx.timed_out);
    }

    #[test]
    fn test_tcp_constant_rate_paced() {
        let (mut source, sink) = specs(Protocol::Tcp, 1000);
        source.period_us = Some(2000.0);
        source.duration_s = Some(0.2);
        let (tx, rx) = pair(source, sink);
        // Blocks due at 0, 2, ..., 198 ms: 100 of them.
        assert_eq!(tx.blocks, 100);
        assert_eq!(rx.bytes, 100_000);
        let t = tx.timing.expect("timing of a paced source");
        assert!(t.error_p50_us < 1000.0, "{t:?}");
        // ttcp's span: 99 periods and the last write.
        assert!((tx.seconds - 0.198).abs() < 0.01, "{}", tx.seconds);
    }

    #[test]
    fn test_full_blast_held_below_the_cap() {
        let (mut source, sink) = specs(Protocol::Udp, 1000);
        source.duration_s = Some(0.3);
        source.max_rate_bps = Some(8e6); // 1000 blocks/s
        let (tx, rx) = pair(source, sink);
        assert!(tx.throughput_bps <= 8e6 * 1.06, "{}", tx.throughput_bps);
        // 300 blocks in 0.3 s at the cap, and the burst's 10 ahead of it.
        assert!((260..=312).contains(&tx.blocks), "{}", tx.blocks);
        assert!(tx.timing.is_none(), "a full blast reports no pacing");
        assert!(tx.cap_waits > 200, "{}", tx.cap_waits);
        assert_eq!(rx.bytes, tx.bytes);
    }

    #[test]
    fn test_udp_nbytes_and_end_marker() {
        let (mut source, sink) = specs(Protocol::Udp, 1400);
        source.nbytes = Some(140_000);
        source.period_us = Some(100.0); // paced: loopback drops nothing
        let (tx, rx) = pair(source, sink);
        assert_eq!(tx.bytes, 140_000);
        assert_eq!(rx.datagrams, 100);
        assert_eq!(rx.bytes, 140_000);
        assert!(!rx.timed_out);
        assert!(tx.tcp_info.is_none());
    }

    #[test]
    fn test_refused_congestion_is_a_note() {
        // The connection runs with the kernel's default and says why.
        let (mut source, sink) = specs(Protocol::Tcp, 1000);
        source.nbytes = Some(1000);
        source.congestion = Some("no-such-cc".into());
        let (tx, rx) = pair(source, sink);
        assert_eq!(rx.bytes, 1000);
        assert_eq!(tx.notes.len(), 1, "{:?}", tx.notes);
        let note = &tx.notes[0];
        assert!(
            note.starts_with("TCP_CONGESTION no-such-cc refused"),
            "{note}"
        );
        let ran = tx.congestion.expect("the congestion control that ran");
        assert!(note.contains(&format!("ran {ran}")), "{note}");
    }

    #[test]
    fn test_series_and_host_measures() {
        let (mut source, sink) = specs(Protocol::Tcp, 65536);
        source.duration_s = Some(0.3);
        source.series_interval_us = Some(10_000.0);
        source.mss = Some(1000);
        let (tx, rx) = pair(source, sink);
        let series = tx.series.expect("a series");
        // 10 ms samples over the 0.3 s of writes and the drain: about 30 of them.
        assert!(series.len() >= 15, "{}", series.len());
        assert!(series.windows(2).all(|w| w[1].0 > w[0].0));
        assert!(series.iter().all(|s| s.1 > 0), "cwnd in bytes");
        let info = tx.tcp_info.unwrap();
        // TCP_MAXSEG 1000 less the timestamp option.
        assert!(info.snd_mss <= 1000, "{info:?}");
        assert!(tx.notes.is_empty(), "{:?}", tx.notes);
        for h in [&tx.host, &rx.host] {
            assert_eq!(h.interface.as_deref(), Some("lo"));
            assert!(
                h.cpu_busy.unwrap() > 0.0 && h.agent_cpu.unwrap() > 0.0,
                "{h:?}"
            );
        }
        // Every byte crossed lo, with headers: at least as many as the payload.
        assert!(tx.host.if_tx_bytes.unwrap() >= rx.bytes);
        assert!(rx.host.if_rx_bytes.unwrap() >= rx.bytes);
    }

    #[test]
    fn test_random_rate_sizes() {
        let (mut source, sink) = specs(Protocol::Tcp, 3000);
        source.nbytes = Some(200_000);
        source.random = Some(RandomSpec {
            blocksize: Some(crate::traffic::Law::Uniform([1000.0, 3000.0])),
            period_us: Some(crate::traffic::Law::Exponential(200.0)),
            seed: 1,
            replication: 0,
            connection: 0,
        });
        let (tx, rx) = pair(source, sink);
        assert_eq!(rx.bytes, 200_000);
        // Mean 2000 bytes a block: about 100 blocks, not 200000/3000 = 67.
        assert!((80..=125).contains(&tx.blocks), "{}", tx.blocks);
        assert!(tx.timing.is_some());
    }

    #[test]
    fn test_sink_deadline_without_source() {
        let (_, mut sink) = specs(Protocol::Tcp, 1000);
        sink.deadline_at = now_epoch() + 0.05;
        let r = Sink::bind(sink).unwrap().run().unwrap();
        assert!(r.timed_out);
        assert_eq!(r.bytes, 0);
    }

    #[test]
    fn test_stop_ends_a_transfer_within_a_slice() {
        let (mut source, mut sink) = specs(Protocol::Tcp, 8192);
        source.duration_s = Some(30.0);
        source.period_us = Some(10_000.0);
        source.group = Some("test-stop".into());
        sink.group = Some("test-stop".into());
        let sink = Sink::bind(sink).unwrap();
        let rx = std::thread::spawn(move || sink.run());
        let tx = std::thread::spawn(move || run_source(&source));
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        stop("test-stop");
        let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert!(tx.unwrap_err().to_string().contains("stopped"));
        // The sink stops, or sees the source's close first; either way it is over.
        assert!(rx.is_err() || rx.unwrap().bytes > 0);
    }

    #[test]
    fn test_stop_ends_a_full_blast() {
        // Writes that never block: the per-block check must see the stop.
        let (mut source, mut sink) = specs(Protocol::Tcp, 65536);
        source.duration_s = Some(30.0);
        source.group = Some("test-stop-full".into());
        sink.group = Some("test-stop-full".into());
        let sink = Sink::bind(sink).unwrap();
        let rx = std::thread::spawn(move || sink.run());
        let tx = std::thread::spawn(move || run_source(&source));
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        stop("test-stop-full");
        let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert!(tx.is_err() && rx.is_err());
    }

    #[test]
    fn test_a_timed_stream_ends_while_its_write_is_blocked() {
        // A peer that never reads (the listener never accepts): the window closes, the
        // write blocks, and the duration's end still ends the stream, with only the
        // bytes the kernel took counted.
        let (mut source, _) = specs(Protocol::Tcp, 1 << 20);
        let listener = std::net::TcpListener::bind(source.peer).unwrap();
        source.duration_s = Some(0.3);
        source.drain_timeout_s = 0.2;
        source.sndbuf = Some(65536);
        let t = Instant::now();
        let tx = run_source(&source).unwrap();
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(tx.bytes > 0 && tx.bytes < 1 << 20, "{}", tx.bytes);
        assert!(tx.seconds >= 0.3, "{}", tx.seconds);
        drop(listener);
    }

    #[test]
    fn test_timing_percentiles() {
        let mut e: Vec<u64> = (1..=100).map(|x| x * 1000).collect();
        let t = timing(&mut e, 2, false);
        assert_eq!(t.late_blocks, 2);
        assert_eq!(t.error_max_us, 100.0);
        assert_eq!(t.error_p99_us, 99.0);
    }
}
