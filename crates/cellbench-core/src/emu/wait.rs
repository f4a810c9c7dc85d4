//! How the emulator's loop waits for its next cell event: asleep in `ppoll` on
//! the TUN devices (a datagram from a host wakes it) until a margin before the
//! event, then spinning on the clock.
//!
//! The margin is what a wake-up costs on this machine now: a sleeping thread
//! wakes later than asked by the timer's interrupt, waking a halted virtual CPU
//! and, on a loaded machine, finishing whatever the kernel was doing on that CPU
//! (a kernel built without preemption lets it run to its next preemption point,
//! a SCHED_FIFO thread or not). Measured on this project's 2-core Firecracker VM
//! (`scripts/bench_emu.py`'s wake-up line; 3.5 ms sleeps, SCHED_FIFO, the CPU kept
//! awake): p50 15 µs and p99 30 µs idle, p99 60-170 µs with two busy loops, rare
//! ones of milliseconds. A fixed 100 µs margin made every wake-up past it a late
//! PDU (europe-vp at load 1-2: p99 130-326 µs, nearly all "asleep"); so the loop
//! keeps the last wake-ups' overshoots and spins for a high quantile of them.
//!
//! The margin is bounded: spinning is CPU the other tasks do not get, and a
//! real-time thread that leaves a CPU's ordinary tasks less than about 5% of a
//! second is stopped for the rest of it (`sched_rt_runtime_us`, 950 ms of 1 s;
//! on kernels with the fair server the same 50 ms at once): one 50 ms hole is a
//! thousand cell times late. Measured on the same VM with two busy loops, a
//! thread spinning 90% of each millisecond was stopped for 50 ms every 2.5 s; one
//! spinning 70% never was.

use std::time::{Duration, Instant};

/// The least margin: below it the spin is not what costs CPU.
pub const SPIN_MIN: Duration = Duration::from_micros(100);
/// The most: at europe-vp's PDU rate (one every ~3.5 ms) a spin of 1 ms is
/// under 30% of the loop's CPU, far from the throttle.
pub const SPIN_MAX: Duration = Duration::from_millis(1);
/// The wake-ups the margin is taken from: about 0.2 s of europe-vp's sleeps, so
/// it follows the machine's load as it changes.
const WAKE_LOG: usize = 64;
/// The margin is this quantile of the recent overshoots (the 62nd of 64)...
const QUANTILE_NUM: usize = 61;
/// ...times this, for the wake-ups beyond it.
const HEADROOM: f64 = 1.5;

/// A duration that covers nearly all of the last `WAKE_LOG` of something the
/// loop measures (a wake-up's overshoot, a datagram's read): a high quantile of
/// them with headroom, within `[min, max]`.
pub struct Recent {
    ring: [u64; WAKE_LOG],
    filled: usize,
    next: usize,
    min: Duration,
    max: Duration,
    current: Duration,
    /// The largest it was.
    pub largest: Duration,
}

impl Recent {
    pub const fn new(min: Duration, max: Duration) -> Recent {
        Recent {
            ring: [0; WAKE_LOG],
            filled: 0,
            next: 0,
            min,
            max,
            current: min,
            largest: min,
        }
    }

    pub fn get(&self) -> Duration {
        self.current
    }

    pub fn push(&mut self, d: Duration) {
        self.ring[self.next] = d.as_nanos().min(u64::MAX as u128) as u64;
        self.next = (self.next + 1) % WAKE_LOG;
        self.filled = (self.filled + 1).min(WAKE_LOG);
        let mut sorted = self.ring;
        let s = &mut sorted[..self.filled];
        s.sort_unstable();
        let q = s[(s.len() - 1) * QUANTILE_NUM / (WAKE_LOG - 1)];
        self.current = Duration::from_nanos((q as f64 * HEADROOM) as u64).clamp(self.min, self.max);
        self.largest = self.largest.max(self.current);
    }
}

/// Sleeps and their wake-ups, for the report.
#[derive(Debug, Default)]
pub struct WaitStats {
    pub sleeps: u64,
    pub slept: Duration,
    /// Each timed-out sleep's overshoot (woke this long after the time asked), ns.
    pub overshoot_ns: Vec<u64>,
}

pub struct Waiter {
    margin: Recent,
    pub stats: WaitStats,
}

impl Default for Waiter {
    fn default() -> Self {
        Waiter {
            margin: Recent::new(SPIN_MIN, SPIN_MAX),
            stats: WaitStats::default(),
        }
    }
}

impl Waiter {
    /// How long before a cell event the loop stops sleeping and spins.
    pub fn margin(&self) -> Duration {
        self.margin.get()
    }

    /// The largest margin used.
    pub fn margin_max(&self) -> Duration {
        self.margin.largest
    }

    /// Sleep until `wake` at the latest, or until a TUN device in `pfds` has a
    /// datagram. A sleep that ran its time counts its wake-up's overshoot.
    pub fn sleep(&mut self, pfds: &mut [libc::pollfd], wake: Instant) {
        let start = Instant::now();
        let d = wake.saturating_duration_since(start);
        let ts = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `pfds` holds valid pollfd entries for its length; `ts` is valid.
        let ready = unsafe {
            libc::ppoll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        let end = Instant::now();
        self.stats.sleeps += 1;
        self.stats.slept += end - start;
        if ready == 0 {
            self.record(end.saturating_duration_since(wake));
        }
    }

    /// One wake-up's overshoot: the margin follows the recent ones.
    fn record(&mut self, over: Duration) {
        self.stats
            .overshoot_ns
            .push(over.as_nanos().min(u64::MAX as u128) as u64);
        self.margin.push(over);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_margin_follows_the_recent_wake_ups_within_its_bounds() {
        let mut w = Waiter::default();
        assert_eq!(w.margin(), SPIN_MIN);
        // An idle machine's wake-ups (tens of µs): the least margin.
        for _ in 0..WAKE_LOG {
            w.record(Duration::from_micros(30));
        }
        assert_eq!(w.margin(), SPIN_MIN);
        // A loaded one's: a few of 200 µs among 64 lift it to 1.5 times that...
        for _ in 0..4 {
            w.record(Duration::from_micros(200));
        }
        assert_eq!(w.margin(), Duration::from_micros(300));
        // ...one of 6 ms (the host took the CPU) does not, and nothing exceeds SPIN_MAX.
        let mut v = Waiter::default();
        for _ in 0..WAKE_LOG - 1 {
            v.record(Duration::from_micros(30));
        }
        v.record(Duration::from_millis(6));
        assert_eq!(v.margin(), SPIN_MIN);
        for _ in 0..WAKE_LOG {
            v.record(Duration::from_millis(6));
        }
        assert_eq!(v.margin(), SPIN_MAX);
        // Once the load is gone, the margin comes back down within WAKE_LOG wake-ups.
        for _ in 0..WAKE_LOG {
            v.record(Duration::from_micros(30));
        }
        assert_eq!(v.margin(), SPIN_MIN);
        assert_eq!(v.margin_max(), SPIN_MAX);
        // The same estimate with other bounds (the emulator's read guard): reads of
        // 13 µs on a loaded machine give a 19.5 µs guard; its largest is kept.
        let mut g = Recent::new(Duration::from_micros(12), Duration::from_micros(40));
        g.push(Duration::from_micros(13));
        assert_eq!(g.get(), Duration::from_nanos(19_500));
        // One slow read among few does not move it; reads slower than the bound all along do.
        g.push(Duration::from_micros(1000));
        assert_eq!(g.get(), Duration::from_nanos(19_500));
        for _ in 0..WAKE_LOG {
            g.push(Duration::from_micros(1000));
        }
        assert_eq!(g.get(), Duration::from_micros(40));
        assert_eq!(g.largest, Duration::from_micros(40));
        assert_eq!(v.stats.overshoot_ns.len(), 3 * WAKE_LOG);
    }
}
