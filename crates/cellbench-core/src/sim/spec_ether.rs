//! The run spec's Ethernet: a host's Ethernet interface (`HostSpec::ethernet`),
//! the segments the hosts' interfaces make (one per site), and which
//! connections cross them (`ConnSpec::interface`). The mechanism is
//! `sim::net::ether`; this is its names and checks.

use super::net::ether::{Duplex, SegmentSpec};
use super::spec::HostSpec;
use super::testbeds::IFQ_MAXLEN;
use super::world::ScenarioError;
use crate::time::{BitRate, SimTime};

/// The interfaces a connection may use: the host's ATM adapter (its `phy`) or
/// its Ethernet interface (its `ethernet`).
pub const INTERFACES: [&str; 2] = ["atm", "ethernet"];

/// Propagation on the segment's cable, ps per metre: 5 ns/m (0.67 c, within
/// the 0.65-0.77 c of IEEE 802.3's coax and twisted pair; the fibre's figure).
const CABLE_PS_PER_M: f64 = 5_000.0;

fn err(msg: String) -> ScenarioError {
    ScenarioError(msg)
}

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
                Ok(v) if v.is_finite() && (0.001..=100_000.0).contains(&v) => {
                    Ok((BitRate((v * 1e6).round() as u64), Duplex::Full))
                }
                _ => Err(format!(
                    "Ethernet phy {name:?}: the rate {mbps:?} must be a number of Mb/s from \
                     0.001 to 100000"
                )),
            }
        }
    }
}

/// The segments the hosts' Ethernet interfaces make: the interfaces at one
/// site share one segment (one cable or hub), which must agree on rate and
/// duplex. Returns the segments and, per host, its segment.
pub fn segments(
    hosts: &[HostSpec],
) -> Result<(Vec<SegmentSpec>, Vec<Option<usize>>), ScenarioError> {
    let mut segments: Vec<SegmentSpec> = Vec::new();
    // Per segment: its site, the host that made it, its longest cable (m).
    let mut sites: Vec<(&str, &str, f64)> = Vec::new();
    let mut of_host = vec![None; hosts.len()];
    for (h, spec) in hosts.iter().enumerate() {
        let Some(phy) = spec.ethernet.as_deref() else {
            if spec.ethernet_duplex.is_some() {
                return Err(err(format!(
                    "host {:?}: ethernet_duplex without an Ethernet interface (ethernet = ...)",
                    spec.name
                )));
            }
            continue;
        };
        let (rate, default_duplex) =
            parse_phy(phy).map_err(|e| err(format!("host {:?}: {e}", spec.name)))?;
        let duplex = match spec.ethernet_duplex.as_deref() {
            None => default_duplex,
            Some("half") => Duplex::Half,
            Some("full") => Duplex::Full,
            Some(other) => {
                return Err(err(format!(
                    "host {:?}: ethernet_duplex {other:?}: expected half or full",
                    spec.name
                )))
            }
        };
        let i = match sites.iter().position(|s| s.0 == spec.site) {
            Some(i) => {
                let seg = &segments[i];
                if seg.rate != rate || seg.duplex != duplex {
                    return Err(err(format!(
                        "host {:?}: Ethernet {phy} ({} duplex) on site {:?}'s segment, which \
                         host {:?} made {} Mb/s {} duplex: one segment per site, one rate",
                        spec.name,
                        duplex.name(),
                        spec.site,
                        sites[i].1,
                        seg.rate.mbps(),
                        seg.duplex.name()
                    )));
                }
                i
            }
            None => {
                sites.push((&spec.site, &spec.name, 0.0));
                segments.push(SegmentSpec {
                    rate,
                    delay: SimTime::ZERO,
                    duplex,
                    stations: Vec::new(),
                    tx_queue_frames: spec.tx_queue_pdus.unwrap_or(IFQ_MAXLEN),
                });
                segments.len() - 1
            }
        };
        if duplex == Duplex::Full && segments[i].stations.len() == 2 {
            return Err(err(format!(
                "host {:?}: a third station on site {:?}'s full-duplex Ethernet: full duplex \
                 joins two hosts (ethernet_duplex = half makes it a shared segment; a switched \
                 Ethernet is not modelled)",
                spec.name, spec.site
            )));
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

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::spec::{RunSpec, SpecResult};

    /// Two SPARCstation IPCs (SunOS 4.1.1) with TAXI and an Ethernet interface
    /// each; one TCP connection over `interface`, `nbytes` in 8 KB writes.
    fn pair(ethernet: &str, interface: &str, snd: u32, rcv: u32, nbytes: u64) -> String {
        format!(
            r#"{{"hosts": [{{"name": "a", "ethernet": "{ethernet}"}},
                          {{"name": "b", "ethernet": "{ethernet}"}}],
                "connections": [{{"transmitter": "a", "receiver": "b", "interface": "{interface}",
                                  "sndbuf": {snd}, "rcvbuf": {rcv},
                                  "traffic": {{"type": "full", "nbytes": {nbytes}}}}}]}}"#
        )
    }

    fn run(json: &str) -> SpecResult {
        RunSpec::from_json(json).unwrap().run().unwrap()
    }

    #[test]
    fn ethernet_phys_parse_with_their_duplex() {
        assert_eq!(
            parse_phy("ethernet10"),
            Ok((BitRate(10_000_000), Duplex::Half))
        );
        assert_eq!(
            parse_phy("ethernet100"),
            Ok((BitRate(100_000_000), Duplex::Full))
        );
        assert_eq!(
            parse_phy("ethernet:2.5"),
            Ok((BitRate(2_500_000), Duplex::Full))
        );
        for bad in [
            "ethernet",
            "ethernet:0",
            "ethernet:fast",
            "rate:10",
            "taxi100",
        ] {
            assert!(parse_phy(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_connection_over_ethernet_runs_below_the_medium_rate() {
        let r = run(&pair("ethernet10", "ethernet", 16384, 16384, 1 << 20));
        let c = &r.connections[0];
        assert!(c.completed, "{c:?}");
        // 1460 bytes of data per 1538 byte times of 10 Mb/s: 9.49 Mb/s at most.
        assert!(c.throughput_bps < 9.4928e6, "{}", c.throughput_bps);
        assert!(c.throughput_bps > 8.0e6, "{}", c.throughput_bps);
        assert_eq!(c.limited_by, "link", "{}", c.limit_evidence);
        assert!(
            c.limit_evidence.contains("Ethernet"),
            "{}",
            c.limit_evidence
        );
        // No cell crossed the switch.
        assert!(r.ports.iter().all(|p| p.cells_in == 0));
        // The same hosts over their ATM interface are not held to 10 Mb/s.
        let atm = run(&pair("ethernet10", "atm", 16384, 16384, 1 << 20));
        assert!(atm.connections[0].throughput_bps > 1.3 * c.throughput_bps);
    }

    #[test]
    fn acks_on_a_shared_medium_cost_the_data_time() {
        let half = run(&pair("ethernet10", "ethernet", 16384, 16384, 1 << 20));
        let full = run(&pair("ethernet:10", "ethernet", 16384, 16384, 1 << 20));
        let (h, f) = (
            half.connections[0].throughput_bps,
            full.connections[0].throughput_bps,
        );
        assert!(h < f, "half {h} full {f}");
    }

    #[test]
    fn bad_ethernet_specs_name_the_value() {
        let e = |json: &str| RunSpec::from_json(json).unwrap().run().unwrap_err().0;
        let msg = e(&pair("ethernet7", "ethernet", 4096, 4096, 1000));
        assert!(
            msg.contains("\"ethernet7\"") && msg.contains("ethernet10"),
            "{msg}"
        );
        let msg = e(&pair("ethernet10", "token-ring", 4096, 4096, 1000));
        assert!(
            msg.contains("\"token-ring\"") && msg.contains("atm, ethernet"),
            "{msg}"
        );
        let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000)
            .replace("\"interface\"", "\"mtu\": 9188, \"interface\""));
        assert!(msg.contains("MTU 9188") && msg.contains("1500"), "{msg}");
        let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000).replace(
            "{\"name\": \"b\", \"ethernet\": \"ethernet10\"}",
            "{\"name\": \"b\"}",
        ));
        assert!(msg.contains("\"b\" has no Ethernet interface"), "{msg}");
        let msg = e(&pair("ethernet10", "ethernet", 4096, 4096, 1000).replace(
            "{\"name\": \"b\", \"ethernet\": \"ethernet10\"}",
            "{\"name\": \"b\", \"ethernet\": \"ethernet100\"}",
        ));
        assert!(msg.contains("one segment per site"), "{msg}");
    }

    #[test]
    fn the_footnote_locks_3k_send_6k_receive_and_neither_equal_pair() {
        // MSS 1460: a 3K send buffer holds 2 segments + 152 bytes; a 6K receive
        // buffer makes half the largest window 3K, more than that remainder.
        let mbps = |snd, rcv| {
            let r = run(&pair("ethernet10", "ethernet", snd, rcv, 1 << 20));
            let c = r.connections[0].clone();
            (c.throughput_bps / 1e6, c.lockstep, c.limited_by)
        };
        let locked = mbps(3072, 6144);
        assert!(locked.1 && locked.0 < 0.2, "{locked:?}");
        assert_eq!(locked.2, "lockstep");
        for (snd, rcv) in [(3072, 3072), (6144, 6144)] {
            let flowed = mbps(snd, rcv);
            assert!(
                !flowed.1 && flowed.0 > 20.0 * locked.0,
                "{snd}/{rcv}: {flowed:?}"
            );
        }
    }
}
