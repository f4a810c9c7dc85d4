//! One event queue keyed by (time, sequence): events at the same instant are
//! handled in the order they were scheduled, so runs are deterministic.
//!
//! Two levels, for speed: a run's queue holds a handful of events most of the
//! time, and most new events fall due soon (a CPU's next free time, a segment's
//! hand-over to its adapter). The earliest events wait in a short vector kept
//! sorted, latest first, so the next event is popped from its end and a new
//! event that falls due soon is placed with a few compares near that end: cheaper
//! than a binary heap's sift down and sift up for every event. The later events
//! wait in a binary heap (a run with thousands of connections keeps thousands of
//! timers), and come into the vector a batch at a time when it runs dry. Every
//! event in the vector is earlier than every event in the heap, so the order is
//! exactly the (time, sequence) order of one heap.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (SimTime, u64) {
        (self.at, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Most events the sorted vector holds; past that the latest go to the heap.
const NEAR_MAX: usize = 32;
/// How many events come from the heap into the vector when it runs dry.
const REFILL: usize = NEAR_MAX / 2;

/// A min-queue of events with FIFO tie-breaking.
pub struct EventQueue<E> {
    /// The earliest events, sorted latest first (the next event is the last).
    near: Vec<Entry<E>>,
    /// The others, each later than every event in `near`.
    far: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            near: Vec::with_capacity(NEAR_MAX),
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }
    pub fn schedule(&mut self, at: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { at, seq, event };
        // (The heap's greatest is its earliest event: see `Ord`.)
        if self.far.peek().is_some_and(|first| e.key() > first.key()) {
            self.far.push(e);
            return;
        }
        if self.near.len() == NEAR_MAX {
            if e.key() > self.near[0].key() {
                self.far.push(e);
                return;
            }
            // The vector's latest moves to the heap: still earlier than all there.
            self.far.push(self.near.remove(0));
        }
        // Insertion from the end, one swap per later event passed: a new event
        // usually passes none or one (a memmove call costs more).
        self.near.push(e);
        let near = &mut self.near[..];
        let mut i = near.len() - 1;
        while i > 0 && near[i - 1].key() < near[i].key() {
            near.swap(i - 1, i);
            i -= 1;
        }
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        match self.near.last() {
            Some(e) => Some(e.at),
            None => self.far.peek().map(|e| e.at),
        }
    }
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.near.is_empty() {
            // The heap's earliest, earliest first; then reversed to latest first.
            while self.near.len() < REFILL {
                let Some(e) = self.far.pop() else { break };
                self.near.push(e);
            }
            self.near.reverse();
        }
        self.near.pop().map(|e| (e.at, e.event))
    }
    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }
    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far.is_empty()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn ties_break_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    #[test]
    fn the_order_is_one_heaps_at_any_size() {
        // Against a plain binary heap of (time, sequence), through queues that stay
        // small and queues that spill into the second level and drain from it.
        use std::cmp::Reverse;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for size in [1, 5, 31, 32, 33, 100, 2000] {
            let (mut q, mut reference) = (EventQueue::new(), BinaryHeap::new());
            let mut now = 0;
            let mut seq = 0u64;
            for step in 0..20_000u64 {
                // Fill to about `size`, with coarse times so that ties are common.
                while q.len() < size || (step % 7 == 0 && q.len() < 2 * size) {
                    let at = now + next() % 50 * 1000 * (1 + next() % 3);
                    q.schedule(SimTime(at), seq);
                    reference.push(Reverse((at, seq)));
                    seq += 1;
                }
                assert_eq!(q.peek_time(), reference.peek().map(|r| SimTime(r.0 .0)));
                let (at, ev) = q.pop().expect("not empty");
                let Reverse((want_at, want_seq)) = reference.pop().expect("not empty");
                assert_eq!((at.0, ev), (want_at, want_seq), "size {size}, step {step}");
                now = at.0;
            }
            assert_eq!(q.len(), reference.len());
        }
    }
}
