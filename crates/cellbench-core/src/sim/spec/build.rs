//! A run spec built into the simulator's scenario, every value checked first (an
//! error names the value and what was expected): the hosts' adapters and the ports
//! to them, two ports per trunk, then per connection its circuit pair and its transfer.

use super::ether;
use super::routing::Routes;
use super::{
    seconds, time_in, AbrSpec, AbrSwitchSpec, ConnSpec, HostSpec, Param, RunSpec, SwitchSpec,
    Traffic, UpcSpec, ERICA_INTERVAL_US, ERICA_TARGET, MAX_BLOCK, MAX_BLOCKS, MAX_DISTANCE_M,
    SPACING_MODES,
};
use crate::atm::gcra::{Action, CellRate, Contract};
use crate::atm::phy::{Framing, Phy};
use crate::host::profile::{HostProfile, UnknownProfile};
use crate::host::rr::Transaction;
use crate::host::ttcp::{Limit, Pace};
use crate::sim::era::{FIBRE_PS_PER_M, IFQ_MAXLEN};
use crate::sim::guard::DEFAULT_EVENT_BUDGET;
use crate::sim::net::{
    AbrPort, AbrSource, AbrSwitch, AdapterModel, AdapterSpec, CircuitId, CircuitSpec, DropPolicy,
    Fidelity, FlowControl, Hop, PacedQuantity, PolicerSpec, PortSpec, SpacingMode, Topology,
    TxSpacing, VcPacing,
};
use crate::sim::world::{validate, KeyPath, Protocol, Scenario, ScenarioError, TransferSpec};
use crate::tcp::Flavour;
use crate::time::{BitRate, SimTime};
use crate::traffic::Dist;
use crate::wire::llc_snap::Encap;
use std::collections::BTreeMap;
use std::fmt;

impl UpcSpec {
    /// The contract, checked; a refusal names the trunk's key (its index: the caller's).
    fn contract(&self, what: &str) -> Result<Contract, ScenarioError> {
        let t_us = |reason| ScenarioError::setting("trunk", "upc.t_us", self.t_us, reason);
        let t = time_in(&format!("{what}: UPC T"), self.t_us, 1e6, "µs", true).map_err(t_us)?;
        let tau = time_in(&format!("{what}: UPC tau"), self.tau_us, 1e6, "µs", false)
            .map_err(|e| ScenarioError::setting("trunk", "upc.tau_us", self.tau_us, e))?;
        let pcr = CellRate::from_interval(t).map_err(|e| t_us(format!("{what}: {e}")))?;
        Ok(Contract::Cbr { pcr, cdvt: tau })
    }
}

/// What every output port of one switch applies.
#[derive(Copy, Clone)]
struct PortRules {
    buffer_cells: u32,
    policy: DropPolicy,
    clp1_threshold_cells: Option<u32>,
    credits: Option<u32>,
    abr: Option<AbrSwitch>,
}

/// Bits of a whole cell: ABR rates are cell rates, given in bit/s of cells.
const CELL_BITS: f64 = 424.0;

impl AbrSwitchSpec {
    /// The behaviour, checked; `buffer` is the port's buffer (cells). A refusal
    /// is the switch's `abr` setting's (which switch: the caller's).
    fn switch(&self, what: &str, buffer: u32) -> Result<AbrSwitch, ScenarioError> {
        let refuse = |reason| ScenarioError::setting("switch", "abr", &self.kind, reason);
        let threshold = match self.threshold_cells {
            Some(t) if t == 0 || t > buffer => {
                let reason =
                    format!("{what} abr threshold {t} cells: must be 1 to buffer_cells ({buffer})");
                return Err(if t == 0 {
                    refuse(reason)
                } else {
                    let buffer = KeyPath::new("switch", "buffer_cells", buffer);
                    let abr = KeyPath::new("switch", "abr", &self.kind);
                    ScenarioError::conflict(abr, buffer, reason)
                });
            }
            Some(t) => t,
            None => (buffer / 2).max(1),
        };
        let only_threshold = |kind: &str| {
            if self.target.is_some() || self.interval_us.is_some() {
                return Err(refuse(format!(
                    "{what} abr {kind}: target and interval_us are ERICA's; {kind} takes threshold"
                )));
            }
            Ok(())
        };
        match self.kind.as_str() {
            "efci" => {
                only_threshold("efci")?;
                Ok(AbrSwitch::Efci {
                    threshold_cells: threshold,
                })
            }
            "relative" => {
                only_threshold("relative")?;
                Ok(AbrSwitch::Relative {
                    threshold_cells: threshold,
                })
            }
            "erica" => {
                if self.threshold_cells.is_some() {
                    return Err(refuse(format!(
                        "{what} abr erica: threshold is for efci and relative; erica takes \
                         target and interval_us"
                    )));
                }
                let target = self.target.unwrap_or(ERICA_TARGET);
                if !(target > 0.0 && target <= 1.0) {
                    return Err(refuse(format!(
                        "{what} abr erica target {target}: must be above 0 and at most 1"
                    )));
                }
                let us = self.interval_us.unwrap_or(ERICA_INTERVAL_US);
                let interval = time_in(&format!("{what} abr erica interval"), us, 1e6, "µs", true)
                    .map_err(refuse)?;
                Ok(AbrSwitch::Erica { target, interval })
            }
            other => Err(refuse(format!(
                "{what} abr {other:?}: expected efci, relative or erica"
            ))),
        }
    }
}

impl AbrSpec {
    /// The source parameters of circuit `circuit`, checked; `link_bps` is the
    /// transmitter's access link rate (PCR's default and bound). A refusal is the
    /// connection's `abr` setting's (which connection: the caller's).
    fn source(
        &self,
        what: &str,
        circuit: CircuitId,
        link_bps: f64,
    ) -> Result<AbrSource, ScenarioError> {
        let pcr_bps = self.pcr_bps.unwrap_or(link_bps);
        if !(pcr_bps.is_finite() && pcr_bps >= CELL_BITS && pcr_bps <= link_bps) {
            return Err(ScenarioError::setting(
                "connection",
                "abr",
                "",
                format!(
                    "{what}: abr pcr {pcr_bps} bit/s: must be one cell/s (424 bit/s) to the \
                     transmitter's link rate ({link_bps} bit/s)"
                ),
            ));
        }
        let mut s = AbrSource::new(circuit, pcr_bps / CELL_BITS);
        if let Some(m) = self.mcr_bps {
            s.mcr = m / CELL_BITS;
        }
        s.icr = self.icr_bps.map_or(s.pcr, |i| i / CELL_BITS);
        s.rif = self.rif.unwrap_or(s.rif);
        s.rdf = self.rdf.unwrap_or(s.rdf);
        s.nrm = self.nrm.unwrap_or(s.nrm);
        s.crm = 16_777_215u32.div_ceil(s.nrm.max(1));
        s.check().map_err(|e| {
            let reason = format!(
                "{what}: abr (pcr {pcr_bps}, mcr {}, icr {}, rif {}, rdf {}, nrm {}): {e}",
                s.mcr * CELL_BITS,
                s.icr * CELL_BITS,
                s.rif,
                s.rdf,
                s.nrm
            );
            ScenarioError::setting("connection", "abr", "", reason)
        })?;
        Ok(s)
    }
}

impl SwitchSpec {
    /// The switch's port rules, checked: the testbed-wide switch (`site` None)
    /// or a site's; a refusal names the switch and the key.
    fn rules(&self, site: Option<&str>) -> Result<PortRules, ScenarioError> {
        let what = match site {
            Some(s) => format!("switch {s}"),
            None => "switch".to_string(),
        };
        let path = |key, value: &dyn fmt::Display| KeyPath::new("switch", key, value).named(site);
        let refuse = |key, value: &dyn fmt::Display, reason| ScenarioError::Setting {
            path: path(key, value),
            reason,
        };
        let buffer = self.buffer_cells;
        if buffer == 0 {
            return Err(refuse(
                "buffer_cells",
                &0,
                format!("{what} buffer_cells 0: every output port needs at least 1 cell"),
            ));
        }
        let policy = match self.policy.as_str() {
            "tail-drop" => DropPolicy::TailDrop,
            "ppd" => DropPolicy::Ppd,
            "epd" => {
                let t = self.epd_threshold_cells;
                let reason = format!(
                    "{what} epd_threshold_cells {t} exceeds buffer_cells {buffer}: \
                     the threshold must fit in the buffer"
                );
                if t == 0 {
                    return Err(refuse("epd_threshold_cells", &t, reason));
                }
                if t > buffer {
                    // Past the buffer: the threshold given, or the default one
                    // over a buffer the file made smaller (then the buffer leads).
                    let threshold = path("epd_threshold_cells", &t);
                    let buffer = path("buffer_cells", &buffer);
                    return Err(if t == super::epd_threshold() {
                        ScenarioError::conflict(buffer, threshold, reason)
                    } else {
                        ScenarioError::conflict(threshold, buffer, reason)
                    });
                }
                DropPolicy::Epd { threshold_cells: t }
            }
            other => {
                return Err(refuse(
                    "policy",
                    &other,
                    format!("{what} policy {other:?}: expected one of tail-drop, ppd, epd"),
                ))
            }
        };
        if let Some(t) = self.clp1_threshold_cells {
            if t == 0 || t > buffer {
                let reason = format!(
                    "{what} clp1_threshold_cells {t}: must be 1 to buffer_cells ({buffer})"
                );
                return Err(if t == 0 {
                    refuse("clp1_threshold_cells", &t, reason)
                } else {
                    let buffer = path("buffer_cells", &buffer);
                    ScenarioError::conflict(path("clp1_threshold_cells", &t), buffer, reason)
                });
            }
        }
        let credits = match (self.flow_control.as_str(), self.credits) {
            ("none", None) => None,
            ("none", Some(n)) => {
                return Err(ScenarioError::conflict(
                    path("credits", &n),
                    path("flow_control", &"none"),
                    format!("{what} credits {n}: credits need flow_control = credit"),
                ))
            }
            ("credit", Some(n)) if n >= 1 => Some(n),
            ("credit", other) => {
                let n = other.map_or("unset".to_string(), |n| n.to_string());
                let reason = format!(
                    "{what} flow_control credit with credits {n}: expected credits >= 1 \
                     (cells per VC per hop)"
                );
                return Err(match other {
                    Some(_) => refuse("credits", &n, reason),
                    None => refuse("flow_control", &"credit", reason),
                });
            }
            (other, _) => {
                return Err(refuse(
                    "flow_control",
                    &other,
                    format!("{what} flow_control {other:?}: expected none or credit"),
                ))
            }
        };
        let abr = match &self.abr {
            Some(a) => Some(a.switch(&what, buffer).map_err(|e| e.named(site))?),
            None => None,
        };
        Ok(PortRules {
            buffer_cells: buffer,
            policy,
            clp1_threshold_cells: self.clp1_threshold_cells,
            credits,
            abr,
        })
    }
}

/// What a host's adapter pacing counts, for a connection with `encap_header`
/// bytes of encapsulation.
fn paced_quantity(h: &HostSpec, encap_header: u32) -> Result<PacedQuantity, ScenarioError> {
    match h.pacing_counts.as_str() {
        "cells" => Ok(PacedQuantity::Cells),
        "payloads" => Ok(PacedQuantity::CellPayloads),
        "datagrams" => Ok(PacedQuantity::IpDatagrams { encap_header }),
        other => Err(h.refuse(
            "pacing_counts",
            other,
            format!(
                "host {:?}: pacing_counts {other:?}: expected one of {}",
                h.name,
                PacedQuantity::NAMES.join(", ")
            ),
        )),
    }
}

impl HostSpec {
    /// The host's adapter: the one it names, else its profile's.
    pub fn adapter_model(&self) -> Result<AdapterModel, ScenarioError> {
        let names = || {
            AdapterModel::ALL
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.adapter.as_deref() {
            Some(name) => AdapterModel::by_name(name).ok_or_else(|| {
                self.refuse(
                    "adapter",
                    name,
                    format!(
                        "host {:?}: adapter {name:?}: expected one of {}",
                        self.name,
                        names()
                    ),
                )
            }),
            // Every profile has its adapter (tested): an unknown one is the error.
            None => AdapterModel::of_profile(&self.profile).ok_or_else(|| self.unknown_profile()),
        }
    }
}

impl HostSpec {
    /// The host's adapter (its access link, cell spacing, PDU gap and interface
    /// queue), checked, and the modelled cell rate of its phy, which the switch's
    /// port to the host runs at.
    fn adapter(&self) -> Result<(AdapterSpec, BitRate), ScenarioError> {
        paced_quantity(self, 0)?;
        let phy: Phy = self
            .phy
            .parse()
            .map_err(|e| self.refuse("phy", &self.phy, format!("host {:?}: {e}", self.name)))?;
        let rate = phy.cell_rate(Framing::Modelled);
        if !self.distance_m.is_finite() || !(0.0..=MAX_DISTANCE_M).contains(&self.distance_m) {
            return Err(self.refuse(
                "distance_m",
                self.distance_m,
                format!(
                    "host {:?}: distance {} m: must be between 0 and {} km",
                    self.name,
                    self.distance_m,
                    MAX_DISTANCE_M / 1e3
                ),
            ));
        }
        let delay = SimTime((self.distance_m * FIBRE_PS_PER_M as f64).round() as u64);
        let model = self.adapter_model()?;
        let mode = match (self.spacing_us, self.spacing.as_deref()) {
            (_, Some(other)) if !SPACING_MODES.contains(&other) => {
                return Err(self.refuse(
                    "spacing",
                    other,
                    format!(
                        "host {:?}: spacing {other:?}: expected {}",
                        self.name,
                        SPACING_MODES.join(" or ")
                    ),
                ))
            }
            (None, _) => SpacingMode::Unspaced,
            (Some(_), Some("cell-burst")) => SpacingMode::CellBurst,
            (Some(_), _) => SpacingMode::CellLevel,
        };
        let timing = model.timing(mode);
        let gap = match self.pdu_gap_us {
            Some(us) => time_in(
                &format!("host {:?}: PDU gap", self.name),
                us,
                1e6,
                "µs",
                false,
            )
            .map_err(|e| self.refuse("pdu_gap_us", us, e))?,
            None if mode == SpacingMode::Unspaced => timing.pdu_gap.max(self.driver_pdu_gap(model)),
            None => timing.pdu_gap,
        };
        // The adapter's clock counts cell slots and its 0.492 µs idle units
        // from the unframed cell time (so 27 units give the published
        // 16.01 µs); the framer only jitters cells by a slot.
        let grid = phy.cell_rate(Framing::Neglected);
        let tx = match self.spacing_us {
            None => TxSpacing::None,
            Some(us) => {
                let requested = time_in(
                    &format!("host {:?}: spacing", self.name),
                    us,
                    1e6,
                    "µs",
                    true,
                )
                .map_err(|e| self.refuse("spacing_us", us, e))?;
                let spaced = match mode {
                    SpacingMode::CellBurst => TxSpacing::cell_burst(grid, requested),
                    _ => TxSpacing::cell_level(grid, requested, self.stall && timing.stall)
                        .map(|(tx, _)| tx),
                };
                spaced.map_err(|e| {
                    self.refuse("spacing_us", us, format!("host {:?}: {e}", self.name))
                })?
            }
        };
        let adapter_rate = match self.spacing_us {
            Some(_) => grid,
            None => rate,
        };
        let adapter = AdapterSpec {
            rate: adapter_rate,
            delay,
            tx,
            pdu_gap: gap,
            tx_queue_pdus: match self.tx_queue_pdus {
                Some(0) => {
                    return Err(self.refuse(
                        "tx_queue_pdus",
                        0,
                        format!(
                            "host {:?}: tx_queue_pdus 0: the interface queue holds at least 1",
                            self.name
                        ),
                    ))
                }
                Some(n) => n,
                None => IFQ_MAXLEN,
            },
        };
        Ok((adapter, rate))
    }

    /// The idle time between PDUs that the driver of the host's OS leaves on its own
    /// adapter, unspaced (`HostProfile::driver_pdu_gap`); another adapter has another
    /// driver.
    fn driver_pdu_gap(&self, model: AdapterModel) -> SimTime {
        match HostProfile::by_name(&self.profile) {
            Some(p) if AdapterModel::of_profile(&self.profile) == Some(model) => p.driver_pdu_gap,
            _ => SimTime::ZERO,
        }
    }

    /// The host's processing-cost profile, by its name.
    fn host_profile(&self) -> Result<HostProfile, ScenarioError> {
        HostProfile::by_name(&self.profile).ok_or_else(|| self.unknown_profile())
    }

    /// The refusal of a profile the core does not know, at the host's `profile` key.
    fn unknown_profile(&self) -> ScenarioError {
        self.refuse(
            "profile",
            &self.profile,
            format!(
                "host {:?}: {}",
                self.name,
                UnknownProfile(self.profile.clone())
            ),
        )
    }

    /// A refusal of this host's `key`, naming the host.
    fn refuse(&self, key: &'static str, value: impl fmt::Display, reason: String) -> ScenarioError {
        ScenarioError::setting("host", key, value, reason).named(Some(&self.name))
    }
}

/// A switch output port under `rules` onto a link of `rate` and `delay`, with
/// the switch's flow control if it has any; returns the port's number.
fn add_port(topology: &mut Topology, rules: PortRules, rate: BitRate, delay: SimTime) -> usize {
    let port = topology.ports.len();
    if let Some(credits) = rules.credits {
        topology.flow_control.push(FlowControl { port, credits });
    }
    if let Some(switch) = rules.abr {
        topology.abr_ports.push(AbrPort { port, switch });
    }
    topology.ports.push(PortSpec {
        rate,
        delay,
        buffer_cells: rules.buffer_cells,
        policy: rules.policy,
        clp1_threshold_cells: rules.clp1_threshold_cells,
    });
    port
}

/// What a connection's traffic asks of its transmitter.
struct Load {
    /// The block size (for request/response, the request's).
    blocksize: Param,
    limit: Limit,
    pace: Pace,
    transaction: Option<Transaction>,
}

impl RunSpec {
    /// Build the simulator's scenario: one switch, port h leading to host h.
    /// Every value the simulator would refuse is refused here, before anything runs.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        if self.hosts.is_empty() {
            let reason = "hosts: at least one host is needed";
            return Err(ScenarioError::setting("run", "hosts", "[]", reason));
        }
        let default_rules = self.switch.rules(None)?;
        let site_rules = self.site_rules()?;
        let rules_of = |site: &str| site_rules.get(site).copied().unwrap_or(default_rules);
        for (i, h) in self.hosts.iter().enumerate() {
            if self.hosts[..i].iter().any(|o| o.name == h.name) {
                return Err(h.refuse("name", &h.name, format!("host {:?} is named twice", h.name)));
            }
        }
        let mut topology = Topology::default();
        let mut profiles = Vec::new();
        for h in &self.hosts {
            let (adapter, rate) = h.adapter()?;
            topology.adapters.push(adapter);
            add_port(&mut topology, rules_of(&h.site), rate, adapter.delay);
            profiles.push(h.host_profile()?);
        }
        let routes = self.trunk_ports(&mut topology, &rules_of)?;
        let interfaces: Vec<ether::Interface> = self
            .hosts
            .iter()
            .map(|h| ether::Interface {
                name: &h.name,
                site: &h.site,
                phy: h.ethernet.as_deref(),
                duplex: h.ethernet_duplex.as_deref(),
                distance_m: h.distance_m,
                queue: h.tx_queue_pdus,
            })
            .collect();
        let (segments, segment_of) = ether::segments(&interfaces)?;
        topology.segments = segments;
        let mut transfers = Vec::new();
        for (i, c) in self.connections.iter().enumerate() {
            let links = Links {
                routes: &routes,
                segment_of: &segment_of,
            };
            let transfer = self.transfer(i, c, links, &profiles, &mut topology);
            transfers.push(transfer.map_err(|e| e.in_list("connection", i))?);
        }
        let scenario = Scenario {
            topology,
            hosts: profiles,
            transfers,
            seed: self.seed,
            replication: self.replication,
            fidelity: if self.per_cell {
                Fidelity::PerCell
            } else {
                Fidelity::Train
            },
            trace: self.trace,
            series: self.series,
            time_limit: seconds("time_limit_s", self.time_limit_s, true)
                .map_err(|e| ScenarioError::setting("run", "time_limit_s", self.time_limit_s, e))?,
            event_budget: self.max_events.unwrap_or(DEFAULT_EVENT_BUDGET),
        };
        validate(&scenario)?;
        Ok(scenario)
    }

    /// The port rules of each site whose switch `sites` gives, checked; a site
    /// named there must have a host or a trunk.
    fn site_rules(&self) -> Result<BTreeMap<&str, PortRules>, ScenarioError> {
        let mut site_rules = BTreeMap::new();
        for (site, sw) in &self.sites {
            let known = self.hosts.iter().any(|h| &h.site == site)
                || self.trunks.iter().any(|t| &t.from == site || &t.to == site);
            if !known {
                return Err(ScenarioError::record(
                    "switch",
                    format!("switch {site}: no host or trunk is at site {site:?}"),
                )
                .named(Some(site)));
            }
            site_rules.insert(site.as_str(), sw.rules(Some(site))?);
        }
        Ok(site_rules)
    }

    /// The index of the host named `name`, which the connection `what` names at
    /// its `key` (`transmitter`, `receiver`).
    fn host_index(
        &self,
        name: &str,
        what: &str,
        key: &'static str,
    ) -> Result<usize, ScenarioError> {
        self.hosts
            .iter()
            .position(|h| h.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
                let reason = format!(
                    "{what}: {key} {name:?} is not a host of the testbed: expected one of {}",
                    names.join(", ")
                );
                ScenarioError::setting("connection", key, name, reason)
            })
    }

    /// One output port per trunk direction (after the hosts' ports), with the
    /// trunk's UPC; the routes between sites over them.
    fn trunk_ports(
        &self,
        topology: &mut Topology,
        rules_of: &dyn Fn(&str) -> PortRules,
    ) -> Result<Routes, ScenarioError> {
        // A site without hosts is a transit switch (a public network's).
        let mut links = Vec::new();
        for (i, t) in self.trunks.iter().enumerate() {
            let what = format!("trunk {i} ({} -> {})", t.from, t.to);
            let refuse = |key, value: &dyn fmt::Display, reason| {
                ScenarioError::setting("trunk", key, value, reason).in_list("trunk", i)
            };
            if t.from == t.to {
                let reason = format!("{what}: a trunk joins two different sites");
                return Err(refuse("to", &t.to, reason));
            }
            let phy: Phy = t
                .phy
                .parse()
                .map_err(|e| refuse("phy", &t.phy, format!("{what}: {e}")))?;
            let rate = phy.cell_rate(Framing::Modelled);
            let delay = time_in(&format!("{what}: delay"), t.delay_ms, 1e3, "ms", false)
                .map_err(|e| refuse("delay_ms", &t.delay_ms, e))?;
            if let Some(u) = &t.upc {
                topology.policers.push(PolicerSpec {
                    port: topology.ports.len(),
                    vpi: 0,
                    vci: None,
                    contract: u.contract(&what).map_err(|e| e.in_list("trunk", i))?,
                    action: match u.action.as_str() {
                        "discard" => Action::Discard,
                        "tag" => Action::Tag,
                        other => {
                            let reason =
                                format!("{what}: UPC action {other:?}: expected discard or tag");
                            return Err(refuse("upc.action", &other, reason));
                        }
                    },
                });
            }
            for (from, to) in [(&t.from, &t.to), (&t.to, &t.from)] {
                // The port onto the trunk is the `from` site's switch's.
                let port = add_port(topology, rules_of(from), rate, delay);
                links.push((from.clone(), to.clone(), port));
            }
        }
        Ok(Routes { links })
    }

    /// Connection `i` as a transfer, its circuit pair (and its transmitter's
    /// pacing of it) added to the topology. A refusal names the connection's key
    /// (which connection: the caller's) or its host's.
    fn transfer(
        &self,
        i: usize,
        c: &ConnSpec,
        links: Links,
        profiles: &[HostProfile],
        topology: &mut Topology,
    ) -> Result<TransferSpec, ScenarioError> {
        let what = format!("connection {i} ({} -> {})", c.transmitter, c.receiver);
        let setting = |key, value: &dyn fmt::Display, reason| {
            ScenarioError::setting("connection", key, value, reason)
        };
        let key = |key, value: &dyn fmt::Display| KeyPath::new("connection", key, value);
        let src = self.host_index(&c.transmitter, &what, "transmitter")?;
        let dst = self.host_index(&c.receiver, &what, "receiver")?;
        if src == dst {
            return Err(ScenarioError::conflict(
                key("receiver", &c.receiver),
                key("transmitter", &c.transmitter),
                format!("{what}: transmitter and receiver are the same host"),
            ));
        }
        let protocol = match c.protocol.as_str() {
            "tcp" => Protocol::Tcp,
            "udp" => Protocol::Udp,
            other => {
                let reason = format!("{what}: protocol {other:?}: expected tcp or udp");
                return Err(setting("protocol", &other, reason));
            }
        };
        // Each end runs its own host's TCP, unless the connection names one for both.
        let flavour_of = |host: usize| -> Result<Flavour, ScenarioError> {
            let h = &self.hosts[host];
            let name = c.flavour.as_deref().unwrap_or(&h.flavour);
            name.parse().map_err(|e| {
                let reason = format!("{what}: {e}");
                match c.flavour {
                    Some(_) => setting("flavour", &name, reason),
                    None => h.refuse("flavour", name, reason),
                }
            })
        };
        let flavour = flavour_of(src)?;
        let receiver_flavour = flavour_of(dst)?;
        let encap: Encap = c
            .encap
            .parse()
            .map_err(|e| setting("encap", &c.encap, format!("{what}: {e}")))?;
        let mut mtu = c.mtu.unwrap_or(encap.default_mtu() as u32);
        let mut encap_header = encap.header_len() as u32;
        // Each connection gets its own VCI pair on every link.
        let vci = 100 + 2 * i as u16;
        let end = |h: usize| {
            let spec = &self.hosts[h];
            (spec.name.as_str(), spec.site.as_str(), links.segment_of[h])
        };
        let ends = [end(src), end(dst)];
        let frames = ether::frame_link(&what, c, ends)?;
        let fwd = match frames {
            Some((segment, frame_mtu)) => {
                mtu = frame_mtu;
                // Ethernet II: the frame's type field says IPv4; no LLC/SNAP header.
                encap_header = 0;
                ether::add_framed_circuits(topology, (src, dst), vci, segment)
            }
            None => self.add_circuits(&what, (src, dst), vci, links.routes, topology)?,
        };
        if let Some(abr) = &c.abr {
            let against = match (c.interface.as_deref(), c.pacing_mbps) {
                (Some(interface), _) if frames.is_some() => Some(key("interface", &interface)),
                (_, Some(mbps)) => Some(key("pacing_mbps", &mbps)),
                _ => None,
            };
            if let Some(other) = against {
                return Err(ScenarioError::conflict(
                    key("abr", &""),
                    other,
                    format!(
                        "{what}: abr is a service of ATM circuits, without pacing (its rate is ACR)"
                    ),
                ));
            }
            let link_bps = topology.adapters[src].rate.bps() as f64;
            topology.abr_sources.push(abr.source(&what, fwd, link_bps)?);
        }
        if let Some(mbps) = c.pacing_mbps {
            let counts = paced_quantity(&self.hosts[src], encap.header_len() as u32)?;
            let adapter_rate = topology.adapters[src].rate;
            let pace = pacing(&what, mbps, counts, fwd, adapter_rate)
                .map_err(|reason| setting("pacing_mbps", &mbps, reason))?;
            topology.pacing.push(pace);
        }
        let load = traffic_load(&what, c, protocol)?;
        let (buflen, block_size) =
            write_sizes(&what, protocol, load.blocksize, load.pace, &profiles[src])?;
        Ok(TransferSpec {
            protocol,
            sender: src,
            receiver: dst,
            circuit: fwd,
            return_circuit: fwd + 1,
            flavour,
            receiver_flavour,
            mtu,
            encap_header,
            sndbuf: c.sndbuf,
            rcvbuf: c.rcvbuf,
            nodelay: c.nodelay,
            buflen,
            read_size: c.receiver_blocksize,
            limit: load.limit,
            pace: load.pace,
            block_size,
            transaction: load.transaction,
            start: seconds(&format!("{what}: start"), c.start_s, false)
                .map_err(|e| setting("start_s", &c.start_s, e))?,
            after: c.after.clone(),
        })
    }

    /// A connection's two circuits, `src` to `dst` labelled `vci` and back
    /// labelled `vci + 1` (VPI 0), each over the fewest trunks between the hosts'
    /// sites and then the port to its host; returns the forward one.
    fn add_circuits(
        &self,
        what: &str,
        (src, dst): (usize, usize),
        vci: u16,
        routes: &Routes,
        topology: &mut Topology,
    ) -> Result<CircuitId, ScenarioError> {
        let fwd = topology.circuits.len();
        for (from, to, vci) in [(src, dst, vci), (dst, src, vci + 1)] {
            let (a, b) = (&self.hosts[from].site, &self.hosts[to].site);
            let path = routes.path(a, b).ok_or_else(|| {
                let reason = format!("{what}: no trunk joins site {a:?} to site {b:?}");
                ScenarioError::record("connection", reason)
            })?;
            let hops = path
                .iter()
                .chain(std::iter::once(&to))
                .map(|&port| Hop { port, vpi: 0, vci })
                .collect();
            topology.circuits.push(CircuitSpec {
                src: from,
                dst: to,
                vpi: 0,
                vci,
                hops,
            });
        }
        Ok(fwd)
    }
}

/// The transmitter's adapter pacing circuit `fwd` at `mbps` of what `counts`
/// counts, checked against what the adapter (its cells at `adapter_rate`) puts
/// on its link.
fn pacing(
    what: &str,
    mbps: f64,
    counts: PacedQuantity,
    fwd: CircuitId,
    adapter_rate: BitRate,
) -> Result<VcPacing, String> {
    // At most what the transmitter's adapter puts on its link, of
    // what the rate counts (a cell carries 48 bytes of a payload).
    let mut link = adapter_rate.mbps();
    let mut bound = "the adapter's cell rate".to_string();
    if counts != PacedQuantity::Cells {
        link = link * 48.0 / 53.0;
        bound = format!("the {} the adapter's cells carry", counts.describe());
    }
    let rate = (mbps.is_finite() && mbps > 0.0 && mbps <= link)
        .then(|| BitRate((mbps * 1e6).round() as u64))
        .ok_or_else(|| {
            format!(
                "{what}: pacing {mbps} Mb/s: must be > 0 and at most {bound}, \
                 {link} Mb/s"
            )
        })?;
    let pace = VcPacing::of(fwd, rate, counts);
    pace.map_err(|e| format!("{what}: {e}"))
}

/// A connection's traffic, checked, as its transmitter's load: full blast for
/// a byte count or a time, blocks every period, or netperf TCP_RR transactions.
fn traffic_load(what: &str, c: &ConnSpec, protocol: Protocol) -> Result<Load, ScenarioError> {
    let setting = |key, value: &dyn fmt::Display, reason| {
        ScenarioError::setting("connection", key, value, reason)
    };
    let duration = |d: f64| {
        seconds(&format!("{what}: duration"), d, true)
            .map_err(|e| setting("traffic.duration_s", &d, e))
    };
    let mut transaction = None;
    let (blocksize, limit, pace) = match c.traffic {
        Traffic::Full {
            blocksize,
            nbytes,
            duration_s,
        } => {
            let limit = match (nbytes, duration_s) {
                (Some(n), None) => Limit::Bytes(n),
                (None, Some(d)) => Limit::Duration(duration(d)?),
                (None, None) => Limit::Bytes(32 * 1024 * 1024),
                (Some(n), Some(d)) => {
                    return Err(ScenarioError::conflict(
                        KeyPath::new("connection", "traffic.nbytes", n),
                        KeyPath::new("connection", "traffic.duration_s", d),
                        format!("{what}: give nbytes or duration_s, not both"),
                    ))
                }
            };
            (blocksize, limit, Pace::Full)
        }
        Traffic::Burst {
            blocksize,
            period_us,
            duration_s,
            blocks,
        }
        | Traffic::Burstq {
            blocksize,
            period_us,
            duration_s,
            blocks,
        } => {
            let queue = matches!(c.traffic, Traffic::Burstq { .. });
            let d = duration(duration_s)?;
            if !(1..=MAX_BLOCKS).contains(&blocks) {
                let reason =
                    format!("{what}: blocks {blocks}: blocks per period must be 1 to {MAX_BLOCKS}");
                return Err(setting("traffic.blocks", &blocks, reason));
            }
            (
                blocksize,
                Limit::Duration(d),
                Pace::Every {
                    period_us: period_us.dist(),
                    queue,
                    blocks,
                },
            )
        }
        Traffic::Rr {
            request,
            response,
            duration_s,
        } => {
            if protocol != Protocol::Tcp {
                let reason = format!(
                    "{what}: traffic rr is TCP_RR: protocol {:?} must be tcp",
                    c.protocol
                );
                return Err(setting("protocol", &c.protocol, reason));
            }
            for (name, key, v) in [
                ("request", "traffic.request", request),
                ("response", "traffic.response", response),
            ] {
                if !(1..=MAX_BLOCK as u32).contains(&v) {
                    let reason =
                        format!("{what}: {name} {v} bytes: must be 1 to {MAX_BLOCK} bytes");
                    return Err(setting(key, &v, reason));
                }
            }
            transaction = Some(Transaction { request, response });
            let d = duration(duration_s)?;
            // The request is the transmitter's write.
            (Param::Value(request as f64), Limit::Duration(d), Pace::Full)
        }
    };
    Ok(Load {
        blocksize,
        limit,
        pace,
        transaction,
    })
}

/// The write size (ttcp -l) of a connection's blocks and, for a drawn size, its
/// law; checked: at least 1 byte, at most the largest write (a UDP datagram's
/// 65507 bytes), and periods no shorter than one write() on the transmitter.
fn write_sizes(
    what: &str,
    protocol: Protocol,
    blocksize: Param,
    pace: Pace,
    profile: &HostProfile,
) -> Result<(u32, Option<Dist>), ScenarioError> {
    // A fixed block size is the write size; a drawn one is capped by it.
    let max_block = if protocol == Protocol::Udp {
        65_507.0
    } else {
        MAX_BLOCK
    };
    let size = blocksize.dist();
    let refuse = |reason| ScenarioError::setting("connection", "traffic.blocksize", size, reason);
    size.check(&format!("{what}: blocksize"), max_block)
        .map_err(|e| refuse(e.to_string()))?;
    if let Dist::Fixed(least) | Dist::Uniform(least, _) = size {
        if least < 1.0 {
            return Err(refuse(format!(
                "{what}: blocksize {size}: a block is at least 1 byte"
            )));
        }
    }
    if let Pace::Every { period_us, .. } = pace {
        // A source cannot write blocks more often than one write() takes: a
        // shorter period only adds due-and-skipped blocks (events) to the run.
        let floor = profile.syscall.as_us_f64();
        let least = match period_us {
            Dist::Fixed(v) | Dist::Uniform(v, _) | Dist::Exponential(v) => v,
        };
        if least < floor {
            let reason = format!(
                "{what}: block period {period_us} µs: at least {floor} µs, the time \
                 one write() takes on {} (no host writes blocks more often)",
                profile.name
            );
            return Err(ScenarioError::setting(
                "connection",
                "traffic.period_us",
                period_us,
                reason,
            ));
        }
    }
    Ok(match size {
        Dist::Fixed(v) => (v.round() as u32, None),
        Dist::Uniform(_, hi) => (hi.round() as u32, Some(size)),
        Dist::Exponential(_) => (max_block as u32, Some(size)),
    })
}

/// How a connection's hosts are joined: the ATM routes between sites, and each
/// host's Ethernet segment (None: it has no Ethernet interface).
#[derive(Copy, Clone)]
struct Links<'a> {
    routes: &'a Routes,
    segment_of: &'a [Option<usize>],
}
