//! The clock seam: the same models run flat out (simulation) or paced to wall
//! time (emulation). The event loop asks its clock to reach each event's time
//! before handling it; a simulation clock returns at once.

use crate::time::SimTime;
use std::time::{Duration, Instant};

pub trait Clock {
    /// Return when it is `t` (simulated time since the run's start).
    fn advance_to(&mut self, t: SimTime);
}

/// Simulation: time jumps from event to event.
#[derive(Copy, Clone, Debug, Default)]
pub struct FlatOut;

impl Clock for FlatOut {
    fn advance_to(&mut self, _t: SimTime) {}
}

/// Real time: sleep until the wall clock reaches `t / slowdown` past the start
/// (slowdown 1.0 = real time; 10.0 = ten times slower than real).
#[derive(Copy, Clone, Debug)]
pub struct WallClock {
    start: Instant,
    slowdown: f64,
}

impl WallClock {
    pub fn new(slowdown: f64) -> WallClock {
        WallClock {
            start: Instant::now(),
            slowdown: slowdown.max(1e-9),
        }
    }

    /// The simulated time it is now (the wall clock since the start, over the slowdown).
    pub fn now(&self) -> SimTime {
        SimTime::from_secs_f64(self.start.elapsed().as_secs_f64() / self.slowdown)
    }

    /// The wall-clock instant at which it is `t`: an emulator that must also
    /// wait for input (a TUN device) sleeps until then itself.
    pub fn instant_of(&self, t: SimTime) -> Instant {
        self.start + Duration::from_secs_f64(t.as_secs_f64() * self.slowdown)
    }
}

impl Clock for WallClock {
    fn advance_to(&mut self, t: SimTime) {
        let due = self.instant_of(t);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn wall_clock_waits_for_the_event_time() {
        let mut c = WallClock::new(1.0);
        let t0 = Instant::now();
        c.advance_to(SimTime::from_ms(20));
        assert!(t0.elapsed() >= Duration::from_millis(19));
        assert!(c.now() >= SimTime::from_ms(19));
        assert!(c.instant_of(SimTime::from_ms(20)) <= Instant::now());
        FlatOut.advance_to(SimTime::from_secs(1_000_000));
    }
}
