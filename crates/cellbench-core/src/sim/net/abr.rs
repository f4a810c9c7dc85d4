//! ABR: the ATM Forum's rate-based flow control (Traffic Management 4.0,
//! af-tm-0056.000, 1996, §5.10), beside the credits of `credit.rs`.
//!
//! A source sends a circuit's cells at its allowed cell rate (ACR), between MCR
//! and PCR, starting from ICR, and puts a forward RM cell (FRM, `wire::rm`) on
//! the VC every Nrm cells (or after Trm). The destination turns each FRM around
//! as a backward RM cell (BRM), setting CI if the last data cell it received had
//! EFCI set. Switch ports on the way feed back: EFCI marking of data cells above
//! a queue threshold, relative-rate marking (CI/NI in BRMs), or an explicit rate
//! (ERICA). The source reads each BRM and moves ACR (source rules 8 and 9).
//!
//! How the model runs. The per-cell reference runs an ABR network on explicit
//! FIFOs (`credit.rs`): the adapter's head cell of an ABR circuit leaves only at
//! its ACR's next slot (a waiting head holds the cells behind it, as for a
//! credit). In Train mode each source replays that FIFO ahead of the clock, as
//! far as no BRM can come back, and the ports decide its cells in trains
//! (`abr_train.rs`), cell-exact against the reference. FRMs are real cells: they take a slot on every link and a place in
//! every buffer (tail drop when it is full), and they appear in cell logs and
//! captures with their payload. BRMs travel back hop by hop, taking at each hop
//! the forward link's cell time and propagation delay, and are not queued: an
//! *assumption* (the reverse circuit's queues are not modelled for them; TM 4.0
//! leaves the reverse path's scheduling to the network, and the BRM's lower
//! bound on the feedback delay is the path's round trip) that makes feedback as
//! fast as the path allows. Each port on the way applies its backward rule at
//! the instant the BRM passes, with its state then (in Train, ERICA at the
//! port where every ABR circuit ends may apply it as the FRM turns around, when
//! that state cannot change before the instant: `Network::erica_ahead`).

use super::{CellFate, CellRecord, CircuitId, Ev, Network, Place};
use crate::time::{SimTime, PS_PER_SEC};
use crate::wire::rm::{Rate, RmCell};
use std::collections::VecDeque;

/// Mrm: the fewest in-rate cells between FRMs the time rule allows (TM 4.0
/// §5.10.4 rule 3a(i) fixes it at 2).
pub const MRM: u32 = 2;
/// TCR, the tagged cell rate: out-of-rate FRMs go at most this often, so a
/// source whose ACR has fallen near zero still hears from the network (TM 4.0
/// §5.10.4 rule 11; §5.10.2 fixes TCR at 10 cells/s).
pub const TCR_CELLS_PER_SEC: f64 = 10.0;

/// One ABR circuit's source parameters (TM 4.0 §5.10.2, the ABR parameters
/// signalled at setup). Rates in cells/s.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AbrSource {
    pub circuit: CircuitId,
    /// Peak cell rate.
    pub pcr: f64,
    /// Minimum cell rate (default 0, TM 4.0 §5.10.2).
    pub mcr: f64,
    /// Initial cell rate (default PCR, TM 4.0 §5.10.2).
    pub icr: f64,
    /// Rate increase factor (default 1/16, TM 4.0 §5.10.2).
    pub rif: f64,
    /// Rate decrease factor (default 1/16, TM 4.0 §5.10.2).
    pub rdf: f64,
    /// Cells per FRM (default 32, TM 4.0 §5.10.2).
    pub nrm: u32,
    /// Upper bound on the time between FRMs (default 100 ms, TM 4.0 §5.10.2).
    pub trm: SimTime,
    /// ACR decision time factor, use-it-or-lose-it (default 0.5 s, TM 4.0 §5.10.2).
    pub adtf: SimTime,
    /// Cutoff decrease factor for missing BRMs (default 1/16, TM 4.0 §5.10.2).
    pub cdf: f64,
    /// FRMs without a BRM before rule 6 cuts ACR: TM 4.0 derives Crm from TBE
    /// (Crm = ceil(TBE/Nrm)); with its default TBE of 16,777,215 cells that is
    /// 524,288 for Nrm = 32, i.e. practically off.
    pub crm: u32,
}

/// The cells per forward RM cell a source may send (Nrm): TM 4.0 §5.10.2 gives
/// 2 to 256 (default 32).
pub const MIN_NRM: u32 = 2;
pub const MAX_NRM: u32 = 256;

impl AbrSource {
    /// The TM 4.0 defaults (§5.10.2) for a circuit with this PCR.
    pub fn new(circuit: CircuitId, pcr: f64) -> AbrSource {
        AbrSource {
            circuit,
            pcr,
            mcr: 0.0,
            icr: pcr,
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            nrm: 32,
            trm: SimTime::from_ms(100),
            adtf: SimTime::from_ms(500),
            cdf: 1.0 / 16.0,
            crm: 16_777_215u32.div_ceil(32),
        }
    }

    /// Why the parameters cannot run, if they cannot.
    pub fn check(&self) -> Result<(), &'static str> {
        let rate_ok = |r: f64| r.is_finite() && r >= 0.0;
        if !(rate_ok(self.pcr) && self.pcr >= 1.0) {
            return Err("PCR must be at least 1 cell/s");
        }
        if !(rate_ok(self.mcr) && self.mcr <= self.pcr) {
            return Err("MCR must be between 0 and PCR");
        }
        if !(rate_ok(self.icr) && self.icr >= self.mcr && self.icr <= self.pcr && self.icr > 0.0) {
            return Err("ICR must be above 0, between MCR and PCR");
        }
        let factor_ok = |f: f64| f.is_finite() && f > 0.0 && f <= 1.0;
        if !(factor_ok(self.rif) && factor_ok(self.rdf) && factor_ok(self.cdf)) {
            return Err("RIF, RDF and CDF must be in (0, 1]");
        }
        if !(MIN_NRM..=MAX_NRM).contains(&self.nrm) || self.crm == 0 {
            return Err("Nrm must be 2 to 256 and Crm at least 1");
        }
        Ok(())
    }
}

/// What a switch port does for ABR (TM 4.0 §5.10.6, switch behaviour).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum AbrSwitch {
    /// EFCI marking: a data cell the port accepts with more than
    /// `threshold_cells` in its buffer leaves with EFCI set (§5.10.6 rule 1a).
    Efci { threshold_cells: u32 },
    /// Relative-rate marking (§5.10.6 rule 1b): a BRM passing while the buffer
    /// holds more than `threshold_cells` gets CI; above half of it, NI (the
    /// half is an *assumption*: TM 4.0 leaves the switch's thresholds open).
    Relative { threshold_cells: u32 },
    /// Explicit rate by ERICA (R. Jain, S. Kalyanaraman, R. Goyal, S. Fahmy and
    /// R. Viswanathan, "ERICA switch algorithm: a complete description", ATM
    /// Forum/96-1172, 1996): over each averaging interval, the load factor z =
    /// ABR input rate / (target × link rate), the fair share = target × link
    /// rate / active VCs; a BRM gets ER = min(its ER, max(fair share, CCR/z),
    /// target × link rate).
    Erica { target: f64, interval: SimTime },
}

/// An ABR behaviour at a switch output port.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AbrPort {
    pub port: usize,
    pub switch: AbrSwitch,
}

/// What an ABR source counted.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct AbrSourceCounters {
    /// Forward RM cells sent (in-rate and out-of-rate).
    pub frm_sent: u64,
    /// Backward RM cells back at the source.
    pub brm_returned: u64,
    /// RM cells lost at full buffers.
    pub rm_lost: u64,
    /// ACR now, and the lowest and highest it has been (cells/s).
    pub acr: f64,
    pub acr_min: f64,
    pub acr_max: f64,
    /// Time spent with ACR at MCR (to within one cell/s).
    pub time_at_mcr: SimTime,
    /// ACR's time-weighted mean over the circuit's active time, its first cell
    /// to its last (cells/s; ACR itself before any cell): the rate it ran at.
    pub acr_mean: f64,
}

/// What an ABR port counted.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct AbrPortCounters {
    /// Data cells marked EFCI.
    pub efci_marked: u64,
    /// BRMs that left with CI or NI set here.
    pub ci_set: u64,
    pub ni_set: u64,
    /// ERICA: BRMs whose ER this port lowered, and the last ER it computed
    /// (cells/s; 0 before any), with the lowest and highest.
    pub er_lowered: u64,
    pub er_last: f64,
    pub er_min: f64,
    pub er_max: f64,
}

/// A source's running state (TM 4.0 §5.10.4).
struct SourceRt {
    p: AbrSource,
    acr: f64,
    /// What ACR, PCR and MCR come to per cell and in an FRM, worked out when
    /// ACR changes rather than at each cell: the time between in-rate cells at
    /// ACR, and the RM cell's CCR, ER and MCR fields (rules 7 and 10).
    acr_interval: SimTime,
    ccr: Rate,
    pcr_rate: Rate,
    mcr_rate: Rate,
    /// The start of the last in-rate cell, and the earliest start of the next.
    last_cell: Option<SimTime>,
    next_at: SimTime,
    /// In-rate cells since the last in-rate FRM (rule 3a).
    since_frm: u32,
    last_frm: Option<SimTime>,
    /// FRMs since the last BRM came back (rule 6).
    unanswered: u32,
    /// When ACR last changed (for the time at MCR).
    changed: SimTime,
    /// The first cell's time, and ACR's integral (cells) from it to `changed`
    /// and to the last cell by then (with that cell's time): the mean's terms.
    active_from: Option<SimTime>,
    acr_area: f64,
    acr_area_to_last: (f64, SimTime),
    sn: u32,
    counters: AbrSourceCounters,
    series: Vec<(SimTime, f64)>,
}

impl SourceRt {
    fn new(p: AbrSource) -> SourceRt {
        SourceRt {
            p,
            acr: p.icr,
            acr_interval: Self::interval(p.icr),
            ccr: Rate::from_cells_per_sec(p.icr),
            pcr_rate: Rate::from_cells_per_sec(p.pcr),
            mcr_rate: Rate::from_cells_per_sec(p.mcr),
            last_cell: None,
            next_at: SimTime::ZERO,
            since_frm: 0,
            last_frm: None,
            unanswered: 0,
            changed: SimTime::ZERO,
            active_from: None,
            acr_area: 0.0,
            acr_area_to_last: (0.0, SimTime::ZERO),
            sn: 0,
            counters: AbrSourceCounters {
                acr: p.icr,
                acr_min: p.icr,
                acr_max: p.icr,
                ..Default::default()
            },
            series: Vec::new(),
        }
    }

    fn interval(rate: f64) -> SimTime {
        SimTime::from_ps((PS_PER_SEC as f64 / rate).ceil() as u64)
    }

    /// Rule 3a: an in-rate FRM goes first after setup, then after Nrm-1
    /// in-rate cells, or after Mrm cells once Trm has passed since the last FRM.
    fn frm_due(&self, now: SimTime) -> bool {
        self.last_frm.is_none()
            || self.since_frm + 1 >= self.p.nrm
            || (self.since_frm >= MRM && self.last_frm.is_some_and(|t| now >= t + self.p.trm))
    }

    /// An in-rate data cell leaves at `now`.
    fn data_cell(&mut self, now: SimTime) {
        self.since_frm += 1;
        self.last_cell = Some(now);
        self.next_at = now + self.acr_interval;
    }

    fn at_mcr(&self) -> bool {
        self.acr <= self.p.mcr + 1.0
    }

    /// ACR's integral from the first cell to `now`, and to the last cell no
    /// later than `now` (with its time); ACR has been constant since `changed`.
    fn acr_areas(&self, now: SimTime) -> (f64, (f64, SimTime)) {
        let (Some(from), Some(last)) = (self.active_from, self.last_cell) else {
            return (self.acr_area, self.acr_area_to_last);
        };
        let a = self.changed.max(from);
        let upto = |t: SimTime| self.acr_area + self.acr * t.saturating_sub(a).as_secs_f64();
        let b = last.min(now);
        let to_last = if b >= a {
            (upto(b), b)
        } else {
            self.acr_area_to_last
        };
        (upto(now), to_last)
    }

    /// ACR becomes `acr` at `now` (clamped to [MCR, PCR], rule 1).
    fn set_acr(&mut self, now: SimTime, acr: f64, series: bool) {
        let acr = acr.clamp(self.p.mcr, self.p.pcr);
        if self.at_mcr() {
            self.counters.time_at_mcr += now.saturating_sub(self.changed);
        }
        (self.acr_area, self.acr_area_to_last) = self.acr_areas(now);
        self.changed = now;
        self.acr = acr;
        self.acr_interval = Self::interval(acr);
        self.ccr = Rate::from_cells_per_sec(acr);
        let c = &mut self.counters;
        c.acr = acr;
        c.acr_min = c.acr_min.min(acr);
        c.acr_max = c.acr_max.max(acr);
        if series {
            self.series.push((now, acr));
        }
        // The next in-rate cell keeps its place after the last one at the new rate.
        if let Some(t) = self.last_cell {
            self.next_at = t + self.acr_interval;
        }
    }
}

/// A port's ABR state.
struct PortAbrRt {
    switch: AbrSwitch,
    /// Cell rate of the port's link (cells/s).
    link_rate: f64,
    /// ERICA: the current interval's start, cells counted, VCs seen.
    start: SimTime,
    cells: u64,
    epoch: u32,
    seen: Vec<u32>,
    active: u32,
    /// ERICA: the last closed interval's load factor and fair share.
    z: f64,
    fair: f64,
    /// ERICA: the CCR of each circuit's last FRM here (cells/s).
    ccr: Vec<f64>,
    /// ERICA: the last ER written into a BRM, and its RM-cell rate (ER holds
    /// at the fair share while the load is steady: no need to encode it again).
    er_rate: (f64, Rate),
    /// Train: ERs decided ahead of their BRM's instant (`Network::erica_ahead`),
    /// recorded when the clock gets there; and whether the port may decide
    /// them so (`Abr::allow_ahead`).
    ahead: VecDeque<(SimTime, f64, bool)>,
    ahead_ok: bool,
    counters: AbrPortCounters,
    series: Vec<(SimTime, f64)>,
}

/// The way back of an ABR circuit's BRMs, worked out once (`Abr::plan_way_back`:
/// the circuit's path and its ports' behaviours are fixed when the network is
/// built), so that an RM cell's hops look up what `brm_onward` and the
/// source's horizon (`abr_train.rs`) would otherwise sum link by link.
#[derive(Default)]
struct WayBack {
    /// From the destination to the source: every stage's link once.
    home: SimTime,
    /// Per stage.
    legs: Box<[BackLeg]>,
}

/// What a circuit's stage `s` means to its RM cells (`WayBack`).
#[derive(Copy, Clone, Debug, Default)]
struct BackLeg {
    /// A BRM leaving the element after stage `s` is next handled at this
    /// stage (a port with a backward rule, or the source: 0), ...
    handler: u32,
    /// ... this long after: the links of stages `s` down to `handler`.
    to_handler: SimTime,
    /// An FRM arriving at stage `s` is back at the source no sooner than
    /// this long after: the links of stages `s` on, then `home`.
    round: SimTime,
}

/// A network's ABR state (empty: no ABR).
#[derive(Default)]
pub(super) struct Abr {
    /// Per circuit, its source (None: not ABR).
    sources: Vec<Option<SourceRt>>,
    /// Per circuit, the EFCI bit of the last data cell its destination received.
    efci: Vec<bool>,
    /// Per port, its behaviour (None: none).
    ports: Vec<Option<PortAbrRt>>,
    /// Per circuit, the way back of its BRMs (empty: not ABR).
    way_back: Vec<WayBack>,
    /// RM cells in flight, by slot (circuit, cell, the earliest instant the
    /// source's next FRM may go: `Abr::turn`), and the free slots.
    rm: Vec<(u32, RmCell, SimTime)>,
    free: Vec<u32>,
    series: bool,
    /// Any ABR circuit or port.
    pub(super) on: bool,
    /// Train mode: the sources run ahead of the clock (`abr_train.rs`, which
    /// keeps them in `Network::emitters`).
    pub(super) train_mode: bool,
    /// Train mode: per port, the sources holding an open run into it
    /// (`Network::abr_hold`).
    pub(super) open: Vec<Vec<u32>>,
    /// Train mode: no port holds an ER decided ahead (`Network::erica_ahead`)
    /// for an instant before this one (MAX: none at all), so the clock's
    /// moves before it need not look (`Network::abr_ahead_due`).
    ahead_from: SimTime,
}

/// A source's decision on its head cell (`Abr::turn`).
pub(super) enum Turn {
    /// Send the data cell now.
    Data,
    /// An FRM (this RM slot) goes first, now; `clp` when out of rate.
    Frm { rm: u32, clp: bool },
    /// Nothing may leave before this time.
    Wait(SimTime),
}

impl Abr {
    /// Checks the ABR parts of a topology and builds their state.
    pub(super) fn build(
        sources: &[AbrSource],
        ports: &[AbrPort],
        circuits: usize,
        port_rates: &[f64],
    ) -> Result<Abr, super::TopologyError> {
        use super::TopologyError::{BadAbrPort, BadAbrSource};
        let mut abr = Abr {
            sources: (0..circuits).map(|_| None).collect(),
            efci: vec![false; circuits],
            ports: (0..port_rates.len()).map(|_| None).collect(),
            ahead_from: SimTime::MAX,
            ..Default::default()
        };
        for s in sources {
            let bad = |reason| BadAbrSource {
                circuit: s.circuit,
                reason,
            };
            s.check().map_err(bad)?;
            match abr.sources.get_mut(s.circuit) {
                Some(slot @ None) => *slot = Some(SourceRt::new(*s)),
                Some(Some(_)) => return Err(bad("ABR given twice for one circuit")),
                None => return Err(bad("no such circuit")),
            }
        }
        for p in ports {
            let bad = |reason| BadAbrPort {
                port: p.port,
                reason,
            };
            match p.switch {
                AbrSwitch::Efci { threshold_cells } | AbrSwitch::Relative { threshold_cells }
                    if threshold_cells == 0 =>
                {
                    return Err(bad("the queue threshold must be at least 1 cell"))
                }
                AbrSwitch::Erica { target, interval }
                    if !(target > 0.0 && target <= 1.0) || interval == SimTime::ZERO =>
                {
                    return Err(bad(
                        "ERICA needs a target in (0, 1] and an interval above 0",
                    ))
                }
                _ => {}
            }
            let Some(&link_rate) = port_rates.get(p.port) else {
                return Err(bad("no such port"));
            };
            match abr.ports.get_mut(p.port) {
                Some(slot @ None) => {
                    *slot = Some(PortAbrRt {
                        switch: p.switch,
                        link_rate,
                        start: SimTime::ZERO,
                        cells: 0,
                        epoch: 1,
                        seen: vec![0; circuits],
                        active: 0,
                        z: 0.0,
                        fair: 0.0,
                        ccr: vec![0.0; circuits],
                        er_rate: (f64::NAN, Rate::ZERO),
                        ahead: VecDeque::new(),
                        ahead_ok: false,
                        counters: AbrPortCounters::default(),
                        series: Vec::new(),
                    })
                }
                _ => return Err(bad("one ABR behaviour per port")),
            }
        }
        abr.on = !sources.is_empty() || !ports.is_empty();
        Ok(abr)
    }

    /// Works out each ABR circuit's way back (`WayBack`), `link(c, s)` being
    /// stage `s`'s link (cell time and delay): the time a BRM takes from the
    /// element after stage `s` back to it (the forward link's; the reverse
    /// link's, assumed equal: the module's notes).
    pub(super) fn plan_way_back(
        &mut self,
        circuits: &[super::CircuitRt],
        link: impl Fn(usize, usize) -> SimTime,
    ) {
        let mut way_back = Vec::with_capacity(circuits.len());
        for (c, circuit) in circuits.iter().enumerate() {
            if !self.is_source(c) {
                way_back.push(WayBack::default());
                continue;
            }
            let links: Vec<SimTime> = (0..circuit.stages.len()).map(|s| link(c, s)).collect();
            let sum = |ls: &[SimTime]| ls.iter().fold(SimTime::ZERO, |t, &l| t + l);
            let home = sum(&links);
            // The ports between a stage and its handler, EFCI-marking ones
            // included (their rule is on data cells going forward), only pass
            // a BRM on, and take its time.
            let rule = |s: usize| s > 0 && self.backward_rule(circuit.stages[s].port);
            let legs = (0..links.len())
                .map(|s| {
                    let mut handler = s;
                    while !rule(handler) && handler > 0 {
                        handler -= 1;
                    }
                    BackLeg {
                        handler: handler as u32,
                        to_handler: sum(&links[handler..=s]),
                        round: sum(&links[s..]) + home,
                    }
                })
                .collect();
            way_back.push(WayBack { home, legs });
        }
        self.way_back = way_back;
    }

    /// The time a BRM of circuit `c` takes from its destination back to its
    /// source (`WayBack::home`).
    pub(super) fn way_home(&self, c: usize) -> SimTime {
        self.way_back[c].home
    }

    /// A BRM of circuit `c` leaves the element after stage `s` at `t`: the
    /// stage that next handles it, and when it gets there (`WayBack`).
    fn brm_next(&self, c: usize, s: usize, t: SimTime) -> (usize, SimTime) {
        let leg = self.way_back[c].legs[s];
        (leg.handler as usize, t + leg.to_handler)
    }

    /// Train: ERICA may decide a BRM's ER as its FRM turns around
    /// (`Network::erica_ahead`) only at a port where every ABR circuit through
    /// it ends, so that no BRM handled by an event comes between two handled
    /// so. The circuits' paths are fixed when the network is built: decided
    /// once, then.
    pub(super) fn allow_ahead(&mut self, circuits: &[super::CircuitRt]) {
        let sources = &self.sources;
        for (p, slot) in self.ports.iter_mut().enumerate() {
            if let Some(pa) = slot {
                pa.ahead_ok = matches!(pa.switch, AbrSwitch::Erica { .. })
                    && circuits.iter().zip(sources).all(|(ck, source)| {
                        source.is_none() || ck.stages[1..].iter().rev().skip(1).all(|s| s.port != p)
                    });
            }
        }
    }

    /// Train: whether a BRM passing port `p` at `now` reads what the port
    /// decided up to then, so the port must have decided every cell arriving
    /// by then: relative marking reads its queue; ERICA only when one of its
    /// averaging intervals ended by then (closing it counts its cells). The
    /// rest of ERICA's state, the closed interval's load factor and fair
    /// share and each circuit's CCR from its last FRM (decided no later than
    /// its arrival, `train.rs`), is there already.
    fn brm_reads_port(&self, p: usize, now: SimTime) -> bool {
        match &self.ports[p] {
            Some(PortAbrRt {
                switch: AbrSwitch::Erica { interval, .. },
                start,
                ..
            }) => now >= *start + *interval,
            _ => true,
        }
    }

    /// Whether port `p` acts on BRMs passing it (relative marking, ERICA).
    fn backward_rule(&self, p: usize) -> bool {
        matches!(
            self.ports[p],
            Some(PortAbrRt {
                switch: AbrSwitch::Relative { .. } | AbrSwitch::Erica { .. },
                ..
            })
        )
    }

    /// Train mode: ABR sources run ahead of the clock (`abr_train.rs`).
    pub(super) fn train(&self) -> bool {
        self.train_mode
    }

    pub(super) fn is_source(&self, c: usize) -> bool {
        self.sources.get(c).is_some_and(Option::is_some)
    }

    /// The earliest start of ABR circuit `c`'s next in-rate cell (ZERO: not ABR).
    pub(super) fn next_at(&self, c: usize) -> SimTime {
        match self.sources.get(c) {
            Some(Some(s)) if s.acr >= TCR_CELLS_PER_SEC => s.next_at,
            _ => SimTime::ZERO,
        }
    }

    /// The circuit an RM slot belongs to.
    pub(super) fn rm_circuit(&self, rm: u32) -> usize {
        self.rm[rm as usize].0 as usize
    }

    /// The source of ABR circuit `c`, whose adapter's cell time is `cell`,
    /// decides what its head cell may do at `now` (TM 4.0 §5.10.4 rules 3, 5,
    /// 6, 7, 11). On `Abr` rather than `Network`, so that the train replay
    /// (`abr_train.rs`) holds its source's state beside it. Most turns are an
    /// in-rate data cell: that case is inlined into its callers, the rules
    /// around an FRM are not (`Abr::turn_rules`).
    #[inline]
    pub(super) fn turn(&mut self, c: usize, now: SimTime, cell: SimTime) -> Turn {
        if let Some(s) = self.sources[c].as_mut() {
            // In rate, no FRM due, and not the ACR series' first point.
            if now >= s.next_at && !s.frm_due(now) && !(self.series && s.series.is_empty()) {
                s.data_cell(now);
                return Turn::Data;
            }
        }
        self.turn_rules(c, now, cell)
    }

    /// `Abr::turn` in full: a cell out of rate or early (rule 11), an FRM
    /// due (rules 3a, 5, 6, 7, 10), the series' first point.
    #[inline(never)]
    fn turn_rules(&mut self, c: usize, now: SimTime, cell: SimTime) -> Turn {
        let series = self.series;
        let Some(s) = self.sources[c].as_mut() else {
            return Turn::Data;
        };
        if s.series.is_empty() && series {
            s.series.push((now, s.acr));
        }
        let mut out_of_rate = false;
        if now < s.next_at {
            if s.acr >= TCR_CELLS_PER_SEC {
                return Turn::Wait(s.next_at);
            }
            // Rule 11: with ACR below TCR an out-of-rate FRM (CLP = 1) may go at
            // TCR, so a starved source still learns when to speed up.
            let tcr_slot = s
                .last_cell
                .map_or(now, |t| t + SourceRt::interval(TCR_CELLS_PER_SEC));
            if now >= tcr_slot {
                out_of_rate = true;
            } else {
                return Turn::Wait(s.next_at.min(tcr_slot));
            }
        }
        if !out_of_rate && !s.frm_due(now) {
            s.data_cell(now);
            return Turn::Data;
        }
        // Rule 5 (use it or lose it): ACR above ICR falls back to ICR when no
        // FRM went for ADTF.
        if let Some(t) = s.last_frm {
            if s.acr > s.p.icr && now.saturating_sub(t) > s.p.adtf {
                let icr = s.p.icr;
                s.set_acr(now, icr, series);
            }
        }
        // Rule 6: Crm FRMs without a BRM back cut ACR by ACR·CDF, not below MCR.
        if s.unanswered >= s.p.crm {
            let acr = s.acr - s.acr * s.p.cdf;
            s.set_acr(now, acr.max(s.p.mcr), series);
        }
        // Rules 7 and 10: the FRM carries CCR = ACR, ER = PCR, MCR; DIR = 0.
        let frm = RmCell {
            er: s.pcr_rate,
            ccr: s.ccr,
            mcr: s.mcr_rate,
            sn: s.sn,
            ..Default::default()
        };
        s.sn = s.sn.wrapping_add(1);
        s.unanswered += 1;
        s.counters.frm_sent += 1;
        s.last_frm = Some(now);
        s.active_from.get_or_insert(now);
        if !out_of_rate {
            s.since_frm = 0;
            s.last_cell = Some(now);
            s.next_at = now + s.acr_interval;
        } else {
            s.last_cell = Some(now);
        }
        // The next FRM goes no sooner than Nrm cells on (rule 3a's count: this
        // one in rate restarts it, and the link carries one cell per cell
        // time), Trm on (its time rule), or TCR's interval on (rule 11); after
        // an out-of-rate one, whose count goes on, at once.
        let next_frm = if out_of_rate {
            now
        } else {
            let by_count = cell.times(s.p.nrm as u64);
            now + by_count
                .min(s.p.trm)
                .min(SourceRt::interval(TCR_CELLS_PER_SEC))
        };
        let rm = self.alloc(c, frm, next_frm);
        Turn::Frm {
            rm,
            clp: out_of_rate,
        }
    }

    /// Train (`abr_train.rs`): a data cell of circuit `c` left at `x` (its
    /// `Turn::Data`). How many of the next `max` data cells leave at `x + k·step`
    /// (k = 1, 2, ...), each as soon as the link (`cell`) and the rate allow,
    /// before an FRM is due (rule 3a, by count or by time) and no later than
    /// `until`: the turns `Abr::turn` would give them one by one, committed at
    /// once. (0 below TCR, where rule 11 times the cells.) Returns (count, step).
    pub(super) fn steady(
        &mut self,
        c: usize,
        x: SimTime,
        cell: SimTime,
        max: u32,
        until: SimTime,
    ) -> (u32, SimTime) {
        let Some(s) = self.sources[c].as_mut() else {
            return (0, cell);
        };
        let Some(last_frm) = s.last_frm else {
            return (0, cell);
        };
        if s.acr < TCR_CELLS_PER_SEC || until <= x {
            return (0, cell);
        }
        let interval = s.acr_interval;
        let step = interval.max(cell);
        // Cell k is in rate while since_frm + k < Nrm, and before Trm has passed
        // since the last FRM (taken whatever Mrm says: the rest goes one by one).
        let by_count = (s.p.nrm - 1).saturating_sub(s.since_frm) as u64;
        let mut k = (max as u64).min(by_count);
        // The time rule and the horizon cut it only when they come before the
        // k-th cell (most runs end at the FRM): no division otherwise.
        let trm_end = (last_frm + s.p.trm).0;
        if x.0 + step.0 * k >= trm_end {
            k = k.min(trm_end.saturating_sub(x.0 + 1) / step.0);
        }
        if x.0 + step.0 * k > until.0 {
            k = k.min((until.0 - x.0) / step.0);
        }
        let k = k as u32;
        if k > 0 {
            let last = x + step.times(k as u64);
            s.since_frm += k;
            s.last_cell = Some(last);
            s.next_at = last + interval;
        }
        (k, step)
    }

    fn alloc(&mut self, circuit: usize, cell: RmCell, next_frm: SimTime) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.rm[i as usize] = (circuit as u32, cell, next_frm);
                i
            }
            None => {
                self.rm.push((circuit as u32, cell, next_frm));
                (self.rm.len() - 1) as u32
            }
        }
    }
}

impl PortAbrRt {
    /// ERICA's explicit rate for a BRM of circuit `c` (its interval rolled to
    /// the BRM's instant), written into the cell if lower than its ER; whether
    /// it was.
    fn erica(&mut self, target: f64, c: usize, cell: &mut RmCell) -> (f64, bool) {
        let capacity = target * self.link_rate;
        let vc_share = if self.z > 0.0 {
            self.ccr[c] / self.z
        } else {
            capacity
        };
        let fair = if self.fair > 0.0 { self.fair } else { capacity };
        let er = fair.max(vc_share).min(capacity);
        if self.er_rate.0 != er {
            self.er_rate = (er, Rate::from_cells_per_sec(er));
        }
        let rate = self.er_rate.1;
        let lowered = rate < cell.er;
        if lowered {
            cell.er = rate;
        }
        (er, lowered)
    }

    /// ERICA's counters and series take an ER advertised at `at`.
    fn record(&mut self, at: SimTime, er: f64, lowered: bool, series: bool) {
        let k = &mut self.counters;
        k.er_min = if k.er_last == 0.0 {
            er
        } else {
            k.er_min.min(er)
        };
        k.er_max = k.er_max.max(er);
        k.er_last = er;
        k.er_lowered += lowered as u64;
        if series {
            self.series.push((at, er));
        }
    }

    /// Record the ERs decided ahead whose instant is `now` or before.
    fn record_due(&mut self, now: SimTime, series: bool) {
        while let Some(&(at, er, lowered)) = self.ahead.front() {
            if at > now {
                break;
            }
            self.ahead.pop_front();
            self.record(at, er, lowered, series);
        }
    }

    /// ERICA: close the intervals that ended by `now`.
    #[inline]
    fn roll(&mut self, now: SimTime) {
        let AbrSwitch::Erica { interval, .. } = self.switch else {
            return;
        };
        if now >= self.start + interval {
            self.close(now);
        }
    }

    /// ERICA: close the intervals that ended by `now`, one at least (once an
    /// interval, out of the cells' way).
    #[inline(never)]
    fn close(&mut self, now: SimTime) {
        let AbrSwitch::Erica { target, interval } = self.switch else {
            return;
        };
        let capacity = target * self.link_rate;
        let input = self.cells as f64 / interval.as_secs_f64();
        self.z = input / capacity;
        self.fair = capacity / self.active.max(1) as f64;
        // Intervals with no cell at all are skipped whole.
        let n = (now.as_ps() - self.start.as_ps()) / interval.as_ps();
        self.start += interval.times(n);
        self.cells = 0;
        self.active = 0;
        self.epoch += 1;
    }

    /// An FRM of circuit `c` arrives: ERICA counts it, and reads the source's
    /// CCR from it (Jain et al. §"VC table").
    #[inline]
    fn frm_arrives(&mut self, a: SimTime, c: usize, cell: &RmCell) {
        if matches!(self.switch, AbrSwitch::Erica { .. }) {
            self.count(a, c);
            self.ccr[c] = cell.ccr.cells_per_sec();
        }
    }

    /// A cell of circuit `c` arrives (ERICA counts the ABR input rate).
    #[inline]
    fn count(&mut self, now: SimTime, c: usize) {
        if !matches!(self.switch, AbrSwitch::Erica { .. }) {
            return;
        }
        self.roll(now);
        self.cells += 1;
        self.seen_in_interval(c);
    }

    /// ERICA: circuit `c` is active in the current interval.
    #[inline]
    fn seen_in_interval(&mut self, c: usize) {
        if self.seen[c] != self.epoch {
            self.seen[c] = self.epoch;
            self.active += 1;
        }
    }
}

impl PortAbrRt {
    /// ERICA counts `n` cells of circuit `c` arriving at `a0 + k·step`, as
    /// `count` would one by one.
    #[inline]
    fn count_run(&mut self, a0: SimTime, step: SimTime, n: u32, c: usize) {
        let AbrSwitch::Erica { interval, .. } = self.switch else {
            return;
        };
        // Most runs fall inside the current interval whole: counted at once,
        // inlined where runs are taken; the rest out of their way.
        if a0 + step.times(n.saturating_sub(1) as u64) < self.start + interval {
            self.cells += n as u64;
            self.seen_in_interval(c);
            return;
        }
        self.count_run_across(a0, step, n, c, interval);
    }

    /// `count_run` for a run that reaches an interval's end: one interval at
    /// a time.
    #[inline(never)]
    fn count_run_across(
        &mut self,
        a0: SimTime,
        step: SimTime,
        n: u32,
        c: usize,
        interval: SimTime,
    ) {
        let mut k = 0;
        while k < n {
            let t = a0 + step.times(k as u64);
            self.roll(t);
            // The run's cells before this interval's end (`roll` left t inside it).
            let end = self.start + interval;
            let upto = if step == SimTime::ZERO {
                n
            } else {
                ((end.0 - a0.0).div_ceil(step.0)).min(n as u64) as u32
            };
            self.cells += (upto - k) as u64;
            self.seen_in_interval(c);
            k = upto;
        }
    }
}

/// Train: one port's ABR counting for runs of data cells decided in bulk
/// (`Network::abr_cells_at_port`).
pub(super) struct PortCells<'a> {
    port: &'a mut PortAbrRt,
    sources: &'a [Option<SourceRt>],
}

impl PortCells<'_> {
    /// `n` data cells of circuit `c` accepted (arrivals `a0 + k·step`), each
    /// finding `occ` cells (itself included), as `abr_data_at_port` would take
    /// them one by one: ERICA's count, and whether they leave with EFCI set.
    #[inline]
    pub(super) fn cells(&mut self, c: usize, a0: SimTime, step: SimTime, n: u32, occ: u32) -> bool {
        let port = &mut *self.port;
        let marked =
            matches!(port.switch, AbrSwitch::Efci { threshold_cells } if occ > threshold_cells);
        if self.sources[c].is_some() {
            port.count_run(a0, step, n, c);
        }
        port.counters.efci_marked += if marked { n as u64 } else { 0 };
        marked
    }

    /// `cells` for a run the caller found wholly before the end of ERICA's
    /// current interval (`Network::abr_interval`): counted without the check.
    #[inline]
    pub(super) fn cells_inside(
        &mut self,
        c: usize,
        a0: SimTime,
        step: SimTime,
        n: u32,
        occ: u32,
    ) -> bool {
        let port = &mut *self.port;
        let marked = match port.switch {
            AbrSwitch::Efci { threshold_cells } => occ > threshold_cells,
            AbrSwitch::Erica { interval, .. } => {
                debug_assert!(a0 + step.times(n as u64 - 1) < port.start + interval);
                if self.sources[c].is_some() {
                    port.cells += n as u64;
                    port.seen_in_interval(c);
                }
                false
            }
            _ => false,
        };
        port.counters.efci_marked += if marked { n as u64 } else { 0 };
        marked
    }
}

impl Network {
    /// Turn on the ACR series of every ABR source and the ER series of every
    /// ERICA port (see [`Network::acr_series`]).
    pub fn set_abr_series(&mut self, on: bool) {
        self.abr.series = on;
    }

    /// An ABR circuit's counters (None: not ABR). Its time at MCR is brought up
    /// to the network's clock.
    pub fn abr_source_counters(&self, c: CircuitId) -> Option<AbrSourceCounters> {
        let s = self.abr.sources.get(c)?.as_ref()?;
        let mut k = s.counters;
        if s.at_mcr() {
            k.time_at_mcr += self.now.saturating_sub(s.changed);
        }
        let (_, (area, last)) = s.acr_areas(self.now);
        k.acr_mean = match s.active_from {
            Some(from) if last > from => area / (last - from).as_secs_f64(),
            _ => s.acr,
        };
        Some(k)
    }

    /// An ABR port's counters (None: no ABR behaviour there).
    pub fn abr_port_counters(&self, port: usize) -> Option<AbrPortCounters> {
        Some(self.abr.ports.get(port)?.as_ref()?.counters)
    }

    /// An ABR circuit's ACR over time: (time, cells/s) at the start and at each
    /// change (empty unless the series is on).
    pub fn acr_series(&self, c: CircuitId) -> &[(SimTime, f64)] {
        self.abr
            .sources
            .get(c)
            .and_then(Option::as_ref)
            .map_or(&[], |s| &s.series)
    }

    /// An ERICA port's advertised ER over time: (time, cells/s) at each BRM.
    pub fn er_series(&self, port: usize) -> &[(SimTime, f64)] {
        self.abr
            .ports
            .get(port)
            .and_then(Option::as_ref)
            .map_or(&[], |p| &p.series)
    }

    /// The source of ABR circuit `c` decides what its head cell may do at `now`
    /// (`Abr::turn`).
    pub(super) fn abr_turn(&mut self, c: usize, now: SimTime) -> Turn {
        let cell = self.adapters[self.circuits[c].src].cell;
        self.abr.turn(c, now, cell)
    }

    /// A data cell of circuit `c` was accepted at port `p` finding `occ` cells
    /// (itself included): whether it leaves with EFCI set (§5.10.6 rule 1a), and
    /// ERICA's count of the input rate.
    pub(super) fn abr_data_at_port(&mut self, p: usize, c: usize, now: SimTime, occ: u32) -> bool {
        let Some(port) = self.abr.ports.get_mut(p).and_then(Option::as_mut) else {
            return false;
        };
        if self.abr.sources[c].is_some() {
            port.count(now, c);
        }
        match port.switch {
            AbrSwitch::Efci { threshold_cells } if occ > threshold_cells => {
                port.counters.efci_marked += 1;
                true
            }
            _ => false,
        }
    }

    /// Train: the occupancy above which port `p` marks EFCI (None: it does
    /// not), for cells decided in bulk (`train.rs`, `merge_sinks`).
    pub(super) fn abr_efci_threshold(&self, p: usize) -> Option<u32> {
        match self.abr.ports.get(p).and_then(Option::as_ref) {
            Some(PortAbrRt {
                switch: AbrSwitch::Efci { threshold_cells },
                ..
            }) => Some(*threshold_cells),
            _ => None,
        }
    }

    /// Train: the end of ERICA's current averaging interval at port `p` (None:
    /// the port does not run ERICA), for a steady period (`train.rs`) that must
    /// not cross it.
    pub(super) fn abr_interval_end(&self, p: usize) -> Option<SimTime> {
        match self.abr.ports.get(p).and_then(Option::as_ref) {
            Some(PortAbrRt {
                switch: AbrSwitch::Erica { interval, .. },
                start,
                ..
            }) => Some(*start + *interval),
            _ => None,
        }
    }

    /// Train: the end of ERICA's current averaging interval at port `p` and
    /// the interval's length (None: the port does not run ERICA), for a steady
    /// period (`train.rs`) that may run into the next interval, not past it.
    pub(super) fn abr_interval(&self, p: usize) -> Option<(SimTime, SimTime)> {
        match self.abr.ports.get(p).and_then(Option::as_ref) {
            Some(PortAbrRt {
                switch: AbrSwitch::Erica { interval, .. },
                start,
                ..
            }) => Some((*start + *interval, *interval)),
            _ => None,
        }
    }

    /// Train: port `p`'s ABR counting, looked up once for the runs of a
    /// steady period (`train.rs`, `steady_abr`; None: no ABR behaviour there).
    #[inline]
    pub(super) fn abr_cells_at_port(&mut self, p: usize) -> Option<PortCells<'_>> {
        let port = self.abr.ports.get_mut(p).and_then(Option::as_mut)?;
        Some(PortCells {
            port,
            sources: &self.abr.sources,
        })
    }

    /// Train: `n` data cells of circuit `c` accepted at port `p` (arrivals
    /// `a0 + k·step`), `marked` of them marking EFCI there (`train.rs`,
    /// `merge_sinks`, which found each one's occupancy): ERICA's count and
    /// EFCI's, as `abr_data_at_port` would take them one by one.
    pub(super) fn abr_cells_counted(
        &mut self,
        p: usize,
        c: usize,
        a0: SimTime,
        step: SimTime,
        n: u32,
        marked: u32,
    ) {
        let Some(port) = self.abr.ports.get_mut(p).and_then(Option::as_mut) else {
            return;
        };
        if self.abr.sources[c].is_some() {
            port.count_run(a0, step, n, c);
        }
        port.counters.efci_marked += marked as u64;
    }

    /// Train: a run of data cells of circuit `c` accepted at port `p` (arrivals
    /// `a0 + k·step`, leaving as `run` says), as `abr_data_at_port` would take
    /// them one by one: ERICA's count, and the cells `lo..hi` of the run that
    /// leave with EFCI set (the occupancy is monotone over a run, `port::Run`,
    /// so they are its head or its tail).
    pub(super) fn abr_run_at_port(
        &mut self,
        p: usize,
        c: usize,
        a0: SimTime,
        step: SimTime,
        run: &super::port::Run,
        cell: SimTime,
    ) -> (u32, u32) {
        let Some(port) = self.abr.ports.get_mut(p).and_then(Option::as_mut) else {
            return (0, 0);
        };
        if self.abr.sources[c].is_some() {
            port.count_run(a0, step, run.n, c);
        }
        let AbrSwitch::Efci { threshold_cells } = port.switch else {
            return (0, 0);
        };
        let marked = |k: u32| {
            let a = a0 + step.times(k as u64);
            let end = run.start(k, a0, step, cell) + cell;
            super::port::occupancy(end, a, cell) > threshold_cells
        };
        let (first, last) = (
            run.occ_first > threshold_cells,
            run.occ_last > threshold_cells,
        );
        let (lo, hi) = match (first, last) {
            (false, false) => (0, 0),
            (true, true) => (0, run.n),
            (true, false) => (0, (0..run.n).find(|&k| !marked(k)).unwrap_or(run.n)),
            (false, true) => ((0..run.n).find(|&k| marked(k)).unwrap_or(run.n), run.n),
        };
        port.counters.efci_marked += (hi - lo) as u64;
        (lo, hi)
    }

    /// A data cell of circuit `c` reaches its destination: its EFCI bit is the
    /// destination's EFCI state (§5.10.5 rule 2).
    pub(super) fn abr_data_received(&mut self, c: usize, efci: bool) {
        if let Some(e) = self.abr.efci.get_mut(c) {
            *e = efci;
        }
    }

    /// An RM cell arrives at `stage` of its circuit (past the last: its
    /// destination). At a port it takes a place in the buffer like any cell.
    pub(super) fn rm_arrives(&mut self, a: SimTime, rm: u32, stage: usize, clp: bool) {
        let c = self.abr.rm_circuit(rm);
        if stage == self.circuits[c].stages.len() {
            self.turn_around(a, rm, c);
            return;
        }
        let p = self.circuits[c].stages[stage].port;
        let occ = self.port_occupancy(p, a);
        if let Some(pa) = self.abr.ports[p].as_mut() {
            pa.frm_arrives(a, c, &self.abr.rm[rm as usize].1);
        }
        if occ >= self.ports[p].buffer.limit(clp) {
            return self.rm_lost(p, a, c, stage, rm, clp);
        }
        self.count_accepted(p, 1, occ + 1);
        if self.port_fifos {
            return self.rm_joins_fifo(p, a, occ, rm, stage, clp);
        }
        let port = &mut self.ports[p];
        let (cell_time, delay) = (port.cell, port.delay);
        if self.abr.train() {
            // A train port (`train.rs`): its last departure decides the start.
            let start = a.max(port.end);
            port.end = start + cell_time;
            self.sample_queue(p, a, occ + 1, start + cell_time);
            self.log_rm(Place::Port(p), start, c, stage, rm, clp, CellFate::Sent);
            let arrive = start + cell_time + delay;
            match self.abr.way_back[c].legs.get(stage + 1) {
                Some(leg) => {
                    self.abr_train_progress(c, rm, arrive + leg.round);
                    self.emit(c, stage, RM_PDU, rm, 1, arrive, cell_time, clp, false);
                }
                // Past the last port, the destination turns it around at once
                // (as `emit` would).
                None => self.turn_around(arrive, rm, c),
            }
            return;
        }
        // The per-cell port (`percell.rs`): its FIFO of end times decides the start.
        let start = a.max(port.ends.back().copied().unwrap_or(a));
        port.ends.push_back(start + cell_time);
        self.sample_queue(p, a, occ + 1, start + cell_time);
        self.log_rm(Place::Port(p), start, c, stage, rm, clp, CellFate::Sent);
        let next = Ev::Cell {
            pdu: RM_PDU,
            cell: rm,
            stage: stage as u16 + 1,
            clp,
            efci: false,
        };
        self.agenda
            .schedule(start + cell_time + delay, c as u32, next);
    }

    /// An RM cell of circuit `c` arriving at `a` finds port `p`'s buffer full.
    #[cold]
    fn rm_lost(&mut self, p: usize, a: SimTime, c: usize, stage: usize, rm: u32, clp: bool) {
        let pc = &mut self.ports[p].counters;
        pc.cells_in += 1;
        pc.cells_lost.add(super::LossCause::Overflow, 1);
        if let Some(s) = self.abr.sources[c].as_mut() {
            s.counters.rm_lost += 1;
        }
        self.abr_train_frm_gone(c, rm);
        let fate = CellFate::Lost(super::LossCause::Overflow);
        self.log_rm(Place::Port(p), a, c, stage, rm, clp, fate);
        self.abr.free.push(rm);
    }

    /// Cells a port holds at `at`, the one on its link included.
    #[inline(always)]
    fn port_occupancy(&mut self, p: usize, at: SimTime) -> u32 {
        if self.port_fifos {
            return self.txq[self.adapters.len() + p].occupancy(at);
        }
        if self.abr.train() {
            let port = &self.ports[p];
            return super::port::occupancy(port.end, at, port.cell);
        }
        let port = &mut self.ports[p];
        while port.ends.front().is_some_and(|&e| e <= at) {
            port.ends.pop_front();
        }
        port.ends.len() as u32
    }

    /// Per-cell ports (no credits): an RM cell, or a data cell reaching its
    /// destination (its EFCI bit noted), handled here; true when it was an RM cell.
    pub(super) fn abr_cell_arrives(
        &mut self,
        a: SimTime,
        pdu: u32,
        cell: u32,
        stage: usize,
        clp: bool,
        efci: bool,
    ) -> bool {
        if is_rm(pdu) {
            self.rm_arrives(a, cell, stage, clp);
            return true;
        }
        let c = self.pdus[pdu as usize].circuit as usize;
        if stage == self.circuits[c].stages.len() {
            self.abr_data_received(c, efci);
        }
        false
    }

    /// The destination turns an FRM around (§5.10.5 rules 1–2): DIR = 1, CI set
    /// if the last data cell had EFCI; the BRM then goes back hop by hop.
    pub(super) fn turn_around(&mut self, a: SimTime, rm: u32, c: usize) {
        let efci = self.abr.efci[c];
        let cell = &mut self.abr.rm[rm as usize].1;
        cell.backward = true;
        cell.ci |= efci;
        let last = self.circuits[c].stages.len() - 1;
        let (mut s, mut t) = self.abr.brm_next(c, last, a);
        if self.abr.train() {
            if s == last && last > 0 && self.erica_ahead(c, rm, last, a, t) {
                (s, t) = self.abr.brm_next(c, last - 1, t);
            }
            // Its source learns when it is back, and whether its replay
            // applies it there (nothing to do on the way) or an event brings it.
            let home = a + self.abr.way_back[c].home;
            if self.abr_train_turned(c, rm, home, s == 0) && s == 0 {
                return;
            }
        }
        self.brm_event(rm, s, t);
    }

    /// Train: the BRM of circuit `c` just turned around at `a` meets ERICA at
    /// its last port first, at `at`. That port's rule reads, at the BRM's
    /// instant, the interval's load factor and fair share, fixed until the
    /// interval ends, and the CCR of the circuit's last FRM there. When
    /// neither can change by then (the interval goes on past it; the
    /// circuit's next FRM cannot be there yet: `Abr::turn` bounds
    /// when it may go), the rule is applied now, without an event: the ER
    /// goes into the cell now, and into the port's counters and series when
    /// the clock reaches the instant (`abr_ahead_due`). Only at a port where
    /// every ABR circuit ends (`Abr::allow_ahead`): their order is then their
    /// turn-arounds', the port's own. True when it did.
    fn erica_ahead(&mut self, c: usize, rm: u32, last: usize, a: SimTime, at: SimTime) -> bool {
        let p = self.circuits[c].stages[last].port;
        let Some(pa) = self.abr.ports[p].as_mut() else {
            return false;
        };
        let AbrSwitch::Erica { target, interval } = pa.switch else {
            return false;
        };
        if !pa.ahead_ok {
            return false;
        }
        // The circuit's next FRM reaches this port no sooner than its earliest
        // departure plus the links before the port (the way home but the
        // last link).
        let next_frm = self.abr.rm[rm as usize].2 + (self.abr.way_back[c].home - (at - a));
        if at >= pa.start + interval || at >= next_frm {
            return false;
        }
        let cell = &mut self.abr.rm[rm as usize].1;
        let (er, lowered) = pa.erica(target, c, cell);
        pa.ahead.push_back((at, er, lowered));
        self.abr.ahead_from = self.abr.ahead_from.min(at);
        true
    }

    /// Train: the ERs decided ahead (`erica_ahead`) whose instant the clock has
    /// reached go into their ports' counters and series, in their order.
    pub(super) fn abr_ahead_due(&mut self, now: SimTime) {
        if now < self.abr.ahead_from {
            return;
        }
        let series = self.abr.series;
        let mut next = SimTime::MAX;
        for pa in self.abr.ports.iter_mut().flatten() {
            pa.record_due(now, series);
            if let Some(&(at, ..)) = pa.ahead.front() {
                next = next.min(at);
            }
        }
        self.abr.ahead_from = next;
    }

    /// A BRM of circuit `c` leaves the element after stage `s` at `t`: it is
    /// next handled at the first stage on its way back with something to do
    /// (a port with a backward rule, relative marking or ERICA, or the
    /// source); the ports between only pass it on, and take its time
    /// (`WayBack`; each hop the forward link's cell time and delay, the
    /// reverse link's assumed equal).
    fn brm_onward(&mut self, c: usize, rm: u32, s: usize, t: SimTime) {
        let (s, t) = self.abr.brm_next(c, s, t);
        if s == 0 && self.abr.train() && self.abr_train_brm_due(c, rm, t) {
            return;
        }
        self.brm_event(rm, s, t);
    }

    /// BRM `rm` reaches stage `s` at `t`, brought by an event (after every
    /// other event at its instant: `BRM_TIE`).
    fn brm_event(&mut self, rm: u32, s: usize, t: SimTime) {
        let stage = s as u16;
        self.agenda.schedule(t, BRM_TIE, Ev::Brm { rm, stage });
    }

    /// A BRM reaches stage `stage` on its way back: a port applies its rule; the
    /// source (stage 0) applies rules 8 and 9.
    pub(super) fn brm_at(&mut self, now: SimTime, rm: u32, stage: usize) {
        let c = self.abr.rm_circuit(rm);
        if stage == 0 {
            self.brm_at_source(now, rm, c);
            return;
        }
        let p = self.circuits[c].stages[stage].port;
        if self.abr.train() && self.abr.brm_reads_port(p, now) {
            // Bring the port to now (it decides no cell past it).
            self.pull(p, now);
            self.drain();
        }
        let occ = self.port_occupancy(p, now);
        let series = self.abr.series;
        let cell = &mut self.abr.rm[rm as usize].1;
        if let Some(pa) = self.abr.ports[p].as_mut() {
            match pa.switch {
                // Not reached: EFCI has no backward rule (`brm_onward`).
                AbrSwitch::Efci { .. } => {}
                AbrSwitch::Relative { threshold_cells } => {
                    if occ > threshold_cells {
                        cell.ci = true;
                        pa.counters.ci_set += 1;
                    } else if occ > threshold_cells / 2 {
                        cell.ni = true;
                        pa.counters.ni_set += 1;
                    }
                }
                AbrSwitch::Erica { target, .. } => {
                    // The ERs decided ahead for earlier BRMs are recorded first.
                    pa.record_due(now, series);
                    pa.roll(now);
                    let (er, lowered) = pa.erica(target, c, cell);
                    pa.record(now, er, lowered, series);
                }
            }
        }
        self.brm_onward(c, rm, stage - 1, now);
    }

    /// Rules 8 and 9 at the source.
    fn brm_at_source(&mut self, now: SimTime, rm: u32, c: usize) {
        if self.abr.train() {
            // Everything else at this instant first (the BRM sorts last).
            self.abr_advance(c, now);
            self.abr_train_frm_gone(c, rm);
        }
        self.brm_rules(now, rm, c);
        if self.abr.train() {
            self.abr_serve(c, now);
            self.abr_advance(c, now);
            return;
        }
        let src = self.circuits[c].src;
        self.serve_element(src, now);
    }

    /// Rules 8 and 9: the source reads the BRM of its FRM `rm` at `now`.
    pub(super) fn brm_rules(&mut self, now: SimTime, rm: u32, c: usize) {
        let cell = self.abr.rm[rm as usize].1;
        self.abr.free.push(rm);
        let series = self.abr.series;
        let Some(s) = self.abr.sources[c].as_mut() else {
            return;
        };
        s.counters.brm_returned += 1;
        s.unanswered = 0;
        // Rule 8: CI cuts ACR by ACR·RDF (not below MCR); neither CI nor NI lets
        // it rise by RIF·PCR (not above PCR); NI alone holds it.
        let mut acr = s.acr;
        if cell.ci {
            acr = (acr - acr * s.p.rdf).max(s.p.mcr);
        } else if !cell.ni {
            acr = (acr + s.p.rif * s.p.pcr).min(s.p.pcr);
        }
        // Rule 9: never above ER, never below MCR.
        acr = acr.min(cell.er.cells_per_sec()).max(s.p.mcr);
        if acr != s.acr {
            s.set_acr(now, acr, series);
        }
    }

    /// Log an RM cell at a place (when the log keeps it: most runs keep no
    /// log, so the test is inlined at every RM cell and the rest is not).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn log_rm(
        &mut self,
        place: Place,
        at: SimTime,
        c: usize,
        stage: usize,
        rm: u32,
        clp: bool,
        fate: CellFate,
    ) {
        if self.logs(place) {
            self.log_rm_record(place, at, c, stage, rm, clp, fate);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn log_rm_record(
        &mut self,
        place: Place,
        at: SimTime,
        c: usize,
        stage: usize,
        rm: u32,
        clp: bool,
        fate: CellFate,
    ) {
        let st = &self.circuits[c].stages[stage];
        self.log.push(CellRecord {
            place,
            at,
            circuit: c,
            token: 0,
            cell: 0,
            pdu: 0,
            pdu_len: 0,
            vpi: st.vpi,
            vci: st.vci,
            clp,
            fate,
            rm: Some(self.abr.rm[rm as usize].1),
        });
    }
}

/// The agenda's tie key of a BRM: after every other event at its instant, so a
/// port or source it passes has taken every cell of that instant first (in
/// both fidelities; `abr_train.rs` needs a fixed order).
pub(super) const BRM_TIE: u32 = u32::MAX;

/// The `pdu` of an RM cell in segments, FIFOs and events (no PDU has this
/// index); its `cell` is then its RM slot.
pub(super) const RM_PDU: u32 = u32::MAX;

/// The slot marker of an RM cell in the per-cell FIFOs and events.
pub(super) const fn is_rm(pdu: u32) -> bool {
    pdu == RM_PDU
}
