//! TCP implementations over one shared core: the control block and the BSD
//! mechanisms (one file each) live in [`tcb`]; a [`Flavour`] is a small set of policy choices.

pub mod flavour;
pub mod sack;
pub mod segment;
pub mod seq;
pub mod tcb;

#[cfg(test)]
mod test;

pub use flavour::{
    AckPolicy, Flavour, Policy, Recovery, TimerModel, UnknownFlavour, WindowUpdateRule,
};
pub use segment::{Flags, SackBlocks, Segment, SendReason, Timestamps, TCPIP_HEADER};
pub use seq::Seq;
pub use tcb::{SockBuf, State, Tcb, TcpStats, Wakeups};
