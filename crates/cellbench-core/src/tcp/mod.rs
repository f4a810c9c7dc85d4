//! TCP implementations over one shared core: the control block and BSD
//! mechanisms live in [`tcb`]; a [`Flavour`] is a small set of policy choices.

pub mod flavour;
pub mod segment;
pub mod seq;
pub mod tcb;

pub use flavour::{Flavour, Policy};
pub use segment::{Flags, Segment, SendReason, TCPIP_HEADER};
pub use seq::Seq;
pub use tcb::{SockBuf, State, Tcb, TcpStats, Wakeups};
