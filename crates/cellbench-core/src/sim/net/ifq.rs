//! A host interface's transmit queue (BSD's `ifqueue`, `ifq_maxlen` long): the
//! packets handed to the interface that have not started on the link yet. One
//! mechanism for every kind of interface: an ATM adapter's PDUs and an
//! Ethernet interface's frames wait, and are refused, by the same rule.
//!
//! The network places every packet on its link when it is handed over (its
//! start time is known then), so the queue is the start times of the packets
//! not yet started: a packet handed over at `now` finds waiting those whose
//! start is after `now`. The packet being transmitted is not counted (BSD
//! dequeues a packet before it starts it); one handed over when `max` are
//! waiting is dropped (`IF_DROP`).

use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub(super) struct Ifq {
    /// Packets the queue holds at most (`ifq_maxlen`).
    max: usize,
    /// Start times of accepted packets that have not started yet, in order.
    waiting: VecDeque<SimTime>,
}

impl Ifq {
    pub fn new(max: usize) -> Ifq {
        Ifq {
            max,
            waiting: VecDeque::new(),
        }
    }

    /// Whether a packet handed over at `now` finds the queue full; `held` counts
    /// packets waiting elsewhere that the queue holds too (credit mode's).
    pub fn full(&mut self, now: SimTime, held: usize) -> bool {
        while self.waiting.front().is_some_and(|&s| s <= now) {
            self.waiting.pop_front();
        }
        self.waiting.len().max(held) >= self.max
    }

    /// An accepted packet starts at `start`; it waits until then if that is after `now`.
    pub fn accepted(&mut self, now: SimTime, start: SimTime) {
        if start > now {
            self.waiting.push_back(start);
        }
    }

    /// When the first waiting packet starts (and leaves the queue), if one waits.
    pub fn next_start(&self) -> Option<SimTime> {
        self.waiting.front().copied()
    }

    /// Packets waiting at the last look (for a peak counter).
    pub fn len(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_full_queue_refuses_until_its_head_starts() {
        let mut q = Ifq::new(2);
        let t = SimTime::from_us;
        assert!(!q.full(t(0), 0));
        q.accepted(t(0), t(0)); // started at once: never waits
        assert!(!q.full(t(0), 0));
        q.accepted(t(0), t(10));
        q.accepted(t(0), t(20));
        assert!(q.full(t(5), 0));
        assert_eq!(q.len(), 2);
        assert_eq!(q.next_start(), Some(t(10)));
        // The packet starting at 10 µs has left the queue by then.
        assert!(!q.full(t(10), 0));
        assert_eq!(q.len(), 1);
        // Packets held elsewhere count too.
        assert!(q.full(t(10), 2));
    }
}
