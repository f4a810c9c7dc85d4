use super::*;
use crate::sim::explain::lockstep_cycle;
use crate::sim::net::Fidelity;
use crate::sim::testbeds::LanBuffers;
use crate::tcp::{Flavour, SendReason};

fn lan(sndbuf: u32, rcvbuf: u32, nbytes: u64) -> LanBuffers {
    LanBuffers {
        sndbuf,
        rcvbuf,
        nbytes,
        ..LanBuffers::default()
    }
}

fn lan_scenario(study: &LanBuffers, seed: u64, trace: bool) -> Scenario {
    study.spec(seed, 0, trace).scenario().unwrap()
}

fn run_lan(study: &LanBuffers, seed: u64, trace: bool) -> RunResult {
    run(&lan_scenario(study, seed, trace)).unwrap()
}

#[test]
fn same_seed_same_result_byte_for_byte() {
    let study = lan(16384, 20480, 4 << 20);
    let a = run_lan(&study, 7, true);
    let b = run_lan(&study, 7, true);
    assert_eq!(format!("{:?}", a.transfers), format!("{:?}", b.transfers));
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.events, b.events);
    // Another seed moves the timer phases and the cost jitter.
    let c = run_lan(&study, 8, true);
    assert_ne!(a.trace, c.trace);
}

#[test]
fn hosts_with_nothing_left_to_do_stop_their_ticks() {
    use crate::sim::spec::{ConnSpec, HostSpec, Param, RunSpec, Traffic};
    let conn = |from, to, nbytes, sndbuf, rcvbuf| ConnSpec {
        sndbuf,
        rcvbuf,
        ..ConnSpec::new(
            from,
            to,
            Traffic::Full {
                blocksize: Param::Value(8192.0),
                nbytes: Some(nbytes),
                duration_s: None,
            },
        )
    };
    // A long lock-step transfer C -> D (about 400 s), and A -> B done in under a second.
    let long = conn("C", "D", 16 << 20, 16_384, 24_576);
    let short = conn("A", "B", 1 << 20, 52_428, 52_428);
    let hosts: Vec<HostSpec> = ["A", "B", "C", "D"].map(HostSpec::named).to_vec();
    let run_of = |conns| run(&RunSpec::new(hosts.clone(), conns).scenario().unwrap()).unwrap();
    let both = run_of(vec![long.clone(), short.clone()]);
    let long_alone = run_of(vec![long]);
    let short_alone = run_of(vec![short]);
    // Other hosts, other switch ports: the long transfer runs as it does alone.
    assert_eq!(both.transfers[0], long_alone.transfers[0]);
    assert_eq!(both.end_time, long_alone.end_time);
    assert!(both.end_time > SimTime::from_secs(300), "{}", both.end_time);
    // A and B tick on through TIME_WAIT (2MSL: 60 s of 200 and 500 ms ticks,
    // two events each), then not at all: 400 s more would be over 10,000 events.
    let extra = both.events - long_alone.events;
    let time_wait = 2 * (300 + 120) * 2;
    assert!(
        extra <= short_alone.events + time_wait + 100,
        "{extra} events for the short transfer, {} alone",
        short_alone.events
    );
}

#[test]
fn large_buffers_run_near_the_hosts_limit() {
    let r = run_lan(&lan(52_428, 52_428, 8 << 20), 1, false);
    let t = &r.transfers[0];
    assert!(t.completed && !t.lockstep());
    assert!(t.mbit_ttcp() > 10.0, "{}", t.mbit_ttcp());
    assert_eq!(t.bytes, 8 << 20);
    assert_eq!(t.sender.segs_retransmitted, 0);
}

#[test]
fn small_send_buffer_locks_into_the_delayed_ack_cycle() {
    // 16K send, 24K receive: the study's lock-step. Every 200 ms tick the
    // receiver's timer ACK releases the 8 KB the sender was holding.
    let r = run_lan(&lan(16_384, 24_576, 8 << 20), 1, true);
    let t = &r.transfers[0];
    assert!(t.completed && t.lockstep());
    assert!(t.mbit_ttcp() < 2.0);
    let cycle = lockstep_cycle(&r.trace).expect("a timer-paced cycle");
    // The tick is exact; the ACK leaves after the host's (jittered) processing.
    let period_ms = cycle.mean_period.as_secs_f64() * 1e3;
    assert!((period_ms - 200.0).abs() < 0.1, "{period_ms}");
    assert_eq!(cycle.bytes_per_tick, 8192.0);
    assert_eq!(
        cycle.pattern,
        vec![
            "B 0 [delack-timer]".to_string(),
            "A 8192 [idle]".to_string()
        ]
    );
    // The mechanism's rate: 8 KB per 200 ms = 0.3125 Mbit/s in ttcp's unit.
    let predicted = cycle.predicted_bps() / 1_048_576.0;
    assert!((predicted - 0.3125).abs() < 1e-3);
    assert!((t.mbit_ttcp() - predicted).abs() / predicted < 0.05);
}

#[test]
fn modern_delays_each_ack_40ms_from_the_segment_not_on_a_grid() {
    // Nagle against the delayed ACK with `modern`: 4 KB writes into a
    // 4 KB send buffer, so each short segment waits for the ACK of the one
    // before, which the receiver's own timer sends 40 ms after the segment
    // arrived (a global 40 ms tick would send it after 0–40 ms, 20 ms on
    // average). A short read opens too little window for an update.
    let study = LanBuffers {
        flavour: Flavour::Modern,
        buflen: 4096,
        ..lan(4096, 52_428, 1 << 20)
    };
    let r = run_lan(&study, 1, true);
    assert!(r.transfers[0].completed);
    let mut last_data = None;
    let mut delays = Vec::new();
    for rec in &r.trace {
        if rec.from_sender && rec.seg.len > 0 {
            last_data = Some(rec.at);
        } else if !rec.from_sender && rec.seg.reason == SendReason::DelayedAck {
            delays.push(rec.at - last_data.expect("data before its ACK"));
        }
    }
    assert!(delays.len() > 50, "{}", delays.len());
    // 40 ms, plus the segment's time on the wire and both hosts' work.
    for d in &delays {
        assert!(
            (SimTime::from_ms(40)..SimTime::from_ms(43)).contains(d),
            "{d}"
        );
    }
    let cycle = lockstep_cycle(&r.trace).expect("a timer-paced cycle");
    let period_ms = cycle.mean_period.as_secs_f64() * 1e3;
    assert!((41.0..43.0).contains(&period_ms), "{period_ms}");
}

#[test]
fn the_probe_sees_the_cpus_the_round_trip_and_the_window() {
    // Big buffers: the IPC receiver's CPU is the limit (receiving costs more).
    let r = run_lan(&lan(52_428, 52_428, 8 << 20), 1, false);
    let p = &r.transfers[0].probe;
    let [snd, rcv] = p.cpu_busy.expect("the interval closed");
    assert!(rcv > 0.95 && snd < rcv, "{snd} {rcv}");
    // Every segment full: 9188 - 40 data bytes, no options after the SYN.
    assert_eq!(p.largest_segment, Some((9148, 9188)));
    assert!(
        p.peak_flight >= 3 * 9148 && p.peak_flight <= 52_428,
        "{}",
        p.peak_flight
    );
    // A round trip: a 192-cell PDU at 100 Mb/s each way through the switch (2 x
    // 0.8 ms), the receiver's processing; well under the 200 ms timer.
    let rtt = p.min_rtt.expect("timed").as_secs_f64();
    assert!(rtt > 1.6e-3 && rtt < 10e-3, "{rtt}");
    // In the lock-step the sender holds its 8 KB nearly all the time.
    let r = run_lan(&lan(16_384, 24_576, 1 << 20), 1, false);
    let t = &r.transfers[0];
    assert!(t.probe.holding_seconds > 0.9 * t.sender_seconds);
    assert!(t.probe.holding_seconds >= t.circular_wait_seconds);
    let [snd, rcv] = t.probe.cpu_busy.unwrap();
    assert!(snd < 0.05 && rcv < 0.05, "{snd} {rcv}");
}

#[test]
fn three_mss_send_buffer_never_locks() {
    // 3 x MSS + 272: below it a new write() finds less than the whole 4 KB
    // cluster it waits for behind the 16 KB a timer ACK releases to a 51K
    // receiver (tests/test_lan_buffers.py, REMEDY).
    for rcvbuf in [16_384, 24_576, 36_864, 52_428] {
        let r = run_lan(&lan(3 * 9148 + 272, rcvbuf, 4 << 20), 3, false);
        assert!(!r.transfers[0].lockstep(), "rcvbuf {rcvbuf}");
        assert!(r.transfers[0].mbit_ttcp() > 10.0, "rcvbuf {rcvbuf}");
    }
}

#[test]
fn per_cell_reference_gives_the_same_transfer() {
    let study = lan(24_576, 32_768, 1 << 20);
    let mut s = lan_scenario(&study, 3, true);
    let train = run(&s).unwrap();
    s.fidelity = Fidelity::PerCell;
    let cell = run(&s).unwrap();
    assert_eq!(train.trace, cell.trace);
    assert_eq!(
        format!("{:?}", train.transfers),
        format!("{:?}", cell.transfers)
    );
}

#[test]
fn bad_values_are_refused_before_running() {
    let refused = |study: &LanBuffers| study.spec(1, 0, false).scenario().unwrap_err().to_string();
    let mut study = lan(60_000, 16_384, 1 << 20);
    let err = refused(&study);
    assert!(
        err.contains("send buffer 60000") && err.contains("1..=52428"),
        "{err}"
    );
    // run() checks a scenario built by hand just as well.
    let mut s = lan_scenario(&lan(16_384, 16_384, 1 << 20), 1, false);
    s.transfers[0].sndbuf = 60_000;
    assert_eq!(run(&s).unwrap_err().to_string(), err);
    s.transfers[0].sndbuf = 16_384;
    s.transfers[0].buflen = 0;
    let err = run(&s).unwrap_err().to_string();
    assert!(err.contains("write size 0"), "{err}");
    study.sndbuf = 16_384;
    study.buflen = 0;
    let err = refused(&study);
    assert!(err.contains("blocksize 0"), "{err}");
    study.buflen = 8192;
    study.mtu = 500;
    let err = refused(&study);
    assert!(err.contains("MTU 500") && err.contains("576"), "{err}");
    study.mtu = 9188;
    study.profile = "cray-2".into();
    let err = refused(&study);
    assert!(err.contains("cray-2") && err.contains("sparc-ipc"), "{err}");
}
