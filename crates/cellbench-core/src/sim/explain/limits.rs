//! The limits a connection may be bound by, and the shares of a bound or of
//! the transfer at which `classify` says one binds. Apart: the
//! vocabulary the rules, the reports and the tables share.

use std::fmt;

/// What bound a connection, in the order [`classify`](fn@super::classify) tries them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LimitedBy {
    /// A paced source (constant- or random-rate traffic) got the load it offered,
    /// where nothing else let through less (the offer was the fullest bound).
    Application,
    /// The Nagle/delayed-ACK circular wait: data released by the receiver's timer.
    Lockstep,
    /// An ABR circuit's allowed cell rate (ACR), set by the switches'
    /// feedback (an explicit rate, EFCI or relative-rate marking).
    AbrRate,
    /// The cell rate of the path: the slowest link, or the adapter's pacing,
    /// cell spacing and PDU gap; alone or shared with other connections; where
    /// the link was fuller than a saturated CPU and the window.
    Link,
    /// The sender's or the receiver's CPU.
    HostCpu,
    /// The window in flight over the round trip (the smaller socket buffer, or
    /// the offered or congestion window).
    Window,
    /// Cells discarded by usage parameter control, and TCP's recovery from it.
    Policing,
    /// Cells lost where a switch buffer overflowed, and TCP's recovery from it.
    CellLoss,
    /// PDUs the sender's own interface queue refused (BSD's `IF_DROP` when
    /// `ifq_maxlen` packets wait), and TCP's recovery from it: no cell was lost
    /// in the network; the window the host lets out exceeds what its interface
    /// queue holds while the adapter sends at its rate (a host and window limit).
    InterfaceQueue,
    /// Starved (under 5% of its fair share) at a congested port that another
    /// connection held, in backed-off retransmission timeouts (`capture.rs`).
    Capture,
    /// The sender holding back a short segment for an ACK (Nagle, sender SWS
    /// avoidance) without the receiver's timer pacing it.
    Nagle,
    /// No rule applied; the evidence gives how close each bound came.
    Undetermined,
}

impl LimitedBy {
    pub const ALL: [LimitedBy; 12] = [
        LimitedBy::Application,
        LimitedBy::Lockstep,
        LimitedBy::AbrRate,
        LimitedBy::Link,
        LimitedBy::HostCpu,
        LimitedBy::Window,
        LimitedBy::Policing,
        LimitedBy::CellLoss,
        LimitedBy::InterfaceQueue,
        LimitedBy::Capture,
        LimitedBy::Nagle,
        LimitedBy::Undetermined,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LimitedBy::Application => "application",
            LimitedBy::Lockstep => "lockstep",
            LimitedBy::AbrRate => "abr-rate",
            LimitedBy::Link => "link",
            LimitedBy::HostCpu => "host-cpu",
            LimitedBy::Window => "window",
            LimitedBy::Nagle => "nagle",
            LimitedBy::Policing => "policing",
            LimitedBy::CellLoss => "cell-loss",
            LimitedBy::InterfaceQueue => "interface-queue",
            LimitedBy::Capture => "capture",
            LimitedBy::Undetermined => "undetermined",
        }
    }
}

impl fmt::Display for LimitedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A paced source got at least this share of its offered load: the network
/// kept up, the application set the rate.
pub const APPLICATION_SHARE: f64 = 0.90;
/// At least this share of what the path carries: the link is full (framing,
/// headers and the PDU gap are already counted in the path's rate, so the rest
/// is start-up and ACK-clocking slack).
pub const LINK_SHARE: f64 = 0.85;
/// The ACR's time-weighted mean over the circuit's active time (its first cell
/// to its last) stands for the rate an ABR transfer ran at only if what it
/// delivered is at most this share above what that mean carries. The mean is
/// over the cells' time, the delivered rate over the transfer's span (the
/// handshake before the first cell, the receiver's last read after the last);
/// and out-of-rate RM cells (rule 11) go beside the ACR. 3%: the margin
/// ERICA holds an ACR to its fair share in (`examples/abr.netspec`,
/// tests/test_abr.py). Further above, the ACR did not pace the transfer.
pub const ACR_DRIFT: f64 = 0.03;
/// A CPU busy at least this share of the transfer has no time left to give
/// (the jitter of each piece of work and the timer ticks take the rest).
pub const CPU_BUSY: f64 = 0.90;
/// At least this share of window / round trip: the window is what holds the
/// sender back (the delayed or every-second-segment ACK costs up to a segment's
/// time per round trip, which is why the share is not nearer 1).
pub const WINDOW_SHARE: f64 = 0.80;
/// The window's closed cycles (a segment out with the window closed behind it,
/// to the next new one) spanned at least this share of the transfer: the
/// closed window, not a moment of it, paced most of the transfer.
pub const WINDOW_CLOSED: f64 = 0.50;
/// Neither CPU was saturated, but the two together were busy at least this
/// share of the transfer: their work, not the path or a timer, filled it (the
/// same share as [`CPU_BUSY`], for the pair taken together).
pub const CPU_BUSY_JOINT: f64 = CPU_BUSY;
/// The sender held back data its window allowed for at least this share of
/// the transfer: for most of it, Nagle's rule, not the window, kept data back
/// (as the circular wait's share makes a lock-step).
pub const NAGLE_HOLD: f64 = 0.50;
