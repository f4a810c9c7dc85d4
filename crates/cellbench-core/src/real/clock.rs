//! This host's clocks: epoch seconds (the reports' and the controller's
//! instants) against the monotonic clock the agents time with, and the two
//! waits an agent makes, in slices that watch for a stop.

use super::stop::{Stop, SLICE};
use super::{pacer, AgentError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Pacing sleeps until this close to a block's due time, then spins: a timer
/// wake-up is late by tens of µs, a spin by well under one (pacer.rs).
const SPIN: Duration = Duration::from_micros(60);

pub(super) fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The monotonic instant matching an epoch time on this host's clock.
pub(super) fn instant_of(epoch: f64) -> Instant {
    let (now, wall) = (Instant::now(), now_epoch());
    if epoch >= wall {
        now + Duration::from_secs_f64(epoch - wall)
    } else {
        now.checked_sub(Duration::from_secs_f64(wall - epoch))
            .unwrap_or(now)
    }
}

/// Epoch seconds of a monotonic instant (for reports).
#[derive(Clone, Copy)]
pub(super) struct EpochMap {
    base: Instant,
    wall: f64,
}

impl EpochMap {
    pub(super) fn new() -> Self {
        EpochMap {
            base: Instant::now(),
            wall: now_epoch(),
        }
    }

    pub(super) fn at(&self, t: Instant) -> f64 {
        if t >= self.base {
            self.wall + (t - self.base).as_secs_f64()
        } else {
            self.wall - (self.base - t).as_secs_f64()
        }
    }
}

/// Sleep until `due`: absolute timer sleeps (in slices, watching for a stop)
/// to within SPIN, then a spin.
pub(super) fn sleep_until(due: Instant, stop: Stop) -> Result<(), AgentError> {
    loop {
        let now = Instant::now();
        if due <= now + SPIN {
            break;
        }
        pacer::sleep_until((due - SPIN).min(now + SLICE));
        stop.check()?;
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
    Ok(())
}

/// Sleep until `t` without the final spin, in slices that watch for a stop: a rate
/// cap's wait, where waking late only lowers the rate.
pub(super) fn wait_until(t: Instant, stop: Stop) -> Result<(), AgentError> {
    loop {
        let now = Instant::now();
        if t <= now {
            return Ok(());
        }
        pacer::sleep_until(t.min(now + SLICE));
        stop.check()?;
    }
}
