//! What the controller asks of an agent: a source's and a sink's spec, as
//! JSON (unknown keys are errors), and a source's checks of its own.

use super::socket::SocketOptions;
use super::AgentError;
use crate::traffic::{RandomSpec, Schedule};
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Udp,
}

/// The largest UDP payload over IPv4.
const UDP_MAX_PAYLOAD: usize = 65507;

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

impl SourceSpec {
    pub(super) fn check(&self) -> Result<(), AgentError> {
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

    pub(super) fn options(&self) -> SocketOptions {
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
    pub(super) fn over(&self, sent: u64, now: Instant, end: Option<Instant>) -> bool {
        match self.nbytes {
            Some(n) => sent >= n,
            None => now >= end.expect("duration_s checked"),
        }
    }

    pub(super) fn paced(&self) -> bool {
        self.period_us.is_some() || self.random.as_ref().is_some_and(|r| r.period_us.is_some())
    }

    /// The blocks this source writes and when each is due, from its first.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.blocksize, self.period_us, self.random.as_ref())
    }
}
