//! Integer simulated time and bit rates.
//!
//! Time is counted in picoseconds so that cell times on every physical layer of
//! the era (2.83 µs on OC-3c, 4.24 µs on TAXI 100, 0.492 µs spacing steps) are
//! represented without accumulating rounding: a train's k-th cell time is always
//! computed from its index, never by repeated addition.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// An instant or a span of simulated time, in picoseconds (2^64 ps ≈ 213 days).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ps(ps: u64) -> SimTime {
        SimTime(ps)
    }
    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000_000)
    }
    pub const fn from_secs(s: u64) -> SimTime {
        SimTime(s * PS_PER_SEC)
    }
    /// From floating microseconds, rounded to the nearest picosecond (for user input only).
    pub fn from_us_f64(us: f64) -> SimTime {
        SimTime((us * 1e6).round().max(0.0) as u64)
    }
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * PS_PER_SEC as f64).round().max(0.0) as u64)
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    /// `self * n`, for spans.
    pub const fn times(self, n: u64) -> SimTime {
        SimTime(self.0 * n)
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    /// Seconds with microsecond resolution, as tcpdump prints times.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.0 / 1_000_000;
        write!(f, "{}.{:06}", us / 1_000_000, us % 1_000_000)
    }
}

/// A bit rate in bits per second (10^6 b/s = 1 Mb/s).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl BitRate {
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Time to send `bits` bits at this rate, rounded down to the picosecond.
    pub fn time_for_bits(self, bits: u64) -> SimTime {
        SimTime(((bits as u128 * PS_PER_SEC as u128) / self.0 as u128) as u64)
    }
    /// Start time of the `k`-th of a run of back-to-back units of `bits` bits
    /// starting at `start` (computed from the index: no accumulated rounding).
    pub fn offset_of(self, start: SimTime, k: u64, bits: u64) -> SimTime {
        start + self.time_for_bits(k * bits)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn taxi_cell_time_is_exact() {
        // 53 bytes at 100 Mb/s = 4.24 µs.
        assert_eq!(
            BitRate(100_000_000).time_for_bits(424),
            SimTime::from_ns(4_240)
        );
    }

    #[test]
    fn display_is_seconds_and_microseconds() {
        assert_eq!(SimTime::from_us(1_234_567).to_string(), "1.234567");
    }
}
