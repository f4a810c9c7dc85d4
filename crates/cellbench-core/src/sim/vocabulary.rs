//! The words the simulator shares with its front ends, in one place: the
//! physical layers and drop policies a spec names, what can bound a connection,
//! the defaults and limits a spec is read with, the fibre's delay, and every
//! field of a result with its unit. Python reads it (the native module's `vocabulary()`)
//! and builds its checks and its store from it instead of keeping copies.

use super::era::FIBRE_PS_PER_M;
use super::explain::{
    LimitedBy, ACR_DRIFT, APPLICATION_SHARE, CPU_BUSY, LINK_SHARE, NAGLE_HOLD, WINDOW_CLOSED,
    WINDOW_SHARE,
};
use super::kind::Kind;
use super::spec::{
    ether, ConnSpec, RunSpec, Traffic, BUDGET_CUT, ERICA_INTERVAL_US, ERICA_TARGET, MAX_BLOCK,
    MAX_SECONDS, TRUNCATED,
};
use super::spec_keys::DROP_POLICIES;
use super::world::MTU_RANGE;
use crate::atm::phy::Phy;
use crate::host::udp::MAX_DATAGRAM;
use crate::wire::llc_snap::Encap;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One field of a result: the record it belongs to (`run`: the whole result;
/// `connection`, `lockstep_cycle`, `trace`, `port`, `policer`, `cells`), its
/// JSON key, what it holds, its unit ("" for none) and, for a nested field, the
/// record its items are.
#[derive(Copy, Clone, Debug, Serialize)]
pub struct ResultField {
    pub record: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub unit: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<&'static str>,
}

const fn f(
    record: &'static str,
    name: &'static str,
    kind: Kind,
    unit: &'static str,
) -> ResultField {
    ResultField {
        record,
        name,
        kind,
        unit,
        items: None,
    }
}

const fn nested(
    record: &'static str,
    name: &'static str,
    kind: Kind,
    items: &'static str,
) -> ResultField {
    ResultField {
        record,
        name,
        kind,
        unit: "",
        items: Some(items),
    }
}

use Kind::{Bool, Float, Int, Series, Strings};
const STR: Kind = Kind::String;

/// Every field of `SpecResult` and the records in it (`ConnResult`,
/// `CycleResult`, `TraceRow`, `PortResult`, `PolicerResult`, `CellsResult`).
/// The connection's scalar fields come in the order the result store first kept
/// them as columns (a store appends new ones): add a new field at the end.
pub const RESULT_FIELDS: &[ResultField] = &[
    f("connection", "start_s", Float, "s"),
    f("connection", "end_s", Float, "s"),
    f("connection", "completed", Bool, ""),
    f("connection", "bytes", Int, "bytes"),
    f("connection", "sender_seconds", Float, "s"),
    f("connection", "receiver_seconds", Float, "s"),
    f("connection", "throughput_bps", Float, "bit/s"),
    f(
        "connection",
        "throughput_mbit_ttcp",
        Float,
        "Mbit/s (2^20 bit/s, ttcp's)",
    ),
    f("connection", "goodput_bps", Float, "bit/s"),
    f("connection", "lockstep", Bool, ""),
    f("connection", "circular_wait_seconds", Float, "s"),
    f("connection", "data_segments", Int, "segments"),
    f("connection", "retransmitted_segments", Int, "segments"),
    f("connection", "timeouts", Int, "timeouts"),
    f("connection", "receiver_acks", Int, "segments"),
    f("connection", "delayed_acks", Int, "segments"),
    f("connection", "window_updates", Int, "segments"),
    f("connection", "cells_lost", Int, "cells"),
    f("connection", "data_pdus_sent", Int, "PDUs"),
    f("connection", "data_pdus_lost", Int, "PDUs"),
    f("connection", "cells_policed", Int, "cells"),
    f("connection", "cells_tagged", Int, "cells"),
    f("connection", "cells_lost_clp", Int, "cells"),
    f("connection", "pdus_dropped_at_adapter", Int, "PDUs"),
    f("connection", "datagrams_sent", Int, "datagrams"),
    f("connection", "datagrams_received", Int, "datagrams"),
    f(
        "connection",
        "datagrams_dropped_no_buffer",
        Int,
        "datagrams",
    ),
    f("run", "events", Int, "events"),
    f("run", "sim_seconds", Float, "s"),
    f("lockstep_cycle", "bytes_per_tick", Float, "bytes"),
    f("lockstep_cycle", "period_s", Float, "s"),
    f("lockstep_cycle", "predicted_bps", Float, "bit/s"),
    f("lockstep_cycle", "pattern", Strings, ""),
    f("connection", "limited_by", STR, ""),
    f("connection", "limit_evidence", STR, ""),
    f("policer", "met_contract", Bool, ""),
    f("connection", "transactions", Int, "transactions"),
    f("connection", "transaction_rate", Float, "transactions/s"),
    // Stored since the vocabulary was.
    f("connection", "transmitter", STR, ""),
    f("connection", "receiver", STR, ""),
    f("connection", "bytes_received", Int, "bytes"),
    f("connection", "writes", Int, "calls"),
    f("connection", "reads", Int, "calls"),
    f("connection", "min_rtt_s", Float, "s"),
    f("connection", "peak_flight_bytes", Int, "bytes"),
    f("connection", "sender_cpu_busy", Float, "share (0..1)"),
    f("connection", "receiver_cpu_busy", Float, "share (0..1)"),
    f("connection", "path_payload_bps", Float, "bit/s"),
    f("lockstep_cycle", "ticks", Int, "ticks"),
    f("lockstep_cycle", "pattern_repeats", Int, "cycles"),
    f("connection", "sender_bps", Float, "bit/s"),
    // ABR (sim::net::abr): per connection its data circuit's source, per port its switch.
    f("connection", "abr_acr_bps", Float, "bit/s (cells)"),
    f("connection", "abr_acr_min_bps", Float, "bit/s (cells)"),
    f("connection", "abr_acr_mean_bps", Float, "bit/s (cells)"),
    f("connection", "abr_frm_sent", Int, "cells"),
    f("connection", "abr_brm_returned", Int, "cells"),
    f("connection", "abr_rm_lost", Int, "cells"),
    f("connection", "abr_time_at_mcr_s", Float, "s"),
    f(
        "connection",
        "acr_series",
        Series,
        "[t_s, acr_bps]: s, bit/s (cells)",
    ),
    f("port", "abr_er_bps", Float, "bit/s (cells)"),
    f("port", "abr_er_min_bps", Float, "bit/s (cells)"),
    f("port", "abr_er_max_bps", Float, "bit/s (cells)"),
    f("port", "abr_efci_marked", Int, "cells"),
    f("port", "abr_ci_set", Int, "cells"),
    f("port", "abr_ni_set", Int, "cells"),
    // The nested records.
    nested("run", "connections", Kind::Records, "connection"),
    nested("run", "ports", Kind::Records, "port"),
    nested("run", "policers", Kind::Records, "policer"),
    nested("run", "cells", Kind::Record, "cells"),
    f("connection", "trace", Strings, ""),
    nested("connection", "trace_records", Kind::Columns, "trace"),
    nested(
        "connection",
        "lockstep_cycle",
        Kind::Record,
        "lockstep_cycle",
    ),
    f(
        "connection",
        "cwnd_series",
        Series,
        "[t_s, cwnd, ssthresh, flight]: s, bytes, bytes, bytes",
    ),
    f("trace", "t_s", Float, "s"),
    f("trace", "from_sender", Bool, ""),
    f("trace", "flags", STR, ""),
    f("trace", "seq", Int, "sequence number"),
    f("trace", "len", Int, "bytes"),
    f("trace", "ack", Int, "sequence number"),
    f("trace", "win", Int, "bytes (as sent, scaled)"),
    f("trace", "reason", STR, ""),
    f("port", "port", Int, ""),
    f("port", "host", STR, ""),
    f("port", "cells_in", Int, "cells"),
    f("port", "cells_out", Int, "cells"),
    f("port", "cells_lost", Int, "cells"),
    f("port", "peak_occupancy", Int, "cells"),
    f("port", "cells_lost_clp", Int, "cells"),
    f("port", "cells_tagged", Int, "cells"),
    f("port", "cells_lost_overflow", Int, "cells"),
    f("port", "cells_lost_ppd", Int, "cells"),
    f("port", "cells_lost_epd", Int, "cells"),
    f("port", "cells_lost_policed", Int, "cells"),
    f("port", "pdus_damaged", Int, "PDUs"),
    f("port", "queue_series", Series, "[t_s, cells]: s, cells"),
    f("policer", "trunk", STR, ""),
    f("policer", "cells_in", Int, "cells"),
    f("policer", "conforming", Int, "cells"),
    f("policer", "non_conforming", Int, "cells"),
    f("cells", "place", STR, ""),
    f("cells", "link", STR, ""),
    f("cells", "path", STR, ""),
    f("cells", "phy", STR, ""),
    f("cells", "cell_time_ps", Int, "ps"),
    f("cells", "slot_ps", Int, "ps"),
    f("cells", "cells", Int, "cells"),
    f("cells", "pdus", Int, "PDUs"),
    f("cells", "cells_after_end", Int, "cells"),
    // Many connections through one port (issue 34): backoff, wasted cells, fairness.
    f("connection", "max_backoff", Int, "timeouts in a row"),
    f("connection", "rexmt_wait_s", Float, "s"),
    f("port", "cells_delivered", Int, "cells"),
    f("port", "cells_wasted", Int, "cells"),
    f("port", "idle_s", Float, "s"),
    f("run", "fairness_jain", Float, "index (1/n..1)"),
    f("run", "starved", Strings, ""),
    // Each end's interface-queue refusals (`pdus_dropped_at_adapter` is both
    // together): the sender's data, the receiver's ACKs.
    f("connection", "pdus_dropped_at_sender_adapter", Int, "PDUs"),
    f(
        "connection",
        "pdus_dropped_at_receiver_adapter",
        Int,
        "PDUs",
    ),
];

/// The vocabulary as one JSON document (what the Python binding `vocabulary()` returns):
///
/// - `phys`: the named physical layers (`rate:<Mb/s>` names any other rate);
/// - `ethernet`: a host's Ethernet interface: its named physical layers
///   (`ethernet:<Mb/s>` names any other rate), the interfaces a connection may
///   use, and Ethernet II's MTU;
/// - `policies`: the drop policies;
/// - `limit_categories`: every `limited_by` a connection can have;
/// - `limit_shares`: the shares at which `classify`'s rules say a bound binds
///   (`sim::explain::limits`), for the engines that judge by the same rules;
/// - `defaults`: what a spec's every omitted key reads as, per part of a spec
///   (`run`, `switch`, `abr_switch` (ERICA's), `host`, `trunk`, `upc`,
///   `connection`, `traffic` of every type; a key the spec requires has none);
/// - `spec_keys`: every key of those records with its kind, unit, range,
///   choices and default (`sim::spec_keys`);
/// - `encaps`: the encapsulations, their header bytes and default MTU;
/// - `limits`: the largest write, UDP datagram and time a spec may give;
/// - `constants`: the fibre's delay;
/// - `result_fields`: [`RESULT_FIELDS`].
pub fn vocabulary() -> Value {
    let limits: Vec<&str> = LimitedBy::ALL
        .iter()
        .map(|l| l.as_str())
        .chain([TRUNCATED, BUDGET_CUT])
        .collect();
    let defaults = defaults();
    json!({
        "phys": Phy::NAMED.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        "ethernet": {
            "phys": ether::NAMED_PHYS,
            "interfaces": ether::INTERFACES,
            "mtu": ether::MTU,
            "mbps_range": [ether::MBPS_RANGE.0, ether::MBPS_RANGE.1],
        },
        "policies": DROP_POLICIES,
        "limit_categories": limits,
        "limit_shares": {
            "application": APPLICATION_SHARE,
            "link": LINK_SHARE,
            "acr_drift": ACR_DRIFT,
            "cpu_busy": CPU_BUSY,
            "window": WINDOW_SHARE,
            "window_closed": WINDOW_CLOSED,
            "nagle_hold": NAGLE_HOLD,
        },
        "defaults": defaults,
        "spec_keys": super::spec_keys::entries(&defaults),
        "encaps": Encap::ALL
            .iter()
            .map(|e| json!({"name": e.name(), "header": e.header_len(), "default_mtu": e.default_mtu()}))
            .collect::<Vec<_>>(),
        "limits": {
            "max_block_bytes": MAX_BLOCK as u64,
            "max_datagram_bytes": MAX_DATAGRAM,
            "max_seconds": MAX_SECONDS,
            "mtu": [MTU_RANGE.0, MTU_RANGE.1],
        },
        "constants": {"fibre_ps_per_m": FIBRE_PS_PER_M},
        "result_fields": RESULT_FIELDS,
    })
}

/// A spec's defaults, read from the spec itself: the smallest spec there is
/// (one host, one connection of each traffic type), parsed and written back.
fn defaults() -> Value {
    let least = r#"{"hosts": [{"name": "a"}],
        "trunks": [{"from": "a", "to": "b", "delay_ms": 0, "upc": {"t_us": 1, "tau_us": 0}}],
        "connections": [{"transmitter": "a", "receiver": "a", "traffic": {"type": "full"}},
            {"transmitter": "a", "receiver": "a",
             "traffic": {"type": "burst", "period_us": 1, "duration_s": 1}},
            {"transmitter": "a", "receiver": "a", "traffic": {"type": "rr", "duration_s": 1}}]}"#;
    let spec = RunSpec::from_json(least).expect("the smallest spec reads");
    let Value::Object(mut run) = serde_json::to_value(&spec).expect("a spec is JSON") else {
        unreachable!("a spec is an object")
    };
    let mut take = |key: &str| run.remove(key).unwrap_or(Value::Null);
    let switch = take("switch");
    let host = first(take("hosts"), &["name"]);
    let traffic = traffic_defaults(&spec.connections);
    let mut connection = first(take("connections"), &["transmitter", "receiver"]);
    connection.remove("traffic");
    let mut trunk = first(take("trunks"), &["from", "to", "delay_ms"]);
    let upc = match trunk.remove("upc") {
        Some(Value::Object(mut u)) => {
            u.remove("t_us");
            u.remove("tau_us");
            Value::Object(u)
        }
        _ => unreachable!("the trunk has a UPC"),
    };
    for key in ["sites", "cells"] {
        run.remove(key);
    }
    // A switch's ABR record has no defaults of its own but ERICA's (its kind is
    // required; a threshold left out is half the port's buffer).
    let abr_switch = json!({"target": ERICA_TARGET, "interval_us": ERICA_INTERVAL_US});
    json!({
        "run": run,
        "switch": switch,
        "abr_switch": abr_switch,
        "host": host,
        "trunk": trunk,
        "upc": upc,
        "connection": connection,
        "traffic": traffic,
    })
}

/// The traffic keys' defaults, every type's (`full`'s block size and amount,
/// `burst`'s blocks a period, `rr`'s request and response): each connection of
/// the smallest spec gives those its type has and the spec did not set.
fn traffic_defaults(connections: &[ConnSpec]) -> Value {
    let mut out = Map::new();
    for c in connections {
        let (given, blocks): (&[&str], _) = match &c.traffic {
            Traffic::Full { .. } => (&[], None),
            // `blocks` is left out of a spec written back at its default.
            Traffic::Burst { blocks, .. } | Traffic::Burstq { blocks, .. } => {
                (&["period_us", "duration_s"], Some(*blocks))
            }
            Traffic::Rr { .. } => (&["duration_s"], None),
        };
        let Ok(Value::Object(t)) = serde_json::to_value(&c.traffic) else {
            unreachable!("a traffic type is an object")
        };
        for (k, v) in t {
            if k != "type" && !given.contains(&k.as_str()) {
                out.entry(k).or_insert(v);
            }
        }
        if let Some(n) = blocks {
            out.insert("blocks".into(), json!(n));
        }
    }
    Value::Object(out)
}

/// The first object of a list, without `drop`'s keys.
fn first(list: Value, drop: &[&str]) -> Map<String, Value> {
    let Some(Value::Object(mut o)) = list.as_array().and_then(|l| l.first()).cloned() else {
        unreachable!("the smallest spec has one of each")
    };
    for k in drop {
        o.remove(*k);
    }
    o
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::sim::spec::CellsSpec;
    use std::collections::BTreeSet;

    /// The fields of one record in the table.
    fn table(record: &str) -> BTreeSet<String> {
        RESULT_FIELDS
            .iter()
            .filter(|f| f.record == record)
            .map(|f| f.name.to_string())
            .collect()
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// A run whose result holds every record and every optional field: a trace
    /// with a lock-step cycle, series, a UPC on a trunk and a cell tester. Its
    /// keys are the result structs' fields: the table must name each of them,
    /// and nothing else, so a field added to a result is added here too.
    #[test]
    fn the_table_names_every_field_of_a_result() {
        let dir = std::env::temp_dir().join(format!("cellbench-vocab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pcap = dir.join("c.pcap");
        // 16K send, 24K receive on SunOS 4.1.1: 8 KB released per 200 ms
        // timer tick (the lock-step), across a policed trunk.
        let mut spec = RunSpec::from_json(
            r#"{"trace": true, "series": true,
            "hosts": [{"name": "a", "site": "west"}, {"name": "b", "site": "east"}],
            "trunks": [{"from": "west", "to": "east", "delay_ms": 0.1,
                        "upc": {"t_us": 2, "tau_us": 0, "action": "tag"}}],
            "connections": [{"transmitter": "a", "receiver": "b", "sndbuf": 16384,
                "rcvbuf": 24576, "traffic": {"type": "full", "nbytes": 1048576}}]}"#,
        )
        .unwrap();
        spec.cells = Some(CellsSpec {
            place: "b".into(),
            path: pcap.to_str().unwrap().into(),
            slot_us: None,
        });
        let out = serde_json::to_value(spec.run().unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let c = &out["connections"][0];
        assert!(!c["lockstep_cycle"].is_null(), "no lock-step cycle: {c}");
        let records = [
            ("run", &out),
            ("connection", c),
            ("lockstep_cycle", &c["lockstep_cycle"]),
            ("trace", &c["trace_records"]),
            ("port", &out["ports"][0]),
            ("policer", &out["policers"][0]),
            ("cells", &out["cells"]),
        ];
        for (record, v) in records {
            let mut named = table(record);
            // Only an ABR circuit has an ACR series (tests/test_vocabulary.py runs one).
            named.remove("acr_series");
            assert_eq!(named, keys(v), "the {record} record's fields");
        }
        // Optional-only fields (UDP, request/response) are null here, not absent.
        for key in ["datagrams_sent", "transactions", "transaction_rate"] {
            assert!(c[key].is_null(), "{key}");
        }
        let named: BTreeSet<&str> = RESULT_FIELDS.iter().map(|f| f.record).collect();
        assert_eq!(named.len(), records.len(), "{named:?}");
    }

    /// A field's kind says what its value is.
    #[test]
    fn kinds_and_nested_records_agree() {
        for f in RESULT_FIELDS {
            let nests = matches!(f.kind, Kind::Record | Kind::Records | Kind::Columns);
            assert_eq!(nests, f.items.is_some(), "{}.{}", f.record, f.name);
            if let Some(items) = f.items {
                assert!(!table(items).is_empty(), "{items}");
            }
        }
    }

    #[test]
    fn policies_are_the_ones_a_switch_takes() {
        let spec = |p: &str| {
            RunSpec::from_json(&format!(
                r#"{{"switch": {{"policy": "{p}"}}, "hosts": [{{"name": "a"}}, {{"name": "b"}}],
                "connections": [{{"transmitter": "a", "receiver": "b",
                    "traffic": {{"type": "full", "nbytes": 8192}}}}]}}"#
            ))
            .unwrap()
            .scenario()
        };
        for p in DROP_POLICIES {
            spec(p).unwrap();
        }
        let e = spec("red").unwrap_err().to_string();
        assert!(e.ends_with(&DROP_POLICIES.join(", ")), "{e}");
    }

    #[test]
    fn phys_read_back_and_defaults_come_from_the_spec() {
        let v = vocabulary();
        for p in v["phys"].as_array().unwrap() {
            let name = p.as_str().unwrap();
            assert_eq!(name.parse::<Phy>().unwrap().to_string(), name);
        }
        let d = &v["defaults"];
        assert_eq!(d["connection"]["sndbuf"], 52_428);
        assert_eq!(d["traffic"]["blocksize"], 8192.0);
        // Every traffic type's: burst's blocks, rr's request and response.
        assert_eq!(
            (
                &d["traffic"]["blocks"],
                &d["traffic"]["request"],
                &d["traffic"]["response"]
            ),
            (&json!(1), &json!(1), &json!(1))
        );
        assert_eq!(d["connection"]["receiver_blocksize"], 8192);
        assert_eq!(d["run"]["time_limit_s"], 3600.0);
        assert_eq!(d["switch"]["policy"], "tail-drop");
        assert_eq!(d["host"]["phy"], "taxi100");
        assert!(v["limit_categories"]
            .as_array()
            .unwrap()
            .contains(&json!("host-cpu")));
    }
}
