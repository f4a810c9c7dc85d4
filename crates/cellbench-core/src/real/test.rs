//! Sources against sinks over loopback: what each reports, pacing, caps, stops.

use super::clock::now_epoch;
use super::report::timing;
use super::*;
use crate::traffic::RandomSpec;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

fn free_port(protocol: Protocol) -> u16 {
    match protocol {
        Protocol::Tcp => std::net::TcpListener::bind(loopback(0)).unwrap(),
        Protocol::Udp => {
            return std::net::UdpSocket::bind(loopback(0))
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        }
    }
    .local_addr()
    .unwrap()
    .port()
}

fn pair(source: SourceSpec, sink: SinkSpec) -> (SourceReport, SinkReport) {
    let sink = Sink::bind(sink).unwrap();
    let rx = std::thread::spawn(move || sink.run().unwrap());
    let tx = run_source(&source).unwrap();
    (tx, rx.join().unwrap())
}

fn specs(protocol: Protocol, blocksize: usize) -> (SourceSpec, SinkSpec) {
    let port = free_port(protocol);
    let now = now_epoch();
    let source = SourceSpec {
        protocol,
        bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        peer: loopback(port),
        sndbuf: None,
        nodelay: false,
        congestion: None,
        mss: None,
        blocksize,
        period_us: None,
        random: None,
        series_interval_us: None,
        nbytes: None,
        duration_s: None,
        start_at: now + 0.05,
        connect_timeout_s: 2.0,
        drain_timeout_s: 5.0,
        group: None,
        realtime: false,
        max_rate_bps: None,
        stall_timeout_s: None,
    };
    let sink = SinkSpec {
        protocol,
        bind: loopback(port),
        rcvbuf: None,
        window_clamp: None,
        blocksize,
        deadline_at: now + 10.0,
        idle_timeout_s: 0.5,
        group: None,
        stall_timeout_s: None,
    };
    (source, sink)
}

#[test]
fn test_a_stalled_source_ends_with_what_it_wrote() {
    // A peer that accepts and never reads: the send buffer fills, writes block.
    let (mut source, _) = specs(Protocol::Tcp, 65536);
    let listener = std::net::TcpListener::bind(source.peer).unwrap();
    let held = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        drop(s);
    });
    source.nbytes = Some(1 << 34);
    source.stall_timeout_s = Some(0.5);
    source.drain_timeout_s = 0.2;
    let t = Instant::now();
    let tx = run_source(&source).unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(tx.stalled && tx.bytes > 0 && tx.bytes < 1 << 34, "{tx:?}");
    assert!(tx
        .notes
        .iter()
        .any(|n| n.contains("nothing delivered for 0.500 s")));
    held.join().unwrap();
}

#[test]
fn test_a_sink_without_data_for_its_stall_timeout_times_out() {
    let (_, mut sink) = specs(Protocol::Tcp, 8192);
    sink.stall_timeout_s = Some(0.5);
    let peer = sink.bind;
    let sink = Sink::bind(sink).unwrap();
    let rx = std::thread::spawn(move || sink.run().unwrap());
    let quiet = std::net::TcpStream::connect(peer).unwrap();
    let t = Instant::now();
    let got = rx.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(got.timed_out && got.bytes == 0);
    drop(quiet);
}

#[test]
fn test_a_tcp_sinks_clock_starts_at_accept_as_ttcp_r() {
    // A peer that connects, waits 300 ms, then writes: ttcp -r's clock starts
    // when accept() returns (ttcp.c's prep_timer()), so the wait is in its interval.
    let (_, sink) = specs(Protocol::Tcp, 8192);
    let peer = sink.bind;
    let sink = Sink::bind(sink).unwrap();
    let rx = std::thread::spawn(move || sink.run().unwrap());
    let mut late = std::net::TcpStream::connect(peer).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::io::Write::write_all(&mut late, &[0x5a; 100_000]).unwrap();
    drop(late);
    let got = rx.join().unwrap();
    assert_eq!(got.bytes, 100_000);
    let (accepted, first, last) = (
        got.accepted_at.unwrap(),
        got.first_at.unwrap(),
        got.last_at.unwrap(),
    );
    assert!(first - accepted >= 0.29, "{got:?}");
    // Epoch seconds near 1.8e9 hold about 0.2 µs.
    assert!((got.seconds - (last - accepted)).abs() < 1e-5, "{got:?}");
    assert!((got.read_seconds - (last - first)).abs() < 1e-5, "{got:?}");
    assert!(got.seconds >= 0.29 && got.read_seconds < 0.1, "{got:?}");
    assert!((got.throughput_bps - 800_000.0 / got.seconds).abs() < 1e-6);
}

#[test]
fn test_tcp_nbytes_all_delivered() {
    let (mut source, sink) = specs(Protocol::Tcp, 8192);
    source.nbytes = Some(1_000_001); // not a whole number of blocks
    source.sndbuf = Some(65536);
    source.nodelay = true;
    let (tx, rx) = pair(source, sink);
    assert_eq!(tx.bytes, 1_000_001);
    assert_eq!(rx.bytes, 1_000_001);
    assert_eq!(tx.blocks, 123);
    assert!(tx.throughput_bps > 0.0 && tx.ended_at >= tx.started_at);
    let info = tx.tcp_info.expect("TCP_INFO");
    assert_eq!(
        info.unacked, 0,
        "the sink closed only after reading everything"
    );
    assert!(!rx.timed_out);
    // The window in force was read while it ran: data in flight, at most the
    // send buffer the kernel kept (SO_SNDBUF, which counts its overhead too).
    // Whether a sample catches data in flight on loopback, where a megabyte
    // takes a few milliseconds, is chance (a clean-clone CI run under load
    // sampled three times with nothing in flight): not asserted.
    let w = tx.window.expect("the window's peaks");
    assert!(w.samples >= 2, "{w:?}");
    assert!(w.cwnd_bytes >= info.snd_mss as u64, "{w:?}");
    assert!(w.flight_bytes <= w.sndbuf.unwrap() as u64, "{w:?}");
    assert!(
        rx.rcvbuf_end.unwrap() >= rx.rcvbuf_granted.unwrap(),
        "{rx:?}"
    );
    assert!(rx.rcv_space.unwrap() > 0, "{rx:?}");
    // Loopback loses nothing: no retransmission timeout (Linux 6.7+ counts them).
    if let Some(n) = info.total_rto {
        assert_eq!(n, 0, "{info:?}");
    }
}

#[test]
fn test_tcp_constant_rate_paced() {
    let (mut source, sink) = specs(Protocol::Tcp, 1000);
    source.period_us = Some(2000.0);
    source.duration_s = Some(0.2);
    let (tx, rx) = pair(source, sink);
    // Blocks due at 0, 2, ..., 198 ms: 100 of them.
    assert_eq!(tx.blocks, 100);
    assert_eq!(rx.bytes, 100_000);
    let t = tx.timing.expect("timing of a paced source");
    assert!(t.error_p50_us < 1000.0, "{t:?}");
    // ttcp's span: 99 periods and the last write.
    assert!((tx.seconds - 0.198).abs() < 0.01, "{}", tx.seconds);
}

#[test]
fn test_full_blast_held_below_the_cap() {
    let (mut source, sink) = specs(Protocol::Udp, 1000);
    source.duration_s = Some(0.3);
    source.max_rate_bps = Some(8e6); // 1000 blocks/s
    let (tx, rx) = pair(source, sink);
    assert!(tx.throughput_bps <= 8e6 * 1.06, "{}", tx.throughput_bps);
    // 300 blocks in 0.3 s at the cap, and the burst's 10 ahead of it.
    assert!((260..=312).contains(&tx.blocks), "{}", tx.blocks);
    assert!(tx.timing.is_none(), "a full blast reports no pacing");
    assert!(tx.cap_waits > 200, "{}", tx.cap_waits);
    assert_eq!(rx.bytes, tx.bytes);
}

#[test]
fn test_udp_nbytes_and_end_marker() {
    let (mut source, sink) = specs(Protocol::Udp, 1400);
    source.nbytes = Some(140_000);
    source.period_us = Some(100.0); // paced: loopback drops nothing
    let (tx, rx) = pair(source, sink);
    assert_eq!(tx.bytes, 140_000);
    assert_eq!(rx.datagrams, 100);
    assert_eq!(rx.bytes, 140_000);
    assert!(!rx.timed_out);
    assert!(tx.tcp_info.is_none());
    // UDP has no accept: the receiver's clock starts at the first datagram.
    assert!(rx.accepted_at.is_none());
    assert_eq!(rx.seconds, rx.read_seconds);
}

#[test]
fn test_refused_congestion_is_a_note() {
    // The connection runs with the kernel's default and says why.
    let (mut source, sink) = specs(Protocol::Tcp, 1000);
    source.nbytes = Some(1000);
    source.congestion = Some("no-such-cc".into());
    let (tx, rx) = pair(source, sink);
    assert_eq!(rx.bytes, 1000);
    assert_eq!(tx.notes.len(), 1, "{:?}", tx.notes);
    let note = &tx.notes[0];
    assert!(
        note.starts_with("TCP_CONGESTION no-such-cc refused"),
        "{note}"
    );
    let ran = tx.congestion.expect("the congestion control that ran");
    assert!(note.contains(&format!("ran {ran}")), "{note}");
}

#[test]
fn test_series_and_host_measures() {
    let (mut source, sink) = specs(Protocol::Tcp, 65536);
    source.duration_s = Some(0.3);
    source.series_interval_us = Some(10_000.0);
    source.mss = Some(1000);
    let (tx, rx) = pair(source, sink);
    let series = tx.series.expect("a series");
    // 10 ms samples over the 0.3 s of writes and the drain: about 30 of them.
    assert!(series.len() >= 15, "{}", series.len());
    assert!(series.windows(2).all(|w| w[1].0 > w[0].0));
    assert!(series.iter().all(|s| s.1 > 0), "cwnd in bytes");
    let info = tx.tcp_info.unwrap();
    // TCP_MAXSEG 1000 less the timestamp option.
    assert!(info.snd_mss <= 1000, "{info:?}");
    assert!(tx.notes.is_empty(), "{:?}", tx.notes);
    for h in [&tx.host, &rx.host] {
        assert_eq!(h.interface.as_deref(), Some("lo"));
        assert!(
            h.cpu_busy.unwrap() > 0.0 && h.agent_cpu.unwrap() > 0.0,
            "{h:?}"
        );
    }
    // Every byte crossed lo, with headers: at least as many as the payload.
    assert!(tx.host.if_tx_bytes.unwrap() >= rx.bytes);
    assert!(rx.host.if_rx_bytes.unwrap() >= rx.bytes);
}

#[test]
fn test_random_rate_sizes() {
    let (mut source, sink) = specs(Protocol::Tcp, 3000);
    source.nbytes = Some(200_000);
    source.random = Some(RandomSpec {
        blocksize: Some(crate::traffic::Law::Uniform([1000.0, 3000.0])),
        period_us: Some(crate::traffic::Law::Exponential(200.0)),
        seed: 1,
        replication: 0,
        connection: 0,
    });
    let (tx, rx) = pair(source, sink);
    assert_eq!(rx.bytes, 200_000);
    // Mean 2000 bytes a block: about 100 blocks, not 200000/3000 = 67.
    assert!((80..=125).contains(&tx.blocks), "{}", tx.blocks);
    assert!(tx.timing.is_some());
}

#[test]
fn test_sink_deadline_without_source() {
    let (_, mut sink) = specs(Protocol::Tcp, 1000);
    sink.deadline_at = now_epoch() + 0.05;
    let r = Sink::bind(sink).unwrap().run().unwrap();
    assert!(r.timed_out);
    assert_eq!(r.bytes, 0);
}

#[test]
fn test_stop_ends_a_transfer_within_a_slice() {
    let (mut source, mut sink) = specs(Protocol::Tcp, 8192);
    source.duration_s = Some(30.0);
    source.period_us = Some(10_000.0);
    source.group = Some("test-stop".into());
    sink.group = Some("test-stop".into());
    let sink = Sink::bind(sink).unwrap();
    let rx = std::thread::spawn(move || sink.run());
    let tx = std::thread::spawn(move || run_source(&source));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    stop("test-stop");
    let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(tx.unwrap_err().to_string().contains("stopped"));
    // The sink stops, or sees the source's close first; either way it is over.
    assert!(rx.is_err() || rx.unwrap().bytes > 0);
}

#[test]
fn test_stop_ends_a_full_blast() {
    // Writes that never block: the per-block check must see the stop.
    let (mut source, mut sink) = specs(Protocol::Tcp, 65536);
    source.duration_s = Some(30.0);
    source.group = Some("test-stop-full".into());
    sink.group = Some("test-stop-full".into());
    let sink = Sink::bind(sink).unwrap();
    let rx = std::thread::spawn(move || sink.run());
    let tx = std::thread::spawn(move || run_source(&source));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    stop("test-stop-full");
    let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(tx.is_err() && rx.is_err());
}

#[test]
fn test_a_timed_stream_ends_while_its_write_is_blocked() {
    // A peer that never reads (the listener never accepts): the window closes, the
    // write blocks, and the duration's end still ends the stream, with only the
    // bytes the kernel took counted.
    let (mut source, _) = specs(Protocol::Tcp, 1 << 20);
    let listener = std::net::TcpListener::bind(source.peer).unwrap();
    source.duration_s = Some(0.3);
    source.drain_timeout_s = 0.2;
    source.sndbuf = Some(65536);
    let t = Instant::now();
    let tx = run_source(&source).unwrap();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(tx.bytes > 0 && tx.bytes < 1 << 20, "{}", tx.bytes);
    assert!(tx.seconds >= 0.3, "{}", tx.seconds);
    drop(listener);
}

#[test]
fn test_timing_percentiles() {
    let mut e: Vec<u64> = (1..=100).map(|x| x * 1000).collect();
    let t = timing(&mut e, 2, false);
    assert_eq!(t.late_blocks, 2);
    assert_eq!(t.error_max_us, 100.0);
    assert_eq!(t.error_p99_us, 99.0);
}
