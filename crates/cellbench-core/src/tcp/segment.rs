//! A TCP segment as the simulator carries it: header fields and a payload length
//! (the bytes themselves never matter to throughput, so they are not carried).

use super::seq::Seq;
use std::fmt;

/// TCP/IP header bytes without options (20 IP + 20 TCP): MSS = MTU − 40.
pub const TCPIP_HEADER: u32 = 40;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
}

/// Why tcp_output sent a segment: the branch of its send decision that fired.
/// This is what makes a lock-step visible in a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SendReason {
    /// len == MSS.
    FullMss,
    /// Connection idle (all sent data acknowledged) and len reaches the end of the buffer.
    Idle,
    /// TCP_NODELAY and len reaches the end of the buffer.
    NoDelay,
    /// len >= max_sndwnd / 2 (sender silly-window avoidance's escape).
    HalfWindow,
    /// snd_nxt < snd_max: resending after a timeout.
    Retransmit,
    /// Forced by the persist timer (window probe).
    Persist,
    /// Receive window can be re-advertised by enough (2 MSS with an empty buffer, or 35%).
    WindowUpdate,
    /// The 200 ms fast timer found a delayed ACK pending.
    DelayedAck,
    /// An ACK owed at once (out-of-order data, SYN, FIN, every second segment).
    AckNow,
    /// Connection set-up or tear-down control segment.
    Control,
}

impl SendReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SendReason::FullMss => "full-mss",
            SendReason::Idle => "idle",
            SendReason::NoDelay => "nodelay",
            SendReason::HalfWindow => "half-window",
            SendReason::Retransmit => "retransmit",
            SendReason::Persist => "persist",
            SendReason::WindowUpdate => "window-update",
            SendReason::DelayedAck => "delack-timer",
            SendReason::AckNow => "ack-now",
            SendReason::Control => "control",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: Seq,
    pub ack: Seq,
    pub len: u32,
    pub flags: Flags,
    /// Advertised window in bytes (already unscaled).
    pub win: u32,
    /// MSS option (on SYNs only).
    pub mss: Option<u32>,
    pub reason: SendReason,
}

impl Segment {
    /// Bytes of the IP datagram carrying this segment.
    pub fn ip_len(&self) -> u32 {
        TCPIP_HEADER + self.len + if self.mss.is_some() { 4 } else { 0 }
    }
}

impl fmt::Display for Segment {
    /// tcpdump-like: `S 1:1(0) ack 1 win 24576 <mss 9148>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut fl = String::new();
        if self.flags.syn {
            fl.push('S');
        }
        if self.flags.fin {
            fl.push('F');
        }
        if self.flags.rst {
            fl.push('R');
        }
        if fl.is_empty() {
            fl.push('.');
        }
        write!(f, "{fl} ")?;
        if self.len > 0 || self.flags.syn || self.flags.fin {
            write!(f, "{}:{}({}) ", self.seq, self.seq + self.len, self.len)?;
        }
        if self.flags.ack {
            write!(f, "ack {} ", self.ack)?;
        }
        write!(f, "win {}", self.win)?;
        if let Some(mss) = self.mss {
            write!(f, " <mss {mss}>")?;
        }
        Ok(())
    }
}
