//! Running many independent simulations on all cores. Results come back in
//! index order whatever the number of workers, so output is identical for any
//! `workers` value.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Number of worker threads to use when the caller says 0 ("all cores").
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Evaluate `f(0..n)` on `workers` threads (0 = all cores); results in index order.
pub fn run_indexed<T, F>(n: usize, workers: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let workers = if workers == 0 {
        default_workers()
    } else {
        workers
    }
    .clamp(1, n.max(1));
    if workers == 1 {
        return (0..n).map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                slots
                    .lock()
                    .expect("no worker panics while holding the lock")[i] = Some(r);
            });
        }
    });
    slots
        .into_inner()
        .expect("workers joined")
        .into_iter()
        .map(|r| r.expect("every index ran"))
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn order_is_independent_of_workers() {
        let one = run_indexed(100, 1, |i| i * i);
        let four = run_indexed(100, 4, |i| i * i);
        assert_eq!(one, four);
    }
}
