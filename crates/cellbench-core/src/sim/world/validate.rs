//! Checking a scenario before anything runs: every value a run cannot take is
//! refused with a sentence naming the transfer and the range, never half-run.
//! Apart from the loop: it reads only the scenario.

use super::{Protocol, Scenario, ScenarioError};
use crate::host::ttcp::{Limit, Pace};
use crate::host::udp::MAX_DATAGRAM;
use crate::time::SimTime;

/// The IP MTUs a transfer takes with VC multiplexing: at least RFC 791's 576,
/// the datagram every host accepts, and at most what one AAL5 PDU carries (a
/// CPCS-PDU's 16-bit length, 65535, less 8 bytes, as the core has always bounded
/// it); an encapsulation's header comes off the upper bound.
pub const MTU_RANGE: (u32, u32) = (576, 65_535 - 8);

/// Check a scenario before anything runs: a bad value is reported, never half-run.
pub fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    for i in 0..s.transfers.len() {
        // A transfer is its spec's connection of the same index.
        transfer(s, i).map_err(|e| e.or_at("connection", "", "").index(i))?;
    }
    Ok(())
}

/// Check transfer `i`.
fn transfer(s: &Scenario, i: usize) -> Result<(), ScenarioError> {
    let t = &s.transfers[i];
    {
        // Both ends take both buffers (a stream's ends, netperf -s/-S).
        for flavour in [t.flavour, t.receiver_flavour] {
            let max = flavour.policy().max_sockbuf;
            for (what, key, v) in [
                ("send buffer", "sndbuf", t.sndbuf),
                ("receive buffer", "rcvbuf", t.rcvbuf),
            ] {
                if v == 0 || v > max {
                    return Err(ScenarioError::new(format!(
                        "transfer {i}: {what} {v} bytes is out of range for {flavour}: 1..={max}"
                    ))
                    .at("connection", key, v));
                }
            }
        }
        if t.buflen == 0 {
            return Err(ScenarioError::new(format!(
                "transfer {i}: write size 0: must be at least 1 byte"
            )));
        }
        if t.protocol == Protocol::Udp {
            let max = MAX_DATAGRAM.min(t.sndbuf);
            if t.buflen > max {
                return Err(ScenarioError::new(format!(
                    "transfer {i}: UDP datagrams of {} bytes: at most {max} (the send buffer and 65507)",
                    t.buflen
                ))
                .at("connection", "traffic.blocksize", t.buflen));
            }
        }
        if let Some(x) = t.transaction {
            if t.protocol != Protocol::Tcp || !matches!(t.limit, Limit::Duration(_)) {
                return Err(ScenarioError::new(format!(
                    "transfer {i}: request/response runs over TCP for a duration"
                )));
            }
            if x.request == 0 || x.response == 0 {
                return Err(ScenarioError::new(format!(
                    "transfer {i}: request {} and response {} bytes: each at least 1 byte",
                    x.request, x.response
                ))
                .at("connection", "traffic.request", x.request));
            }
        }
        if t.read_size == 0 {
            return Err(ScenarioError::new(format!(
                "transfer {i}: read size 0: must be at least 1 byte"
            )));
        }
        match t.limit {
            Limit::Bytes(0) => {
                return Err(ScenarioError::new(format!(
                    "transfer {i}: 0 bytes to send: must be at least 1"
                ))
                .at("connection", "traffic.nbytes", 0))
            }
            Limit::Duration(SimTime::ZERO) => {
                return Err(
                    ScenarioError::new(format!("transfer {i}: duration 0: must be > 0")).at(
                        "connection",
                        "traffic.duration_s",
                        0,
                    ),
                )
            }
            _ => {}
        }
        if let Pace::Every { period_us, .. } = t.pace {
            let what = format!("transfer {i}: block period (µs)");
            period_us.check(&what, 1e12).map_err(|e| {
                ScenarioError::new(e.to_string()).at("connection", "traffic.period_us", period_us)
            })?;
        }
        if let Some(size) = t.block_size {
            let what = format!("transfer {i}: block size (bytes)");
            size.check(&what, t.buflen as f64).map_err(|e| {
                ScenarioError::new(e.to_string()).at("connection", "traffic.blocksize", size)
            })?;
        }
        let (least, most) = (MTU_RANGE.0, MTU_RANGE.1 - t.encap_header);
        if !(least..=most).contains(&t.mtu) {
            return Err(ScenarioError::new(format!(
                "transfer {i}: MTU {} is out of range: {least}..={most} (what one AAL5 PDU carries)",
                t.mtu,
            ))
            .at("connection", "mtu", t.mtu));
        }
        let framed = s.topology.framed.iter().any(|f| f.circuit == t.circuit);
        let max = crate::wire::ethernet::MTU as u32;
        if framed && t.mtu + t.encap_header > max {
            return Err(ScenarioError::new(format!(
                "transfer {i}: MTU {} (+ {} bytes of header) over an Ethernet segment: at most \
                 {max} (what an Ethernet II frame carries)",
                t.mtu, t.encap_header
            ))
            .at("connection", "mtu", t.mtu));
        }
        for h in [t.sender, t.receiver] {
            if h >= s.hosts.len() {
                return Err(ScenarioError::new(format!("transfer {i}: no host {h}")));
            }
        }
        // Only earlier transfers: the dependencies can then never form a cycle.
        if let Some(&a) = t.after.iter().find(|&&a| a >= i) {
            return Err(ScenarioError::new(format!(
                "transfer {i}: starts after transfer {a}, which is not an earlier \
                 transfer: a transfer waits only for ones before it"
            )));
        }
    }
    Ok(())
}
