//! Credit-based hop-by-hop flow control (the DEC AN2 switch; docs/design.md §4).
//!
//! A port with flow control grants each VC `credits` cells of its buffer. The
//! element upstream of it on the VC's path (the source adapter, or the previous
//! switch's output port) may start a cell of that VC only while it holds a credit
//! for it; the port returns the credit when it forwards the cell (starts its
//! transmission), and the credit takes the link's propagation delay to get back.
//! So a VC never has more than `credits` cells in or on the way to the port, which
//! therefore never drops one: its admission accepts every cell that holds a credit
//! (its buffer is `credits` cells per VC, as AN2 reserved buffer per VC per hop).
//! A full blast VC goes at its link's rate when `credits` covers the hop's round
//! trip (`(cell time + 2 × delay) / cell time` cells), and is held upstream when the
//! port cannot forward it: back to the source adapter, which holds the PDUs in host
//! memory and refuses new ones when its interface queue is full.
//!
//! Credits are feedback from downstream, which the Train fidelity (every decision
//! made as soon as upstream is known) cannot take: a network with flow control runs
//! the per-cell reference, in which every sending element (adapter or port) is an
//! explicit FIFO of cells waiting to start. Its head leaves at the earliest instant
//! its link is free and it holds a credit for its next hop; a head waiting for a
//! credit holds the cells behind it (one FIFO per link: exact when one VC uses the
//! link, conservative when several do). A network without flow control never
//! comes here and runs exactly as before.

use super::abr::{self, RM_PDU};
use super::port::{self, Verdict};
use super::{Ev, Network, Place};
use crate::time::SimTime;
use std::collections::VecDeque;

/// A cell waiting to leave an element: it leaves stage `stage` of its circuit.
/// An ABR RM cell has `pdu` = [`RM_PDU`] and its RM slot in `cell` (`abr.rs`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Queued {
    pdu: u32,
    cell: u32,
    stage: u16,
    clp: bool,
    /// EFCI: a port on the way found congestion (ABR, `abr.rs`).
    efci: bool,
}

impl Queued {
    /// An RM cell in slot `rm`, leaving stage `stage`.
    fn rm(rm: u32, stage: usize, clp: bool) -> Queued {
        Queued {
            pdu: RM_PDU,
            cell: rm,
            stage: stage as u16,
            clp,
            efci: false,
        }
    }
}

/// One sending element's FIFO (credit mode).
#[derive(Clone, Debug, Default)]
pub(super) struct TxQueue {
    cells: VecDeque<Queued>,
    /// When the cell on the link ends its transmission.
    free: SimTime,
    /// A `Serve` event is scheduled for this time (None: none pending).
    serve_at: Option<SimTime>,
    /// Adapters: PDUs handed over whose last cell has not left yet.
    pub pdus_held: usize,
}

impl TxQueue {
    /// Cells held at `at`: those waiting, and the one on the link until its
    /// transmission ends (a port's occupancy).
    pub(super) fn occupancy(&self, at: SimTime) -> u32 {
        self.cells.len() as u32 + u32::from(self.free > at)
    }
}

/// A stage's credit state: the port of this stage grants its upstream element
/// `left` more cells of this VC; returned credits travel back for `delay`.
#[derive(Copy, Clone, Debug)]
pub(super) struct Credit {
    pub left: u32,
    pub delay: SimTime,
}

impl Network {
    /// The element index of a circuit's stage: its adapter for stage 0, else its port.
    fn element(&self, c: usize, stage: usize) -> usize {
        if stage == 0 {
            self.circuits[c].src
        } else {
            self.adapters.len() + self.circuits[c].stages[stage].port
        }
    }

    /// (cell time, delay) of an element's link.
    fn link(&self, e: usize) -> (SimTime, SimTime) {
        match e.checked_sub(self.adapters.len()) {
            None => (self.adapters[e].cell, self.adapters[e].delay),
            Some(p) => (self.ports[p].cell, self.ports[p].delay),
        }
    }

    /// Credit mode: an adapter's cell is due to start (its place in the PDU's schedule).
    pub(super) fn cell_ready(&mut self, now: SimTime, pdu: u32, cell: u32) {
        self.enqueue(pdu, cell..cell + 1);
        let e = self.element(self.pdus[pdu as usize].circuit as usize, 0);
        self.serve(e, now);
    }

    /// ABR: a PDU may start: all its cells join its adapter's FIFO.
    pub(super) fn pdu_ready(&mut self, now: SimTime, pdu: u32) {
        self.enqueue(pdu, 0..self.pdus[pdu as usize].ncells);
        let e = self.element(self.pdus[pdu as usize].circuit as usize, 0);
        self.serve(e, now);
    }

    /// Cells `cells` of `pdu` join its source adapter's FIFO.
    fn enqueue(&mut self, pdu: u32, cells: std::ops::Range<u32>) {
        let e = self.element(self.pdus[pdu as usize].circuit as usize, 0);
        let q = &mut self.txq[e].cells;
        q.extend(cells.map(|cell| Queued {
            pdu,
            cell,
            stage: 0,
            clp: false,
            efci: false,
        }));
    }

    /// ABR: RM cell `rm` of circuit `c` was accepted at `stage`'s port `p`
    /// (finding `occ` cells there, itself not counted) at `a`: it joins the
    /// port's FIFO behind the cells there.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rm_joins_fifo(
        &mut self,
        p: usize,
        a: SimTime,
        occ: u32,
        rm: u32,
        stage: usize,
        clp: bool,
    ) {
        let e = self.adapters.len() + p;
        let cell_time = self.ports[p].cell;
        let end = a.max(self.txq[e].free) + cell_time.times(occ as u64 + 1);
        self.sample_queue(p, a, occ + 1, end);
        self.txq[e].cells.push_back(Queued::rm(rm, stage, clp));
        self.serve(e, a);
    }

    /// Credit mode: a cell arrives at a port's stage (or the receiver past the last).
    pub(super) fn cell_arrives_credit(
        &mut self,
        a: SimTime,
        pdu: u32,
        cell: u32,
        stage: usize,
        clp: bool,
        efci: bool,
    ) {
        if abr::is_rm(pdu) {
            self.rm_arrives(a, cell, stage, clp);
            return;
        }
        if self.abr.on {
            let c = self.pdus[pdu as usize].circuit as usize;
            if stage == self.circuits[c].stages.len() {
                self.abr_data_received(c, efci);
            }
        }
        let Some((c, eom, p, clp)) = self.arrive_at_stage(a, pdu, cell, stage, clp) else {
            return;
        };
        let e = self.adapters.len() + p;
        let q = &self.txq[e];
        // The cells waiting, and the one on the link until its transmission ends.
        let occ = q.cells.len() as u32 + u32::from(q.free > a);
        let port = &self.ports[p];
        let (cell_time, buffer, policy) = (port.cell, port.buffer, port.policy);
        let credited = self.circuits[c].stages[stage].credit.is_some();
        let verdict = if credited {
            // The cell holds a credit: its place in the buffer was reserved.
            Verdict::Accept
        } else {
            let vc = &mut self.circuits[c].stages[stage].vc;
            port::offer(policy, buffer, vc, occ, eom, clp)
        };
        match verdict {
            Verdict::Accept => {
                self.count_accepted(p, 1, occ + 1);
                let end = a.max(self.txq[e].free) + cell_time.times(occ as u64 + 1);
                self.sample_queue(p, a, occ + 1, end);
                let efci = efci || self.abr_data_at_port(p, c, a, occ + 1);
                self.txq[e].cells.push_back(Queued {
                    pdu,
                    cell,
                    stage: stage as u16,
                    clp,
                    efci,
                });
                self.serve(e, a);
            }
            Verdict::Drop(cause) => {
                self.count_dropped(p, c, stage, pdu, cell, 1, a, cell_time, cause, clp)
            }
        }
    }

    /// A credit of a circuit's stage is back at its upstream element.
    pub(super) fn credit_returns(&mut self, now: SimTime, c: usize, stage: usize) {
        if let Some(cr) = &mut self.circuits[c].stages[stage].credit {
            cr.left += 1;
        }
        let e = self.element(c, stage - 1);
        self.serve(e, now);
    }

    /// The element's `Serve` event came.
    pub(super) fn serve_event(&mut self, now: SimTime, e: usize) {
        if self.txq[e].serve_at == Some(now) {
            self.txq[e].serve_at = None;
        }
        self.serve(e, now);
    }

    /// Serve an element (ABR: after a BRM moved a source's rate).
    pub(super) fn serve_element(&mut self, e: usize, now: SimTime) {
        self.serve(e, now);
    }

    /// Wake element `e` at `t` (unless an earlier wake is due).
    fn serve_at(&mut self, e: usize, t: SimTime) {
        let q = &mut self.txq[e];
        if q.serve_at.is_none_or(|u| u > t) {
            q.serve_at = Some(t);
            self.agenda.schedule(t, e as u32, Ev::Serve(e as u32));
        }
    }

    /// Start the element's head cell if its link is free and it holds a credit for
    /// its next hop; otherwise wait (for the link: an event; for a credit: its return).
    /// An ABR source's cell also waits for its rate, and may be preceded by an FRM.
    fn serve(&mut self, e: usize, now: SimTime) {
        let q = &mut self.txq[e];
        let Some(&head) = q.cells.front() else {
            return;
        };
        if q.free > now {
            let mut free = q.free;
            // An ABR source's next cell waits for its rate too: one wake for both.
            if head.stage == 0 && !abr::is_rm(head.pdu) {
                let c = self.pdus[head.pdu as usize].circuit as usize;
                free = free.max(self.abr.next_at(c));
            }
            self.serve_at(e, free);
            return;
        }
        if abr::is_rm(head.pdu) {
            self.send_rm(e, now, head);
            return;
        }
        let c = self.pdus[head.pdu as usize].circuit as usize;
        if head.stage == 0 && self.abr.is_source(c) {
            match self.abr_turn(c, now) {
                abr::Turn::Data => {}
                abr::Turn::Wait(t) => {
                    self.serve_at(e, t);
                    return;
                }
                abr::Turn::Frm { rm, clp } => {
                    self.send_rm(e, now, Queued::rm(rm, 0, clp));
                    return;
                }
            }
        }
        let (s, next) = (head.stage as usize, head.stage as usize + 1);
        if let Some(cr) = self.circuits[c]
            .stages
            .get_mut(next)
            .and_then(|st| st.credit.as_mut())
        {
            if cr.left == 0 {
                return;
            }
            cr.left -= 1;
        }
        let (cell_time, delay) = self.link(e);
        let q = &mut self.txq[e];
        q.cells.pop_front();
        q.free = now + cell_time;
        let eom = head.cell + 1 == self.pdus[head.pdu as usize].ncells;
        if s == 0 && eom {
            q.pdus_held -= 1;
        }
        let place = match s {
            0 => Place::Adapter(self.circuits[c].src),
            _ => Place::Port(self.circuits[c].stages[s].port),
        };
        if self.logs(place) {
            let p = self.circuits[c].stages[s].port;
            self.log_sent(p, c, s, head.pdu, head.cell, std::iter::once(now), head.clp);
        }
        let arrive = Ev::Cell {
            pdu: head.pdu,
            cell: head.cell,
            stage: next as u16,
            clp: head.clp,
            efci: head.efci,
        };
        self.agenda
            .schedule(now + cell_time + delay, c as u32, arrive);
        // Forwarding the cell frees its place here: the credit goes back upstream.
        if let Some(cr) = self.circuits[c].stages[s].credit {
            let back = Ev::Credit {
                circuit: c as u32,
                stage: s as u16,
            };
            self.agenda.schedule(now + cr.delay, c as u32, back);
        }
        if !self.txq[e].cells.is_empty() {
            self.serve(e, now);
        }
    }

    /// An RM cell starts on element `e`'s link at `now` (the link is free): it
    /// arrives at its next stage a cell time and the delay later. An FRM a
    /// source makes is sent here straight away, ahead of the head data cell.
    fn send_rm(&mut self, e: usize, now: SimTime, rm: Queued) {
        let (cell_time, delay) = self.link(e);
        let c = self.abr.rm_circuit(rm.cell);
        let s = rm.stage as usize;
        let q = &mut self.txq[e];
        if s > 0 {
            q.cells.pop_front();
        }
        q.free = now + cell_time;
        let place = match s {
            0 => Place::Adapter(self.circuits[c].src),
            _ => Place::Port(self.circuits[c].stages[s].port),
        };
        self.log_rm(place, now, c, s, rm.cell, rm.clp, super::CellFate::Sent);
        let arrive = Ev::Cell {
            pdu: RM_PDU,
            cell: rm.cell,
            stage: rm.stage + 1,
            clp: rm.clp,
            efci: false,
        };
        self.agenda
            .schedule(now + cell_time + delay, c as u32, arrive);
        let free = self.txq[e].free;
        if !self.txq[e].cells.is_empty() {
            self.serve_at(e, free);
        }
    }
}
