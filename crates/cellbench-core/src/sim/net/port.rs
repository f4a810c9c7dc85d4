//! A switch output port's rules: the drop-policy state machine per VC, the
//! occupancy a cell finds, and the closed form for a regular train of cells.
//!
//! Everything here is pure arithmetic on one port's state, shared by both
//! fidelities: `offer` is the only place where a cell's fate is decided.

use super::{DropPolicy, LossCause};
use crate::time::SimTime;

/// Drop-policy state of one VC at one port. The PDU boundary is the AUU bit of
/// the last cell the port saw on the VC.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum VcState {
    /// The next cell starts a PDU.
    #[default]
    Idle,
    /// Forwarding the current PDU.
    Accepting,
    /// PPD: a cell of the current PDU was dropped; drop the rest but its last cell.
    Discarding,
    /// EPD: the current PDU was refused at its first cell; drop it all.
    Refusing,
}

impl VcState {
    /// The state after a VC's cells were accepted, the last of them ending
    /// its PDU or not.
    pub(super) fn forwarded(ends_pdu: bool) -> VcState {
        if ends_pdu {
            VcState::Idle
        } else {
            VcState::Accepting
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Accept,
    Drop(LossCause),
}

/// A port's buffer as its admission sees it: its size, and the occupancy from
/// which cells with CLP = 1 are refused (CLP-selective discard: low-priority
/// cells give way before the buffer is full, docs/design.md §3's "tag" made to matter).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Buffer {
    /// Cells the buffer holds, the one in transmission included.
    pub cells: u32,
    /// A CLP = 1 cell is admitted only if it finds fewer cells than this
    /// (`None`: CLP = 1 cells are admitted like the others).
    pub clp1_threshold: Option<u32>,
}

impl Buffer {
    /// The occupancy from which a cell with this CLP bit finds no room: the
    /// buffer size for CLP = 0, the threshold (at most the size) for CLP = 1.
    pub fn limit(&self, clp: bool) -> u32 {
        match self.clp1_threshold {
            Some(t) if clp => t.min(self.cells),
            _ => self.cells,
        }
    }

    /// Why a cell that found no room at occupancy `occ` is lost: the buffer
    /// was full, or it had room but not for a CLP = 1 cell.
    fn no_room(&self, occ: u32) -> LossCause {
        if occ >= self.cells {
            LossCause::Overflow
        } else {
            LossCause::Clp
        }
    }
}

/// The fate of a cell with CLP bit `clp` that finds `occ` cells in `buffer`;
/// `eom` marks the last cell of its PDU. A CLP = 1 cell refused at the CLP-1
/// threshold is a lost cell of its PDU like any other: PPD and EPD then
/// discard the rest of the PDU (why carry cells the reassembler will throw
/// away?), and PPD keeps the last cell only if there is room *for its CLP*.
pub(super) fn offer(
    policy: DropPolicy,
    buffer: Buffer,
    state: &mut VcState,
    occ: u32,
    eom: bool,
    clp: bool,
) -> Verdict {
    let room = occ < buffer.limit(clp);
    let no_room = buffer.no_room(occ);
    // On a loss, PPD and EPD discard the rest of the PDU; tail drop carries on.
    let after_loss = match policy {
        DropPolicy::TailDrop => VcState::Accepting,
        DropPolicy::Ppd | DropPolicy::Epd { .. } => VcState::Discarding,
    };
    let verdict = match *state {
        VcState::Idle => match policy {
            DropPolicy::Epd { threshold_cells } if occ >= threshold_cells => {
                *state = VcState::Refusing;
                Verdict::Drop(LossCause::Epd)
            }
            _ if room => {
                *state = VcState::Accepting;
                Verdict::Accept
            }
            _ => {
                *state = after_loss;
                Verdict::Drop(no_room)
            }
        },
        VcState::Accepting if room => Verdict::Accept,
        VcState::Accepting => {
            *state = after_loss;
            Verdict::Drop(no_room)
        }
        // PPD keeps the last cell so that the reassembler finds the PDU boundary.
        VcState::Discarding if eom && room => Verdict::Accept,
        VcState::Discarding if eom => Verdict::Drop(no_room),
        VcState::Discarding => Verdict::Drop(LossCause::Ppd),
        VcState::Refusing => Verdict::Drop(LossCause::Epd),
    };
    if eom {
        *state = VcState::Idle;
    }
    verdict
}

/// Cells in the buffer just before an arrival at `a`, when the last accepted cell
/// ends its transmission at `end` and cells take `cell` each. The cells in the
/// buffer went back to back since their busy period began, so they end at
/// `end`, `end − C`, `end − 2C`, …; those ending after `a` are still there.
pub(super) fn occupancy(end: SimTime, a: SimTime, cell: SimTime) -> u32 {
    if end > a {
        (end.0 - a.0).div_ceil(cell.0) as u32
    } else {
        0
    }
}

/// The cells of a regular train that a port accepts in a row, and when they leave.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Run {
    /// Cells accepted in a row from the train's head (>= 1).
    pub n: u32,
    /// Cells `0..knee` leave back to back from `start0` (every `C`); cells
    /// `knee..n` leave as they arrive (`a0 + j·step`).
    pub knee: u32,
    pub start0: SimTime,
    /// End of transmission of the run's last cell (the port's new `end`).
    pub end: SimTime,
    /// The occupancy just after the run's first and just after its last
    /// arrival. In between it is monotone (the work ahead of each cell grows
    /// by `C − step` per cell, or never grows), so these are its extremes.
    pub occ_first: u32,
    pub occ_last: u32,
}

impl Run {
    /// The largest occupancy just after one of the run's arrivals.
    pub fn peak(&self) -> u32 {
        self.occ_first.max(self.occ_last)
    }
    pub fn start(&self, j: u32, a0: SimTime, step: SimTime, cell: SimTime) -> SimTime {
        if j < self.knee {
            self.start0 + cell.times(j as u64)
        } else {
            a0 + step.times(j as u64)
        }
    }
}

/// The longest run of a regular train (arrivals `a0 + j·step`, `j < m`) that a
/// FIFO port with last departure `end` accepts with no drop, in closed form.
/// `None` if the first cell is refused. With `W_j` the work (in time) ahead of
/// cell j and `cap = (buffer − 1)·C`, cell j is accepted iff `W_j <= cap`; and
/// while every cell is accepted, `W_{j+1} = max(W_j, 0) + C − step`:
/// - `step >= C`: W never grows, so all m are accepted if the first is;
/// - `step < C`: `W_j = max(W_0, 0) + j·(C − step)` for j >= 1, a line.
///
/// Departures: `start_j = max(a_j, start_{j−1} + C)`; with `step < C` the port
/// stays busy (`start_j = max(a0, end) + j·C`); with `step >= C` the backlog
/// `end − a0` drains by `step − C` per cell, so cells leave back to back until
/// the first j with `j·(step − C) >= end − a0`, then as they arrive.
pub(super) fn accept_run(
    end: SimTime,
    a0: SimTime,
    step: SimTime,
    m: u32,
    cell: SimTime,
    buffer: u32,
) -> Option<Run> {
    let c = cell.0;
    let cap = (buffer as u64 - 1) * c;
    let backlog = end.0.saturating_sub(a0.0);
    if backlog > cap {
        return None;
    }
    let n = if m == 1 || step.0 >= c {
        m
    } else {
        ((cap - backlog) / (c - step.0) + 1).min(m as u64) as u32
    };
    let start0 = a0.max(end);
    let knee = if n == 1 || step.0 < c {
        n
    } else if backlog == 0 {
        // The port is free and the train no faster than it: cells leave as they arrive.
        0
    } else if step.0 == c {
        n
    } else {
        backlog.div_ceil(step.0 - c).min(n as u64) as u32
    };
    let run = Run {
        n,
        knee,
        start0,
        end: SimTime::ZERO,
        occ_first: 0,
        occ_last: 0,
    };
    let last = run.start(n - 1, a0, step, cell);
    let occ_first = occupancy(end, a0, cell) + 1;
    let occ_last = if n >= 2 {
        let before_last = run.start(n - 2, a0, step, cell) + cell;
        occupancy(before_last, a0 + step.times(n as u64 - 1), cell) + 1
    } else {
        occ_first
    };
    Some(Run {
        end: last + cell,
        occ_first,
        occ_last,
        ..run
    })
}

#[cfg(test)]
mod test {
    use super::*;

    const TAXI: SimTime = SimTime(4_240_000);
    const OC3: SimTime = SimTime(2_831_196);

    fn buf(cells: u32) -> Buffer {
        Buffer {
            cells,
            clp1_threshold: None,
        }
    }

    /// The reference: the Lindley recursion cell by cell.
    fn by_cell(
        mut end: SimTime,
        a0: SimTime,
        step: SimTime,
        m: u32,
        cell: SimTime,
        buffer: u32,
    ) -> (u32, Vec<SimTime>, SimTime, Vec<u32>) {
        let mut starts = vec![];
        let mut occs = vec![];
        for j in 0..m {
            let a = a0 + step.times(j as u64);
            let occ = occupancy(end, a, cell);
            if occ >= buffer {
                break;
            }
            occs.push(occ + 1);
            let s = a.max(end);
            starts.push(s);
            end = s + cell;
        }
        (starts.len() as u32, starts, end, occs)
    }

    fn check(end: SimTime, a0: SimTime, step: SimTime, m: u32, cell: SimTime, buffer: u32) {
        let (n, starts, e, occs) = by_cell(end, a0, step, m, cell, buffer);
        match accept_run(end, a0, step, m, cell, buffer) {
            None => assert_eq!(n, 0),
            Some(run) => {
                assert_eq!(run.n, n, "run length");
                let got: Vec<SimTime> = (0..n).map(|j| run.start(j, a0, step, cell)).collect();
                assert_eq!(got, starts);
                assert_eq!(run.end, e);
                // The occupancy after each arrival is monotone over the run, so
                // its first and last values (what queue series sample) are its extremes.
                assert_eq!(
                    (run.occ_first, run.occ_last),
                    (occs[0], occs[n as usize - 1])
                );
                let ascending = occs.windows(2).all(|w| w[0] <= w[1]);
                let descending = occs.windows(2).all(|w| w[0] >= w[1]);
                assert!(ascending || descending, "{occs:?}");
                assert_eq!(run.peak(), *occs.iter().max().unwrap());
            }
        }
    }

    #[test]
    fn test_accept_run_matches_lindley() {
        let a0 = SimTime::from_us(100);
        for &(step, cell) in &[
            (OC3, TAXI),
            (TAXI, TAXI),
            (TAXI, OC3),
            (SimTime(10_000_000), TAXI),
        ] {
            for backlog_cells in [0u64, 1, 3, 10, 100, 255, 256, 300] {
                for &buffer in &[1u32, 2, 16, 256] {
                    for &m in &[1u32, 2, 5, 192, 1000] {
                        let end = a0 + SimTime(backlog_cells * cell.0 / 2);
                        check(end, a0, step, m, cell, buffer);
                        check(a0.saturating_sub(SimTime(7)), a0, step, m, cell, buffer);
                    }
                }
            }
        }
    }

    #[test]
    fn test_occupancy_counts_the_cell_on_the_wire() {
        let end = SimTime(1000);
        assert_eq!(occupancy(end, SimTime(1000), SimTime(100)), 0);
        assert_eq!(occupancy(end, SimTime(999), SimTime(100)), 1);
        assert_eq!(occupancy(end, SimTime(900), SimTime(100)), 1);
        assert_eq!(occupancy(end, SimTime(899), SimTime(100)), 2);
    }

    #[test]
    fn test_ppd_keeps_last_cell_epd_refuses_it() {
        let mut st = VcState::Idle;
        let ppd = DropPolicy::Ppd;
        assert_eq!(
            offer(ppd, buf(4), &mut st, 0, false, false),
            Verdict::Accept
        );
        assert_eq!(
            offer(ppd, buf(4), &mut st, 4, false, false),
            Verdict::Drop(LossCause::Overflow)
        );
        assert_eq!(
            offer(ppd, buf(4), &mut st, 0, false, false),
            Verdict::Drop(LossCause::Ppd)
        );
        assert_eq!(offer(ppd, buf(4), &mut st, 0, true, false), Verdict::Accept);
        assert_eq!(st, VcState::Idle);

        let epd = DropPolicy::Epd { threshold_cells: 2 };
        assert_eq!(
            offer(epd, buf(4), &mut st, 2, false, false),
            Verdict::Drop(LossCause::Epd)
        );
        assert_eq!(
            offer(epd, buf(4), &mut st, 0, false, false),
            Verdict::Drop(LossCause::Epd)
        );
        assert_eq!(
            offer(epd, buf(4), &mut st, 0, true, false),
            Verdict::Drop(LossCause::Epd)
        );
        assert_eq!(offer(epd, buf(4), &mut st, 1, true, false), Verdict::Accept);
    }

    #[test]
    fn test_tail_drop_carries_on_after_a_loss() {
        let mut st = VcState::Idle;
        let td = DropPolicy::TailDrop;
        assert_eq!(
            offer(td, buf(1), &mut st, 1, false, false),
            Verdict::Drop(LossCause::Overflow)
        );
        assert_eq!(offer(td, buf(1), &mut st, 0, false, false), Verdict::Accept);
    }

    #[test]
    fn test_clp1_cells_give_way_at_the_threshold() {
        let b = Buffer {
            cells: 8,
            clp1_threshold: Some(3),
        };
        assert_eq!((b.limit(false), b.limit(true)), (8, 3));
        // Tail drop: a CLP = 1 cell at the threshold goes (cause CLP), a CLP = 0
        // one is kept until the buffer is full; the VC carries on.
        let td = DropPolicy::TailDrop;
        let mut st = VcState::Idle;
        assert_eq!(offer(td, b, &mut st, 2, false, true), Verdict::Accept);
        assert_eq!(
            offer(td, b, &mut st, 3, false, true),
            Verdict::Drop(LossCause::Clp)
        );
        assert_eq!(offer(td, b, &mut st, 7, false, false), Verdict::Accept);
        assert_eq!(
            offer(td, b, &mut st, 8, false, true),
            Verdict::Drop(LossCause::Overflow)
        );
        assert_eq!(offer(td, b, &mut st, 0, true, true), Verdict::Accept);
        // PPD: the CLP drop is a lost cell of the PDU; the rest goes but the
        // last cell, kept only if there is room for its CLP.
        let ppd = DropPolicy::Ppd;
        assert_eq!(offer(ppd, b, &mut st, 0, false, false), Verdict::Accept);
        assert_eq!(
            offer(ppd, b, &mut st, 5, false, true),
            Verdict::Drop(LossCause::Clp)
        );
        assert_eq!(
            offer(ppd, b, &mut st, 0, false, false),
            Verdict::Drop(LossCause::Ppd)
        );
        assert_eq!(
            offer(ppd, b, &mut st, 4, true, true),
            Verdict::Drop(LossCause::Clp)
        );
        assert_eq!(st, VcState::Idle);
        assert_eq!(offer(ppd, b, &mut st, 0, false, true), Verdict::Accept);
        assert_eq!(
            offer(ppd, b, &mut st, 3, false, true),
            Verdict::Drop(LossCause::Clp)
        );
        assert_eq!(offer(ppd, b, &mut st, 4, true, false), Verdict::Accept);
        // EPD decides a PDU's first cell before the CLP threshold does.
        let epd = DropPolicy::Epd { threshold_cells: 2 };
        assert_eq!(
            offer(epd, b, &mut st, 2, false, true),
            Verdict::Drop(LossCause::Epd)
        );
    }
}
