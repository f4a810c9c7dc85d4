//! Train mode: cell-exact at packet cost.
//!
//! Why it is exact. A FIFO output port's decision for a cell depends only on the
//! cells that arrived before it (in the documented tie order) — through one
//! number, the end of transmission of the last accepted cell (`end`; the
//! occupancy a cell finds is `ceil((end − a)/C)`, see `port::occupancy`), and the
//! VC's drop-policy state. So a port may decide any cell as soon as it knows
//! every cell that arrives there no later; it need not decide it at its arrival
//! time.
//!
//! How cells move. A run of consecutive cells of one PDU with regular arrivals is
//! a [`Seg`] `(t0, step, count)`. Each port keeps one FIFO of segments per input
//! link. *Resolving* a port up to time T merges the heads of its input FIFOs in
//! (arrival, circuit) order and decides the cells arriving at or before T, taking
//! whole runs at a time (`port::accept_run` gives the departures of a run in
//! closed form; drops under PPD/EPD are counted in bulk), and pushes the
//! survivors downstream as new segments (coalesced when still regular). A
//! segment's cells share one CLP bit (trains split where a policer tags), so a
//! CLP = 1 run is the same closed form with the port's CLP-1 threshold as its
//! buffer size: admission `occ < limit` is all that differs. Cells a
//! VC discards (PPD before the last cell, EPD) neither read nor change the port's
//! state, so they are taken in bulk even where other inputs interleave. Where
//! inputs interleave cell by cell (paced sources), each cell is decided alone
//! and the survivors of one circuit go on gathered into one segment (`Piece`).
//!
//! When a port may resolve up to T:
//! - a port with one input link (eager) resolves every cell as soon as it is
//!   pushed: its input is in time order and nothing can overtake it;
//! - a port with several input links resolves up to T only after every upstream
//!   port U was resolved up to `T − (C_U + d_U)` (a cell leaving U later arrives
//!   after T); adapters push a PDU's cells when it is sent, and a PDU sent at or
//!   after `now` arrives after `now`. Such a port is resolved by an event at the
//!   arrival of the last cell of each PDU pushed to it (and at the end of any
//!   batch of cells pushed without one), and by pulls from downstream ports.
//!
//! So a PDU's last cell is always decided at each hop no later than its arrival
//! there, hence pushed to the next hop before it arrives there, and a delivery
//! is scheduled before its time. The port graph must be loop-free (checked).

use super::port::{self, VcState, Verdict};
use super::{abr, upc, DropPolicy, Ev, LossCause, Network, Next, Place};
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Cells `first..first+count` of one PDU arriving at a stage, the k-th at `t0 + k·step`.
#[derive(Copy, Clone, Debug)]
pub(super) struct Seg {
    pub pdu: u32,
    pub circuit: u32,
    /// The stage (port) the cells arrive at.
    pub stage: u16,
    pub first: u32,
    pub count: u32,
    pub t0: SimTime,
    pub step: SimTime,
    /// The cells' CLP bit (a policer that tags splits a train where it changes).
    pub clp: bool,
    /// ABR: the cells' EFCI bit, set by a port on the way (`abr.rs`). An RM
    /// cell is a segment of its own, `pdu` = `RM_PDU`, `first` its RM slot.
    pub efci: bool,
}

impl Seg {
    /// A placeholder where an array needs one.
    const NONE: Seg = Seg {
        pdu: 0,
        circuit: 0,
        stage: 0,
        first: 0,
        count: 0,
        t0: SimTime::ZERO,
        step: SimTime::ZERO,
        clp: false,
        efci: false,
    };

    fn time(&self, j: u32) -> SimTime {
        self.t0 + self.step.times(j as u64)
    }
    fn last(&self) -> SimTime {
        self.time(self.count - 1)
    }
    /// Data cells, two or more: a run a steady period may take (`Network::steady`).
    fn is_run(&self) -> bool {
        !abr::is_rm(self.pdu) && self.count >= 2
    }
    /// How many head cells arrive at or before `limit` (>= 1 when t0 <= limit).
    fn count_upto(&self, limit: SimTime) -> u32 {
        if self.count == 1 || limit >= self.last() {
            return self.count;
        }
        if limit < self.t0 + self.step {
            return 1;
        }
        ((limit.0 - self.t0.0) / self.step.0 + 1) as u32
    }
}

impl Network {
    /// Cells `first..first+count` of a PDU leave `stage`, arriving at the next
    /// stage at `t0 + k·step` (an RM cell: `pdu` = `RM_PDU`, see [`Seg`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit(
        &mut self,
        circuit: usize,
        stage: usize,
        pdu: u32,
        first: u32,
        count: u32,
        t0: SimTime,
        step: SimTime,
        clp: bool,
        efci: bool,
    ) {
        let rm = abr::is_rm(pdu);
        let (port, slot) = match self.circuits[circuit].stages[stage].next {
            Next::Receiver if rm => return self.turn_around(t0, first, circuit),
            Next::Receiver => {
                if self.abr.on {
                    // The last of these cells is the destination's EFCI state.
                    self.abr_data_received(circuit, efci);
                }
                if matches!(self.log_scope, super::LogScope::Off) {
                    // No cell log: all the reassembler reads is the last arrival.
                    let last = t0 + step.times(count as u64 - 1);
                    return self.reassembled(circuit, pdu, first, count, last);
                }
                return self.reassemble(circuit, pdu, first, count, t0, step, clp);
            }
            Next::Port { port, slot } => (port, slot),
        };
        let seg = Seg {
            pdu,
            circuit: circuit as u32,
            stage: stage as u16 + 1,
            first,
            count,
            t0,
            step,
            clp,
            efci,
        };
        let now = self.now;
        let p = &mut self.ports[port];
        let fifo = &mut p.inputs[slot];
        let merged = match fifo.back_mut() {
            Some(b) if !rm && b.pdu == pdu && b.first + b.count == first => coalesce(b, &seg),
            _ => false,
        };
        if !merged {
            if fifo.is_empty() {
                p.heads.push(Reverse((seg.t0, seg.circuit, slot)));
            }
            fifo.push_back(seg);
        }
        let last = seg.last();
        if p.eager {
            return self.mark_dirty(port);
        }
        // An RM cell is decided no later than its arrival, as a PDU's last cell
        // (`abr_train.rs` counts on it). (Read here, not above: an eager
        // port, most of UBR's, needs no PDU look-up.)
        let eom = rm || first + count == self.pdus[pdu as usize].ncells;
        if eom {
            self.resolve_at(port, last.max(now));
        } else {
            let p = &mut self.ports[port];
            p.sweep_at = p.sweep_at.max(last);
            if !p.in_sweep {
                p.in_sweep = true;
                self.sweep.push(port);
            }
        }
    }

    /// An ABR source's data cells `run` (if any: a segment arriving at stage 1,
    /// and whether it ends its PDU) and the FRM `rm` behind them leave the
    /// adapter of `circuit` for input `slot` of `port`, the FRM arriving at
    /// `a`: `emit` for each, the run first, with the FIFO, the heads and the
    /// resolve events touched once. A run not ending its PDU needs no sweep:
    /// the FRM, which arrives after it, is decided by an event at its arrival
    /// (as a PDU's last cell), which covers the run's cells; and a port not in
    /// the sweep list has no `sweep_at` beyond its `max_scheduled` (the sweep
    /// only raises the latter), so the sweep would have scheduled nothing.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit_frm(
        &mut self,
        port: usize,
        slot: usize,
        circuit: usize,
        run: Option<(Seg, bool)>,
        rm: u32,
        a: SimTime,
        cell: SimTime,
        clp: bool,
    ) {
        let now = self.now;
        let p = &mut self.ports[port];
        let fifo = &mut p.inputs[slot];
        if fifo.is_empty() {
            let t0 = run.map_or(a, |(r, _)| r.t0);
            p.heads.push(Reverse((t0, circuit as u32, slot)));
        }
        let mut run_end = None;
        if let Some((seg, eom)) = run {
            let merged = match fifo.back_mut() {
                Some(b) if b.pdu == seg.pdu && b.first + b.count == seg.first => coalesce(b, &seg),
                _ => false,
            };
            if !merged {
                fifo.push_back(seg);
            }
            if eom {
                run_end = Some(seg.last());
            }
        }
        fifo.push_back(Seg {
            pdu: abr::RM_PDU,
            circuit: circuit as u32,
            stage: 1,
            first: rm,
            count: 1,
            t0: a,
            step: cell,
            clp,
            efci: false,
        });
        if p.eager {
            return self.mark_dirty(port);
        }
        for last in run_end.into_iter().chain([a]) {
            self.resolve_at(port, last.max(now));
        }
    }

    /// An eager port was pushed to: `drain` resolves it.
    #[inline]
    fn mark_dirty(&mut self, port: usize) {
        let p = &mut self.ports[port];
        if !p.dirty {
            p.dirty = true;
            self.dirty.push(port);
        }
    }

    /// A port resolving by events decides its cells arriving up to `at` by an
    /// event then (one per instant: a push for an instant already scheduled
    /// rides on its event).
    #[inline]
    fn resolve_at(&mut self, port: usize, at: SimTime) {
        let p = &mut self.ports[port];
        if p.max_scheduled != at {
            p.max_scheduled = p.max_scheduled.max(at);
            self.agenda
                .schedule(at, port as u32, Ev::Resolve(port as u32));
        }
    }

    /// Resolves the eager ports that were pushed to, then makes sure every cell
    /// pushed to a multi-input port is covered by a resolve event.
    // The check inline, the work not: most calls (each pull, each replay of an
    // ABR source) find both lists empty.
    #[inline]
    pub(super) fn drain(&mut self) {
        if !self.dirty.is_empty() || !self.sweep.is_empty() {
            self.drain_lists();
        }
    }

    #[inline(never)]
    fn drain_lists(&mut self) {
        while let Some(p) = self.dirty.pop() {
            self.ports[p].dirty = false;
            self.resolve(p, SimTime::MAX);
        }
        while let Some(p) = self.sweep.pop() {
            let now = self.now;
            let port = &mut self.ports[p];
            port.in_sweep = false;
            if port.sweep_at > port.max_scheduled {
                let at = port.sweep_at.max(now);
                port.max_scheduled = at;
                self.agenda.schedule(at, p as u32, Ev::Resolve(p as u32));
            }
        }
    }

    /// Resolves port `p` and everything upstream of it up to time `t`.
    pub(super) fn pull(&mut self, p: usize, t: SimTime) {
        if t <= self.ports[p].pulled_until {
            return;
        }
        self.ports[p].pulled_until = t;
        for i in 0..self.ports[p].upstream.len() {
            let (u, lookahead) = self.ports[p].upstream[i];
            self.pull(u, t.saturating_sub(lookahead));
        }
        // The upstream pulls may have pushed into eager ports between them and p.
        self.drain();
        if !self.ports[p].eager {
            self.resolve(p, t);
        }
    }

    /// Decides every pending cell of port `p` arriving at or before `horizon`.
    fn resolve(&mut self, p: usize, horizon: SimTime) {
        self.abr_release(p, horizon);
        // Nothing to decide (a port pulled by a downstream one, most often):
        // leave before taking the FIFOs out and putting them back.
        match self.ports[p].heads.peek() {
            Some(&Reverse((t0, _, _))) if t0 <= horizon => {}
            _ => return,
        }
        if self.ports[p].inputs.len() == 1 {
            return self.resolve_lone(p, horizon);
        }
        // The input FIFOs are taken out while cells flow on: nothing pushes back
        // into p (the port graph is loop-free).
        let mut inputs = std::mem::take(&mut self.ports[p].inputs);
        let mut heads = std::mem::take(&mut self.ports[p].heads);
        let gather = self.ports[p].gather;
        let mut pieces = if gather {
            std::mem::take(&mut self.pieces)
        } else {
            Vec::new()
        };
        // Whole periods of interleaved inputs at once (`Network::steady`). After
        // a try that did not fit, one period by merge steps before the next, and
        // twice as many after each further miss (up to `STEADY_BACKOFF`), so
        // inputs that do not repeat pay for few tries.
        let (mut merge_steps, mut backoff) = (0, 0);
        let (mut sink_steps, mut sink_backoff) =
            (self.ports[p].sink_steps, self.ports[p].sink_backoff);
        // The heap holds each non-empty FIFO's head: keys are distinct, since
        // a circuit enters a port by one input link.
        while let Some(&Reverse((t0, _, best))) = heads.peek() {
            if t0 > horizon {
                break;
            }
            if gather && heads.len() >= 2 && merge_steps == 0 {
                // A steady period needs every head to be a run of data cells at
                // one step: where they are not (an RM cell or a lone cell at the
                // head of most resolves at an ABR port, which resolves at each
                // FRM's arrival; sources at different ACRs), the try fails
                // without a call.
                if one_step(&inputs, &heads)
                    && self.steady(p, &mut inputs, &mut heads, horizon, &mut pieces)
                {
                    backoff = 0;
                    continue;
                }
                backoff = (backoff * 2).clamp(1, STEADY_BACKOFF).max(heads.len());
                merge_steps = backoff;
            }
            if gather && heads.len() >= 2 && sink_steps == 0 {
                // A pass that takes few cells (a port dropping cells, inputs a
                // steady period takes) is tried again only after merge steps,
                // twice as many after each such pass, as `steady` is (counted
                // across resolves: a resolve often decides a few cells only).
                let decided = self.merge_sinks(p, &mut inputs, &mut heads, horizon, &mut pieces);
                if decided >= SINK_PASS_MIN as usize {
                    sink_backoff = 0;
                    continue;
                }
                sink_backoff = (sink_backoff * 2).clamp(1, SINK_BACKOFF);
                sink_steps = sink_backoff;
                if decided > 0 {
                    continue;
                }
            }
            merge_steps = merge_steps.saturating_sub(1);
            sink_steps = sink_steps.saturating_sub(1);
            heads.pop();
            let second = heads
                .peek()
                .map_or((SimTime::MAX, u32::MAX), |&Reverse((t, c, _))| (t, c));
            let Some(&seg) = inputs[best].front() else {
                break;
            };
            if abr::is_rm(seg.pdu) {
                // An RM cell takes its place in the buffer like any cell (`abr.rs`),
                // behind its circuit's data cells (the destination reads their EFCI).
                self.flush_piece(&mut pieces, seg.circuit);
                self.rm_arrives(seg.t0, seg.first, seg.stage as usize, seg.clp);
                inputs[best].pop_front();
                if let Some(head) = inputs[best].front() {
                    heads.push(Reverse((head.t0, head.circuit, best)));
                }
                continue;
            }
            // Take the cells that come before the other inputs' next cell.
            let mut limit = horizon;
            if second.0 != SimTime::MAX {
                let other = if seg.circuit < second.1 {
                    second.0
                } else {
                    SimTime(second.0 .0 - 1)
                };
                limit = limit.min(other);
            }
            let mut m = seg.count_upto(limit);
            // Cells a VC discards (PPD before the PDU's last cell, EPD) neither
            // depend on nor change the port's state: no need to interleave them
            // with the other inputs' cells. Unless they pass a policer first,
            // whose state they change.
            let stage = &self.circuits[seg.circuit as usize].stages[seg.stage as usize];
            let policed = stage.policer.is_some();
            let vc = if policed { VcState::Idle } else { stage.vc };
            match vc {
                VcState::Refusing => m = seg.count_upto(horizon),
                VcState::Discarding => {
                    let all = seg.count_upto(horizon);
                    let ncells = self.pdus[seg.pdu as usize].ncells;
                    let before_eom = if seg.first + all == ncells {
                        all - 1
                    } else {
                        all
                    };
                    m = m.max(before_eom);
                }
                VcState::Idle | VcState::Accepting => {}
            }
            if gather && m == 1 && !policed && matches!(vc, VcState::Idle | VcState::Accepting) {
                // Interleaved with other inputs: decided alone, leaving in its
                // circuit's piece.
                self.one_cell(p, &seg, 0, Some(&mut pieces));
            } else {
                if gather {
                    self.flush_piece(&mut pieces, seg.circuit);
                }
                self.police_then_process(p, &seg, m);
            }
            let fifo = &mut inputs[best];
            if fifo.is_empty() {
                break;
            }
            take_head(fifo, m);
            if let Some(head) = fifo.front() {
                heads.push(Reverse((head.t0, head.circuit, best)));
            }
        }
        // Back in place of the empty ones `mem::take` left (nothing pushed
        // into p since), which hold no allocation: forgotten, not dropped.
        let port = &mut self.ports[p];
        debug_assert!(port.inputs.capacity() == 0 && port.heads.capacity() == 0);
        std::mem::forget(std::mem::replace(&mut port.inputs, inputs));
        std::mem::forget(std::mem::replace(&mut port.heads, heads));
        port.sink_steps = sink_steps;
        port.sink_backoff = sink_backoff;
        if gather {
            for piece in pieces.drain(..) {
                self.emit_piece(&piece);
            }
            self.pieces = pieces;
        }
    }

    /// `resolve` at a port fed by one link (ABR makes every port resolve by
    /// events, `topology.rs`, so most of an ABR run's resolves are at such
    /// ports): its FIFO is in arrival order and nothing interleaves, so each
    /// head segment's cells up to the horizon are decided at once, as the
    /// general step decides them when no other input's cell comes first,
    /// without the merge's heap.
    fn resolve_lone(&mut self, p: usize, horizon: SimTime) {
        let mut fifo = std::mem::take(&mut self.ports[p].inputs[0]);
        while let Some(&seg) = fifo.front() {
            if seg.t0 > horizon {
                break;
            }
            if abr::is_rm(seg.pdu) {
                self.rm_arrives(seg.t0, seg.first, seg.stage as usize, seg.clp);
                fifo.pop_front();
                continue;
            }
            let m = seg.count_upto(horizon);
            self.police_then_process(p, &seg, m);
            take_head(&mut fifo, m);
        }
        let port = &mut self.ports[p];
        port.heads.clear();
        if let Some(head) = fifo.front() {
            port.heads.push(Reverse((head.t0, head.circuit, 0)));
        }
        port.inputs[0] = fifo;
    }

    /// Push on the piece circuit `c` is gathering, if any.
    #[inline]
    fn flush_piece(&mut self, pieces: &mut Vec<Piece>, c: u32) {
        if pieces.is_empty() {
            return;
        }
        if let Some(i) = pieces.iter().position(|x| x.seg.circuit == c) {
            let piece = pieces.swap_remove(i);
            self.emit_piece(&piece);
        }
    }

    fn emit_piece(&mut self, piece: &Piece) {
        let s = piece.seg;
        if !piece.regular {
            // Cells for the receiver at irregular instants (`Piece::sink`): all
            // it reads is the last one's arrival and EFCI bit.
            let c = s.circuit as usize;
            if self.abr.on {
                self.abr_data_received(c, s.efci);
            }
            return self.reassembled(c, s.pdu, s.first, s.count, piece.last);
        }
        let step = if s.count == 1 { piece.cell } else { s.step };
        let (c, stage) = (s.circuit as usize, s.stage as usize);
        self.emit(c, stage, s.pdu, s.first, s.count, s.t0, step, s.clp, s.efci);
    }

    /// The first `m` cells of `seg` pass the port's policer, if their stage has
    /// one (cell by cell, no event), and the runs it lets through go on to the
    /// buffer (see `upc.rs`).
    fn police_then_process(&mut self, p: usize, seg: &Seg, m: u32) {
        let (c, s) = (seg.circuit as usize, seg.stage as usize);
        let Some(pol) = self.circuits[c].stages[s].policer else {
            return self.process(p, seg, m);
        };
        // Runs of equal verdicts go on as they close: the policer's state and
        // the buffer's are independent, so policing ahead of the buffer is exact.
        let mut run_start = 0;
        let mut run_verdict = self.police(pol, p, c, seg.t0);
        for j in 1..=m {
            let v = if j < m {
                let v = self.police(pol, p, c, seg.time(j));
                if v == run_verdict {
                    continue;
                }
                Some(v)
            } else {
                None
            };
            let run = Seg {
                first: seg.first + run_start,
                count: j - run_start,
                t0: seg.time(run_start),
                clp: run_verdict.clp(seg.clp),
                ..*seg
            };
            if run_verdict.passes() {
                self.process(p, &run, run.count);
            } else {
                self.count_dropped(
                    p,
                    c,
                    s,
                    seg.pdu,
                    run.first,
                    run.count,
                    run.t0,
                    seg.step,
                    upc::POLICED,
                    seg.clp,
                );
            }
            if let Some(v) = v {
                run_start = j;
                run_verdict = v;
            }
        }
    }

    /// Decides the first `m` cells of `seg` at port `p`, in bulk where the
    /// outcome is regular, cell by cell where it is not.
    fn process(&mut self, p: usize, seg: &Seg, m: u32) {
        let (c, s) = (seg.circuit as usize, seg.stage as usize);
        let ncells = self.pdus[seg.pdu as usize].ncells;
        let ends_pdu = seg.first + m == ncells;
        let (cell, buffer, policy) = {
            let port = &self.ports[p];
            (port.cell, port.buffer, port.policy)
        };
        let mut j = 0;
        while j < m {
            let a = seg.time(j);
            match self.circuits[c].stages[s].vc {
                VcState::Refusing => {
                    // EPD: the rest of a refused PDU goes, its last cell included.
                    self.count_dropped(
                        p,
                        c,
                        s,
                        seg.pdu,
                        seg.first + j,
                        m - j,
                        a,
                        seg.step,
                        LossCause::Epd,
                        seg.clp,
                    );
                    if ends_pdu {
                        self.circuits[c].stages[s].vc = VcState::Idle;
                    }
                    j = m;
                }
                VcState::Discarding if !(ends_pdu && j + 1 == m) => {
                    // PPD: every cell but the last of the PDU goes.
                    let k = if ends_pdu { m - 1 } else { m };
                    self.count_dropped(
                        p,
                        c,
                        s,
                        seg.pdu,
                        seg.first + j,
                        k - j,
                        a,
                        seg.step,
                        LossCause::Ppd,
                        seg.clp,
                    );
                    j = k;
                }
                VcState::Discarding => {
                    self.one_cell(p, seg, j, None);
                    j += 1;
                }
                VcState::Idle if matches!(policy, DropPolicy::Epd { .. }) => {
                    self.one_cell(p, seg, j, None);
                    j += 1;
                }
                VcState::Idle | VcState::Accepting => {
                    let end = self.ports[p].end;
                    let limit = buffer.limit(seg.clp);
                    match port::accept_run(end, a, seg.step, m - j, cell, limit) {
                        Some(run) => {
                            self.accept_run(p, seg, j, &run, ends_pdu && j + run.n == m);
                            j += run.n;
                        }
                        None => {
                            self.one_cell(p, seg, j, None);
                            j += 1;
                        }
                    }
                }
            }
        }
    }

    /// Cells `j..j+run.n` of `seg` are accepted, leaving as `run` says.
    fn accept_run(&mut self, p: usize, seg: &Seg, j: u32, run: &port::Run, has_eom: bool) {
        let (c, s) = (seg.circuit as usize, seg.stage as usize);
        let a0 = seg.time(j);
        let (cell, delay) = {
            let port = &mut self.ports[p];
            port.end = run.end;
            (port.cell, port.delay)
        };
        self.count_accepted(p, run.n, run.peak());
        if self.queue_series.is_some() {
            // A run's occupancy is monotone: its first and last arrivals bound it.
            self.sample_queue(p, a0, run.occ_first, run.end);
            if run.n > 1 {
                self.sample_queue(p, seg.time(j + run.n - 1), run.occ_last, run.end);
            }
        }
        self.circuits[c].stages[s].vc = VcState::forwarded(has_eom);
        if self.logs(Place::Port(p)) {
            let starts = (0..run.n).map(|k| run.start(k, a0, seg.step, cell));
            self.log_sent(p, c, s, seg.pdu, seg.first + j, starts, seg.clp);
        }
        // ABR: the cells this port marks EFCI, `lo..hi` of the run (`abr.rs`).
        // (as per cell, a cell already marked upstream is not offered to them).
        let (lo, hi) = if self.abr.on && !seg.efci {
            self.abr_run_at_port(p, c, a0, seg.step, run, cell)
        } else {
            (0, 0)
        };
        // Pieces that leave alike: back to back before the knee, as they came
        // after it, each with one EFCI bit.
        let hop = cell + delay;
        let mut cuts = [0, run.knee, lo, hi, run.n];
        if lo < hi {
            cuts.sort_unstable();
        } else {
            cuts = [0, 0, 0, run.knee, run.n];
        }
        for w in cuts.windows(2) {
            let (x, y) = (w[0], w[1]);
            if y <= x {
                continue;
            }
            let (t0, step) = if x < run.knee {
                (run.start0 + cell.times(x as u64) + hop, cell)
            } else {
                (a0 + seg.step.times(x as u64) + hop, seg.step)
            };
            let efci = seg.efci || (lo <= x && x < hi);
            let first = seg.first + j + x;
            self.emit(c, s, seg.pdu, first, y - x, t0, step, seg.clp, efci);
        }
    }

    /// Cell j of `seg` decided on its own (a drop, a PDU boundary under EPD, the
    /// last cell under PPD).
    /// With `pieces`, the cell is added to its circuit's piece rather than
    /// pushed on at once (see [`Piece`]).
    #[inline(always)]
    fn one_cell(&mut self, p: usize, seg: &Seg, j: u32, pieces: Option<&mut Vec<Piece>>) {
        let (c, s) = (seg.circuit as usize, seg.stage as usize);
        let a = seg.time(j);
        let idx = seg.first + j;
        let eom = idx + 1 == self.pdus[seg.pdu as usize].ncells;
        let port = &self.ports[p];
        let (cell, delay, buffer, policy, end) =
            (port.cell, port.delay, port.buffer, port.policy, port.end);
        let occ = port::occupancy(end, a, cell);
        let vc = &mut self.circuits[c].stages[s].vc;
        match port::offer(policy, buffer, vc, occ, eom, seg.clp) {
            Verdict::Accept => {
                let start = a.max(end);
                self.ports[p].end = start + cell;
                self.count_accepted(p, 1, occ + 1);
                self.sample_queue(p, a, occ + 1, start + cell);
                if self.logs(Place::Port(p)) {
                    self.log_sent(p, c, s, seg.pdu, idx, std::iter::once(start), seg.clp);
                }
                let efci = seg.efci || (self.abr.on && self.abr_data_at_port(p, c, a, occ + 1));
                let at = start + cell + delay;
                match pieces {
                    Some(pieces) => self.gather(pieces, seg, idx, at, cell, efci),
                    None => self.emit(c, s, seg.pdu, idx, 1, at, cell, seg.clp, efci),
                }
            }
            Verdict::Drop(cause) => {
                if let Some(pieces) = pieces {
                    self.flush_piece(pieces, seg.circuit);
                }
                self.count_dropped(p, c, s, seg.pdu, idx, 1, a, cell, cause, seg.clp)
            }
        }
    }
}

/// The most inputs a steady period takes (a port with more decides cell by cell).
const STEADY_INPUTS: usize = 8;
/// The fewest cells a pass of `Network::merge_sinks` must decide for the next
/// to be tried at once: below it, a pass costs more than the merge steps it saves.
const SINK_PASS_MIN: u32 = 8;
/// The most merge steps between two tries of `Network::merge_sinks` after
/// passes that took few cells: where it pays it takes thousands at a time.
const SINK_BACKOFF: u32 = 1024;
/// The most merge steps between two tries of a steady period: a few periods of
/// the largest one, so a pattern that settles is found again soon.
const STEADY_BACKOFF: usize = 64;

impl Network {
    /// Interleaved inputs in a steady pattern: decide whole periods at once.
    ///
    /// Where k inputs are regular trains with one step `s` (paced circuits, ABR
    /// sources at one ACR) and their heads lie within `s` of each other, the
    /// merge takes one cell of each per period, always in the same order. A
    /// period's decisions depend on the port only through `end`, or rather
    /// `E = max(end, first arrival)`; if one period, decided cell by cell here,
    /// leaves `E + s`, every following period repeats it `s` later: the same
    /// occupancy for each input's cell and its departure `s` later. So `n`
    /// periods are decided by one, and each input's `n` cells leave as one
    /// regular piece (the circuit's `Piece`). `n` stops at the end of the
    /// shortest head segment (an RM cell, a PDU's end or a change of step next),
    /// earlier if the next segment of an input would come within the last
    /// period, before the first period not wholly at or before `horizon`, and
    /// before the end of the averaging interval after ERICA's current one: each
    /// cell is counted in the interval it falls in (`PortAbrRt::count_run`),
    /// every input's cells before the current interval's end first, as the
    /// merge meets them, so the interval closes on all of them (ERICA's
    /// `roll` reads only the count, and the clock is past the end when a cell
    /// after it is decided). Every cell must find
    /// room (the buffer, the CLP = 1 threshold, EPD's threshold) and its VC
    /// forwarding or between PDUs, with no policer; then each is accepted as
    /// `offer` would. Cell logs and queue samples are written cell by cell in
    /// the merge's order. False (nothing done) when any of this does not hold.
    #[inline(never)]
    fn steady(
        &mut self,
        p: usize,
        inputs: &mut [VecDeque<Seg>],
        heads: &mut BinaryHeap<Reverse<(SimTime, u32, usize)>>,
        horizon: SimTime,
        pieces: &mut Vec<Piece>,
    ) -> bool {
        let k = heads.len();
        // The heads, each a run of data cells at one step `s` (checked by the
        // caller, `one_step`), all within `s` of the first, with the link free
        // for part of each period. Checked before the merge order is sorted
        // out: most tries that get here fail here (trains at the link rate).
        debug_assert!(one_step(inputs, heads));
        let Reverse((h_first, _, first)) = *heads.peek().expect("k >= 2");
        let s = inputs[first][0].step;
        let mut order = [(0usize, SimTime::ZERO, 0u32); STEADY_INPUTS];
        let mut h_last = h_first;
        for (i, &Reverse((t, c, slot))) in heads.iter().enumerate() {
            h_last = h_last.max(t);
            order[i] = (slot, t, c);
        }
        if h_last.0 - h_first.0 >= s.0 || h_last > horizon {
            return false;
        }
        let port = &self.ports[p];
        let (cell, delay, buffer, policy, end0) =
            (port.cell, port.delay, port.buffer, port.policy, port.end);
        // More work a period than the link does in one: its backlog grows, so
        // no period repeats the last (trains at the link rate colliding).
        if cell.times(k as u64) > s {
            return false;
        }
        // The merge order: (input, its head's arrival, circuit).
        let order = &mut order[..k];
        // By insertion, inline: k is a few, and the keys (arrival, circuit)
        // are distinct (a circuit enters a port by one input link).
        for i in 1..k {
            let mut j = i;
            while j > 0 && (order[j - 1].1, order[j - 1].2) > (order[j].1, order[j].2) {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        // Whole periods at or before the horizon (and ERICA's interval end).
        let periods = |until: SimTime| ((until.0 - h_last.0) / s.0 + 1).min(u32::MAX as u64) as u32;
        let mut n = periods(horizon);
        let mut interval_end = SimTime::MAX;
        if let Some((end, length)) = self.abr_interval(p) {
            let next_end = end + length;
            if h_last >= next_end {
                return false;
            }
            n = n.min(periods(SimTime(next_end.0 - 1)));
            interval_end = end;
        }
        let epd = match policy {
            DropPolicy::Epd { threshold_cells } => threshold_cells,
            _ => u32::MAX,
        };
        // The head segments in the merge's order, read off their FIFOs once.
        let mut segs = [Seg::NONE; STEADY_INPUTS];
        for (seg, &(slot, _, _)) in segs.iter_mut().zip(order.iter()) {
            *seg = inputs[slot][0];
        }
        let segs = &segs[..k];
        // Period 0, cell by cell: each input's occupancy found and start.
        let mut found = [(0u32, SimTime::ZERO); STEADY_INPUTS];
        let mut end = end0;
        let mut peak = 1;
        for (i, seg) in segs.iter().enumerate() {
            let stage = &self.circuits[seg.circuit as usize].stages[seg.stage as usize];
            if stage.policer.is_some() || !matches!(stage.vc, VcState::Idle | VcState::Accepting) {
                return false;
            }
            let occ = port::occupancy(end, seg.t0, cell);
            if occ >= buffer.limit(seg.clp).min(epd) {
                return false;
            }
            n = n.min(seg.count);
            let start = seg.t0.max(end);
            end = start + cell;
            found[i] = (occ, start);
            peak = peak.max(occ + 1);
        }
        // No cell left behind may come before one taken: an input whose head
        // segment the periods use up may have its next segment (another
        // circuit on the same link, say) start within the last period.
        while n >= 2 {
            let last = h_last + s.times(n as u64 - 1);
            let overtaken = order.iter().zip(segs).any(|(&(slot, _, _), seg)| {
                seg.count == n && inputs[slot].get(1).is_some_and(|next| next.t0 <= last)
            });
            if !overtaken {
                break;
            }
            n -= 1;
        }
        if n < 2 || end.max(h_first + s) != end0.max(h_first) + s {
            return false;
        }
        let steps = s.times(n as u64 - 1);
        self.ports[p].end = end + steps;
        self.count_accepted(p, n * k as u32, peak);
        let logs = self.logs(Place::Port(p));
        if logs || self.queue_series.is_some() {
            // In the order the merge takes them, period by period.
            for j in 0..n {
                let dt = s.times(j as u64);
                for (i, seg) in segs.iter().enumerate() {
                    let (occ, start) = found[i];
                    self.sample_queue(p, seg.t0 + dt, occ + 1, start + dt + cell);
                    if logs {
                        let (c, st, idx) =
                            (seg.circuit as usize, seg.stage as usize, seg.first + j);
                        let at = std::iter::once(start + dt);
                        self.log_sent(p, c, st, seg.pdu, idx, at, seg.clp);
                    }
                }
            }
        }
        let marked = match self.abr.on {
            true => self.steady_abr(p, segs, &found, n, interval_end),
            false => [false; STEADY_INPUTS],
        };
        // Most periods find no piece gathering (each input's circuit is its
        // own): each input's cells start one, without looking for it.
        let fresh = pieces.is_empty();
        for (i, (&(slot, _, _), seg)) in order.iter().zip(segs).enumerate() {
            let (c, st) = (seg.circuit as usize, seg.stage as usize);
            let (start, marked) = (found[i].1, marked[i]);
            let ends_pdu = seg.first + n == self.pdus[seg.pdu as usize].ncells;
            let circuit = &mut self.circuits[c];
            let stage = &mut circuit.stages[st];
            stage.vc = VcState::forwarded(ends_pdu);
            let at = start + cell + delay;
            let efci = seg.efci || marked;
            if fresh {
                let (to_receiver, dst) = (matches!(stage.next, Next::Receiver), circuit.dst);
                let sink = to_receiver && !self.logs(Place::Receiver(dst));
                new_piece(pieces, seg, n, at, s, cell, efci, sink);
            } else {
                self.gather_run(pieces, seg, n, at, s, cell, efci);
            }
            take_head(&mut inputs[slot], n);
        }
        heads.clear();
        for &(slot, _, _) in order.iter() {
            if let Some(head) = inputs[slot].front() {
                heads.push(Reverse((head.t0, head.circuit, slot)));
            }
        }
        true
    }
}

impl Network {
    /// ABR's counts of a steady run (`steady`): `n` cells of each input (its
    /// head segment `segs`, in the merge's order), each input's finding the
    /// occupancy `found` says;
    /// whether each input's cells leave marked EFCI. ERICA counts every
    /// input's cells before `interval_end` (its current interval's) first.
    /// As cell by cell, a cell marked upstream is not offered to ABR here.
    #[inline(never)]
    fn steady_abr(
        &mut self,
        p: usize,
        segs: &[Seg],
        found: &[(u32, SimTime)],
        n: u32,
        interval_end: SimTime,
    ) -> [bool; STEADY_INPUTS] {
        let mut marked = [false; STEADY_INPUTS];
        // The port looked up once for every input's runs.
        let Some(mut port) = self.abr_cells_at_port(p) else {
            return marked;
        };
        // The cells of each input before the interval's end, and whether any
        // input has cells after it (most runs lie inside the interval).
        let mut before = [n; STEADY_INPUTS];
        let mut crosses = false;
        for (i, seg) in segs.iter().enumerate() {
            if seg.time(n - 1) >= interval_end {
                let d = interval_end.0.saturating_sub(seg.t0.0);
                before[i] = d.div_ceil(seg.step.0) as u32;
                crosses = true;
            }
            if before[i] > 0 && !seg.efci {
                let (c, occ) = (seg.circuit as usize, found[i].0 + 1);
                marked[i] = port.cells_inside(c, seg.t0, seg.step, before[i], occ);
            }
        }
        if crosses {
            for (i, seg) in segs.iter().enumerate() {
                if before[i] < n && !seg.efci {
                    let (c, occ) = (seg.circuit as usize, found[i].0 + 1);
                    let t0 = seg.time(before[i]);
                    marked[i] = port.cells(c, t0, seg.step, n - before[i], occ);
                }
            }
        }
        marked
    }
}

impl Network {
    /// Interleaved inputs bound for their receivers, decided in one pass: the
    /// lever where circuits at different rates meet (ABR sources at their own
    /// ACRs, paced circuits), whose cells interleave one by one so that no
    /// steady period repeats and every merge step of `resolve` is one cell.
    ///
    /// Why a cell needs so little here. A cell that goes on to its receiver
    /// leaves a trace there only through its PDU's last cell (when the PDU is
    /// complete) and its EFCI bit (the last one before an RM cell turns
    /// around), so the cells of one input go on as one piece whatever their
    /// instants (`Piece::sink`). At the port, a cell accepted changes only
    /// `end`; so the pass runs the Lindley recursion over the merged arrivals
    /// (`end = max(a, end) + C`, in (arrival, circuit) order), with the
    /// occupancy each cell finds, and the checks `offer` makes of it: room for
    /// its CLP bit and, at a PDU's first cell, EPD's threshold. It stops at the
    /// first cell that would not be accepted, for the general step to decide.
    /// EFCI marks are counted per input, each piece carrying its last cell's
    /// bit; ERICA counts each segment's cells as the regular run they are
    /// (`abr_cells_counted`). An RM cell is taken where it comes, as the
    /// general step takes it (`rm_arrives`, its circuit's piece pushed on
    /// first), and the input goes on with its next segment.
    ///
    /// The occupancy need not be worked out per cell where no cell can near a
    /// threshold or the peak so far: a cell arriving at `a` finds at most the
    /// work the first arrival found, plus one cell per input, plus the
    /// inputs' excess over the link since (any `[u, a)` holds at most
    /// `(a − u)/step + 1` arrivals of each input while the link clears
    /// `a − u`). With `ρ = C·Σ 1/step` that is at most
    /// `B0 + k + max(0, D·(ρ − 1)/C)` cells over a span `D`, which holds while
    /// every input stays in its segment; the pass works it out again, from
    /// the occupancy at its next cell, whenever an input moves to its next
    /// (`sink_bound`). Two inputs' cells that need no check go through a
    /// branch-free loop (`two_lanes`).
    ///
    /// It takes cells up to the horizon and the end of ERICA's current
    /// averaging interval (as `steady`), and stops before the first cell of a
    /// segment it may not take: a policer, a VC discarding or refusing, a
    /// circuit that goes on to another port; and where every input is again a
    /// run at one step, for a steady period to take. Not where cells or queue
    /// lengths are logged. Returns how many cells (RM cells included) it decided.
    #[inline(never)]
    fn merge_sinks(
        &mut self,
        p: usize,
        inputs: &mut [VecDeque<Seg>],
        heads: &mut BinaryHeap<Reverse<(SimTime, u32, usize)>>,
        horizon: SimTime,
        pieces: &mut Vec<Piece>,
    ) -> usize {
        let k = heads.len();
        if k > STEADY_INPUTS || self.queue_series.is_some() || self.logs(Place::Port(p)) {
            return 0;
        }
        let Reverse((first, _, _)) = *heads.peek().expect("k >= 2");
        let mut until = horizon;
        if let Some(interval_end) = self.abr_interval_end(p) {
            if first >= interval_end {
                return 0;
            }
            until = until.min(SimTime(interval_end.0 - 1));
        }
        let port = &self.ports[p];
        let (cell, delay, buffer, policy, end0) =
            (port.cell, port.delay, port.buffer, port.policy, port.end);
        // A first cell that finds no room: the general step's (a port
        // dropping cells).
        let room = buffer.limit(false).min(buffer.limit(true));
        if port::occupancy(end0, first, cell) >= room {
            return 0;
        }
        // Inputs all at one step are a steady period's, or the general step's
        // where it does not repeat (`steady`): this pass is for unequal ones.
        let (mut runs, mut one_step, mut step) = (0, true, None);
        for &Reverse((_, _, slot)) in heads.iter() {
            let seg = &inputs[slot][0];
            if !abr::is_rm(seg.pdu) && seg.count >= 2 {
                one_step &= step.is_none_or(|s| s == seg.step);
                step = Some(seg.step);
                runs += 1;
            }
        }
        if one_step && runs >= 2 {
            return 0;
        }
        let mut lanes = [Lane::default(); STEADY_INPUTS];
        // No cell at or after this key (arrival, circuit) may be taken.
        let mut stop = u128::MAX;
        for (lane, &Reverse((_, _, slot))) in lanes.iter_mut().zip(heads.iter()) {
            lane.slot = slot;
            if let Some(key) = self.load_lane(lane, &inputs[slot][0], until, buffer) {
                stop = stop.min(key);
            }
        }
        let epd = match policy {
            DropPolicy::Epd { threshold_cells } => threshold_cells,
            _ => u32::MAX,
        };
        let marks = match self.abr.on {
            true => self.abr_efci_threshold(p).unwrap_or(u32::MAX),
            false => u32::MAX,
        };
        let limits = Thresholds { room, epd, marks };
        let mut bound_until = self.sink_bound(p, &lanes[..k], end0, limits, 0, until);
        // The Lindley recursion over the merged arrivals.
        let (mut end, mut peak, mut taken, mut rms) = (end0, 0, 0u32, 0usize);
        loop {
            if let (2, Some(b)) = (k, bound_until) {
                // Cells no threshold can reach, from two inputs: in the
                // branch-free loop, up to the last cell of a segment.
                let last = stop.min(((b.0 as u128) + 1) << 32);
                taken += two_lanes(&mut lanes[..2], &mut end, cell, last);
            }
            let mut i = 0;
            for x in 1..k {
                if lanes[x].key < lanes[i].key {
                    i = x;
                }
            }
            let key = lanes[i].key;
            if key >= stop {
                break;
            }
            let a = SimTime((key >> 32) as u64);
            if lanes[i].rm {
                // As the general step: the circuit's data cells on first.
                let seg = inputs[lanes[i].slot][0];
                self.flush_piece(pieces, seg.circuit);
                self.ports[p].end = end;
                self.rm_arrives(a, seg.first, seg.stage as usize, seg.clp);
                end = self.ports[p].end;
                rms += 1;
                inputs[lanes[i].slot].pop_front();
                self.next_lane(&mut lanes[i], inputs, until, buffer, &mut stop);
                if steady_again(&lanes[..k]) {
                    break;
                }
                bound_until = self.sink_bound(p, &lanes[..k], end, limits, peak, until);
                continue;
            }
            let lane = &mut lanes[i];
            if bound_until.is_none_or(|b| a > b) {
                bound_until = None;
                let occ = port::occupancy(end, a, cell);
                if occ >= lane.room || (lane.idle && occ >= epd) {
                    break;
                }
                peak = peak.max(occ + 1);
                // As cell by cell, a cell marked upstream is not offered to EFCI here.
                if !lane.efci {
                    lane.last_marked = occ + 1 > marks;
                    lane.marked += lane.last_marked as u32;
                }
            } else {
                // Below EFCI's threshold: not marked.
                lane.last_marked = false;
            }
            lane.idle = false;
            end = a.max(end) + cell;
            taken += 1;
            lane.end = end;
            lane.n += 1;
            if lane.n < lane.left {
                lane.key += lane.step;
            } else {
                self.commit_lane(p, &mut lanes[i], inputs, pieces, delay, cell);
                self.next_lane(&mut lanes[i], inputs, until, buffer, &mut stop);
                if steady_again(&lanes[..k]) {
                    break;
                }
                bound_until = self.sink_bound(p, &lanes[..k], end, limits, peak, until);
            }
        }
        for lane in lanes[..k].iter_mut() {
            if lane.n > 0 {
                self.commit_lane(p, lane, inputs, pieces, delay, cell);
            }
        }
        if taken == 0 && rms == 0 {
            return 0;
        }
        self.ports[p].end = end;
        self.count_accepted(p, taken, peak);
        heads.clear();
        for lane in &lanes[..k] {
            if let Some(head) = inputs[lane.slot].front() {
                heads.push(Reverse((head.t0, head.circuit, lane.slot)));
            }
        }
        taken as usize + rms
    }

    /// The bound of `merge_sinks` from its next cell on, with the port's last
    /// departure at `end`: the last arrival up to which no cell can reach a
    /// threshold or the port's peak (so none needs its occupancy worked
    /// out), or None. It holds while every input stays in its current
    /// segment: the pass asks again whenever one moves on.
    #[allow(clippy::too_many_arguments)]
    fn sink_bound(
        &self,
        p: usize,
        lanes: &[Lane],
        end: SimTime,
        limits: Thresholds,
        peak: u32,
        until: SimTime,
    ) -> Option<SimTime> {
        let (mut rate, mut bound_until, mut next) = (0.0, until, u128::MAX);
        for lane in lanes {
            if lane.key == u128::MAX {
                continue;
            }
            if lane.rm || lane.left == 0 {
                return None;
            }
            rate += lane.rate;
            bound_until = bound_until.min(lane.last);
            next = next.min(lane.key);
        }
        let first = SimTime((next >> 32) as u64);
        if next == u128::MAX || bound_until < first {
            return None;
        }
        // Cells the inputs bring over the span beyond what the link clears,
        // rounded up with a cell to spare.
        let cell = self.ports[p].cell;
        let span = (bound_until.0 - first.0) as f64;
        let excess = span * rate - span / cell.0 as f64;
        let excess = if excess > 0.0 {
            (excess as u32).saturating_add(2)
        } else {
            0
        };
        // The occupancy at `first` must stay below `most` less the rest,
        // that is at most `room` cells' work: multiplied rather than the
        // occupancy divided out.
        let peak = peak.max(self.ports[p].counters.peak_occupancy);
        let most = limits.room.min(limits.epd).min(limits.marks).min(peak);
        let rest = (lanes.len() as u32)
            .saturating_add(excess)
            .saturating_add(1);
        let room = most.checked_sub(rest)?;
        let work = end.0.saturating_sub(first.0);
        (work <= room as u64 * cell.0).then_some(bound_until)
    }

    /// Takes `seg`, the head of its input, as `lane`'s segment; the key of
    /// its first cell when `merge_sinks` may not take it (nothing taken from
    /// the lane then, nor anything after it).
    fn load_lane(
        &self,
        lane: &mut Lane,
        seg: &Seg,
        until: SimTime,
        buffer: port::Buffer,
    ) -> Option<u128> {
        let key = (seg.t0.0 as u128) << 32 | seg.circuit as u128;
        let (step, rate) = (lane.step, lane.rate);
        *lane = Lane {
            slot: lane.slot,
            key,
            ..Lane::default()
        };
        if seg.t0 > until {
            lane.key = u128::MAX;
            return None;
        }
        if abr::is_rm(seg.pdu) {
            lane.rm = true;
            return None;
        }
        let circuit = &self.circuits[seg.circuit as usize];
        let stage = &circuit.stages[seg.stage as usize];
        lane.idle = match stage.vc {
            VcState::Idle => true,
            VcState::Accepting => false,
            VcState::Discarding | VcState::Refusing => return Some(key),
        };
        if stage.policer.is_some()
            || !matches!(stage.next, Next::Receiver)
            || self.logs(Place::Receiver(circuit.dst))
        {
            return Some(key);
        }
        lane.left = seg.count_upto(until);
        lane.step = (seg.step.0 as u128) << 32;
        lane.last = seg.last();
        // The next segment of an input is mostly at the step of the one
        // before (an ABR source's cells either side of an RM cell).
        lane.rate = match seg.count {
            1 => 0.0,
            _ if lane.step == step && rate > 0.0 => rate,
            _ => 1.0 / seg.step.0 as f64,
        };
        lane.room = buffer.limit(seg.clp);
        lane.efci = seg.efci;
        None
    }

    /// `lane`'s input goes on with its next segment, if any.
    fn next_lane(
        &self,
        lane: &mut Lane,
        inputs: &[VecDeque<Seg>],
        until: SimTime,
        buffer: port::Buffer,
        stop: &mut u128,
    ) {
        match inputs[lane.slot].front() {
            Some(seg) => {
                if let Some(key) = self.load_lane(lane, seg, until, buffer) {
                    *stop = (*stop).min(key);
                    lane.key = u128::MAX;
                }
            }
            None => {
                *lane = Lane {
                    slot: lane.slot,
                    ..Lane::default()
                }
            }
        }
    }

    /// The cells `merge_sinks` took from `lane`'s segment go on: ERICA's and
    /// EFCI's counts, the VC's state, the circuit's piece, the input's FIFO.
    fn commit_lane(
        &mut self,
        p: usize,
        lane: &mut Lane,
        inputs: &mut [VecDeque<Seg>],
        pieces: &mut Vec<Piece>,
        delay: SimTime,
        cell: SimTime,
    ) {
        let n = lane.n;
        let seg = inputs[lane.slot][0];
        let (c, st) = (seg.circuit as usize, seg.stage as usize);
        if self.abr.on {
            self.abr_cells_counted(p, c, seg.t0, seg.step, n, lane.marked);
        }
        let ends_pdu = seg.first + n == self.pdus[seg.pdu as usize].ncells;
        self.circuits[c].stages[st].vc = VcState::forwarded(ends_pdu);
        let efci = seg.efci || lane.last_marked;
        self.gather_sink(pieces, &seg, n, lane.end + delay, cell, efci);
        take_head(&mut inputs[lane.slot], n);
        lane.n = 0;
        lane.marked = 0;
    }

    /// The first `n` cells of `seg` leave the port for their receiver, the last
    /// arriving there at `last` with `efci` (the others at instants nobody
    /// reads: see `Piece::sink`): onto the circuit's piece if they continue
    /// it, else as a new piece (the old one pushed on).
    fn gather_sink(
        &mut self,
        pieces: &mut Vec<Piece>,
        seg: &Seg,
        n: u32,
        last: SimTime,
        cell: SimTime,
        efci: bool,
    ) {
        if let Some(i) = pieces.iter().position(|x| x.seg.circuit == seg.circuit) {
            let piece = &mut pieces[i];
            if piece.sink && piece.continues(seg) {
                piece.extend_irregular(n, last, efci);
                return;
            }
            let done = pieces.swap_remove(i);
            self.emit_piece(&done);
        }
        pieces.push(Piece {
            seg: Seg {
                count: n,
                t0: last,
                step: cell,
                efci,
                ..*seg
            },
            cell,
            last,
            sink: true,
            regular: n == 1,
        });
    }
}

/// Every input of a pass of `Network::merge_sinks` is a run of data cells at
/// one step: a steady period may take them whole (`Network::steady`), so the
/// pass ends there.
fn steady_again(lanes: &[Lane]) -> bool {
    let step = lanes[0].step;
    lanes
        .iter()
        .all(|l| !l.rm && l.key != u128::MAX && l.left >= 2 && l.step == step)
}

/// The occupancies from which `Network::merge_sinks` must look at a cell:
/// the buffer's room (the lower of the CLP limits), EPD's threshold, EFCI's.
#[derive(Copy, Clone, Debug)]
struct Thresholds {
    room: u32,
    epd: u32,
    marks: u32,
}

/// The Lindley recursion of `Network::merge_sinks` over two inputs whose
/// cells need no check (the bound holds up to key `last`), without a branch
/// on which input comes next: where the inputs run at different rates their
/// cells alternate irregularly, and a branch would guess wrong at every
/// other cell. It stops before the key `last` and before either input's last
/// cell of its segment (which the pass commits). Returns the cells taken.
fn two_lanes(lanes: &mut [Lane], end: &mut SimTime, cell: SimTime, last: u128) -> u32 {
    use std::hint::select_unpredictable as pick;
    let [a, b] = lanes else {
        unreachable!("two lanes");
    };
    // In arrival times rather than keys: the circuits' order, which breaks
    // ties, is fixed for the loop; so is each input's first arrival it may
    // not take (at `last`, or its segment's last cell).
    let circuit = |l: &Lane| l.key as u32;
    let time = |l: &Lane| match l.key {
        u128::MAX => u64::MAX,
        key => (key >> 32) as u64,
    };
    let limit = |l: &Lane| {
        if l.key == u128::MAX {
            return 0;
        }
        let own = time(l) + (l.step >> 32) as u64 * (l.left - 1 - l.n) as u64;
        let at_last = match last {
            u128::MAX => u64::MAX,
            _ => ((last >> 32) as u64).saturating_add((circuit(l) < last as u32) as u64),
        };
        own.min(at_last)
    };
    let b_first = circuit(b) < circuit(a);
    let (mut ta, mut tb) = (time(a), time(b));
    let (sa, sb) = ((a.step >> 32) as u64, (b.step >> 32) as u64);
    let (la, lb) = (limit(a), limit(b));
    let (mut ea, mut eb) = (a.end.0, b.end.0);
    let (mut t, mut taken, mut from_b) = (end.0, 0, 0);
    loop {
        let is_b = (tb < ta) | ((tb == ta) & b_first);
        let next = pick(is_b, tb, ta);
        if next >= pick(is_b, lb, la) {
            break;
        }
        t = next.max(t) + cell.0;
        ea = pick(is_b, ea, t);
        eb = pick(is_b, t, eb);
        ta += pick(is_b, 0, sa);
        tb += pick(is_b, sb, 0);
        from_b += is_b as u32;
        taken += 1;
    }
    for (l, n, tl, e) in [(&mut *a, taken - from_b, ta, ea), (&mut *b, from_b, tb, eb)] {
        if n > 0 {
            // Below EFCI's threshold: not marked (as `merge_sinks`).
            l.n += n;
            l.key = (tl as u128) << 32 | circuit(l) as u128;
            l.end = SimTime(e);
            l.idle = false;
            l.last_marked = false;
        }
    }
    *end = SimTime(t);
    taken
}

/// One input of `Network::merge_sinks`: its head segment and what the pass
/// has taken of it.
#[derive(Copy, Clone, Debug)]
struct Lane {
    slot: usize,
    /// Its next cell as (arrival, circuit) in one key; MAX: none to take.
    key: u128,
    /// The step between its cells, as a key.
    step: u128,
    /// Its cells per unit of time (zero for a lone cell), and its last
    /// arrival: `sink_bound`'s terms.
    rate: f64,
    last: SimTime,
    /// The head is an RM cell.
    rm: bool,
    /// Cells of the head segment the pass may take, and taken.
    left: u32,
    n: u32,
    /// The occupancy from which a cell finds no room (its CLP bit's).
    room: u32,
    /// The next cell starts a PDU (EPD's threshold applies).
    idle: bool,
    /// Marked EFCI upstream.
    efci: bool,
    /// Cells marked here, and whether the last taken was.
    marked: u32,
    last_marked: bool,
    /// When the last cell taken ends its transmission.
    end: SimTime,
}

impl Default for Lane {
    fn default() -> Lane {
        Lane {
            slot: 0,
            key: u128::MAX,
            step: 0,
            rate: 0.0,
            last: SimTime::ZERO,
            rm: false,
            left: 0,
            n: 0,
            room: 0,
            idle: false,
            efci: false,
            marked: 0,
            last_marked: false,
            end: SimTime::ZERO,
        }
    }
}

/// Cells of one circuit a port decided one by one (interleaved with other
/// inputs' cells, `Network::resolve`), gathered while their departures stay
/// regular and pushed on as one segment: when a cell does not fit, when the
/// circuit's next cell is decided otherwise, and when the resolve ends. Cells
/// of one circuit keep their order; those of different circuits may be pushed
/// in another order than they left, which is sound only where no two circuits
/// of the port go on to the same FIFO (`PortRt::gather`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Piece {
    /// The cells as they arrive at the next stage (`stage` is still this one's):
    /// `t0` and `step` hold while the piece is `regular`, `efci` is the last cell's.
    seg: Seg,
    /// The port's cell time: a lone cell's step, as when pushed on alone.
    cell: SimTime,
    /// When its last cell arrives at the next stage.
    last: SimTime,
    /// The circuit leaves this port for its receiver, which logs no cell: the
    /// receiver reads only when the PDU's last cell arrives and the last EFCI
    /// bit (`Network::reassemble`, `abr_data_received`), so the piece may go
    /// on gathering cells at any instants, one push for them all.
    sink: bool,
    /// Its cells arrive at `t0 + k·step` (a sink's may stop being so).
    regular: bool,
}

impl Piece {
    /// `seg`'s cells come next in the piece's PDU, with its CLP bit.
    fn continues(&self, seg: &Seg) -> bool {
        let b = &self.seg;
        b.pdu == seg.pdu && b.first + b.count == seg.first && b.clp == seg.clp
    }

    /// A sink's next `n` cells, the last arriving at `last` with `efci`, at
    /// instants that need not continue its regular ones.
    fn extend_irregular(&mut self, n: u32, last: SimTime, efci: bool) {
        self.regular = false;
        self.seg.count += n;
        self.seg.efci = efci;
        self.last = last;
    }
}

impl Network {
    /// Cell `idx` of `seg`'s PDU leaves the port, arriving next at `at` with `efci`:
    /// a run of one (`gather_run`).
    fn gather(
        &mut self,
        pieces: &mut Vec<Piece>,
        seg: &Seg,
        idx: u32,
        at: SimTime,
        cell: SimTime,
        efci: bool,
    ) {
        let one = Seg { first: idx, ..*seg };
        self.gather_run(pieces, &one, 1, at, cell, cell, efci);
    }

    /// The first `n` cells of `seg` leave the port, arriving next at
    /// `at + k·step` with `efci`: onto the circuit's piece if they continue it
    /// regularly, else as a new piece (the old one pushed on).
    // Inlined: `gather` calls it once per cell of a congested port, and as a call
    // it cost 7-10% on `cargo bench --bench net`'s cong-* cases (paired, 2 rounds).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn gather_run(
        &mut self,
        pieces: &mut Vec<Piece>,
        seg: &Seg,
        n: u32,
        at: SimTime,
        step: SimTime,
        cell: SimTime,
        efci: bool,
    ) {
        let last = at + step.times(n as u64 - 1);
        if let Some(i) = pieces.iter().position(|x| x.seg.circuit == seg.circuit) {
            let piece = &mut pieces[i];
            if piece.continues(seg) && at > piece.last {
                let b = &mut piece.seg;
                if piece.regular && b.efci == efci {
                    let gap = SimTime(at.0 - piece.last.0);
                    if (b.count == 1 || gap == b.step) && (n == 1 || gap == step) {
                        b.step = gap;
                        b.count += n;
                        piece.last = last;
                        return;
                    }
                }
                if piece.sink {
                    piece.extend_irregular(n, last, efci);
                    return;
                }
            }
            let done = pieces.swap_remove(i);
            self.emit_piece(&done);
        }
        let (c, stage) = (seg.circuit as usize, seg.stage as usize);
        let sink = matches!(self.circuits[c].stages[stage].next, Next::Receiver)
            && !self.logs(Place::Receiver(self.circuits[c].dst));
        new_piece(pieces, seg, n, at, step, cell, efci, sink);
    }
}

/// The first `n` cells of `seg` start a piece of their own (`Network::gather_run`),
/// `sink` when their circuit goes on to its receiver, which logs no cell.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn new_piece(
    pieces: &mut Vec<Piece>,
    seg: &Seg,
    n: u32,
    at: SimTime,
    step: SimTime,
    cell: SimTime,
    efci: bool,
    sink: bool,
) {
    pieces.push(Piece {
        seg: Seg {
            count: n,
            t0: at,
            step: if n == 1 { cell } else { step },
            efci,
            ..*seg
        },
        cell,
        last: at + step.times(n as u64 - 1),
        sink,
        regular: true,
    });
}

/// Every input's head is a run of data cells, all at one step, and no more
/// inputs than a steady period takes: `Network::steady`'s first condition,
/// checked before the call (most tries fail on it).
#[inline]
fn one_step(inputs: &[VecDeque<Seg>], heads: &BinaryHeap<Reverse<(SimTime, u32, usize)>>) -> bool {
    let mut step = None;
    heads.len() <= STEADY_INPUTS
        && heads.iter().all(|&Reverse((_, _, slot))| {
            inputs[slot]
                .front()
                .is_some_and(|seg| seg.is_run() && *step.get_or_insert(seg.step) == seg.step)
        })
}

/// The first `n` cells of a FIFO's head segment were decided: off the FIFO.
fn take_head(fifo: &mut VecDeque<Seg>, n: u32) {
    let head = &mut fifo[0];
    if n == head.count {
        fifo.pop_front();
    } else {
        head.first += n;
        head.t0 = head.time(n);
        head.count -= n;
    }
}

/// Appends `seg` to `back` (the next cells of the same PDU) if the arrivals stay
/// an arithmetic progression.
fn coalesce(back: &mut Seg, seg: &Seg) -> bool {
    if back.clp != seg.clp || back.efci != seg.efci {
        return false;
    }
    let Some(gap) = seg.t0.0.checked_sub(back.last().0) else {
        return false;
    };
    let step = if back.count == 1 { gap } else { back.step.0 };
    if gap != step || (seg.count > 1 && seg.step.0 != step) {
        return false;
    }
    back.step = SimTime(step);
    back.count += seg.count;
    true
}
