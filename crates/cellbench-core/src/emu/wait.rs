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
//!
//! The margin alone does not bound the spinning when the cell events never leave a
//! gap longer than it: an ABR circuit at full rate (an RM cell every 32 cells, a
//! 9 KB PDU every 0.6 ms on OC-3c) kept the loop awake through the whole transfer,
//! and about 0.95 s after it began the kernel's fair server (Linux 6.12 and later,
//! `kernel/sched/deadline.c`: the ordinary tasks of a CPU get 50 ms of every 1 s,
//! deferred until they have starved that long; `sched_rt_runtime_us` does not turn
//! it off) took the CPU for 50 ms at once: every ABR run's max lateness was 50-54
//! ms, ten PDUs held together (measured: the loop's thread off its CPU for 54 ms,
//! one involuntary switch, 0.2 ms of its own CPU time). Time the ordinary tasks run
//! on their own counts against that budget, so the loop gives it in small pieces:
//! when it has slept less than YIELD_SHARE of the current YIELD_WINDOW, it sleeps
//! in the next gap between cell events long enough, waking YIELD_LEAD before the
//! next one, instead of spinning through it (`owes_yield`).

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

/// The share of the loop's time it leaves its CPU to the CPU's ordinary tasks, at
/// the least: twice the fair server's 50 ms of 1 s (its default, Linux
/// `kernel/sched/deadline.c`), as the sleeps' own overshoot and the kernel's
/// switching are not all the ordinary tasks' run time.
pub const YIELD_SHARE: f64 = 0.1;
/// A sleep taken for that share ends this long before the next cell event: an
/// idle machine's wake-up p99 (30 µs, measured as above) with headroom, so the
/// event is rarely late for it; a gap of less than twice this is not worth a sleep.
pub const YIELD_LEAD: Duration = Duration::from_micros(40);
/// The window the share is kept over: a tenth of the fair server's period, so
/// each period holds ten of them whatever its phase.
const YIELD_WINDOW: Duration = Duration::from_millis(100);

/// Sleeps and their wake-ups, for the report.
#[derive(Debug, Default)]
pub struct WaitStats {
    pub sleeps: u64,
    pub slept: Duration,
    /// Each timed-out sleep's overshoot (woke this long after the time asked), ns.
    pub overshoot_ns: Vec<u64>,
    /// Sleeps taken only to leave the CPU its ordinary tasks' share (`owes_yield`).
    pub yields: u64,
}

pub struct Waiter {
    margin: Recent,
    pub stats: WaitStats,
    /// The current YIELD_WINDOW's start and the time slept in it.
    window_start: Option<Instant>,
    window_slept: Duration,
}

impl Default for Waiter {
    fn default() -> Self {
        Waiter {
            margin: Recent::new(SPIN_MIN, SPIN_MAX),
            stats: WaitStats::default(),
            window_start: None,
            window_slept: Duration::ZERO,
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

    /// Whether the loop has slept less than YIELD_SHARE of the current window so
    /// far, at `now`: then it should sleep until its next event rather than spin.
    pub fn owes_yield(&mut self, now: Instant) -> bool {
        let start = *self.window_start.get_or_insert(now);
        let span = now.saturating_duration_since(start);
        if span >= YIELD_WINDOW {
            self.window_start = Some(now);
            self.window_slept = Duration::ZERO;
            return false;
        }
        self.window_slept.as_secs_f64() < YIELD_SHARE * span.as_secs_f64()
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
        self.window_slept += end - start;
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

    #[test]
    fn a_loop_that_never_sleeps_owes_its_cpus_other_tasks_a_share_of_each_window() {
        let mut w = Waiter::default();
        let t0 = Instant::now();
        let ms = |m: u64| Duration::from_millis(m);
        // The first look opens a window; awake from then on, the loop owes a sleep.
        assert!(!w.owes_yield(t0));
        assert!(w.owes_yield(t0 + ms(10)));
        // Asleep 10% of the window so far: even; less than that: owing again.
        w.window_slept = ms(1);
        assert!(!w.owes_yield(t0 + ms(10)));
        assert!(w.owes_yield(t0 + ms(11)));
        // A new window starts the count afresh.
        w.window_slept = ms(50);
        assert!(!w.owes_yield(t0 + ms(99)));
        assert!(!w.owes_yield(t0 + YIELD_WINDOW));
        assert_eq!(w.window_slept, Duration::ZERO);
        assert!(w.owes_yield(t0 + YIELD_WINDOW + ms(1)));
    }
}
