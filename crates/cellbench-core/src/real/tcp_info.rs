//! Linux `struct tcp_info` (include/uapi/linux/tcp.h), read by byte offset so
//! that a kernel writing a shorter struct (older ones lack the busy and
//! limited times, added in 4.9/4.10; the RTO counts, 6.7) leaves those fields
//! `None` rather than 0.

use serde::Serialize;
use std::os::fd::RawFd;

use super::socket::getsockopt_bytes;

/// Byte offsets of the fields read, from the uapi header.
mod field {
    pub const RETRANSMITS: usize = 2; // u8: consecutive RTO retransmissions now
    pub const BACKOFF: usize = 4; // u8: icsk_backoff, the RTO's doublings now
    pub const RTO: usize = 8; // µs, the retransmission timeout now
    pub const SND_MSS: usize = 16;
    pub const UNACKED: usize = 24;
    pub const LOST: usize = 32;
    pub const RTT: usize = 68; // µs, smoothed
    pub const RTTVAR: usize = 72;
    pub const SND_SSTHRESH: usize = 76;
    pub const SND_CWND: usize = 80; // segments
    pub const RCV_SPACE: usize = 96; // bytes: receive autotuning's per-RTT estimate
    pub const TOTAL_RETRANS: usize = 100;
    pub const BYTES_ACKED: usize = 120; // u64, the SYN's sequence number included
    pub const MIN_RTT: usize = 148;
    pub const DELIVERY_RATE: usize = 160; // u64 bytes/s
    pub const BUSY_TIME: usize = 168; // u64 µs busy sending data
    pub const RWND_LIMITED: usize = 176; // u64 µs limited by the receive window
    pub const SNDBUF_LIMITED: usize = 184; // u64 µs limited by the send buffer
    pub const BYTES_SENT: usize = 200; // u64, retransmissions included (4.19+)
    pub const BYTES_RETRANS: usize = 208; // u64
    pub const SND_WND: usize = 228; // u32 peer's window, bytes (5.19+)
    pub const RCV_WND: usize = 232; // u32 own advertised window, bytes (6.2+)
                                    // 236: tcpi_rehash (6.2+), not read.
    pub const TOTAL_RTO: usize = 240; // u16 RTO expiries, SYN's included (6.7+)
    pub const TOTAL_RTO_RECOVERIES: usize = 242; // u16 RTO recoveries entered (6.7+)
    pub const TOTAL_RTO_TIME: usize = 244; // u32 ms in RTO recovery (6.7+)
    pub const LEN: usize = 248;
}

/// What TCP_INFO says about a connection, summarised for its result row.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TcpInfo {
    pub snd_mss: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub unacked: u32,
    pub lost: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: Option<u32>,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    pub rto_backoffs: u8,
    pub delivery_rate_bps: Option<f64>,
    pub busy_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    pub bytes_retrans: Option<u64>,
    pub bytes_acked: Option<u64>,
    pub bytes_sent: Option<u64>,
    pub snd_wnd: Option<u32>,
    /// The RTO's doublings now (icsk_backoff) and the RTO now, µs.
    pub backoff: u8,
    pub rto_us: u32,
    /// The receiver's autotuning estimate of what the sender sends in one round
    /// trip (tcp_rcv_space_adjust grows the receive buffer from it), bytes.
    pub rcv_space: u32,
    /// The window this end advertises now, bytes (6.2+).
    pub rcv_wnd: Option<u32>,
    /// Retransmission timeouts over the connection's life (the SYN's and
    /// repeated ones included), the RTO recoveries they began, and the time
    /// spent in those recoveries, ms (Linux 6.7+, tcp_get_info()).
    pub total_rto: Option<u16>,
    pub total_rto_recoveries: Option<u16>,
    pub total_rto_time_ms: Option<u32>,
}

impl TcpInfo {
    /// Parse the bytes the kernel wrote (`len` of them).
    pub fn parse(buf: &[u8]) -> TcpInfo {
        let u32_at = |at: usize| {
            buf.get(at..at + 4)
                .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
        };
        let u16_at = |at: usize| {
            buf.get(at..at + 2)
                .map(|b| u16::from_ne_bytes(b.try_into().unwrap()))
        };
        let u64_at = |at: usize| {
            buf.get(at..at + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
        };
        TcpInfo {
            snd_mss: u32_at(field::SND_MSS).unwrap_or(0),
            snd_cwnd: u32_at(field::SND_CWND).unwrap_or(0),
            snd_ssthresh: u32_at(field::SND_SSTHRESH).unwrap_or(0),
            unacked: u32_at(field::UNACKED).unwrap_or(0),
            lost: u32_at(field::LOST).unwrap_or(0),
            rtt_us: u32_at(field::RTT).unwrap_or(0),
            rttvar_us: u32_at(field::RTTVAR).unwrap_or(0),
            min_rtt_us: u32_at(field::MIN_RTT),
            total_retrans: u32_at(field::TOTAL_RETRANS).unwrap_or(0),
            rto_backoffs: buf.get(field::RETRANSMITS).copied().unwrap_or(0),
            delivery_rate_bps: u64_at(field::DELIVERY_RATE).map(|r| r as f64 * 8.0),
            busy_us: u64_at(field::BUSY_TIME),
            rwnd_limited_us: u64_at(field::RWND_LIMITED),
            sndbuf_limited_us: u64_at(field::SNDBUF_LIMITED),
            bytes_retrans: u64_at(field::BYTES_RETRANS),
            bytes_acked: u64_at(field::BYTES_ACKED),
            bytes_sent: u64_at(field::BYTES_SENT),
            snd_wnd: u32_at(field::SND_WND),
            backoff: buf.get(field::BACKOFF).copied().unwrap_or(0),
            rto_us: u32_at(field::RTO).unwrap_or(0),
            rcv_space: u32_at(field::RCV_SPACE).unwrap_or(0),
            rcv_wnd: u32_at(field::RCV_WND),
            total_rto: u16_at(field::TOTAL_RTO),
            total_rto_recoveries: u16_at(field::TOTAL_RTO_RECOVERIES),
            total_rto_time_ms: u32_at(field::TOTAL_RTO_TIME),
        }
    }

    /// The data in flight, bytes: sent once and not yet acknowledged (snd_nxt
    /// − snd_una, as the simulator's flight). Before 4.19, unacknowledged
    /// segments × MSS, which counts a short segment as a whole one.
    pub fn flight_bytes(&self) -> u64 {
        match (self.bytes_sent, self.bytes_retrans, self.bytes_acked) {
            // bytes_acked counts the SYN's sequence number, bytes_sent no SYN.
            (Some(sent), Some(again), Some(acked)) => sent
                .saturating_sub(again)
                .saturating_sub(acked.saturating_sub(1)),
            _ => self.unacked as u64 * self.snd_mss as u64,
        }
    }

    /// TCP_INFO of a connected TCP socket.
    pub fn read(fd: RawFd) -> std::io::Result<TcpInfo> {
        let mut buf = [0u8; field::LEN];
        let n = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
        Ok(TcpInfo::parse(&buf[..n]))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_parse_short_struct() {
        // A 4.4-era kernel writes 104 bytes: no busy or limited times.
        let mut buf = vec![0u8; 104];
        buf[field::SND_CWND..field::SND_CWND + 4].copy_from_slice(&10u32.to_ne_bytes());
        buf[field::TOTAL_RETRANS..field::TOTAL_RETRANS + 4].copy_from_slice(&3u32.to_ne_bytes());
        let info = TcpInfo::parse(&buf);
        assert_eq!(info.snd_cwnd, 10);
        assert_eq!(info.total_retrans, 3);
        assert_eq!(info.busy_us, None);
        assert_eq!(info.min_rtt_us, None);
        assert_eq!(info.total_rto, None);
    }

    #[test]
    fn test_parse_rto_counts() {
        // 6.2-6.6 write 240 bytes: the advertised window, no RTO counts.
        let mut buf = vec![0u8; field::LEN];
        buf[field::RCV_WND..field::RCV_WND + 4].copy_from_slice(&65_535u32.to_ne_bytes());
        buf[field::TOTAL_RTO..field::TOTAL_RTO + 2].copy_from_slice(&7u16.to_ne_bytes());
        buf[field::TOTAL_RTO_RECOVERIES..field::TOTAL_RTO_RECOVERIES + 2]
            .copy_from_slice(&3u16.to_ne_bytes());
        buf[field::TOTAL_RTO_TIME..field::TOTAL_RTO_TIME + 4]
            .copy_from_slice(&1_250u32.to_ne_bytes());
        buf[field::BACKOFF] = 2;
        let info = TcpInfo::parse(&buf[..240]);
        assert_eq!(info.rcv_wnd, Some(65_535));
        assert_eq!((info.total_rto, info.total_rto_time_ms), (None, None));
        let info = TcpInfo::parse(&buf);
        assert_eq!(info.total_rto, Some(7));
        assert_eq!(info.total_rto_recoveries, Some(3));
        assert_eq!(info.total_rto_time_ms, Some(1_250));
        assert_eq!(info.backoff, 2);
    }

    #[test]
    fn test_parse_full_struct() {
        let mut buf = vec![0u8; field::LEN];
        buf[field::BUSY_TIME..field::BUSY_TIME + 8].copy_from_slice(&1_000_000u64.to_ne_bytes());
        buf[field::RWND_LIMITED..field::RWND_LIMITED + 8]
            .copy_from_slice(&600_000u64.to_ne_bytes());
        let info = TcpInfo::parse(&buf);
        assert_eq!(info.busy_us, Some(1_000_000));
        assert_eq!(info.rwnd_limited_us, Some(600_000));
        assert_eq!(info.sndbuf_limited_us, Some(0));
    }
}
