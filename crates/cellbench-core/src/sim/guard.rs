//! Bounds on a running simulation: an event budget per run, and a stop request
//! (Ctrl-C in the front end) that every simulation running in the process
//! honours within `CHECK_EVERY` steps of its event loop. A run that spends its
//! budget ends there, as one the simulated-time limit cuts: its connections not
//! completed, their rates so far (`sim::world`).

use super::scenario::ScenarioError;
use std::sync::atomic::{AtomicBool, Ordering};

/// Steps of the event loop (an event, or a network delivery) a run may take when
/// its spec sets no budget: minutes of work at millions of steps a second, some
/// ten times what an hour of simulated OC-3c transfer takes.
pub const DEFAULT_EVENT_BUDGET: u64 = 500_000_000;

/// How often, in steps, the loop looks at the budget and the stop request: often
/// enough to stop within a millisecond, rarely enough to cost nothing.
pub const CHECK_EVERY: u64 = 1 << 12;

static STOP: AtomicBool = AtomicBool::new(false);

/// Ask every running simulation to stop (it returns `interrupted()`); runs
/// started later stop at once, until `clear_stop`.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Let simulations run again (before starting a new batch of runs).
pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The error of a run stopped by `request_stop`.
pub fn interrupted() -> ScenarioError {
    ScenarioError::run("interrupted: the run was stopped before it finished")
}

/// The loop's check, every `CHECK_EVERY` steps: an error when a stop is requested;
/// whether the run has spent its budget (it ends there, cut).
pub fn check(steps: u64, budget: u64) -> Result<bool, ScenarioError> {
    if stop_requested() {
        return Err(interrupted());
    }
    Ok(steps > budget)
}
