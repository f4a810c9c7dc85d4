//! The cell network: host adapters (SAR), links, switch output ports.
//!
//! CONTRACT (used by the host/TCP side; the implementation behind it is free):
//! the network is sans-IO. Hosts hand it whole AAL5 CPCS-PDUs; it decides per
//! cell what happens on every queue and link, and hands back the PDUs that
//! reassembled intact at the far adapter.
//!
//! ```text
//!  host ─send()─▶ adapter ══access link══▶ port ══link══▶ port ══link══▶ adapter ─poll()─▶ host
//!                 (SAR, ifq, spacing,     (policer, output               (reassembly)
//!                  pacing, PDU gap)        buffer, drop policy)
//! ```
//!
//! # Conventions (both fidelities obey every one of them)
//!
//! - **Cells.** A PDU whose CPCS payload is `payload_len` bytes is
//!   `ceil((payload_len + 8) / 48)` cells ([`aal5_cells`]); its last cell carries
//!   the AUU (end-of-message) bit.
//! - **Cell time.** A link of rate R carries a cell in `C = R.time_for_bits(424)`
//!   picoseconds, rounded down (as [`crate::atm::phy::Phy::cell_time`]); every cell
//!   on that link takes exactly `C` (on OC-3c that overstates the rate by < 3·10⁻⁷).
//! - **Link timing.** A cell whose transmission starts at `s` on a link with cell
//!   time `C` and propagation delay `d` is fully received at the far end at
//!   `s + C + d`: that is its *arrival* at the next port or adapter.
//! - **Adapter (transmit).** PDUs are segmented one at a time in FIFO order. A
//!   PDU handed over at `now` starts at the latest of `now`, the end of the
//!   previous PDU's last cell + `pdu_gap`, and what the spacing mode (or the
//!   circuit's pacing) asks of the previous PDU on the same footing; its cells
//!   start at the offsets of its [`TxSpacing`] mode (back to back, a peak cell
//!   rate, cell-level spacing with the 1 KB host-buffer stalls, cell bursts) or
//!   of its circuit's [`VcPacing`]. `adapter.rs` gives every rule exactly. The
//!   interface queue holds the PDUs that have not started yet (the PDU being
//!   segmented is not counted); a PDU handed over when `tx_queue_pdus` PDUs are
//!   waiting is dropped and counted.
//! - **Policing** (UPC/NPC, `upc.rs`). A [`PolicerSpec`] at a port matches the
//!   cells that arrive there with its VPI (a VP) or VPI/VCI (a VC), labelled as
//!   on the link they arrive by. Each is checked by the contract's GCRA at its
//!   arrival, in the port's arrival order (ties as below), before the output
//!   buffer: a discarded cell is lost (cause `Policing`) and never reaches the
//!   buffer or its drop policy; a tagged one goes on with CLP = 1 (carried,
//!   logged, and refused first by ports with a CLP-1 threshold, below). At most
//!   one policer per circuit per port.
//! - **VP cross-connects.** A [`VpCrossConnect`] marks an output VPI of a port
//!   as one VP switched whole: its circuits keep their VCI there and all come
//!   from one incoming VP (checked). Cells are still switched per circuit; the
//!   mark changes no fate, it makes the labels and VP policing right.
//! - **Switch output port.** Output-buffered FIFO served at one cell per `C`. The
//!   *occupancy* counts every accepted cell from its arrival until the end of its
//!   transmission (the cell on the wire counts; a cell whose transmission ends
//!   exactly when another arrives has left). A cell is accepted iff the occupancy
//!   just before it is `< buffer_cells` (for a CLP = 1 cell at a port with
//!   `clp1_threshold_cells = Some(t)`: `< t`; one refused below `buffer_cells`
//!   is lost with cause `Clp`, CLP-selective discard); it starts transmission at
//!   `max(arrival, end of the previous accepted cell)`. There is no switching
//!   latency: a cell arrives in the output buffer when it is fully received.
//! - **Ties.** Cells arriving at one port at the same instant (from different
//!   input links) are taken in increasing [`CircuitId`]; two cells of one circuit
//!   never tie (links are serial). Deliveries at the same instant are pushed in
//!   increasing `CircuitId`.
//! - **Drop policies** (per port, state per VC, the PDU boundary being the AUU
//!   bit of the last cell the port *saw* on that VC):
//!   - tail drop: drop a cell iff the buffer is full (or, CLP = 1, at the threshold);
//!   - PPD: once a cell of a PDU is dropped (a CLP drop included), drop the rest
//!     of it on that VC except its last cell, which is kept if there is room for
//!     it (for its CLP), so the reassembler resyncs;
//!   - EPD(threshold): a PDU whose first cell finds occupancy `>= threshold` is
//!     refused whole, its last cell included; otherwise as PPD.
//!   - VPI/VCI are translated per hop; they are logged, they never decide a fate.
//! - **Reassembly.** A PDU is delivered iff all its cells arrived *and* the
//!   reassembler was in sync when its first cell came: if an earlier PDU on the
//!   VC lost its last cell after some of its cells arrived, the real AAL5
//!   reassembler glues that remainder to the next PDU, whose CRC then fails, so
//!   that next PDU is lost too. Delivery time = arrival of the last cell.
//! - **Time** never goes backwards: `send(now)`/`poll(now)` with a `now` earlier
//!   than one already seen is treated as that later time.
//!
//! # Fidelities
//!
//! [`Fidelity::PerCell`] is the reference: one event per cell per queue, a port
//! being a literal FIFO of departure times. [`Fidelity::Train`] moves a PDU's cells
//! as trains `(first arrival, interval, count)` and resolves a port's cells in
//! closed form (see `train.rs` for why this is exact); it gives the same
//! departure time and fate for every cell, and the same deliveries.
//!
//! # Files
//!
//! `spec.rs` is the [`Topology`] a network is built from, `error.rs` why one is
//! refused, `counters.rs` what a network counts and logs; `topology.rs` checks a
//! topology and wires it into the runtime tables; `adapter.rs`, `port.rs`,
//! `upc.rs`, `credit.rs` and `abr.rs` are the mechanisms, `train.rs` and
//! `percell.rs` the two fidelities (`abr_train.rs` ABR's sources in trains);
//! `ether.rs` the frame links (Ethernet segments) beside the
//! cells, `ifq.rs` the interface queue an adapter and an Ethernet interface
//! share; this file is the runtime they share and the [`Network`] API.

use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

mod abr;
mod abr_train;
mod adapter;
mod counters;
mod credit;
mod error;
pub mod ether;
mod ifq;
mod percell;
mod port;
mod spec;
mod topology;
mod train;
mod upc;
mod waste;

pub use abr::{
    AbrPort, AbrPortCounters, AbrSource, AbrSourceCounters, AbrSwitch, MAX_NRM, MIN_NRM,
};
pub use adapter::{
    AdapterModel, AdapterTiming, SpacingError, SpacingMode, CELL_SPACING_UNIT, HOST_BUFFER_BYTES,
};

pub use counters::{
    CellFate, CellLoss, CellRecord, CircuitCounters, LossCause, Place, PolicerCounters,
    PortCounters,
};
pub use error::TopologyError;
pub use spec::{
    AdapterSpec, CircuitId, CircuitSpec, DropPolicy, Element, Fidelity, FlowControl, Hop, HostId,
    PacedQuantity, PolicerSpec, PortSpec, Topology, TxSpacing, VcPacing, VpCrossConnect,
};

use port::VcState;
use train::Seg;

/// A PDU that arrived intact at its destination host's adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// When the last cell was reassembled (the adapter hands the PDU to the host then).
    pub at: SimTime,
    pub host: HostId,
    pub circuit: CircuitId,
    /// The caller's token given to [`Network::send`].
    pub token: u64,
}

/// Cells of an AAL5 CPCS-PDU carrying `payload_len` bytes (payload + 8-byte
/// trailer, padded to 48): the wire layer's count.
pub fn aal5_cells(payload_len: u32) -> u32 {
    crate::wire::aal5::cells_for(payload_len as usize) as u32
}

/// Which cells the cell log keeps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum LogScope {
    Off,
    /// Every cell at every place.
    All,
    /// The cells one place handles (a tap: a port's sent and lost cells, an
    /// adapter's sent ones).
    Place(Place),
}

// ---------------------------------------------------------------------------
// Runtime state (shared by both fidelities).

struct AdapterRt {
    cell: SimTime,
    delay: SimTime,
    tx: TxSpacing,
    gap: SimTime,
    /// The interface queue: accepted PDUs that have not started yet.
    ifq: ifq::Ifq,
    /// Earliest start of the next PDU: its last cell plus the gap (see `adapter.rs`).
    free_at: SimTime,
    /// Earliest start of the next unpaced PDU that the spacing mode allows.
    spacing_free: SimTime,
}

/// One port's occupancy samples, and the end of its last accepted cell.
#[derive(Default)]
struct QueueSeries {
    samples: Vec<(SimTime, u32)>,
    end: SimTime,
}

struct PortRt {
    cell: SimTime,
    delay: SimTime,
    buffer: port::Buffer,
    policy: DropPolicy,
    counters: PortCounters,
    /// Train: end of transmission of the last accepted cell.
    end: SimTime,
    /// PerCell: end times of the cells in the buffer, oldest first.
    ends: VecDeque<SimTime>,
    /// Train: pending cells, one FIFO per input link (static source).
    inputs: Vec<VecDeque<Seg>>,
    /// Train: the head of every non-empty input FIFO by (arrival, circuit,
    /// input): a merge step finds the next two inputs without scanning all.
    heads: BinaryHeap<Reverse<(SimTime, u32, usize)>>,
    /// Train: upstream ports and their lookahead (cell time + delay of their link).
    upstream: Vec<(usize, SimTime)>,
    /// Train: one input link only, so every pushed cell can be resolved at once.
    eager: bool,
    /// Train: every cell arriving at or before this time has been resolved.
    pulled_until: SimTime,
    /// Train: the latest resolve event scheduled.
    max_scheduled: SimTime,
    /// Train: a resolve at this time is wanted for cells pushed without an end of PDU.
    sweep_at: SimTime,
    dirty: bool,
    in_sweep: bool,
    /// Train: no two circuits through this port go on to the same FIFO (each
    /// leaves for its receiver or a port of its own), so a cell decided alone
    /// may leave in a piece gathered per circuit (`train.rs`, `Piece`).
    gather: bool,
    /// Train: merge steps before `merge_sinks` is tried again, and the
    /// backoff that set them (kept across resolves, `train.rs`).
    sink_steps: u32,
    sink_backoff: u32,
}

#[derive(Copy, Clone)]
enum Next {
    Port { port: usize, slot: usize },
    Receiver,
}

/// One place a circuit's cells leave from: stage 0 is the source adapter,
/// stage h (1..=hops) the h-th port.
struct StageRt {
    /// The port of this stage (stages >= 1).
    port: usize,
    next: Next,
    /// Label on the link the stage transmits on.
    vpi: u16,
    vci: u16,
    /// Drop-policy state of this VC at this port.
    vc: VcState,
    /// Serial + 1 of the last PDU counted damaged here (0: none).
    last_damaged: u64,
    /// The policer that checks the cells arriving at this stage's port.
    policer: Option<u32>,
    /// The credits this stage's port (with flow control) grants its upstream element.
    credit: Option<credit::Credit>,
}

struct CircuitRt {
    src: HostId,
    dst: HostId,
    stages: Vec<StageRt>,
    /// Reassembler: cells have arrived since the last end-of-message cell.
    rx_open: bool,
    /// Reassembler: serial + 1 of the PDU whose cells arrive now.
    rx_cur: u64,
    counters: CircuitCounters,
    /// Per-VC pacing, and the earliest start it allows the next PDU.
    pace: Option<VcPacing>,
    pace_free: SimTime,
}

/// A PDU in flight.
struct PduRec {
    circuit: u32,
    token: u64,
    serial: u64,
    ncells: u32,
    /// CPCS payload bytes (for the cell log).
    payload_len: u32,
    /// Cells neither received nor dropped yet.
    outstanding: u32,
    lost: u32,
    contaminated: bool,
    eom_at: Option<SimTime>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Train: resolve a multi-input port up to the event's time.
    Resolve(u32),
    /// Hand a PDU to its destination host.
    Deliver(u32),
    /// PerCell: a cell arrives at a stage's port (or the receiver when `stage` = stages).
    Cell {
        pdu: u32,
        cell: u32,
        stage: u16,
        clp: bool,
        /// ABR: EFCI set by a port on the way (`abr.rs`).
        efci: bool,
    },
    /// ABR: a backward RM cell reaches a stage on its way back (`abr.rs`).
    Brm { rm: u32, stage: u16 },
    /// Credit mode: an adapter's cell is due to start.
    Ready { pdu: u32, cell: u32 },
    /// ABR: a PDU of an ABR circuit is due to start; its cells join the adapter's
    /// FIFO at once and leave at ACR (`abr.rs`).
    ReadyPdu(u32),
    /// Credit mode: an element's link is free again.
    Serve(u32),
    /// Credit mode: a credit of a circuit's stage is back upstream.
    Credit { circuit: u32, stage: u16 },
}

/// The network's events, keyed (time, circuit or port, insertion): the second key
/// gives the documented tie order for cells meeting at a port.
#[derive(Default)]
struct Agenda {
    heap: BinaryHeap<Reverse<(SimTime, u32, u64, Ev)>>,
    seq: u64,
}

impl Agenda {
    fn schedule(&mut self, at: SimTime, tie: u32, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, tie, self.seq, ev)));
    }
    fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.0)
    }
    fn pop(&mut self) -> Option<(SimTime, Ev)> {
        self.heap.pop().map(|Reverse(e)| (e.0, e.3))
    }
}

/// The network of adapters, links and switch ports (sans-IO).
pub struct Network {
    fidelity: Fidelity,
    adapters: Vec<AdapterRt>,
    ports: Vec<PortRt>,
    circuits: Vec<CircuitRt>,
    policers: Vec<upc::PolicerRt>,
    pdus: Vec<PduRec>,
    free_pdus: Vec<u32>,
    next_serial: u64,
    agenda: Agenda,
    now: SimTime,
    events: u64,
    log_scope: LogScope,
    log: Vec<CellRecord>,
    /// Per port, its occupancy over time (see [`Network::set_queue_series`]); None: off.
    queue_series: Option<Vec<QueueSeries>>,
    /// Train: eager ports with pushed, unresolved cells.
    dirty: Vec<usize>,
    /// Train: ports whose `sweep_at` may need an event.
    sweep: Vec<usize>,
    /// Credit mode (some port has flow control): per adapter, then per port, the
    /// cells waiting to leave (`credit.rs`); empty otherwise.
    txq: Vec<credit::TxQueue>,
    /// Scratch: the runs of the PDU being placed on an access link.
    tx_runs: Vec<adapter::TxRun>,
    /// Scratch: the host buffer offsets `send` assumes.
    kb_buffers: Vec<u32>,
    /// Ethernet segments and the circuits framed on them (`ether.rs`).
    frames: ether::Frames,
    /// Per PDU in flight, the cells dropped at each stage (`waste.rs`).
    stage_drops: waste::StageDrops,
    /// ABR sources and switch behaviours (`abr.rs`); empty without ABR.
    abr: abr::Abr,
    /// ABR in Train mode: per circuit, its source run ahead of the clock (None:
    /// not ABR); empty when the network runs the per-cell FIFOs (`abr_train.rs`).
    emitters: Vec<Option<abr_train::Emitter>>,
    /// ABR in Train mode: sources whose FRMs moved, to replay (`abr_train.rs`).
    abr_stale: Vec<u32>,
    /// Train: the pieces `resolve` is gathering (kept for its allocation).
    pieces: Vec<train::Piece>,
    /// Credit mode: ports are explicit FIFOs too (`credit.rs`). Without credits an
    /// ABR network runs in trains (`abr_train.rs`), or when it cannot keeps FIFOs
    /// at its adapters only and its ports run `percell.rs`.
    port_fifos: bool,
}

impl Network {
    /// Checks the topology and builds an idle network.
    pub fn new(topology: Topology, fidelity: Fidelity) -> Result<Network, TopologyError> {
        topology::build(topology, fidelity)
    }

    /// A host hands one AAL5 CPCS-PDU whose CPCS payload is `payload_len` bytes
    /// (IP datagram + encapsulation header) to its adapter at `now`, gathered
    /// from 1 KB host buffers (see [`Network::send_gathered`]). Returns false
    /// if the interface queue was full (PDU dropped, counted) or the circuit
    /// does not exist.
    pub fn send(&mut self, now: SimTime, circuit: CircuitId, payload_len: u32, token: u64) -> bool {
        let mut buffers = std::mem::take(&mut self.kb_buffers);
        adapter::kilobyte_buffers(payload_len, &mut buffers);
        let sent = self.send_gathered(now, circuit, payload_len, &buffers, token);
        self.kb_buffers = buffers;
        sent
    }

    /// As [`Network::send`], for a PDU the adapter gathers from host buffers
    /// (mbufs): `buffers` are the CPCS payload offsets (ascending) where a 1 KB
    /// cluster mbuf ends and the next buffer begins; with cell-level spacing
    /// and its stall on, the adapter stalls at each (see `adapter.rs`).
    pub fn send_gathered(
        &mut self,
        now: SimTime,
        circuit: CircuitId,
        payload_len: u32,
        buffers: &[u32],
        token: u64,
    ) -> bool {
        let now = self.advance(now);
        let Some(c) = self.circuits.get(circuit) else {
            return false;
        };
        if let Some(segment) = self.frames.segment_of(circuit) {
            return self.send_frame(now, circuit, segment, payload_len, token);
        }
        let (src, pace, pace_free) = (c.src, c.pace, c.pace_free);
        if self.ifq_full(now, circuit) {
            self.circuits[circuit].counters.adapter_queue_drops += 1;
            return false;
        }
        let ad = &mut self.adapters[src];
        let ncells = aal5_cells(payload_len);
        let mut runs = std::mem::take(&mut self.tx_runs);
        let paced = pace.map(|p| (p.cell_interval(ncells, payload_len, ad.cell), pace_free));
        let (start, next) = ad.place(now, ncells, buffers, paced, &mut runs);
        ad.ifq.accepted(now, start);
        let hop = ad.cell + ad.delay;

        let c = &mut self.circuits[circuit];
        if pace.is_some() {
            c.pace_free = next;
        }
        c.counters.pdus_sent += 1;
        c.counters.cells_sent += ncells as u64;
        let (vpi, vci) = (c.stages[0].vpi, c.stages[0].vci);
        let pdu = self.alloc_pdu(circuit, token, ncells, payload_len);
        // Credit mode logs an adapter's cells when they really leave (credit.rs),
        // and so does an ABR source (abr_train.rs).
        let abr_train = self.emitter_mut(circuit).is_some();
        if self.txq.is_empty() && !abr_train && self.logs(Place::Adapter(src)) {
            let serial = self.pdus[pdu as usize].serial;
            for r in &runs {
                for k in 0..r.count {
                    self.log.push(CellRecord {
                        place: Place::Adapter(src),
                        at: start + r.offset + r.step.times(k as u64),
                        circuit,
                        token,
                        cell: r.first + k,
                        pdu: serial,
                        pdu_len: payload_len,
                        vpi,
                        vci,
                        clp: false,
                        fate: CellFate::Sent,
                        rm: None,
                    });
                }
            }
        }
        match self.fidelity {
            Fidelity::Train if abr_train => {
                // ACR, not the adapter's spacing, shapes an ABR circuit: its
                // cells are ready together when the PDU may start.
                let at = start + runs.first().map_or(SimTime::ZERO, |r| r.offset);
                self.tx_runs = runs;
                self.abr_train_send(now, circuit, pdu, at);
                return true;
            }
            Fidelity::Train => {
                for r in &runs {
                    let t0 = start + r.offset + hop;
                    self.emit(circuit, 0, pdu, r.first, r.count, t0, r.step, false, false);
                }
                self.drain();
            }
            Fidelity::PerCell if !self.txq.is_empty() => {
                self.txq[src].pdus_held += 1;
                if self.abr.is_source(circuit) {
                    // ACR, not the adapter's spacing, shapes an ABR circuit: its
                    // cells are ready together when the PDU may start.
                    let at = start + runs.first().map_or(SimTime::ZERO, |r| r.offset);
                    self.agenda.schedule(at, circuit as u32, Ev::ReadyPdu(pdu));
                    self.tx_runs = runs;
                    return true;
                }
                for r in &runs {
                    for k in 0..r.count {
                        let at = start + r.offset + r.step.times(k as u64);
                        let ev = Ev::Ready {
                            pdu,
                            cell: r.first + k,
                        };
                        self.agenda.schedule(at, circuit as u32, ev);
                    }
                }
            }
            Fidelity::PerCell => {
                for r in &runs {
                    for k in 0..r.count {
                        let at = start + r.offset + r.step.times(k as u64) + hop;
                        let ev = Ev::Cell {
                            pdu,
                            cell: r.first + k,
                            stage: 1,
                            clp: false,
                            efci: false,
                        };
                        self.agenda.schedule(at, circuit as u32, ev);
                    }
                }
            }
        }
        self.tx_runs = runs;
        true
    }

    /// Whether the interface queue of circuit `circuit`'s adapter is full at `now`:
    /// a PDU handed over then on that circuit would be dropped (`send` says false).
    /// A host that holds its packets back instead (a Linux driver stops its
    /// transmit queue, `netif_stop_queue`, when the adapter has no room) asks this
    /// before handing one over (the emulator, `emu`). False for a circuit that is
    /// not, or not on cells.
    pub fn interface_queue_full(&mut self, now: SimTime, circuit: CircuitId) -> bool {
        // Not `advance`: a look moves no clock (`poll` replays ABR sources from it).
        let now = now.max(self.now);
        self.circuits.get(circuit).is_some()
            && self.frames.segment_of(circuit).is_none()
            && self.ifq_full(now, circuit)
    }

    /// When the PDU at the head of circuit `circuit`'s adapter's interface queue
    /// starts on the link, leaving the queue: the queue has room again then, if it
    /// was full of its own PDUs. None when none waits; PDUs held back by missing
    /// credits or an ABR source's rate leave at the network's events instead.
    pub fn interface_queue_head_starts(&self, circuit: CircuitId) -> Option<SimTime> {
        let c = self.circuits.get(circuit)?;
        self.adapters[c.src].ifq.next_start()
    }

    /// The one rule for a full interface queue (`ifq.rs`), at `now` (advanced).
    fn ifq_full(&mut self, now: SimTime, circuit: CircuitId) -> bool {
        let src = self.circuits[circuit].src;
        // Credit mode: PDUs held back by missing credits wait in the interface
        // queue too; so do an ABR source's, held to its rate.
        let held = if self.emitter_mut(circuit).is_some() {
            self.abr_train_held(circuit, now).saturating_sub(1)
        } else {
            self.txq
                .get(src)
                .map_or(0, |q| q.pdus_held.saturating_sub(1))
        };
        self.adapters[src].ifq.full(now, held)
    }

    /// The time of the next internal event, if any.
    pub fn poll_at(&self) -> Option<SimTime> {
        self.agenda.peek_time()
    }

    /// Processes all internal events with time <= now; pushes the PDUs that
    /// reassembled intact, in time order (ties in circuit order).
    pub fn poll(&mut self, now: SimTime, delivered: &mut Vec<Delivery>) {
        let before = self.now;
        self.abr_catch_up(before);
        let now = self.advance(now);
        let first = delivered.len();
        while self.agenda.peek_time().is_some_and(|t| t <= now) {
            let Some((at, ev)) = self.agenda.pop() else {
                break;
            };
            self.events += 1;
            match ev {
                Ev::Deliver(pdu) => self.deliver(pdu, delivered),
                Ev::Resolve(port) => {
                    self.pull(port as usize, at);
                    self.drain();
                }
                Ev::Cell {
                    pdu,
                    cell,
                    stage,
                    clp,
                    efci,
                } if self.port_fifos => {
                    self.cell_arrives_credit(at, pdu, cell, stage as usize, clp, efci)
                }
                Ev::Cell {
                    pdu,
                    cell,
                    stage,
                    clp,
                    efci,
                } => self.cell_arrives(at, pdu, cell, stage as usize, clp, efci),
                Ev::ReadyPdu(pdu) => self.pdu_ready(at, pdu),
                Ev::Brm { rm, stage } => self.brm_at(at, rm, stage as usize),
                Ev::Ready { pdu, cell } => self.cell_ready(at, pdu, cell),
                Ev::Serve(e) => self.serve_event(at, e as usize),
                Ev::Credit { circuit, stage } => {
                    self.credit_returns(at, circuit as usize, stage as usize)
                }
            }
            self.abr_catch_up(at);
        }
        self.abr_ahead_due(now);
        delivered[first..].sort_by_key(|d| (d.at, d.circuit));
    }

    /// Counters of a port (all zero for a port that does not exist).
    pub fn port_counters(&self, port: usize) -> PortCounters {
        self.ports.get(port).map(|p| p.counters).unwrap_or_default()
    }

    /// Counters of a circuit (all zero for a circuit that does not exist).
    pub fn circuit_counters(&self, c: CircuitId) -> CircuitCounters {
        self.circuits.get(c).map(|c| c.counters).unwrap_or_default()
    }

    /// Counters of a policer (all zero for a policer that does not exist).
    pub fn policer_counters(&self, policer: usize) -> PolicerCounters {
        self.policers
            .get(policer)
            .map(|p| p.counters)
            .unwrap_or_default()
    }

    /// Internal events handled so far.
    pub fn events_processed(&self) -> u64 {
        self.events
    }

    /// When on, record every cell at every place (for equivalence tests; costly).
    pub fn set_cell_log(&mut self, on: bool) {
        self.log_scope = if on { LogScope::All } else { LogScope::Off };
    }

    /// A tap on one switch output port: record only the cells it handles (sent
    /// or lost there), as [`Network::set_cell_log`] records them. A port's
    /// records come in the order the port decides its cells; the caller takes
    /// them as they come ([`Network::drain_cell_log`]), e.g. into a pcap file.
    pub fn set_port_tap(&mut self, port: usize) {
        self.set_tap(Place::Port(port));
    }

    /// A tap on one place: a switch output port (as [`Network::set_port_tap`])
    /// or a source adapter (every cell it starts on its access link, at the
    /// time it starts). What an ATM tester on that link sees, one record per
    /// cell, drained as they come.
    pub fn set_tap(&mut self, place: Place) {
        self.log_scope = LogScope::Place(place);
    }

    /// Decide every cell that arrives anywhere by `t`, as if the run went on to
    /// then: events up to `t`, and in Train every port resolved up to `t` (a
    /// port with several inputs decides its cells up to one PDU late, see
    /// `train.rs`). What a cell log needs at a run's end to hold every cell that
    /// started by then in both fidelities; the counters then count those cells.
    pub fn settle(&mut self, t: SimTime) {
        let mut delivered = Vec::new();
        self.poll(t, &mut delivered);
        if self.fidelity == Fidelity::Train && self.txq.is_empty() {
            for p in 0..self.ports.len() {
                self.pull(p, t);
            }
            self.drain();
            self.abr_catch_up(t);
        }
    }

    /// The cell time of the link a place transmits on (a port's, or an
    /// adapter's access link); None for a place that does not exist or a
    /// receiver (which transmits nothing).
    pub fn link_cell_time(&self, place: Place) -> Option<SimTime> {
        match place {
            Place::Adapter(h) => self.adapters.get(h).map(|a| a.cell),
            Place::Port(p) => self.ports.get(p).map(|p| p.cell),
            Place::Receiver(_) => None,
        }
    }

    /// The cell records taken while the log was on. Their order differs between
    /// fidelities; sort them to compare.
    pub fn cell_log(&self) -> &[CellRecord] {
        &self.log
    }

    /// Move the cell records taken so far to the end of `out` (a long-running
    /// tap keeps only what its caller has not taken yet).
    pub fn drain_cell_log(&mut self, out: &mut Vec<CellRecord>) {
        out.append(&mut self.log);
    }

    /// Whether the cell log keeps the records of a place.
    #[inline]
    fn logs(&self, place: Place) -> bool {
        match self.log_scope {
            LogScope::Off => false,
            LogScope::All => true,
            LogScope::Place(p) => place == p,
        }
    }

    /// When on, record each port's occupancy over time: `(t, cells)` just
    /// after accepted arrivals, and `(t, 0)` when the buffer empties. It reads
    /// what admission computes anyway and never changes a cell's fate or time.
    ///
    /// Resolution. PerCell: every accepted cell, and every emptying. Train: the
    /// first and the last arrival of each run of cells a port accepts together
    /// (the occupancy is monotone over a run, `port::Run`, so these are its
    /// extremes), every cell decided on its own, and the emptying seen at the
    /// next run's arrival; so a Train series is a subset of the PerCell one
    /// with the same peaks. Drops leave the occupancy as it was: not sampled.
    pub fn set_queue_series(&mut self, on: bool) {
        self.queue_series = on.then(|| {
            (0..self.ports.len())
                .map(|_| QueueSeries::default())
                .collect()
        });
    }

    /// A port's occupancy samples up to `until`, in time order (empty when the
    /// series is off), closed by the buffer's emptying if that came by then.
    /// Train decides cells ahead of time; cut at the run's end, both fidelities
    /// have seen the same arrivals.
    pub fn queue_series(&self, port: usize, until: SimTime) -> Vec<(SimTime, u32)> {
        let Some(q) = self.queue_series.as_ref().and_then(|q| q.get(port)) else {
            return Vec::new();
        };
        let mut v: Vec<(SimTime, u32)> = q
            .samples
            .iter()
            .take_while(|x| x.0 <= until)
            .copied()
            .collect();
        if v.len() == q.samples.len() && q.end <= until && v.last().is_some_and(|x| x.1 > 0) {
            v.push((q.end, 0));
        }
        v
    }

    pub fn fidelity(&self) -> Fidelity {
        self.fidelity
    }

    fn advance(&mut self, now: SimTime) -> SimTime {
        self.now = self.now.max(now);
        self.now
    }

    fn alloc_pdu(&mut self, circuit: CircuitId, token: u64, ncells: u32, payload_len: u32) -> u32 {
        self.next_serial += 1;
        let rec = PduRec {
            circuit: circuit as u32,
            token,
            serial: self.next_serial,
            ncells,
            payload_len,
            outstanding: ncells,
            lost: 0,
            contaminated: false,
            eom_at: None,
        };
        let i = match self.free_pdus.pop() {
            Some(i) => {
                self.pdus[i as usize] = rec;
                i
            }
            None => {
                self.pdus.push(rec);
                (self.pdus.len() - 1) as u32
            }
        };
        self.waste_reset(i);
        i
    }

    /// `n` cells of a PDU were received or dropped; once none is left the PDU's
    /// fate is known: schedule its delivery or count it lost.
    fn cells_done(&mut self, pdu: u32, n: u32, lost: bool) {
        let rec = &mut self.pdus[pdu as usize];
        rec.outstanding -= n;
        if lost {
            rec.lost += n;
            self.circuits[rec.circuit as usize].counters.cells_lost += n as u64;
        }
        if rec.outstanding > 0 {
            return;
        }
        let circuit = rec.circuit as usize;
        match rec.eom_at {
            Some(at) if rec.lost == 0 && !rec.contaminated => {
                // The last cell is always resolved before it arrives, so `at` is
                // never in the past (see train.rs); max() only guards the agenda.
                debug_assert!(at >= self.now);
                self.agenda
                    .schedule(at.max(self.now), circuit as u32, Ev::Deliver(pdu));
            }
            _ => {
                self.circuits[circuit].counters.pdus_lost += 1;
                self.waste_fate(pdu, false);
                self.free_pdus.push(pdu);
            }
        }
    }

    fn deliver(&mut self, pdu: u32, delivered: &mut Vec<Delivery>) {
        self.waste_fate(pdu, true);
        let rec = &self.pdus[pdu as usize];
        let c = &mut self.circuits[rec.circuit as usize];
        c.counters.pdus_delivered += 1;
        delivered.push(Delivery {
            at: rec.eom_at.unwrap_or(self.now),
            host: c.dst,
            circuit: rec.circuit as usize,
            token: rec.token,
        });
        self.free_pdus.push(pdu);
    }

    /// Cells `first..first+count` of a PDU reach the destination adapter, the k-th
    /// at `t0 + k·step`, in order on their VC.
    #[allow(clippy::too_many_arguments)]
    fn reassemble(
        &mut self,
        circuit: usize,
        pdu: u32,
        first: u32,
        count: u32,
        t0: SimTime,
        step: SimTime,
        clp: bool,
    ) {
        if self.logs(Place::Receiver(self.circuits[circuit].dst)) {
            let rec = &self.pdus[pdu as usize];
            let c = &self.circuits[circuit];
            let s = c.stages.last().expect("a circuit has a stage 0");
            for k in 0..count {
                self.log.push(CellRecord {
                    place: Place::Receiver(c.dst),
                    at: t0 + step.times(k as u64),
                    circuit,
                    token: rec.token,
                    cell: first + k,
                    pdu: rec.serial,
                    pdu_len: rec.payload_len,
                    vpi: s.vpi,
                    vci: s.vci,
                    clp,
                    fate: CellFate::Received,
                    rm: None,
                });
            }
        }
        self.reassembled(
            circuit,
            pdu,
            first,
            count,
            t0 + step.times(count as u64 - 1),
        );
    }

    /// Cells `first..first+count` of a PDU reach the receiver, the last of them
    /// at `last`: the reassembler's part of `reassemble`, for cells the
    /// receiver does not log.
    fn reassembled(&mut self, circuit: usize, pdu: u32, first: u32, count: u32, last: SimTime) {
        let rec = &mut self.pdus[pdu as usize];
        let c = &mut self.circuits[circuit];
        if c.rx_cur != rec.serial + 1 {
            // First cell of this PDU: a remainder left open by a predecessor that
            // lost its last cell is glued to it, and the CRC fails.
            if c.rx_open {
                rec.contaminated = true;
            }
            c.rx_cur = rec.serial + 1;
        }
        c.rx_open = true;
        if first + count == rec.ncells {
            c.rx_open = false;
            rec.eom_at = Some(last);
        }
        self.cells_done(pdu, count, false);
    }

    /// Queue series: a port accepted a cell arriving at `a`, after which it
    /// holds `occ` cells and its last accepted cell ends at `end`.
    #[inline]
    fn sample_queue(&mut self, port: usize, a: SimTime, occ: u32, end: SimTime) {
        if let Some(series) = &mut self.queue_series {
            let q = &mut series[port];
            if q.end <= a && q.samples.last().is_some_and(|&(_, o)| o > 0) {
                // The buffer emptied when its last cell went, before this arrival.
                q.samples.push((q.end, 0));
            }
            q.samples.push((a, occ));
            q.end = end;
        }
    }

    /// A port accepted a cell that found `occ_before` cells in the buffer.
    fn count_accepted(&mut self, port: usize, n: u32, peak: u32) {
        let c = &mut self.ports[port].counters;
        c.cells_in += n as u64;
        c.cells_out += n as u64;
        c.peak_occupancy = c.peak_occupancy.max(peak);
    }

    /// A port dropped cells `first..first+n` of a PDU, which arrived at `t0 + k·step`.
    #[allow(clippy::too_many_arguments)]
    fn count_dropped(
        &mut self,
        port: usize,
        circuit: usize,
        stage: usize,
        pdu: u32,
        first: u32,
        n: u32,
        t0: SimTime,
        step: SimTime,
        cause: LossCause,
        clp: bool,
    ) {
        let (serial, token, pdu_len) = {
            let r = &self.pdus[pdu as usize];
            (r.serial, r.token, r.payload_len)
        };
        let log = self.logs(Place::Port(port));
        let pc = &mut self.ports[port].counters;
        pc.cells_in += n as u64;
        pc.cells_lost.add(cause, n as u64);
        self.circuits[circuit]
            .counters
            .lost_by_cause
            .add(cause, n as u64);
        let st = &mut self.circuits[circuit].stages[stage];
        if st.last_damaged != serial + 1 {
            st.last_damaged = serial + 1;
            pc.pdus_damaged += 1;
        }
        if log {
            let (vpi, vci) = (st.vpi, st.vci);
            for k in 0..n {
                self.log.push(CellRecord {
                    place: Place::Port(port),
                    at: t0 + step.times(k as u64),
                    circuit,
                    token,
                    cell: first + k,
                    pdu: serial,
                    pdu_len,
                    vpi,
                    vci,
                    clp,
                    fate: CellFate::Lost(cause),
                    rm: None,
                });
            }
        }
        self.waste_dropped(pdu, stage, n);
        self.cells_done(pdu, n, true);
    }

    /// Log cells `first..` of a PDU starting transmission at a port (stage 0: its
    /// source adapter, credit mode) at the given times.
    #[allow(clippy::too_many_arguments)]
    fn log_sent(
        &mut self,
        port: usize,
        circuit: usize,
        stage: usize,
        pdu: u32,
        first: u32,
        starts: impl Iterator<Item = SimTime>,
        clp: bool,
    ) {
        let r = &self.pdus[pdu as usize];
        let (token, serial, pdu_len) = (r.token, r.serial, r.payload_len);
        let st = &self.circuits[circuit].stages[stage];
        let (vpi, vci) = (st.vpi, st.vci);
        for (k, at) in starts.enumerate() {
            self.log.push(CellRecord {
                place: if stage == 0 {
                    Place::Adapter(self.circuits[circuit].src)
                } else {
                    Place::Port(port)
                },
                at,
                circuit,
                token,
                cell: first + k as u32,
                pdu: serial,
                pdu_len,
                vpi,
                vci,
                clp,
                fate: CellFate::Sent,
                rm: None,
            });
        }
    }
}
