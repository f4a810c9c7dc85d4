//! Where a run's cell tester can sit, by name (a switch output port as the ports
//! table names it, or a host's adapter), and the description written beside its
//! capture, which the simulator's captures and the emulator's `--pcap` share.

use super::{time_in, RunSpec};
use crate::atm::phy::CELL_BITS;
use crate::sim::net::Place;
use crate::sim::world::{Scenario, ScenarioError};
use crate::time::SimTime;

impl RunSpec {
    /// Where a capture is taken (`place`, a name of [`RunSpec::tester_places`]),
    /// written down beside its file in `PATH.json` for readers (`cellbench
    /// cells`): the link in words, its physical layer and modelled cell time,
    /// and the slot a tester counts in (`slot_us`, or that cell time). The
    /// simulator's captures and the emulator's `--pcap` are described alike.
    /// Returns the place, the link, the phy, the cell time and the slot.
    pub fn describe_capture(
        &self,
        scenario: &Scenario,
        place: &str,
        slot_us: Option<f64>,
        engine: &str,
        path: &str,
    ) -> Result<(Place, String, String, SimTime, SimTime), ScenarioError> {
        let (at, link, phy) = self.tester_place(place)?;
        let cell_time = match at {
            Place::Adapter(h) => scenario.topology.adapters[h].rate,
            Place::Port(p) => scenario.topology.ports[p].rate,
            Place::Receiver(_) => unreachable!("tester_place names no receiver"),
        }
        .time_for_bits(CELL_BITS);
        let slot = match slot_us {
            Some(us) => time_in("cells: slot", us, 1e6, "µs", true)
                .map_err(|e| ScenarioError::setting("run", "cells.slot_us", us, e))?,
            None => cell_time,
        };
        let payload = match engine {
            "sim" => {
                "simulated PDUs: the PDU's number in the run (8 bytes, big-endian), \
                      zeros, and a valid AAL5 trailer"
            }
            _ => "the emulated datagrams' own AAL5 PDUs",
        };
        let description = serde_json::json!({
            "format": "cellbench-cells",
            "version": 1,
            "engine": engine,
            "place": place,
            "link": link,
            "phy": phy,
            "cell_time_ps": cell_time.as_ps(),
            "slot_ps": slot.as_ps(),
            "seed": self.seed,
            "replication": self.replication,
            "time": match engine {
                "sim" => "each cell's start on the link, from the run's start",
                _ => "each cell's start on the link, from the emulator's start",
            },
            "payload": payload,
        });
        let fail = |e: &dyn std::fmt::Display| {
            ScenarioError::run(format!("cells: cannot write {path}.json: {e}"))
        };
        let text = serde_json::to_string_pretty(&description).map_err(|e| fail(&e))?;
        std::fs::write(format!("{path}.json"), text + "\n").map_err(|e| fail(&e))?;
        Ok((at, link, phy, cell_time, slot))
    }

    /// Every place a cell tester can sit, by the name `cells` takes: each
    /// switch output port as the ports table names it (a host's name for the
    /// port to it, `trunk a->b`), then each host's adapter (`adapter:HOST`).
    pub fn tester_places(&self) -> Vec<String> {
        let mut names = self.port_labels();
        names.extend(self.hosts.iter().map(|h| format!("adapter:{}", h.name)));
        names
    }

    /// The place a tester name means (a name of [`RunSpec::tester_places`], or a
    /// port's number), the link in words and its physical layer.
    pub fn tester_place(&self, name: &str) -> Result<(Place, String, String), ScenarioError> {
        let labels = self.port_labels();
        let port = labels
            .iter()
            .position(|l| l == name)
            .or_else(|| name.parse::<usize>().ok().filter(|&p| p < labels.len()));
        if let Some(p) = port {
            let phy = match self.hosts.get(p) {
                Some(h) => h.phy.clone(),
                None => self.trunks[(p - self.hosts.len()) / 2].phy.clone(),
            };
            let to = match self.hosts.get(p) {
                Some(h) => format!("to host {}", h.name),
                None => format!("onto {}", labels[p]),
            };
            return Ok((Place::Port(p), format!("switch output port {p} {to}"), phy));
        }
        if let Some(host) = name.strip_prefix("adapter:") {
            if let Some(h) = self.hosts.iter().position(|x| x.name == host) {
                let link = format!("host {host}'s adapter onto its access link");
                return Ok((Place::Adapter(h), link, self.hosts[h].phy.clone()));
            }
        }
        let reason = format!(
            "cells {name:?}: no such switch output port or adapter: expected one of {} \
             (a port also by its number, 0..={})",
            self.tester_places().join(", "),
            labels.len().saturating_sub(1)
        );
        Err(ScenarioError::setting("run", "cells.place", name, reason))
    }
}
