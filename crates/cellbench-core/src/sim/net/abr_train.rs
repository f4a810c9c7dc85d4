//! ABR sources in Train mode: the per-cell source of `abr.rs` run ahead of the
//! clock, its cells pushed into the train ports (`train.rs`) as trains.
//!
//! Why a source can run ahead. Between two backward RM cells (BRMs) the source
//! is a closed system: its head cell leaves at the earliest instant its link is
//! free and its rate allows (`Abr::turn`), the FRM every Nrm cells
//! included, whatever the network does meanwhile. Only a BRM reaching it moves
//! its ACR, and only new PDUs add cells (behind the ones already there, so they
//! move no earlier departure). So the source replays, without the agenda, the
//! exact sequence of calls the per-cell FIFO (`credit.rs`, `serve`) makes —
//! the PDUs' ready instants and its own wake-ups, each an `Abr::turn` at
//! that instant — up to a *horizon*: the earliest instant a BRM could be back.
//!
//! The horizon. BRMs come back in the order their FRMs went (the forward path
//! is FIFO, the way back is not queued, `abr.rs`). An FRM turned around at its
//! destination at `a` is back at exactly `a + Σ links` (each stage's cell time
//! and delay once, `abr.rs`'s `WayBack`); one not yet turned around is back no
//! earlier than `sent + RTT_min` (every forward hop's cell time and delay, and
//! the way back), nor than `now + (last link) + Σ links`
//! (an RM cell is decided at each port no later than its arrival there, so one
//! not yet at its destination arrives there after the last link's cell time
//! and delay from now); a lost one never. Since no BRM can pass an older one,
//! the horizon is the oldest FRM's bound (`Emitter::horizon`: the FRMs out are
//! kept in the order they went, and a lost one leaves the list when its port
//! decides it). The source replays every instant up
//! to that bound, inclusive: a BRM is handled after everything else
//! at its instant (`Ev::Brm` sorts last), in both fidelities. It needs no
//! wake-up at its horizon: the horizon moves only when a port decides the
//! oldest of its FRMs (on, turned around or lost; a younger one's move leaves
//! it where it was), which happens before the clock reaches the bound that FRM
//! sets, and the source is replayed right after (`Network::abr_moved`); a BRM
//! due at the horizon replays it itself.
//!
//! BRMs in the replay. Once an FRM is turned around, its BRM's return is
//! known exactly; when no port on the way back has a backward rule to apply
//! (or ERICA applied it ahead), nothing but the source handles it, so the
//! replay applies rules 8 and 9 itself when it reaches that instant, after
//! every other call there, and replays on, rather than waiting for an event
//! (`Back::Due`, `Network::abr_brm_in_replay`). It may do so only while the
//! FIFO holds a cell ready by then (`Emitter::brm_safe`): a PDU handed over
//! later joins behind that cell, so its call at its ready instant, before
//! the BRM per cell, finds another head and changes nothing; the replay
//! makes that call no earlier than the BRM. Otherwise the BRM comes back as an
//! event (`Ev::Brm`), as it does to a port with a backward rule. A replay that
//! stops at such a BRM because its head's next call lies past it applies it
//! there and goes on (`Emitter::brm_next`), without returning first.
//!
//! Runs held open. A source gathers the data cells it replays into one run
//! (`OpenRun`) until an FRM or a change of step ends it; a replay that stops
//! at the horizon inside a PDU keeps its run open rather than pushing it, since
//! a run pushed short of its PDU's end would cost its port a resolve event of
//! its own (`train.rs`, the sweep), about one per FRM. The run grows at the
//! next replay and is pushed by the next FRM or its PDU's last cell; a port
//! about to resolve takes first the cells of held runs that arrive by then
//! (`Network::abr_release`, the hook at the top of `train.rs`'s `resolve`),
//! so it decides every cell it would have decided had the run been pushed.
//!
//! What runs ahead. The source's own counters (FRMs sent, BRMs back that the
//! replay applied, and the ACR changes rules 5, 6, 8 and 9 make then) count
//! what it decided, up to one horizon ahead of the clock; everything the
//! network does (ports, deliveries, BRMs at ports) keeps to the clock. So the two fidelities agree at any instant on all but
//! those, and on everything once the source has caught up (a run that drains).
//!
//! What it needs. Each source adapter carries its ABR circuit alone (checked
//! when the network is built; otherwise the network runs the per-cell FIFOs):
//! another circuit's cells in the same FIFO would wait behind the ABR ones.

use super::abr::{self, RM_PDU};
use super::train::Seg;
use super::{CellFate, Ev, Network, Place};
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A PDU in an ABR source's FIFO.
#[derive(Copy, Clone, Debug)]
struct TxPdu {
    pdu: u32,
    ncells: u32,
    /// When its cells join the FIFO (the per-cell `ReadyPdu`).
    ready: SimTime,
    /// Its next cell to leave.
    next: u32,
}

/// Data cells gathered for one push: cells `first..first+count` of `pdu`,
/// leaving at `t0 + k·step`.
#[derive(Copy, Clone, Debug)]
struct OpenRun {
    pdu: u32,
    first: u32,
    count: u32,
    t0: SimTime,
    step: SimTime,
}

/// One ABR source in Train mode.
#[derive(Debug)]
pub(super) struct Emitter {
    /// The adapter (its cell time and delay are its link's).
    adapter: usize,
    queue: VecDeque<TxPdu>,
    /// End of the cell on the link.
    free: SimTime,
    /// The per-cell FIFO's calls still to make: (instant, is a `Serve` wake).
    wakes: BinaryHeap<Reverse<(SimTime, bool)>>,
    /// The earliest `Serve` wake pending (per-cell's `TxQueue::serve_at`).
    serve_at: Option<SimTime>,
    /// When the last cell left (the FIFO ran dry then if `queue` is empty).
    last_left: SimTime,
    /// FRMs out, in the order they went: (RM slot, the earliest it can be
    /// back, how sure that is).
    frms: VecDeque<(u32, SimTime, Back)>,
    /// Last-cell departures of PDUs that left ahead of the clock (the interface
    /// queue counts a PDU until its last cell leaves).
    left: VecDeque<SimTime>,
    run: Option<OpenRun>,
    /// An FRM of it moved since it was last replayed (`Network::abr_moved`).
    stale: bool,
    /// Its open run is held past a replay (`Network::abr_hold`), listed in
    /// `Abr::open`.
    held_open: bool,
    /// Σ each stage's link (cell time + delay), and the last link.
    back: SimTime,
    last_link: SimTime,
    /// The latest instant at which the replay applied a BRM itself
    /// (`Network::abr_brm_in_replay`): PDUs handed over later join the FIFO's
    /// calls no earlier (`abr_train_send`).
    brm_applied: SimTime,
}

/// How well an FRM's return to its source is known.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Back {
    /// Not turned around yet: back no earlier than the bound.
    Bound,
    /// Back exactly then, brought by an event (`Ev::Brm`).
    Exact,
    /// Back exactly then with nothing to do on the way: the source's replay
    /// applies it at its instant (`Network::abr_brm_in_replay`).
    Due,
}

impl Emitter {
    /// The source at `adapter` of a circuit whose BRMs take `back` from its
    /// destination home (`abr.rs`'s `WayBack`), its last link `last_link`.
    pub(super) fn new(adapter: usize, back: SimTime, last_link: SimTime) -> Emitter {
        Emitter {
            adapter,
            queue: VecDeque::new(),
            free: SimTime::ZERO,
            wakes: BinaryHeap::new(),
            serve_at: None,
            last_left: SimTime::ZERO,
            frms: VecDeque::new(),
            left: VecDeque::new(),
            run: None,
            stale: false,
            held_open: false,
            back,
            last_link,
            brm_applied: SimTime::ZERO,
        }
    }

    /// The earliest instant a BRM may reach the source, seen at `now`: the
    /// oldest FRM's bound, since BRMs come back in the order their FRMs went.
    fn horizon(&self, now: SimTime) -> SimTime {
        match self.frms.front() {
            Some(&(_, t, Back::Exact | Back::Due)) => t,
            Some(&(_, t, Back::Bound)) => t.max(now + self.last_link + self.back),
            None => SimTime::MAX,
        }
    }

    /// Whether the replay may apply a BRM due at `t` itself, every call up to
    /// `t` made: the FIFO holds a cell ready by then. PDUs handed over later
    /// then join behind it (the adapter hands them over in order), so
    /// nothing they bring can happen at or before `t`, where the per-cell
    /// FIFO would have met them before the BRM.
    fn brm_safe(&self, t: SimTime) -> bool {
        self.queue.front().is_some_and(|p| p.ready <= t)
    }

    /// Whether the replay may make the FIFO's call at `t` at once, rather
    /// than by a wake-up: `t` is when the link is free and ACR allows the next
    /// in-rate cell (`next_at`), so every call before it would find nothing to
    /// do, and nothing moves either before the horizon (`until`) but a BRM,
    /// which comes after every other call at its instant. Not below TCR
    /// (`next_at` ZERO: rule 11 times the cells then, `Abr::turn`).
    /// The calls pending before `t` (a PDU's, a wake-up set before ACR moved)
    /// are made on the way: each finds this head waiting for `t` (a PDU
    /// joins behind it), so it does nothing, and leaves the heap.
    fn call_now(&mut self, t: SimTime, next_at: SimTime, until: SimTime) -> bool {
        if next_at == SimTime::ZERO || t > until {
            return false;
        }
        self.drop_calls_before(t);
        true
    }

    /// The FIFO's pending calls before `t` leave the heap (each found nothing
    /// to do: `call_now`, `brm_next`).
    fn drop_calls_before(&mut self, t: SimTime) {
        while let Some(&Reverse((u, is_serve))) = self.wakes.peek() {
            if u >= t {
                break;
            }
            self.wakes.pop();
            if is_serve && self.serve_at == Some(u) {
                self.serve_at = None;
            }
        }
    }

    /// When the replay stops at the horizon `until` because the head's next
    /// call (`t`) lies beyond it, whether the BRM of the oldest FRM is due
    /// there for the replay to apply (`Back::Due`), and its instant. The
    /// head is ready by then (the call that left it waiting was made no later
    /// than `until`), so `brm_safe` holds; the calls pending up to `until`
    /// (wake-ups, PDUs' ready instants) would find this head waiting for
    /// `t`, so they leave the heap, as `abr_advance` would make them before
    /// the BRM.
    fn brm_next(&mut self, t: SimTime, until: SimTime) -> Option<SimTime> {
        match self.frms.front() {
            Some(&(_, b, Back::Due)) if b == until && t > until => {}
            _ => return None,
        }
        self.drop_calls_before(until + SimTime::from_ps(1));
        Some(until)
    }

    /// Data cells `j..j+n` of `pdu` arrive at the first port at `a + k·step`:
    /// gather them into the open run, or return the run they open once that
    /// one is pushed (`Network::abr_open`). The first cell may join the open
    /// run on its own (its gap from the run's last cell is the run's step,
    /// the step after it another one).
    fn gather(&mut self, pdu: u32, j: u32, n: u32, a: SimTime, step: SimTime) -> Option<OpenRun> {
        let mut rest = (j, n, a);
        if let Some(r) = &mut self.run {
            let last = r.t0 + r.step.times(r.count as u64 - 1);
            if r.pdu == pdu && r.first + r.count == j && a > last {
                let gap = SimTime(a.0 - last.0);
                if r.count == 1 {
                    r.step = gap;
                }
                if gap == r.step {
                    if n == 1 || step == gap {
                        r.count += n;
                        return None;
                    }
                    r.count += 1;
                    rest = (j + 1, n - 1, a + step);
                }
            }
        }
        let (first, count, t0) = rest;
        Some(OpenRun {
            pdu,
            first,
            count,
            t0,
            step,
        })
    }

    /// FRM `rm` among those out: its place (0: the oldest) and its entry.
    fn frm(&mut self, rm: u32) -> Option<(usize, &mut (u32, SimTime, Back))> {
        self.frms.iter_mut().enumerate().find(|(_, f)| f.0 == rm)
    }

    fn wake(&mut self, t: SimTime) {
        if self.serve_at.is_none_or(|u| u > t) {
            self.serve_at = Some(t);
            self.wakes.push(Reverse((t, true)));
        }
    }

    /// PDUs handed over and not all sent by `now` (`credit.rs`'s `pdus_held`).
    pub(super) fn held(&mut self, now: SimTime) -> usize {
        while self.left.front().is_some_and(|&t| t <= now) {
            self.left.pop_front();
        }
        self.queue.len() + self.left.len()
    }
}

impl Network {
    /// ABR circuit `c`'s source (Train mode).
    fn emitter(&mut self, c: usize) -> &mut Emitter {
        self.emitters[c]
            .as_mut()
            .expect("an ABR circuit in Train mode")
    }

    /// Circuit `c`'s source, if the network runs ABR in trains and `c` is ABR.
    pub(super) fn emitter_mut(&mut self, c: usize) -> Option<&mut Emitter> {
        self.emitters.get_mut(c).and_then(Option::as_mut)
    }

    /// Train: a PDU of ABR circuit `c` joins its source's FIFO at `ready`.
    pub(super) fn abr_train_send(&mut self, now: SimTime, c: usize, pdu: u32, ready: SimTime) {
        let ncells = self.pdus[pdu as usize].ncells;
        let em = self.emitter(c);
        let was_dry = em.queue.is_empty();
        em.queue.push_back(TxPdu {
            pdu,
            ncells,
            ready,
            next: 0,
        });
        if was_dry && ready < em.last_left {
            // The FIFO ran dry ahead of the clock, after `ready`: per cell, this
            // PDU was behind the last cell when it left, and the FIFO went on at
            // once (its call at `ready` met another head: nothing to do).
            let at = em.last_left;
            self.abr_serve(c, at);
        } else {
            // Before a BRM the replay applied, the FIFO held cells (`brm_safe`):
            // per cell, this call met another head (nothing to do).
            let at = ready.max(em.brm_applied);
            em.wakes.push(Reverse((at, false)));
        }
        self.abr_advance(c, now);
    }

    /// Train: PDUs of ABR circuit `c` held at its adapter at `now`.
    pub(super) fn abr_train_held(&mut self, c: usize, now: SimTime) -> usize {
        self.emitter(c).held(now)
    }

    /// Train: replay source `c` up to its horizon and push what left.
    pub(super) fn abr_advance(&mut self, c: usize, now: SimTime) {
        // This replay takes in every FRM that moved so far (`abr_catch_up`).
        self.emitter(c).stale = false;
        loop {
            let em = self.emitter(c);
            // Each FRM sent on the way brings the horizon nearer.
            let h = em.horizon(now);
            match em.wakes.peek() {
                Some(&Reverse((x, is_serve))) if x <= h => {
                    em.wakes.pop();
                    if is_serve && em.serve_at == Some(x) {
                        em.serve_at = None;
                    }
                    self.abr_serve(c, x);
                    continue;
                }
                _ => {}
            }
            // Every call up to the horizon made: a BRM due there comes last.
            match em.frms.front().copied() {
                Some((rm, t, Back::Due)) if em.brm_safe(t) => self.abr_brm_in_replay(c, rm, t),
                Some((rm, t, Back::Due)) => {
                    em.frms[0].2 = Back::Exact;
                    self.agenda
                        .schedule(t, abr::BRM_TIE, Ev::Brm { rm, stage: 0 });
                    break;
                }
                _ => break,
            }
        }
        self.abr_hold(c);
        self.drain();
        // No wake-up at the horizon: before the clock gets there, a port
        // decides the FRM that sets it (`abr_moved`), and the source is
        // replayed then; a BRM due at the horizon advances it itself
        // (`brm_at_source`).
    }

    /// The per-cell FIFO's `serve` at instant `x`, for an adapter holding
    /// ABR circuit `c` alone (`credit.rs`), and its calls after that while
    /// the replay may make them at once (`Emitter::call_now`). The loop holds
    /// the source's `Emitter` beside its `Abr` state (`Abr::turn`,
    /// `Abr::steady`), letting go of it only to push cells.
    pub(super) fn abr_serve(&mut self, c: usize, mut x: SimTime) {
        let now = self.now;
        let em = self.emitter(c);
        let adapter = em.adapter;
        // Within a call the horizon moves only when an FRM goes with none
        // out before it (`Emitter::horizon`).
        let mut until = em.horizon(now);
        let (cell, delay) = (self.adapters[adapter].cell, self.adapters[adapter].delay);
        let src = self.circuits[c].src;
        let logs = self.logs(Place::Adapter(src));
        loop {
            let em = self.emitters[c]
                .as_mut()
                .expect("an ABR circuit in Train mode");
            let Some(head) = em.queue.front().copied() else {
                return;
            };
            if head.ready > x {
                return;
            }
            // Nothing leaves before the link is free and ACR allows.
            let next_at = self.abr.next_at(c);
            let t = em.free.max(next_at);
            if t > x {
                if !em.call_now(t, next_at, until) {
                    if let Some(b) = em.brm_next(t, until) {
                        // The BRM due at the horizon comes next, as
                        // `abr_advance` would apply it, then the FIFO's call there.
                        let rm = em.frms[0].0;
                        self.abr_brm_apply(c, rm, b);
                        until = self.emitter(c).horizon(now);
                        x = b;
                        continue;
                    }
                    em.wake(t);
                    return;
                }
                x = t;
            }
            match self.abr.turn(c, x, cell) {
                abr::Turn::Data => {
                    // This cell, and the ones after it in its PDU that leave
                    // in step before anything can change (`Abr::steady`).
                    let rest = head.ncells - head.next - 1;
                    let (k, step) = self.abr.steady(c, x, cell, rest, until);
                    let last = x + step.times(k as u64);
                    em.free = last + cell;
                    em.last_left = last;
                    let front = em.queue.front_mut().expect("the head is there");
                    let j = front.next;
                    front.next += 1 + k;
                    if front.next == front.ncells {
                        em.queue.pop_front();
                        em.left.push_back(last);
                    }
                    if let Some(rest) = em.gather(head.pdu, j, 1 + k, x + cell + delay, step) {
                        self.abr_open(c, rest);
                    }
                    if logs {
                        let starts = (0..=k).map(|i| x + step.times(i as u64));
                        self.log_sent(0, c, 0, head.pdu, j, starts, false);
                    }
                }
                abr::Turn::Wait(t) => {
                    em.wake(t);
                    return;
                }
                abr::Turn::Frm { rm, clp } => {
                    em.free = x + cell;
                    // Forward and back, each link's cell time and delay once each way.
                    let soonest = x + em.back + em.back;
                    em.frms.push_back((rm, soonest, Back::Bound));
                    until = em.horizon(now);
                    let run = em.run.take();
                    let a = x + cell + delay;
                    self.abr_push_frm(c, run, (x, a), rm, clp, cell);
                }
            }
        }
    }

    /// Source `c`'s data cells that `Emitter::gather` could not add to its
    /// open run: push that run, and open one with them.
    fn abr_open(&mut self, c: usize, run: OpenRun) {
        self.abr_flush(c);
        self.emitter(c).run = Some(run);
    }

    /// Source `c`'s FRM `rm`, sent at `x` and arriving at `a`, and its open
    /// run `run` before it, pushed: into its first port in one push
    /// (`Network::emit_frm`), or to the receiver one after the other.
    fn abr_push_frm(
        &mut self,
        c: usize,
        run: Option<OpenRun>,
        (x, a): (SimTime, SimTime),
        rm: u32,
        clp: bool,
        cell: SimTime,
    ) {
        let src = Place::Adapter(self.circuits[c].src);
        let super::Next::Port { port, slot } = self.circuits[c].stages[0].next else {
            if let Some(r) = run {
                self.emit(c, 0, r.pdu, r.first, r.count, r.t0, r.step, false, false);
            }
            self.log_rm(src, x, c, 0, rm, clp, CellFate::Sent);
            return self.emit(c, 0, RM_PDU, rm, 1, a, cell, clp, false);
        };
        self.log_rm(src, x, c, 0, rm, clp, CellFate::Sent);
        let run = run.map(|r| {
            let seg = Seg {
                pdu: r.pdu,
                circuit: c as u32,
                stage: 1,
                first: r.first,
                count: r.count,
                t0: r.t0,
                step: r.step,
                clp: false,
                efci: false,
            };
            (seg, r.first + r.count == self.pdus[r.pdu as usize].ncells)
        });
        self.emit_frm(port, slot, c, run, rm, a, cell, clp);
    }

    /// Push the open run of source `c` into its first port.
    fn abr_flush(&mut self, c: usize) {
        if let Some(r) = self.emitter(c).run.take() {
            self.emit(c, 0, r.pdu, r.first, r.count, r.t0, r.step, false, false);
        }
    }

    /// At the end of a replay, keep source `c`'s open run open when it may
    /// grow: its PDU's last cell is not in it and it goes to a port. Pushed,
    /// a run that stops short of its PDU's end costs the port a resolve event
    /// of its own (`train.rs`, the sweep); held, it grows on at the next
    /// replay, up to the next FRM or the PDU's end, which push it. The port
    /// takes what it needs of it before it resolves (`abr_release`).
    fn abr_hold(&mut self, c: usize) {
        let Some(r) = self.emitter(c).run else {
            return;
        };
        if r.first + r.count == self.pdus[r.pdu as usize].ncells {
            return self.abr_flush(c);
        }
        // Held already (it goes to a port): listed there.
        if self.emitter(c).held_open {
            return;
        }
        let super::Next::Port { port, .. } = self.circuits[c].stages[0].next else {
            return self.abr_flush(c);
        };
        self.emitter(c).held_open = true;
        self.abr.open[port].push(c as u32);
    }

    /// Port `p` is about to decide its cells arriving up to `horizon`: the held
    /// runs (`abr_hold`) into it push their cells arriving by then. The hook
    /// `train.rs` calls before each resolve.
    #[inline]
    pub(super) fn abr_release(&mut self, p: usize, horizon: SimTime) {
        if self.abr.open.get(p).is_some_and(|l| !l.is_empty()) {
            self.abr_release_held(p, horizon);
        }
    }

    /// The walk of `abr_release`: only port `p`'s list (`Abr::open` is kept
    /// per port, so a resolve does not pass every other port's held runs).
    /// The order the runs are pushed in does not matter: each source's cells
    /// come by an input link of their own (its adapter carries its circuit
    /// alone), and a port's heads are keyed by (arrival, circuit).
    fn abr_release_held(&mut self, p: usize, horizon: SimTime) {
        // The list stays in place (no take and put back): pushing cells
        // changes no port's list.
        let mut i = 0;
        while let Some(&c) = self.abr.open[p].get(i) {
            let c = c as usize;
            let em = self.emitter(c);
            let Some(r) = em.run else {
                // Pushed since (a replay grew it to an FRM or its PDU's end).
                em.held_open = false;
                self.abr.open[p].swap_remove(i);
                continue;
            };
            if r.t0 > horizon {
                i += 1;
                continue;
            }
            let m = if r.count == 1 || horizon >= r.t0 + r.step.times(r.count as u64 - 1) {
                r.count
            } else {
                ((horizon.0 - r.t0.0) / r.step.0 + 1) as u32
            };
            if m == r.count {
                em.run = None;
                em.held_open = false;
                self.abr.open[p].swap_remove(i);
            } else {
                em.run = Some(OpenRun {
                    first: r.first + m,
                    t0: r.t0 + r.step.times(m as u64),
                    count: r.count - m,
                    ..r
                });
                i += 1;
            }
            let (pdu, first, t0, step) = (r.pdu, r.first, r.t0, r.step);
            self.emit(c, 0, pdu, first, m, t0, step, false, false);
        }
    }

    /// Train: replay, at `now`, the sources whose FRMs moved since (called after
    /// each event and wherever ports are resolved outside one).
    pub(super) fn abr_catch_up(&mut self, now: SimTime) {
        while let Some(c) = self.abr_stale.pop() {
            // Not if replayed since (a BRM's own replay, say).
            if self.emitter(c as usize).stale {
                self.abr_advance(c as usize, now);
            }
        }
    }

    /// An FRM of circuit `c` was decided at a port (it went on, was turned
    /// around or lost): when it is the oldest out (`oldest`), the source's
    /// horizon moved, so it is replayed after the event at hand
    /// (`abr_catch_up`). This stands in for a wake-up at the horizon: an FRM
    /// not yet turned around is decided at its next port no later than its
    /// arrival there, which is before the earliest instant it could be back
    /// (the horizon's bound for it), so the source always replays past an
    /// instant before the clock reaches it. A younger FRM's move leaves the
    /// horizon where it was (BRMs come back in order: `Emitter::horizon`): the
    /// replay reads it when it is the oldest.
    fn abr_moved(&mut self, c: usize, oldest: bool) {
        let push = match self.emitter_mut(c) {
            Some(em) if oldest => !std::mem::replace(&mut em.stale, true),
            _ => false,
        };
        if push {
            self.abr_stale.push(c as u32);
        }
    }

    /// Train: an FRM of circuit `c` was turned around; its BRM is back at
    /// `at`, applied by the source's replay when `due` (nothing to do on the
    /// way: `abr_brm_in_replay`), else brought by an event. False when the
    /// circuit has no source in trains.
    pub(super) fn abr_train_turned(&mut self, c: usize, rm: u32, at: SimTime, due: bool) -> bool {
        let back = if due { Back::Due } else { Back::Exact };
        self.abr_train_back_at(c, rm, at, back)
    }

    /// Train: the BRM of circuit `c`'s FRM `rm` is back at its source at `at`
    /// with nothing to do on the way: the source's replay applies it
    /// (`abr_brm_in_replay`) rather than an event, when it may (`brm_safe`).
    /// False when the circuit has no source in trains.
    pub(super) fn abr_train_brm_due(&mut self, c: usize, rm: u32, at: SimTime) -> bool {
        self.abr_train_back_at(c, rm, at, Back::Due)
    }

    /// Train: the BRM of circuit `c`'s FRM `rm` is back at `at`, as `back` says.
    #[inline]
    fn abr_train_back_at(&mut self, c: usize, rm: u32, at: SimTime, back: Back) -> bool {
        let Some(em) = self.emitter_mut(c) else {
            return false;
        };
        let Some((i, f)) = em.frm(rm) else {
            return false;
        };
        *f = (rm, at, back);
        self.abr_moved(c, i == 0);
        true
    }

    /// The replay of source `c` reached the instant `t` of FRM `rm`'s BRM,
    /// every other call at `t` made: rules 8 and 9 as the event would
    /// (`brm_at_source`), then the FIFO's call at `t`.
    fn abr_brm_in_replay(&mut self, c: usize, rm: u32, t: SimTime) {
        self.abr_brm_apply(c, rm, t);
        self.abr_serve(c, t);
    }

    /// Rules 8 and 9 for the BRM of source `c`'s oldest FRM `rm`, applied by
    /// the replay at its instant `t` (`abr_brm_in_replay`, and `abr_serve` when
    /// its replay reaches it).
    fn abr_brm_apply(&mut self, c: usize, rm: u32, t: SimTime) {
        let em = self.emitter(c);
        em.frms.pop_front();
        em.brm_applied = t;
        self.brm_rules(t, rm, c);
    }

    /// Train: an FRM of circuit `c` left a port: it cannot be back before
    /// `bound` (its arrival at the next stage, the rest of the way out and
    /// the way back: `abr.rs`, `WayBack`).
    pub(super) fn abr_train_progress(&mut self, c: usize, rm: u32, bound: SimTime) {
        let Some(em) = self.emitter_mut(c) else {
            return;
        };
        let Some((i, f)) = em.frm(rm) else {
            return;
        };
        f.1 = f.1.max(bound);
        self.abr_moved(c, i == 0);
    }

    /// Train: an FRM of circuit `c` is gone (lost, or back at the source).
    pub(super) fn abr_train_frm_gone(&mut self, c: usize, rm: u32) {
        let Some(em) = self.emitter_mut(c) else {
            return;
        };
        let Some(i) = em.frms.iter().position(|f| f.0 == rm) else {
            return;
        };
        em.frms.remove(i);
        self.abr_moved(c, i == 0);
    }
}
