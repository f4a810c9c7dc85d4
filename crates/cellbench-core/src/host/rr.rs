//! netperf's TCP_RR: request/response transactions on one connection. The
//! client (netperf, the transmitter) writes a request of `request` bytes in one
//! send() and reads until the whole response has arrived; the server
//! (netserver, the receiver) reads until the whole request has arrived and
//! writes the response in one send(). Only then does the client send the next
//! request, so one transaction costs a round trip plus both hosts' work, and
//! whatever TCP holds back on the way (Nagle on a response's last short
//! segment, a delayed ACK) adds to it.
//!
//! netperf -l times the test with an alarm: the transactions completed before
//! it fires count, over the test's length (nettest_bsd.c send_tcp_rr: the
//! alarm interrupts the send or recv in progress). Here the client finishes the
//! transaction in progress uncounted, then closes, so the connection ends
//! cleanly; the server ends at the end of file.

use super::ttcp::{soreceive, sosend_piece, Costs, Step};
use crate::tcp::{Segment, Tcb};
use crate::time::SimTime;

/// The sizes of a transaction's two messages (netperf -r req,resp).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    pub request: u32,
    pub response: u32,
}

/// Which end of the exchange an application is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends requests, for `duration` from its first.
    Client { duration: SimTime },
    /// Answers them until the client closes.
    Server,
}

/// Where an end is in the current transaction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Writing its message: bytes still to copy, and whether the send() has begun.
    Send { left: u32, called: bool },
    /// Reading the peer's message: bytes still to arrive.
    Receive { left: u32 },
}

/// One end of a request/response test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestResponse {
    pub sizes: Transaction,
    pub role: Role,
    phase: Phase,
    /// Transactions completed (the client: before its alarm).
    pub transactions: u64,
    pub written: u64,
    pub read: u64,
    pub writes: u64,
    pub reads: u64,
    /// The client's first send() (netperf's cpu_start after the connect).
    pub started: Option<SimTime>,
    pub finished: Option<SimTime>,
    /// The peer's FIN has arrived: a read of an empty buffer returns 0.
    pub eof: bool,
}

impl RequestResponse {
    pub fn new(sizes: Transaction, role: Role) -> RequestResponse {
        let phase = match role {
            Role::Client { .. } => Phase::Send {
                left: sizes.request,
                called: false,
            },
            Role::Server => Phase::Receive {
                left: sizes.request,
            },
        };
        RequestResponse {
            sizes,
            role,
            phase,
            transactions: 0,
            written: 0,
            read: 0,
            writes: 0,
            reads: 0,
            started: None,
            finished: None,
            eof: false,
        }
    }

    /// When the client's alarm fires (None before its first request).
    pub fn alarm(&self) -> Option<SimTime> {
        match self.role {
            Role::Client { duration } => self.started.map(|s| s + duration),
            Role::Server => None,
        }
    }

    /// The end of netperf's elapsed time: the alarm, or the client's end if
    /// it ended sooner (it never does unless the connection failed).
    pub fn interval_end(&self) -> Option<SimTime> {
        match (self.finished, self.alarm()) {
            (Some(f), Some(a)) => Some(f.min(a)),
            (f, _) => f,
        }
    }

    /// One system call's worth of the exchange: a piece of a send() (as
    /// sosend appends it), or one recv(). Advances `t` by its CPU cost.
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
        match self.phase {
            Phase::Send { left, called } => {
                if !called {
                    // The client sends no new request once its alarm has fired.
                    if self.alarm().is_some_and(|a| *t >= a) {
                        self.finished = Some(*t);
                        return Step::Done;
                    }
                    self.started.get_or_insert(*t);
                    self.writes += 1;
                    *t += costs.syscall;
                }
                let Some(n) = sosend_piece(tcb, costs, left, t, out) else {
                    self.phase = Phase::Send { left, called: true };
                    return Step::Blocked;
                };
                self.written += n as u64;
                self.phase = match left - n {
                    0 => Phase::Receive {
                        left: self.incoming(),
                    },
                    left => Phase::Send { left, called: true },
                };
                Step::Continue
            }
            Phase::Receive { left } => {
                if tcb.rcv.cc == 0 {
                    if self.eof {
                        self.finished = Some(*t);
                        return Step::Done;
                    }
                    return Step::Blocked;
                }
                let n = soreceive(tcb, costs, left, t, out);
                self.read += n as u64;
                self.reads += 1;
                if n < left {
                    self.phase = Phase::Receive { left: left - n };
                    return Step::Continue;
                }
                // The whole message is in: the transaction turns.
                // The client's count stops at its alarm; the server counts requests answered.
                if self.alarm().is_none_or(|a| *t <= a) {
                    self.transactions += 1;
                }
                self.phase = Phase::Send {
                    left: self.outgoing(),
                    called: false,
                };
                Step::Continue
            }
        }
    }

    /// The size of the message this end writes, and of the one it reads.
    fn outgoing(&self) -> u32 {
        match self.role {
            Role::Client { .. } => self.sizes.request,
            Role::Server => self.sizes.response,
        }
    }

    fn incoming(&self) -> u32 {
        match self.role {
            Role::Client { .. } => self.sizes.response,
            Role::Server => self.sizes.request,
        }
    }
}
