//! The source: connect at the start time, write the schedule's blocks (paced,
//! or a full blast under the rate caps), then close and collect TCP_INFO.

use super::clock::{instant_of, now_epoch, sleep_until, wait_until, EpochMap};
use super::limits::{self, Limits, RateCap};
use super::measure::{HostProbe, Sampler};
use super::report::{timing, SourceReport};
use super::socket::{self, is_timeout};
use super::spec::{Protocol, SourceSpec};
use super::stop::{Stop, SLICE};
use super::tcp_info::TcpInfo;
use super::watch::{self, Watch};
use super::{pacer, AgentError};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Empty datagrams a UDP source sends after its data; several, as a lost one
/// would otherwise leave the sink waiting for its idle timeout.
const UDP_END_MARKERS: usize = 5;

/// How far ahead of the daemon's rate cap a full blast may run (as time at the cap).
const CAP_BURST: Duration = Duration::from_millis(10);

/// The writer half of a source: a TCP stream (with its window watched) or a
/// connected UDP socket.
enum Writer {
    Tcp(std::net::TcpStream, Watch),
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
            Writer::Tcp(s, watch) => {
                let mut off = 0;
                let mut progress = Instant::now();
                while off < block.len() {
                    let wrote = s.write(&block[off..]);
                    // Each write's return, and each SLICE a blocked one waits.
                    watch.tick();
                    match wrote {
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

    /// Open at the start time: a TCP connection (retried while refused, the sink
    /// not yet listening, for the connect timeout) or a connected UDP socket.
    fn open(spec: &SourceSpec, stop: Stop, notes: &mut Vec<String>) -> Result<Writer, AgentError> {
        let opts = spec.options();
        let local = spec.bind.map(|ip| SocketAddr::new(ip, 0));
        Ok(match spec.protocol {
            Protocol::Tcp => {
                let timeout = Duration::from_secs_f64(spec.connect_timeout_s.max(0.0));
                let s = socket::tcp_connect(
                    local,
                    spec.peer,
                    &opts,
                    timeout,
                    &|| stop.requested(),
                    notes,
                )?;
                stop.check()?;
                s.set_write_timeout(Some(SLICE))?;
                let watch = Watch::new(s.as_raw_fd());
                Writer::Tcp(s, watch)
            }
            Protocol::Udp => Writer::Udp(socket::udp_socket(local, Some(spec.peer), &opts)?),
        })
    }

    /// A report begun with what the kernel granted: the send buffer, the
    /// congestion control, and a note where the MSS is not the one asked for.
    fn begin_report(&self, spec: &SourceSpec, notes: &mut Vec<String>) -> SourceReport {
        let fd = self.raw_fd();
        let report = SourceReport {
            sndbuf_granted: socket::buffer_sizes(fd).0,
            congestion: (spec.protocol == Protocol::Tcp)
                .then(|| socket::congestion(fd))
                .flatten(),
            ..SourceReport::default()
        };
        if let (Some(asked), Ok(info)) = (spec.mss, TcpInfo::read(fd)) {
            notes.extend(socket::mss_note(asked, info.snd_mss));
        }
        report
    }

    /// End the transfer. TCP closes its side and waits for the sink's close
    /// (its window still watched: a send buffer that took every write drains
    /// here): then every byte is acknowledged and TCP_INFO's counts (and the
    /// series) are final. UDP sends its end markers.
    fn close(
        self,
        spec: &SourceSpec,
        sampler: Option<Sampler>,
        report: &mut SourceReport,
    ) -> Result<(), AgentError> {
        match self {
            Writer::Tcp(mut s, mut watch) => {
                s.shutdown(Shutdown::Write)?;
                let end = Instant::now() + Duration::from_secs_f64(spec.drain_timeout_s.max(0.001));
                s.set_read_timeout(Some(watch::EVERY))?;
                let mut buf = [0u8; 512];
                loop {
                    watch.tick();
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if is_timeout(&e) && Instant::now() < end => {}
                        Err(_) => break,
                    }
                }
                watch.read();
                report.window = Some(watch.peaks);
                report.tcp_info = Some(TcpInfo::read(s.as_raw_fd())?);
                // Before the socket closes: the sampler reads its descriptor.
                report.series = sampler.map(Sampler::finish);
            }
            Writer::Udp(s) => {
                for _ in 0..UDP_END_MARKERS {
                    let _ = s.send(&[]);
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        Ok(())
    }

    fn raw_fd(&self) -> i32 {
        match self {
            Writer::Tcp(s, _) => s.as_raw_fd(),
            Writer::Udp(s) => s.as_raw_fd(),
        }
    }
}

/// Run a source to its end and report: admitted under the process's limits,
/// connected at its start time, its blocks written, then closed.
pub fn run_source(spec: &SourceSpec) -> Result<SourceReport, AgentError> {
    spec.check()?;
    let clock = EpochMap::new();
    let start = instant_of(spec.start_at);
    // The process's own limits (a daemon's), whatever the spec says.
    let limits = limits::process_limits();
    if let Some(l) = limits {
        admit(l, spec, start)?;
    }
    let stop = Stop(spec.group.as_deref());
    let realtime = spec.realtime && limits.is_none_or(|l| l.realtime);
    // Raised for the whole transfer (the start is paced too), put back on return.
    let priority = spec.paced().then(|| pacer::Priority::raise(realtime));
    // TCP connects at the start time (the sink listens from before it), so the
    // handshake is part of no one's throughput but the connection is fresh.
    sleep_until(start, stop)?;
    let mut notes = Vec::new();
    let mut writer = Writer::open(spec, stop, &mut notes)?;
    let mut report = writer.begin_report(spec, &mut notes);
    let host = HostProbe::start(Some(spec.peer.ip()));
    let fd = writer.raw_fd();
    let sampler = spec
        .series_interval_us
        .filter(|_| spec.protocol == Protocol::Tcp)
        .map(|us| Sampler::start(fd, Duration::from_secs_f64(us * 1e-6), move |t| clock.at(t)));
    let written = write_blocks(
        spec,
        &mut writer,
        limits,
        start,
        stop,
        &mut report,
        &mut notes,
    )?;
    written.account(spec, clock, priority.as_ref(), &mut report, &mut notes);
    writer.close(spec, sampler, &mut report)?;
    report.host = host.finish();
    report.notes = notes;
    Ok(report)
}

/// The process's limits (a daemon's) refuse a destination outside its allow
/// list and a start beyond its --max-duration.
fn admit(limits: &Limits, spec: &SourceSpec, start: Instant) -> Result<(), AgentError> {
    if let Some(why) = limits.refuse_destination(spec.peer.ip()) {
        return Err(AgentError(why));
    }
    if start > Instant::now() + limits.max_duration {
        return Err(AgentError(format!(
            "refused: a start {:.0} s away is beyond the daemon's --max-duration",
            spec.start_at - now_epoch()
        )));
    }
    Ok(())
}

/// What the write loop leaves for the report.
struct Written {
    /// Just before the first write, and just after the last write returned.
    t0: Instant,
    last_return: Instant,
    /// Each paced block's timing error (start of write minus due time), ns.
    errors_ns: Vec<u64>,
    /// Paced blocks that started after the next block was due.
    late: u64,
    /// Ended by the stall timeout: nothing was taken for that long.
    stalled: bool,
}

/// Write the schedule's blocks until `nbytes` are written, the duration is
/// over, the daemon's --max-duration comes or a write stalls: a paced block at
/// its due time, a full blast as fast as the socket and the rate caps allow.
fn write_blocks(
    spec: &SourceSpec,
    writer: &mut Writer,
    limits: Option<&Limits>,
    start: Instant,
    stop: Stop,
    report: &mut SourceReport,
    notes: &mut Vec<String>,
) -> Result<Written, AgentError> {
    let block = vec![0x5au8; spec.blocksize];
    let mut schedule = spec.schedule();
    let caps = Caps::new(spec, limits);
    report.cap_bps = caps.rate_bps();
    let t0 = Instant::now();
    report.start_late_s = (t0 - start.min(t0)).as_secs_f64();
    let end = spec.duration_s.map(|d| t0 + Duration::from_secs_f64(d));
    // The daemon's --max-duration ends any transfer, a byte count's too.
    let hard_end = limits.map(|l| t0 + l.max_duration);
    let write_end = match (end, hard_end) {
        (Some(e), Some(h)) => Some(e.min(h)),
        (e, h) => e.or(h),
    };
    let mut written = Written {
        t0,
        last_return: t0,
        errors_ns: Vec::new(),
        late: 0,
        stalled: false,
    };
    let stall = spec
        .stall_timeout_s
        .map(|s| Duration::from_secs_f64(s.max(0.001)));
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
        } else {
            caps.wait_own(len, stop, report)?;
        }
        caps.wait_process(len, paced.is_some(), stop, report)?;
        // Late: it starts after the next block was due.
        if let Some((due, p)) = paced {
            let error = Instant::now() - due;
            if error > p {
                written.late += 1;
            }
            written.errors_ns.push(error.as_nanos() as u64);
        }
        let took =
            writer.write_block(&block[..len], stop, write_end, stall, &mut written.stalled)?;
        match took {
            Some(n) => report.bytes += n as u64,
            None => report.send_errors += 1,
        }
        report.blocks += 1;
        written.last_return = Instant::now();
        if took.is_some_and(|n| n < len) {
            break; // the end (or a stall) came while the write was blocked
        }
    }
    Ok(written)
}

impl Written {
    /// The report's times and throughput (ttcp's: first write to last return),
    /// a paced source's timing summary, and a stall's note.
    fn account(
        mut self,
        spec: &SourceSpec,
        clock: EpochMap,
        priority: Option<&pacer::Priority>,
        report: &mut SourceReport,
        notes: &mut Vec<String>,
    ) {
        if self.stalled {
            report.stalled = true;
            notes.push(format!(
                "ended: nothing delivered for {:.3} s (stall timeout), {} bytes written",
                spec.stall_timeout_s.unwrap_or_default(),
                report.bytes
            ));
        }
        report.started_at = clock.at(self.t0);
        report.ended_at = clock.at(self.last_return);
        report.seconds = (self.last_return - self.t0).as_secs_f64();
        report.throughput_bps = if report.seconds > 0.0 {
            report.bytes as f64 * 8.0 / report.seconds
        } else {
            0.0
        };
        if spec.paced() {
            let realtime = priority.is_some_and(|p| p.realtime());
            report.timing = Some(timing(&mut self.errors_ns, self.late, realtime));
        }
    }
}

/// The rate caps a write waits for: the spec's own (the emulator's), for a
/// full blast only, and the process's (a daemon's), shared by all its sources.
struct Caps<'a> {
    /// The spec's cap, and how far ahead of it a full blast may run.
    own: Option<(RateCap, Duration)>,
    process: Option<&'a RateCap>,
}

impl<'a> Caps<'a> {
    fn new(spec: &SourceSpec, limits: Option<&'a Limits>) -> Caps<'a> {
        // The spec's own cap (the emulator's): a full blast may run ahead of it by a
        // burst (10 ms at the cap, at least 4 blocks), so that writes returning at once
        // into an empty send buffer pass without counting as held.
        let own = spec.max_rate_bps.map(RateCap::new).map(|cap| {
            let burst = CAP_BURST.max(cap.time_of(4 * spec.blocksize));
            (cap, burst)
        });
        Caps {
            own,
            process: limits.map(|l| &l.cap),
        }
    }

    /// The rate cap this source runs under (the lower of the two), bit/s.
    fn rate_bps(&self) -> Option<f64> {
        [
            self.own.as_ref().map(|(cap, _)| cap.rate_bps()),
            self.process.map(|cap| cap.rate_bps()),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }

    /// A full blast's write of `len` bytes waits for the spec's cap, beyond its burst.
    fn wait_own(
        &self,
        len: usize,
        stop: Stop,
        report: &mut SourceReport,
    ) -> Result<(), AgentError> {
        if let Some((cap, burst)) = &self.own {
            let at = cap.reserve(len, *burst, false);
            let now = Instant::now();
            if at > now {
                report.cap_waits += 1;
                report.cap_wait_s += (at - now).as_secs_f64();
                wait_until(at, stop)?;
            }
        }
        Ok(())
    }

    /// The process's cap, shared by all its sources: a full blast's write waits
    /// until its own bytes' time at the cap has passed since the previous write
    /// of any source (limits::RateCap, no tolerance), so however short the blast
    /// its rate stays under the cap; a paced block only for the bytes reserved
    /// before it (it is on time whenever the total is under the cap).
    fn wait_process(
        &self,
        len: usize,
        paced: bool,
        stop: Stop,
        report: &mut SourceReport,
    ) -> Result<(), AgentError> {
        if let Some(cap) = self.process {
            let tolerance = if paced {
                cap.time_of(len)
            } else {
                Duration::ZERO
            };
            let fresh = report.blocks == 0;
            let at = cap.reserve(len, tolerance, fresh && !paced);
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
        Ok(())
    }
}
