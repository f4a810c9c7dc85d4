//! `modern`'s per-connection timers in the whole simulator: on wan-mismatch's
//! lossy path (an OC-3c sender 600 km from a 100 Mb/s TAXI receiver; the
//! 256-cell port where the rates meet drops cells of unpaced bursts) a
//! retransmission timeout stalls `modern` for its RTO (200 ms at this RTT),
//! the BSD flavour for whole slow ticks (1 s and more).

use cellbench_core::sim::spec::RunSpec;
use cellbench_core::sim::world::{run, RunResult};
use cellbench_core::tcp::SendReason;
use cellbench_core::SimTime;

/// wan-mismatch case 1, unpaced: 128 KB windows, 64 KB writes and reads, 10 s.
fn mismatch(flavour: &str, seed: u64) -> RunResult {
    let text = format!(
        r#"{{"seed": {seed}, "trace": true,
        "hosts": [{{"name": "tx", "site": "west", "profile": "alpha-3000", "phy": "oc3c"}},
                  {{"name": "rx", "site": "east", "profile": "sparc-10", "phy": "taxi100"}}],
        "trunks": [{{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": 3.0}}],
        "connections": [{{"transmitter": "tx", "receiver": "rx", "encap": "llc-snap",
            "flavour": "{flavour}", "sndbuf": 131072, "rcvbuf": 131072, "receiver_blocksize": 65536,
            "traffic": {{"type": "full", "blocksize": 65536, "duration_s": 10.0}}}}]}}"#
    );
    let spec = RunSpec::from_json(&text).expect("valid spec");
    run(&spec.scenario().expect("valid scenario")).expect("runs")
}

/// The sender's stalls that a timeout ended: the silence before each
/// retransmission that follows more than 50 ms without a segment (an
/// ACK-clocked sender on this 6 ms path never pauses that long otherwise).
fn timeout_stalls(r: &RunResult) -> Vec<SimTime> {
    let mut last: Option<SimTime> = None;
    let mut stalls = Vec::new();
    for rec in r.trace.iter().filter(|x| x.from_sender) {
        if let Some(prev) = last {
            let gap = rec.at - prev;
            if rec.seg.reason == SendReason::Retransmit && gap > SimTime::from_ms(50) {
                stalls.push(gap);
            }
        }
        last = Some(rec.at);
    }
    stalls
}

#[test]
fn modern_recovers_from_a_timeout_in_its_rto_not_in_slow_ticks() {
    // Which seeds' losses end in a timeout for modern depends on its segments
    // (seed 3's SACK recovery needs none): the seeds together must show some.
    let mut modern_timeouts = 0;
    for seed in 1..=3 {
        // osf1 is 4.3BSD-Reno with the RFC 1323 windows this path needs.
        let bsd = mismatch("osf1", seed);
        let modern = mismatch("modern", seed);
        let (b, m) = (&bsd.transfers[0], &modern.transfers[0]);
        let (bs, ms) = (timeout_stalls(&bsd), timeout_stalls(&modern));
        // Each timeout shows as one stall, and both flavours have some.
        assert!(b.sender.timeouts >= 2, "seed {seed}: {:?}", b.sender);
        modern_timeouts += m.sender.timeouts;
        assert_eq!(bs.len() as u64, b.sender.timeouts, "seed {seed}: {bs:?}");
        assert_eq!(ms.len() as u64, m.sender.timeouts, "seed {seed}: {ms:?}");
        // modern: about its RTO, the 200 ms floor or a little more when the
        // RTT samples vary (srtt + 4 rttvar; the timer restarts on the last
        // ACK, a little before the last segment went); the BSD timer needs
        // at least two slow ticks.
        for s in &ms {
            assert!(
                (SimTime::from_ms(100)..=SimTime::from_ms(250)).contains(s),
                "seed {seed}: modern stalled {s} s: {ms:?}"
            );
        }
        for s in &bs {
            assert!(
                *s > SimTime::from_secs(1),
                "seed {seed}: osf1 stalled {s} s"
            );
        }
        // A timeout costs modern a fifth of what it costs the BSD flavour or
        // less (how many timeouts each takes depends on the losses).
        let mean = |v: &[SimTime]| v.iter().map(|s| s.as_secs_f64()).sum::<f64>() / v.len() as f64;
        assert!(
            ms.is_empty() || 5.0 * mean(&ms) < mean(&bs),
            "seed {seed}: {} s per timeout (modern) vs {} s (osf1)",
            mean(&ms),
            mean(&bs)
        );
    }
    assert!(
        modern_timeouts >= 2,
        "modern took {modern_timeouts} timeouts"
    );
}

#[test]
fn modern_timers_are_deterministic() {
    let a = mismatch("modern", 2);
    let b = mismatch("modern", 2);
    assert_eq!(a.trace, b.trace);
    assert_eq!(format!("{:?}", a.transfers), format!("{:?}", b.transfers));
    assert_eq!(a.events, b.events);
    assert!(a.transfers[0].sender.timeouts > 0, "the timers ran");
}
