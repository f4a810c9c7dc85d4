//! UDP sockets: no connection, no retransmission. A datagram larger than the
//! interface MTU leaves as IP fragments, each its own AAL5 PDU; losing any
//! fragment (a dropped cell damages its PDU) loses the datagram. A datagram
//! that arrives when the receive buffer lacks room is dropped (sbappendaddr).

use crate::tcp::SockBuf;
use std::collections::{BTreeMap, VecDeque};

/// UDP (8) + IP (20) header bytes.
pub const UDPIP_HEADER: u32 = 28;
/// IP header bytes repeated in every fragment.
pub const IP_HEADER: u32 = 20;
/// The largest UDP payload one IP datagram carries (65535 − 20 − 8).
pub const MAX_DATAGRAM: u32 = 65_507;

/// IP lengths of the fragments a UDP datagram of `data` bytes leaves as, for
/// an interface MTU: every fragment but the last carries a multiple of 8 bytes.
pub fn fragments(data: u32, mtu: u32) -> Vec<u32> {
    let per = (mtu - IP_HEADER) / 8 * 8;
    let mut rest = data + 8; // the UDP header travels in the first fragment
    let mut out = Vec::new();
    while rest > 0 {
        let n = rest.min(per);
        out.push(IP_HEADER + n);
        rest -= n;
    }
    out
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpStats {
    pub datagrams_sent: u64,
    pub fragments_sent: u64,
    pub datagrams_received: u64,
    /// Complete datagrams dropped because the receive buffer was full.
    pub dropped_no_buffer: u64,
    /// Fragments refused by a full interface queue (the datagram is lost).
    pub dropped_interface_queue: u64,
}

/// One UDP socket (one end of a transfer).
#[derive(Clone, Debug, Default)]
pub struct UdpSock {
    pub rcv: SockBuf,
    /// Datagrams waiting to be read, by length.
    pub queue: VecDeque<u32>,
    /// Fragments received so far of datagrams not yet complete: id → count.
    partial: BTreeMap<u64, u16>,
    pub stats: UdpStats,
}

impl UdpSock {
    pub fn new(rcvbuf: u32) -> UdpSock {
        UdpSock {
            rcv: SockBuf::new(rcvbuf),
            ..UdpSock::default()
        }
    }

    /// A fragment of datagram `id` (of `count` fragments, `data` bytes) arrived.
    /// Returns true when a whole datagram joined the receive buffer.
    pub fn input(&mut self, id: u64, count: u16, data: u32) -> bool {
        let have = self.partial.entry(id).or_insert(0);
        *have += 1;
        if *have < count {
            return false;
        }
        self.partial.remove(&id);
        if self.rcv.space() < data {
            self.stats.dropped_no_buffer += 1;
            return false;
        }
        self.rcv.cc += data;
        self.queue.push_back(data);
        self.stats.datagrams_received += 1;
        true
    }

    /// read(): one datagram (what does not fit in `buflen` is discarded).
    pub fn read(&mut self) -> Option<u32> {
        let n = self.queue.pop_front()?;
        self.rcv.cc -= n;
        Some(n)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn fragmentation_follows_the_mtu() {
        // 8192 bytes fit one 9188-byte MTU: 8192 + 8 + 20.
        assert_eq!(fragments(8192, 9188), vec![8220]);
        // 20000 bytes: fragments of 9168 data bytes (a multiple of 8).
        assert_eq!(
            fragments(20_000, 9188),
            vec![9188, 9188, 20 + 20_008 - 2 * 9168]
        );
    }

    #[test]
    fn a_datagram_is_delivered_only_whole_and_only_with_room() {
        let mut s = UdpSock::new(10_000);
        assert!(!s.input(1, 2, 9000));
        assert!(s.input(1, 2, 9000));
        assert!(!s.input(2, 1, 9000)); // no room: dropped
        assert_eq!(s.stats.dropped_no_buffer, 1);
        assert_eq!(s.read(), Some(9000));
        assert_eq!(s.read(), None);
    }
}
