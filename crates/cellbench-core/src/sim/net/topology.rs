//! Checking a [`Topology`] and wiring it into the runtime tables.

use super::upc::PolicerRt;
use super::{
    AdapterRt, Agenda, CircuitCounters, CircuitId, CircuitRt, Element, Fidelity, LogScope, Network,
    Next, PolicerCounters, PortCounters, PortRt, StageRt, Topology, TopologyError, TxSpacing,
    VcState,
};
use crate::atm::gcra::Policer;
use crate::atm::phy::CELL_BITS;
use crate::time::{BitRate, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// The largest NNI VPI (12 bits).
const MAX_VPI: u16 = 4095;

fn cell_time(element: Element, rate: BitRate) -> Result<SimTime, TopologyError> {
    if rate.bps() == 0 {
        return Err(TopologyError::BadRate { element, rate });
    }
    let c = rate.time_for_bits(CELL_BITS);
    if c.as_ps() == 0 {
        return Err(TopologyError::BadRate { element, rate });
    }
    Ok(c)
}

/// Where a port's cells come from: one input link per source.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Source {
    Adapter(usize),
    Port(usize),
}

/// Check a topology and wire it into the runtime tables, step by step: sizes,
/// adapters, ports, circuits and their labels, pacing, Ethernet frames, VP
/// cross-connects, policers, the ports' inputs, then credits and ABR.
pub(super) fn build(t: Topology, fidelity: Fidelity) -> Result<Network, TopologyError> {
    check_sizes(&t)?;
    let adapters = build_adapters(&t)?;
    let mut ports = build_ports(&t)?;
    let (mut circuits, sources) = build_circuits(&t, adapters.len(), ports.len())?;
    attach_pacing(&t, &adapters, &mut circuits)?;
    let frames = super::ether::Frames::build(&t.segments, &t.framed, &t.circuits, adapters.len())
        .map_err(TopologyError::Ethernet)?;
    check_vp_cross_connects(&t, &circuits)?;
    let policers = attach_policers(&t, ports.len(), &mut circuits)?;
    wire_inputs(&mut ports, &sources);
    mark_gather(&mut ports, &circuits);
    check_loop_free(&ports)?;
    let credit_mode = attach_credits(&t, &adapters, &ports, &mut circuits)?;
    // ABR sources and switches (`abr.rs`) run on the same per-cell FIFOs.
    let port_rates: Vec<f64> = ports
        .iter()
        .map(|p| crate::time::PS_PER_SEC as f64 / p.cell.as_ps() as f64)
        .collect();
    let mut abr =
        super::abr::Abr::build(&t.abr_sources, &t.abr_ports, circuits.len(), &port_rates)?;
    let port_fifos = credit_mode;
    abr.plan_way_back(&circuits, |c, s| {
        stage_link(&adapters, &ports, &circuits[c], s)
    });
    let emitters = attach_abr_trains(
        &t,
        fidelity,
        credit_mode,
        &adapters,
        &mut ports,
        &circuits,
        &mut abr,
    );
    let abr_train = abr.train();
    let credit_mode = credit_mode || (abr.on && !abr_train);
    let txq = if credit_mode {
        vec![super::credit::TxQueue::default(); adapters.len() + ports.len()]
    } else {
        Vec::new()
    };
    // Credits are feedback from downstream: only the per-cell reference takes them.
    let fidelity = if credit_mode {
        Fidelity::PerCell
    } else {
        fidelity
    };

    Ok(Network {
        fidelity,
        adapters,
        ports,
        circuits,
        policers,
        pdus: Vec::new(),
        free_pdus: Vec::new(),
        next_serial: 0,
        agenda: Agenda::default(),
        now: SimTime::ZERO,
        events: 0,
        log_scope: LogScope::Off,
        log: Vec::new(),
        queue_series: None,
        dirty: Vec::new(),
        sweep: Vec::new(),
        txq,
        tx_runs: Vec::new(),
        kb_buffers: Vec::new(),
        frames,
        stage_drops: Default::default(),
        abr,
        emitters,
        abr_stale: Vec::new(),
        port_fifos,
        pieces: Vec::new(),
    })
}

/// ABR runs in trains (`abr_train.rs`) when asked, without credits, and with each ABR
/// circuit alone on its source adapter; else on the per-cell FIFOs. Its sources, one
/// per circuit (None: not ABR), when it does; none when it does not.
fn attach_abr_trains(
    t: &Topology,
    fidelity: Fidelity,
    credit_mode: bool,
    adapters: &[AdapterRt],
    ports: &mut [PortRt],
    circuits: &[CircuitRt],
    abr: &mut super::abr::Abr,
) -> Vec<Option<super::abr_train::Emitter>> {
    let abr_train = abr.on
        && !credit_mode
        && fidelity == Fidelity::Train
        && t.abr_sources.iter().all(|s| {
            let src = t.circuits[s.circuit].src;
            t.circuits.iter().filter(|c| c.src == src).count() == 1
        });
    if !abr_train {
        return Vec::new();
    }
    abr.train_mode = true;
    abr.open = vec![Vec::new(); ports.len()];
    abr.allow_ahead(circuits);
    let emitters = (0..circuits.len())
        .map(|c| {
            abr.is_source(c).then(|| {
                let last = circuits[c].stages.len() - 1;
                let last_link = stage_link(adapters, ports, &circuits[c], last);
                super::abr_train::Emitter::new(circuits[c].src, abr.way_home(c), last_link)
            })
        })
        .collect();
    // No port decides a cell ahead of the clock (`abr_train.rs`): a BRM reads the
    // state of a port with relative marking or ERICA as of its instant, and the
    // counters a run reports at its end are those of the per-cell reference (an
    // eager port would count cells arriving after the end).
    for p in ports.iter_mut() {
        p.eager = false;
    }
    emitters
}

/// Stage `s`'s link of a circuit: its cell time and propagation delay (the
/// adapter's at stage 0, the port's after).
fn stage_link(adapters: &[AdapterRt], ports: &[PortRt], circuit: &CircuitRt, s: usize) -> SimTime {
    if s == 0 {
        let ad = &adapters[circuit.src];
        ad.cell + ad.delay
    } else {
        let port = &ports[circuit.stages[s].port];
        port.cell + port.delay
    }
}

/// The counts the runtime tables index with u32.
fn check_sizes(t: &Topology) -> Result<(), TopologyError> {
    use TopologyError::*;
    if t.circuits.len() > u32::MAX as usize {
        return Err(TooLarge {
            what: "circuits",
            count: t.circuits.len(),
        });
    }
    if t.ports.len() > u32::MAX as usize {
        return Err(TooLarge {
            what: "ports",
            count: t.ports.len(),
        });
    }
    Ok(())
}

/// Each host's adapter, its spacing checked against its cell time.
fn build_adapters(t: &Topology) -> Result<Vec<AdapterRt>, TopologyError> {
    use TopologyError::*;
    let mut adapters = Vec::with_capacity(t.adapters.len());
    for (h, a) in t.adapters.iter().enumerate() {
        let cell = cell_time(Element::Adapter(h), a.rate)?;
        match a.tx {
            TxSpacing::PeakCellRate { interval } if interval < cell => {
                return Err(SpacingTooShort {
                    host: h,
                    interval,
                    cell_time: cell,
                })
            }
            TxSpacing::CellBurst { burst, period }
                if burst == 0 || period < cell.times(burst as u64) =>
            {
                return Err(BadBurst {
                    host: h,
                    burst,
                    period,
                    cell_time: cell,
                })
            }
            _ => {}
        }
        adapters.push(AdapterRt {
            cell,
            delay: a.delay,
            tx: a.tx,
            gap: a.pdu_gap,
            ifq: super::ifq::Ifq::new(a.tx_queue_pdus),
            free_at: SimTime::ZERO,
            spacing_free: SimTime::ZERO,
        });
    }
    Ok(adapters)
}

/// Each switch output port, its buffer and thresholds checked.
fn build_ports(t: &Topology) -> Result<Vec<PortRt>, TopologyError> {
    use TopologyError::*;
    let mut ports = Vec::with_capacity(t.ports.len());
    for (i, p) in t.ports.iter().enumerate() {
        let cell = cell_time(Element::Port(i), p.rate)?;
        if p.buffer_cells == 0 {
            return Err(ZeroBuffer { port: i });
        }
        if let super::DropPolicy::Epd { threshold_cells } = p.policy {
            if threshold_cells == 0 || threshold_cells > p.buffer_cells {
                return Err(EpdThreshold {
                    port: i,
                    threshold: threshold_cells,
                    buffer: p.buffer_cells,
                });
            }
        }
        if let Some(threshold) = p.clp1_threshold_cells {
            if threshold == 0 || threshold > p.buffer_cells {
                return Err(Clp1Threshold {
                    port: i,
                    threshold,
                    buffer: p.buffer_cells,
                });
            }
        }
        ports.push(PortRt {
            cell,
            delay: p.delay,
            buffer: super::port::Buffer {
                cells: p.buffer_cells,
                clp1_threshold: p.clp1_threshold_cells,
            },
            policy: p.policy,
            counters: PortCounters::default(),
            end: SimTime::ZERO,
            ends: VecDeque::new(),
            inputs: Vec::new(),
            heads: Default::default(),
            upstream: Vec::new(),
            eager: false,
            pulled_until: SimTime::ZERO,
            max_scheduled: SimTime::ZERO,
            sweep_at: SimTime::ZERO,
            dirty: false,
            in_sweep: false,
            gather: false,
            sink_steps: 0,
            sink_backoff: 0,
        });
    }

    Ok(ports)
}

/// Each circuit's stages (its adapter, then a stage per hop), its labels
/// checked unique per link; and per port, the input links its cells come by.
#[allow(clippy::type_complexity)]
fn build_circuits(
    t: &Topology,
    nadapters: usize,
    nports: usize,
) -> Result<(Vec<CircuitRt>, Vec<Vec<Source>>), TopologyError> {
    use TopologyError::*;
    let mut sources: Vec<Vec<Source>> = vec![Vec::new(); nports];
    let mut labels: BTreeMap<(Element, u16, u16), usize> = BTreeMap::new();
    let mut circuits = Vec::with_capacity(t.circuits.len());
    for (ci, c) in t.circuits.iter().enumerate() {
        for host in [c.src, c.dst] {
            if host >= nadapters {
                return Err(NoSuchHost {
                    circuit: ci,
                    host,
                    hosts: nadapters,
                });
            }
        }
        if c.hops.len() >= u16::MAX as usize {
            return Err(TooLarge {
                what: "hops",
                count: c.hops.len(),
            });
        }
        let mut check_label = |element: Element, vpi: u16, vci: u16| {
            if vpi > MAX_VPI {
                return Err(VpiTooLarge { circuit: ci, vpi });
            }
            match labels.insert((element, vpi, vci), ci) {
                Some(other) => Err(LabelClash {
                    element,
                    vpi,
                    vci,
                    circuits: (other, ci),
                }),
                None => Ok(()),
            }
        };
        check_label(Element::Adapter(c.src), c.vpi, c.vci)?;
        for (i, h) in c.hops.iter().enumerate() {
            if h.port >= nports {
                return Err(NoSuchPort {
                    circuit: ci,
                    port: h.port,
                    ports: nports,
                });
            }
            if c.hops[..i].iter().any(|e| e.port == h.port) {
                return Err(PortTwice {
                    circuit: ci,
                    port: h.port,
                });
            }
            check_label(Element::Port(h.port), h.vpi, h.vci)?;
        }
        let mut stages = Vec::with_capacity(c.hops.len() + 1);
        stages.push(StageRt {
            port: usize::MAX,
            next: Next::Receiver,
            vpi: c.vpi,
            vci: c.vci,
            vc: VcState::Idle,
            last_damaged: 0,
            policer: None,
            credit: None,
        });
        for (i, h) in c.hops.iter().enumerate() {
            let src = if i == 0 {
                Source::Adapter(c.src)
            } else {
                Source::Port(c.hops[i - 1].port)
            };
            let list = &mut sources[h.port];
            let slot = list.iter().position(|s| *s == src).unwrap_or_else(|| {
                list.push(src);
                list.len() - 1
            });
            stages[i].next = Next::Port { port: h.port, slot };
            stages.push(StageRt {
                port: h.port,
                next: Next::Receiver,
                vpi: h.vpi,
                vci: h.vci,
                vc: VcState::Idle,
                last_damaged: 0,
                policer: None,
                credit: None,
            });
        }
        circuits.push(CircuitRt {
            src: c.src,
            dst: c.dst,
            stages,
            rx_open: false,
            rx_cur: 0,
            counters: CircuitCounters::default(),
            pace: None,
            pace_free: SimTime::ZERO,
        });
    }
    Ok((circuits, sources))
}

/// A transmitter's per-VC pacing, one per circuit, no faster than its adapter's cells.
fn attach_pacing(
    t: &Topology,
    adapters: &[AdapterRt],
    circuits: &mut [CircuitRt],
) -> Result<(), TopologyError> {
    use TopologyError::*;
    for pc in &t.pacing {
        let bad = |cell_time| BadPacing {
            circuit: pc.circuit,
            interval: pc.interval,
            cell_time,
        };
        let Some(c) = circuits.get_mut(pc.circuit) else {
            return Err(bad(SimTime::ZERO));
        };
        let cell = adapters[c.src].cell;
        if pc.interval < cell || c.pace.is_some() {
            return Err(bad(cell));
        }
        c.pace = Some(*pc);
    }
    Ok(())
}

/// Each port's input FIFOs, one per source link, and the upstream ports (with
/// their cell time and delay) train mode pulls before resolving it.
fn wire_inputs(ports: &mut [PortRt], sources: &[Vec<Source>]) {
    for (p, list) in sources.iter().enumerate() {
        let upstream: Vec<(usize, SimTime)> = list
            .iter()
            .filter_map(|s| match *s {
                Source::Port(u) => Some((u, ports[u].cell + ports[u].delay)),
                Source::Adapter(_) => None,
            })
            .collect();
        let port = &mut ports[p];
        port.inputs = vec![VecDeque::new(); list.len()];
        port.eager = list.len() == 1;
        port.upstream = upstream;
    }
}

/// A port fed by several links may gather the cells it decides one by one into a
/// piece per circuit (`train.rs`) when no two of its circuits go on to the same port: pieces of
/// different circuits then never meet in one FIFO, so the order they are pushed
/// in cannot matter.
fn mark_gather(ports: &mut [PortRt], circuits: &[CircuitRt]) {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); ports.len()];
    for c in circuits {
        for s in &c.stages[1..] {
            let to = match s.next {
                Next::Port { port, .. } => port,
                Next::Receiver => usize::MAX,
            };
            next[s.port].push(to);
        }
    }
    for (port, mut to) in ports.iter_mut().zip(next) {
        to.retain(|&t| t != usize::MAX);
        let n = to.len();
        to.sort_unstable();
        to.dedup();
        // Cells interleave only where several links feed the port.
        port.gather = to.len() == n && port.inputs.len() > 1;
    }
}

/// The label a circuit's cells arrive with at stage `s` (>= 1): the one the
/// previous stage sends them with.
fn arrival_label(c: &CircuitRt, s: usize) -> (u16, u16) {
    (c.stages[s - 1].vpi, c.stages[s - 1].vci)
}

/// Each policer finds the circuits arriving at its port with its label.
fn attach_policers(
    t: &Topology,
    nports: usize,
    circuits: &mut [CircuitRt],
) -> Result<Vec<PolicerRt>, TopologyError> {
    use TopologyError::*;
    let mut policers = Vec::with_capacity(t.policers.len());
    for (i, ps) in t.policers.iter().enumerate() {
        if ps.port >= nports {
            return Err(PolicerPort {
                policer: i,
                port: ps.port,
            });
        }
        let policer = Policer::new(&ps.contract, ps.action)
            .map_err(|error| BadContract { policer: i, error })?;
        let mut matched = false;
        for (ci, c) in circuits.iter_mut().enumerate() {
            for s in 1..c.stages.len() {
                let (vpi, vci) = arrival_label(c, s);
                let st = &mut c.stages[s];
                if st.port != ps.port || vpi != ps.vpi || ps.vci.is_some_and(|v| v != vci) {
                    continue;
                }
                if let Some(other) = st.policer {
                    return Err(PolicerOverlap {
                        port: ps.port,
                        circuit: ci,
                        policers: (other as usize, i),
                    });
                }
                st.policer = Some(i as u32);
                matched = true;
            }
        }
        if !matched {
            return Err(PolicerMatchesNothing {
                policer: i,
                port: ps.port,
                vpi: ps.vpi,
                vci: ps.vci,
            });
        }
        policers.push(PolicerRt {
            policer,
            counters: PolicerCounters::default(),
        });
    }
    Ok(policers)
}

/// A VP cross-connect keeps each VCI and maps one incoming VP (link and VPI)
/// onto its outgoing VPI.
fn check_vp_cross_connects(t: &Topology, circuits: &[CircuitRt]) -> Result<(), TopologyError> {
    use TopologyError::*;
    for x in &t.vp_cross_connects {
        // (circuit, incoming link, incoming VPI) of the first circuit in the VP.
        let mut first: Option<(CircuitId, Source, u16)> = None;
        for (ci, c) in circuits.iter().enumerate() {
            for s in 1..c.stages.len() {
                let st = &c.stages[s];
                if st.port != x.port || st.vpi != x.vpi {
                    continue;
                }
                let (vpi_in, vci_in) = arrival_label(c, s);
                if vci_in != st.vci {
                    return Err(VpChangesVci {
                        circuit: ci,
                        port: x.port,
                        vci_in,
                        vci_out: st.vci,
                    });
                }
                let link = if s == 1 {
                    Source::Adapter(c.src)
                } else {
                    Source::Port(c.stages[s - 1].port)
                };
                match first {
                    None => first = Some((ci, link, vpi_in)),
                    Some((_, l, v)) if l == link && v == vpi_in => {}
                    Some((other, _, _)) => {
                        return Err(VpMerge {
                            port: x.port,
                            vpi: x.vpi,
                            circuits: (other, ci),
                        })
                    }
                }
            }
        }
        if first.is_none() {
            return Err(VpCrossConnectUnused {
                port: x.port,
                vpi: x.vpi,
            });
        }
    }
    Ok(())
}

/// Train mode resolves a port after pulling its upstream ports; a loop of ports
/// would need a windowed scheme instead (Kahn's algorithm finds one).
fn check_loop_free(ports: &[PortRt]) -> Result<(), TopologyError> {
    let mut indegree: Vec<usize> = ports.iter().map(|p| p.upstream.len()).collect();
    let mut downstream: Vec<Vec<usize>> = vec![Vec::new(); ports.len()];
    for (p, port) in ports.iter().enumerate() {
        for &(u, _) in &port.upstream {
            downstream[u].push(p);
        }
    }
    let mut ready: Vec<usize> = (0..ports.len()).filter(|&p| indegree[p] == 0).collect();
    let mut seen = 0;
    while let Some(u) = ready.pop() {
        seen += 1;
        for &p in &downstream[u] {
            indegree[p] -= 1;
            if indegree[p] == 0 {
                ready.push(p);
            }
        }
    }
    if seen == ports.len() {
        return Ok(());
    }
    let port = (0..ports.len()).find(|&p| indegree[p] > 0).unwrap_or(0);
    Err(TopologyError::PortCycle { port })
}

/// Each circuit's stage at a port with flow control gets the port's credits; the
/// credit comes back over the link the cells arrive by. True if any port has it.
fn attach_credits(
    t: &Topology,
    adapters: &[AdapterRt],
    ports: &[PortRt],
    circuits: &mut [CircuitRt],
) -> Result<bool, TopologyError> {
    let mut credits: Vec<Option<u32>> = vec![None; ports.len()];
    for fc in &t.flow_control {
        let bad = TopologyError::BadCredits {
            port: fc.port,
            credits: fc.credits,
        };
        match credits.get_mut(fc.port) {
            Some(slot @ None) if fc.credits > 0 => *slot = Some(fc.credits),
            _ => return Err(bad),
        }
    }
    for c in circuits.iter_mut() {
        for s in 1..c.stages.len() {
            let Some(n) = credits[c.stages[s].port] else {
                continue;
            };
            let delay = if s == 1 {
                adapters[c.src].delay
            } else {
                ports[c.stages[s - 1].port].delay
            };
            c.stages[s].credit = Some(super::credit::Credit { left: n, delay });
        }
    }
    Ok(!t.flow_control.is_empty())
}
