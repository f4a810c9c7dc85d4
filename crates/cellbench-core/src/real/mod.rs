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
//!   interface's counters) and, with a series, the source samples TCP_INFO;
//!   a TCP source reads TCP_INFO as it writes and drains, for the window in
//!   force (`watch`), and a TCP sink reads what its autotuning reached.
//!   A congestion control or MSS the kernel refuses is a note, not a failure.
//!
//! Wall-clock instants (`*_at`) are seconds since the Unix epoch on this host's
//! clock; the controller maps them onto its own.
//!
//! One file per idea: `spec` what the controller asks, `report` what the agents
//! answer, `source` and `sink` the two agents, `socket` the kernel sockets and
//! their options, `clock` epoch against monotonic time and the waits, `pacer`
//! the precise wait for a paced block, `stop` the controller's interrupt,
//! `limits` a daemon's own bounds, `measure` and `tcp_info` the host's and the
//! connection's counters, `watch` the window a TCP connection kept in force.

pub mod limits;
pub mod measure;
pub mod tcp_info;
pub mod watch;

mod clock;
mod pacer;
mod report;
mod sink;
mod socket;
mod source;
mod spec;
mod stop;

#[cfg(test)]
mod test;

use std::fmt;
use std::io;

pub use report::{SinkReport, SourceReport, Timing};
pub use sink::Sink;
pub use socket::SocketOptions;
pub use source::run_source;
pub use spec::{Protocol, SinkSpec, SourceSpec};
pub use stop::stop;
pub use tcp_info::TcpInfo;

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
