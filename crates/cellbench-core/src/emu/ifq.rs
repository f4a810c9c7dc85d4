//! A host's transmit queue stopped while its adapter's interface queue is full:
//! the backpressure a real host's driver puts on its kernel, which the emulator
//! applies by not reading the host's TUN device meanwhile.
//!
//! Linux's ATM IP interface (CLIP, `net/atm/clip.c` `clip_start_xmit`) stops the
//! device's transmit queue (`netif_stop_queue`) when the circuit's adapter has no
//! room (`atm_may_send` false) and wakes it when a PDU leaves; meanwhile the
//! queueing discipline holds the packets up to the device's `txqueuelen` and drops
//! beyond it. Reading a host's TUN device only while the modelled interface queue
//! (`sim::net`'s, `tx_queue_pdus` long) has room gives the same: the packets wait
//! in the TUN device's own queue, `txqueuelen` long (the Python side sets it), and
//! the kernel drops beyond that (the device's `tx_dropped`). Without it a UDP
//! source writing as fast as its kernel takes them had the loop read, encapsulate
//! and drop at the modelled queue every datagram it wrote (446 892 in a 3 s run),
//! missing real time for everything else.
//!
//! The queue is one per host (a Linux device's single transmit queue), stopped
//! while any circuit the host sends on finds it full: the modelled queue is the
//! adapter's, and the PDUs an ABR source or missing credits hold count in it.

use crate::sim::net::{CircuitId, Network};
use crate::time::SimTime;
use serde::Serialize;

/// What one host's queue did over a run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct HostQueue {
    /// Times the emulator stopped reading the host's TUN device, its adapter's
    /// interface queue full.
    pub stops: u64,
    /// Seconds it was stopped.
    pub stopped_seconds: f64,
}

/// Per host: the circuits it sends on and whether its queue is stopped.
pub struct HostQueues {
    circuits: Vec<Vec<CircuitId>>,
    /// Since when each host's queue is stopped.
    since: Vec<Option<SimTime>>,
    stats: Vec<HostQueue>,
}

impl HostQueues {
    /// `circuits[h]`: the circuits host `h` sends on.
    pub fn new(circuits: Vec<Vec<CircuitId>>) -> HostQueues {
        let n = circuits.len();
        HostQueues {
            circuits,
            since: vec![None; n],
            stats: vec![HostQueue::default(); n],
        }
    }

    /// Whether host `h`'s queue is stopped at `now`: a datagram read from it then
    /// could find its adapter's interface queue full. Counts each stop and its time.
    pub fn stopped(&mut self, net: &mut Network, h: usize, now: SimTime) -> bool {
        let full = self.circuits[h]
            .iter()
            .any(|&c| net.interface_queue_full(now, c));
        match (self.since[h], full) {
            (None, true) => {
                self.since[h] = Some(now);
                self.stats[h].stops += 1;
            }
            (Some(t), false) => {
                self.since[h] = None;
                self.stats[h].stopped_seconds += now.saturating_sub(t).as_secs_f64();
            }
            _ => {}
        }
        full
    }

    /// Whether host `h`'s queue was stopped at the last look.
    pub fn is_stopped(&self, h: usize) -> bool {
        self.since[h].is_some()
    }

    /// The earliest a stopped queue may have room again: when the PDU at the head
    /// of its adapter's interface queue starts. (Held PDUs leave at the network's
    /// own events, which the loop wakes for anyway.)
    pub fn room_at(&self, net: &Network) -> Option<SimTime> {
        (0..self.since.len())
            .filter(|&h| self.is_stopped(h))
            .flat_map(|h| self.circuits[h].iter())
            .filter_map(|&c| net.interface_queue_head_starts(c))
            .min()
    }

    /// Per host, at `end` (a queue stopped then counts until it).
    pub fn report(&self, end: SimTime) -> Vec<HostQueue> {
        let mut out = self.stats.clone();
        for (q, since) in out.iter_mut().zip(&self.since) {
            if let Some(t) = since {
                q.stopped_seconds += end.saturating_sub(*t).as_secs_f64();
            }
        }
        out
    }
}
