//! Physical layers and the rate each leaves to ATM cells.
//!
//! Every figure is exact in integer bits per second, and a cell time is
//! `BitRate::time_for_bits(424)` (53 bytes), rounded down to the picosecond.
//!
//! Sources of the figures:
//! - SONET STS-3c/OC-3c: 155.52 Mb/s line; a 125 µs frame is 9 rows × 270
//!   columns = 2430 bytes, of which 9 × 9 are transport overhead and 9 are the
//!   path overhead column: 90 bytes, leaving 2340 × 8 × 8000 = 149.76 Mb/s for
//!   cells (ANSI T1.105, ITU-T I.432 mapping of ATM into STS-3c).
//! - OC-12c: 622.08 Mb/s line; 9 × 1080 bytes, of which 9 × 36 transport
//!   overhead, 9 × 1 path overhead and 9 × 3 fixed stuff: 1040 × 9 × 8 × 8000 =
//!   599.04 Mb/s (ITU-T I.432 / ATM Forum UNI 3.1 STS-12c mapping).
//! - TAXI 100/140 (ATM Forum UNI 3.1 multimode fibre interface): 4B/5B coding
//!   on a 125/175 Mbaud line carries 100/140 Mb/s of data, all of it cells
//!   (cells are framed by code symbols, not by bytes). The "line rate" reported
//!   here is that data rate; the baud rate is `symbol_rate_baud`.
//! - E3: 34.368 Mb/s line; G.832 frame of 537 bytes per 125 µs, 7 overhead
//!   bytes, 530 × 8 × 8000 = 33.92 Mb/s for cells (ITU-T G.832, G.804).
//! - DS-3: 44.736 Mb/s line; the PLCP (ATM Forum UNI 3.1, Bellcore TA-TSY-000773)
//!   carries 12 cells per 125 µs frame: 96,000 cells/s × 424 bits = 40.704 Mb/s.
//! - `Rate`: a generic link; cells use the whole rate.
//!
//! With `Framing::Neglected` the cell rate equals the line rate, as some
//! published worked examples assume (e.g. "2.83 µs per cell at 155 Mb/s").

use crate::time::{BitRate, SimTime};
use core::fmt;
use core::str::FromStr;

/// Bits in one ATM cell (53 bytes).
pub const CELL_BITS: u64 = 53 * 8;

/// A physical layer under the ATM layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Phy {
    /// SONET STS-3c / SDH STM-1, 155.52 Mb/s.
    Oc3c,
    /// SONET STS-12c / SDH STM-4c, 622.08 Mb/s.
    Oc12c,
    /// TAXI, 4B/5B at 125 Mbaud: 100 Mb/s of cells.
    Taxi100,
    /// TAXI, 4B/5B at 175 Mbaud: 140 Mb/s of cells.
    Taxi140,
    /// E3 with G.832 framing, 34.368 Mb/s.
    E3,
    /// DS-3 with PLCP, 44.736 Mb/s.
    Ds3,
    /// A generic link whose whole rate carries cells.
    Rate(BitRate),
}

/// Whether the cell rate accounts for the physical layer's framing overhead.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Cells get only what the framing leaves (the real figure).
    #[default]
    Modelled,
    /// Cells get the whole line rate (the simplification of some worked examples).
    Neglected,
}

/// The names `Phy::from_str` accepts (besides `rate:<Mb/s>`).
pub const PHY_NAMES: &str = "oc3c, oc12c, taxi100, taxi140, e3, ds3, rate:<Mb/s>";

/// Why a physical layer name or rate was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum PhyError {
    /// Not one of [`PHY_NAMES`]. Holds the name as given (a String: a name is
    /// what the user needs to see, and it has no bound on its length).
    Unknown(String),
    /// `rate:<Mb/s>` whose value is not a finite number > 0, or rounds to 0 b/s.
    BadRate(String),
}

impl fmt::Display for PhyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhyError::Unknown(name) => {
                write!(f, "unknown physical layer {name:?}: allowed {PHY_NAMES}")
            }
            PhyError::BadRate(value) => write!(
                f,
                "physical layer rate {value:?} not allowed: rate:<Mb/s> needs a finite number > 0 \
                 (at least 1 bit/s)"
            ),
        }
    }
}

impl std::error::Error for PhyError {}

impl Phy {
    /// The physical layers by name, in the order `from_str` documents them
    /// (`Rate` names any other).
    pub const NAMED: [Phy; 6] = [
        Phy::Oc3c,
        Phy::Oc12c,
        Phy::Taxi100,
        Phy::Taxi140,
        Phy::E3,
        Phy::Ds3,
    ];

    /// Line rate: the bit rate of the physical layer (for TAXI the data rate of
    /// the 4B/5B code, not the baud rate).
    pub const fn line_rate(self) -> BitRate {
        match self {
            Phy::Oc3c => BitRate(155_520_000),
            Phy::Oc12c => BitRate(622_080_000),
            Phy::Taxi100 => BitRate(100_000_000),
            Phy::Taxi140 => BitRate(140_000_000),
            Phy::E3 => BitRate(34_368_000),
            Phy::Ds3 => BitRate(44_736_000),
            Phy::Rate(r) => r,
        }
    }

    /// The bit rate left to cells (53-byte cells, headers included).
    pub const fn cell_rate(self, framing: Framing) -> BitRate {
        if let Framing::Neglected = framing {
            return self.line_rate();
        }
        match self {
            // 2340 of 2430 frame bytes: 155.52 × 2340/2430.
            Phy::Oc3c => BitRate(149_760_000),
            // 9360 of 9720 frame bytes: 622.08 × 9360/9720.
            Phy::Oc12c => BitRate(599_040_000),
            Phy::Taxi100 => BitRate(100_000_000),
            Phy::Taxi140 => BitRate(140_000_000),
            // 530 of 537 G.832 frame bytes.
            Phy::E3 => BitRate(33_920_000),
            // PLCP: 96,000 cells/s × 424 bits.
            Phy::Ds3 => BitRate(96_000 * CELL_BITS),
            Phy::Rate(r) => r,
        }
    }

    /// Time to send one cell, rounded down to the picosecond. A `Rate` of 0 b/s
    /// never sends: `SimTime::MAX`.
    pub fn cell_time(self, framing: Framing) -> SimTime {
        let rate = self.cell_rate(framing);
        if rate.bps() == 0 {
            return SimTime::MAX;
        }
        rate.time_for_bits(CELL_BITS)
    }

    /// Cells per second (not a whole number on SONET: 353,207.5… on OC-3c).
    pub fn cells_per_sec(self, framing: Framing) -> f64 {
        self.cell_rate(framing).bps() as f64 / CELL_BITS as f64
    }

    /// Line symbol rate in baud where the code is not one bit per symbol
    /// (TAXI's 4B/5B: 5 symbols per 4 bits); otherwise the line rate.
    pub const fn symbol_rate_baud(self) -> u64 {
        match self {
            Phy::Taxi100 => 125_000_000,
            Phy::Taxi140 => 175_000_000,
            other => other.line_rate().bps(),
        }
    }

    /// A generic link of `mbps` × 10^6 bit/s, from a user's number.
    pub fn from_mbps(mbps: f64) -> Result<Phy, PhyError> {
        let bps = mbps * 1e6;
        if !bps.is_finite() || bps.round() < 1.0 || bps >= u64::MAX as f64 {
            return Err(PhyError::BadRate(format!("{mbps}")));
        }
        Ok(Phy::Rate(BitRate(bps.round() as u64)))
    }
}

impl FromStr for Phy {
    type Err = PhyError;

    /// `oc3c`, `oc12c`, `taxi100`, `taxi140`, `e3`, `ds3` (any case) or `rate:<Mb/s>`.
    fn from_str(s: &str) -> Result<Phy, PhyError> {
        let lower = s.trim().to_ascii_lowercase();
        Ok(match lower.as_str() {
            "oc3c" => Phy::Oc3c,
            "oc12c" => Phy::Oc12c,
            "taxi100" => Phy::Taxi100,
            "taxi140" => Phy::Taxi140,
            "e3" => Phy::E3,
            "ds3" => Phy::Ds3,
            _ => match lower.strip_prefix("rate:") {
                Some(value) => {
                    let mbps: f64 = value
                        .trim()
                        .parse()
                        .map_err(|_| PhyError::BadRate(value.trim().to_string()))?;
                    Phy::from_mbps(mbps).map_err(|_| PhyError::BadRate(value.trim().to_string()))?
                }
                None => return Err(PhyError::Unknown(s.to_string())),
            },
        })
    }
}

impl fmt::Display for Phy {
    /// The name `from_str` accepts; a generic rate prints as `rate:<Mb/s>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phy::Oc3c => f.write_str("oc3c"),
            Phy::Oc12c => f.write_str("oc12c"),
            Phy::Taxi100 => f.write_str("taxi100"),
            Phy::Taxi140 => f.write_str("taxi140"),
            Phy::E3 => f.write_str("e3"),
            Phy::Ds3 => f.write_str("ds3"),
            Phy::Rate(r) => write!(f, "rate:{}", r.mbps()),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const ALL: [Phy; 6] = [
        Phy::Oc3c,
        Phy::Oc12c,
        Phy::Taxi100,
        Phy::Taxi140,
        Phy::E3,
        Phy::Ds3,
    ];

    #[test]
    fn test_cell_rates_from_framing_arithmetic() {
        // Recompute each cell rate from its framing, independently of the table.
        // OC-3c: 155.52 Mb/s × (2430 − 90)/2430.
        assert_eq!(
            Phy::Oc3c.cell_rate(Framing::Modelled).bps(),
            155_520_000 * 2340 / 2430
        );
        // OC-12c: 622.08 Mb/s × 1040/1080 (9 rows × (1080 − 36 − 1 − 3) columns).
        assert_eq!(
            Phy::Oc12c.cell_rate(Framing::Modelled).bps(),
            622_080_000 * 1040 / 1080
        );
        // E3 G.832: 34.368 Mb/s × 530/537 = 530 bytes × 8 bits × 8000 frames/s.
        assert_eq!(
            Phy::E3.cell_rate(Framing::Modelled).bps(),
            34_368_000 * 530 / 537
        );
        assert_eq!(Phy::E3.cell_rate(Framing::Modelled).bps(), 530 * 8 * 8000);
        // DS-3 PLCP: 12 cells per 125 µs = 96,000 cells/s → 40.704 Mb/s.
        assert_eq!(Phy::Ds3.cell_rate(Framing::Modelled).bps(), 12 * 8000 * 424);
        assert_eq!(Phy::Ds3.cell_rate(Framing::Modelled).bps(), 40_704_000);
        // The line rates are whole frames per 125 µs, too.
        assert_eq!(Phy::Oc3c.line_rate().bps(), 2430 * 8 * 8000);
        assert_eq!(Phy::E3.line_rate().bps(), 537 * 8 * 8000);
    }

    #[test]
    fn test_cell_times() {
        // 424 bits / 149.76 Mb/s = 2.831196… µs, rounded down to the picosecond.
        assert_eq!(Phy::Oc3c.cell_time(Framing::Modelled), SimTime(2_831_196));
        // Framing neglected: 424 / 155.52 Mb/s = 2.726337… µs.
        assert_eq!(Phy::Oc3c.cell_time(Framing::Neglected), SimTime(2_726_337));
        // TAXI 100: 4.24 µs exactly; TAXI 140: 3.028571… µs.
        assert_eq!(
            Phy::Taxi100.cell_time(Framing::Modelled),
            SimTime::from_ns(4_240)
        );
        assert_eq!(
            Phy::Taxi140.cell_time(Framing::Modelled),
            SimTime(3_028_571)
        );
        // DS-3 PLCP: 1/96,000 s = 10.416666… µs.
        assert_eq!(Phy::Ds3.cell_time(Framing::Modelled), SimTime(10_416_666));
        // E3: 424 / 33.92 Mb/s = 12.5 µs exactly.
        assert_eq!(
            Phy::E3.cell_time(Framing::Modelled),
            SimTime::from_ns(12_500)
        );
        assert_eq!(
            Phy::Rate(BitRate(0)).cell_time(Framing::Modelled),
            SimTime::MAX
        );
    }

    #[test]
    fn test_neglected_framing_is_line_rate() {
        for phy in ALL {
            assert_eq!(phy.cell_rate(Framing::Neglected), phy.line_rate());
            assert!(phy.cell_rate(Framing::Modelled) <= phy.line_rate());
        }
    }

    #[test]
    fn test_parse_and_display_round_trip() {
        for phy in ALL {
            assert_eq!(phy.to_string().parse::<Phy>(), Ok(phy));
        }
        assert_eq!("OC3C".parse::<Phy>(), Ok(Phy::Oc3c));
        assert_eq!(
            "rate:100".parse::<Phy>(),
            Ok(Phy::Rate(BitRate(100_000_000)))
        );
        assert_eq!("rate:0.5".parse::<Phy>(), Ok(Phy::Rate(BitRate(500_000))));
        assert_eq!("rate:45.5".parse::<Phy>().unwrap().to_string(), "rate:45.5");
    }

    #[test]
    fn test_parse_errors_name_value_and_allowed() {
        let e = "oc48".parse::<Phy>().unwrap_err();
        assert_eq!(e, PhyError::Unknown("oc48".into()));
        let msg = e.to_string();
        assert!(
            msg.contains("\"oc48\"") && msg.contains("oc3c") && msg.contains("rate:"),
            "{msg}"
        );
        for bad in [
            "rate:0",
            "rate:-3",
            "rate:abc",
            "rate:",
            "rate:inf",
            "rate:NaN",
            "rate:1e-9",
        ] {
            let e = bad.parse::<Phy>().unwrap_err();
            assert!(matches!(e, PhyError::BadRate(_)), "{bad}: {e:?}");
            assert!(e.to_string().contains("> 0"), "{e}");
        }
    }

    #[test]
    fn test_taxi_baud() {
        // 4B/5B: 5 symbols carry 4 bits.
        assert_eq!(
            Phy::Taxi100.symbol_rate_baud() * 4 / 5,
            Phy::Taxi100.line_rate().bps()
        );
        assert_eq!(
            Phy::Taxi140.symbol_rate_baud() * 4 / 5,
            Phy::Taxi140.line_rate().bps()
        );
        assert_eq!(Phy::Oc3c.symbol_rate_baud(), 155_520_000);
    }
}
