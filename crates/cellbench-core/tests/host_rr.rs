//! netperf TCP_RR (`host::rr`) in the whole simulator: two SPARCstation IPCs
//! (SunOS 4.1.1) on the lan-buffers LAN exchange requests and responses; a
//! transaction costs a round trip and both hosts' work, and Nagle meets the
//! delayed ACK where a response leaves a short tail.

use cellbench_core::sim::spec::{ConnResult, ConnSpec, HostSpec, RunSpec, Traffic};

/// netperf -t TCP_RR -l `secs` -- -r req,resp between two SPARCstation IPCs
/// (SunOS 4.1.1) on the lan-buffers LAN, B `metres` of fibre from the switch.
fn rr(request: u32, response: u32, nodelay: bool, metres: f64) -> ConnResult {
    let traffic = Traffic::Rr {
        request,
        response,
        duration_s: 2.0,
    };
    let conn = ConnSpec {
        nodelay,
        ..ConnSpec::new("A", "B", traffic)
    };
    let b = HostSpec {
        distance_m: metres,
        ..HostSpec::named("B")
    };
    let mut spec = RunSpec::new(vec![HostSpec::named("A"), b], vec![conn]);
    spec.trace = true;
    spec.run().unwrap().connections.remove(0)
}

const ROOM: f64 = 10.0;

fn period_s(c: &ConnResult) -> f64 {
    1.0 / c.transaction_rate.expect("a request/response result")
}

#[test]
fn one_byte_transactions_take_a_round_trip_and_both_hosts_work() {
    let near = rr(1, 1, false, ROOM);
    let rtt = near.min_rtt_s.expect("timed");
    let period = period_s(&near);
    // A transaction is the request's round trip (to the response that
    // acknowledges it: the wire both ways and the server's work) plus the
    // client's work on the response and the next request, about as much
    // as the server's on two hosts alike: more than one round trip, not three
    // (the round trip is the shortest seen; each piece of work varies by ±10%).
    assert!(rtt < period && period < 3.0 * rtt, "{period} {rtt}");
    // Every ACK rides on the next message: nothing waits for the delayed-ACK
    // timer. (A 200 ms tick that falls between a message's arrival and its
    // answer sends a pure ACK now and then: not 1% of the transactions.)
    let timer_acks = near.trace.iter().filter(|l| l.contains("[delack-timer]"));
    assert!(timer_acks.count() * 100 < near.transactions.unwrap() as usize);
    // 100 km more fibre to B: 0.5 ms each way, crossed by the request and the
    // response: exactly 1 ms more per transaction, nothing else changes.
    let far = rr(1, 1, false, 100_000.0 + ROOM);
    let extra = period_s(&far) - period;
    assert!((extra - 1e-3).abs() < 0.02e-3, "{extra}");
    // The count covers the test length, the rate is count / length.
    assert_eq!(near.sender_seconds, 2.0);
    let n = near.transactions.unwrap();
    assert_eq!(near.transaction_rate, Some(n as f64 / 2.0));
}

#[test]
fn larger_responses_lower_the_rate_until_nagle_meets_the_delayed_ack() {
    let rates: Vec<f64> = [1, 1024, 4096]
        .map(|resp| rr(1, resp, false, ROOM).transaction_rate.unwrap())
        .to_vec();
    assert!(rates[0] > rates[1] && rates[1] > rates[2], "{rates:?}");
    // A 9148-byte response goes into SunOS's send buffer as 4 KB, 4 KB and
    // 956 bytes; the short tail waits (Nagle) for an ACK of what is in
    // flight, which the client delays to its 200 ms timer: one transaction per tick.
    let slow = rr(1, 9148, false, ROOM);
    assert_eq!(slow.limited_by, "lockstep", "{}", slow.limit_evidence);
    // The server's Nagle holds the tail (not an application waiting in send()).
    assert!(
        slow.limit_evidence.starts_with("Nagle/delayed-ACK"),
        "{}",
        slow.limit_evidence
    );
    let rate = slow.transaction_rate.unwrap();
    assert!((4.5..=5.5).contains(&rate), "{rate}");
    // TCP_NODELAY (netperf -D) sends the tail at once.
    let fast = rr(1, 9148, true, ROOM).transaction_rate.unwrap();
    assert!(fast > 20.0 * rate, "{fast} {rate}");
}

#[test]
fn a_transaction_is_explained_by_its_round_trip_not_a_streams_bounds() {
    // 100 km to B: a 1-byte transaction is a round trip; the window bound a
    // stream would name (1 byte in flight per round trip) says nothing here.
    let far = rr(1, 1, false, 100_000.0);
    assert_eq!(far.limited_by, "undetermined");
    let e = &far.limit_evidence;
    assert!(
        e.starts_with("request/response: ") && e.contains("round trip"),
        "{e}"
    );
}

#[test]
fn same_seed_same_transactions() {
    let a = rr(64, 512, false, ROOM);
    let b = rr(64, 512, false, ROOM);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert!(a.transactions.unwrap() > 100);
}

#[test]
fn empty_messages_are_refused() {
    let mut spec = RunSpec::new(
        vec![HostSpec::named("A"), HostSpec::named("B")],
        vec![ConnSpec::new(
            "A",
            "B",
            Traffic::Rr {
                request: 1,
                response: 0,
                duration_s: 1.0,
            },
        )],
    );
    let err = spec.scenario().unwrap_err().to_string();
    assert!(
        err.contains("response 0 bytes") && err.contains("1 to"),
        "{err}"
    );
    spec.connections[0].protocol = "udp".into();
    let err = spec.scenario().unwrap_err().to_string();
    assert!(err.contains("must be tcp"), "{err}");
}
