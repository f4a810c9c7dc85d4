//! Checking a [`Topology`] and wiring it into the runtime tables.

use super::{
    AdapterRt, Agenda, CircuitCounters, CircuitRt, Element, Fidelity, Network, Next, PortCounters,
    PortRt, StageRt, Topology, TopologyError, TxSpacing, VcState,
};
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

pub(super) fn build(t: Topology, fidelity: Fidelity) -> Result<Network, TopologyError> {
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
    let mut adapters = Vec::with_capacity(t.adapters.len());
    for (h, a) in t.adapters.iter().enumerate() {
        let cell = cell_time(Element::Adapter(h), a.rate)?;
        let interval = match a.tx {
            TxSpacing::None => cell,
            TxSpacing::PeakCellRate { interval } if interval >= cell => interval,
            TxSpacing::PeakCellRate { interval } => {
                return Err(SpacingTooShort {
                    host: h,
                    interval,
                    cell_time: cell,
                })
            }
        };
        adapters.push(AdapterRt {
            cell,
            delay: a.delay,
            interval,
            gap: a.pdu_gap,
            queue_max: a.tx_queue_pdus,
            waiting: VecDeque::new(),
            free_at: SimTime::ZERO,
        });
    }
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
        ports.push(PortRt {
            cell,
            delay: p.delay,
            buffer: p.buffer_cells,
            policy: p.policy,
            counters: PortCounters::default(),
            end: SimTime::ZERO,
            ends: VecDeque::new(),
            inputs: Vec::new(),
            upstream: Vec::new(),
            eager: false,
            pulled_until: SimTime::ZERO,
            max_scheduled: SimTime::ZERO,
            sweep_at: SimTime::ZERO,
            dirty: false,
            in_sweep: false,
        });
    }

    let mut sources: Vec<Vec<Source>> = vec![Vec::new(); ports.len()];
    let mut labels: BTreeMap<(Element, u16, u16), usize> = BTreeMap::new();
    let mut circuits = Vec::with_capacity(t.circuits.len());
    for (ci, c) in t.circuits.iter().enumerate() {
        for host in [c.src, c.dst] {
            if host >= adapters.len() {
                return Err(NoSuchHost {
                    circuit: ci,
                    host,
                    hosts: adapters.len(),
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
            if h.port >= ports.len() {
                return Err(NoSuchPort {
                    circuit: ci,
                    port: h.port,
                    ports: ports.len(),
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
            });
        }
        circuits.push(CircuitRt {
            src: c.src,
            dst: c.dst,
            stages,
            rx_open: false,
            rx_cur: 0,
            counters: CircuitCounters::default(),
        });
    }

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
    check_loop_free(&ports)?;

    Ok(Network {
        fidelity,
        adapters,
        ports,
        circuits,
        pdus: Vec::new(),
        free_pdus: Vec::new(),
        next_serial: 0,
        agenda: Agenda::default(),
        now: SimTime::ZERO,
        events: 0,
        log_on: false,
        log: Vec::new(),
        dirty: Vec::new(),
        sweep: Vec::new(),
    })
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
