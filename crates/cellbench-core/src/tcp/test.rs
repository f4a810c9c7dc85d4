//! The flavours over pairs of control blocks: segments are handed from one to
//! the other by hand (or through the small lossy path at the bottom), so each
//! test sees exactly which segments a mechanism sends.

use super::flavour::{Flavour, TimerModel, SLOW_TICK};
use super::segment::{Segment, SendReason};
use super::seq::Seq;
use super::tcb::{Tcb, TCP_MAXWIN};
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const MSS: u32 = 1460;

/// Connect `a` (active) to `b` (passive) at time 0.
fn open(fa: Flavour, fb: Flavour, sndbuf: u32, rcvbuf: u32) -> (Tcb, Tcb) {
    let (a, b, _) = open_timed(fa, fb, sndbuf, rcvbuf, SimTime::ZERO);
    (a, b)
}

/// Connect over a path of `one_way` delay starting at time 0; returns the
/// time the passive end became established.
fn open_timed(
    fa: Flavour,
    fb: Flavour,
    sndbuf: u32,
    rcvbuf: u32,
    one_way: SimTime,
) -> (Tcb, Tcb, SimTime) {
    let mut a = Tcb::new(fa, MSS, sndbuf, rcvbuf, Seq(1000));
    let mut b = Tcb::new(fb, MSS, sndbuf, rcvbuf, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    let syn = out.pop().unwrap();
    b.set_now(one_way);
    b.input(&syn, &mut out);
    let synack = out.pop().unwrap();
    assert!(synack.flags.syn && synack.flags.ack);
    a.set_now(one_way + one_way);
    assert!(a.input(&synack, &mut out).established);
    let ack = out.pop().unwrap();
    let t = one_way + one_way + one_way;
    b.set_now(t);
    assert!(b.input(&ack, &mut out).established);
    assert!(out.is_empty());
    (a, b, t)
}

/// Sender has `n` full segments in flight (window opened wide by hand).
fn send_segments(a: &mut Tcb, n: u32) -> Vec<Segment> {
    a.snd_cwnd = n * a.t_maxseg;
    let mut out = Vec::new();
    a.append(n * a.t_maxseg, &mut out);
    assert_eq!(out.len(), n as usize);
    assert!(out.iter().all(|s| s.len == a.t_maxseg));
    out
}

/// Feed segments to a control block; return everything it sent.
fn feed(t: &mut Tcb, segs: &[Segment]) -> Vec<Segment> {
    let mut out = Vec::new();
    for s in segs {
        t.input(s, &mut out);
    }
    out
}

/// Let a receiver's delayed ACK go: the host's fast tick for the BSD
/// flavours, the connection's own deadline for `modern`.
fn delayed_ack(t: &mut Tcb, out: &mut Vec<Segment>) {
    t.fast_timer(out);
    if let Some(due) = t.next_timer() {
        t.set_now(due);
        t.expire_timers(out);
    }
}

fn retransmitted(segs: &[Segment]) -> Vec<Seq> {
    segs.iter()
        .filter(|s| s.reason == SendReason::Retransmit && s.len > 0)
        .map(|s| s.seq)
        .collect()
}

#[test]
fn fast_retransmit_after_three_dup_acks_tahoe_and_reno() {
    for flavour in [Flavour::Sunos411, Flavour::Reno, Flavour::Rfc1122] {
        let (mut a, mut b) = open(flavour, flavour, 52_428, 52_428);
        let data = send_segments(&mut a, 6);
        // Segment 0 is lost; 1..=4 arrive out of order and are each ACKed at once.
        let dups = feed(&mut b, &data[1..5]);
        assert_eq!(dups.len(), 4);
        assert!(dups.iter().all(|d| d.ack == data[0].seq && d.len == 0));
        let sent = feed(&mut a, &dups[..2]);
        assert!(sent.is_empty(), "{flavour}: two duplicates are not enough");
        let sent = feed(&mut a, &dups[2..3]);
        assert_eq!(retransmitted(&sent), vec![data[0].seq], "{flavour}");
        assert_eq!(a.stats.fast_retransmits, 1);
        // ssthresh: half of min(snd_wnd, cwnd = 6 MSS), in whole segments.
        assert_eq!(a.snd_ssthresh, 3 * MSS);
        if flavour == Flavour::Sunos411 {
            // Tahoe (SunOS 4.1.3 tcp_input.c): slow start from one segment.
            assert_eq!(a.snd_cwnd, MSS);
        } else {
            // Reno: fast recovery inflates cwnd by the three duplicates.
            assert_eq!(a.snd_cwnd, 6 * MSS);
        }
    }
}

#[test]
fn reno_fast_recovery_inflates_then_deflates() {
    let (mut a, mut b) = open(Flavour::Reno, Flavour::Reno, 52_428, 52_428);
    let data = send_segments(&mut a, 8);
    let dups = feed(&mut b, &data[1..8]);
    assert_eq!(dups.len(), 7);
    let sent = feed(&mut a, &dups[..3]);
    assert_eq!(retransmitted(&sent), vec![data[0].seq]);
    let ssthresh = a.snd_ssthresh;
    assert_eq!(ssthresh, 4 * MSS);
    // Inflated by the three segments the receiver holds.
    assert_eq!(a.snd_cwnd, ssthresh + 3 * MSS);
    // Each further duplicate adds a segment; the window (7 MSS) is still
    // below the 8 outstanding, so nothing new goes out until it exceeds them.
    feed(&mut a, &dups[3..4]);
    assert_eq!(a.snd_cwnd, ssthresh + 4 * MSS);
    let mut out = Vec::new();
    a.append(4 * MSS, &mut out);
    assert!(out.is_empty());
    let sent = feed(&mut a, &dups[4..7]);
    assert_eq!(a.snd_cwnd, ssthresh + 7 * MSS);
    // cwnd 11 MSS against 8 outstanding: 3 new segments.
    assert_eq!(sent.iter().filter(|s| s.len > 0).count(), 3);
    assert!(retransmitted(&sent).is_empty());
    // The retransmission fills the hole: the new ACK deflates to ssthresh and
    // congestion avoidance adds maxseg²/cwnd + maxseg/8 (4.3BSD-Reno).
    let ack = feed(&mut b, &retransmitted_segments(&data, &[0]));
    let ack: Vec<Segment> = ack.into_iter().filter(|s| s.len == 0).collect();
    assert_eq!(ack.last().unwrap().ack, data[7].seq + MSS);
    feed(&mut a, &ack);
    // At cwnd == ssthresh BSD is still in slow start (cw > ssthresh is false).
    assert_eq!(a.snd_cwnd, ssthresh + MSS);
    assert_eq!(a.t_dupacks, 0);
}

#[test]
fn reno_keeps_the_window_inflated_after_exactly_three_duplicates() {
    // 4.4BSD tcp_input deflates only when t_dupacks > tcprexmtthresh.
    let (mut a, mut b) = open(Flavour::Reno, Flavour::Reno, 52_428, 52_428);
    let data = send_segments(&mut a, 4);
    let dups = feed(&mut b, &data[1..4]);
    feed(&mut a, &dups);
    let ssthresh = a.snd_ssthresh;
    let acks = feed(&mut b, &data[..1]);
    feed(&mut a, &acks);
    let cw = ssthresh + 3 * MSS;
    assert_eq!(a.snd_cwnd, cw + MSS * MSS / cw + MSS / 8);
}

#[test]
fn osf1_burst_loss_is_one_fast_retransmit_then_a_timeout_and_go_back_n() {
    // The osf1 flavour's loss recovery, step by step against 4.3BSD-Reno (tcp_input.c
    // 7.25 and tcp_timer.c 7.18, June 1990; 4.4BSD's 8.1 keeps the same lines and adds
    // RFC 1323's timestamps): a switch port's overflow damages five consecutive segments
    // of a 16-segment window (wan-mismatch, docs/fidelity.md cause 11).
    let (mut a, mut b) = open(Flavour::Osf1, Flavour::Osf1, 131_072, 131_072);
    assert!(a.ts_ok && a.snd_scale > 0);
    let mss = a.t_maxseg;
    let data = send_segments(&mut a, 16);
    let arrive: Vec<Segment> = (0..16)
        .filter(|i| !(4..=8).contains(i))
        .map(|i| data[i])
        .collect();
    // 0..=3 in order: 4.4BSD's window update once the window opens by two segments
    // past the unscaled one the SYN offered; 9..=15 out of order, each ACKed at once.
    let acks = feed(&mut b, &arrive);
    assert_eq!(acks.len(), 8);
    assert_eq!(acks[0].ack, data[2].seq);
    assert!(acks[1..].iter().all(|s| s.ack == data[4].seq));
    // Two new ACKs open cwnd to 18 MSS; the third duplicate fast-retransmits segment 4
    // with ssthresh half of min(snd_wnd, cwnd) in whole segments.
    let sent = feed(&mut a, &acks);
    assert_eq!(retransmitted(&sent), vec![data[4].seq]);
    assert!(
        sent.iter().filter(|s| s.len > 0).count() == 1,
        "no new data to send"
    );
    assert_eq!(a.snd_ssthresh, 9 * mss);
    assert_eq!(a.snd_cwnd, a.snd_ssthresh + 6 * mss);
    // Segment 4 fills the first hole: a partial ACK. t_dupacks (6) > tcprexmtthresh, so
    // the window deflates to ssthresh (plus slow start's one MSS at cwnd == ssthresh) and
    // Reno's recovery is over, with segments 5..=8 still lost and 11 outstanding.
    let partial = feed(&mut b, &data[4..5]);
    assert_eq!(partial.last().unwrap().ack, data[5].seq);
    let sent = feed(&mut a, &partial);
    assert!(
        sent.iter().all(|s| s.len == 0),
        "nothing fits the deflated window"
    );
    assert_eq!(a.snd_cwnd, 10 * mss);
    assert_eq!((a.stats.fast_retransmits, a.stats.timeouts), (1, 0));
    // No duplicate can come (the receiver holds everything sent after the holes): the
    // retransmit timer, restarted by the partial ACK, is all that is left.
    let rto = a.rto();
    let mut out = Vec::new();
    let mut ticks = 0;
    while out.is_empty() {
        ticks += 1;
        assert!(ticks <= 4, "the retransmit timer never fired");
        a.set_now(SLOW_TICK.times(ticks));
        a.slow_timer(&mut out);
    }
    assert_eq!(SLOW_TICK.times(ticks), rto, "the timer runs its whole RTO");
    assert_eq!(retransmitted(&out), vec![data[5].seq]);
    assert_eq!(a.stats.timeouts, 1);
    // tcp_timer: slow start from one segment, ssthresh half the deflated window (a
    // quarter of the window that lost), the timer backed off once.
    assert_eq!(a.snd_cwnd, mss);
    assert_eq!(a.snd_ssthresh, 5 * mss);
    assert_eq!(a.rto(), rto.times(2));
    // The first new ACK carries a timestamp echo: tcp_xmit_timer clears the backoff
    // (4.4BSD times every ACK so; Karn's rule alone would wait for a new segment).
    let ack = feed(&mut b, &out);
    assert_eq!(ack.last().unwrap().ack, data[6].seq);
    let sent = feed(&mut a, &ack);
    assert_eq!(a.rto(), rto);
    // Go-back-N from snd_una, a window of two segments...
    assert_eq!(retransmitted(&sent), vec![data[6].seq, data[7].seq]);
    // ... each ACK of them one segment more (slow start): segment 8 and, without SACK,
    // 9 to 11, which the receiver already holds.
    let ack = feed(&mut b, &sent);
    assert_eq!(ack.last().unwrap().ack, data[8].seq);
    let sent = feed(&mut a, &ack);
    assert_eq!(
        retransmitted(&sent),
        vec![data[8].seq, data[9].seq, data[10].seq, data[11].seq]
    );
    let ack = feed(&mut b, &sent[..1]);
    assert_eq!(ack.last().unwrap().ack, data[15].seq + mss);
}

/// The first transmission of the given segments, as a retransmission would carry them.
fn retransmitted_segments(data: &[Segment], idx: &[usize]) -> Vec<Segment> {
    idx.iter().map(|&i| data[i]).collect()
}

#[test]
fn newreno_partial_ack_retransmits_next_hole_without_leaving_recovery() {
    // A modern sender facing a reno receiver: no SACK, so NewReno recovery.
    let (mut a, mut b) = open(Flavour::Modern, Flavour::Reno, 52_428, 52_428);
    assert!(!a.sack_ok && !a.ts_ok && a.snd_scale == 0);
    let data = send_segments(&mut a, 10);
    // Segments 0 and 3 are lost.
    let arrive: Vec<Segment> = [1, 2, 4, 5, 6, 7, 8, 9].iter().map(|&i| data[i]).collect();
    let dups = feed(&mut b, &arrive);
    assert_eq!(dups.len(), 8);
    let sent = feed(&mut a, &dups[..3]);
    assert_eq!(retransmitted(&sent), vec![data[0].seq]);
    assert!(a.in_recovery());
    // RFC 5681: ssthresh = FlightSize / 2.
    let ssthresh = a.snd_ssthresh;
    assert_eq!(ssthresh, 5 * MSS);
    assert_eq!(a.snd_cwnd, ssthresh + 3 * MSS);
    let sent = feed(&mut a, &dups[3..]);
    assert!(retransmitted(&sent).is_empty());
    // Segment 0 arrives: the ACK covers 0..=2, a partial ACK.
    let partial = feed(&mut b, &data[..1]);
    assert_eq!(partial.last().unwrap().ack, data[3].seq);
    let cwnd_before = a.snd_cwnd;
    let sent = feed(&mut a, &partial);
    assert_eq!(retransmitted(&sent), vec![data[3].seq]);
    assert!(a.in_recovery(), "a partial ACK does not end recovery");
    // Deflated by the 3 segments acked, one added back.
    assert_eq!(a.snd_cwnd, cwnd_before - 3 * MSS + MSS);
    // Segment 3 arrives: everything up to `recover` is acknowledged.
    let full = feed(&mut b, &data[3..4]);
    feed(&mut a, &full);
    assert!(!a.in_recovery());
    assert!(a.snd_cwnd <= ssthresh);
    assert_eq!(a.stats.fast_retransmits, 1);
    assert_eq!(a.stats.timeouts, 0);
}

#[test]
fn sack_blocks_report_holes_and_only_missing_segments_are_resent() {
    let (mut a, mut b) = open(Flavour::Modern, Flavour::Modern, 52_428, 52_428);
    assert!(a.sack_ok && b.sack_ok && a.ts_ok);
    let mss = a.t_maxseg;
    assert_eq!(mss, MSS - 12, "timestamps take 12 bytes of every segment");
    let data = send_segments(&mut a, 12);
    let s = |i: usize| data[i].seq;
    let e = |i: usize| data[i].seq + mss;
    // Segments 2 and 5 are lost.
    let mut acks = Vec::new();
    for i in [0, 1, 3, 4, 6, 7, 8, 9, 10, 11] {
        acks.extend(feed(&mut b, &data[i..i + 1]));
    }
    // 0 delays its ACK, 1 is the second segment: ACKed at once without blocks.
    assert_eq!((acks[0].ack, acks[0].sack.len()), (s(2), 0));
    // 3: one block; 4 extends it; 6 opens a second block, reported first.
    assert_eq!(acks[1].sack.as_slice(), &[(s(3), e(3))]);
    assert_eq!(acks[2].sack.as_slice(), &[(s(3), e(4))]);
    assert_eq!(acks[3].sack.as_slice(), &[(s(6), e(6)), (s(3), e(4))]);
    assert_eq!(
        acks.last().unwrap().sack.as_slice(),
        &[(s(6), e(11)), (s(3), e(4))]
    );
    assert!(acks.iter().all(|a| a.ack == s(2)));
    // Every ACK's IP datagram: 40 + 12 timestamps + 4 + 8 per block.
    assert_eq!(acks[3].ip_len(), 40 + 12 + 4 + 16);

    let sent = feed(&mut a, &acks);
    assert_eq!(a.sacked(), &[(s(3), e(4)), (s(6), e(11))]);
    // The third duplicate starts recovery: segment 2, then segment 5 (more
    // than 2 MSS SACKed above it), and nothing that arrived.
    assert_eq!(retransmitted(&sent), vec![s(2), s(5)]);
    assert_eq!(a.stats.fast_retransmits, 1);
    let fin_acks = feed(&mut b, &retransmitted_segments(&data, &[2, 5]));
    assert_eq!(fin_acks.last().unwrap().ack, e(11));
    assert!(fin_acks.last().unwrap().sack.is_empty());
    let sent = feed(&mut a, &fin_acks);
    assert!(retransmitted(&sent).is_empty());
    assert!(!a.in_recovery());
    assert_eq!(a.stats.segs_retransmitted, 2);
    assert_eq!(a.outstanding(), 0);
}

#[test]
fn window_scaling_only_when_both_sides_offer_it() {
    let big = 1 << 20;
    // Both modern: the SYN offers shift 5 (65535 << 5 covers 1 MB).
    let mut a = Tcb::new(Flavour::Modern, MSS, big, big, Seq(1000));
    let mut b = Tcb::new(Flavour::Modern, MSS, big, big, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    let syn = out.pop().unwrap();
    assert_eq!(syn.wscale, Some(5));
    assert_eq!(syn.win, TCP_MAXWIN, "a SYN's window is never scaled");
    b.input(&syn, &mut out);
    let synack = out.pop().unwrap();
    assert_eq!(synack.wscale, Some(5));
    a.input(&synack, &mut out);
    let ack = out.pop().unwrap();
    b.input(&ack, &mut out);
    assert_eq!(
        (a.snd_scale, a.rcv_scale, b.snd_scale, b.rcv_scale),
        (5, 5, 5, 5)
    );
    // The field carries the window >> 5; the peer reads it back << 5.
    assert_eq!(ack.win, big >> 5);
    assert_eq!(b.snd_wnd, big);
    // The active end has only seen the SYN-ACK's unscaled window so far.
    assert_eq!(a.snd_wnd, TCP_MAXWIN);
    let mss = a.t_maxseg;
    a.append(mss, &mut out);
    assert_eq!(out.len(), 1);
    b.input(&out.pop().unwrap(), &mut out);
    delayed_ack(&mut b, &mut out);
    let ack = out.pop().unwrap();
    // In units of 32 bytes; the whole window still, though a segment is
    // unread (Linux's doubled buffer has room beyond the window it offers).
    assert_eq!(ack.win, big >> 5);
    a.input(&ack, &mut out);
    assert_eq!(a.snd_wnd, big);
    assert!(a.max_sndwnd > TCP_MAXWIN);
    // More than 64 KB in flight.
    a.snd_cwnd = big;
    a.append(200_000, &mut out);
    assert!(a.outstanding() > 150_000, "{}", a.outstanding());

    // Modern to reno: reno does not answer the option: no scaling either way.
    let mut a = Tcb::new(Flavour::Modern, MSS, big, big, Seq(1000));
    let mut b = Tcb::new(Flavour::Reno, MSS, 52_428, 52_428, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    b.input(&out.pop().unwrap(), &mut out);
    let synack = out.pop().unwrap();
    assert_eq!(synack.wscale, None);
    assert!(!synack.sack_permitted && synack.ts.is_none());
    a.input(&synack, &mut out);
    let ack = out.pop().unwrap();
    assert_eq!((a.snd_scale, a.rcv_scale), (0, 0));
    // A 1 MB buffer can only advertise the 16-bit maximum.
    assert_eq!(ack.win, TCP_MAXWIN);
    assert!(ack.ts.is_none() && a.t_maxseg == MSS);
}

#[test]
fn timestamps_are_echoed_and_measure_the_rtt() {
    let one_way = SimTime::from_ms(30);
    let (mut a, mut b, mut t) =
        open_timed(Flavour::Modern, Flavour::Modern, 52_428, 52_428, one_way);
    // The SYN exchange was the first sample: 60 ms.
    let ms = a.srtt().unwrap().as_secs_f64() * 1e3;
    assert!((60.0..=62.0).contains(&ms), "{ms}");
    a.set_now(t);
    let data = send_segments(&mut a, 2);
    let tsval = data[0].ts.unwrap().val;
    assert_eq!(
        data[0].ip_len(),
        MSS + 40,
        "a full segment fills the MTU exactly"
    );
    t += one_way;
    b.set_now(t);
    let acks = feed(&mut b, &data);
    assert_eq!(acks.len(), 1);
    // The ACK of both echoes the first one's timestamp (Last.ACK.sent rule).
    assert_eq!(acks[0].ts.unwrap().ecr, tsval);
    t += one_way;
    a.set_now(t);
    feed(&mut a, &acks);
    let srtt = a.srtt().unwrap();
    let ms = srtt.as_secs_f64() * 1e3;
    assert!((60.0..=62.0).contains(&ms), "{ms}");
    // A second round at 100 ms one way moves the estimate towards 200 ms.
    let data = send_segments(&mut a, 2);
    t += SimTime::from_ms(100);
    b.set_now(t);
    let acks = feed(&mut b, &data);
    t += SimTime::from_ms(100);
    a.set_now(t);
    feed(&mut a, &acks);
    let ms2 = a.srtt().unwrap().as_secs_f64() * 1e3;
    assert!(ms2 > ms + 10.0 && ms2 < 200.0, "{ms2}");
    // sunos411 has no timestamps: the SYN exchange measured nothing finer than ticks.
    let (s, _) = open(Flavour::Sunos411, Flavour::Sunos411, 52_428, 52_428);
    assert!(!s.ts_ok && s.srtt().is_none_or(|r| r.0 % SLOW_TICK.0 == 0));
}

/// Two segments arrive in order; which ACKs go out at once.
fn immediate_acks(flavour: Flavour, lens: &[u32]) -> Vec<Segment> {
    let (mut a, mut b) = open(flavour, flavour, 52_428, 52_428);
    a.nodelay = true;
    a.snd_cwnd = 52_428;
    let mut out = Vec::new();
    for &n in lens {
        a.append(n, &mut out);
    }
    assert_eq!(out.len(), lens.len());
    feed(&mut b, &out)
}

#[test]
fn rfc1122_acks_every_second_full_segment() {
    let full = Flavour::Rfc1122.policy();
    assert_eq!(full.delack_interval, SimTime::from_ms(200));
    let acks = immediate_acks(Flavour::Rfc1122, &[MSS, MSS, MSS, MSS]);
    assert_eq!(acks.len(), 2);
    assert!(acks.iter().all(|a| a.reason == SendReason::AckNow));
    // Short segments: only the timer ACKs them.
    assert!(immediate_acks(Flavour::Rfc1122, &[500, 500, 500]).is_empty());
    // Reno (4.4BSD) delays every in-order ACK.
    assert!(immediate_acks(Flavour::Reno, &[MSS, MSS, MSS, MSS]).is_empty());
}

#[test]
fn modern_acks_every_second_segment() {
    let acks = immediate_acks(Flavour::Modern, &[500, 500, 500, 500, 500]);
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[1].ack, acks[0].ack + 1000);
}

#[test]
fn bsd44_window_update_needs_no_empty_buffer() {
    // Receive buffer 52428, MSS 1460: reading 2 MSS while 3 MSS stay queued
    // re-opens the window by 2 MSS (5.6% of the buffer): 4.4BSD sends the
    // update, Tahoe (buffer not empty, < 35%) does not.
    for (flavour, expect) in [(Flavour::Reno, true), (Flavour::Sunos411, false)] {
        let (mut a, mut b) = open(flavour, flavour, 52_428, 52_428);
        let data = send_segments(&mut a, 5);
        feed(&mut b, &data);
        let mut out = Vec::new();
        b.fast_timer(&mut out);
        assert_eq!(out.len(), 1);
        out.clear();
        b.read(2 * MSS, &mut out);
        let update = out.iter().any(|s| s.reason == SendReason::WindowUpdate);
        assert_eq!(update, expect, "{flavour}");
    }
}

#[test]
fn nt_window_update_waits_for_two_segments_not_half_the_buffer() {
    // A receive buffer of one MSS, one full segment in it: reading it reopens
    // the whole buffer. 4.4BSD (Reno) updates at once (half the buffer); NT
    // needs two segments' worth, so only its delayed-ACK timer tells the sender.
    for (flavour, at_once) in [(Flavour::Reno, true), (Flavour::Nt351, false)] {
        let (mut a, mut b) = open(flavour, flavour, MSS, MSS);
        let data = send_segments(&mut a, 1);
        assert!(
            feed(&mut b, &data).is_empty(),
            "{flavour}: one segment is not ACKed at once"
        );
        let mut out = Vec::new();
        b.read(MSS, &mut out);
        let update = out.iter().any(|s| s.reason == SendReason::WindowUpdate);
        assert_eq!(update, at_once, "{flavour}");
        if !at_once {
            assert!(b.delack_pending(), "the timer still owes the ACK");
        }
    }
    // Two segments' room: NT updates on the read as well.
    let (mut a, mut b) = open(Flavour::Nt351, Flavour::Nt351, 4 * MSS, 4 * MSS);
    let data = send_segments(&mut a, 3);
    feed(&mut b, &data);
    let mut out = Vec::new();
    b.read(3 * MSS, &mut out);
    assert!(out.iter().any(|s| s.reason == SendReason::WindowUpdate));
}

// ----- modern's per-connection timers ------------------------------------

const fn ms(n: u64) -> SimTime {
    SimTime::from_ms(n)
}

#[test]
fn modern_resends_a_lost_syn_after_one_second_then_backs_off() {
    // RFC 6298 2.1: 1 s before any RTT sample; 5.5: doubled per timeout.
    let mut a = Tcb::new(Flavour::Modern, MSS, 52_428, 52_428, Seq(1000));
    let mut out = Vec::new();
    a.connect(&mut out);
    assert!(out.pop().unwrap().flags.syn);
    assert_eq!(a.next_timer(), Some(SimTime::from_secs(1)));
    a.set_now(SimTime::from_secs(1));
    a.expire_timers(&mut out);
    let syn = out.pop().unwrap();
    assert!(syn.flags.syn && out.is_empty());
    assert_eq!(a.stats.timeouts, 1);
    assert_eq!(a.next_timer(), Some(SimTime::from_secs(3)));
}

#[test]
fn modern_retransmits_after_the_rto_not_whole_slow_ticks_and_backs_off() {
    // A 1 ms path: the SYN exchange measured 2 ms, so SRTT + 4·RTTVAR is far
    // under the floor and the RTO is TCP_RTO_MIN.
    let (mut a, mut b, t) = open_timed(Flavour::Modern, Flavour::Modern, 52_428, 52_428, ms(1));
    assert_eq!(a.rto(), ms(200));
    a.set_now(t);
    let lost = send_segments(&mut a, 2);
    // RFC 6298 5.1: the first data sent starts the timer.
    assert_eq!(a.next_timer(), Some(t + ms(200)));
    let mut out = Vec::new();
    a.set_now(t + ms(200) - SimTime(1));
    a.expire_timers(&mut out);
    assert!(out.is_empty(), "not a picosecond early");
    // 5.4–5.6: the first unacknowledged segment again, slow start from one
    // segment, the timer backed off to 400 ms and started again.
    a.set_now(t + ms(200));
    a.expire_timers(&mut out);
    assert_eq!(retransmitted(&out), vec![lost[0].seq]);
    assert_eq!(out.len(), 1);
    assert_eq!((a.stats.timeouts, a.snd_cwnd), (1, a.t_maxseg));
    assert_eq!(a.rto(), ms(400));
    assert_eq!(a.next_timer(), Some(t + ms(600)));
    // Lost again: 800 ms.
    out.clear();
    a.set_now(t + ms(600));
    a.expire_timers(&mut out);
    assert_eq!(retransmitted(&out), vec![lost[0].seq]);
    assert_eq!(a.rto(), ms(800));
    assert_eq!(a.next_timer(), Some(t + ms(1400)));
    // This one arrives; the receiver delays its ACK 40 ms. The ACK's echoed
    // timestamp is a valid sample (RFC 7323): the backoff is over, and the
    // timer restarts for the second segment, resent now (5.3).
    let rexmt = out.pop().unwrap();
    b.set_now(t + ms(601));
    feed(&mut b, &[rexmt]);
    let mut acks = Vec::new();
    delayed_ack(&mut b, &mut acks);
    assert_eq!(acks.len(), 1);
    let t_ack = t + ms(642);
    a.set_now(t_ack);
    let sent = feed(&mut a, &acks);
    assert_eq!(retransmitted(&sent), vec![lost[1].seq]);
    assert_eq!(a.rto(), ms(200));
    assert_eq!(a.next_timer(), Some(t_ack + ms(200)));
    // 5.2: all acknowledged: the timer stops.
    b.set_now(t_ack + ms(1));
    let acks = feed(&mut b, &sent);
    let acks = if acks.is_empty() {
        let mut v = Vec::new();
        delayed_ack(&mut b, &mut v);
        v
    } else {
        acks
    };
    a.set_now(t_ack + ms(50));
    feed(&mut a, &acks);
    assert_eq!(a.outstanding(), 0);
    assert_eq!(a.next_timer(), None);

    // reno on the same path: no deadline of its own; its slow ticks need at
    // least two (TCPTV_MIN, 1 s) before the first retransmission.
    let (mut r, _, t) = open_timed(Flavour::Reno, Flavour::Reno, 52_428, 52_428, ms(1));
    let rto = r.rto();
    assert!(rto >= SimTime::from_secs(1), "{rto}");
    r.set_now(t);
    let lost = send_segments(&mut r, 2);
    assert_eq!(r.next_timer(), None);
    let mut out = Vec::new();
    let mut ticks = 0;
    while out.is_empty() {
        r.slow_timer(&mut out);
        r.expire_timers(&mut out);
        ticks += 1;
        assert!(ticks < 100);
    }
    assert_eq!(retransmitted(&out), vec![lost[0].seq]);
    // The counter runs out on the RTO's last tick (the first tick may come
    // at once after the send: 0.5 s to 1 s at least).
    assert_eq!(SLOW_TICK.times(ticks), rto);
}

#[test]
fn modern_delays_an_ack_40ms_after_the_first_unacked_segment() {
    let (mut a, mut b) = open(Flavour::Modern, Flavour::Modern, 52_428, 52_428);
    a.nodelay = true;
    a.snd_cwnd = 52_428;
    let mut segs = Vec::new();
    for _ in 0..3 {
        a.append(500, &mut segs);
    }
    assert_eq!(segs.len(), 3);
    let mut out = Vec::new();
    // The first segment at 5 ms: no ACK yet; one falls due 40 ms later.
    b.set_now(ms(5));
    b.input(&segs[0], &mut out);
    assert!(out.is_empty() && b.delack_pending());
    assert_eq!(b.next_timer(), Some(ms(45)));
    // The second at 17 ms is ACKed at once: nothing is delayed any more.
    b.set_now(ms(17));
    b.input(&segs[1], &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].reason, SendReason::AckNow);
    assert_eq!(b.next_timer(), None);
    out.clear();
    // The third at 30 ms gets its own 40 ms (no global grid, no stale deadline).
    b.set_now(ms(30));
    b.input(&segs[2], &mut out);
    assert!(out.is_empty());
    assert_eq!(b.next_timer(), Some(ms(70)));
    b.set_now(ms(45));
    b.expire_timers(&mut out);
    b.fast_timer(&mut out);
    assert!(out.is_empty(), "the first segment's deadline is gone");
    b.set_now(ms(70));
    b.expire_timers(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].reason, out[0].ack),
        (SendReason::DelayedAck, segs[2].seq + 500)
    );
    assert_eq!(b.stats.delayed_acks, 1);
    assert!(b.next_timer().is_none() && !b.delack_pending());

    // rfc1122 (200 ms, BSD): no deadline; the host's next fast tick sends it.
    let (mut a, mut b) = open(Flavour::Rfc1122, Flavour::Rfc1122, 52_428, 52_428);
    a.nodelay = true;
    let mut segs = Vec::new();
    a.append(500, &mut segs);
    let mut out = Vec::new();
    b.input(&segs[0], &mut out);
    assert!(out.is_empty() && b.delack_pending() && b.next_timer().is_none());
    b.fast_timer(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].reason, SendReason::DelayedAck);
}

#[test]
fn modern_probes_a_closed_window_at_the_backed_off_rto() {
    // A window of two segments (of MSS less the timestamps) in a receive
    // buffer the kernel doubles to four.
    let rcvbuf = 2 * (MSS - 12);
    let (mut a, mut b, t) = open_timed(Flavour::Modern, Flavour::Modern, 52_428, rcvbuf, ms(1));
    a.set_now(t);
    b.set_now(t);
    let mss = a.t_maxseg;
    a.snd_cwnd = 52_428;
    let mut segs = Vec::new();
    a.append(8 * mss, &mut segs);
    // The receiver does not read: the sender fills the buffer a window at a
    // time until the window closes.
    let t1 = t + ms(2);
    let mut acks;
    loop {
        acks = feed(&mut b, &segs);
        a.set_now(t1);
        segs = feed(&mut a, &acks);
        if segs.is_empty() {
            break;
        }
    }
    assert_eq!(acks.last().unwrap().win, 0, "{acks:?}");
    assert_eq!(b.rcv.cc, 4 * mss);
    assert_eq!((a.outstanding(), a.snd_wnd), (0, 0));
    // The retransmit timer stopped; the persist timer runs at the RTO (the floor).
    assert_eq!(a.next_timer(), Some(t1 + ms(200)));
    let mut out = Vec::new();
    a.set_now(t1 + ms(200));
    a.expire_timers(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].reason, out[0].len), (SendReason::Persist, 1));
    // Backed off: 400 ms to the next probe.
    assert_eq!(a.next_timer(), Some(t1 + ms(600)));
}

// ----- a small lossy path ------------------------------------------------

/// One transfer over a path of `rate_bps` and `one_way` delay in each
/// direction with no other loss than the first transmissions of the listed
/// data segments (counted from 0). The BSD flavours' hosts tick their fast
/// timers every `delack_interval` and their slow timers every 500 ms; `modern`
/// runs each connection's timers at their deadlines.
struct LossyPath {
    now: SimTime,
    tcb: [Tcb; 2],
    /// (arrival, tiebreak, destination, segment index).
    events: BinaryHeap<Reverse<(SimTime, u64, usize, usize)>>,
    segs: Vec<Segment>,
    link_free: [SimTime; 2],
    next: u64,
    rate_bps: u64,
    one_way: SimTime,
    drop: Vec<u64>,
    data_sent: u64,
    to_write: u64,
    delivered: u64,
}

/// What one run measured.
#[derive(Debug)]
struct Outcome {
    done_at: SimTime,
    retransmitted: u64,
    timeouts: u64,
    fast_retransmits: u64,
}

const TIMER: usize = usize::MAX;

impl LossyPath {
    fn run(flavour: Flavour, nbytes: u64, drop: &[u64]) -> Outcome {
        let buf = 52_428;
        let (a, b) = open(flavour, flavour, buf, buf);
        let mut p = LossyPath {
            now: SimTime::ZERO,
            tcb: [a, b],
            events: BinaryHeap::new(),
            segs: Vec::new(),
            link_free: [SimTime::ZERO; 2],
            next: 0,
            rate_bps: 10_000_000,
            one_way: SimTime::from_ms(10),
            drop: drop.to_vec(),
            data_sent: 0,
            to_write: nbytes,
            delivered: 0,
        };
        let fast = flavour.policy().delack_interval;
        if flavour.policy().timers == TimerModel::SlowTick {
            // Timer ticks are events for destination TIMER, index 0 fast, 1 slow.
            p.schedule(fast, TIMER, 0);
            p.schedule(SimTime::from_ms(123), TIMER, 1);
        }
        p.write();
        while p.delivered < nbytes {
            // A connection's own timer, if it falls due before the next event.
            let next_event = p.events.peek().map(|Reverse((at, ..))| *at);
            let due = (0..2)
                .filter_map(|side| p.tcb[side].next_timer().map(|at| (at, side)))
                .min()
                .filter(|&(at, _)| next_event.is_none_or(|e| at <= e));
            if let Some((at, side)) = due {
                assert!(at < SimTime::from_secs(120), "{flavour}: no progress");
                p.now = at;
                for t in &mut p.tcb {
                    t.set_now(at);
                }
                let mut out = Vec::new();
                p.tcb[side].expire_timers(&mut out);
                p.transmit(side, &mut out);
                p.write();
                continue;
            }
            let Reverse((at, _, dst, idx)) = p.events.pop().expect("stalled");
            assert!(at < SimTime::from_secs(120), "{flavour}: no progress");
            p.now = at;
            for t in &mut p.tcb {
                t.set_now(at);
            }
            let mut out = Vec::new();
            if dst == TIMER {
                for side in 0..2 {
                    if idx == 0 {
                        p.tcb[side].fast_timer(&mut out);
                    } else {
                        p.tcb[side].slow_timer(&mut out);
                    }
                    p.transmit(side, &mut out);
                }
                let period = if idx == 0 { fast } else { SLOW_TICK };
                p.schedule(at + period, TIMER, idx);
            } else {
                let seg = p.segs[idx];
                p.tcb[dst].input(&seg, &mut out);
                p.transmit(dst, &mut out);
                if dst == 1 && p.tcb[1].rcv.cc > 0 {
                    // The sink reads everything at once.
                    let n = p.tcb[1].rcv.cc;
                    p.delivered += n as u64;
                    p.tcb[1].read(n, &mut out);
                    p.transmit(1, &mut out);
                }
            }
            p.write();
        }
        let s = p.tcb[0].stats;
        Outcome {
            done_at: p.now,
            retransmitted: s.segs_retransmitted,
            timeouts: s.timeouts,
            fast_retransmits: s.fast_retransmits,
        }
    }

    fn schedule(&mut self, at: SimTime, dst: usize, idx: usize) {
        self.next += 1;
        self.events.push(Reverse((at, self.next, dst, idx)));
    }

    /// The source keeps the send buffer full.
    fn write(&mut self) {
        let n = (self.tcb[0].snd.space() as u64).min(self.to_write) as u32;
        if n > 0 {
            self.to_write -= n as u64;
            let mut out = Vec::new();
            self.tcb[0].append(n, &mut out);
            self.transmit(0, &mut out);
        }
    }

    fn transmit(&mut self, from: usize, out: &mut Vec<Segment>) {
        for seg in out.drain(..) {
            let bits = seg.ip_len() as u64 * 8;
            let start = self.link_free[from].max(self.now);
            let done = start + SimTime(bits * 1_000_000_000_000 / self.rate_bps);
            self.link_free[from] = done;
            if from == 0 && seg.len > 0 && seg.reason != SendReason::Retransmit {
                let k = self.data_sent;
                self.data_sent += 1;
                if self.drop.contains(&k) {
                    continue;
                }
            }
            self.segs.push(seg);
            let idx = self.segs.len() - 1;
            self.schedule(done + self.one_way, 1 - from, idx);
        }
    }
}

#[test]
fn loss_recovery_timeout_vs_fast_retransmit_vs_sack() {
    let nbytes = 1 << 20;
    let clean: Vec<Outcome> = [Flavour::Sunos411, Flavour::Reno, Flavour::Modern]
        .into_iter()
        .map(|f| LossyPath::run(f, nbytes, &[]))
        .collect();
    for (f, o) in [Flavour::Sunos411, Flavour::Reno, Flavour::Modern]
        .into_iter()
        .zip(&clean)
    {
        assert_eq!((o.retransmitted, o.timeouts), (0, 0), "{f}: {o:?}");
    }
    let lost_time = |f: Flavour, i: usize, drop: &[u64]| {
        let o = LossyPath::run(f, nbytes, drop);
        let extra = o.done_at.saturating_sub(clean[i].done_at);
        (o, extra.as_secs_f64())
    };

    // One segment lost in the middle of the transfer.
    let (s, s_extra) = lost_time(Flavour::Sunos411, 0, &[300]);
    let (r, r_extra) = lost_time(Flavour::Reno, 1, &[300]);
    let (m, m_extra) = lost_time(Flavour::Modern, 2, &[300]);
    // All three resend the one segment after three duplicates; sunos411 (Tahoe)
    // then slow-starts from one segment where reno and modern keep half the window.
    assert_eq!(
        (s.timeouts, s.fast_retransmits, s.retransmitted),
        (0, 1, 1),
        "{s:?}"
    );
    assert_eq!(
        (r.timeouts, r.fast_retransmits, r.retransmitted),
        (0, 1, 1),
        "{r:?}"
    );
    assert_eq!(
        (m.timeouts, m.fast_retransmits, m.retransmitted),
        (0, 1, 1),
        "{m:?}"
    );
    assert!(r_extra < 0.25 && m_extra < 0.25, "{r_extra} {m_extra}");
    assert!(
        s_extra > r_extra.max(m_extra),
        "{s_extra} {r_extra} {m_extra}"
    );

    // Three segments lost from one window: SACK resends exactly those in one
    // recovery; Reno's first new ACK ends its recovery early.
    let drop = [300, 303, 306];
    let (s, s_extra) = lost_time(Flavour::Sunos411, 0, &drop);
    let (r, r_extra) = lost_time(Flavour::Reno, 1, &drop);
    let (m, m_extra) = lost_time(Flavour::Modern, 2, &drop);
    assert!(s.timeouts >= 1, "{s:?}");
    assert_eq!(
        (m.timeouts, m.fast_retransmits, m.retransmitted),
        (0, 1, 3),
        "{m:?}"
    );
    assert!(
        m_extra < r_extra && m_extra < s_extra,
        "{s_extra} {r_extra} {m_extra}"
    );
    assert!(r.retransmitted >= 3, "{r:?}");
}

mod arbitrary_input {
    use super::*;
    use crate::tcp::segment::{Flags, SackBlocks, Timestamps};
    use proptest::prelude::*;

    /// A segment with every field drawn near the connection's sequence
    /// numbers (so that many are acceptable) or anywhere.
    fn segment() -> impl Strategy<Value = Segment> {
        let seq = prop_oneof![
            (0u32..200_000).prop_map(|d| Seq(5001 + d)),
            any::<u32>().prop_map(Seq)
        ];
        let ack = prop_oneof![
            (0u32..200_000).prop_map(|d| Seq(1001 + d)),
            any::<u32>().prop_map(Seq)
        ];
        let blocks = proptest::collection::vec((0u32..200_000, 0u32..20_000), 0..5);
        (
            seq,
            ack,
            prop_oneof![Just(0u32), 1u32..3000],
            (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
            prop_oneof![0u32..70_000, any::<u32>()],
            proptest::option::of(0u32..70_000),
            proptest::option::of(any::<u8>()),
            proptest::option::of((any::<u32>(), any::<u32>())),
            blocks,
        )
            .prop_map(
                |(seq, ack, len, (syn, ackf, fin, rst), win, mss, ws, ts, blocks)| {
                    let mut sack = SackBlocks::default();
                    for (s, l) in blocks {
                        sack.push(Seq(1001 + s), Seq(1001 + s + l));
                    }
                    Segment {
                        seq,
                        ack,
                        len,
                        flags: Flags {
                            syn,
                            ack: ackf,
                            fin,
                            rst,
                        },
                        win,
                        mss,
                        wscale: ws,
                        sack_permitted: syn,
                        ts: ts.map(|(val, ecr)| Timestamps { val, ecr }),
                        sack,
                        reason: SendReason::AckNow,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn no_input_panics(
            flavour in prop_oneof![
                Just(Flavour::Sunos411),
                Just(Flavour::Reno),
                Just(Flavour::Rfc1122),
                Just(Flavour::Modern)
            ],
            segs in proptest::collection::vec(segment(), 1..60),
            ticks in proptest::collection::vec(0u8..4, 60),
        ) {
            let (mut a, mut b) = open(flavour, flavour, 52_428, 52_428);
            let mut out = Vec::new();
            a.append(40_000, &mut out);
            for (i, s) in segs.iter().enumerate() {
                let now = SimTime::from_ms(7 * i as u64);
                a.set_now(now);
                b.set_now(now);
                // Both ends see the garbage; timers and the socket layer run between.
                a.input(s, &mut out);
                b.input(s, &mut out);
                match ticks[i] {
                    0 => { a.slow_timer(&mut out); b.slow_timer(&mut out); }
                    1 => {
                        a.fast_timer(&mut out);
                        b.fast_timer(&mut out);
                        a.expire_timers(&mut out);
                        b.expire_timers(&mut out);
                    }
                    2 => { let n = b.rcv.cc; b.read(n, &mut out); }
                    _ => { let n = a.snd.space().min(5000); a.append(n, &mut out); }
                }
                for seg in out.drain(..) {
                    prop_assert!(seg.win <= TCP_MAXWIN);
                    prop_assert!(seg.options_len() <= 40);
                }
            }
        }
    }
}

#[test]
fn every_flavour_recovers_from_any_loss_pattern() {
    let patterns: [&[u64]; 5] = [
        &[0],
        &[1, 2, 3],
        &[300, 301, 302, 303, 304, 305],
        &[300, 310, 320, 330, 340],
        &[200, 202, 204, 206, 208, 210, 212, 214],
    ];
    for flavour in Flavour::ALL {
        for drop in patterns {
            // LossyPath::run fails on a stall; the transfer must complete.
            let o = LossyPath::run(flavour, 1 << 20, drop);
            assert!(
                o.retransmitted >= drop.len() as u64,
                "{flavour} {drop:?}: {o:?}"
            );
            if flavour == Flavour::Modern {
                // SACK resends exactly what was lost, without a timeout (the
                // 10-segment initial window gives duplicates even for segment 0).
                assert_eq!(
                    (o.timeouts, o.retransmitted),
                    (0, drop.len() as u64),
                    "{drop:?}"
                );
            }
        }
    }
}

/// Connect two control blocks of one flavour over interfaces of `mtu_mss`.
fn handshake(f: Flavour, mtu_mss: u32) -> (Tcb, Tcb) {
    let mut a = Tcb::new(f, mtu_mss, 65_536, 65_536, Seq(1000));
    let mut b = Tcb::new(f, mtu_mss, 65_536, 65_536, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    b.input(&out.pop().unwrap(), &mut out);
    a.input(&out.pop().unwrap(), &mut out);
    b.input(&out.pop().unwrap(), &mut out);
    (a, b)
}

#[test]
fn segment_data_size_follows_each_kernels_tcp_mss() {
    // Classical IP (MTU 9180): 4.4BSD rounds 9140 to whole 2 KB clusters; OSF/1
    // also keeps the timestamp option out of the data, so segments carry 8 KB;
    // a modern stack pays the option out of MTU − 40.
    for (f, data) in [
        (Flavour::Sunos411, 9140),
        (Flavour::Reno, 8192),
        (Flavour::Osf1, 8192),
        (Flavour::Modern, 9140 - 12),
    ] {
        let (a, b) = handshake(f, 9140);
        assert_eq!((a.t_maxseg, b.t_maxseg), (data, data), "{f}");
    }
    // An MTU with no room for the option beside whole clusters: OSF/1 pays it too.
    let (a, _) = handshake(Flavour::Osf1, 8192);
    assert_eq!(a.t_maxseg, 8192 - 12);
}

#[test]
fn modern_fills_a_scaled_window_with_a_sub_mss_tail_unless_one_is_unacked() {
    // wan-window at 64 KB: a 9128-byte MSS, window scaling (65536 > 65535).
    let (mut a, mut b) = handshake(Flavour::Modern, 9140);
    let mss = a.t_maxseg;
    assert_eq!((a.rcv_scale, b.rcv_scale), (1, 1));
    a.snd_cwnd = 1 << 20;
    a.snd_wnd = 65_536;
    let mut burst = Vec::new();
    a.append(14 * mss, &mut burst);
    // Seven whole segments, then the window's rest (Linux's tcp_mss_split_point):
    // the whole 64 KB, eight segments.
    let lens: Vec<u32> = burst.iter().map(|s| s.len).collect();
    assert_eq!(lens, [vec![mss; 7], vec![65_536 - 7 * mss]].concat());
    assert_eq!(burst[7].reason, SendReason::WindowTail);
    // The receiver offers the whole window still; its ACK of the first two
    // segments, with 1000 bytes more window: two whole segments go, the new
    // 1000-byte rest waits, for the 1640-byte one is unacknowledged (Minshall).
    let acks = feed(&mut b, &burst);
    assert_eq!(acks.len(), 4, "every second segment: {acks:?}");
    let mut first = acks[0];
    assert_eq!(first.ack, burst[2].seq);
    first.win += 1000 >> 1;
    let sent = feed(&mut a, &[first]);
    let lens: Vec<u32> = sent.iter().map(|s| s.len).collect();
    assert_eq!(lens, [mss, mss]);
    // Once it is acknowledged, a rest goes again after a whole segment.
    a.append(2 * mss, &mut Vec::new());
    let sent = feed(&mut a, &acks[1..]);
    assert!(
        sent.iter().any(|s| s.reason == SendReason::WindowTail),
        "{sent:?}"
    );
}

#[test]
fn modern_offers_an_unscaled_window_in_whole_segments() {
    // wan-window at 16 KB: no window scaling; Linux's __tcp_select_window
    // offers 9128 of the 16384 bytes, so one segment per round trip.
    let mut a = Tcb::new(Flavour::Modern, 9140, 16_384, 16_384, Seq(1000));
    let mut b = Tcb::new(Flavour::Modern, 9140, 16_384, 16_384, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    b.input(&out.pop().unwrap(), &mut out);
    a.input(&out.pop().unwrap(), &mut out);
    b.input(&out.pop().unwrap(), &mut out);
    assert_eq!(b.rcv_scale, 0);
    let mss = a.t_maxseg;
    assert_eq!(a.snd_wnd, mss);
    a.snd_cwnd = 1 << 20;
    let mut segs = Vec::new();
    a.append(3 * mss, &mut segs);
    assert_eq!(segs.len(), 1);
    let mut acks = feed(&mut b, &segs);
    delayed_ack(&mut b, &mut acks);
    assert_eq!(acks.last().unwrap().win, mss, "{acks:?}");
}
