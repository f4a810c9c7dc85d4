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

#[cfg(test)]
mod test {
    use crate::sim::spec::{ConnResult, ConnSpec, HostSpec, RunSpec, Traffic};

    /// netperf -t TCP_RR -l `secs` -- -r req,resp between two SPARCstation IPCs
    /// (SunOS 4.1.1) on the lan-buffers LAN, B `metres` of fibre from the switch.
    fn rr(request: u32, response: u32, nodelay: bool, metres: f64) -> ConnResult {
        let traffic = Traffic::Rr {
            request,
            response,
            duration_s: 2.0,
        };
        let conn = ConnSpec {
            nodelay,
            ..ConnSpec::new("A", "B", traffic)
        };
        let b = HostSpec {
            distance_m: metres,
            ..HostSpec::named("B")
        };
        let mut spec = RunSpec::new(vec![HostSpec::named("A"), b], vec![conn]);
        spec.trace = true;
        spec.run().unwrap().connections.remove(0)
    }

    const ROOM: f64 = 10.0;

    fn period_s(c: &ConnResult) -> f64 {
        1.0 / c.transaction_rate.expect("a request/response result")
    }

    #[test]
    fn one_byte_transactions_take_a_round_trip_and_both_hosts_work() {
        let near = rr(1, 1, false, ROOM);
        let rtt = near.min_rtt_s.expect("timed");
        let period = period_s(&near);
        // A transaction is the request's round trip (to the response that
        // acknowledges it: the wire both ways and the server's work) plus the
        // client's work on the response and the next request, about as much
        // as the server's on two hosts alike: more than one round trip, not three
        // (the round trip is the shortest seen; each piece of work varies by ±10%).
        assert!(rtt < period && period < 3.0 * rtt, "{period} {rtt}");
        // Every ACK rides on the next message: nothing waits for the delayed-ACK
        // timer. (A 200 ms tick that falls between a message's arrival and its
        // answer sends a pure ACK now and then: not 1% of the transactions.)
        let timer_acks = near.trace.iter().filter(|l| l.contains("[delack-timer]"));
        assert!(timer_acks.count() * 100 < near.transactions.unwrap() as usize);
        // 100 km more fibre to B: 0.5 ms each way, crossed by the request and the
        // response: exactly 1 ms more per transaction, nothing else changes.
        let far = rr(1, 1, false, 100_000.0 + ROOM);
        let extra = period_s(&far) - period;
        assert!((extra - 1e-3).abs() < 0.02e-3, "{extra}");
        // The count covers the test length, the rate is count / length.
        assert_eq!(near.sender_seconds, 2.0);
        let n = near.transactions.unwrap();
        assert_eq!(near.transaction_rate, Some(n as f64 / 2.0));
    }

    #[test]
    fn larger_responses_lower_the_rate_until_nagle_meets_the_delayed_ack() {
        let rates: Vec<f64> = [1, 1024, 4096]
            .map(|resp| rr(1, resp, false, ROOM).transaction_rate.unwrap())
            .to_vec();
        assert!(rates[0] > rates[1] && rates[1] > rates[2], "{rates:?}");
        // A 9148-byte response goes into SunOS's send buffer as 4 KB, 4 KB and
        // 956 bytes; the short tail waits (Nagle) for an ACK of what is in
        // flight, which the client delays to its 200 ms timer: one transaction per tick.
        let slow = rr(1, 9148, false, ROOM);
        assert_eq!(slow.limited_by, "lockstep", "{}", slow.limit_evidence);
        // The server's Nagle holds the tail (not an application waiting in send()).
        assert!(
            slow.limit_evidence.starts_with("Nagle/delayed-ACK"),
            "{}",
            slow.limit_evidence
        );
        let rate = slow.transaction_rate.unwrap();
        assert!((4.5..=5.5).contains(&rate), "{rate}");
        // TCP_NODELAY (netperf -D) sends the tail at once.
        let fast = rr(1, 9148, true, ROOM).transaction_rate.unwrap();
        assert!(fast > 20.0 * rate, "{fast} {rate}");
    }

    #[test]
    fn a_transaction_is_explained_by_its_round_trip_not_a_streams_bounds() {
        // 100 km to B: a 1-byte transaction is a round trip; the window bound a
        // stream would name (1 byte in flight per round trip) says nothing here.
        let far = rr(1, 1, false, 100_000.0);
        assert_eq!(far.limited_by, "undetermined");
        let e = &far.limit_evidence;
        assert!(
            e.starts_with("request/response: ") && e.contains("round trip"),
            "{e}"
        );
    }

    #[test]
    fn same_seed_same_transactions() {
        let a = rr(64, 512, false, ROOM);
        let b = rr(64, 512, false, ROOM);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.transactions.unwrap() > 100);
    }

    #[test]
    fn empty_messages_are_refused() {
        let mut spec = RunSpec::new(
            vec![HostSpec::named("A"), HostSpec::named("B")],
            vec![ConnSpec::new(
                "A",
                "B",
                Traffic::Rr {
                    request: 1,
                    response: 0,
                    duration_s: 1.0,
                },
            )],
        );
        let err = spec.scenario().unwrap_err().to_string();
        assert!(
            err.contains("response 0 bytes") && err.contains("1 to"),
            "{err}"
        );
        spec.connections[0].protocol = "udp".into();
        let err = spec.scenario().unwrap_err().to_string();
        assert!(err.contains("must be tcp"), "{err}");
    }
}
