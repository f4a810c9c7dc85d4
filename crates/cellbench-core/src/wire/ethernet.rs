//! Ethernet II frames (RFC 894 framing on IEEE 802.3 MACs): the frame codec and
//! the arithmetic of what one frame costs on the medium.
//!
//! ```text
//!  on the medium:
//!  +----------+-----+-----------+-----------+------+---------------+-----+ - - - +
//!  | preamble | SFD | dst addr  | src addr  | type | data (+ pad)  | FCS |  IFG  |
//!  |    7     |  1  |     6     |     6     |  2   |   46..=1500   |  4  |  12   |
//!  +----------+-----+-----------+-----------+------+---------------+-----+ - - - +
//!                   \_______________ the MAC frame: 64..=1518 ______________/
//! ```
//! [`Frame`] views the MAC frame, destination address through FCS (what a
//! capture with FCS holds); preamble, SFD and the inter-frame gap are medium time
//! only ([`wire_len`]). A datagram shorter than 46 bytes is padded with zeros; the
//! receiver cannot tell pad from data at this layer (IP's total length does), so
//! [`Frame::payload`] is data and pad together.
//!
//! Two levels, as in smoltcp: [`Frame`] is a zero-copy view over any byte buffer
//! (`new_checked` for untrusted bytes), [`Repr`] the checked header with
//! `parse`/`emit`; [`build_frame`] makes a whole frame, pad and FCS included.

use core::fmt;
use crc::{Crc, Table, CRC_32_ISO_HDLC};

/// Preamble (7 bytes) and start frame delimiter (1 byte) before every frame
/// (IEEE 802.3 §4.2.5 and §3.2.1–3.2.2).
pub const PREAMBLE_SFD_LEN: usize = 8;
/// Destination address, source address, type: 6 + 6 + 2 bytes (RFC 894; IEEE 802.3 §3.2.3–3.2.6).
pub const HEADER_LEN: usize = 14;
/// The frame check sequence, a CRC-32 (IEEE 802.3 §3.2.9).
pub const FCS_LEN: usize = 4;
/// The shortest MAC frame: minFrameSize = 512 bits (IEEE 802.3 §4.4.2), so that
/// a 10 Mb/s station is still sending when a collision from the far end of a
/// maximum-size network reaches it.
pub const MIN_FRAME_LEN: usize = 64;
/// The shortest data field: "The minimum length of the data field of a packet
/// sent over an Ethernet is 46 octets" (RFC 894); 64 − 14 − 4.
pub const MIN_PAYLOAD: usize = MIN_FRAME_LEN - HEADER_LEN - FCS_LEN;
/// The IP MTU of Ethernet: "The maximum length of the data field of a packet
/// sent over an Ethernet is 1500 octets" (RFC 894; maxUntaggedFrameSize 1518,
/// IEEE 802.3 §4.4.2).
pub const MTU: usize = 1500;
/// The longest (untagged) MAC frame: 14 + 1500 + 4.
pub const MAX_FRAME_LEN: usize = HEADER_LEN + MTU + FCS_LEN;
/// The inter-frame gap: interFrameGap = 96 bits (IEEE 802.3 §4.4.2), the idle
/// time a station leaves after each frame before the next one.
pub const IFG_LEN: usize = 12;
/// Type values below this are an IEEE 802.3 length field, not an Ethernet II type
/// (IEEE 802.3 §3.2.6: 1536 = 0x0600 and above are types).
pub const MIN_ETHERTYPE: u16 = 0x0600;
/// IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// ARP (RFC 826).
pub const ETHERTYPE_ARP: u16 = 0x0806;

mod field {
    use core::ops::{Range, RangeFrom};
    pub const DESTINATION: Range<usize> = 0..6;
    pub const SOURCE: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// Data and pad, up to the FCS (the end is the buffer's length − 4).
    pub const PAYLOAD: RangeFrom<usize> = 14..;
}

/// The FCS is CRC-32/ISO-HDLC of the catalogue: generator 0x04C11DB7, initial value
/// all ones, reflected (bits go LSB first on the medium), final complement
/// (IEEE 802.3 §3.2.9). The same generator as AAL5's CRC-32, which is MSB first
/// (CRC-32/BZIP2, `aal5::crc32`).
// Slice-by-16 tables, as for AAL5: a full frame's FCS in well under a microsecond.
const FCS_CRC: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC);

/// The FCS of `data` (the frame from the destination address to the end of the pad).
/// It goes on the medium least significant byte first: `fcs(..).to_le_bytes()`.
pub fn fcs(data: &[u8]) -> u32 {
    FCS_CRC.checksum(data)
}

/// Bytes of the MAC frame carrying `payload_len` bytes of data: header, data,
/// pad up to 46, FCS. 40 → 64, 1500 → 1518.
pub const fn frame_len(payload_len: usize) -> usize {
    let data = if payload_len < MIN_PAYLOAD {
        MIN_PAYLOAD
    } else {
        payload_len
    };
    HEADER_LEN + data + FCS_LEN
}

/// Pad bytes in the frame carrying `payload_len` bytes (0..=46).
pub const fn pad_len(payload_len: usize) -> usize {
    frame_len(payload_len) - HEADER_LEN - FCS_LEN - payload_len
}

/// Byte times one frame carrying `payload_len` bytes occupies the medium:
/// preamble and SFD, the MAC frame, and the inter-frame gap. 1500 → 1538, 40 → 84.
pub const fn wire_len(payload_len: usize) -> usize {
    PREAMBLE_SFD_LEN + frame_len(payload_len) + IFG_LEN
}

/// Bits on the medium per frame ([`wire_len`] × 8): at 10 Mb/s a full frame
/// takes 1230.4 µs, a minimum one 67.2 µs.
pub const fn wire_bits(payload_len: usize) -> u64 {
    wire_len(payload_len) as u64 * 8
}

/// A 48-bit MAC address.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address(pub [u8; 6]);

impl Address {
    pub const BROADCAST: Address = Address([0xff; 6]);

    /// The individual/group bit (first bit on the medium, LSB of the first byte).
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// Why a frame could not be built or parsed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EthernetError {
    /// A MAC frame outside 64..=1518 bytes.
    FrameSize { len: usize },
    /// Data longer than the 1500-byte MTU.
    PayloadSize { len: usize },
    /// The type field is below 0x0600: an IEEE 802.3 length field (an LLC
    /// frame), not Ethernet II.
    NotEthernetII { ethertype: u16 },
    /// The FCS does not match the frame.
    BadFcs { found: u32, computed: u32 },
}

impl fmt::Display for EthernetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EthernetError::FrameSize { len } => write!(
                f,
                "Ethernet frame of {len} bytes: allowed {MIN_FRAME_LEN}..={MAX_FRAME_LEN} \
                 (destination address through FCS)"
            ),
            EthernetError::PayloadSize { len } => {
                write!(f, "Ethernet payload of {len} bytes: allowed 0..={MTU}")
            }
            EthernetError::NotEthernetII { ethertype } => write!(
                f,
                "Ethernet type field {ethertype:#06x} is an IEEE 802.3 length: \
                 Ethernet II types are {MIN_ETHERTYPE:#06x} and above"
            ),
            EthernetError::BadFcs { found, computed } => {
                write!(
                    f,
                    "Ethernet FCS {found:#010x} in frame, computed {computed:#010x}"
                )
            }
        }
    }
}

impl std::error::Error for EthernetError {}

/// A zero-copy view of one MAC frame, destination address through FCS.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wrap a buffer without checking it (accessors may panic if it is short).
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wrap untrusted bytes after checking the size (not the FCS: see
    /// [`Frame::check_fcs`] and [`Repr::parse`]). Once this succeeds no accessor panics.
    pub fn new_checked(buffer: T) -> Result<Frame<T>, EthernetError> {
        let frame = Frame::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// The frame is 64..=1518 bytes.
    pub fn check_len(&self) -> Result<(), EthernetError> {
        let len = self.buffer.as_ref().len();
        if !(MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&len) {
            return Err(EthernetError::FrameSize { len });
        }
        Ok(())
    }

    pub fn check_fcs(&self) -> Result<(), EthernetError> {
        let (found, computed) = (self.fcs(), self.computed_fcs());
        if found != computed {
            return Err(EthernetError::BadFcs { found, computed });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> Address {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        Address(a)
    }
    pub fn src_addr(&self) -> Address {
        let mut a = [0u8; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        Address(a)
    }
    pub fn ethertype(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        u16::from_be_bytes([b[0], b[1]])
    }
    /// Data and pad: everything between the header and the FCS.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[field::PAYLOAD][..b.len() - HEADER_LEN - FCS_LEN]
    }
    /// The FCS as the frame carries it (least significant byte first).
    pub fn fcs(&self) -> u32 {
        let b = self.buffer.as_ref();
        let n = b.len();
        u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]])
    }
    /// The FCS of everything before the FCS field.
    pub fn computed_fcs(&self) -> u32 {
        let b = self.buffer.as_ref();
        fcs(&b[..b.len() - FCS_LEN])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Data and pad, for writing in place.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.buffer.as_ref().len();
        &mut self.buffer.as_mut()[HEADER_LEN..n - FCS_LEN]
    }
    /// Compute and store the FCS over the rest of the frame.
    pub fn fill_fcs(&mut self) {
        let v = self.computed_fcs();
        let n = self.buffer.as_ref().len();
        self.buffer.as_mut()[n - FCS_LEN..].copy_from_slice(&v.to_le_bytes());
    }
}

/// The checked content of an Ethernet II header (the FCS is implied).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    pub ethertype: u16,
}

impl Repr {
    /// Parse the header of a frame whose size and FCS are right and whose type
    /// field is an Ethernet II type.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Repr, EthernetError> {
        frame.check_len()?;
        frame.check_fcs()?;
        let ethertype = frame.ethertype();
        if ethertype < MIN_ETHERTYPE {
            return Err(EthernetError::NotEthernetII { ethertype });
        }
        Ok(Repr {
            src_addr: frame.src_addr(),
            dst_addr: frame.dst_addr(),
            ethertype,
        })
    }

    /// Write the 14 header bytes into a frame buffer (payload and FCS untouched:
    /// fill the payload, then [`Frame::fill_fcs`]).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        frame: &mut Frame<T>,
    ) -> Result<(), EthernetError> {
        if self.ethertype < MIN_ETHERTYPE {
            return Err(EthernetError::NotEthernetII {
                ethertype: self.ethertype,
            });
        }
        frame.check_len()?;
        let b = frame.buffer.as_mut();
        b[field::DESTINATION].copy_from_slice(&self.dst_addr.0);
        b[field::SOURCE].copy_from_slice(&self.src_addr.0);
        b[field::ETHERTYPE].copy_from_slice(&self.ethertype.to_be_bytes());
        Ok(())
    }

    /// Bytes of the MAC frame with this header carrying `payload_len` bytes.
    pub const fn buffer_len(&self, payload_len: usize) -> usize {
        frame_len(payload_len)
    }
}

/// The whole MAC frame carrying `payload` under `repr`: header, data, zero pad to
/// 46 bytes, FCS.
pub fn build_frame(repr: &Repr, payload: &[u8]) -> Result<Vec<u8>, EthernetError> {
    if payload.len() > MTU {
        return Err(EthernetError::PayloadSize { len: payload.len() });
    }
    let mut buf = vec![0u8; repr.buffer_len(payload.len())];
    let mut frame = Frame::new_unchecked(&mut buf[..]);
    repr.emit(&mut frame)?;
    frame.payload_mut()[..payload.len()].copy_from_slice(payload);
    frame.fill_fcs();
    Ok(buf)
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const DST: Address = Address([0x08, 0x00, 0x20, 0x0a, 0x0b, 0x0c]);
    const SRC: Address = Address([0x08, 0x00, 0x2b, 0x01, 0x02, 0x03]);

    /// A 20-byte IPv4 header alone (no options, no data, protocol 6): a bare
    /// datagram shorter than 46 bytes, so the frame carries 26 bytes of pad.
    static DATAGRAM: [u8; 20] = [
        0x45, 0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x40, 0x06, 0x00, 0x00, 10, 0, 0, 1, 10, 0,
        0, 2,
    ];

    /// The frame carrying DATAGRAM from SRC to DST, written out by hand: header,
    /// datagram, 26 zero bytes of pad, and the FCS least significant byte first.
    fn frame_bytes() -> Vec<u8> {
        let mut f = vec![
            0x08, 0x00, 0x20, 0x0a, 0x0b, 0x0c, // destination
            0x08, 0x00, 0x2b, 0x01, 0x02, 0x03, // source
            0x08, 0x00, // type: IPv4
        ];
        f.extend_from_slice(&DATAGRAM);
        f.extend_from_slice(&[0u8; 26]);
        let crc = fcs_bitwise(&f);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }

    /// An independent bitwise CRC-32 as IEEE 802.3 §3.2.9 describes it: the first
    /// 32 bits complemented, bits taken LSB first (reflected generator 0xEDB88320),
    /// the remainder complemented.
    fn fcs_bitwise(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn test_catalogue_is_802_3() {
        // The catalogue's check value for "123456789".
        assert_eq!(fcs(b"123456789"), 0xcbf4_3926);
        assert_eq!(fcs(b"123456789"), fcs_bitwise(b"123456789"));
        // A receiver running the CRC over the whole frame, FCS included, ends with
        // its register at the fixed residue 0xDEBB20E3 (the check a MAC does in
        // hardware): the FCS byte order is right.
        let f = frame_bytes();
        assert_eq!(!fcs(&f), 0xdebb_20e3);
    }

    #[test]
    fn test_sizes() {
        assert_eq!(MIN_PAYLOAD, 46);
        assert_eq!(MAX_FRAME_LEN, 1518);
        assert_eq!(frame_len(0), 64);
        assert_eq!(frame_len(40), 64);
        assert_eq!(frame_len(46), 64);
        assert_eq!(frame_len(47), 65);
        assert_eq!(frame_len(MTU), 1518);
        assert_eq!(pad_len(20), 26);
        assert_eq!(pad_len(46), 0);
        assert_eq!(wire_len(MTU), 1538);
        assert_eq!(wire_len(40), 84);
        // 10 Mb/s: 1538 × 8 bits = 1230.4 µs a full frame, 84 × 8 = 67.2 µs a
        // minimum one; so at most 812.7 full frames or 14 880.9 minimum frames a second.
        assert_eq!(wire_bits(MTU), 12_304);
        assert_eq!(wire_bits(0), 672);
        assert_eq!(10_000_000 / wire_bits(0), 14_880);
    }

    #[test]
    fn test_deconstruct() {
        let bytes = frame_bytes();
        let frame = Frame::new_checked(&bytes[..]).unwrap();
        assert_eq!(frame.dst_addr(), DST);
        assert_eq!(frame.src_addr(), SRC);
        assert_eq!(frame.ethertype(), ETHERTYPE_IPV4);
        assert_eq!(frame.payload().len(), 46);
        assert_eq!(&frame.payload()[..20], &DATAGRAM[..]);
        assert_eq!(&frame.payload()[20..], &[0u8; 26][..]);
        assert_eq!(frame.fcs(), frame.computed_fcs());
        assert_eq!(frame.check_fcs(), Ok(()));
        assert_eq!(SRC.to_string(), "08:00:2b:01:02:03");
        assert!(!SRC.is_multicast() && Address::BROADCAST.is_multicast());
    }

    #[test]
    fn test_construct() {
        let mut buf = vec![0xa5u8; frame_len(DATAGRAM.len())];
        let mut frame = Frame::new_unchecked(&mut buf[..]);
        let repr = Repr {
            src_addr: SRC,
            dst_addr: DST,
            ethertype: ETHERTYPE_IPV4,
        };
        repr.emit(&mut frame).unwrap();
        let p = frame.payload_mut();
        p.fill(0);
        p[..20].copy_from_slice(&DATAGRAM);
        frame.fill_fcs();
        assert_eq!(buf, frame_bytes());
    }

    #[test]
    fn test_parse() {
        let bytes = frame_bytes();
        let repr = Repr::parse(&Frame::new_checked(&bytes[..]).unwrap()).unwrap();
        assert_eq!(
            repr,
            Repr {
                src_addr: SRC,
                dst_addr: DST,
                ethertype: ETHERTYPE_IPV4
            }
        );
        // One bit flipped anywhere: the FCS catches it.
        let mut bad = bytes.clone();
        bad[30] ^= 0x10;
        assert!(matches!(
            Repr::parse(&Frame::new_unchecked(&bad[..])),
            Err(EthernetError::BadFcs { .. })
        ));
        // An 802.3 length field (here 46) where the type goes.
        let mut llc = bytes.clone();
        llc[12..14].copy_from_slice(&46u16.to_be_bytes());
        Frame::new_unchecked(&mut llc[..]).fill_fcs();
        assert_eq!(
            Repr::parse(&Frame::new_unchecked(&llc[..])),
            Err(EthernetError::NotEthernetII { ethertype: 46 })
        );
    }

    #[test]
    fn test_emit() {
        let repr = Repr {
            src_addr: SRC,
            dst_addr: DST,
            ethertype: ETHERTYPE_IPV4,
        };
        assert_eq!(build_frame(&repr, &DATAGRAM).unwrap(), frame_bytes());
        assert_eq!(repr.buffer_len(DATAGRAM.len()), 64);
        let full = build_frame(&repr, &[7u8; MTU]).unwrap();
        assert_eq!(full.len(), MAX_FRAME_LEN);
        assert_eq!(
            build_frame(&repr, &[0u8; MTU + 1]),
            Err(EthernetError::PayloadSize { len: MTU + 1 })
        );
        let llc = Repr {
            ethertype: 0x05dc,
            ..repr
        };
        assert_eq!(
            build_frame(&llc, b"x"),
            Err(EthernetError::NotEthernetII { ethertype: 0x05dc })
        );
        assert_eq!(
            EthernetError::FrameSize { len: 63 }.to_string(),
            "Ethernet frame of 63 bytes: allowed 64..=1518 (destination address through FCS)"
        );
    }

    #[test]
    fn test_impossible_len() {
        for len in [0, 13, 18, 63, 1519, 9000] {
            let b = vec![0u8; len];
            assert_eq!(
                Frame::new_checked(&b[..]),
                Err(EthernetError::FrameSize { len })
            );
            assert_eq!(
                Repr::parse(&Frame::new_unchecked(&b[..])),
                Err(EthernetError::FrameSize { len })
            );
        }
        let mut short = [0u8; 20];
        assert_eq!(
            Repr::default().emit(&mut Frame::new_unchecked(&mut short[..])),
            Err(EthernetError::NotEthernetII { ethertype: 0 })
        );
        let r = Repr {
            ethertype: ETHERTYPE_ARP,
            ..Repr::default()
        };
        assert_eq!(
            r.emit(&mut Frame::new_unchecked(&mut short[..])),
            Err(EthernetError::FrameSize { len: 20 })
        );
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        (any::<[u8; 6]>(), any::<[u8; 6]>(), MIN_ETHERTYPE..=u16::MAX).prop_map(|(s, d, t)| Repr {
            src_addr: Address(s),
            dst_addr: Address(d),
            ethertype: t,
        })
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1600)) {
            if let Ok(frame) = Frame::new_checked(&bytes[..]) {
                let _ = Repr::parse(&frame);
                let _ = (frame.dst_addr(), frame.src_addr(), frame.ethertype());
                let _ = (frame.payload().len(), frame.fcs(), frame.computed_fcs());
            }
            let _ = Repr::parse(&Frame::new_unchecked(&bytes[..]));
            let mut b = bytes.clone();
            let _ = Repr { ethertype: ETHERTYPE_IPV4, ..Repr::default() }
                .emit(&mut Frame::new_unchecked(&mut b[..]));
        }

        #[test]
        fn frame_roundtrip(repr in arb_repr(), payload in proptest::collection::vec(any::<u8>(), 0..=MTU)) {
            let f = build_frame(&repr, &payload).unwrap();
            prop_assert_eq!(f.len(), frame_len(payload.len()));
            prop_assert!((MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&f.len()));
            let view = Frame::new_checked(&f[..]).unwrap();
            prop_assert_eq!(Repr::parse(&view), Ok(repr));
            prop_assert_eq!(&view.payload()[..payload.len()], &payload[..]);
            prop_assert!(view.payload()[payload.len()..].iter().all(|&b| b == 0));
            prop_assert_eq!(view.fcs(), fcs_bitwise(&f[..f.len() - FCS_LEN]));
        }

        #[test]
        fn single_bit_errors_always_detected(
            repr in arb_repr(),
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            bit in any::<prop::sample::Index>(),
        ) {
            let mut f = build_frame(&repr, &payload).unwrap();
            let i = bit.index(f.len() * 8);
            f[i / 8] ^= 1 << (i % 8);
            let r = Repr::parse(&Frame::new_unchecked(&f[..]));
            prop_assert!(matches!(r, Err(EthernetError::BadFcs { .. })), "{:?}", r);
        }
    }
}
