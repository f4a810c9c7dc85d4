//! The window in force over a TCP transfer, as the sender's kernel ran it:
//! TCP_INFO read while the source writes and while it waits for the sink's
//! close, its peaks kept. Under autotuning no socket option says the window:
//! the kernel grows the send buffer (tcp_sndbuf_expand) and the receiver's
//! (tcp_rcv_space_adjust) as the transfer runs, so the bytes it kept in flight,
//! its congestion window and the window the receiver advertised are read from
//! the connection itself.

use serde::Serialize;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use super::socket;
use super::tcp_info::TcpInfo;

/// At most one read per this interval: a getsockopt of a few µs, so under 1%
/// of a core; well inside the round trip of every emulated path (the shortest,
/// two hosts on one switch, is near 1 ms), where a window-bound sender keeps
/// its window in flight most of each round trip.
pub const EVERY: Duration = Duration::from_millis(1);

/// The peaks of a transfer's TCP_INFO reads.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WindowPeaks {
    /// TCP_INFO reads taken.
    pub samples: u64,
    /// The most data in flight, bytes (`TcpInfo::flight_bytes`).
    pub flight_bytes: u64,
    /// The largest congestion window, bytes (tcpi_snd_cwnd × MSS).
    pub cwnd_bytes: u64,
    /// The largest window the receiver advertised, bytes (tcpi_snd_wnd, 5.19+).
    pub snd_wnd: Option<u32>,
    /// The largest send buffer (SO_SNDBUF: what autotuning grew it to).
    pub sndbuf: Option<u32>,
}

impl WindowPeaks {
    fn add(&mut self, info: &TcpInfo, sndbuf: Option<u32>) {
        let mss = info.snd_mss as u64;
        self.samples += 1;
        self.flight_bytes = self.flight_bytes.max(info.flight_bytes());
        self.cwnd_bytes = self.cwnd_bytes.max(info.snd_cwnd as u64 * mss);
        self.snd_wnd = self.snd_wnd.max(info.snd_wnd);
        self.sndbuf = self.sndbuf.max(sndbuf);
    }
}

/// Reads a TCP socket's TCP_INFO at most every [`EVERY`], when asked (`tick`).
pub struct Watch {
    fd: RawFd,
    next: Instant,
    pub peaks: WindowPeaks,
}

impl Watch {
    pub fn new(fd: RawFd) -> Watch {
        Watch {
            fd,
            next: Instant::now(),
            peaks: WindowPeaks::default(),
        }
    }

    /// A read if one is due.
    pub fn tick(&mut self) {
        let now = Instant::now();
        if now >= self.next {
            self.next = now + EVERY;
            self.read();
        }
    }

    /// A read now (the last, say).
    pub fn read(&mut self) {
        if let Ok(info) = TcpInfo::read(self.fd) {
            self.peaks.add(&info, socket::buffer_sizes(self.fd).0);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_peaks_keep_the_largest() {
        let mut p = WindowPeaks::default();
        // Before 4.19 (no byte counts), flight is unacknowledged segments × MSS.
        let info = |unacked, cwnd, wnd| TcpInfo {
            snd_mss: 1000,
            unacked,
            snd_cwnd: cwnd,
            snd_wnd: wnd,
            ..TcpInfo::default()
        };
        p.add(&info(10, 20, Some(50_000)), Some(80_000));
        p.add(&info(4, 30, None), Some(160_000));
        p.add(&info(2, 5, Some(40_000)), None);
        assert_eq!(p.samples, 3);
        assert_eq!((p.flight_bytes, p.cwnd_bytes), (10_000, 30_000));
        assert_eq!((p.snd_wnd, p.sndbuf), (Some(50_000), Some(160_000)));
        // With them, sent once and not acknowledged: short segments count short.
        let counted = TcpInfo {
            snd_mss: 1000,
            unacked: 40,
            bytes_sent: Some(60_000),
            bytes_retrans: Some(5_000),
            bytes_acked: Some(30_001),
            ..TcpInfo::default()
        };
        p.add(&counted, None);
        assert_eq!(p.flight_bytes, 25_000);
    }
}
