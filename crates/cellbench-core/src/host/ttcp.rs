//! Applications: ttcp's transmitter writes `buflen`-byte buffers until `nbytes`
//! are written (or, netperf- and NetSpec-style, for a duration, possibly one
//! block per period); the receiver reads up to `buflen` bytes as data arrives.
//! ttcp -t times from just before the first write to just after the last write
//! returns, so its figure counts data still in the send buffer.

use super::socket::AppendRule;
use super::udp::UdpSock;
use crate::tcp::{Segment, Tcb};
use crate::time::SimTime;
use crate::traffic::{Dist, Draws};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// ttcp's default buffer length (-l).
pub const DEFAULT_BUFLEN: u32 = 8192;

/// What one step of an application did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// More to do: run again (after any interrupt work queued meanwhile).
    Continue,
    /// Waiting for the socket (space to write, data to read).
    Blocked,
    /// Asleep until its next paced block falls due.
    Sleep,
    /// The application has finished (last write returned / all data read).
    Done,
}

/// The costs an application step charges to the CPU.
pub struct Costs {
    pub syscall: SimTime,
    /// The copy into the kernel on a write().
    pub copy_ps_per_byte: u64,
    /// The copy out of the kernel on a read() (`HostProfile::read_copy_ps_per_byte`).
    pub read_copy_ps_per_byte: u64,
    /// Splitting a write larger than the MSS (`HostProfile::fragment_ps_per_byte`).
    pub fragment_ps_per_byte: u64,
    /// The kernel's socket layer.
    pub append: AppendRule,
    /// Winsock AFD: a write of at least SO_SNDBUF bytes returns only once
    /// all of it is acknowledged (`Policy::send_completes_on_ack`).
    pub send_completes_on_ack: bool,
}

/// When a source stops writing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// ttcp -n: this many bytes in all.
    Bytes(u64),
    /// netperf -l / NetSpec duration: no new write after this long.
    Duration(SimTime),
}

/// How a source spaces its writes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Pace {
    /// As fast as the socket takes data (ttcp, NetSpec `full`).
    Full,
    /// One block every `period` µs, drawn anew for each block when it is a
    /// distribution (NetSpec `burst`: a block falling due while a write is
    /// still pending is skipped; `burstq`: it is queued). `blocks` blocks fall due
    /// at once (a burst written back to back: UDP bursts larger than a datagram).
    Every {
        period_us: Dist,
        queue: bool,
        blocks: u32,
    },
}

/// A sending application: ttcp -t, netperf's stream, NetSpec's `full`/`burst`/`burstq`.
#[derive(Clone, Debug)]
pub struct Source {
    /// Bytes per write; with `size`, the largest a drawn size may be.
    pub buflen: u32,
    /// A block size drawn anew for every write (random-rate traffic).
    pub size: Option<Dist>,
    /// Draws block sizes and inter-block times.
    draws: Draws,
    pub limit: Limit,
    pub pace: Pace,
    /// Bytes accepted into the send buffer so far.
    pub written: u64,
    /// Bytes of the current write() not yet copied in.
    resid: u32,
    pub writes: u64,
    /// Paced blocks that fell due and have not started yet.
    due: u64,
    /// Paced blocks skipped because a write was still pending (`burst`).
    pub skipped: u64,
    pub started: Option<SimTime>,
    /// When the last complete write() returned.
    pub last_return: Option<SimTime>,
    /// The last step copied in the end of a write().
    completed_write: bool,
    /// A write() that AFD did not buffer is waiting for its data to be acknowledged.
    awaiting_ack: bool,
    pub finished: Option<SimTime>,
}

impl Source {
    /// ttcp -t: `nbytes` in writes of `buflen`, as fast as possible.
    pub fn ttcp(buflen: u32, nbytes: u64) -> Source {
        Source::new(buflen, Limit::Bytes(nbytes), Pace::Full)
    }

    pub fn new(buflen: u32, limit: Limit, pace: Pace) -> Source {
        Source {
            buflen,
            size: None,
            draws: Draws::from(ChaCha8Rng::seed_from_u64(0)),
            limit,
            pace,
            written: 0,
            resid: 0,
            writes: 0,
            // A paced source's first block (or burst of blocks) is due at its start.
            due: match pace {
                Pace::Every { blocks, .. } => blocks as u64,
                Pace::Full => 1,
            },
            skipped: 0,
            started: None,
            last_return: None,
            completed_write: false,
            awaiting_ack: false,
            finished: None,
        }
    }

    /// The caller has charged the tcp_output work of the last step: if it
    /// completed a write(), that call returns now.
    pub fn note_return(&mut self, t: SimTime) {
        if std::mem::take(&mut self.completed_write) {
            self.last_return = Some(t);
        }
    }

    /// Random-rate traffic: sizes drawn from `size` (bytes), and periods from the
    /// pace's law, with the transfer's stream `rng` (`traffic::Draws`).
    pub fn with_random(mut self, size: Option<Dist>, rng: ChaCha8Rng) -> Source {
        self.size = size;
        self.draws = Draws::from(rng);
        self
    }

    /// The time until the next paced block falls due (drawn anew each time).
    pub fn next_period(&mut self) -> Option<SimTime> {
        let Pace::Every { period_us, .. } = self.pace else {
            return None;
        };
        // At least a picosecond, so that time moves on.
        Some(SimTime::from_us_f64(self.draws.interval_us(period_us)).max(SimTime(1)))
    }

    /// A paced block falls due: queue it, skip it, or report that the
    /// application (asleep between blocks) must be woken.
    pub fn block_due(&mut self) -> bool {
        let Pace::Every { queue, blocks, .. } = self.pace else {
            return false;
        };
        if self.finished.is_some() {
            return false;
        }
        if self.resid > 0 || self.due > 0 {
            if queue {
                self.due += blocks as u64;
            } else {
                self.skipped += blocks as u64;
            }
            return false;
        }
        self.due = blocks as u64;
        true
    }

    /// Start the next write() if none is in progress; `Some(step)` when the
    /// application cannot (finished, or asleep until its next paced block).
    fn start_write(&mut self, costs: &Costs, t: &mut SimTime) -> Option<Step> {
        if self.finished.is_some() {
            return Some(Step::Done);
        }
        if self.resid > 0 {
            return None;
        }
        let remaining = match self.limit {
            Limit::Bytes(n) => n.saturating_sub(self.written),
            Limit::Duration(d) => match self.started {
                Some(s) if *t >= s + d => 0,
                _ => u64::MAX,
            },
        };
        if remaining == 0 {
            return Some(Step::Done);
        }
        if let Pace::Every { .. } = self.pace {
            if self.due == 0 {
                return Some(Step::Sleep);
            }
            self.due -= 1;
        }
        if self.started.is_none() {
            self.started = Some(*t);
        }
        let block = self.draws.block_len(self.size, self.buflen as u64);
        self.resid = remaining.min(block) as u32;
        self.writes += 1;
        *t += costs.syscall;
        None
    }

    /// One UDP write(): copy the block in and return the datagram's size; the
    /// caller fragments and sends it (udp_output runs within the call).
    pub fn step_udp(&mut self, costs: &Costs, t: &mut SimTime) -> Result<u32, Step> {
        if let Some(stop) = self.start_write(costs, t) {
            return Err(stop);
        }
        let n = std::mem::take(&mut self.resid);
        *t += SimTime(costs.copy_ps_per_byte * n as u64);
        self.written += n as u64;
        self.completed_write = true;
        Ok(n)
    }

    /// Whether the byte count (if any) has all been written.
    pub fn all_written(&self) -> bool {
        matches!(self.limit, Limit::Bytes(n) if self.written >= n)
    }

    /// One piece of sosend: start a write() if none is in progress, append the
    /// next piece the socket layer allows, and run tcp_output. Advances `t` by
    /// the CPU cost of the syscall and the copy (segments are charged by the caller).
    pub fn step(
        &mut self,
        tcb: &mut Tcb,
        costs: &Costs,
        t: &mut SimTime,
        out: &mut Vec<Segment>,
    ) -> Step {
        if self.awaiting_ack {
            // The unbuffered send still holds the application until the send
            // buffer has drained (every byte of it acknowledged).
            if tcb.snd.cc > 0 {
                return Step::Blocked;
            }
            self.awaiting_ack = false;
        }
        let fresh = self.resid == 0;
        if let Some(stop) = self.start_write(costs, t) {
            return stop;
        }
        if fresh && costs.send_completes_on_ack && self.resid >= tcb.snd.hiwat {
            self.awaiting_ack = true;
        }
        if fresh && self.resid > tcb.t_maxseg {
            // 001 §5.2: a message above the MSS costs the sender its fragmentation.
            *t += SimTime(costs.fragment_ps_per_byte * self.resid as u64);
        }
        let Some(n) = sosend_piece(tcb, costs, self.resid, t, out) else {
            return Step::Blocked;
        };
        self.resid -= n;
        self.written += n as u64;
        self.completed_write = self.resid == 0;
        if self.resid == 0 && self.all_written() {
            Step::Done
        } else {
            Step::Continue
        }
    }
}

/// One turn of sosend's loop within a write(): append the next piece of the
/// `resid` bytes still to copy that the socket layer allows, pay for its copy,
/// and run tcp_output on it. `None`: no room; the writer sleeps in sbwait.
pub fn sosend_piece(
    tcb: &mut Tcb,
    costs: &Costs,
    resid: u32,
    t: &mut SimTime,
    out: &mut Vec<Segment>,
) -> Option<u32> {
    let n = costs.append.next(tcb.snd.hiwat, tcb.snd.cc, resid)?;
    *t += SimTime(costs.copy_ps_per_byte * n as u64);
    tcb.append(n, out);
    Some(n)
}

/// One read() of up to `max` bytes of what has arrived (the caller has seen
/// that something has): pay for the call and the copy, then PRU_RCVD runs
/// tcp_output's window-update test. Returns the bytes taken.
pub fn soreceive(
    tcb: &mut Tcb,
    costs: &Costs,
    max: u32,
    t: &mut SimTime,
    out: &mut Vec<Segment>,
) -> u32 {
    let n = tcb.rcv.cc.min(max);
    *t += costs.syscall + SimTime(costs.read_copy_ps_per_byte * n as u64);
    tcb.read(n, out);
    n
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtcpSink {
    pub buflen: u32,
    pub nbytes: u64,
    pub read: u64,
    pub reads: u64,
    pub started: Option<SimTime>,
    pub finished: Option<SimTime>,
    /// The peer's FIN has arrived: a read of an empty buffer returns 0 (EOF).
    pub eof: bool,
    /// When the last read returned data (UDP: the end of the receiver's interval).
    pub last_read: Option<SimTime>,
}

impl TtcpSink {
    /// One UDP read(): a whole datagram (or waits for one). The sink ends when
    /// the world says the transmitter is done and nothing more can arrive.
    pub fn step_udp(&mut self, sock: &mut UdpSock, costs: &Costs, t: &mut SimTime) -> Step {
        if self.finished.is_some() {
            return Step::Done;
        }
        let Some(n) = sock.read() else {
            return Step::Blocked;
        };
        if self.started.is_none() {
            self.started = Some(*t);
        }
        let copied = n.min(self.buflen);
        *t += costs.syscall + SimTime(costs.read_copy_ps_per_byte * copied as u64);
        self.read += copied as u64;
        self.reads += 1;
        self.last_read = Some(*t);
        Step::Continue
    }

    pub fn new(buflen: u32, nbytes: u64) -> TtcpSink {
        TtcpSink {
            buflen,
            nbytes,
            read: 0,
            reads: 0,
            started: None,
            finished: None,
            eof: false,
            last_read: None,
        }
    }

    /// One read(): takes up to `buflen` bytes of what has arrived, then PRU_RCVD
    /// (tcp_output's window-update test) runs.
    pub fn step(
        &mut self,
        tcb: &mut Tcb,
        costs: &Costs,
        t: &mut SimTime,
        out: &mut Vec<Segment>,
    ) -> Step {
        if self.finished.is_some() {
            return Step::Done;
        }
        // The receiver's clock starts when accept() returns, before the first
        // read: ttcp -r calls prep_timer() right after accept (ttcp.c), and
        // netperf's recv_tcp_stream cpu_start() (nettest_bsd.c). The world runs
        // a TCP receiver's first step once its connection is established.
        if self.started.is_none() {
            self.started = Some(*t);
        }
        if tcb.rcv.cc == 0 {
            if self.eof || self.read >= self.nbytes {
                self.finished = Some(*t);
                return Step::Done;
            }
            return Step::Blocked;
        }
        let n = soreceive(tcb, costs, self.buflen, t, out);
        self.read += n as u64;
        self.reads += 1;
        if self.read >= self.nbytes {
            self.finished = Some(*t);
            return Step::Done;
        }
        Step::Continue
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tcp::{Flavour, Seq};

    #[test]
    fn the_receivers_clock_starts_when_accept_returns_not_at_the_first_read() {
        // ttcp -r's prep_timer() follows accept(); netperf's recv_tcp_stream
        // starts its clock there too. The world runs a TCP receiver's first
        // step once its connection is established, nothing yet to read.
        let costs = Costs {
            syscall: SimTime::from_us(50),
            copy_ps_per_byte: 0,
            read_copy_ps_per_byte: 0,
            fragment_ps_per_byte: 0,
            append: AppendRule::SunOs,
            send_completes_on_ack: false,
        };
        let mut tcb = Tcb::new(Flavour::Sunos411, 9140, 32768, 32768, Seq(1000));
        let mut sink = TtcpSink::new(8192, 8192);
        let mut t = SimTime::from_ms(3);
        let mut out = Vec::new();
        assert_eq!(sink.step(&mut tcb, &costs, &mut t, &mut out), Step::Blocked);
        assert_eq!(sink.started, Some(SimTime::from_ms(3)));
        assert_eq!(sink.reads, 0);
    }
}
