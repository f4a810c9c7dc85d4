//! AAL5 (ITU-T I.363.5): the CPCS-PDU, segmentation into cells and reassembly.
//!
//! ```text
//!  +----------------------+---------+---------+-----+--------+--------+
//!  | CPCS-PDU payload     | PAD     | CPCS-UU | CPI | Length | CRC-32 |
//!  | 1..=65535 bytes      | 0..=47  |    1    |  1  |  2 BE  |  4 BE  |
//!  +----------------------+---------+---------+-----+--------+--------+
//!                                   \________ 8-byte trailer ________/
//! ```
//! The whole is a multiple of 48 bytes, carried in that many cells; the last cell
//! has the PTI AUU bit set. The CRC-32 covers everything before it.

use super::cell::{
    correct_header, Cell, CellError, CellHeader, HeaderFormat, HecError, HecStatus, CELL_LEN,
    PAYLOAD_LEN,
};
use core::fmt;
use crc::{Crc, Table, CRC_32_BZIP2};
use std::collections::BTreeMap;

/// Bytes in the CPCS-PDU trailer.
pub const TRAILER_LEN: usize = 8;
/// The largest CPCS-PDU payload (the Length field is 16 bits; 0 means "abort").
pub const MAX_PAYLOAD: usize = 65535;
/// Cells in the largest CPCS-PDU: (65535 + 8) bytes rounded up to cells = 1366.
pub const MAX_CELLS: usize = (MAX_PAYLOAD + TRAILER_LEN).div_ceil(PAYLOAD_LEN);
/// Reassembly contexts a [`Reassembler`] keeps by default: VCs with a PDU under
/// way at once, sized like a host adapter's VC table. Each holds at most
/// [`MAX_CELLS`] cells, so a reassembler holds at most about 67 MB whatever it
/// is fed (a UNI header alone names 2^24 VCs).
pub const DEFAULT_MAX_OPEN_VCS: usize = 1024;

mod field {
    // Offsets from the end of the PDU.
    pub const UU: usize = 8;
    pub const CPI: usize = 7;
    pub const LENGTH: usize = 6;
    pub const CRC: usize = 4;
}

/// The AAL5 CRC-32 is CRC-32/BZIP2 of the catalogue: generator 0x04C11DB7, initial
/// value all ones, not reflected, final complement (I.363.5 §10.4.4; the same as
/// Ethernet's polynomial, but MSB first).
// Slice-by-16 tables: a 9 KB PDU's CRC in about a microsecond rather than ten,
// which the emulator pays twice per datagram in real time.
const CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_BZIP2);

/// The AAL5 CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    CRC32.checksum(data)
}

/// Bytes of the whole CPCS-PDU carrying `payload_len` bytes (payload + pad + trailer).
pub const fn pdu_len(payload_len: usize) -> usize {
    (payload_len + TRAILER_LEN).div_ceil(PAYLOAD_LEN) * PAYLOAD_LEN
}

/// Cells of the CPCS-PDU carrying `payload_len` bytes: 40 → 1, 9188 → 192.
pub const fn cells_for(payload_len: usize) -> usize {
    pdu_len(payload_len) / PAYLOAD_LEN
}

/// Pad bytes in the CPCS-PDU carrying `payload_len` bytes (0..=47).
pub const fn pad_len(payload_len: usize) -> usize {
    pdu_len(payload_len) - payload_len - TRAILER_LEN
}

/// Why a CPCS-PDU could not be built or parsed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Aal5Error {
    /// Payload length outside 1..=65535.
    PayloadSize { len: usize },
    /// The PDU is not a whole number (1..=1366) of 48-byte cell payloads.
    PduSize { len: usize },
    /// The Length field does not fit the PDU: the pad would be outside 0..=47.
    /// (Length 0 is the abort indication.)
    BadLength { length: u16, pdu_len: usize },
    /// The CRC-32 over the PDU does not match its trailer.
    BadCrc { found: u32, computed: u32 },
}

impl fmt::Display for Aal5Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Aal5Error::PayloadSize { len } => {
                write!(f, "AAL5 payload of {len} bytes: allowed 1..={MAX_PAYLOAD}")
            }
            Aal5Error::PduSize { len } => write!(
                f,
                "AAL5 CPCS-PDU of {len} bytes: must be a multiple of {PAYLOAD_LEN}, {PAYLOAD_LEN}..={}",
                MAX_CELLS * PAYLOAD_LEN
            ),
            Aal5Error::BadLength { length, pdu_len } => write!(
                f,
                "AAL5 length field {length} does not fit a {pdu_len}-byte PDU ({} cells): \
                 allowed {}..={}",
                pdu_len / PAYLOAD_LEN,
                (pdu_len + 1).saturating_sub(PAYLOAD_LEN + TRAILER_LEN).max(1),
                pdu_len.saturating_sub(TRAILER_LEN).min(MAX_PAYLOAD)
            ),
            Aal5Error::BadCrc { found, computed } => {
                write!(f, "AAL5 CRC-32 {found:#010x} in trailer, computed {computed:#010x}")
            }
        }
    }
}

impl std::error::Error for Aal5Error {}

/// Build the CPCS-PDU carrying `payload`, with the given CPCS-UU and CPI bytes
/// (both 0 in ordinary use: CPI must be 0 by I.363.5, UU is user-to-user).
pub fn build_pdu(payload: &[u8], uu: u8, cpi: u8) -> Result<Vec<u8>, Aal5Error> {
    let len = payload.len();
    if !(1..=MAX_PAYLOAD).contains(&len) {
        return Err(Aal5Error::PayloadSize { len });
    }
    let mut pdu = Vec::with_capacity(pdu_len(len));
    pdu.extend_from_slice(payload);
    pdu.resize(len + pad_len(len), 0);
    pdu.extend_from_slice(&[uu, cpi]);
    pdu.extend_from_slice(&(len as u16).to_be_bytes());
    let crc = crc32(&pdu);
    pdu.extend_from_slice(&crc.to_be_bytes());
    Ok(pdu)
}

/// A zero-copy view of a CPCS-PDU (payload, pad and trailer).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CpcsPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CpcsPdu<T> {
    pub const fn new_unchecked(buffer: T) -> CpcsPdu<T> {
        CpcsPdu { buffer }
    }

    /// Wrap untrusted bytes after checking the size, the Length field and the CRC.
    /// Once this succeeds no accessor panics.
    pub fn new_checked(buffer: T) -> Result<CpcsPdu<T>, Aal5Error> {
        let pdu = CpcsPdu::new_unchecked(buffer);
        pdu.check_len()?;
        pdu.check_crc()?;
        Ok(pdu)
    }

    /// Size is a whole number of cells and the Length field leaves a pad of 0..=47.
    pub fn check_len(&self) -> Result<(), Aal5Error> {
        let len = self.buffer.as_ref().len();
        if len == 0 || !len.is_multiple_of(PAYLOAD_LEN) || len > MAX_CELLS * PAYLOAD_LEN {
            return Err(Aal5Error::PduSize { len });
        }
        let length = self.length();
        if length == 0 || pdu_len(usize::from(length)) != len {
            return Err(Aal5Error::BadLength {
                length,
                pdu_len: len,
            });
        }
        Ok(())
    }

    pub fn check_crc(&self) -> Result<(), Aal5Error> {
        let (found, computed) = (self.crc(), self.computed_crc());
        if found != computed {
            return Err(Aal5Error::BadCrc { found, computed });
        }
        Ok(())
    }

    fn trailer_byte(&self, from_end: usize) -> u8 {
        let b = self.buffer.as_ref();
        b[b.len() - from_end]
    }

    pub fn uu(&self) -> u8 {
        self.trailer_byte(field::UU)
    }
    pub fn cpi(&self) -> u8 {
        self.trailer_byte(field::CPI)
    }
    pub fn length(&self) -> u16 {
        u16::from_be_bytes([
            self.trailer_byte(field::LENGTH),
            self.trailer_byte(field::LENGTH - 1),
        ])
    }
    pub fn crc(&self) -> u32 {
        let b = self.buffer.as_ref();
        let n = b.len();
        u32::from_be_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]])
    }
    /// The CRC-32 of everything before the CRC field.
    pub fn computed_crc(&self) -> u32 {
        let b = self.buffer.as_ref();
        crc32(&b[..b.len() - field::CRC])
    }
    /// The user payload (the first Length bytes).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[..usize::from(self.length())]
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

/// Why segmentation failed: the payload, or a header field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SegmentError {
    Payload(Aal5Error),
    Header(CellError),
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegmentError::Payload(e) => e.fmt(f),
            SegmentError::Header(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SegmentError {}

/// The cells of the CPCS-PDU carrying `payload` on the connection of `header`
/// (its GFC, congestion bit and CLP are copied to every cell; the AUU bit is set on
/// the last cell only).
pub fn segment(header: &CellHeader, payload: &[u8]) -> Result<Vec<[u8; CELL_LEN]>, SegmentError> {
    let pdu = build_pdu(payload, 0, 0).map_err(SegmentError::Payload)?;
    segment_pdu(header, &pdu)
}

/// The cells of an already-built CPCS-PDU (whose length must be a multiple of 48).
pub fn segment_pdu(header: &CellHeader, pdu: &[u8]) -> Result<Vec<[u8; CELL_LEN]>, SegmentError> {
    if pdu.is_empty() || !pdu.len().is_multiple_of(PAYLOAD_LEN) {
        return Err(SegmentError::Payload(Aal5Error::PduSize { len: pdu.len() }));
    }
    (0..pdu.len() / PAYLOAD_LEN)
        .map(|i| pdu_cell(header, pdu, i))
        .collect()
}

/// Cell `i` of an already-built CPCS-PDU (whose length must be a multiple of 48):
/// the PDU's `i`-th 48 bytes under `header`, AUU set iff it is the last.
pub fn pdu_cell(header: &CellHeader, pdu: &[u8], i: usize) -> Result<[u8; CELL_LEN], SegmentError> {
    let n = pdu.len() / PAYLOAD_LEN;
    if i >= n || !pdu.len().is_multiple_of(PAYLOAD_LEN) {
        return Err(SegmentError::Payload(Aal5Error::PduSize { len: pdu.len() }));
    }
    let h = CellHeader {
        pti: header.pti.with_auu(i + 1 == n),
        ..*header
    };
    let mut payload = [0u8; PAYLOAD_LEN];
    payload.copy_from_slice(&pdu[i * PAYLOAD_LEN..(i + 1) * PAYLOAD_LEN]);
    h.cell(&payload).map_err(SegmentError::Header)
}

/// A virtual channel: the reassembly key.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vc {
    pub vpi: u16,
    pub vci: u16,
}

impl fmt::Display for Vc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.vpi, self.vci)
    }
}

/// Why reassembly dropped a PDU. Each names one way a PDU is lost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReassemblyError {
    /// The CRC-32 failed: a payload bit error, or a mis-inserted cell (the count was
    /// right, the content wrong).
    BadCrc {
        found: u32,
        computed: u32,
        cells: usize,
    },
    /// The length field does not match the cells received: a lost cell in the
    /// middle (too few cells for the length; the length fixes the count, so every
    /// single loss shows here), or a lost end-of-PDU cell that merged two PDUs (too
    /// many).
    BadLength { length: u16, cells: usize },
    /// More than 1366 cells arrived without an end-of-PDU cell: the buffer was
    /// dropped and cells are discarded up to the next end-of-PDU cell.
    Oversize { cells: usize },
    /// The caller reported cells of this PDU lost (see [`Reassembler::note_lost`]).
    LostCells { lost: usize, received: usize },
    /// A cell that would start a PDU on one more VC while `max` VCs already have
    /// one under way: it is dropped (as an adapter drops cells on a VC it has no
    /// reassembly context for), and the rest of its PDU fails as cells lost.
    TooManyVcs { max: usize },
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ReassemblyError::BadCrc { found, computed, cells } => write!(
                f,
                "bad AAL5 CRC-32 in a {cells}-cell PDU: trailer {found:#010x}, computed {computed:#010x}"
            ),
            ReassemblyError::BadLength { length, cells } => {
                let (lo, hi) = length_range(cells);
                write!(
                    f,
                    "wrong AAL5 length: trailer says {length} bytes, but {cells} cells carry {lo}..={hi}"
                )
            }
            ReassemblyError::Oversize { cells } => write!(
                f,
                "oversize AAL5 PDU: {cells} cells without an end-of-PDU cell (at most {MAX_CELLS}); dropped"
            ),
            ReassemblyError::LostCells { lost, received } => {
                write!(f, "AAL5 PDU lost {lost} cells ({received} received); dropped")
            }
            ReassemblyError::TooManyVcs { max } => write!(
                f,
                "cell would open a PDU on one VC more than the {max} the reassembler keeps \
                 under way at once; dropped"
            ),
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// The payload lengths a PDU of `cells` cells can carry.
fn length_range(cells: usize) -> (usize, usize) {
    let bytes = cells * PAYLOAD_LEN;
    let hi = bytes.saturating_sub(TRAILER_LEN).min(MAX_PAYLOAD);
    let lo = (bytes + 1).saturating_sub(PAYLOAD_LEN + TRAILER_LEN).max(1);
    (lo, hi)
}

impl From<Aal5Error> for ReassemblyError {
    fn from(e: Aal5Error) -> ReassemblyError {
        match e {
            Aal5Error::BadCrc { found, computed } => ReassemblyError::BadCrc {
                found,
                computed,
                cells: 0,
            },
            Aal5Error::BadLength { length, pdu_len } => ReassemblyError::BadLength {
                length,
                cells: pdu_len / PAYLOAD_LEN,
            },
            // A PDU assembled from cells is a whole number of cells, and longer ones
            // are stopped as Oversize before this point.
            Aal5Error::PduSize { len } | Aal5Error::PayloadSize { len } => {
                ReassemblyError::Oversize {
                    cells: len / PAYLOAD_LEN,
                }
            }
        }
    }
}

/// The end of one PDU on one VC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reassembled {
    pub vc: Vc,
    pub result: Result<Vec<u8>, ReassemblyError>,
}

#[derive(Clone, Debug, Default)]
struct Partial {
    bytes: Vec<u8>,
    lost: usize,
    /// After an oversize PDU: discard up to and including the next end-of-PDU cell.
    discarding: bool,
}

/// What [`Reassembler::push_cell`] made of one raw cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedCell {
    /// Whether the header was valid or corrected.
    pub hec: HecStatus,
    /// The (corrected) header.
    pub header: CellHeader,
    /// The PDU this cell ended, if any.
    pub pdu: Option<Reassembled>,
}

/// AAL5 reassembly, one buffer per VC (a BTreeMap: deterministic order), for
/// at most `max_open_vcs` VCs at once: hostile or garbled input (random
/// VPI/VCI) cannot make it grow without bound.
#[derive(Clone, Debug)]
pub struct Reassembler {
    /// VCs with a PDU under way, or discarding up to an end-of-PDU cell.
    partial: BTreeMap<Vc, Partial>,
    max_open_vcs: usize,
}

impl Default for Reassembler {
    fn default() -> Reassembler {
        Reassembler::with_max_open_vcs(DEFAULT_MAX_OPEN_VCS)
    }
}

/// Why a raw cell could not be fed to reassembly.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CellInputError {
    Cell(CellError),
    Hec(HecError),
}

impl fmt::Display for CellInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CellInputError::Cell(e) => e.fmt(f),
            CellInputError::Hec(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CellInputError {}

impl Reassembler {
    pub fn new() -> Reassembler {
        Reassembler::default()
    }

    /// A reassembler that keeps PDUs under way on at most `max` VCs at once (at
    /// least 1; 0 is taken as 1). A cell that would open one more is refused
    /// with [`ReassemblyError::TooManyVcs`]; a single-cell PDU needs no context
    /// and is always reassembled.
    pub fn with_max_open_vcs(max: usize) -> Reassembler {
        Reassembler {
            partial: BTreeMap::new(),
            max_open_vcs: max.max(1),
        }
    }

    pub fn max_open_vcs(&self) -> usize {
        self.max_open_vcs
    }

    /// VCs holding reassembly state now (a PDU under way, or discarding the
    /// rest of an oversize one): at most [`Reassembler::max_open_vcs`].
    pub fn open_vcs(&self) -> usize {
        self.partial.len()
    }

    /// Whether a cell of `vc` that does not end a PDU may be taken: its VC
    /// already has a context, or there is room for one more. `Some` is the
    /// refusal to report.
    fn refuse_new_vc(&self, vc: Vc) -> Option<Reassembled> {
        (!self.partial.contains_key(&vc) && self.partial.len() >= self.max_open_vcs).then_some(
            Reassembled {
                vc,
                result: Err(ReassemblyError::TooManyVcs {
                    max: self.max_open_vcs,
                }),
            },
        )
    }

    /// Accept one cell whose header was already checked. Returns the PDU it ends, if
    /// it is a user-data cell with AUU set (or an Oversize error when the buffer
    /// overflows). OAM and RM cells are not part of AAL5 and are ignored.
    pub fn push(
        &mut self,
        header: &CellHeader,
        payload: &[u8; PAYLOAD_LEN],
    ) -> Option<Reassembled> {
        if !header.pti.is_user_data() {
            return None;
        }
        let vc = Vc {
            vpi: header.vpi,
            vci: header.vci,
        };
        let end = header.pti.auu();
        if end && !self.partial.contains_key(&vc) {
            // A single-cell PDU: checked at once, no context needed.
            let p = Partial {
                bytes: payload.to_vec(),
                ..Partial::default()
            };
            return Some(Reassembled {
                vc,
                result: finish(p),
            });
        }
        if let Some(refused) = self.refuse_new_vc(vc) {
            return Some(refused);
        }
        let p = self.partial.entry(vc).or_default();
        if p.discarding {
            if end {
                self.partial.remove(&vc);
            }
            return None;
        }
        p.bytes.extend_from_slice(payload);
        let cells = p.bytes.len() / PAYLOAD_LEN + p.lost;
        if !end && cells >= MAX_CELLS {
            // No PDU can be longer than this and still lack its last cell: the
            // end-of-PDU cell was lost. Drop, and resynchronise on the next one.
            let p = self.partial.remove(&vc).unwrap_or_default();
            let cells = p.bytes.len() / PAYLOAD_LEN + p.lost;
            self.partial.insert(
                vc,
                Partial {
                    discarding: true,
                    ..Partial::default()
                },
            );
            return Some(Reassembled {
                vc,
                result: Err(ReassemblyError::Oversize { cells }),
            });
        }
        if !end {
            return None;
        }
        let p = self.partial.remove(&vc).unwrap_or_default();
        Some(Reassembled {
            vc,
            result: finish(p),
        })
    }

    /// Accept a raw 53-byte cell: the header is checked with HEC correction (single-bit
    /// errors corrected, as a receiver in I.432 correction mode does) and parsed in
    /// `format`.
    pub fn push_cell(
        &mut self,
        cell: &[u8],
        format: HeaderFormat,
    ) -> Result<ReceivedCell, CellInputError> {
        let mut bytes = [0u8; CELL_LEN];
        if cell.len() != CELL_LEN {
            return Err(CellInputError::Cell(CellError::BadLength {
                len: cell.len(),
            }));
        }
        bytes.copy_from_slice(cell);
        let hec = correct_header(&mut bytes).map_err(CellInputError::Hec)?;
        let view = Cell::new_unchecked(&bytes[..]);
        let header = CellHeader::parse(&view, format).map_err(CellInputError::Cell)?;
        let mut payload = [0u8; PAYLOAD_LEN];
        payload.copy_from_slice(view.payload());
        let pdu = self.push(&header, &payload);
        Ok(ReceivedCell { hec, header, pdu })
    }

    /// Tell reassembly that a cell of `vc` was lost (the simulator knows when it drops
    /// one). The PDU under way is dropped with `LostCells` when it ends; if the lost
    /// cell was itself the end-of-PDU cell, it ends now.
    pub fn note_lost(&mut self, vc: Vc, end_of_pdu: bool) -> Option<Reassembled> {
        if !end_of_pdu {
            if let Some(refused) = self.refuse_new_vc(vc) {
                return Some(refused);
            }
        }
        let p = self.partial.entry(vc).or_default();
        if p.discarding {
            if end_of_pdu {
                self.partial.remove(&vc);
            }
            return None;
        }
        p.lost += 1;
        if !end_of_pdu {
            return None;
        }
        let p = self.partial.remove(&vc).unwrap_or_default();
        Some(Reassembled {
            vc,
            result: Err(ReassemblyError::LostCells {
                lost: p.lost,
                received: p.bytes.len() / PAYLOAD_LEN,
            }),
        })
    }

    /// Cells waiting for their end-of-PDU cell on `vc`.
    pub fn pending_cells(&self, vc: Vc) -> usize {
        self.partial
            .get(&vc)
            .map_or(0, |p| p.bytes.len() / PAYLOAD_LEN)
    }

    /// The VCs with a PDU under way (cells received, no end yet), in order.
    pub fn pending(&self) -> impl Iterator<Item = (Vc, usize)> + '_ {
        self.partial
            .iter()
            .filter(|(_, p)| !p.bytes.is_empty() || p.lost > 0)
            .map(|(vc, p)| (*vc, p.bytes.len() / PAYLOAD_LEN))
    }
}

/// Check a complete PDU buffer and take its payload out.
fn finish(p: Partial) -> Result<Vec<u8>, ReassemblyError> {
    let cells = p.bytes.len() / PAYLOAD_LEN;
    if p.lost > 0 {
        return Err(ReassemblyError::LostCells {
            lost: p.lost,
            received: cells,
        });
    }
    let pdu = CpcsPdu::new_unchecked(&p.bytes[..]);
    pdu.check_len().map_err(|e| match e {
        Aal5Error::BadLength { length, .. } => ReassemblyError::BadLength { length, cells },
        other => ReassemblyError::from(other),
    })?;
    pdu.check_crc().map_err(|e| match e {
        Aal5Error::BadCrc { found, computed } => ReassemblyError::BadCrc {
            found,
            computed,
            cells,
        },
        other => ReassemblyError::from(other),
    })?;
    let len = usize::from(pdu.length());
    let mut bytes = p.bytes;
    bytes.truncate(len);
    Ok(bytes)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wire::cell::Pti;
    use proptest::prelude::*;

    /// An independent bitwise CRC-32: MSB first, generator 0x04C11DB7, preset to all
    /// ones, complemented at the end.
    fn crc32_bitwise(data: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in data {
            crc ^= u32::from(b) << 24;
            for _ in 0..8 {
                crc = if crc & 0x8000_0000 != 0 {
                    (crc << 1) ^ 0x04c1_1db7
                } else {
                    crc << 1
                };
            }
        }
        !crc
    }

    /// The published AAL5 CRC-32 test vectors of ITU-T I.363.5 (the four 48-byte
    /// CPCS-PDUs with a 40-byte payload, widely reproduced, e.g. as the CRC-32/BZIP2
    /// codewords in Greg Cook's CRC RevEng catalogue and in AAL5 SAR test suites):
    /// the CRC covers the 44 bytes before it (payload + trailer's UU, CPI, Length).
    const VECTORS: [(&str, u32); 4] = [
        // 40 octets of 0x00, UU 0, CPI 0, Length 40.
        (
            "00000000000000000000000000000000000000000000000000000000000000000000000000000000\
             00000028",
            0x864d_7f99,
        ),
        // 40 octets of 0xff.
        (
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\
             00000028",
            0xc55e_457a,
        ),
        // 40 octets counting 1..=40.
        (
            "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728\
             00000028",
            0xbf67_1ed0,
        ),
        // 40 octets counting 1..=40, CPCS-UU 0x11, CPI 0x22.
        (
            "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728\
             11220028",
            0xacba_602a,
        ),
    ];

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn test_crc_vectors() {
        assert_eq!(CRC_32_BZIP2.poly, 0x04c1_1db7);
        assert_eq!(CRC_32_BZIP2.init, 0xffff_ffff);
        assert_eq!(CRC_32_BZIP2.xorout, 0xffff_ffff);
        for (hex, crc) in VECTORS {
            let covered = unhex(hex);
            assert_eq!(covered.len(), 44);
            assert_eq!(crc32(&covered), crc, "{hex}");
            assert_eq!(crc32_bitwise(&covered), crc, "{hex}");
            // And build_pdu produces exactly that 48-byte PDU.
            let (uu, cpi) = (covered[40], covered[41]);
            let pdu = build_pdu(&covered[..40], uu, cpi).unwrap();
            assert_eq!(&pdu[..44], &covered[..]);
            assert_eq!(&pdu[44..], &crc.to_be_bytes());
            let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
            assert_eq!(
                (view.uu(), view.cpi(), view.length(), view.crc()),
                (uu, cpi, 40, crc)
            );
        }
    }

    #[test]
    fn test_sizes() {
        assert_eq!(cells_for(40), 1);
        assert_eq!(cells_for(41), 2);
        assert_eq!(cells_for(9188), 192);
        assert_eq!(cells_for(9180 + 8), 192);
        assert_eq!(pad_len(40), 0);
        assert_eq!(pad_len(1), 39);
        assert_eq!(pad_len(41), 47);
        assert_eq!(MAX_CELLS, 1366);
        assert_eq!(cells_for(MAX_PAYLOAD), MAX_CELLS);
    }

    #[test]
    fn test_build_rejects_sizes() {
        assert_eq!(build_pdu(&[], 0, 0), Err(Aal5Error::PayloadSize { len: 0 }));
        assert_eq!(
            build_pdu(&vec![0; 65536], 0, 0),
            Err(Aal5Error::PayloadSize { len: 65536 })
        );
        assert!(build_pdu(&vec![0; 65535], 0, 0).is_ok());
    }

    #[test]
    fn test_parse_errors() {
        let pdu = build_pdu(&[7u8; 100], 0, 0).unwrap();
        assert_eq!(pdu.len(), 144);
        assert_eq!(
            CpcsPdu::new_checked(&pdu[..100]).unwrap_err(),
            Aal5Error::PduSize { len: 100 }
        );
        let mut bad = pdu.clone();
        bad[10] ^= 1;
        assert!(matches!(
            CpcsPdu::new_checked(&bad[..]),
            Err(Aal5Error::BadCrc { .. })
        ));
        // Length 40 cannot be carried in 3 cells.
        let mut bad = pdu.clone();
        bad[138..140].copy_from_slice(&40u16.to_be_bytes());
        assert_eq!(
            CpcsPdu::new_checked(&bad[..]).unwrap_err(),
            Aal5Error::BadLength {
                length: 40,
                pdu_len: 144
            }
        );
        // Length 0 is the abort indication.
        bad[138..140].copy_from_slice(&0u16.to_be_bytes());
        assert!(matches!(
            CpcsPdu::new_checked(&bad[..]),
            Err(Aal5Error::BadLength { length: 0, .. })
        ));
    }

    fn hdr() -> CellHeader {
        CellHeader::uni(1, 42, false)
    }

    #[test]
    fn test_segment_auu_last_only() {
        let cells = segment(&hdr(), &[0xab; 200]).unwrap();
        assert_eq!(cells.len(), 5);
        for (i, c) in cells.iter().enumerate() {
            let h = CellHeader::parse(&Cell::new_unchecked(&c[..]), HeaderFormat::Uni).unwrap();
            assert_eq!(h.pti.auu(), i == 4);
            assert_eq!((h.vpi, h.vci), (1, 42));
        }
    }

    fn feed(r: &mut Reassembler, cells: &[[u8; CELL_LEN]]) -> Vec<Reassembled> {
        cells
            .iter()
            .filter_map(|c| {
                let rx = r.push_cell(c, HeaderFormat::Uni).unwrap();
                assert_eq!(rx.hec, HecStatus::Valid);
                rx.pdu
            })
            .collect()
    }

    #[test]
    fn test_reassemble_interleaved_vcs() {
        let a = segment(&CellHeader::uni(1, 42, false), &[1u8; 100]).unwrap();
        let b = segment(&CellHeader::uni(2, 42, true), &[2u8; 50]).unwrap();
        let mixed = [a[0], b[0], a[1], b[1], a[2]];
        let mut r = Reassembler::new();
        let out = feed(&mut r, &mixed);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0],
            Reassembled {
                vc: Vc { vpi: 2, vci: 42 },
                result: Ok(vec![2u8; 50])
            }
        );
        assert_eq!(
            out[1],
            Reassembled {
                vc: Vc { vpi: 1, vci: 42 },
                result: Ok(vec![1u8; 100])
            }
        );
        assert_eq!(r.pending().count(), 0);
    }

    #[test]
    fn test_lost_middle_cell_is_bad_length() {
        // 200 bytes = 5 cells; losing cell 2 leaves 4 cells, which cannot carry 200.
        let cells = segment(&hdr(), &[9u8; 200]).unwrap();
        let mut r = Reassembler::new();
        let out = feed(&mut r, &[cells[0], cells[2], cells[3], cells[4]]);
        assert_eq!(
            out[0].result,
            Err(ReassemblyError::BadLength {
                length: 200,
                cells: 4
            })
        );
    }

    #[test]
    fn test_substituted_cell_is_bad_crc() {
        // The length field fixes the cell count, so a lost cell always shows as a
        // length error; a mis-inserted cell (right count, wrong content) or a payload
        // bit error shows as a CRC error.
        let a = segment(&hdr(), &[1u8; 130]).unwrap();
        let b = segment(&hdr(), &[2u8; 130]).unwrap();
        let mut r = Reassembler::new();
        let out = feed(&mut r, &[a[0], b[1], a[2]]);
        assert!(matches!(
            out[0].result,
            Err(ReassemblyError::BadCrc { cells: 3, .. })
        ));
        let mut flipped = a[1];
        flipped[20] ^= 0x10;
        let out = feed(&mut r, &[a[0], flipped, a[2]]);
        assert!(matches!(
            out[0].result,
            Err(ReassemblyError::BadCrc { cells: 3, .. })
        ));
    }

    #[test]
    fn test_lost_last_cell_merges_pdus() {
        let a = segment(&hdr(), &[1u8; 100]).unwrap();
        let b = segment(&hdr(), &[2u8; 100]).unwrap();
        let mut r = Reassembler::new();
        let out = feed(&mut r, &[a[0], a[1], b[0], b[1], b[2]]);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].result,
            Err(ReassemblyError::BadLength {
                length: 100,
                cells: 5
            })
        );
    }

    #[test]
    fn test_oversize_then_resync() {
        let mut r = Reassembler::new();
        let middle = CellHeader::uni(0, 5, false);
        let mut out = None;
        for i in 0..MAX_CELLS {
            out = r.push(&middle, &[0u8; PAYLOAD_LEN]);
            assert_eq!(out.is_some(), i + 1 == MAX_CELLS);
        }
        assert_eq!(
            out.unwrap().result,
            Err(ReassemblyError::Oversize { cells: MAX_CELLS })
        );
        // The tail of the broken PDU is discarded up to its end-of-PDU cell...
        let last = CellHeader {
            pti: Pti::user_data(false, true),
            ..middle
        };
        assert_eq!(r.push(&middle, &[0u8; PAYLOAD_LEN]), None);
        assert_eq!(r.push(&last, &[0u8; PAYLOAD_LEN]), None);
        // ...and the next PDU is received whole.
        let cells = segment(&middle, b"after").unwrap();
        let out = feed(&mut r, &cells);
        assert_eq!(out[0].result, Ok(b"after".to_vec()));
    }

    #[test]
    fn test_note_lost() {
        let cells = segment(&hdr(), &[3u8; 200]).unwrap();
        let vc = Vc { vpi: 1, vci: 42 };
        let mut r = Reassembler::new();
        assert!(feed(&mut r, &cells[..2]).is_empty());
        assert_eq!(r.note_lost(vc, false), None);
        let out = feed(&mut r, &cells[3..]);
        assert_eq!(
            out[0].result,
            Err(ReassemblyError::LostCells {
                lost: 1,
                received: 4
            })
        );
        // A lost end-of-PDU cell ends the PDU at once.
        assert!(feed(&mut r, &cells[..4]).is_empty());
        let out = r.note_lost(vc, true).unwrap();
        assert_eq!(
            out.result,
            Err(ReassemblyError::LostCells {
                lost: 1,
                received: 4
            })
        );
        assert_eq!(feed(&mut r, &cells)[0].result, Ok(vec![3u8; 200]));
    }

    #[test]
    fn test_oam_cells_ignored() {
        let oam = CellHeader {
            pti: Pti::OAM_END_TO_END,
            ..hdr()
        };
        let mut r = Reassembler::new();
        assert_eq!(r.push(&oam, &[0u8; PAYLOAD_LEN]), None);
        assert_eq!(r.pending_cells(Vc { vpi: 1, vci: 42 }), 0);
    }

    #[test]
    fn test_too_many_vcs_refuses_one_more() {
        let two_cells =
            |vci: u16| segment(&CellHeader::uni(0, vci, false), &[vci as u8; 60]).unwrap();
        let (a, b, c) = (two_cells(1), two_cells(2), two_cells(3));
        let mut r = Reassembler::with_max_open_vcs(2);
        assert_eq!(feed(&mut r, &[a[0], b[0]]), vec![]);
        assert_eq!(r.open_vcs(), 2);
        let refused = Reassembled {
            vc: Vc { vpi: 0, vci: 3 },
            result: Err(ReassemblyError::TooManyVcs { max: 2 }),
        };
        assert_eq!(feed(&mut r, &[c[0]]), vec![refused.clone()]);
        assert_eq!(
            r.note_lost(Vc { vpi: 0, vci: 3 }, false),
            Some(refused.clone())
        );
        assert_eq!(r.open_vcs(), 2);
        // A single-cell PDU needs no context: it passes even with the table full.
        let one = segment(&CellHeader::uni(0, 4, false), &[4u8; 40]).unwrap();
        assert_eq!(feed(&mut r, &one)[0].result, Ok(vec![4u8; 40]));
        // VC 1's PDU ends and frees its context; VC 3's last cell then arrives
        // alone: a PDU that lost its first cell.
        assert_eq!(feed(&mut r, &[a[1]])[0].result, Ok(vec![1u8; 60]));
        assert_eq!(r.open_vcs(), 1);
        let out = feed(&mut r, &[c[1]]);
        assert!(
            matches!(
                out[0].result,
                Err(ReassemblyError::BadLength {
                    length: 60,
                    cells: 1
                })
            ),
            "{out:?}"
        );
        // Room again: VC 3's next PDU reassembles.
        assert_eq!(feed(&mut r, &c)[0].result, Ok(vec![3u8; 60]));
        assert_eq!(feed(&mut r, &[b[1]])[0].result, Ok(vec![2u8; 60]));
        assert_eq!(r.open_vcs(), 0);
        assert_eq!(Reassembler::new().max_open_vcs(), DEFAULT_MAX_OPEN_VCS);
        assert_eq!(
            ReassemblyError::TooManyVcs { max: 2 }.to_string(),
            "cell would open a PDU on one VC more than the 2 the reassembler keeps under way \
             at once; dropped"
        );
    }

    #[test]
    fn test_discarding_after_oversize_frees_the_context() {
        let h = CellHeader::uni(0, 9, false);
        let mut r = Reassembler::with_max_open_vcs(1);
        let middle = h.cell(&[0u8; PAYLOAD_LEN]).unwrap();
        let out = feed(&mut r, &vec![middle; MAX_CELLS]);
        assert_eq!(
            out[0].result,
            Err(ReassemblyError::Oversize { cells: MAX_CELLS })
        );
        assert_eq!(r.open_vcs(), 1, "discarding up to the next end-of-PDU cell");
        let end = CellHeader {
            pti: Pti::user_data(false, true),
            ..h
        };
        assert_eq!(
            feed(&mut r, &[end.cell(&[0u8; PAYLOAD_LEN]).unwrap()]),
            vec![]
        );
        assert_eq!(r.open_vcs(), 0);
        assert_eq!(r.pending().count(), 0);
    }

    #[test]
    fn test_error_messages() {
        let e = ReassemblyError::BadLength {
            length: 200,
            cells: 4,
        };
        assert_eq!(
            e.to_string(),
            "wrong AAL5 length: trailer says 200 bytes, but 4 cells carry 137..=184"
        );
        assert_eq!(
            Aal5Error::PayloadSize { len: 0 }.to_string(),
            "AAL5 payload of 0 bytes: allowed 1..=65535"
        );
    }

    proptest! {
        #[test]
        fn pdu_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(p) = CpcsPdu::new_checked(&bytes[..]) {
                let _ = (p.payload(), p.uu(), p.cpi());
            }
            let v = CpcsPdu::new_unchecked(&bytes[..]);
            let _ = v.check_len();
        }

        #[test]
        fn pdu_roundtrip(payload in proptest::collection::vec(any::<u8>(), 1..3000), uu: u8) {
            let pdu = build_pdu(&payload, uu, 0).unwrap();
            prop_assert_eq!(pdu.len(), pdu_len(payload.len()));
            prop_assert_eq!(pdu.len() % 48, 0);
            let crc = u32::from_be_bytes(pdu[pdu.len() - 4..].try_into().unwrap());
            prop_assert_eq!(crc, crc32_bitwise(&pdu[..pdu.len() - 4]));
            let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
            prop_assert_eq!(view.payload(), &payload[..]);
            prop_assert_eq!(view.uu(), uu);
        }

        #[test]
        fn segment_reassemble_roundtrip(
            payload in proptest::collection::vec(any::<u8>(), 1..2000),
            vpi in 0u16..256, vci: u16, clp: bool,
        ) {
            let cells = segment(&CellHeader::uni(vpi, vci, clp), &payload).unwrap();
            prop_assert_eq!(cells.len(), cells_for(payload.len()));
            let mut r = Reassembler::new();
            let out = feed(&mut r, &cells);
            prop_assert_eq!(out.len(), 1);
            prop_assert_eq!(out[0].vc, Vc { vpi, vci });
            prop_assert_eq!(&out[0].result, &Ok(payload));
        }

        #[test]
        fn reassembler_fed_random_cells_never_panics(
            cells in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 0..60),
            fixed_hec: bool,
        ) {
            let mut r = Reassembler::new();
            for mut c in cells {
                if fixed_hec && c.len() == CELL_LEN {
                    Cell::new_unchecked(&mut c[..]).fill_hec();
                    // Keep to a few VCs so PDUs actually complete.
                    c[1] &= 0xf0;
                    c[2] = 0;
                    Cell::new_unchecked(&mut c[..]).fill_hec();
                }
                let _ = r.push_cell(&c, HeaderFormat::Uni);
                let _ = r.note_lost(Vc::default(), c.first() == Some(&0));
            }
            let _ = r.pending().count();
        }

        #[test]
        fn reassembler_keeps_at_most_max_open_vcs(
            cells in proptest::collection::vec(
                (
                    // Random VPI/VCI, or one of a few VCs whose PDUs do complete.
                    prop_oneof![(0u16..256, any::<u16>()), (0u16..2, 0u16..4)],
                    any::<bool>(),
                    any::<u8>(),
                    0u8..8,
                ),
                0..400,
            ),
            max in 1usize..12,
        ) {
            let mut r = Reassembler::with_max_open_vcs(max);
            for ((vpi, vci), end, fill, lost) in cells {
                let vc = Vc { vpi, vci };
                // (No PDU here reaches oversize: every context is a pending one.)
                let had_context = r.pending().any(|(v, _)| v == vc);
                let open = r.open_vcs();
                let out = if lost == 0 {
                    r.note_lost(vc, end)
                } else {
                    let h = CellHeader { pti: Pti::user_data(false, end), ..CellHeader::uni(vpi, vci, false) };
                    let rx = r.push_cell(&h.cell(&[fill; PAYLOAD_LEN]).unwrap(), HeaderFormat::Uni).unwrap();
                    prop_assert_eq!(rx.header.vci, vci);
                    rx.pdu
                };
                prop_assert!(r.open_vcs() <= max, "{} open, max {}", r.open_vcs(), max);
                // Refused exactly the cells that needed one context more than allowed.
                let refused = matches!(
                    out,
                    Some(Reassembled { vc: v, result: Err(ReassemblyError::TooManyVcs { max: m }) })
                        if v == vc && m == max
                );
                prop_assert_eq!(refused, !end && !had_context && open == max);
                if refused {
                    prop_assert_eq!(r.open_vcs(), open);
                }
            }
        }
    }
}
