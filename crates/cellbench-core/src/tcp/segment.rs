//! A TCP segment as the simulator carries it: header fields and a payload length
//! (the bytes themselves never matter to throughput, so they are not carried).

use super::seq::Seq;
use std::fmt;

/// TCP/IP header bytes without options (20 IP + 20 TCP): MSS = MTU − 40.
pub const TCPIP_HEADER: u32 = 40;

/// Option bytes as BSD and Linux lay them out, padded with NOPs to whole
/// 32-bit words: MSS (kind 2), window scale (NOP + kind 3), timestamps
/// (NOP NOP + kind 8, or SACK-permitted + timestamps on a SYN), SACK-permitted
/// alone (NOP NOP + kind 4), and SACK blocks (NOP NOP + kind 5 + 8 per block).
pub const TCPOLEN_MSS: u32 = 4;
pub const TCPOLEN_WSCALE_APPA: u32 = 4;
pub const TCPOLEN_TSTAMP_APPA: u32 = 12;
pub const TCPOLEN_SACK_PERMITTED_APPA: u32 = 4;
pub const TCPOLEN_SACK_APPA: u32 = 4;
pub const TCPOLEN_SACK_BLOCK: u32 = 8;
/// Most SACK blocks one segment can carry (40 option bytes, no timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;
/// Largest window shift (RFC 7323 2.3).
pub const TCP_MAX_WINSHIFT: u8 = 14;

/// The RFC 7323 timestamps option: the sender's clock and the echo of the
/// peer's.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// The SACK blocks of one segment (RFC 2018): [start, end) ranges the receiver
/// holds beyond the cumulative ACK, the most recently changed first.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(Seq, Seq); MAX_SACK_BLOCKS],
    n: u8,
}

impl SackBlocks {
    /// Append a block; false (and nothing changes) when the option is full.
    pub fn push(&mut self, start: Seq, end: Seq) -> bool {
        if self.n as usize == MAX_SACK_BLOCKS {
            return false;
        }
        self.blocks[self.n as usize] = (start, end);
        self.n += 1;
        true
    }
    pub fn as_slice(&self) -> &[(Seq, Seq)] {
        &self.blocks[..self.n as usize]
    }
    pub fn len(&self) -> usize {
        self.n as usize
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

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
    /// The delayed-ACK timer sent a pending ACK (the host's fast tick, or
    /// the connection's own deadline).
    DelayedAck,
    /// An ACK owed at once (out-of-order data, SYN, FIN, every second segment).
    AckNow,
    /// Connection set-up or tear-down control segment.
    Control,
    /// The sub-MSS rest of the window after a full segment (Linux's
    /// tcp_mss_split_point, `Policy::window_tail`).
    WindowTail,
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
            SendReason::WindowTail => "window-tail",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: Seq,
    pub ack: Seq,
    pub len: u32,
    pub flags: Flags,
    /// The 16-bit window field as sent: bytes, shifted right by the sender's
    /// window scale once scaling is in effect (never on a SYN).
    pub win: u32,
    /// MSS option (on SYNs only).
    pub mss: Option<u32>,
    /// Window-scale option: the shift the sender will apply to its own
    /// windows (on SYNs only).
    pub wscale: Option<u8>,
    /// SACK-permitted option (on SYNs only).
    pub sack_permitted: bool,
    /// Timestamps option.
    pub ts: Option<Timestamps>,
    /// SACK option.
    pub sack: SackBlocks,
    pub reason: SendReason,
}

impl Segment {
    /// Bytes of TCP options, padded to whole words.
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += TCPOLEN_MSS;
        }
        if self.wscale.is_some() {
            n += TCPOLEN_WSCALE_APPA;
        }
        // SACK-permitted rides in the two NOPs before the timestamps.
        n += match (self.sack_permitted, self.ts.is_some()) {
            (_, true) => TCPOLEN_TSTAMP_APPA,
            (true, false) => TCPOLEN_SACK_PERMITTED_APPA,
            (false, false) => 0,
        };
        if !self.sack.is_empty() {
            n += TCPOLEN_SACK_APPA + TCPOLEN_SACK_BLOCK * self.sack.len() as u32;
        }
        n
    }

    /// Bytes of the IP datagram carrying this segment.
    pub fn ip_len(&self) -> u32 {
        TCPIP_HEADER + self.options_len() + self.len
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
        // tcpdump's option list: <mss 9148,sackOK,TS val 1 ecr 0,wscale 3>.
        let mut opts: Vec<String> = Vec::new();
        if let Some(mss) = self.mss {
            opts.push(format!("mss {mss}"));
        }
        if self.sack_permitted {
            opts.push("sackOK".into());
        }
        if let Some(ts) = self.ts {
            opts.push(format!("TS val {} ecr {}", ts.val, ts.ecr));
        }
        if let Some(ws) = self.wscale {
            opts.push(format!("wscale {ws}"));
        }
        if !self.sack.is_empty() {
            let blocks: String = self
                .sack
                .as_slice()
                .iter()
                .map(|(s, e)| format!("{{{s}:{e}}}"))
                .collect();
            opts.push(format!("sack {} {blocks}", self.sack.len()));
        }
        if !opts.is_empty() {
            write!(f, " <{}>", opts.join(","))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn seg() -> Segment {
        Segment {
            seq: Seq(1),
            ack: Seq(1),
            len: 0,
            flags: Flags {
                ack: true,
                ..Flags::default()
            },
            win: 24576,
            mss: None,
            wscale: None,
            sack_permitted: false,
            ts: None,
            sack: SackBlocks::default(),
            reason: SendReason::AckNow,
        }
    }

    #[test]
    fn option_bytes_count_in_ip_len() {
        let mut s = seg();
        assert_eq!(s.ip_len(), 40);
        s.mss = Some(9148);
        s.flags.syn = true;
        assert_eq!(s.ip_len(), 44);
        // A modern SYN: MSS, SACK-permitted + timestamps, window scale.
        s.sack_permitted = true;
        s.ts = Some(Timestamps { val: 7, ecr: 0 });
        s.wscale = Some(9);
        assert_eq!(s.options_len(), 20);
        assert_eq!(
            s.to_string(),
            "S 1:1(0) ack 1 win 24576 <mss 9148,sackOK,TS val 7 ecr 0,wscale 9>"
        );
        // A data segment with timestamps: 12 bytes more than bare.
        let mut d = seg();
        d.len = 9136;
        d.ts = Some(Timestamps { val: 9, ecr: 8 });
        assert_eq!(d.ip_len(), 9188);
        // Three SACK blocks fill the 40 option bytes next to timestamps.
        let mut a = seg();
        a.ts = d.ts;
        for k in 0..3 {
            assert!(a.sack.push(Seq(100 * k), Seq(100 * k + 50)));
        }
        assert_eq!(a.options_len(), 40);
        assert!(a.sack.push(Seq(900), Seq(950)));
        assert!(!a.sack.push(Seq(990), Seq(999)));
        assert_eq!(a.sack.len(), MAX_SACK_BLOCKS);
        assert!(a
            .to_string()
            .ends_with("sack 4 {0:50}{100:150}{200:250}{900:950}>"));
    }
}
