//! Multiprotocol encapsulation over AAL5 (RFC 1483), for routed IPv4.
//!
//! - LLC/SNAP: an 8-byte header before the IP packet,
//!   `AA-AA-03` (LLC: DSAP, SSAP = SNAP, control = UI) `00-00-00` (OUI: EtherType
//!   follows) `08-00` (IPv4). Default MTU 9180 (RFC 1626, "Classical IP over ATM").
//! - VC-multiplexed ("null") encapsulation: no header; the VC itself says the
//!   protocol. The vendor "Fore IP" default MTU was 9188, so that both give the same
//!   192-cell PDU for a full-size packet.

use core::fmt;
use core::str::FromStr;

/// Bytes of the LLC/SNAP header.
pub const HEADER_LEN: usize = 8;
/// The LLC/SNAP header of a routed IPv4 PDU.
pub const LLC_SNAP_IPV4: [u8; HEADER_LEN] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];
/// The EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;

mod field {
    use core::ops::Range;
    pub const LLC: Range<usize> = 0..3;
    pub const OUI: Range<usize> = 3..6;
    pub const ETHERTYPE: Range<usize> = 6..8;
    pub const PAYLOAD: core::ops::RangeFrom<usize> = 8..;
}

/// LLC bytes announcing a SNAP header: DSAP 0xAA, SSAP 0xAA, control 0x03 (UI).
const LLC_SNAP: [u8; 3] = [0xaa, 0xaa, 0x03];

/// How IP packets are carried in AAL5 PDUs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encap {
    /// RFC 1483 LLC/SNAP (8-byte header).
    #[default]
    LlcSnap,
    /// RFC 1483 VC-based multiplexing (no header).
    VcMux,
}

impl Encap {
    pub const ALL: [Encap; 2] = [Encap::LlcSnap, Encap::VcMux];

    /// The name users type: "llc-snap" or "vc-mux".
    pub const fn name(self) -> &'static str {
        match self {
            Encap::LlcSnap => "llc-snap",
            Encap::VcMux => "vc-mux",
        }
    }

    /// Bytes added before the IP packet.
    pub const fn header_len(self) -> usize {
        match self {
            Encap::LlcSnap => HEADER_LEN,
            Encap::VcMux => 0,
        }
    }

    /// The default IP MTU: 9180 for LLC/SNAP (RFC 1626), 9188 for VC-mux (Fore IP).
    pub const fn default_mtu(self) -> usize {
        match self {
            Encap::LlcSnap => 9180,
            Encap::VcMux => 9188,
        }
    }

    /// The AAL5 payload carrying `packet`.
    pub fn encapsulate(self, packet: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.header_len() + packet.len());
        if self == Encap::LlcSnap {
            out.extend_from_slice(&LLC_SNAP_IPV4);
        }
        out.extend_from_slice(packet);
        out
    }

    /// The IP packet inside an AAL5 payload (checking the LLC/SNAP header).
    pub fn decapsulate(self, sdu: &[u8]) -> Result<&[u8], EncapError> {
        match self {
            Encap::VcMux => Ok(sdu),
            Encap::LlcSnap => {
                let frame = LlcSnapFrame::new_checked(sdu)?;
                frame.check_ipv4()?;
                Ok(&sdu[field::PAYLOAD])
            }
        }
    }
}

impl fmt::Display for Encap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an encapsulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEncap(pub String);

impl fmt::Display for UnknownEncap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Encap::ALL.iter().map(|e| e.name()).collect();
        write!(
            f,
            "unknown encapsulation {:?}: allowed {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownEncap {}

impl FromStr for Encap {
    type Err = UnknownEncap;
    fn from_str(s: &str) -> Result<Encap, UnknownEncap> {
        Encap::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| UnknownEncap(s.to_string()))
    }
}

/// Why an AAL5 payload is not an LLC/SNAP-encapsulated IPv4 packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EncapError {
    /// Shorter than the 8-byte header.
    Truncated { len: usize },
    /// The LLC is not AA-AA-03 (not SNAP).
    NotSnap { llc: [u8; 3] },
    /// The SNAP OUI is not 00-00-00 (not an EtherType).
    NotEthertype { oui: [u8; 3] },
    /// An EtherType other than IPv4.
    NotIpv4 { ethertype: u16 },
}

impl fmt::Display for EncapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncapError::Truncated { len } => write!(
                f,
                "LLC/SNAP header needs {HEADER_LEN} bytes, PDU payload has {len}"
            ),
            EncapError::NotSnap { llc } => write!(
                f,
                "LLC header {:02x}-{:02x}-{:02x} is not SNAP (expected aa-aa-03)",
                llc[0], llc[1], llc[2]
            ),
            EncapError::NotEthertype { oui } => write!(
                f,
                "SNAP OUI {:02x}-{:02x}-{:02x} is not 00-00-00 (EtherType)",
                oui[0], oui[1], oui[2]
            ),
            EncapError::NotIpv4 { ethertype } => {
                write!(f, "SNAP EtherType {ethertype:#06x} is not IPv4 (0x0800)")
            }
        }
    }
}

impl std::error::Error for EncapError {}

/// A zero-copy view of an LLC/SNAP-encapsulated PDU payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LlcSnapFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> LlcSnapFrame<T> {
    pub const fn new_unchecked(buffer: T) -> LlcSnapFrame<T> {
        LlcSnapFrame { buffer }
    }

    /// Wrap after checking the header is present and is LLC SNAP.
    pub fn new_checked(buffer: T) -> Result<LlcSnapFrame<T>, EncapError> {
        let len = buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(EncapError::Truncated { len });
        }
        let frame = LlcSnapFrame::new_unchecked(buffer);
        if frame.llc() != LLC_SNAP {
            return Err(EncapError::NotSnap { llc: frame.llc() });
        }
        Ok(frame)
    }

    /// The OUI is 00-00-00 and the EtherType IPv4.
    pub fn check_ipv4(&self) -> Result<(), EncapError> {
        if self.oui() != [0, 0, 0] {
            return Err(EncapError::NotEthertype { oui: self.oui() });
        }
        if self.ethertype() != ETHERTYPE_IPV4 {
            return Err(EncapError::NotIpv4 {
                ethertype: self.ethertype(),
            });
        }
        Ok(())
    }

    pub fn llc(&self) -> [u8; 3] {
        let b = &self.buffer.as_ref()[field::LLC];
        [b[0], b[1], b[2]]
    }
    pub fn oui(&self) -> [u8; 3] {
        let b = &self.buffer.as_ref()[field::OUI];
        [b[0], b[1], b[2]]
    }
    pub fn ethertype(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wire::aal5::cells_for;
    use proptest::prelude::*;

    static FRAME: [u8; 12] = [
        0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00, 0x45, 0x00, 0x00, 0x14,
    ];

    #[test]
    fn test_deconstruct() {
        let f = LlcSnapFrame::new_checked(&FRAME[..]).unwrap();
        assert_eq!(f.llc(), [0xaa, 0xaa, 0x03]);
        assert_eq!(f.oui(), [0, 0, 0]);
        assert_eq!(f.ethertype(), 0x0800);
        assert_eq!(f.payload(), &[0x45, 0x00, 0x00, 0x14]);
    }

    #[test]
    fn test_construct() {
        assert_eq!(Encap::LlcSnap.encapsulate(&FRAME[8..]), FRAME.to_vec());
        assert_eq!(Encap::VcMux.encapsulate(&FRAME[8..]), FRAME[8..].to_vec());
    }

    #[test]
    fn test_parse_errors() {
        assert_eq!(
            Encap::LlcSnap.decapsulate(&FRAME[..7]),
            Err(EncapError::Truncated { len: 7 })
        );
        let mut f = FRAME;
        f[2] = 0x13;
        assert_eq!(
            Encap::LlcSnap.decapsulate(&f),
            Err(EncapError::NotSnap {
                llc: [0xaa, 0xaa, 0x13]
            })
        );
        let mut f = FRAME;
        f[5] = 0xf8;
        assert_eq!(
            Encap::LlcSnap.decapsulate(&f),
            Err(EncapError::NotEthertype { oui: [0, 0, 0xf8] })
        );
        let mut f = FRAME;
        f[6] = 0x86;
        f[7] = 0xdd;
        assert_eq!(
            Encap::LlcSnap.decapsulate(&f),
            Err(EncapError::NotIpv4 { ethertype: 0x86dd })
        );
        assert_eq!(
            EncapError::NotIpv4 { ethertype: 0x86dd }.to_string(),
            "SNAP EtherType 0x86dd is not IPv4 (0x0800)"
        );
    }

    #[test]
    fn test_names() {
        assert_eq!("llc-snap".parse::<Encap>(), Ok(Encap::LlcSnap));
        assert_eq!("vc-mux".parse::<Encap>(), Ok(Encap::VcMux));
        assert_eq!(
            "null".parse::<Encap>().unwrap_err().to_string(),
            "unknown encapsulation \"null\": allowed llc-snap, vc-mux"
        );
    }

    #[test]
    fn full_mtu_is_192_cells_either_way() {
        for e in Encap::ALL {
            assert_eq!(cells_for(e.default_mtu() + e.header_len()), 192, "{e}");
        }
    }

    proptest! {
        #[test]
        fn decap_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
            let _ = Encap::LlcSnap.decapsulate(&bytes);
            if let Ok(f) = LlcSnapFrame::new_checked(&bytes[..]) {
                let _ = (f.check_ipv4(), f.payload());
            }
        }

        #[test]
        fn encap_roundtrip(packet in proptest::collection::vec(any::<u8>(), 0..100)) {
            for e in Encap::ALL {
                let sdu = e.encapsulate(&packet);
                prop_assert_eq!(sdu.len(), packet.len() + e.header_len());
                prop_assert_eq!(e.decapsulate(&sdu), Ok(&packet[..]));
            }
        }
    }
}
