//! The ATM cell: 53 bytes, a 5-byte header and 48 bytes of payload (ITU-T I.361),
//! with header error control per ITU-T I.432.
//!
//! ```text
//!  UNI header                         NNI header
//!  +------+------+                    +-------------+
//!  | GFC4 | VPI4 |  byte 0            |    VPI 8    |  byte 0
//!  | VPI4 | VCI4 |  byte 1            | VPI4 | VCI4 |  byte 1
//!  |    VCI 8    |  byte 2            |    VCI 8    |  byte 2
//!  | VCI4 |PTI3|C|  byte 3            | VCI4 |PTI3|C|  byte 3
//!  |   HEC 8     |  byte 4            |   HEC 8     |  byte 4
//! ```
//!
//! Two levels, as in smoltcp: [`Cell`] is a zero-copy view over any byte buffer
//! (`new_checked` for untrusted bytes), [`CellHeader`] the checked representation
//! with `parse`/`emit`.

use core::fmt;
use crc::{Crc, CRC_8_I_432_1};

/// Bytes in a cell.
pub const CELL_LEN: usize = 53;
/// Bytes in a cell header (including the HEC).
pub const HEADER_LEN: usize = 5;
/// Bytes of payload in a cell.
pub const PAYLOAD_LEN: usize = 48;

mod field {
    use core::ops::Range;
    pub const HEADER: Range<usize> = 0..5;
    /// The four bytes the HEC covers.
    pub const COVERED: Range<usize> = 0..4;
    pub const HEC: usize = 4;
    pub const PAYLOAD: Range<usize> = 5..53;
}

/// The HEC is CRC-8/I-432-1 of the catalogue: generator x^8+x^2+x+1 (0x07), initial
/// value 0, not reflected, result XORed with the coset 0x55 (I.432 §4.3.2.2: the coset
/// keeps an all-zero header from having an all-zero HEC, which helps cell delineation).
const HEC_CRC: Crc<u8> = Crc::<u8>::new(&CRC_8_I_432_1);

/// The HEC of the first four header bytes (what a transmitter puts in byte 4).
pub const fn hec(covered: &[u8; 4]) -> u8 {
    HEC_CRC.checksum(covered)
}

/// Syndrome of a received 5-byte header: 0 when the HEC matches. The CRC is linear, so
/// the coset and the data cancel and the syndrome depends on the error pattern alone.
pub const fn syndrome(header: &[u8; HEADER_LEN]) -> u8 {
    hec(&[header[0], header[1], header[2], header[3]]) ^ header[4]
}

/// Bits of the header, numbered 0 (MSB of byte 0) to 39 (LSB of the HEC byte).
const HEADER_BITS: usize = 8 * HEADER_LEN;

/// The syndrome of a single-bit error in each of the 40 header bit positions. All 40 are
/// distinct and of odd weight (the generator has the factor x+1), while every double-bit
/// error gives an even-weight non-zero syndrome: so single errors are located exactly
/// and double errors are never mistaken for them (see the exhaustive tests).
const SINGLE_BIT_SYNDROMES: [u8; HEADER_BITS] = {
    let mut table = [0u8; HEADER_BITS];
    let mut bit = 0;
    while bit < HEADER_BITS {
        let mut header = [0u8; HEADER_LEN];
        header[4] = hec(&[0, 0, 0, 0]);
        header[bit / 8] ^= 0x80 >> (bit % 8);
        table[bit] = syndrome(&header);
        bit += 1;
    }
    table
};

/// What header error control found in a received header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HecStatus {
    /// The HEC matched.
    Valid,
    /// A single-bit error at this bit position (0 = MSB of byte 0, 32..39 = the HEC
    /// byte itself) was corrected in place.
    Corrected { bit: u8 },
}

/// A header error that cannot be corrected: the receiver discards the cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HecError {
    /// The syndrome is not that of any single-bit error: a multi-bit error.
    Uncorrectable { syndrome: u8 },
    /// The receiver is in I.432 detection mode (the previous cell had a header
    /// error), where every errored header is discarded, even a single-bit one.
    DetectionMode { syndrome: u8 },
    /// Fewer than 5 bytes.
    Truncated { len: usize },
}

impl fmt::Display for HecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HecError::Uncorrectable { syndrome } => write!(
                f,
                "uncorrectable header error (HEC syndrome {syndrome:#04x}, more than one bit in error): cell discarded"
            ),
            HecError::DetectionMode { syndrome } => write!(
                f,
                "header error (HEC syndrome {syndrome:#04x}) in detection mode: cell discarded"
            ),
            HecError::Truncated { len } => {
                write!(f, "cell header needs {HEADER_LEN} bytes, got {len}")
            }
        }
    }
}

impl std::error::Error for HecError {}

/// Check a received header and correct a single-bit error in place (one cell on its
/// own, i.e. always in I.432 correction mode). Multi-bit errors are reported, and the
/// header is left untouched.
pub fn correct_header(header: &mut [u8]) -> Result<HecStatus, HecError> {
    let Some(h) = header.get_mut(field::HEADER) else {
        return Err(HecError::Truncated { len: header.len() });
    };
    let s = syndrome(&[h[0], h[1], h[2], h[3], h[4]]);
    if s == 0 {
        return Ok(HecStatus::Valid);
    }
    match SINGLE_BIT_SYNDROMES.iter().position(|&x| x == s) {
        Some(bit) => {
            h[bit / 8] ^= 0x80 >> (bit % 8);
            Ok(HecStatus::Corrected { bit: bit as u8 })
        }
        None => Err(HecError::Uncorrectable { syndrome: s }),
    }
}

/// The I.432 receiver's two-state HEC machine. In correction mode a single-bit error
/// is corrected and the receiver moves to detection mode; in detection mode every
/// errored header is discarded; a valid header returns it to correction mode. (Error
/// bursts tend to hit consecutive cells, and correcting inside a burst risks
/// mis-delivery.)
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HecReceiver {
    detection_mode: bool,
}

impl HecReceiver {
    pub const fn new() -> HecReceiver {
        HecReceiver {
            detection_mode: false,
        }
    }

    /// True while in detection mode.
    pub const fn in_detection_mode(&self) -> bool {
        self.detection_mode
    }

    /// Check (and in correction mode, correct) one received header in place.
    pub fn receive(&mut self, header: &mut [u8]) -> Result<HecStatus, HecError> {
        if self.detection_mode {
            let Some(h) = header.get(field::HEADER) else {
                return Err(HecError::Truncated { len: header.len() });
            };
            let s = syndrome(&[h[0], h[1], h[2], h[3], h[4]]);
            if s == 0 {
                self.detection_mode = false;
                return Ok(HecStatus::Valid);
            }
            return Err(HecError::DetectionMode { syndrome: s });
        }
        let status = correct_header(header);
        // Any error, corrected or not, switches to detection mode.
        self.detection_mode = !matches!(
            status,
            Ok(HecStatus::Valid) | Err(HecError::Truncated { .. })
        );
        status
    }
}

/// Which header layout: at the user-network interface (with GFC, 8-bit VPI) or between
/// network nodes (12-bit VPI).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HeaderFormat {
    #[default]
    Uni,
    Nni,
}

impl HeaderFormat {
    /// The largest VPI this format can carry.
    pub const fn max_vpi(self) -> u16 {
        match self {
            HeaderFormat::Uni => 0xff,
            HeaderFormat::Nni => 0xfff,
        }
    }
}

/// The 3-bit payload type indicator (I.361 Table 2).
///
/// `0xx` user data: bit 1 = EFCI (congestion experienced), bit 0 = ATM-user-to-ATM-user
/// indication (AAL5 uses it to mark the last cell of a CPCS-PDU).
/// `100`/`101` segment / end-to-end OAM F5 cells, `110` resource management, `111` reserved.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pti(u8);

impl Pti {
    pub const AUU: u8 = 0b001;
    pub const CONGESTION: u8 = 0b010;
    pub const OAM_SEGMENT: Pti = Pti(0b100);
    pub const OAM_END_TO_END: Pti = Pti(0b101);
    pub const RESOURCE_MANAGEMENT: Pti = Pti(0b110);

    /// From the 3-bit field value (0..=7).
    pub const fn new(bits: u8) -> Result<Pti, CellError> {
        if bits > 7 {
            return Err(CellError::PtiOutOfRange { pti: bits });
        }
        Ok(Pti(bits))
    }
    /// A user-data PTI with the given congestion and AUU bits.
    pub const fn user_data(congestion: bool, auu: bool) -> Pti {
        Pti(((congestion as u8) << 1) | auu as u8)
    }
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// User data (as opposed to OAM or resource management).
    pub const fn is_user_data(self) -> bool {
        self.0 & 0b100 == 0
    }
    /// The ATM-user-to-ATM-user bit of a user-data cell: in AAL5, the end of a PDU.
    pub const fn auu(self) -> bool {
        self.is_user_data() && self.0 & Self::AUU != 0
    }
    /// The explicit forward congestion indication of a user-data cell.
    pub const fn congestion(self) -> bool {
        self.is_user_data() && self.0 & Self::CONGESTION != 0
    }
    /// An F5 OAM cell (segment or end-to-end).
    pub const fn is_oam(self) -> bool {
        self.0 == 0b100 || self.0 == 0b101
    }
    /// The same PTI with the AUU bit set or cleared (user data only).
    pub const fn with_auu(self, auu: bool) -> Pti {
        if !self.is_user_data() {
            return self;
        }
        Pti((self.0 & !Self::AUU) | auu as u8)
    }
}

/// A bad cell or header value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CellError {
    /// Not 53 bytes.
    BadLength {
        len: usize,
    },
    /// The HEC does not match the header (use [`correct_header`] first to correct).
    BadHec {
        expected: u8,
        found: u8,
    },
    GfcOutOfRange {
        gfc: u8,
    },
    /// GFC is not part of the NNI header.
    GfcAtNni {
        gfc: u8,
    },
    VpiOutOfRange {
        vpi: u16,
        max: u16,
    },
    PtiOutOfRange {
        pti: u8,
    },
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CellError::BadLength { len } => {
                write!(f, "a cell is {CELL_LEN} bytes, got {len}")
            }
            CellError::BadHec { expected, found } => {
                write!(f, "bad HEC {found:#04x}, expected {expected:#04x}")
            }
            CellError::GfcOutOfRange { gfc } => write!(f, "GFC {gfc} out of range 0..=15"),
            CellError::GfcAtNni { gfc } => {
                write!(
                    f,
                    "GFC {gfc} given for an NNI header, which has no GFC (must be 0)"
                )
            }
            CellError::VpiOutOfRange { vpi, max } => write!(f, "VPI {vpi} out of range 0..={max}"),
            CellError::PtiOutOfRange { pti } => write!(f, "PTI {pti} out of range 0..=7"),
        }
    }
}

impl std::error::Error for CellError {}

/// A zero-copy view of one cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cell<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Cell<T> {
    /// Wrap a buffer without checking it (accessors may panic if it is short).
    pub const fn new_unchecked(buffer: T) -> Cell<T> {
        Cell { buffer }
    }

    /// Wrap a buffer after checking it is exactly one cell long.
    pub fn new_checked(buffer: T) -> Result<Cell<T>, CellError> {
        let cell = Cell::new_unchecked(buffer);
        cell.check_len()?;
        Ok(cell)
    }

    pub fn check_len(&self) -> Result<(), CellError> {
        let len = self.buffer.as_ref().len();
        if len != CELL_LEN {
            return Err(CellError::BadLength { len });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The 5 header bytes.
    pub fn header(&self) -> [u8; HEADER_LEN] {
        let b = &self.buffer.as_ref()[field::HEADER];
        [b[0], b[1], b[2], b[3], b[4]]
    }
    /// The GFC (meaningful in UNI format only).
    pub fn gfc(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }
    pub fn vpi(&self, format: HeaderFormat) -> u16 {
        let b = self.buffer.as_ref();
        match format {
            HeaderFormat::Uni => (u16::from(b[0] & 0x0f) << 4) | u16::from(b[1] >> 4),
            HeaderFormat::Nni => (u16::from(b[0]) << 4) | u16::from(b[1] >> 4),
        }
    }
    pub fn vci(&self) -> u16 {
        let b = self.buffer.as_ref();
        (u16::from(b[1] & 0x0f) << 12) | (u16::from(b[2]) << 4) | u16::from(b[3] >> 4)
    }
    pub fn pti(&self) -> Pti {
        Pti((self.buffer.as_ref()[3] >> 1) & 0b111)
    }
    pub fn clp(&self) -> bool {
        self.buffer.as_ref()[3] & 1 != 0
    }
    pub fn hec(&self) -> u8 {
        self.buffer.as_ref()[field::HEC]
    }
    /// The HEC the header should carry.
    pub fn expected_hec(&self) -> u8 {
        let b = &self.buffer.as_ref()[field::COVERED];
        hec(&[b[0], b[1], b[2], b[3]])
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Cell<T> {
    /// The whole header, for in-place HEC correction.
    pub fn header_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::HEADER]
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
    /// Recompute and store the HEC over the first four header bytes.
    pub fn fill_hec(&mut self) {
        let h = self.expected_hec();
        self.buffer.as_mut()[field::HEC] = h;
    }
}

/// The checked content of a cell header (the HEC is implied).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CellHeader {
    pub format: HeaderFormat,
    /// Generic flow control (UNI only; always 0 at the NNI).
    pub gfc: u8,
    pub vpi: u16,
    pub vci: u16,
    pub pti: Pti,
    /// Cell loss priority: true = low priority (may be discarded first).
    pub clp: bool,
}

impl CellHeader {
    /// A user-data UNI header.
    pub const fn uni(vpi: u16, vci: u16, clp: bool) -> CellHeader {
        CellHeader {
            format: HeaderFormat::Uni,
            gfc: 0,
            vpi,
            vci,
            pti: Pti::user_data(false, false),
            clp,
        }
    }

    /// Check that every field fits its width in this header format.
    pub fn check(&self) -> Result<(), CellError> {
        match self.format {
            HeaderFormat::Uni if self.gfc > 0x0f => {
                return Err(CellError::GfcOutOfRange { gfc: self.gfc })
            }
            HeaderFormat::Nni if self.gfc != 0 => {
                return Err(CellError::GfcAtNni { gfc: self.gfc })
            }
            _ => {}
        }
        let max = self.format.max_vpi();
        if self.vpi > max {
            return Err(CellError::VpiOutOfRange { vpi: self.vpi, max });
        }
        Pti::new(self.pti.bits())?;
        Ok(())
    }

    /// Parse the header of a cell, which must carry a valid HEC (correct it first with
    /// [`correct_header`] if the receiver corrects).
    pub fn parse<T: AsRef<[u8]>>(
        cell: &Cell<T>,
        format: HeaderFormat,
    ) -> Result<CellHeader, CellError> {
        cell.check_len()?;
        let (expected, found) = (cell.expected_hec(), cell.hec());
        if expected != found {
            return Err(CellError::BadHec { expected, found });
        }
        Ok(CellHeader {
            format,
            gfc: match format {
                HeaderFormat::Uni => cell.gfc(),
                HeaderFormat::Nni => 0,
            },
            vpi: cell.vpi(format),
            vci: cell.vci(),
            pti: cell.pti(),
            clp: cell.clp(),
        })
    }

    /// Write the 5 header bytes, HEC included, into a cell buffer (payload untouched).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, cell: &mut Cell<T>) -> Result<(), CellError> {
        self.check()?;
        cell.check_len()?;
        let h = self.to_bytes();
        cell.header_mut().copy_from_slice(&h);
        Ok(())
    }

    /// The 5 header bytes (fields assumed checked: excess bits are masked off).
    fn to_bytes(self) -> [u8; HEADER_LEN] {
        let first = match self.format {
            HeaderFormat::Uni => (self.gfc << 4) | ((self.vpi >> 4) as u8 & 0x0f),
            HeaderFormat::Nni => (self.vpi >> 4) as u8,
        };
        let b1 = (((self.vpi & 0x0f) as u8) << 4) | (self.vci >> 12) as u8;
        let b2 = (self.vci >> 4) as u8;
        let b3 =
            (((self.vci & 0x0f) as u8) << 4) | ((self.pti.bits() & 0b111) << 1) | self.clp as u8;
        [first, b1, b2, b3, hec(&[first, b1, b2, b3])]
    }

    /// A whole cell: this header and a 48-byte payload.
    pub fn cell(&self, payload: &[u8; PAYLOAD_LEN]) -> Result<[u8; CELL_LEN], CellError> {
        self.check()?;
        let mut out = [0u8; CELL_LEN];
        out[field::HEADER].copy_from_slice(&self.to_bytes());
        out[field::PAYLOAD].copy_from_slice(payload);
        Ok(out)
    }

    /// Bytes this header occupies.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // UNI: GFC 0, VPI 1, VCI 42 (0x002a), PTI 001 (AUU), CLP 0.
    // byte0 = 0000 0000, byte1 = 0001 0000, byte2 = 0000 0010, byte3 = 1010 0010
    static UNI_HEADER: [u8; 5] = [0x00, 0x10, 0x02, 0xa2, 0xba];

    /// An independent bitwise CRC-8 (x^8+x^2+x+1, MSB first) XOR 0x55.
    fn hec_bitwise(bytes: &[u8]) -> u8 {
        let mut crc = 0u8;
        for &b in bytes {
            crc ^= b;
            for _ in 0..8 {
                crc = if crc & 0x80 != 0 {
                    (crc << 1) ^ 0x07
                } else {
                    crc << 1
                };
            }
        }
        crc ^ 0x55
    }

    #[test]
    fn test_catalogue_is_i432() {
        // The catalogue entry is exactly the I.432 HEC: poly 0x07, init 0, xorout 0x55.
        assert_eq!(CRC_8_I_432_1.poly, 0x07);
        assert_eq!(CRC_8_I_432_1.init, 0x00);
        assert_eq!(CRC_8_I_432_1.xorout, 0x55);
        assert_eq!((CRC_8_I_432_1.refin, CRC_8_I_432_1.refout), (false, false));
        assert_eq!(hec(b"1234"), hec_bitwise(b"1234"));
    }

    #[test]
    fn test_hec_known_headers() {
        // An idle cell (I.432: header 00 00 00 01) carries HEC 0x52; an all-zero
        // header carries the coset 0x55.
        assert_eq!(hec(&[0, 0, 0, 1]), 0x52);
        assert_eq!(hec(&[0, 0, 0, 0]), 0x55);
        assert_eq!(hec(&[0x00, 0x10, 0x02, 0xa2]), UNI_HEADER[4]);
        assert_eq!(hec_bitwise(&UNI_HEADER[..4]), UNI_HEADER[4]);
    }

    fn uni_cell() -> [u8; CELL_LEN] {
        let mut c = [0u8; CELL_LEN];
        c[..5].copy_from_slice(&UNI_HEADER);
        for (i, b) in c[5..].iter_mut().enumerate() {
            *b = i as u8;
        }
        c
    }

    #[test]
    fn test_deconstruct() {
        let bytes = uni_cell();
        let cell = Cell::new_checked(&bytes[..]).unwrap();
        assert_eq!(cell.gfc(), 0);
        assert_eq!(cell.vpi(HeaderFormat::Uni), 1);
        assert_eq!(cell.vci(), 42);
        assert_eq!(cell.pti().bits(), 1);
        assert!(cell.pti().auu());
        assert!(!cell.clp());
        assert_eq!(cell.hec(), 0xba);
        assert_eq!(cell.payload()[47], 47);
    }

    #[test]
    fn test_construct() {
        let h = CellHeader {
            pti: Pti::user_data(false, true),
            ..CellHeader::uni(1, 42, false)
        };
        let mut payload = [0u8; 48];
        for (i, b) in payload.iter_mut().enumerate() {
            *b = i as u8;
        }
        assert_eq!(h.cell(&payload).unwrap(), uni_cell());
    }

    #[test]
    fn test_parse_emit_nni() {
        // NNI: VPI 0xabc, VCI 0x1234, PTI 0, CLP 1.
        let h = CellHeader {
            format: HeaderFormat::Nni,
            gfc: 0,
            vpi: 0xabc,
            vci: 0x1234,
            pti: Pti::default(),
            clp: true,
        };
        let mut buf = [0u8; CELL_LEN];
        h.emit(&mut Cell::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(&buf[..4], &[0xab, 0xc1, 0x23, 0x41]);
        assert_eq!(buf[4], hec_bitwise(&buf[..4]));
        assert_eq!(
            CellHeader::parse(&Cell::new_unchecked(&buf[..]), HeaderFormat::Nni),
            Ok(h)
        );
        // The same bytes read as UNI put the top VPI nibble into the GFC.
        let uni = CellHeader::parse(&Cell::new_unchecked(&buf[..]), HeaderFormat::Uni).unwrap();
        assert_eq!((uni.gfc, uni.vpi), (0xa, 0xbc));
    }

    #[test]
    fn test_impossible_len() {
        assert_eq!(
            Cell::new_checked(&[0u8; 52][..]),
            Err(CellError::BadLength { len: 52 })
        );
        assert_eq!(
            Cell::new_checked(&[0u8; 54][..]),
            Err(CellError::BadLength { len: 54 })
        );
        let mut short = [0u8; 4];
        assert_eq!(
            correct_header(&mut short),
            Err(HecError::Truncated { len: 4 })
        );
    }

    #[test]
    fn test_bad_values() {
        assert_eq!(
            CellHeader::uni(256, 0, false).check(),
            Err(CellError::VpiOutOfRange { vpi: 256, max: 255 })
        );
        let nni = CellHeader {
            format: HeaderFormat::Nni,
            vpi: 4096,
            ..CellHeader::default()
        };
        assert_eq!(
            nni.check(),
            Err(CellError::VpiOutOfRange {
                vpi: 4096,
                max: 4095
            })
        );
        assert_eq!(Pti::new(8), Err(CellError::PtiOutOfRange { pti: 8 }));
        let mut bytes = uni_cell();
        bytes[4] ^= 0xff;
        assert_eq!(
            CellHeader::parse(&Cell::new_unchecked(&bytes[..]), HeaderFormat::Uni),
            Err(CellError::BadHec {
                expected: 0xba,
                found: 0x45
            })
        );
    }

    #[test]
    fn test_pti_helpers() {
        assert!(Pti::user_data(true, true).congestion());
        assert!(Pti::user_data(true, true).auu());
        assert!(!Pti::OAM_SEGMENT.auu() && Pti::OAM_SEGMENT.is_oam());
        assert!(Pti::OAM_END_TO_END.is_oam() && !Pti::RESOURCE_MANAGEMENT.is_oam());
        assert_eq!(Pti::user_data(true, false).with_auu(true).bits(), 0b011);
        assert_eq!(Pti::OAM_SEGMENT.with_auu(true), Pti::OAM_SEGMENT);
    }

    #[test]
    fn every_single_bit_error_is_corrected() {
        // All 40 positions, HEC byte included, on a fixed header.
        for bit in 0..40 {
            let mut h = UNI_HEADER;
            h[bit / 8] ^= 0x80 >> (bit % 8);
            assert_eq!(
                correct_header(&mut h),
                Ok(HecStatus::Corrected { bit: bit as u8 })
            );
            assert_eq!(h, UNI_HEADER);
        }
    }

    #[test]
    fn every_double_bit_error_is_detected_never_miscorrected() {
        // Exhaustive over the 780 position pairs: with the factor (x+1) in the
        // generator, two-bit errors leave an even-weight non-zero syndrome, never one
        // of the 40 single-bit syndromes. (Three or more bits CAN be mis-corrected:
        // see `some_triple_errors_are_miscorrected`.)
        for a in 0..40 {
            for b in (a + 1)..40 {
                let mut h = UNI_HEADER;
                h[a / 8] ^= 0x80 >> (a % 8);
                h[b / 8] ^= 0x80 >> (b % 8);
                let before = h;
                assert!(
                    matches!(correct_header(&mut h), Err(HecError::Uncorrectable { .. })),
                    "bits {a},{b}"
                );
                assert_eq!(h, before, "an uncorrectable header is left untouched");
            }
        }
    }

    #[test]
    fn some_triple_errors_are_miscorrected() {
        // Honest limit of a distance-4 code: some 3-bit errors look like 1-bit ones.
        let mut miscorrected = 0;
        for a in 0..40 {
            for b in (a + 1)..40 {
                for c in (b + 1)..40 {
                    let mut h = UNI_HEADER;
                    for x in [a, b, c] {
                        h[x / 8] ^= 0x80 >> (x % 8);
                    }
                    if correct_header(&mut h).is_ok() {
                        miscorrected += 1;
                        assert_ne!(h, UNI_HEADER);
                    }
                }
            }
        }
        assert!(miscorrected > 0);
    }

    #[test]
    fn receiver_modes() {
        let mut rx = HecReceiver::new();
        let one_bit = |bit: usize| {
            let mut h = UNI_HEADER;
            h[bit / 8] ^= 0x80 >> (bit % 8);
            h
        };
        let mut h = one_bit(3);
        assert_eq!(rx.receive(&mut h), Ok(HecStatus::Corrected { bit: 3 }));
        assert!(rx.in_detection_mode());
        // A second errored header in a row is discarded even though correctable.
        let mut h = one_bit(7);
        assert!(matches!(
            rx.receive(&mut h),
            Err(HecError::DetectionMode { .. })
        ));
        let mut h = UNI_HEADER;
        assert_eq!(rx.receive(&mut h), Ok(HecStatus::Valid));
        assert!(!rx.in_detection_mode());
        let mut h = one_bit(39);
        assert_eq!(rx.receive(&mut h), Ok(HecStatus::Corrected { bit: 39 }));
    }

    fn arb_header() -> impl Strategy<Value = CellHeader> {
        (
            any::<bool>(),
            0u8..16,
            0u16..4096,
            any::<u16>(),
            0u8..8,
            any::<bool>(),
        )
            .prop_map(|(nni, gfc, vpi, vci, pti, clp)| {
                if nni {
                    CellHeader {
                        format: HeaderFormat::Nni,
                        gfc: 0,
                        vpi,
                        vci,
                        pti: Pti(pti),
                        clp,
                    }
                } else {
                    CellHeader {
                        format: HeaderFormat::Uni,
                        gfc,
                        vpi: vpi & 0xff,
                        vci,
                        pti: Pti(pti),
                        clp,
                    }
                }
            })
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(cell) = Cell::new_checked(&bytes[..]) {
                let _ = CellHeader::parse(&cell, HeaderFormat::Uni);
                let _ = CellHeader::parse(&cell, HeaderFormat::Nni);
                let _ = (cell.gfc(), cell.vci(), cell.pti(), cell.payload().len());
            }
            let mut b = bytes.clone();
            let _ = correct_header(&mut b);
            let mut rx = HecReceiver::new();
            let _ = rx.receive(&mut b);
            let _ = rx.receive(&mut b);
        }

        #[test]
        fn header_roundtrip(h in arb_header(), payload in any::<[u8; 32]>()) {
            let mut p = [0u8; PAYLOAD_LEN];
            p[..32].copy_from_slice(&payload);
            let cell = h.cell(&p).unwrap();
            let view = Cell::new_checked(&cell[..]).unwrap();
            prop_assert_eq!(CellHeader::parse(&view, h.format), Ok(h));
            prop_assert_eq!(view.payload(), &p[..]);
            prop_assert_eq!(cell[4], hec_bitwise(&cell[..4]));
        }

        #[test]
        fn single_bit_errors_always_corrected(h in arb_header(), bit in 0usize..40) {
            let cell = h.cell(&[0u8; PAYLOAD_LEN]).unwrap();
            let mut hdr = [cell[0], cell[1], cell[2], cell[3], cell[4]];
            hdr[bit / 8] ^= 0x80 >> (bit % 8);
            prop_assert_eq!(correct_header(&mut hdr), Ok(HecStatus::Corrected { bit: bit as u8 }));
            prop_assert_eq!(&hdr[..], &cell[..5]);
        }

        #[test]
        fn double_bit_errors_never_accepted(h in arb_header(), a in 0usize..40, b in 0usize..40) {
            prop_assume!(a != b);
            let cell = h.cell(&[0u8; PAYLOAD_LEN]).unwrap();
            let mut hdr = [cell[0], cell[1], cell[2], cell[3], cell[4]];
            hdr[a / 8] ^= 0x80 >> (a % 8);
            hdr[b / 8] ^= 0x80 >> (b % 8);
            prop_assert!(
                matches!(correct_header(&mut hdr), Err(HecError::Uncorrectable { .. })),
                "double-bit error accepted"
            );
        }
    }
}
