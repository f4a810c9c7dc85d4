//! What an agent reports: a source's and a sink's figures, and a paced
//! source's timing summary.

use super::measure::{HostMeasure, TcpSample};
use super::tcp_info::TcpInfo;
use super::watch::WindowPeaks;
use serde::Serialize;

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
    /// TCP: the window in force, TCP_INFO's peaks over the writes and the drain.
    pub window: Option<WindowPeaks>,
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
    /// TCP: when accept() returned (epoch s); None over UDP.
    pub accepted_at: Option<f64>,
    /// The first and the last read that returned data (epoch s).
    pub first_at: Option<f64>,
    pub last_at: Option<f64>,
    /// The receiver's interval, as ttcp -r's: from `accepted_at` (TCP) or
    /// `first_at` (UDP) to `last_at`; `throughput_bps` is `bytes` over it.
    pub seconds: f64,
    pub throughput_bps: f64,
    /// From the first read to the last: the reads' own span, which leaves out
    /// the handshake's last ACK to the first data (the receiver's interval
    /// before the sink timed from accept).
    pub read_seconds: f64,
    pub rcvbuf_granted: Option<u32>,
    /// TCP, at the end: the receive buffer autotuning grew (SO_RCVBUF) and its
    /// estimate of a round trip's data that it grew it from (tcpi_rcv_space).
    pub rcvbuf_end: Option<u32>,
    pub rcv_space: Option<u32>,
    /// The deadline passed before the source finished.
    pub timed_out: bool,
    /// This host until the end: the CPU from the accept (TCP) or the first datagram
    /// (UDP), the interface from the moment the sink listens.
    pub host: HostMeasure,
}

pub(super) fn timing(errors_ns: &mut [u64], late: u64, realtime: bool) -> Timing {
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
