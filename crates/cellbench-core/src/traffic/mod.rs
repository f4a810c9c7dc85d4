//! NetSpec's traffic, for every engine: the laws a block size or an
//! inter-block time follows (a fixed value, uniform, exponential), each
//! connection's stream of draws, and the schedule of blocks a source writes.
//! The simulator's sources (`host::ttcp`) and the real engine's agents
//! (`real`) draw here, so that one seed names one schedule in both
//! (`tests/traffic_schedule.rs`).

mod law;
mod schedule;

pub use law::{BadDist, Dist, Law, Param};
pub use schedule::{Block, Draws, RandomSpec, Schedule};
