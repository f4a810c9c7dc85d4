//! ttcp as an application: the transmitter writes `buflen`-byte buffers until
//! `nbytes` are written; the receiver reads up to `buflen` bytes as data
//! arrives. ttcp -t times from just before the first write to just after the
//! last write returns, so its figure counts data still in the send buffer.

use super::socket::next_append;
use crate::tcp::{Segment, Tcb};
use crate::time::SimTime;

/// ttcp's default buffer length (-l).
pub const DEFAULT_BUFLEN: u32 = 8192;

/// What one step of an application did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// More to do: run again (after any interrupt work queued meanwhile).
    Continue,
    /// Waiting for the socket (space to write, data to read).
    Blocked,
    /// The application has finished (last write returned / all data read).
    Done,
}

/// The costs an application step charges to the CPU.
pub struct Costs {
    pub syscall: SimTime,
    pub copy_ps_per_byte: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtcpSource {
    pub buflen: u32,
    pub nbytes: u64,
    /// Bytes accepted into the send buffer so far.
    pub written: u64,
    /// Bytes of the current write() not yet copied in.
    resid: u32,
    pub writes: u64,
    pub started: Option<SimTime>,
    pub finished: Option<SimTime>,
}

impl TtcpSource {
    pub fn new(buflen: u32, nbytes: u64) -> TtcpSource {
        TtcpSource {
            buflen,
            nbytes,
            written: 0,
            resid: 0,
            writes: 0,
            started: None,
            finished: None,
        }
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
        if self.finished.is_some() {
            return Step::Done;
        }
        if self.resid == 0 {
            if self.written >= self.nbytes {
                return Step::Done;
            }
            if self.started.is_none() {
                self.started = Some(*t);
            }
            self.resid = (self.nbytes - self.written).min(self.buflen as u64) as u32;
            self.writes += 1;
            *t += costs.syscall;
        }
        let Some(n) = next_append(tcb.snd.space(), self.resid) else {
            return Step::Blocked;
        };
        *t += SimTime(costs.copy_ps_per_byte * n as u64);
        self.resid -= n;
        self.written += n as u64;
        tcb.append(n, out);
        if self.resid == 0 && self.written >= self.nbytes {
            Step::Done
        } else {
            Step::Continue
        }
    }
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
}

impl TtcpSink {
    pub fn new(buflen: u32, nbytes: u64) -> TtcpSink {
        TtcpSink {
            buflen,
            nbytes,
            read: 0,
            reads: 0,
            started: None,
            finished: None,
            eof: false,
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
        if tcb.rcv.cc == 0 {
            if self.eof || self.read >= self.nbytes {
                self.finished = Some(*t);
                return Step::Done;
            }
            return Step::Blocked;
        }
        if self.started.is_none() {
            self.started = Some(*t);
        }
        let n = tcb.rcv.cc.min(self.buflen);
        *t += costs.syscall + SimTime(costs.copy_ps_per_byte * n as u64);
        self.read += n as u64;
        self.reads += 1;
        tcb.read(n, out);
        if self.read >= self.nbytes {
            self.finished = Some(*t);
            return Step::Done;
        }
        Step::Continue
    }
}
