//! The control block's own checks: a SunOS 4.1.1 pair connected by hand.

use super::*;
use crate::tcp::segment::SendReason;

const MSS: u32 = 9148;

/// Two connected control blocks, SYN exchange done by hand.
fn pair(sndbuf: u32, rcvbuf: u32) -> (Tcb, Tcb) {
    let mut a = Tcb::new(Flavour::Sunos411, MSS, sndbuf, rcvbuf, Seq(1000));
    let mut b = Tcb::new(Flavour::Sunos411, MSS, sndbuf, rcvbuf, Seq(5000));
    let mut out = Vec::new();
    b.listen();
    a.connect(&mut out);
    let syn = out.pop().unwrap();
    assert!(syn.flags.syn && syn.mss == Some(MSS));
    b.input(&syn, &mut out);
    let synack = out.pop().unwrap();
    assert!(synack.flags.syn && synack.flags.ack);
    let w = a.input(&synack, &mut out);
    assert!(w.established);
    let ack = out.pop().unwrap();
    assert!(b.input(&ack, &mut out).established);
    assert!(out.is_empty());
    (a, b)
}

#[test]
fn handshake_negotiates_mss_and_slow_start() {
    let (a, b) = pair(16384, 24576);
    assert_eq!(a.t_maxseg, MSS);
    assert_eq!(b.t_maxseg, MSS);
    assert_eq!(a.snd_cwnd, MSS);
    assert_eq!(a.max_sndwnd, 24576);
}

#[test]
fn idle_connection_sends_short_segment_then_nagle_holds() {
    let (mut a, _b) = pair(16384, 24576);
    a.snd_cwnd = TCP_MAXWIN; // look at the send rule alone
    let mut out = Vec::new();
    a.append(4096, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].len, out[0].reason), (4096, SendReason::Idle));
    out.clear();
    // Not idle now: 4096 < max_sndwnd/2 = 12288, so the next 4 KB waits.
    a.append(4096, &mut out);
    assert!(out.is_empty());
    a.append(4096, &mut out);
    assert!(out.is_empty());
    // 12288 >= 12288: half-window fires, and sends an MSS first.
    a.append(4096, &mut out);
    let lens: Vec<(u32, SendReason)> = out.iter().map(|s| (s.len, s.reason)).collect();
    assert_eq!(lens, vec![(MSS, SendReason::FullMss)]);
}

#[test]
fn in_order_data_only_delays_the_ack_until_the_fast_timer() {
    let (mut a, mut b) = pair(52428, 52428);
    let mut out = Vec::new();
    a.append(4096, &mut out);
    let seg = out.pop().unwrap();
    b.input(&seg, &mut out);
    assert!(out.is_empty() && b.delack_pending());
    b.fast_timer(&mut out);
    let ack = out.pop().unwrap();
    assert_eq!(
        (ack.reason, ack.ack),
        (SendReason::DelayedAck, seg.seq + 4096)
    );
}

#[test]
fn reading_reopens_window_by_35_percent_and_acks() {
    let (mut a, mut b) = pair(52428, 24576);
    a.snd_cwnd = TCP_MAXWIN;
    let mut out = Vec::new();
    a.append(MSS, &mut out);
    let seg = out.pop().unwrap();
    b.input(&seg, &mut out);
    assert!(out.is_empty());
    // 9148/24576 = 37% >= 35%: the read triggers a window update.
    b.read(MSS, &mut out);
    assert_eq!(out.pop().unwrap().reason, SendReason::WindowUpdate);
}

#[test]
fn out_of_order_is_acked_at_once_and_reassembled() {
    let (mut a, mut b) = pair(52428, 52428);
    a.snd_cwnd = TCP_MAXWIN;
    let mut out = Vec::new();
    a.append(2 * MSS, &mut out);
    assert_eq!(out.len(), 2);
    let second = out.pop().unwrap();
    let first = out.pop().unwrap();
    b.input(&second, &mut out);
    assert_eq!(out.pop().unwrap().ack, first.seq);
    let w = b.input(&first, &mut out);
    assert!(w.readable);
    assert_eq!(b.rcv.cc, 2 * MSS);
}

#[test]
fn timeout_retransmits_from_snd_una_with_one_segment_window() {
    let (mut a, _b) = pair(52428, 52428);
    a.snd_cwnd = TCP_MAXWIN;
    let mut out = Vec::new();
    a.append(2 * MSS, &mut out);
    out.clear();
    let mut ticks = 0;
    while out.is_empty() {
        a.slow_timer(&mut out);
        ticks += 1;
        assert!(ticks < 100);
    }
    assert_eq!(out[0].seq, a.snd_una);
    assert_eq!(out[0].reason, SendReason::Retransmit);
    assert_eq!(a.snd_cwnd, MSS);
    assert_eq!(a.stats.timeouts, 1);
}
