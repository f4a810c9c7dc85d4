//! TCP flavours: one core (`Tcb`), a flavour is a small set of policy choices.

use crate::time::SimTime;
use std::fmt;
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// 4.3BSD-Tahoe as in SunOS 4.1.x: slow start, congestion avoidance, no fast
    /// retransmit or recovery, Tahoe's window-update rule, 200 ms delayed ACK.
    Sunos411,
    /// 4.3BSD-Reno / 4.4BSD: adds fast retransmit and fast recovery.
    Reno,
}

impl Flavour {
    pub const ALL: [Flavour; 2] = [Flavour::Sunos411, Flavour::Reno];

    pub fn name(self) -> &'static str {
        match self {
            Flavour::Sunos411 => "sunos411",
            Flavour::Reno => "reno",
        }
    }

    pub fn policy(self) -> Policy {
        match self {
            Flavour::Sunos411 => Policy {
                max_sockbuf: 52_428,
                dupack_threshold: None,
                fast_recovery: false,
                window_update_when_empty: true,
                ca_increment_eighth: false,
                delack_interval: SimTime::from_ms(200),
            },
            Flavour::Reno => Policy {
                max_sockbuf: 52_428,
                dupack_threshold: Some(3),
                fast_recovery: true,
                // 4.4BSD dropped the empty-buffer part of the window-update test.
                window_update_when_empty: false,
                ca_increment_eighth: true,
                delack_interval: SimTime::from_ms(200),
            },
        }
    }
}

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown flavour name (the message lists the known ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFlavour(pub String);

impl fmt::Display for UnknownFlavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Flavour::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "unknown TCP flavour {:?}: expected one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl FromStr for Flavour {
    type Err = UnknownFlavour;
    fn from_str(s: &str) -> Result<Flavour, UnknownFlavour> {
        Flavour::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFlavour(s.to_string()))
    }
}

/// The policy differences between flavours.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Largest SO_SNDBUF/SO_RCVBUF the kernel accepts (SunOS 4.1.1: 52428).
    pub max_sockbuf: u32,
    /// Duplicate ACKs that trigger a fast retransmit (None: no fast retransmit).
    pub dupack_threshold: Option<u32>,
    /// Reno fast recovery: inflate cwnd by dup ACKs instead of slow-starting.
    pub fast_recovery: bool,
    /// 4.3BSD-Tahoe tcp_output: also send a window update when the receive
    /// buffer is empty and the window opens by at least 2 MSS.
    pub window_update_when_empty: bool,
    /// 4.3BSD-Reno congestion avoidance adds maxseg/8 per ACK.
    pub ca_increment_eighth: bool,
    /// Period of the global fast timer that sends delayed ACKs.
    pub delack_interval: SimTime,
}
