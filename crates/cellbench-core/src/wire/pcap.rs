//! Pcap files of ATM traffic that Wireshark/tshark decode with VPI/VCI, and of
//! Ethernet frames.
//!
//! Two ATM link types, one per granularity:
//! - Cells: `LINKTYPE_ERF` (197), each packet one Endace ERF record of type 3
//!   ("ATM cell"): a 16-byte ERF header, then the cell's first four header bytes and
//!   its 48 payload bytes. ERF drops the HEC byte (the capture card checked it); the
//!   reader recomputes it. Wireshark shows GFC, VPI, VCI, PTI and CLP per cell.
//! - PDUs: `LINKTYPE_SUNATM` (123), the classic libpcap ATM link type (SunATM
//!   adapters): a 4-byte pseudo-header (direction bit and traffic type, VPI, VCI)
//!   and the reassembled AAL5 payload (the CPCS-PDU without pad and trailer).
//!   Traffic type 2 = RFC 1483 LLC multiplexed, which Wireshark decodes down to
//!   IP; type 0 (unknown) for VC-mux, where Wireshark guesses IP from the first byte.
//!
//! Ethernet: `LINKTYPE_ETHERNET` (1), each packet one MAC frame from the
//! destination address through the FCS ([`super::ethernet::Frame`]). The file
//! header's link-type word says so (the FCS-length bits of the pcap format: "FCS
//! present", 2 16-bit words), so Wireshark shows and can verify the FCS rather
//! than take it for payload. Preamble, SFD and gap are not captured, as on a real NIC.
//!
//! Files are written with the nanosecond magic (times are picoseconds inside);
//! both magics and both byte orders are read. The reader never panics.

use super::aal5::Vc;
use super::cell::{hec, CELL_LEN, PAYLOAD_LEN};
use super::ethernet::{EthernetError, Frame, FCS_LEN};
use super::llc_snap::Encap;
use crate::time::{SimTime, PS_PER_SEC};
use core::fmt;
use std::io::{self, Write};

pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_SUNATM: u32 = 123;
pub const LINKTYPE_ERF: u32 = 197;
/// Pcap magic with microsecond timestamps.
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// Pcap magic with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Snapshot length written in the file header (a SunATM PDU is at most 4 + 65535).
pub const SNAPLEN: u32 = 262_144;

const FILE_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;
const ERF_HEADER_LEN: usize = 16;
/// ERF record type 3: one ATM cell, header without HEC.
const ERF_TYPE_ATM: u8 = 3;
/// ERF flags: "varying record length" (no padding to 8 bytes).
const ERF_FLAG_VLEN: u8 = 0x04;
/// A cell as ERF carries it: 4 header bytes and the payload.
const ERF_CELL_LEN: usize = CELL_LEN - 1;
const SUNATM_HEADER_LEN: usize = 4;
/// The pcap link-type word's "FCS length present" bit (bit 26), and the FCS
/// length in 16-bit words in bits 28..31 (pcap file format, the LinkType and
/// additional information field; Wireshark's wiretap/libpcap reads them).
const LT_FCS_PRESENT: u32 = 0x0400_0000;
const LT_FCS_LEN_SHIFT: u32 = 28;
/// 32 bits of Ethernet FCS, in 16-bit words.
const ETHERNET_FCS_WORDS: u32 = (FCS_LEN / 2) as u32;
/// SunATM traffic type (low nibble of the first byte): RFC 1483 LLC multiplexed.
const SUNATM_TYPE_LLC: u8 = 0x02;

/// Which granularity a file holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PcapLink {
    /// One ERF ATM-cell record per packet.
    Cells,
    /// One SunATM AAL5 PDU per packet.
    Pdus,
    /// One Ethernet MAC frame per packet, FCS included.
    Ethernet,
}

impl PcapLink {
    pub const fn linktype(self) -> u32 {
        match self {
            PcapLink::Cells => LINKTYPE_ERF,
            PcapLink::Pdus => LINKTYPE_SUNATM,
            PcapLink::Ethernet => LINKTYPE_ETHERNET,
        }
    }

    /// What a file of this link type holds, in words, with the link type's number.
    pub const fn describe(self) -> &'static str {
        match self {
            PcapLink::Cells => "ERF ATM cells (link type 197)",
            PcapLink::Pdus => "AAL5 PDUs (SunATM, link type 123)",
            PcapLink::Ethernet => "Ethernet frames (link type 1)",
        }
    }

    /// The file header's link-type word: the link type, and for Ethernet the
    /// note that every frame carries its 4-byte FCS.
    pub const fn header_word(self) -> u32 {
        match self {
            PcapLink::Ethernet => {
                LINKTYPE_ETHERNET | LT_FCS_PRESENT | (ETHERNET_FCS_WORDS << LT_FCS_LEN_SHIFT)
            }
            _ => self.linktype(),
        }
    }
}

/// One packet of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A whole 53-byte cell (HEC recomputed on reading).
    Cell { time: SimTime, cell: [u8; CELL_LEN] },
    /// An AAL5 payload on a VC; `llc` is the SunATM "LLC multiplexed" type.
    Pdu {
        time: SimTime,
        vc: Vc,
        llc: bool,
        payload: Vec<u8>,
    },
    /// An Ethernet MAC frame from the destination address on; `fcs` says whether
    /// its last 4 bytes are the FCS (always so in files [`PcapWriter`] writes;
    /// other tools' captures often have none).
    Frame {
        time: SimTime,
        frame: Vec<u8>,
        fcs: bool,
    },
}

impl Record {
    pub fn time(&self) -> SimTime {
        match self {
            Record::Cell { time, .. } | Record::Pdu { time, .. } | Record::Frame { time, .. } => {
                *time
            }
        }
    }
}

/// A bad pcap file or a value a file cannot hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PcapError {
    Io(io::ErrorKind),
    /// The file ends inside a header or record.
    Truncated {
        offset: usize,
        needed: usize,
        available: usize,
    },
    BadMagic {
        magic: u32,
    },
    UnsupportedLinkType {
        linktype: u32,
    },
    /// An ERF record type other than 3 (ATM cell).
    UnsupportedErfType {
        erf_type: u8,
        offset: usize,
    },
    /// An ERF record whose record length (`rlen`) does not span its header and cell
    /// within the packet, or whose wire length (`wlen`) is no ATM cell's.
    BadErfLength {
        rlen: u16,
        wlen: u16,
        /// The least `rlen` the header says (header, extensions, cell).
        needed: usize,
        /// The packet's captured length: the most `rlen` can be.
        available: usize,
        offset: usize,
    },
    /// A record of the wrong kind for the file's link type.
    WrongLink {
        link: PcapLink,
    },
    /// SunATM has one byte for the VPI.
    VpiTooLarge {
        vpi: u16,
    },
    /// Longer than the snapshot length.
    TooLong {
        len: usize,
    },
    /// A time beyond 2^32 seconds.
    TimeTooLarge,
    /// A frame [`PcapWriter::write_frame`] refused: wrong size or FCS.
    BadFrame(EthernetError),
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PcapError::Io(kind) => write!(f, "pcap I/O error: {kind}"),
            PcapError::Truncated { offset, needed, available } => write!(
                f,
                "pcap file truncated at byte {offset}: needed {needed} bytes, {available} left"
            ),
            PcapError::BadMagic { magic } => write!(
                f,
                "not a pcap file: magic {magic:#010x}, expected {MAGIC_MICROS:#010x} or {MAGIC_NANOS:#010x}"
            ),
            PcapError::UnsupportedLinkType { linktype } => write!(
                f,
                "pcap link type {linktype} not supported: allowed {LINKTYPE_ERF} (ERF ATM cells), \
                 {LINKTYPE_SUNATM} (SunATM), {LINKTYPE_ETHERNET} (Ethernet)"
            ),
            PcapError::UnsupportedErfType { erf_type, offset } => write!(
                f,
                "ERF record type {erf_type} at byte {offset} not supported: allowed {ERF_TYPE_ATM} (ATM cell)"
            ),
            PcapError::BadErfLength { rlen, wlen, needed, available, offset } => write!(
                f,
                "ERF record at byte {offset}: record length {rlen} and wire length {wlen}, \
                 expected a record length of {needed}..={available} (its header and cell, \
                 within the packet) and a wire length of 1..={CELL_LEN} (one ATM cell)"
            ),
            PcapError::WrongLink { link } => {
                write!(f, "this pcap file holds {}, not that kind of record", link.describe())
            }
            PcapError::VpiTooLarge { vpi } => write!(f, "VPI {vpi} does not fit SunATM's one byte: allowed 0..=255"),
            PcapError::TooLong { len } => write!(f, "record of {len} bytes exceeds the snapshot length {SNAPLEN}"),
            PcapError::TimeTooLarge => write!(f, "time beyond 2^32 seconds cannot be written to pcap"),
            PcapError::BadFrame(e) => write!(f, "cannot write to pcap: {e}"),
        }
    }
}

impl std::error::Error for PcapError {}

impl From<io::Error> for PcapError {
    fn from(e: io::Error) -> PcapError {
        PcapError::Io(e.kind())
    }
}

/// Writes a pcap file of one link type.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    link: PcapLink,
}

impl<W: Write> PcapWriter<W> {
    /// Start a file (writes the file header).
    pub fn new(mut out: W, link: PcapLink) -> Result<PcapWriter<W>, PcapError> {
        let mut h = Vec::with_capacity(FILE_HEADER_LEN);
        h.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&link.header_word().to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, link })
    }

    pub fn link(&self) -> PcapLink {
        self.link
    }

    /// One cell (HEC not stored: ERF omits it).
    pub fn write_cell(&mut self, time: SimTime, cell: &[u8; CELL_LEN]) -> Result<(), PcapError> {
        if self.link != PcapLink::Cells {
            return Err(PcapError::WrongLink { link: self.link });
        }
        let (secs, ps) = split_time(time)?;
        let mut rec = Vec::with_capacity(ERF_HEADER_LEN + ERF_CELL_LEN);
        // ERF timestamp: little-endian 32.32 fixed-point seconds.
        let frac = ((u128::from(ps) << 32) / u128::from(PS_PER_SEC)) as u64;
        rec.extend_from_slice(&((u64::from(secs) << 32) | frac).to_le_bytes());
        rec.push(ERF_TYPE_ATM);
        rec.push(ERF_FLAG_VLEN);
        rec.extend_from_slice(&((ERF_HEADER_LEN + ERF_CELL_LEN) as u16).to_be_bytes()); // rlen
        rec.extend_from_slice(&0u16.to_be_bytes()); // loss counter
        rec.extend_from_slice(&(ERF_CELL_LEN as u16).to_be_bytes()); // wlen
        rec.extend_from_slice(&cell[..4]);
        rec.extend_from_slice(&cell[5..]);
        self.write_record(secs, ps, &rec)
    }

    /// One AAL5 payload (the CPCS-PDU's user data, encapsulation header included).
    pub fn write_pdu(
        &mut self,
        time: SimTime,
        vc: Vc,
        encap: Encap,
        payload: &[u8],
    ) -> Result<(), PcapError> {
        if self.link != PcapLink::Pdus {
            return Err(PcapError::WrongLink { link: self.link });
        }
        let vpi = u8::try_from(vc.vpi).map_err(|_| PcapError::VpiTooLarge { vpi: vc.vpi })?;
        let (secs, ps) = split_time(time)?;
        let mut rec = Vec::with_capacity(SUNATM_HEADER_LEN + payload.len());
        // Direction bit 0x80 clear: DTE->DCE (what this host sent).
        rec.push(match encap {
            Encap::LlcSnap => SUNATM_TYPE_LLC,
            Encap::VcMux => 0,
        });
        rec.push(vpi);
        rec.extend_from_slice(&vc.vci.to_be_bytes());
        rec.extend_from_slice(payload);
        self.write_record(secs, ps, &rec)
    }

    /// One Ethernet MAC frame, destination address through FCS, as
    /// [`super::ethernet::build_frame`] makes it. Its size and FCS are checked: a
    /// file of this link type says every frame carries a good FCS.
    pub fn write_frame(&mut self, time: SimTime, frame: &[u8]) -> Result<(), PcapError> {
        if self.link != PcapLink::Ethernet {
            return Err(PcapError::WrongLink { link: self.link });
        }
        let view = Frame::new_checked(frame).map_err(PcapError::BadFrame)?;
        view.check_fcs().map_err(PcapError::BadFrame)?;
        let (secs, ps) = split_time(time)?;
        self.write_record(secs, ps, frame)
    }

    pub fn write(&mut self, record: &Record) -> Result<(), PcapError> {
        match record {
            Record::Cell { time, cell } => self.write_cell(*time, cell),
            Record::Pdu {
                time,
                vc,
                llc,
                payload,
            } => {
                let encap = if *llc { Encap::LlcSnap } else { Encap::VcMux };
                self.write_pdu(*time, *vc, encap, payload)
            }
            Record::Frame {
                time,
                frame,
                fcs: true,
            } => self.write_frame(*time, frame),
            // A frame without FCS: give it one rather than write a file whose
            // header promises what a record lacks.
            Record::Frame { frame, .. } => Err(PcapError::BadFrame(EthernetError::FrameSize {
                len: frame.len() + FCS_LEN,
            })),
        }
    }

    fn write_record(&mut self, secs: u32, ps: u64, data: &[u8]) -> Result<(), PcapError> {
        if data.len() > SNAPLEN as usize {
            return Err(PcapError::TooLong { len: data.len() });
        }
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&((ps / 1_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), PcapError> {
        self.out.flush()?;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Whole seconds and the picoseconds within the second.
fn split_time(t: SimTime) -> Result<(u32, u64), PcapError> {
    let secs = u32::try_from(t.as_ps() / PS_PER_SEC).map_err(|_| PcapError::TimeTooLarge)?;
    Ok((secs, t.as_ps() % PS_PER_SEC))
}

/// A parsed pcap file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcap {
    pub link: PcapLink,
    pub records: Vec<Record>,
}

/// A bounds-checked cursor over untrusted bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    big_endian: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PcapError> {
        let available = self.bytes.len() - self.pos;
        if n > available {
            return Err(PcapError::Truncated {
                offset: self.pos,
                needed: n,
                available,
            });
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, PcapError> {
        let b = self.take(4)?;
        let b = [b[0], b[1], b[2], b[3]];
        Ok(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
}

/// Parse a whole pcap file written by [`PcapWriter`] (or any pcap of those link types).
pub fn read_pcap(bytes: &[u8]) -> Result<Pcap, PcapError> {
    let records = records(bytes)?;
    let link = records.link();
    Ok(Pcap {
        link,
        records: records.collect::<Result<Vec<Record>, PcapError>>()?,
    })
}

/// The records of a pcap file one at a time (a long capture need not be held
/// as records): the file header is checked here, each record as it comes; the
/// first error ends the iteration.
pub fn records(bytes: &[u8]) -> Result<Records<'_>, PcapError> {
    let mut r = Reader {
        bytes,
        pos: 0,
        big_endian: false,
    };
    let magic_bytes = r.take(4)?;
    let le = u32::from_le_bytes([
        magic_bytes[0],
        magic_bytes[1],
        magic_bytes[2],
        magic_bytes[3],
    ]);
    let be = u32::from_be_bytes([
        magic_bytes[0],
        magic_bytes[1],
        magic_bytes[2],
        magic_bytes[3],
    ]);
    let (nanos, big_endian) = match (le, be) {
        (MAGIC_NANOS, _) => (true, false),
        (MAGIC_MICROS, _) => (false, false),
        (_, MAGIC_NANOS) => (true, true),
        (_, MAGIC_MICROS) => (false, true),
        _ => return Err(PcapError::BadMagic { magic: le }),
    };
    r.big_endian = big_endian;
    r.take(12)?; // version, thiszone, sigfigs
    let _snaplen = r.u32()?;
    // The upper bits of the link-type word may carry FCS information; the type is the low 16.
    let word = r.u32()?;
    let linktype = word & 0xffff;
    let fcs = word & LT_FCS_PRESENT != 0 && word >> LT_FCS_LEN_SHIFT == ETHERNET_FCS_WORDS;
    let link = match linktype {
        LINKTYPE_ERF => PcapLink::Cells,
        LINKTYPE_SUNATM => PcapLink::Pdus,
        LINKTYPE_ETHERNET => PcapLink::Ethernet,
        _ => return Err(PcapError::UnsupportedLinkType { linktype }),
    };
    Ok(Records {
        r,
        link,
        frac_ps: if nanos { 1_000 } else { 1_000_000 },
        fcs,
        failed: false,
    })
}

/// The records of a pcap file ([`records`]).
pub struct Records<'a> {
    r: Reader<'a>,
    link: PcapLink,
    frac_ps: u64,
    /// Ethernet frames carry their FCS (from the link-type word).
    fcs: bool,
    failed: bool,
}

impl Records<'_> {
    pub fn link(&self) -> PcapLink {
        self.link
    }

    fn record(&mut self) -> Result<Record, PcapError> {
        let r = &mut self.r;
        let secs = u64::from(r.u32()?);
        let frac = u64::from(r.u32()?);
        let caplen = r.u32()? as usize;
        let _origlen = r.u32()?;
        let offset = r.pos;
        let data = r.take(caplen)?;
        // Saturating: a hostile fraction field must not overflow.
        let time = SimTime(
            secs.saturating_mul(PS_PER_SEC)
                .saturating_add(frac.saturating_mul(self.frac_ps)),
        );
        match self.link {
            PcapLink::Cells => parse_erf_cell(data, offset, time),
            PcapLink::Pdus => parse_sunatm(data, offset, time),
            // The frame as captured: its size and FCS are the caller's to check
            // (ethernet::Frame::new_checked), a capture may hold damaged frames.
            PcapLink::Ethernet => Ok(Record::Frame {
                time,
                frame: data.to_vec(),
                fcs: self.fcs,
            }),
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Record, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.pos >= self.r.bytes.len() {
            return None;
        }
        let rec = self.record();
        self.failed = rec.is_err();
        Some(rec)
    }
}

fn parse_erf_cell(data: &[u8], offset: usize, time: SimTime) -> Result<Record, PcapError> {
    let mut r = Reader {
        bytes: data,
        pos: 0,
        big_endian: true,
    };
    let h = r.take(ERF_HEADER_LEN)?;
    let erf_type = h[8] & 0x7f;
    if erf_type != ERF_TYPE_ATM {
        return Err(PcapError::UnsupportedErfType { erf_type, offset });
    }
    // Skip extension headers: each 8 bytes, the top bit of its first byte says
    // whether another follows.
    let mut more = h[8] & 0x80 != 0;
    while more {
        more = r.take(8)?[0] & 0x80 != 0;
    }
    // The record length spans the header, its extensions and the cell (and any
    // padding) and no more than the packet; the wire length is one cell's, 52 bytes
    // without the HEC (Endace ERF Types Reference, "rlen" and "wlen").
    let rlen = u16::from_be_bytes([h[10], h[11]]);
    let wlen = u16::from_be_bytes([h[14], h[15]]);
    let needed = r.pos + ERF_CELL_LEN;
    let rlen_ok = (needed..=data.len()).contains(&usize::from(rlen));
    if data.len() >= needed && !(rlen_ok && (1..=CELL_LEN as u16).contains(&wlen)) {
        return Err(PcapError::BadErfLength {
            rlen,
            wlen,
            needed,
            available: data.len(),
            offset,
        });
    }
    let body = r.take(ERF_CELL_LEN).map_err(|e| match e {
        PcapError::Truncated {
            offset: o,
            needed,
            available,
        } => PcapError::Truncated {
            offset: offset + o,
            needed,
            available,
        },
        other => other,
    })?;
    let mut cell = [0u8; CELL_LEN];
    cell[..4].copy_from_slice(&body[..4]);
    cell[4] = hec(&[body[0], body[1], body[2], body[3]]);
    cell[5..].copy_from_slice(&body[4..4 + PAYLOAD_LEN]);
    Ok(Record::Cell { time, cell })
}

fn parse_sunatm(data: &[u8], offset: usize, time: SimTime) -> Result<Record, PcapError> {
    if data.len() < SUNATM_HEADER_LEN {
        return Err(PcapError::Truncated {
            offset,
            needed: SUNATM_HEADER_LEN,
            available: data.len(),
        });
    }
    Ok(Record::Pdu {
        time,
        vc: Vc {
            vpi: u16::from(data[1]),
            vci: u16::from_be_bytes([data[2], data[3]]),
        },
        llc: data[0] & 0x0f == SUNATM_TYPE_LLC,
        payload: data[SUNATM_HEADER_LEN..].to_vec(),
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wire::aal5::segment;
    use crate::wire::cell::CellHeader;
    use crate::wire::ethernet;
    use proptest::prelude::*;

    fn cells_file(times: &[SimTime], cells: &[[u8; CELL_LEN]]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Cells).unwrap();
        for (t, c) in times.iter().zip(cells) {
            w.write_cell(*t, c).unwrap();
        }
        w.into_inner()
    }

    #[test]
    fn test_emit_cell_record() {
        let cells = segment(&CellHeader::uni(1, 42, false), b"hi").unwrap();
        let f = cells_file(&[SimTime::from_us(1_500_000)], &cells);
        assert_eq!(&f[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&f[20..24], &197u32.to_le_bytes());
        // Record header: 1 s, 500000000 ns, 68 bytes.
        assert_eq!(&f[24..28], &1u32.to_le_bytes());
        assert_eq!(&f[28..32], &500_000_000u32.to_le_bytes());
        assert_eq!(&f[32..36], &68u32.to_le_bytes());
        let erf = &f[40..];
        // ERF timestamp 1.5 s in 32.32 fixed point, little endian.
        assert_eq!(&erf[..8], &0x0000_0001_8000_0000u64.to_le_bytes());
        assert_eq!(&erf[8..16], &[3, 4, 0, 68, 0, 0, 0, 52]);
        assert_eq!(&erf[16..20], &cells[0][..4]);
        assert_eq!(&erf[20..], &cells[0][5..]);
    }

    /// A one-cell file with the ERF record's rlen and wlen set to these.
    fn cell_file_with_lengths(rlen: u16, wlen: u16) -> Vec<u8> {
        let cells = segment(&CellHeader::uni(1, 42, false), b"hi").unwrap();
        let mut f = cells_file(&[SimTime::ZERO], &cells);
        f[40 + 10..40 + 12].copy_from_slice(&rlen.to_be_bytes());
        f[40 + 14..40 + 16].copy_from_slice(&wlen.to_be_bytes());
        f
    }

    #[test]
    fn test_impossible_erf_len() {
        // Record lengths 0 and 0xffff (and a wire length of no cell) were accepted.
        assert!(read_pcap(&cell_file_with_lengths(68, 52)).is_ok());
        assert!(read_pcap(&cell_file_with_lengths(68, 53)).is_ok());
        for (rlen, wlen) in [
            (0, 52),
            (0xffff, 52),
            (67, 52),
            (69, 52),
            (68, 0),
            (68, 0xffff),
        ] {
            let e = read_pcap(&cell_file_with_lengths(rlen, wlen)).unwrap_err();
            assert_eq!(
                e,
                PcapError::BadErfLength {
                    rlen,
                    wlen,
                    needed: 68,
                    available: 68,
                    offset: 40
                }
            );
            assert!(e.to_string().starts_with(&format!(
                "ERF record at byte 40: record length {rlen} and wire length {wlen}, expected \
                 a record length of 68..=68"
            )));
        }
    }

    #[test]
    fn test_emit_pdu_record() {
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Pdus).unwrap();
        w.write_pdu(
            SimTime::ZERO,
            Vc {
                vpi: 1,
                vci: 0x1234,
            },
            Encap::LlcSnap,
            b"xyz",
        )
        .unwrap();
        let f = w.into_inner();
        assert_eq!(&f[20..24], &123u32.to_le_bytes());
        assert_eq!(&f[40..], &[0x02, 1, 0x12, 0x34, b'x', b'y', b'z']);
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Pdus).unwrap();
        assert_eq!(
            w.write_pdu(SimTime::ZERO, Vc { vpi: 256, vci: 1 }, Encap::VcMux, b"x"),
            Err(PcapError::VpiTooLarge { vpi: 256 })
        );
        assert_eq!(
            w.write_cell(SimTime::ZERO, &[0; 53]),
            Err(PcapError::WrongLink {
                link: PcapLink::Pdus
            })
        );
    }

    #[test]
    fn test_read_errors() {
        assert_eq!(
            read_pcap(&[]),
            Err(PcapError::Truncated {
                offset: 0,
                needed: 4,
                available: 0
            })
        );
        assert_eq!(read_pcap(&[0; 24]), Err(PcapError::BadMagic { magic: 0 }));
        let mut f = cells_file(&[], &[]);
        f[20] = 105; // IEEE 802.11
        assert_eq!(
            read_pcap(&f),
            Err(PcapError::UnsupportedLinkType { linktype: 105 })
        );
        let cells = segment(&CellHeader::uni(1, 42, false), b"hi").unwrap();
        let f = cells_file(&[SimTime::ZERO], &cells);
        assert!(matches!(
            read_pcap(&f[..f.len() - 1]),
            Err(PcapError::Truncated { .. })
        ));
    }

    #[test]
    fn test_read_big_endian_micros() {
        // A big-endian, microsecond SunATM file as another tool might write it.
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_MICROS.to_be_bytes());
        f.extend_from_slice(&[0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&65535u32.to_be_bytes());
        f.extend_from_slice(&123u32.to_be_bytes());
        for v in [2u32, 7, 6, 6] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&[0x82, 5, 0, 99, 0xab, 0xcd]);
        let p = read_pcap(&f).unwrap();
        assert_eq!(
            p.records,
            vec![Record::Pdu {
                time: SimTime::from_us(2_000_007),
                vc: Vc { vpi: 5, vci: 99 },
                llc: true,
                payload: vec![0xab, 0xcd],
            }]
        );
    }

    #[test]
    fn test_emit_frame_record() {
        let repr = ethernet::Repr {
            src_addr: ethernet::Address([2, 0, 0, 0, 0, 1]),
            dst_addr: ethernet::Address([2, 0, 0, 0, 0, 2]),
            ethertype: ethernet::ETHERTYPE_IPV4,
        };
        let frame = ethernet::build_frame(&repr, b"datagram").unwrap();
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Ethernet).unwrap();
        w.write_frame(SimTime::from_us(2_000_001), &frame).unwrap();
        let f = w.into_inner();
        // Link type 1, FCS length present (bit 26), 2 words of FCS (bits 28..31).
        assert_eq!(&f[20..24], &0x2400_0001u32.to_le_bytes());
        assert_eq!(&f[24..28], &2u32.to_le_bytes());
        assert_eq!(&f[28..32], &1_000u32.to_le_bytes());
        assert_eq!(&f[32..36], &64u32.to_le_bytes());
        assert_eq!(&f[40..], &frame[..]);
        let p = read_pcap(&f).unwrap();
        assert_eq!(p.link, PcapLink::Ethernet);
        assert_eq!(
            p.records,
            vec![Record::Frame {
                time: SimTime::from_us(2_000_001),
                frame: frame.clone(),
                fcs: true
            }]
        );
        // A damaged frame or a frame in a cell file is refused.
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Ethernet).unwrap();
        let mut bad = frame.clone();
        bad[20] ^= 1;
        assert!(matches!(
            w.write_frame(SimTime::ZERO, &bad),
            Err(PcapError::BadFrame(ethernet::EthernetError::BadFcs { .. }))
        ));
        assert_eq!(
            w.write_frame(SimTime::ZERO, &frame[..60]),
            Err(PcapError::BadFrame(ethernet::EthernetError::FrameSize {
                len: 60
            }))
        );
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Cells).unwrap();
        assert_eq!(
            w.write_frame(SimTime::ZERO, &frame),
            Err(PcapError::WrongLink {
                link: PcapLink::Cells
            })
        );
        // Another tool's capture without FCS: plain link type 1.
        let mut g = f.clone();
        g[20..24].copy_from_slice(&1u32.to_le_bytes());
        let Record::Frame { fcs, .. } = &read_pcap(&g).unwrap().records[0] else {
            panic!("not a frame");
        };
        assert!(!fcs);
    }

    proptest! {
        #[test]
        fn reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = read_pcap(&bytes);
        }

        #[test]
        fn erf_lengths_never_panic_and_only_a_cell_s_pass(rlen in any::<u16>(), wlen in any::<u16>()) {
            let ok = read_pcap(&cell_file_with_lengths(rlen, wlen)).is_ok();
            prop_assert_eq!(ok, rlen == 68 && (1..=53).contains(&wlen));
        }

        #[test]
        fn reader_never_panics_after_valid_header(
            link in 0u8..3,
            body in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let link = [PcapLink::Cells, PcapLink::Pdus, PcapLink::Ethernet][usize::from(link)];
            let mut f = PcapWriter::new(Vec::new(), link).unwrap().into_inner();
            f.extend_from_slice(&body);
            let _ = read_pcap(&f);
        }

        #[test]
        fn cells_roundtrip(
            payload in proptest::collection::vec(any::<u8>(), 1..500),
            vpi in 0u16..256, vci: u16, start_ns in 0u64..10_000_000_000_000,
        ) {
            let cells = segment(&CellHeader::uni(vpi, vci, false), &payload).unwrap();
            // Times to the nanosecond: what the file keeps.
            let times: Vec<SimTime> =
                (0..cells.len() as u64).map(|k| SimTime::from_ns(start_ns + 2_831 * k)).collect();
            let p = read_pcap(&cells_file(&times, &cells)).unwrap();
            prop_assert_eq!(p.link, PcapLink::Cells);
            let expect: Vec<Record> =
                times.iter().zip(&cells).map(|(t, c)| Record::Cell { time: *t, cell: *c }).collect();
            prop_assert_eq!(p.records, expect);
        }

        #[test]
        fn frames_roundtrip(
            payload in proptest::collection::vec(any::<u8>(), 0..=ethernet::MTU),
            ethertype in ethernet::MIN_ETHERTYPE..=u16::MAX, ns in 0u64..10_000_000_000_000,
        ) {
            let repr = ethernet::Repr { ethertype, ..ethernet::Repr::default() };
            let frame = ethernet::build_frame(&repr, &payload).unwrap();
            let rec = Record::Frame { time: SimTime::from_ns(ns), frame, fcs: true };
            let mut w = PcapWriter::new(Vec::new(), PcapLink::Ethernet).unwrap();
            w.write(&rec).unwrap();
            let p = read_pcap(&w.into_inner()).unwrap();
            prop_assert_eq!(p.records, vec![rec]);
        }

        #[test]
        fn pdus_roundtrip(
            payload in proptest::collection::vec(any::<u8>(), 1..500),
            vpi in 0u16..256, vci: u16, llc: bool, ns in 0u64..10_000_000_000_000,
        ) {
            let rec = Record::Pdu { time: SimTime::from_ns(ns), vc: Vc { vpi, vci }, llc, payload };
            let mut w = PcapWriter::new(Vec::new(), PcapLink::Pdus).unwrap();
            w.write(&rec).unwrap();
            let p = read_pcap(&w.into_inner()).unwrap();
            prop_assert_eq!(p.records, vec![rec]);
        }
    }
}
