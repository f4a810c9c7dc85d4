//! The socket layer's side of a send: how sosend moves user data into the send
//! buffer. SunOS 4.1.1 copies into 4 KB clusters while it can, otherwise in
//! whole 1 KB pieces; a last piece under 1 KB goes in whole. tcp_output runs
//! after each piece, which is why the amounts TCP sees are multiples of 1 KB.
//! Each piece is a turn of 4.3BSD's sosend loop, so the test at its top comes
//! before each: while a cluster or more of the write remains, a piece goes in
//! only when a whole cluster is free (or the buffer holds less than one). A
//! writer woken by an ACK that freed a few hundred bytes sleeps on instead of
//! trickling in a kilobyte.

//!
//! Each piece lands in host buffers (mbufs) that tcp_output later gathers a
//! segment from; the SBA-200 with cell-level spacing stalls where one of
//! them that is a 1 KB cluster mbuf ends and the next begins (docs/design.md §5):
//! [`SendMbufs`] keeps where they begin and which follow a 1 KB cluster.
//!
//! Why only there. The stall was measured on 8 KB UDP datagrams built from
//! 1 KB cluster mbufs: 7–8 cell slots every 21–22 cells. For TCP segments on
//! the policed VP the same study's conformance analysis, borne out by its
//! traces, has every cell at exactly the spacing interval and no stall. The
//! LAN buffer study describes SunOS 4.1.1's mbufs (000 §4.1.1): each holds up
//! to 112 bytes or points to a 1 KB block, and a bulk writer's data goes in
//! 4 KB at a time; so a TCP segment's data, too, lies in 1 KB blocks, and no
//! source we found says why the adapter stalls for UDP and not for TCP. Every
//! buffer becomes one DMA segment of the adapter's transmit descriptor (as in
//! the Fore 200-series driver of FreeBSD, sys/dev/hfa/fore_transmit.c: one
//! segment descriptor per buffer of the chain). The model keeps both outcomes
//! by an assumption: each 4 KB append is one host buffer the adapter does not
//! stall inside, and the stall comes where a 1 KB piece ends (docs/mechanisms.md).

use crate::tcp::Seq;
use std::collections::VecDeque;

/// One 4 KB append (000 §4.1.1), taken as one host buffer (the module doc's
/// assumption; 000 has SunOS's mbufs point to 1 KB blocks).
pub const CLUSTER: u32 = 4096;
/// The smaller unit sosend falls back to: a 1 KB buffer of its own (the 1 KB
/// cluster mbufs the SBus adapter's stalls were measured on, docs/design.md §5).
pub const SMALL_UNIT: u32 = 1024;

/// Which kernel's sosend moves user data into the send buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppendRule {
    /// SunOS 4.1.1: 4 KB clusters, else whole 1 KB pieces (see [`sunos_append`]).
    SunOs,
    /// 4.4BSD: block while the free space is below the low-water mark (one
    /// mbuf cluster, or the buffer if smaller) and the write does not fit; then
    /// one cluster (or what fits) per tcp_output call. Carries MCLBYTES.
    Bsd44 { mclbytes: u32 },
}

impl AppendRule {
    /// How many bytes sosend appends next, given the send buffer's size and the
    /// bytes it holds and the user data still to copy; `None`: the writer
    /// blocks until an ACK frees space.
    pub fn next(self, hiwat: u32, cc: u32, resid: u32) -> Option<u32> {
        let space = hiwat.saturating_sub(cc);
        match self {
            AppendRule::SunOs => {
                if sunos_waits_for_a_cluster(cc, space, resid) {
                    return None;
                }
                sunos_append(space, resid)
            }
            AppendRule::Bsd44 { mclbytes } => {
                let lowat = mclbytes.min(hiwat);
                if resid == 0 || (space < resid && space < lowat) {
                    return None;
                }
                Some(space.min(resid).min(mclbytes))
            }
        }
    }
}

impl AppendRule {
    /// The host buffers a piece of `n` bytes lands in, in order, each with
    /// whether it is a 1 KB cluster mbuf: SunOS puts a 4 KB block in one
    /// cluster and whole kilobytes in 1 KB clusters each (a final piece under
    /// 1 KB in one); 4.4BSD puts each piece (at most one cluster of MCLBYTES,
    /// 2 KB and up) in one buffer.
    pub fn buffers(self, n: u32) -> impl Iterator<Item = (u32, bool)> {
        let (unit, small) = match self {
            AppendRule::SunOs if n == CLUSTER => (CLUSTER, false),
            AppendRule::SunOs => (SMALL_UNIT, true),
            AppendRule::Bsd44 { .. } => (n.max(1), false),
        };
        (0..n.div_ceil(unit)).map(move |k| (unit.min(n - k * unit), small))
    }
}

/// Where the send buffer's host buffers begin, in sequence space, each with
/// whether the buffer before it is a 1 KB cluster mbuf: what a segment is
/// gathered from. Buffers wholly acknowledged are forgotten (sbdrop frees
/// them); a partly acknowledged one is trimmed at its front, which moves no
/// later buffer's start.
#[derive(Clone, Debug, Default)]
pub struct SendMbufs {
    starts: VecDeque<(Seq, bool)>,
    /// The sequence number of the next byte appended.
    next: Option<Seq>,
    /// Whether the last buffer appended is a 1 KB cluster.
    last_small: bool,
}

impl SendMbufs {
    /// The socket layer appended `n` bytes, the first of them sequence number
    /// `first` when this is the first append (ISS + 1).
    pub fn append(&mut self, rule: AppendRule, first: Seq, n: u32) {
        let mut at = *self.next.get_or_insert(first);
        for (size, small) in rule.buffers(n) {
            self.starts.push_back((at, self.last_small));
            self.last_small = small;
            at = at + size;
        }
        self.next = Some(at);
    }

    /// snd_una moved to `una`: buffers that begin at or below it can begin no
    /// segment's later buffer.
    pub fn acknowledged(&mut self, una: Seq) {
        while self.starts.front().is_some_and(|&(s, _)| !s.gt(una)) {
            self.starts.pop_front();
        }
    }

    /// The CPCS payload offsets where, in a segment of `len` data bytes from
    /// `seq` after a header buffer of `header` bytes (encapsulation and TCP/IP
    /// headers: 4.3BSD tcp_output chains the data to a header mbuf of its
    /// own), a 1 KB cluster mbuf ends and the next buffer begins: where the
    /// adapter stalls (module doc). The header mbuf is no cluster.
    pub fn gather(&self, seq: Seq, len: u32, header: u32, out: &mut Vec<u32>) {
        out.clear();
        let end = seq + len;
        out.extend(
            self.starts
                .iter()
                .filter(|&&(s, after_small)| after_small && s.gt(seq) && s.lt(end))
                .map(|&(s, _)| header + (s - seq) as u32),
        );
    }
}

/// The CPCS payload offsets where, in one IP fragment of a UDP datagram, a
/// 1 KB cluster mbuf ends and the next buffer begins (what the adapter
/// stalls at, as [`SendMbufs::gather`]). sosend copies a datagram's data into
/// 1 KB clusters (the adapter stalls where they end, docs/design.md §5) after
/// a header mbuf holding the IP and UDP headers; ip_output gives every later
/// fragment a header mbuf of its own. `offset`/`len`: the fragment's IP
/// payload within the UDP datagram (its 8-byte header counted); `header`:
/// encapsulation + IP header.
pub fn udp_fragment_gather(offset: u32, len: u32, header: u32, out: &mut Vec<u32>) {
    const UDP_HEADER: u32 = 8;
    out.clear();
    // The first data cluster follows the header mbuf: no cluster ends there.
    let first = offset
        .saturating_sub(UDP_HEADER)
        .div_ceil(SMALL_UNIT)
        .max(1);
    out.extend(
        (first..)
            .map(|k| UDP_HEADER + k * SMALL_UNIT)
            .take_while(|&p| p < offset + len)
            .filter(|&p| p > offset)
            .map(|p| header + p - offset),
    );
}

/// The test at the top of 4.3BSD's sosend loop (uipc_socket.c): the writer
/// sleeps while at least a cluster of the write remains, the buffer holds a
/// cluster or more and less than a cluster is free.
///
/// It decides part of the lan-buffers grid. A writer that topped up a 20 KB
/// buffer kilobyte by kilobyte after each small ACK would leave a 36 KB
/// receiver's window updates just short of 35% and lock it into the
/// delayed-ACK cycle, which the published study does not show.
pub fn sunos_waits_for_a_cluster(cc: u32, space: u32, resid: u32) -> bool {
    resid >= CLUSTER && space < CLUSTER && cc >= CLUSTER
}

/// SunOS 4.1.1's sosend past that test: how many bytes it appends next, given
/// the send buffer's free space and the user data still to copy; `None` means
/// the writer must block until an ACK frees space.
pub fn sunos_append(space: u32, resid: u32) -> Option<u32> {
    if resid == 0 {
        return None;
    }
    if space >= CLUSTER && resid >= CLUSTER {
        return Some(CLUSTER);
    }
    if resid < SMALL_UNIT {
        return (space >= resid).then_some(resid);
    }
    let n = space.min(resid) / SMALL_UNIT * SMALL_UNIT;
    (n > 0).then_some(n)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn sunos_clusters_first_then_whole_kilobytes_then_the_tail() {
        assert_eq!(sunos_append(16384, 8192), Some(4096));
        // Free space 3 KB: three 1 KB pieces at once.
        assert_eq!(sunos_append(3 * 1024 + 100, 8192), Some(3072));
        // Remaining user data 3.5 KB with room: whole kilobytes, then the 512-byte tail.
        assert_eq!(sunos_append(16384, 3584), Some(3072));
        assert_eq!(sunos_append(16384, 512), Some(512));
        // Blocks when no piece fits.
        assert_eq!(sunos_append(1000, 8192), None);
        assert_eq!(sunos_append(300, 512), None);
        assert_eq!(sunos_append(16384, 0), None);
    }

    #[test]
    fn sunos_bulk_writer_waits_for_a_whole_cluster() {
        let sunos = AppendRule::SunOs;
        // 3 KB free in a 20 KB buffer, 8 KB to write: the writer sleeps ...
        assert_eq!(sunos.next(20480, 17408, 8192), None);
        assert_eq!(sunos.next(20480, 16384, 8192), Some(4096));
        // ... but a write's rest under a cluster, or a nearly empty buffer, goes in.
        assert_eq!(sunos.next(20480, 17408, 3000), Some(2048));
        assert_eq!(sunos.next(4096, 1024, 8192), Some(3072));
    }

    #[test]
    fn bsd_appends_a_cluster_at_a_time_above_the_low_water_mark() {
        let bsd = AppendRule::Bsd44 { mclbytes: 2048 };
        assert_eq!(bsd.next(65536, 0, 8192), Some(2048));
        let alpha = AppendRule::Bsd44 { mclbytes: 8192 };
        assert_eq!(alpha.next(65536, 0, 65536), Some(8192));
        assert_eq!(alpha.next(65536, 59536, 65536), None);
        // Below the low-water mark ...
        assert_eq!(bsd.next(65536, 64036, 8192), None);
        // ... unless the write fits.
        assert_eq!(bsd.next(65536, 64036, 1000), Some(1000));
        // A buffer smaller than a cluster: the low-water mark is the buffer.
        assert_eq!(bsd.next(512, 0, 65536), Some(512));
        assert_eq!(bsd.next(512, 412, 65536), None);
    }

    #[test]
    fn sunos_appends_land_in_4k_clusters_or_1k_buffers() {
        let sunos = AppendRule::SunOs;
        assert_eq!(sunos.buffers(4096).collect::<Vec<_>>(), [(4096, false)]);
        assert_eq!(sunos.buffers(3072).collect::<Vec<_>>(), [(1024, true); 3]);
        assert_eq!(sunos.buffers(512).collect::<Vec<_>>(), [(512, true)]);
        let bsd = AppendRule::Bsd44 { mclbytes: 8192 };
        assert_eq!(bsd.buffers(8192).collect::<Vec<_>>(), [(8192, false)]);
    }

    #[test]
    fn a_segment_stalls_only_where_a_1k_cluster_ends() {
        // docs/design.md §6.1's appends of an 8 KB write into a roomy buffer: two 4 KB
        // clusters; then a 3 KB piece (three 1 KB clusters) and a 100-byte tail.
        let iss = Seq(1000);
        let mut m = SendMbufs::default();
        for n in [4096, 4096, 3072, 100] {
            m.append(AppendRule::SunOs, iss + 1, n);
        }
        let mut out = vec![];
        // A 9148-byte segment from the first byte, 40 bytes of headers (VC-mux):
        // header mbuf, clusters at 0 and 4096, 1 KB clusters from 8192: the
        // 4 KB clusters' ends stall nothing (docs/design.md §5: TCP on the policed VP).
        m.gather(iss + 1, 9148, 40, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // One starting mid-cluster (stream offset 1000, LLC/SNAP headers):
        // the 1 KB clusters from stream 8192 end at 9216 and 10240; only 9216
        // is inside it (its end is 10148).
        m.gather(iss + 1001, 9148, 48, &mut out);
        assert_eq!(out, [48 + 8216]);
        // From inside the 1 KB clusters: each one's end, and the tail's start.
        m.gather(iss + 8193, 3172, 40, &mut out);
        assert_eq!(out, [40 + 1024, 40 + 2048, 40 + 3072]);
        // No data, no buffers.
        m.gather(iss, 0, 40, &mut out);
        assert!(out.is_empty());
        // Acknowledged buffers are forgotten; later starts keep their place
        // and what precedes them.
        m.acknowledged(iss + 9000);
        m.gather(iss + 9001, 2000, 40, &mut out);
        assert_eq!(out, [40 + 216, 40 + 1240]);
        // 4.4BSD's clusters are 2 KB and up: never a stall.
        let mut b = SendMbufs::default();
        for _ in 0..8 {
            b.append(AppendRule::Bsd44 { mclbytes: 2048 }, iss + 1, 2048);
        }
        b.gather(iss + 1, 9148, 40, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn udp_fragments_are_gathered_from_1k_buffers() {
        // An 8192-byte datagram, MTU 9180: one fragment of 8200 IP payload bytes.
        // The IP + UDP headers share a buffer; 1 KB data clusters after it,
        // seven of which end inside the datagram (every 21-22 cells).
        let mut out = vec![];
        udp_fragment_gather(0, 8200, 8 + 20, &mut out);
        let expect: Vec<u32> = (1..8).map(|k| 28 + 8 + 1024 * k).collect();
        assert_eq!(out, expect);
        // A later fragment (its own IP header buffer) starting at datagram
        // offset 9160: clusters end at 8 + 9216 = 9224, 10248, ...
        udp_fragment_gather(9160, 2000, 20, &mut out);
        assert_eq!(out, [20 + 64, 20 + 64 + 1024]);
    }
}
