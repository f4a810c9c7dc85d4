//! Every key of a run spec (`sim::spec`) as data, for the front ends: per
//! record, its kind, unit, range and choices, each taken from the constant the
//! spec's checks use. The defaults are not written here: `sim::vocabulary`
//! reads them from the spec's serde defaults, so there is one copy of each.

use super::kind::Kind;
use super::net::{AdapterModel, PacedQuantity, MAX_NRM, MIN_NRM};
use super::spec::{ether, MAX_BLOCK, MAX_BLOCKS, MAX_DISTANCE_M, MAX_SECONDS, SPACING_MODES};
use super::world::MTU_RANGE;
use crate::atm::phy::CELL_BITS;
use crate::host::profile::HostProfile;
use crate::tcp::Flavour;
use crate::wire::llc_snap::Encap;
use serde::{Serialize, Serializer};

/// A switch port's drop policies, by the names a spec's `policy` takes
/// (`SwitchSpec`; tested to be exactly the ones it accepts).
pub const DROP_POLICIES: [&str; 3] = ["tail-drop", "ppd", "epd"];

/// The choices of a key whose names are listed elsewhere in the core.
#[derive(Copy, Clone, Debug)]
pub enum Choices {
    None,
    Fixed(&'static [&'static str]),
    Profiles,
    Flavours,
    Adapters,
    Encaps,
    PacingCounts,
}

/// A key's choices as the vocabulary lists them: their names.
impl Serialize for Choices {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

impl Choices {
    pub fn names(self) -> Vec<&'static str> {
        match self {
            Choices::None => Vec::new(),
            Choices::Fixed(names) => names.to_vec(),
            Choices::Profiles => HostProfile::names(),
            Choices::Flavours => Flavour::ALL.iter().map(|f| f.name()).collect(),
            Choices::Adapters => AdapterModel::ALL.iter().map(|(_, n)| *n).collect(),
            Choices::Encaps => Encap::ALL.iter().map(|e| e.name()).collect(),
            Choices::PacingCounts => PacedQuantity::NAMES.to_vec(),
        }
    }
}

/// One key of a spec record: `range` is inclusive unless `above` (then the
/// least is excluded: a time that must be > 0); a bound another key sets (an
/// EPD threshold within the buffer) is the spec's check, said in `note`. The
/// vocabulary writes it as it is (`choices` by name), its default beside it
/// ([`KeyEntry`]).
#[derive(Copy, Clone, Debug, Serialize)]
pub struct SpecKey {
    pub record: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub unit: &'static str,
    pub range: Option<(f64, f64)>,
    pub above: bool,
    pub choices: Choices,
    pub note: &'static str,
}

const fn key(record: &'static str, name: &'static str, kind: Kind, unit: &'static str) -> SpecKey {
    SpecKey {
        record,
        name,
        kind,
        unit,
        range: None,
        above: false,
        choices: Choices::None,
        note: "",
    }
}

impl SpecKey {
    const fn range(mut self, least: f64, most: f64) -> SpecKey {
        self.range = Some((least, most));
        self
    }
    /// A time or rate that must be above `least`.
    const fn above(mut self, least: f64, most: f64) -> SpecKey {
        self.range = Some((least, most));
        self.above = true;
        self
    }
    const fn choices(mut self, choices: Choices) -> SpecKey {
        self.choices = choices;
        self
    }
    const fn note(mut self, note: &'static str) -> SpecKey {
        self.note = note;
        self
    }
}

use Kind::{Bool, Float, Int, Record, Strings};
const STR: Kind = Kind::String;
/// A count the spec holds in a u32: at least 1.
const U32: f64 = u32::MAX as f64;
const US: f64 = MAX_SECONDS * 1e6;

/// Every key of `RunSpec` and the records in it (`SwitchSpec`, `HostSpec`,
/// `TrunkSpec`, `UpcSpec`, `ConnSpec`, the traffic types, `AbrSwitchSpec` and a
/// connection's `AbrSpec`); tested to be exactly
/// the keys the spec reads.
pub const SPEC_KEYS: &[SpecKey] = &[
    key("run", "seed", Int, ""),
    key("run", "replication", Int, ""),
    key("run", "trace", Bool, ""),
    key("run", "series", Bool, ""),
    key("run", "time_limit_s", Float, "s").above(0.0, MAX_SECONDS),
    key("run", "max_events", Int, "events"),
    key("run", "per_cell", Bool, ""),
    key("run", "switch", Record, ""),
    key("run", "sites", Record, ""),
    key("run", "hosts", Kind::Records, ""),
    key("run", "trunks", Kind::Records, ""),
    key("run", "connections", Kind::Records, ""),
    key("run", "cells", Record, ""),
    key("switch", "buffer_cells", Int, "cells").range(1.0, U32),
    key("switch", "policy", STR, "").choices(Choices::Fixed(&DROP_POLICIES)),
    key("switch", "epd_threshold_cells", Int, "cells")
        .range(1.0, U32)
        .note("at most buffer_cells"),
    key("switch", "clp1_threshold_cells", Int, "cells")
        .range(1.0, U32)
        .note("at most buffer_cells; none: off"),
    key("switch", "flow_control", STR, "").choices(Choices::Fixed(&["none", "credit"])),
    key("switch", "credits", Int, "cells per VC per hop")
        .range(1.0, U32)
        .note("with flow_control = credit"),
    key("switch", "abr", Record, ""),
    key("host", "name", STR, ""),
    key("host", "site", STR, ""),
    key("host", "profile", STR, "").choices(Choices::Profiles),
    key("host", "phy", STR, "").note("a named phy or rate:<Mb/s>"),
    key("host", "distance_m", Float, "m").range(0.0, MAX_DISTANCE_M),
    key("host", "pdu_gap_us", Float, "µs").range(0.0, US),
    key("host", "adapter", STR, "").choices(Choices::Adapters),
    key("host", "spacing", STR, "").choices(Choices::Fixed(&SPACING_MODES)),
    key("host", "flavour", STR, "").choices(Choices::Flavours),
    key("host", "spacing_us", Float, "µs")
        .above(0.0, US)
        .note("at least the line's cell time"),
    key("host", "stall", Bool, ""),
    key("host", "pacing_counts", STR, "").choices(Choices::PacingCounts),
    key("host", "tx_queue_pdus", Int, "PDUs").range(1.0, u64::MAX as f64),
    key("host", "ethernet", STR, "").note("ethernet10, ethernet100 or ethernet:<Mb/s>"),
    key("host", "ethernet_duplex", STR, "").choices(Choices::Fixed(&["half", "full"])),
    key("trunk", "from", STR, ""),
    key("trunk", "to", STR, ""),
    key("trunk", "phy", STR, ""),
    key("trunk", "delay_ms", Float, "ms").range(0.0, MAX_SECONDS * 1e3),
    key("trunk", "upc", Record, ""),
    key("upc", "t_us", Float, "µs").above(0.0, US),
    key("upc", "tau_us", Float, "µs").range(0.0, US),
    key("upc", "action", STR, "").choices(Choices::Fixed(&["discard", "tag"])),
    key("connection", "transmitter", STR, ""),
    key("connection", "receiver", STR, ""),
    key("connection", "protocol", STR, "").choices(Choices::Fixed(&["tcp", "udp"])),
    key("connection", "flavour", STR, "").choices(Choices::Flavours),
    key("connection", "mtu", Int, "bytes")
        .range(MTU_RANGE.0 as f64, MTU_RANGE.1 as f64)
        .note("less the encapsulation's header; at most 1500 over Ethernet"),
    key("connection", "encap", STR, "").choices(Choices::Encaps),
    key("connection", "sndbuf", Int, "bytes")
        .range(1.0, U32)
        .note("at most the flavour's largest socket buffer"),
    key("connection", "rcvbuf", Int, "bytes")
        .range(1.0, U32)
        .note("at most the flavour's largest socket buffer"),
    key("connection", "nodelay", Bool, ""),
    key("connection", "traffic", Record, ""),
    key("connection", "receiver_blocksize", Int, "bytes").range(1.0, U32),
    key("connection", "pacing_mbps", Float, "Mb/s")
        .above(0.0, f64::MAX)
        .note("at most the adapter's cell rate"),
    key("connection", "start_s", Float, "s").range(0.0, MAX_SECONDS),
    key("connection", "after", Strings, ""),
    key("connection", "interface", STR, "").choices(Choices::Fixed(&ether::INTERFACES)),
    key("connection", "abr", Record, ""),
    key("abr_switch", "kind", STR, "").choices(Choices::Fixed(&["efci", "relative", "erica"])),
    key("abr_switch", "threshold_cells", Int, "cells")
        .range(1.0, U32)
        .note("efci, relative: at most buffer_cells; none: half the buffer"),
    key("abr_switch", "target", Float, "")
        .above(0.0, 1.0)
        .note("erica"),
    key("abr_switch", "interval_us", Float, "µs")
        .above(0.0, US)
        .note("erica"),
    key("abr", "pcr_bps", Float, "bit/s (cells)")
        .range(CELL_BITS as f64, f64::MAX)
        .note("at most the transmitter's cell rate; none: that rate"),
    key("abr", "mcr_bps", Float, "bit/s (cells)")
        .range(0.0, f64::MAX)
        .note("at most pcr; none: 0"),
    key("abr", "icr_bps", Float, "bit/s (cells)")
        .above(0.0, f64::MAX)
        .note("between mcr and pcr; none: pcr"),
    key("abr", "rif", Float, "")
        .above(0.0, 1.0)
        .note("none: 1/16"),
    key("abr", "rdf", Float, "")
        .above(0.0, 1.0)
        .note("none: 1/16"),
    key("abr", "nrm", Int, "cells")
        .range(MIN_NRM as f64, MAX_NRM as f64)
        .note("none: 32"),
    key("traffic", "type", STR, "").choices(Choices::Fixed(&["full", "burst", "burstq", "rr"])),
    key("traffic", "blocksize", Float, "bytes")
        .range(1.0, MAX_BLOCK)
        .note("UDP: at most 65507"),
    key("traffic", "nbytes", Int, "bytes"),
    key("traffic", "duration_s", Float, "s").above(0.0, MAX_SECONDS),
    key("traffic", "period_us", Float, "µs").range(0.0, US),
    key("traffic", "blocks", Int, "blocks").range(1.0, MAX_BLOCKS as f64),
    key("traffic", "request", Int, "bytes").range(1.0, MAX_BLOCK),
    key("traffic", "response", Int, "bytes").range(1.0, MAX_BLOCK),
];

/// A key as the vocabulary gives it: the key's fields, its default beside them.
#[derive(Serialize)]
pub struct KeyEntry {
    #[serde(flatten)]
    pub key: SpecKey,
    pub default: serde_json::Value,
}

/// The table with each key's default from `defaults` (the spec's own, per record).
pub fn entries(defaults: &serde_json::Value) -> Vec<KeyEntry> {
    SPEC_KEYS
        .iter()
        .map(|&key| KeyEntry {
            key,
            default: defaults[key.record][key.name].clone(),
        })
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::spec::RunSpec;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn table(record: &str) -> BTreeSet<String> {
        SPEC_KEYS
            .iter()
            .filter(|k| k.record == record)
            .map(|k| k.name.to_string())
            .collect()
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// A spec with every optional key set: read and written back, its records'
    /// keys are the spec structs' fields, which the table must name exactly.
    #[test]
    fn the_table_names_every_key_of_a_spec() {
        let spec = RunSpec::from_json(
            r#"{"seed": 2, "max_events": 1000000, "per_cell": true,
            "switch": {"policy": "epd", "clp1_threshold_cells": 100, "flow_control": "credit",
                       "credits": 10, "abr": {"kind": "efci", "threshold_cells": 10}},
            "sites": {"w": {"abr": {"kind": "erica", "target": 0.9, "interval_us": 1000}}},
            "hosts": [{"name": "a", "site": "w", "pdu_gap_us": 1, "adapter": "sba200",
                       "spacing": "cell-level", "spacing_us": 10, "tx_queue_pdus": 5,
                       "ethernet": "ethernet10", "ethernet_duplex": "half"},
                      {"name": "b"}],
            "trunks": [{"from": "w", "to": "lan", "delay_ms": 1,
                        "upc": {"t_us": 3, "tau_us": 0}}],
            "connections": [{"transmitter": "a", "receiver": "b", "flavour": "reno",
                "mtu": 9180, "receiver_blocksize": 100, "pacing_mbps": 10, "start_s": 1,
                "after": [], "interface": "atm", "abr": {"pcr_bps": 1e6, "mcr_bps": 0,
                "icr_bps": 1e5, "rif": 0.5, "rdf": 0.5, "nrm": 32},
                "traffic": {"type": "burst", "blocksize": 100, "period_us": 1000,
                            "duration_s": 1, "blocks": 2}},
                {"transmitter": "a", "receiver": "b",
                 "traffic": {"type": "rr", "request": 2, "response": 3, "duration_s": 1}},
                {"transmitter": "a", "receiver": "b",
                 "traffic": {"type": "full", "nbytes": 10, "duration_s": 1}}],
            "cells": {"place": "b", "path": "x"}}"#,
        )
        .unwrap();
        let v = serde_json::to_value(&spec).unwrap();
        let mut traffic = BTreeSet::new();
        for c in v["connections"].as_array().unwrap() {
            traffic.extend(keys(&c["traffic"]));
        }
        let records = [
            ("run", keys(&v)),
            ("switch", keys(&v["switch"])),
            ("host", keys(&v["hosts"][0])),
            ("trunk", keys(&v["trunks"][0])),
            ("upc", keys(&v["trunks"][0]["upc"])),
            ("connection", keys(&v["connections"][0])),
            ("traffic", traffic),
            ("abr_switch", {
                let mut k = keys(&v["switch"]["abr"]);
                k.extend(keys(&v["sites"]["w"]["abr"]));
                k
            }),
            ("abr", keys(&v["connections"][0]["abr"])),
        ];
        for (record, spec_keys) in records {
            assert_eq!(table(record), spec_keys, "the {record} record's keys");
        }
    }

    /// Every range's least is at most its most, and every key's default (where
    /// the spec has one) lies in its range and among its choices.
    #[test]
    fn defaults_lie_in_their_ranges() {
        let v = crate::sim::vocabulary::vocabulary();
        for k in v["spec_keys"].as_array().unwrap() {
            let d = &k["default"];
            if let (Some(r), Some(x)) = (k["range"].as_array(), d.as_f64()) {
                let (lo, hi) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
                assert!(lo <= hi && lo <= x && x <= hi, "{k}");
            }
            let choices = k["choices"].as_array().unwrap();
            if !choices.is_empty() && !d.is_null() {
                assert!(choices.contains(d), "{k}");
            }
        }
    }
}
