//! The run spec's Ethernet: a host's Ethernet interface (`HostSpec::ethernet`),
//! the segments the hosts' interfaces make (one per site), and which
//! connections cross them (`ConnSpec::interface`). The mechanism is
//! `sim::net::ether`; this is its names and checks.

use super::ConnSpec;
use crate::sim::era::IFQ_MAXLEN;
use crate::sim::net::ether::{Duplex, FramedCircuit, SegmentSpec};
use crate::sim::net::{CircuitId, CircuitSpec, Topology};
use crate::sim::world::{KeyPath, ScenarioError};
use crate::time::{BitRate, SimTime};

/// The interfaces a connection may use: the host's ATM adapter (its `phy`) or
/// its Ethernet interface (its `ethernet`).
pub const INTERFACES: [&str; 2] = ["atm", "ethernet"];

/// Propagation on the segment's cable, ps per metre: 5 ns/m (0.67 c, within
/// the 0.65-0.77 c of IEEE 802.3's coax and twisted pair; the fibre's figure).
const CABLE_PS_PER_M: f64 = 5_000.0;

/// The named Ethernet physical layers (`ethernet:<Mb/s>` names any other rate).
pub const NAMED_PHYS: [&str; 2] = ["ethernet10", "ethernet100"];

/// Ethernet II's MTU: what a connection over an Ethernet interface runs at.
pub const MTU: u32 = crate::wire::ethernet::MTU as u32;

/// The rates `ethernet:<Mb/s>` may name, Mb/s: a kilobit to 100 Gb/s.
pub const MBPS_RANGE: (f64, f64) = (0.001, 100_000.0);

/// An Ethernet physical layer by name: `ethernet10` (10 Mb/s, the era's shared
/// segment: half duplex), `ethernet100` (100 Mb/s, full duplex point to point)
/// or `ethernet:<Mb/s>` (full duplex). `rate:<Mb/s>` stays a cell link's name.
pub fn parse_phy(name: &str) -> Result<(BitRate, Duplex), String> {
    let expected = "expected ethernet10, ethernet100 or ethernet:<Mb/s>";
    match name {
        "ethernet10" => Ok((BitRate(10_000_000), Duplex::Half)),
        "ethernet100" => Ok((BitRate(100_000_000), Duplex::Full)),
        _ => {
            let Some(mbps) = name.strip_prefix("ethernet:") else {
                return Err(format!("Ethernet phy {name:?}: {expected}"));
            };
            match mbps.parse::<f64>() {
                Ok(v) if v.is_finite() && (MBPS_RANGE.0..=MBPS_RANGE.1).contains(&v) => {
                    Ok((BitRate((v * 1e6).round() as u64), Duplex::Full))
                }
                _ => Err(format!(
                    "Ethernet phy {name:?}: the rate {mbps:?} must be a number of Mb/s from \
                     {} to {}",
                    MBPS_RANGE.0, MBPS_RANGE.1
                )),
            }
        }
    }
}

/// A host's Ethernet interface as the run spec gives it (`HostSpec`'s fields).
pub struct Interface<'a> {
    pub name: &'a str,
    pub site: &'a str,
    /// `HostSpec::ethernet`: None, the host has none.
    pub phy: Option<&'a str>,
    pub duplex: Option<&'a str>,
    /// Its cable to the hub or tap.
    pub distance_m: f64,
    /// Its interface queue, frames (None: `ifq_maxlen`).
    pub queue: Option<usize>,
}

/// The segments the hosts' Ethernet interfaces make: the interfaces at one
/// site share one segment (one cable or hub), which must agree on rate and
/// duplex. Returns the segments and, per host, its segment.
pub fn segments(
    hosts: &[Interface],
) -> Result<(Vec<SegmentSpec>, Vec<Option<usize>>), ScenarioError> {
    let mut segments: Vec<SegmentSpec> = Vec::new();
    // Per segment: its site, the host that made it, its longest cable (m).
    let mut sites: Vec<(&str, &str, f64)> = Vec::new();
    let mut of_host = vec![None; hosts.len()];
    for (h, spec) in hosts.iter().enumerate() {
        // A refusal of this host's key (`ethernet`, `ethernet_duplex`).
        let at = |key, value: &str| KeyPath::new("host", key, value).named(Some(spec.name));
        let refuse = |key, value: &str, reason| ScenarioError::Setting {
            path: at(key, value),
            reason,
        };
        let Some(phy) = spec.phy else {
            if let Some(duplex) = spec.duplex {
                let reason = format!(
                    "host {:?}: ethernet_duplex without an Ethernet interface (ethernet = ...)",
                    spec.name
                );
                return Err(refuse("ethernet_duplex", duplex, reason));
            }
            continue;
        };
        let (rate, default_duplex) = parse_phy(phy)
            .map_err(|e| refuse("ethernet", phy, format!("host {:?}: {e}", spec.name)))?;
        let duplex = match spec.duplex {
            None => default_duplex,
            Some("half") => Duplex::Half,
            Some("full") => Duplex::Full,
            Some(other) => {
                let reason = format!(
                    "host {:?}: ethernet_duplex {other:?}: expected half or full",
                    spec.name
                );
                return Err(refuse("ethernet_duplex", other, reason));
            }
        };
        let i = match sites.iter().position(|s| s.0 == spec.site) {
            Some(i) => {
                let seg = &segments[i];
                if seg.rate != rate || seg.duplex != duplex {
                    // Against the interface of the host that made the segment.
                    let maker = &hosts[seg.stations[0]];
                    let made = KeyPath::new("host", "ethernet", maker.phy.unwrap_or_default())
                        .named(Some(maker.name));
                    let reason = format!(
                        "host {:?}: Ethernet {phy} ({} duplex) on site {:?}'s segment, which \
                         host {:?} made {} Mb/s {} duplex: one segment per site, one rate",
                        spec.name,
                        duplex.name(),
                        spec.site,
                        sites[i].1,
                        seg.rate.mbps(),
                        seg.duplex.name()
                    );
                    return Err(ScenarioError::conflict(at("ethernet", phy), made, reason));
                }
                i
            }
            None => {
                sites.push((spec.site, spec.name, 0.0));
                segments.push(SegmentSpec {
                    rate,
                    delay: SimTime::ZERO,
                    duplex,
                    stations: Vec::new(),
                    tx_queue_frames: spec.queue.unwrap_or(IFQ_MAXLEN),
                });
                segments.len() - 1
            }
        };
        if duplex == Duplex::Full && segments[i].stations.len() == 2 {
            let reason = format!(
                "host {:?}: a third station on site {:?}'s full-duplex Ethernet: full duplex \
                 joins two hosts (ethernet_duplex = half makes it a shared segment; a switched \
                 Ethernet is not modelled)",
                spec.name, spec.site
            );
            return Err(refuse("ethernet", phy, reason));
        }
        segments[i].stations.push(h);
        // Each station's cable to the hub or tap is its distance_m; the delay
        // between any two is taken as twice the longest (a bound: the farthest
        // pair, each at the longest cable's end).
        let longest = &mut sites[i].2;
        *longest = longest.max(spec.distance_m);
        segments[i].delay = SimTime((2.0 * *longest * CABLE_PS_PER_M).round() as u64);
        of_host[h] = Some(i);
    }
    Ok((segments, of_host))
}

/// A connection's Ethernet, if it uses one: its `interface` (None or `atm`: the
/// adapters and switches; `ethernet`: the segment both hosts' interfaces are
/// on), checked. Returns the segment and the connection's MTU there: its own
/// `mtu` (at most Ethernet II's 1500) or 1500. `what` names the connection `c`
/// (a refusal is its `interface` setting's, which connection: the caller's);
/// `hosts` are its ends (name, site, segment).
pub fn frame_link(
    what: &str,
    c: &ConnSpec,
    hosts: [(&str, &str, Option<usize>); 2],
) -> Result<Option<(usize, u32)>, ScenarioError> {
    let interface = match c.interface.as_deref() {
        None | Some("atm") => return Ok(None),
        Some(other @ "ethernet") => KeyPath::new("connection", "interface", other),
        Some(other) => {
            let reason = format!(
                "{what}: interface {other:?}: expected one of {}",
                INTERFACES.join(", ")
            );
            return Err(ScenarioError::setting(
                "connection",
                "interface",
                other,
                reason,
            ));
        }
    };
    let refuse = |reason| ScenarioError::Setting {
        path: interface.clone(),
        reason,
    };
    let mut on = [0; 2];
    for (k, (name, _, segment)) in hosts.iter().enumerate() {
        on[k] = segment.ok_or_else(|| {
            refuse(format!(
                "{what}: interface ethernet: host {name:?} has no Ethernet interface \
                 (ethernet = ethernet10, ...)"
            ))
        })?;
    }
    if on[0] != on[1] {
        return Err(refuse(format!(
            "{what}: interface ethernet: the hosts are on different sites' segments ({:?}, \
             {:?}): frames are not routed between segments",
            hosts[0].1, hosts[1].1
        )));
    }
    let max = MTU;
    let mtu = match c.mtu {
        None => max,
        Some(m) if m <= max => m,
        Some(m) => {
            return Err(ScenarioError::conflict(
                interface.clone(),
                KeyPath::new("connection", "mtu", m),
                format!("{what}: MTU {m} over Ethernet: at most {max} (Ethernet II)"),
            ))
        }
    };
    if let Some(mbps) = c.pacing_mbps {
        return Err(ScenarioError::conflict(
            interface,
            KeyPath::new("connection", "pacing_mbps", mbps),
            format!("{what}: pacing is an ATM adapter's: not over interface ethernet"),
        ));
    }
    Ok(Some((on[0], mtu)))
}

/// A connection's two circuits on Ethernet segment `segment`, `src` to `dst`
/// and back (labelled `vci` and `vci + 1` as on ATM, though no cell carries
/// them), framed; returns the forward one.
pub fn add_framed_circuits(
    topology: &mut Topology,
    (src, dst): (usize, usize),
    vci: u16,
    segment: usize,
) -> CircuitId {
    let fwd = topology.circuits.len();
    for (k, (from, to)) in [(src, dst), (dst, src)].into_iter().enumerate() {
        topology.framed.push(FramedCircuit {
            circuit: fwd + k,
            segment,
        });
        topology.circuits.push(CircuitSpec {
            src: from,
            dst: to,
            vpi: 0,
            vci: vci + k as u16,
            hops: Vec::new(),
        });
    }
    fwd
}
