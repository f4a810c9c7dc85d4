//! Waiting for a paced block's due time precisely.
//!
//! A relative sleep (`std::thread::sleep`) computes "due minus now" and then
//! sleeps that long: a preemption between the two pushes every later wake-up
//! back. Here the thread sleeps until an *absolute* instant on CLOCK_MONOTONIC
//! (`clock_nanosleep(TIMER_ABSTIME)`), so a late wake-up never shifts the
//! schedule, and spins the last few µs, where a timer is too coarse.
//!
//! Two kernel defaults make a timer wake-up late: a normal thread's timer
//! slack (50 µs, the kernel may batch its wake-up with others that much later)
//! and the scheduler letting a busy CPU's current task finish its slice
//! (milliseconds on a loaded host). A paced source therefore asks, for the
//! length of its transfer only, for a timer slack of 1 ns and, where the
//! process may (CAP_SYS_NICE, the one capability a daemon keeps), the lowest
//! real-time priority (SCHED_FIFO 1): it then runs as soon as its timer fires, ahead of every
//! ordinary task. The kernel's real-time throttle (95% of each second by
//! default) keeps such threads from starving the host, and at most one fewer
//! pacer than the host has CPUs runs real-time at once (the rest at the normal
//! priority), so the daemon's own control traffic always finds a CPU.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Nanoseconds on CLOCK_MONOTONIC, the clock `clock_nanosleep` sleeps on.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC nanoseconds of an `Instant`. `Instant` reads the same clock
/// on Linux but keeps its value private: one pair of readings, taken once,
/// maps the one onto the other (to within the tens of ns between the reads).
fn ns_of(t: Instant) -> u64 {
    static BASE: OnceLock<(Instant, u64)> = OnceLock::new();
    let &(base, base_ns) = BASE.get_or_init(|| (Instant::now(), monotonic_ns()));
    if t >= base {
        base_ns + (t - base).as_nanos() as u64
    } else {
        base_ns.saturating_sub((base - t).as_nanos() as u64)
    }
}

/// Sleep until `t` (absolute, CLOCK_MONOTONIC); a signal's interruption sleeps on.
pub(super) fn sleep_until(t: Instant) {
    let ns = ns_of(t);
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: ts is a valid timespec; the remaining-time pointer may be null
        // with TIMER_ABSTIME. The call returns the error number, not -1/errno.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// The calling thread's scheduling raised for pacing; `Drop` puts it back (the
/// thread belongs to a pool and runs other agents afterwards).
pub(super) struct Priority {
    slack_ns: Option<libc::c_ulong>,
    old: Option<(libc::c_int, libc::sched_param)>,
}

impl Priority {
    /// Timer slack of 1 ns always; SCHED_FIFO 1 when `realtime`, permitted, and
    /// fewer than `realtime_limit()` pacers hold it.
    pub(super) fn raise(realtime: bool) -> Priority {
        // SAFETY: prctl with these options reads/writes only the calling thread's slack.
        let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
        let slack_ns = (slack >= 0
            // SAFETY: as above.
            && unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) } == 0)
            .then_some(slack as libc::c_ulong);
        let old = (realtime && take_realtime_slot())
            .then(|| {
                let old = raise_fifo();
                if old.is_none() {
                    REALTIME_PACERS.fetch_sub(1, Ordering::Relaxed);
                }
                old
            })
            .flatten();
        Priority { slack_ns, old }
    }

    /// Whether the thread runs at a real-time priority.
    pub(super) fn realtime(&self) -> bool {
        self.old.is_some()
    }
}

/// Pacers running real-time now, in this process.
static REALTIME_PACERS: AtomicUsize = AtomicUsize::new(0);

/// How many pacers may run real-time at once: one fewer than the CPUs, at least one.
fn realtime_limit() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1))
        .unwrap_or(1)
        .max(1)
}

/// A real-time slot, if one is free (released in `Drop`).
fn take_realtime_slot() -> bool {
    REALTIME_PACERS
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < realtime_limit()).then_some(n + 1)
        })
        .is_ok()
}

/// SCHED_FIFO 1 for this thread; the previous policy, or None when refused.
fn raise_fifo() -> Option<(libc::c_int, libc::sched_param)> {
    // SAFETY: pthread_self is always valid; the out-pointers are valid locals.
    unsafe {
        let me = libc::pthread_self();
        let mut policy = 0;
        let mut param: libc::sched_param = std::mem::zeroed();
        if libc::pthread_getschedparam(me, &mut policy, &mut param) != 0 {
            return None;
        }
        let fifo = libc::sched_param { sched_priority: 1 };
        (libc::pthread_setschedparam(me, libc::SCHED_FIFO, &fifo) == 0).then_some((policy, param))
    }
}

impl Drop for Priority {
    fn drop(&mut self) {
        // SAFETY: restoring the calling thread's own settings read in `raise`.
        unsafe {
            if let Some((policy, param)) = self.old {
                libc::pthread_setschedparam(libc::pthread_self(), policy, &param);
                REALTIME_PACERS.fetch_sub(1, Ordering::Relaxed);
            }
            if let Some(s) = self.slack_ns {
                libc::prctl(libc::PR_SET_TIMERSLACK, s, 0, 0, 0);
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::time::Duration;

    /// The tests that take real-time slots, one at a time (the count is process-wide).
    static SLOTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn test_sleep_until_is_absolute() {
        let due = Instant::now() + Duration::from_millis(20);
        sleep_until(due);
        assert!(Instant::now() >= due);
        // A due time in the past returns at once.
        let t = Instant::now();
        sleep_until(t - Duration::from_millis(5));
        assert!(t.elapsed() < Duration::from_millis(5));
    }

    #[test]
    fn test_priority_is_restored() {
        let _one = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        let policy = || {
            // SAFETY: as in raise_fifo.
            unsafe {
                let mut p = 0;
                let mut param: libc::sched_param = std::mem::zeroed();
                libc::pthread_getschedparam(libc::pthread_self(), &mut p, &mut param);
                p
            }
        };
        // SAFETY: reading the calling thread's slack.
        let slack = || unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
        let (p0, s0) = (policy(), slack());
        {
            let prio = Priority::raise(true);
            // 1 ns as asked; 0 once real-time (the kernel gives RT threads no slack).
            assert!(slack() <= 1, "{}", slack());
            assert_eq!(policy() == libc::SCHED_FIFO, prio.realtime());
        }
        assert_eq!((policy(), slack()), (p0, s0));
    }

    #[test]
    fn test_realtime_pacers_are_limited() {
        let _one = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        // Where real-time is permitted, the slots run out at the limit and come back.
        let held: Vec<Priority> = (0..realtime_limit() + 2)
            .map(|_| Priority::raise(true))
            .collect();
        let n = held.iter().filter(|p| p.realtime()).count();
        assert!(n <= realtime_limit(), "{n}");
        drop(held);
        assert_eq!(REALTIME_PACERS.load(Ordering::Relaxed), 0);
    }
}
