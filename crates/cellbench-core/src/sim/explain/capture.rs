//! Many connections through one congested port: who got what (Jain's fairness
//! index, starved connections), and capture, a connection starved while
//! another held the port, with the evidence (docs/mechanisms.md, "Many TCPs
//! through one congested port").
//!
//! A connection is measured by its goodput: the bytes its receiving
//! application read over the receiver's time (a cut run: so far). Its port is
//! the switch output port on its data path that dropped the most cells (a
//! port that dropped none: the slowest on the path); the connections sharing
//! it are those whose data crosses it while this one runs.

use crate::sim::world::{Protocol, RunResult, Scenario};
use crate::time::SimTime;

/// A connection is starved under this share of its fair share: the goodput
/// of the connections sharing its port, divided evenly (issue 34's threshold).
pub const STARVED_SHARE: f64 = 0.05;

const CELL_BITS: u64 = 424;

/// Jain's fairness index (R. Jain, D. Chiu and W. Hawe, DEC-TR-301, 1984):
/// (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one has everything.
/// None for no values or all zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && squares > 0.0).then(|| sum * sum / (xs.len() as f64 * squares))
}

/// Jain's index over the goodputs of the run's TCP connections that started
/// (a UDP stream takes what it is given: its share says nothing of fairness).
pub fn run_fairness(scenario: &Scenario, run: &RunResult) -> Option<f64> {
    let xs: Vec<f64> = run
        .transfers
        .iter()
        .zip(&scenario.transfers)
        .filter(|(t, s)| t.started_at.is_some() && s.protocol == Protocol::Tcp)
        .map(|(t, _)| t.goodput_bps())
        .collect();
    jain(&xs)
}

/// The port transfer `i` contends at, and the connections (`i` among them)
/// whose data crosses it while `i` runs.
pub struct Sharing {
    pub port: usize,
    pub members: Vec<usize>,
    /// Goodput of the members summed, over their number: the fair share, bit/s.
    pub fair_bps: f64,
    /// `i`'s span, and its overlap with each member's.
    pub span: (SimTime, SimTime),
}

fn span(run: &RunResult, j: usize) -> Option<(SimTime, SimTime)> {
    let t = run.transfers.get(j)?;
    Some((t.started_at?, t.ended_at.unwrap_or(run.end_time)))
}

/// Who shares transfer `i`'s port (None: a transfer that never started, or
/// one with no switch port on its path).
pub fn sharing(scenario: &Scenario, run: &RunResult, i: usize) -> Option<Sharing> {
    let topo = &scenario.topology;
    let hops = &topo.circuits.get(scenario.transfers[i].circuit)?.hops;
    let lost = |p: usize| run.ports.get(p).map_or(0, |c| c.cells_lost.total());
    let port = hops
        .iter()
        .map(|h| h.port)
        .max_by_key(|&p| (lost(p), topo.ports[p].rate.time_for_bits(CELL_BITS)))?;
    let (from, to) = span(run, i)?;
    let members: Vec<usize> = (0..scenario.transfers.len())
        .filter(|&j| {
            topo.circuits
                .get(scenario.transfers[j].circuit)
                .is_some_and(|c| c.hops.iter().any(|h| h.port == port))
                && span(run, j).is_some_and(|(a, b)| j == i || (a < to && from < b))
        })
        .collect();
    let total: f64 = members
        .iter()
        .map(|&j| run.transfers[j].goodput_bps())
        .sum();
    Some(Sharing {
        port,
        fair_bps: total / members.len() as f64,
        members,
        span: (from, to),
    })
}

/// TCP transfer `i` got under [`STARVED_SHARE`] of its fair share at a port it shared.
pub fn starved(scenario: &Scenario, run: &RunResult, s: &Sharing, i: usize) -> bool {
    scenario.transfers[i].protocol == Protocol::Tcp
        && s.members.len() >= 2
        && run.transfers[i].goodput_bps() < STARVED_SHARE * s.fair_bps
}

/// Capture: a TCP connection starved at a port that dropped cells while
/// another connection through it took more than its fair share. The evidence:
/// who held the port, at what rate and share, for how long, and this
/// connection's timeouts, longest backoff and time waiting on its timer.
/// `port_name` names a port, `conn_name` a connection, for the evidence.
pub fn capture(
    scenario: &Scenario,
    run: &RunResult,
    i: usize,
    port_name: &dyn Fn(usize) -> String,
    conn_name: &dyn Fn(usize) -> String,
) -> Option<String> {
    if scenario.transfers[i].protocol != Protocol::Tcp {
        return None;
    }
    let s = sharing(scenario, run, i)?;
    let lost = run.ports.get(s.port).map_or(0, |c| c.cells_lost.total());
    if lost == 0 || !starved(scenario, run, &s, i) {
        return None;
    }
    let holder = s
        .members
        .iter()
        .copied()
        .filter(|&j| j != i)
        .max_by(|&a, &b| {
            run.transfers[a]
                .goodput_bps()
                .total_cmp(&run.transfers[b].goodput_bps())
        })?;
    let h = &run.transfers[holder];
    if h.goodput_bps() <= s.fair_bps {
        return None;
    }
    let (from, to) = s.span;
    let (a, b) = span(run, holder)?;
    let held = b.min(to).saturating_sub(a.max(from)).as_secs_f64();
    let t = &run.transfers[i];
    let total = s.fair_bps * s.members.len() as f64;
    let port = &scenario.topology.ports[s.port];
    let link_bps = port.rate.bps() as f64;
    Some(format!(
        "starved: {:.3} Mb/s, {:.1}% of its fair share ({:.2} Mb/s: {} connections \
         through {} carried {:.2} Mb/s of the link's {:.2}); {} held it at {:.2} Mb/s \
         ({:.0}% of what they carried) for {:.2} s of this one's {:.2} s, while this \
         one's sender timed out {} times, backed off to {}x and waited {:.2} s on its \
         retransmission timer; {} cells lost there",
        t.goodput_bps() / 1e6,
        100.0 * t.goodput_bps() / s.fair_bps.max(f64::MIN_POSITIVE),
        s.fair_bps / 1e6,
        s.members.len(),
        port_name(s.port),
        total / 1e6,
        link_bps / 1e6,
        conn_name(holder),
        h.goodput_bps() / 1e6,
        100.0 * h.goodput_bps() / total.max(f64::MIN_POSITIVE),
        held,
        (to - from).as_secs_f64(),
        t.sender.timeouts,
        1u64 << t.sender.max_backoff.min(63),
        t.sender.rexmt_wait.as_secs_f64(),
        lost,
    ))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_taker() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        let j = jain(&[1.0, 2.0]).unwrap();
        assert!((j - 0.9).abs() < 1e-12, "{j}");
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
