//! The delayed-ACK lock-step as a trace shows it: the cycle of a timer ACK
//! and the data it releases, found in the steady part of a one-transfer trace.
//! Apart from the classification: it reads a trace, not the facts of a run.

use crate::sim::scenario::TraceRecord;
use crate::tcp::SendReason;
use crate::time::SimTime;

/// One steady lock-step cycle, as seen in a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct LockstepCycle {
    /// Timer-released ACKs in the steady part of the trace.
    pub ticks: usize,
    /// Data bytes the sender released, on average, per timer ACK.
    pub bytes_per_tick: f64,
    /// Mean time between timer-released ACKs.
    pub mean_period: SimTime,
    /// The most common pattern between two timer ACKs: segment sizes and reasons.
    pub pattern: Vec<String>,
    /// How many cycles showed exactly that pattern.
    pub pattern_repeats: usize,
}

impl LockstepCycle {
    /// The throughput the cycle sustains, in bits per second.
    pub fn predicted_bps(&self) -> f64 {
        let secs = self.mean_period.as_secs_f64();
        if secs > 0.0 {
            self.bytes_per_tick * 8.0 / secs
        } else {
            0.0
        }
    }
}

/// Find the delayed-ACK cycle in the second half of a one-transfer trace.
/// Returns None when timer ACKs do not pace the transfer.
pub fn lockstep_cycle(trace: &[TraceRecord]) -> Option<LockstepCycle> {
    let timer_acks: Vec<usize> = trace
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.from_sender && r.seg.reason == SendReason::DelayedAck)
        .map(|(i, _)| i)
        .collect();
    if timer_acks.len() < 8 {
        return None;
    }
    // The steady state: the second half of the timer ACKs.
    let steady = &timer_acks[timer_acks.len() / 2..];
    let mut patterns: Vec<(Vec<String>, usize)> = Vec::new();
    let mut bytes = 0u64;
    for w in steady.windows(2) {
        let cycle = &trace[w[0]..w[1]];
        let mut pattern = Vec::new();
        for r in cycle {
            if r.from_sender {
                bytes += r.seg.len as u64;
            }
            let side = if r.from_sender { "A" } else { "B" };
            pattern.push(format!("{side} {} [{}]", r.seg.len, r.seg.reason.as_str()));
        }
        match patterns.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, n)) => *n += 1,
            None => patterns.push((pattern, 1)),
        }
    }
    // Timer-paced: the timer, not reading, releases most of the steady ACKs.
    let steady_span = &trace[steady[0]..=*steady.last()?];
    let receiver_acks = steady_span.iter().filter(|r| !r.from_sender).count();
    if steady.len() * 2 <= receiver_acks {
        return None;
    }
    let cycles = steady.len() - 1;
    let span = trace[*steady.last()?].at - trace[steady[0]].at;
    let (pattern, pattern_repeats) = patterns.into_iter().max_by_key(|(_, n)| *n)?;
    let bytes_per_tick = bytes as f64 / cycles as f64;
    let mean_period = SimTime(span.0 / cycles as u64);
    Some(LockstepCycle {
        ticks: steady.len(),
        bytes_per_tick,
        mean_period,
        pattern,
        pattern_repeats,
    })
}
