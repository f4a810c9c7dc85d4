//! Frame links: Ethernet II segments beside the cell network.
//!
//! A host may have an Ethernet interface as well as its ATM adapter (the era's
//! workstations were multi-homed: the LAN study's SPARCstations had their
//! built-in 10 Mb/s Ethernet beside the TAXI adapter, docs/lan-buffers.md). A
//! circuit listed in [`Topology::framed`](super::Topology) is carried as frames
//! on one segment instead of as cells through the switches: the same hosts, the
//! same TCP, the same deliveries ([`Network::send`](super::Network::send) and
//! [`Network::poll`](super::Network::poll) do not change), another link.
//!
//! # Conventions
//!
//! - **A frame** carries one PDU's payload (the IP datagram; Ethernet II needs no
//!   encapsulation header of its own: its type field says IPv4) of at most
//!   [`ethernet::MTU`] (1500) bytes. On the medium it takes
//!   [`ethernet::wire_bits`] bit times at the segment's rate: preamble and SFD
//!   (8 bytes), the MAC frame (14-byte header, data padded to 46 bytes, 4-byte
//!   FCS: 64..=1518 bytes), and the 12-byte inter-frame gap before the next
//!   frame may start (IEEE 802.3 §4.4.2). At 10 Mb/s a full frame holds the
//!   medium 1230.4 µs, a minimum one 67.2 µs.
//! - **Link timing.** A frame whose preamble starts at `s` is fully received at
//!   `s + (8 + frame) bytes / rate + delay` (the gap is idle time after it): its
//!   delivery, handed to the receiving host as a reassembled PDU is.
//! - **The interface queue** of each station is the adapter's ([`super::ifq`]):
//!   a frame handed over when `tx_queue_frames` frames wait is dropped and
//!   counted (`adapter_queue_drops` of its circuit).
//! - **Half duplex** (a shared segment: 10BASE5/10BASE2 coax or a repeater hub,
//!   the 10 Mb/s Ethernet of the era): one transmitter at a time on the whole
//!   segment, data and ACKs alike. A frame starts at the latest of its hand-over,
//!   the end of its station's previous frame, and the end of the last frame on
//!   the medium (gap included). There is **no collision or backoff model**:
//!   frames take the medium in the order their stations handed them over, as if
//!   carrier sense always deferred in time and no two stations ever began
//!   together. With two stations, one sending data and one ACKs, real CSMA/CD
//!   collides only when both wait for the same gap to end; the 51.2 µs slot and
//!   the backoff a collision costs are not modelled. Carrier sense is taken to
//!   be instantaneous across the segment (its delay only delays delivery).
//! - **Full duplex** (a point-to-point link, 100BASE-TX or a crossover): each
//!   station transmits on its own; a frame waits only for its station's
//!   previous one. A full-duplex segment joins two stations (a switched
//!   Ethernet with output buffers of its own is not modelled: refused).
//! - Nothing on a segment loses a frame but a full interface queue (no bit
//!   errors, no collisions, no receive overruns).

use super::ifq::Ifq;
use super::{aal5_cells, CircuitId, CircuitSpec, Ev, HostId, Network};
use crate::time::{BitRate, SimTime};
use crate::wire::ethernet;
use std::fmt;

/// One Ethernet segment: the hosts with an interface on it and the medium.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSpec {
    /// The medium's bit rate (10 Mb/s: 10BASE-T/10BASE2/10BASE5).
    pub rate: BitRate,
    /// Propagation delay between any two stations.
    pub delay: SimTime,
    pub duplex: Duplex,
    /// The hosts with an interface on the segment (each once).
    pub stations: Vec<HostId>,
    /// Each station's interface queue, frames (BSD `ifq_maxlen`).
    pub tx_queue_frames: usize,
}

/// Whether the stations share one transmitter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Duplex {
    /// One frame at a time on the whole segment (shared medium).
    Half,
    /// Each station transmits independently (two stations, point to point).
    Full,
}

impl Duplex {
    pub fn name(self) -> &'static str {
        match self {
            Duplex::Half => "half",
            Duplex::Full => "full",
        }
    }
}

/// A circuit carried as frames on `segment` instead of as cells.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FramedCircuit {
    pub circuit: CircuitId,
    pub segment: usize,
}

/// What a segment carried.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentCounters {
    pub frames: u64,
    /// MAC frame bytes (header, data, pad, FCS).
    pub bytes: u64,
    /// Medium time its frames held, preamble to the end of the gap, summed.
    pub busy: SimTime,
    /// Frames that found the medium (or, full duplex, their station) busy and waited.
    pub deferred: u64,
    /// Frames refused by a full interface queue.
    pub dropped: u64,
    /// The most frames waiting in one station's queue.
    pub peak_waiting: u32,
}

/// One frame on a segment, as a tap sees it (the start of its preamble).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameRecord {
    pub at: SimTime,
    pub segment: usize,
    pub src: HostId,
    pub dst: HostId,
    pub circuit: CircuitId,
    pub token: u64,
    /// The PDU's number in the run (as a cell record's).
    pub pdu: u64,
    /// The IP datagram's length (the frame's data before pad).
    pub payload_len: u32,
}

/// A refused segment or framed circuit; each names the element and value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EtherError {
    BadRate {
        segment: usize,
        rate: BitRate,
    },
    NoSuchStation {
        segment: usize,
        host: HostId,
    },
    StationTwice {
        segment: usize,
        host: HostId,
    },
    ZeroQueue {
        segment: usize,
    },
    FullDuplexStations {
        segment: usize,
        stations: usize,
    },
    NoSuchCircuit {
        circuit: CircuitId,
    },
    NoSuchSegment {
        circuit: CircuitId,
        segment: usize,
    },
    NotOnSegment {
        circuit: CircuitId,
        segment: usize,
        host: HostId,
    },
    FramedTwice {
        circuit: CircuitId,
    },
    FramedWithHops {
        circuit: CircuitId,
    },
}

impl fmt::Display for EtherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EtherError::*;
        match *self {
            BadRate { segment, rate } => write!(
                f,
                "Ethernet segment {segment}: rate {} b/s not allowed: 1 b/s to 512000000000000 \
                 b/s (a minimum frame's 672 bits at least a picosecond)",
                rate.bps()
            ),
            NoSuchStation { segment, host } => write!(
                f,
                "Ethernet segment {segment}: station {host} is not a host of the topology"
            ),
            StationTwice { segment, host } => write!(
                f,
                "Ethernet segment {segment}: host {host} has two interfaces on it: one each"
            ),
            ZeroQueue { segment } => write!(
                f,
                "Ethernet segment {segment}: interface queue of 0 frames not allowed: at least 1"
            ),
            FullDuplexStations { segment, stations } => write!(
                f,
                "Ethernet segment {segment}: full duplex with {stations} stations: full duplex \
                 joins two (a switched Ethernet is not modelled)"
            ),
            NoSuchCircuit { circuit } => write!(
                f,
                "framed circuit {circuit}: no such circuit in the topology"
            ),
            NoSuchSegment { circuit, segment } => write!(
                f,
                "framed circuit {circuit}: Ethernet segment {segment} does not exist"
            ),
            NotOnSegment {
                circuit,
                segment,
                host,
            } => write!(
                f,
                "framed circuit {circuit}: host {host} has no interface on Ethernet segment \
                 {segment}"
            ),
            FramedTwice { circuit } => {
                write!(
                    f,
                    "circuit {circuit}: framed twice: one segment per circuit"
                )
            }
            FramedWithHops { circuit } => write!(
                f,
                "circuit {circuit}: framed, yet it lists switch ports: frames cross no ATM switch"
            ),
        }
    }
}

impl std::error::Error for EtherError {}

/// Bits of a frame from the start of its preamble to the end of its FCS: what
/// the receiver must see before it has the frame (the gap is after it).
pub fn frame_bits(payload_len: u32) -> u64 {
    (ethernet::PREAMBLE_SFD_LEN + ethernet::frame_len(payload_len as usize)) as u64 * 8
}

/// Medium time of one frame at `rate`, preamble to the end of the gap.
pub fn wire_time(rate: BitRate, payload_len: u32) -> SimTime {
    rate.time_for_bits(ethernet::wire_bits(payload_len as usize))
}

/// The TCP or UDP payload a segment carries at most in back-to-back frames of
/// `ip_len` bytes holding `data` bytes each, bit/s (ACKs not counted).
pub fn payload_bps(rate: BitRate, ip_len: u32, data: u32) -> f64 {
    data as f64 * 8.0 / wire_time(rate, ip_len).as_secs_f64()
}

#[derive(Clone, Debug)]
struct StationRt {
    host: HostId,
    ifq: Ifq,
    /// When this station's transmitter is free (the end of its last frame's gap).
    free_at: SimTime,
}

#[derive(Clone, Debug)]
struct SegmentRt {
    rate: BitRate,
    delay: SimTime,
    duplex: Duplex,
    /// Half duplex: when the medium is free (the end of the last frame's gap).
    medium_free: SimTime,
    stations: Vec<StationRt>,
    counters: SegmentCounters,
}

/// Where a frame goes: its start on the medium and its delivery.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Placed {
    pub start: SimTime,
    pub arrival: SimTime,
    pub segment: usize,
}

/// Every segment's state, and which circuits are framed.
#[derive(Clone, Debug, Default)]
pub(super) struct Frames {
    segments: Vec<SegmentRt>,
    /// Per circuit: its segment, if framed.
    by_circuit: Vec<Option<u32>>,
    /// The segment a tap records, and its records not taken yet.
    tap: Option<usize>,
    log: Vec<FrameRecord>,
}

impl Frames {
    /// Check the segments and the framed circuits against the topology's
    /// `hosts` and circuits.
    pub fn build(
        segments: &[SegmentSpec],
        framed: &[FramedCircuit],
        circuits: &[CircuitSpec],
        hosts: usize,
    ) -> Result<Frames, EtherError> {
        use EtherError::*;
        let mut rt = Vec::with_capacity(segments.len());
        for (i, s) in segments.iter().enumerate() {
            let min_frame = ethernet::wire_bits(0);
            if s.rate.bps() == 0 || s.rate.time_for_bits(min_frame) == SimTime::ZERO {
                return Err(BadRate {
                    segment: i,
                    rate: s.rate,
                });
            }
            if s.tx_queue_frames == 0 {
                return Err(ZeroQueue { segment: i });
            }
            if s.duplex == Duplex::Full && s.stations.len() > 2 {
                return Err(FullDuplexStations {
                    segment: i,
                    stations: s.stations.len(),
                });
            }
            let mut stations: Vec<StationRt> = Vec::with_capacity(s.stations.len());
            for &host in &s.stations {
                if host >= hosts {
                    return Err(NoSuchStation { segment: i, host });
                }
                if stations.iter().any(|st| st.host == host) {
                    return Err(StationTwice { segment: i, host });
                }
                stations.push(StationRt {
                    host,
                    ifq: Ifq::new(s.tx_queue_frames),
                    free_at: SimTime::ZERO,
                });
            }
            rt.push(SegmentRt {
                rate: s.rate,
                delay: s.delay,
                duplex: s.duplex,
                medium_free: SimTime::ZERO,
                stations,
                counters: SegmentCounters::default(),
            });
        }
        let mut by_circuit = vec![None; circuits.len()];
        for f in framed {
            let circuit = f.circuit;
            let Some(c) = circuits.get(circuit) else {
                return Err(NoSuchCircuit { circuit });
            };
            let Some(seg) = rt.get(f.segment) else {
                return Err(NoSuchSegment {
                    circuit,
                    segment: f.segment,
                });
            };
            if !c.hops.is_empty() {
                return Err(FramedWithHops { circuit });
            }
            for host in [c.src, c.dst] {
                if !seg.stations.iter().any(|st| st.host == host) {
                    return Err(NotOnSegment {
                        circuit,
                        segment: f.segment,
                        host,
                    });
                }
            }
            if by_circuit[circuit].replace(f.segment as u32).is_some() {
                return Err(FramedTwice { circuit });
            }
        }
        Ok(Frames {
            segments: rt,
            by_circuit,
            tap: None,
            log: Vec::new(),
        })
    }

    /// The segment a circuit's frames cross (None: it carries cells).
    #[inline]
    pub fn segment_of(&self, circuit: CircuitId) -> Option<usize> {
        self.by_circuit
            .get(circuit)
            .copied()
            .flatten()
            .map(|s| s as usize)
    }

    /// A frame of `payload_len` bytes that host `src` hands its interface on
    /// `segment` at `now`: when it starts and when it is received, or None if
    /// the interface queue is full (counted).
    pub fn place(
        &mut self,
        now: SimTime,
        segment: usize,
        src: HostId,
        payload_len: u32,
    ) -> Option<Placed> {
        let seg = &mut self.segments[segment];
        let st = seg
            .stations
            .iter_mut()
            .find(|st| st.host == src)
            .expect("a framed circuit's ends are stations of its segment (checked at build)");
        if st.ifq.full(now, 0) {
            seg.counters.dropped += 1;
            return None;
        }
        let free = match seg.duplex {
            Duplex::Half => seg.medium_free.max(st.free_at),
            Duplex::Full => st.free_at,
        };
        let start = now.max(free);
        let hold = wire_time(seg.rate, payload_len);
        st.free_at = start + hold;
        if seg.duplex == Duplex::Half {
            seg.medium_free = start + hold;
        }
        st.ifq.accepted(now, start);
        let c = &mut seg.counters;
        c.frames += 1;
        c.bytes += ethernet::frame_len(payload_len as usize) as u64;
        c.busy += hold;
        if start > now {
            c.deferred += 1;
        }
        c.peak_waiting = c.peak_waiting.max(st.ifq.len() as u32);
        let arrival = start + seg.rate.time_for_bits(frame_bits(payload_len)) + seg.delay;
        Some(Placed {
            start,
            arrival,
            segment,
        })
    }

    /// Record a placed frame if its segment is tapped.
    pub fn log(&mut self, placed: &Placed, rec: impl FnOnce() -> FrameRecord) {
        if self.tap == Some(placed.segment) {
            self.log.push(rec());
        }
    }

    pub fn counters(&self, segment: usize) -> SegmentCounters {
        self.segments
            .get(segment)
            .map(|s| s.counters)
            .unwrap_or_default()
    }

    pub fn set_tap(&mut self, segment: Option<usize>) {
        self.tap = segment;
    }

    pub fn drain_log(&mut self, out: &mut Vec<FrameRecord>) {
        out.append(&mut self.log);
    }
}

impl Network {
    /// A framed circuit's PDU (its IP datagram) handed to the source host's
    /// Ethernet interface at `now`: placed on the segment, its delivery
    /// scheduled. False if the interface queue was full (dropped, counted).
    pub(super) fn send_frame(
        &mut self,
        now: SimTime,
        circuit: CircuitId,
        segment: usize,
        payload_len: u32,
        token: u64,
    ) -> bool {
        let src = self.circuits[circuit].src;
        let Some(placed) = self.frames.place(now, segment, src, payload_len) else {
            self.circuits[circuit].counters.adapter_queue_drops += 1;
            return false;
        };
        self.circuits[circuit].counters.pdus_sent += 1;
        // A frame is all or nothing: its PDU has no cells outstanding, only a delivery.
        let pdu = self.alloc_pdu(circuit, token, 0, payload_len);
        let rec = &mut self.pdus[pdu as usize];
        rec.eom_at = Some(placed.arrival);
        let serial = rec.serial;
        let dst = self.circuits[circuit].dst;
        self.frames.log(&placed, || FrameRecord {
            at: placed.start,
            segment,
            src,
            dst,
            circuit,
            token,
            pdu: serial,
            payload_len,
        });
        self.agenda
            .schedule(placed.arrival, circuit as u32, Ev::Deliver(pdu));
        true
    }

    /// Whether a circuit is carried as frames (on an Ethernet segment).
    pub fn is_framed(&self, circuit: CircuitId) -> bool {
        self.frames.segment_of(circuit).is_some()
    }

    /// The cells a PDU of `payload_len` bytes takes on a circuit: AAL5's count,
    /// or 0 on a framed circuit (what a host's per-cell SAR cost counts).
    pub fn cells_on(&self, circuit: CircuitId, payload_len: u32) -> u32 {
        if self.is_framed(circuit) {
            0
        } else {
            aal5_cells(payload_len)
        }
    }

    /// Counters of an Ethernet segment (all zero for one that does not exist).
    pub fn segment_counters(&self, segment: usize) -> SegmentCounters {
        self.frames.counters(segment)
    }

    /// A tap on an Ethernet segment: record every frame that starts on it
    /// ([`Network::drain_frame_log`]), e.g. into a pcap file (`simulated_frame`).
    pub fn set_segment_tap(&mut self, segment: usize) {
        self.frames.set_tap(Some(segment));
    }

    /// Move the frame records taken so far to the end of `out`, in the order
    /// the frames were placed: by start time on a half-duplex segment, by start
    /// time per station on a full-duplex one (sort to merge its two directions).
    pub fn drain_frame_log(&mut self, out: &mut Vec<FrameRecord>) {
        self.frames.drain_log(out);
    }
}

/// The MAC address the simulator gives host `h`'s Ethernet interface: locally
/// administered (02:...), the host's number in the last four bytes.
pub fn mac_of(h: HostId) -> ethernet::Address {
    let n = (h as u32).to_be_bytes();
    ethernet::Address([0x02, 0x00, n[0], n[1], n[2], n[3]])
}

/// IP protocol 253, "use for experimentation and testing" (RFC 3692): what a
/// simulated frame's datagram says it carries, since the simulator carries
/// lengths, not the segments' bytes.
pub const IP_PROTO_EXPERIMENT: u8 = 253;

/// The bytes of a simulated frame (MAC frame with FCS, as a tap writes it to
/// pcap): Ethernet II from host `src` to `dst`, type IPv4; the datagram a valid
/// IPv4 header of the PDU's length (10.0.0.x addresses, x = host + 1; protocol
/// 253), then the PDU's number in the run (8 bytes big-endian) and zeros, as a
/// simulated cell's payload holds it (`sim::capture`).
pub fn simulated_frame(r: &FrameRecord) -> Result<Vec<u8>, String> {
    let len = r.payload_len as usize;
    if !(20..=ethernet::MTU).contains(&len) {
        return Err(format!(
            "frame of PDU {}: datagram of {len} bytes: 20 to {} bytes",
            r.pdu,
            ethernet::MTU
        ));
    }
    let addr = |h: HostId| -> [u8; 4] {
        let x = h as u32 + 1;
        [10, (x >> 16) as u8, (x >> 8) as u8, x as u8]
    };
    let mut ip = vec![0u8; len];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(r.pdu as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = IP_PROTO_EXPERIMENT;
    ip[12..16].copy_from_slice(&addr(r.src));
    ip[16..20].copy_from_slice(&addr(r.dst));
    let sum = internet_checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let n = (len - 20).min(8);
    ip[20..20 + n].copy_from_slice(&r.pdu.to_be_bytes()[..n]);
    let repr = ethernet::Repr {
        src_addr: mac_of(r.src),
        dst_addr: mac_of(r.dst),
        ethertype: ethernet::ETHERTYPE_IPV4,
    };
    ethernet::build_frame(&repr, &ip).map_err(|e| format!("frame of PDU {}: {e}", r.pdu))
}

/// The Internet checksum (RFC 1071): of an IPv4 header, or of a UDP datagram
/// with its pseudo-header.
pub fn internet_checksum(data: &[u8]) -> u16 {
    let mut s: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod test {
    use super::*;

    const TEN: BitRate = BitRate(10_000_000);
    const HUNDRED: BitRate = BitRate(100_000_000);

    fn circuit(src: HostId, dst: HostId) -> CircuitSpec {
        CircuitSpec {
            src,
            dst,
            vpi: 0,
            vci: 100,
            hops: vec![],
        }
    }

    fn segment(duplex: Duplex, ifq: usize) -> Frames {
        let s = SegmentSpec {
            rate: TEN,
            delay: SimTime::from_us(1),
            duplex,
            stations: vec![0, 1],
            tx_queue_frames: ifq,
        };
        let framed = [
            FramedCircuit {
                circuit: 0,
                segment: 0,
            },
            FramedCircuit {
                circuit: 1,
                segment: 0,
            },
        ];
        Frames::build(&[s], &framed, &[circuit(0, 1), circuit(1, 0)], 2).unwrap()
    }

    #[test]
    fn wire_time_counts_preamble_header_pad_fcs_and_gap() {
        // A full frame: 8 + 14 + 1500 + 4 + 12 = 1538 byte times.
        assert_eq!(wire_time(TEN, 1500), SimTime::from_ns(1_230_400));
        assert_eq!(wire_time(HUNDRED, 1500), SimTime::from_ns(123_040));
        // A bare 40-byte TCP ACK is padded to the 64-byte minimum: 84 byte times.
        assert_eq!(wire_time(TEN, 40), SimTime::from_ns(67_200));
        assert_eq!(wire_time(TEN, 0), wire_time(TEN, 46));
        assert!(wire_time(TEN, 47) > wire_time(TEN, 46));
        // Received when the FCS is in, before the gap: 1526 bytes.
        assert_eq!(frame_bits(1500), 1526 * 8);
        // MSS 1460 at 10 Mb/s: 1460 / 1538 of the line, 9.4928 Mb/s of TCP data.
        assert!((payload_bps(TEN, 1500, 1460) - 9.4928e6).abs() < 1e2);
    }

    #[test]
    fn one_station_sends_back_to_back_frames_a_wire_time_apart() {
        let mut f = segment(Duplex::Half, 50);
        let a = f.place(SimTime::ZERO, 0, 0, 1500).unwrap();
        let b = f.place(SimTime::ZERO, 0, 0, 1500).unwrap();
        assert_eq!(a.start, SimTime::ZERO);
        assert_eq!(a.arrival, SimTime::from_ns(1_220_800 + 1_000));
        assert_eq!(b.start, SimTime::from_ns(1_230_400));
        let c = f.counters(0);
        assert_eq!((c.frames, c.bytes, c.deferred), (2, 2 * 1518, 1));
        assert_eq!(c.busy, SimTime::from_ns(2 * 1_230_400));
    }

    #[test]
    fn half_duplex_serialises_data_and_acks_on_one_medium() {
        let mut f = segment(Duplex::Half, 50);
        let data = f.place(SimTime::ZERO, 0, 0, 1500).unwrap();
        // The receiver's ACK, ready while the data frame is on the medium,
        // waits for its end and the gap.
        let ack = f.place(SimTime::from_us(500), 0, 1, 40).unwrap();
        assert_eq!(ack.start, data.start + wire_time(TEN, 1500));
        // The sender's next frame, handed over during the ACK, follows the ACK.
        let next = f.place(SimTime::from_us(1250), 0, 0, 1500).unwrap();
        assert_eq!(next.start, ack.start + wire_time(TEN, 40));
        // Full duplex: the ACK goes at once, beside the data.
        let mut g = segment(Duplex::Full, 50);
        g.place(SimTime::ZERO, 0, 0, 1500).unwrap();
        let ack = g.place(SimTime::from_us(500), 0, 1, 40).unwrap();
        assert_eq!(ack.start, SimTime::from_us(500));
    }

    #[test]
    fn a_full_interface_queue_drops_the_frame() {
        let mut f = segment(Duplex::Half, 2);
        // One on the medium, two waiting: the fourth is refused.
        for _ in 0..3 {
            assert!(f.place(SimTime::ZERO, 0, 0, 1500).is_some());
        }
        assert!(f.place(SimTime::ZERO, 0, 0, 1500).is_none());
        assert_eq!(f.counters(0).dropped, 1);
        assert_eq!(f.counters(0).peak_waiting, 2);
        // The other station's queue is its own.
        assert!(f.place(SimTime::ZERO, 0, 1, 40).is_some());
    }

    #[test]
    fn bad_segments_and_circuits_are_refused_by_name() {
        let s = |duplex, stations: Vec<HostId>| SegmentSpec {
            rate: TEN,
            delay: SimTime::ZERO,
            duplex,
            stations,
            tx_queue_frames: 50,
        };
        let err = |segs: &[SegmentSpec], framed: &[FramedCircuit], cs: &[CircuitSpec]| {
            Frames::build(segs, framed, cs, 3).unwrap_err()
        };
        let on = |circuit, segment| FramedCircuit { circuit, segment };
        let c01 = [circuit(0, 1)];
        assert_eq!(
            err(&[s(Duplex::Full, vec![0, 1, 2])], &[], &[]),
            EtherError::FullDuplexStations {
                segment: 0,
                stations: 3
            }
        );
        assert_eq!(
            err(&[s(Duplex::Half, vec![0, 3])], &[], &[]),
            EtherError::NoSuchStation {
                segment: 0,
                host: 3
            }
        );
        assert_eq!(
            err(&[s(Duplex::Half, vec![0, 0])], &[], &[]),
            EtherError::StationTwice {
                segment: 0,
                host: 0
            }
        );
        assert_eq!(
            err(&[s(Duplex::Half, vec![0, 2])], &[on(0, 0)], &c01),
            EtherError::NotOnSegment {
                circuit: 0,
                segment: 0,
                host: 1
            }
        );
        assert_eq!(
            err(&[s(Duplex::Half, vec![0, 1])], &[on(0, 1)], &c01),
            EtherError::NoSuchSegment {
                circuit: 0,
                segment: 1
            }
        );
        assert_eq!(
            err(&[s(Duplex::Half, vec![0, 1])], &[on(0, 0), on(0, 0)], &c01),
            EtherError::FramedTwice { circuit: 0 }
        );
        let mut zero = s(Duplex::Half, vec![0, 1]);
        zero.rate = BitRate(0);
        assert_eq!(
            err(&[zero], &[], &[]),
            EtherError::BadRate {
                segment: 0,
                rate: BitRate(0)
            }
        );
        let msg = EtherError::NotOnSegment {
            circuit: 4,
            segment: 1,
            host: 2,
        }
        .to_string();
        assert_eq!(
            msg,
            "framed circuit 4: host 2 has no interface on Ethernet segment 1"
        );
    }

    #[test]
    fn a_simulated_frame_is_ethernet_ii_with_a_valid_ipv4_header() {
        let r = FrameRecord {
            at: SimTime::ZERO,
            segment: 0,
            src: 0,
            dst: 1,
            circuit: 0,
            token: 0,
            pdu: 7,
            payload_len: 40,
        };
        let bytes = simulated_frame(&r).unwrap();
        assert_eq!(bytes.len(), ethernet::MIN_FRAME_LEN);
        let frame = ethernet::Frame::new_checked(&bytes[..]).unwrap();
        assert!(frame.check_fcs().is_ok());
        let ip = &bytes[14..34];
        assert_eq!(internet_checksum(ip), 0);
        assert_eq!(ip[9], IP_PROTO_EXPERIMENT);
        assert_eq!(&ip[12..20], &[10, 0, 0, 1, 10, 0, 0, 2]);
        assert_eq!(bytes[34 + 7], 7);
        assert!(simulated_frame(&FrameRecord {
            payload_len: 1501,
            ..r
        })
        .is_err());
    }
}
