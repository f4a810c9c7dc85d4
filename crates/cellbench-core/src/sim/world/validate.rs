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
        transfer(s, i).map_err(|e| e.in_list("connection", i))?;
    }
    Ok(())
}

/// Check transfer `i`; a refusal names its connection's key (or the connection).
fn transfer(s: &Scenario, i: usize) -> Result<(), ScenarioError> {
    let t = &s.transfers[i];
    let setting = |key, value: &dyn std::fmt::Display, reason| {
        ScenarioError::setting("connection", key, value, reason)
    };
    let record = |reason| ScenarioError::record("connection", reason);
    {
        // Both ends take both buffers (a stream's ends, netperf -s/-S).
        for flavour in [t.flavour, t.receiver_flavour] {
            let max = flavour.policy().max_sockbuf;
            for (what, key, v) in [
                ("send buffer", "sndbuf", t.sndbuf),
                ("receive buffer", "rcvbuf", t.rcvbuf),
            ] {
                if v == 0 || v > max {
                    let reason = format!(
                        "transfer {i}: {what} {v} bytes is out of range for {flavour}: 1..={max}"
                    );
                    return Err(setting(key, &v, reason));
                }
            }
        }
        if t.buflen == 0 {
            let reason = format!("transfer {i}: write size 0: must be at least 1 byte");
            return Err(setting("traffic.blocksize", &0, reason));
        }
        if t.protocol == Protocol::Udp {
            let max = MAX_DATAGRAM.min(t.sndbuf);
            if t.buflen > max {
                let reason = format!(
                    "transfer {i}: UDP datagrams of {} bytes: at most {max} (the send buffer and 65507)",
                    t.buflen
                );
                return Err(setting("traffic.blocksize", &t.buflen, reason));
            }
        }
        if let Some(x) = t.transaction {
            if t.protocol != Protocol::Tcp || !matches!(t.limit, Limit::Duration(_)) {
                return Err(record(format!(
                    "transfer {i}: request/response runs over TCP for a duration"
                )));
            }
            if x.request == 0 || x.response == 0 {
                let reason = format!(
                    "transfer {i}: request {} and response {} bytes: each at least 1 byte",
                    x.request, x.response
                );
                return Err(setting("traffic.request", &x.request, reason));
            }
        }
        if t.read_size == 0 {
            // The receiver's reads are its blocksize (the transmitter's writes when none).
            let reason = format!("transfer {i}: read size 0: must be at least 1 byte");
            return Err(setting("receiver_blocksize", &0, reason));
        }
        match t.limit {
            Limit::Bytes(0) => {
                let reason = format!("transfer {i}: 0 bytes to send: must be at least 1");
                return Err(setting("traffic.nbytes", &0, reason));
            }
            Limit::Duration(SimTime::ZERO) => {
                let reason = format!("transfer {i}: duration 0: must be > 0");
                return Err(setting("traffic.duration_s", &0, reason));
            }
            _ => {}
        }
        if let Pace::Every { period_us, .. } = t.pace {
            let what = format!("transfer {i}: block period (µs)");
            period_us
                .check(&what, 1e12)
                .map_err(|e| setting("traffic.period_us", &period_us, e.to_string()))?;
        }
        if let Some(size) = t.block_size {
            let what = format!("transfer {i}: block size (bytes)");
            size.check(&what, t.buflen as f64)
                .map_err(|e| setting("traffic.blocksize", &size, e.to_string()))?;
        }
        let (least, most) = (MTU_RANGE.0, MTU_RANGE.1 - t.encap_header);
        if !(least..=most).contains(&t.mtu) {
            let reason = format!(
                "transfer {i}: MTU {} is out of range: {least}..={most} (what one AAL5 PDU carries)",
                t.mtu,
            );
            return Err(setting("mtu", &t.mtu, reason));
        }
        let framed = s.topology.framed.iter().any(|f| f.circuit == t.circuit);
        let max = crate::wire::ethernet::MTU as u32;
        if framed && t.mtu + t.encap_header > max {
            let reason = format!(
                "transfer {i}: MTU {} (+ {} bytes of header) over an Ethernet segment: at most \
                 {max} (what an Ethernet II frame carries)",
                t.mtu, t.encap_header
            );
            return Err(setting("mtu", &t.mtu, reason));
        }
        for h in [t.sender, t.receiver] {
            if h >= s.hosts.len() {
                return Err(record(format!("transfer {i}: no host {h}")));
            }
        }
        // Only earlier transfers: the dependencies can then never form a cycle.
        if let Some(&a) = t.after.iter().find(|&&a| a >= i) {
            let reason = format!(
                "transfer {i}: starts after transfer {a}, which is not an earlier \
                 transfer: a transfer waits only for ones before it"
            );
            return Err(setting("after", &a, reason));
        }
    }
    Ok(())
}
