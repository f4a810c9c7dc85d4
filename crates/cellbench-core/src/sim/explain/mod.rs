//! What bound a transfer (docs/design.md §8), and the evidence.
//!
//! [`classify`] names the limit of one connection from facts measured while
//! it ran ([`Facts`], gathered by [`Facts::gather`]): one of [`LimitedBy`], with
//! a sentence giving the numbers.
//!
//! The delayed-ACK lock-step also shows itself in a trace as a cycle: the
//! receiver's 200 ms timer releases an ACK, the sender answers with the data it
//! had been holding back (Nagle and sender silly-window avoidance), and nothing
//! else moves until the next tick. [`lockstep_cycle`] finds that cycle in the
//! steady part of a trace and measures the data released per tick.
//!
//! Its pieces: the names of the limits and the shares at which each binds
//! (`limits`), the facts measured for one connection and the path's rate
//! (`facts`), the rules that name the limit (`classify`), and the lock-step
//! as a trace shows it (`lockstep`).

pub mod capture;
mod classify;
mod facts;
mod limits;
mod lockstep;

pub use classify::{classify, Explanation};
pub use facts::{
    delivered_bps, path_rate, AbrRate, Facts, Gathered, PathRate, SharedLink, WindowFacts,
};
pub use limits::{
    LimitedBy, ACR_DRIFT, APPLICATION_SHARE, CPU_BUSY, CPU_BUSY_JOINT, LINK_SHARE, NAGLE_HOLD,
    WINDOW_CLOSED, WINDOW_SHARE,
};
pub use lockstep::{lockstep_cycle, LockstepCycle};
