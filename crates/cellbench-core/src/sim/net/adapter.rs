//! The transmit side of a host adapter: when each cell of a PDU starts on the
//! access link, for every transmission mode of SPEC §5.
//!
//! A PDU's schedule is a short list of regular runs `(first cell, count, offset
//! of its first cell from the PDU's start, step)`, the same for both fidelities:
//! PerCell schedules each cell of each run, Train pushes each run as one train.
//!
//! # The modes (C = cell time of the access link)
//!
//! - `None`: cell j at `j·C`.
//! - `PeakCellRate { interval: I }`: cell j at `j·I`.
//! - `Packet { interval: P }`: cells back to back; the next PDU starts no
//!   earlier than `P` after this one started.
//! - `Cell { idle_units: n, host_buffer_stall }`: `I = C + n·0.492 µs`, cell j at
//!   `j·I`, plus, with the stall, the stalls of every host buffer boundary at or
//!   before cell j. **Stall positions**: the host hands the PDU's CPCS payload
//!   in 1 KB buffers; the cell holding byte `1024·b` (b = 1, 2, … while
//!   `1024·b < payload_len`) is the first that needs buffer b, so the pipeline
//!   stalls just before cell `⌊1024·b / 48⌋` (cells 21, 42, 64, 85, 106, 128,
//!   149, 170 of a 9188-byte PDU). **Stall length**: the published figure is
//!   "7–8 cell slots"; we alternate, 7·C before buffers 1, 3, 5, … and 8·C
//!   before buffers 2, 4, 6, … of each PDU (7.5 on average), so the result is
//!   deterministic and the mean is right.
//! - `CellBurst { burst: k, period: P }`: cell j at `⌊j/k⌋·P + (j mod k)·C`.
//!   **Burst rule** of [`TxSpacing::cell_burst`] for a mean interval I:
//!   `k = 6 + round(5·C/I)` (11 at the line rate, 6 as the rate goes to zero;
//!   the adapter's 6–11), `P = k·I`, so the mean rate is exactly 1/I.
//! - Per-VC pacing at interval I ([`super::VcPacing`]): cell j at `j·I`,
//!   whatever the adapter's mode.
//!
//! # Between PDUs
//!
//! PDUs are segmented one at a time, in FIFO order. A PDU handed over at `now`
//! starts at the latest of:
//! - `now`;
//! - the end of the previous PDU's last cell plus `pdu_gap`;
//! - for an unpaced circuit, what the spacing asks of the previous unpaced PDU:
//!   I after its last cell's start (`PeakCellRate`, `Cell`), P after its first
//!   cell's start (`Packet`), P after its last burst's start (`CellBurst`);
//! - for a paced circuit, its interval after the start of its own previous cell.
//!
//! So a spaced or paced stream keeps its rate across PDU boundaries too.

use super::{AdapterRt, AdapterSpec, TxSpacing, CELL_BITS};
use crate::time::{BitRate, SimTime};
use std::fmt;

/// The idle-time granularity of cell-level spacing (0.492 µs).
pub const CELL_SPACING_UNIT: SimTime = SimTime(492_000);
/// The host buffer size whose boundaries stall a cell-spaced SBus adapter.
pub const HOST_BUFFER_BYTES: u64 = 1024;
/// Payload bytes per cell.
const CELL_PAYLOAD: u64 = 48;

/// Stall before host buffer `b` (1-based), in cell times: 7, 8, 7, 8, ….
fn stall_cells(b: u64) -> u64 {
    if b % 2 == 1 {
        7
    } else {
        8
    }
}

/// Why a spacing could not be built from a rate or interval.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SpacingError {
    /// A link or pacing rate of 0 b/s.
    ZeroRate,
    /// An interval shorter than the link's cell time.
    TooFine {
        requested: SimTime,
        cell_time: SimTime,
    },
    /// An idle time beyond 2^32 − 1 units of 0.492 µs.
    TooCoarse { requested: SimTime },
}

impl fmt::Display for SpacingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SpacingError::ZeroRate => write!(f, "rate 0 b/s not allowed: a rate must be > 0"),
            SpacingError::TooFine {
                requested,
                cell_time,
            } => write!(
                f,
                "cell interval {} µs not allowed: at least the line's cell time {} µs",
                requested.as_us_f64(),
                cell_time.as_us_f64()
            ),
            SpacingError::TooCoarse { requested } => write!(
                f,
                "cell interval {} µs not allowed: at most 2^32 − 1 idle units of 0.492 µs",
                requested.as_us_f64()
            ),
        }
    }
}

impl std::error::Error for SpacingError {}

fn cell_time_of(rate: BitRate) -> Result<SimTime, SpacingError> {
    if rate.bps() == 0 {
        return Err(SpacingError::ZeroRate);
    }
    Ok(rate.time_for_bits(CELL_BITS))
}

impl TxSpacing {
    /// Cell-level spacing on a link of cell-carrying rate `rate` for a requested
    /// cell interval (start to start): the adapter picks the whole number of
    /// 0.492 µs idle units nearest to `requested − C` (ties up). Returns the
    /// spacing and the interval it really gives, `C + n·0.492 µs`.
    pub fn cell_level(
        rate: BitRate,
        requested: SimTime,
        host_buffer_stall: bool,
    ) -> Result<(TxSpacing, SimTime), SpacingError> {
        let c = cell_time_of(rate)?;
        if requested < c {
            return Err(SpacingError::TooFine {
                requested,
                cell_time: c,
            });
        }
        let u = CELL_SPACING_UNIT.0;
        let n = (requested.0 - c.0 + u / 2) / u;
        let idle_units = u32::try_from(n).map_err(|_| SpacingError::TooCoarse { requested })?;
        let spacing = TxSpacing::Cell {
            idle_units,
            host_buffer_stall,
        };
        Ok((spacing, SimTime(c.0 + n * u)))
    }

    /// Cell-burst spacing with mean cell interval `interval` on a link of rate
    /// `rate`: bursts of `k = 6 + round(5·C/interval)` cells every `k·interval`.
    pub fn cell_burst(rate: BitRate, interval: SimTime) -> Result<TxSpacing, SpacingError> {
        let c = cell_time_of(rate)?;
        if interval < c {
            return Err(SpacingError::TooFine {
                requested: interval,
                cell_time: c,
            });
        }
        // round(5C/I) = ⌊(10C + I) / 2I⌋; C <= I so it is 0..=5.
        let k = 6 + (10 * c.0 as u128 + interval.0 as u128) / (2 * interval.0 as u128);
        let k = k as u32;
        Ok(TxSpacing::CellBurst {
            burst: k,
            period: interval.times(k as u64),
        })
    }

    /// The mean start-to-start interval of a PDU's cells on a link of cell
    /// time `cell` (stalls not counted).
    pub fn mean_interval(&self, cell: SimTime) -> SimTime {
        match *self {
            TxSpacing::None | TxSpacing::Packet { .. } => cell,
            TxSpacing::PeakCellRate { interval } => interval,
            TxSpacing::Cell { idle_units, .. } => cell + CELL_SPACING_UNIT.times(idle_units as u64),
            TxSpacing::CellBurst { burst, period } => SimTime(period.0 / burst.max(1) as u64),
        }
    }
}

/// Cells `first..first+count` of a PDU start at `offset + k·step` from the PDU's start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct TxRun {
    pub first: u32,
    pub count: u32,
    pub offset: SimTime,
    pub step: SimTime,
}

/// The runs of a PDU of `ncells` cells carrying `payload_len` CPCS payload
/// bytes under `tx` (or at `paced` when the circuit is paced). Returns the
/// offset from the PDU's start before which the spacing lets no next PDU start.
/// (Always inlined into `place`, the per-PDU path, whatever else calls it.)
#[inline(always)]
pub(super) fn schedule(
    tx: TxSpacing,
    paced: Option<SimTime>,
    cell: SimTime,
    ncells: u32,
    payload_len: u32,
    out: &mut Vec<TxRun>,
) -> SimTime {
    out.clear();
    let n = ncells as u64;
    let regular = |out: &mut Vec<TxRun>, step: SimTime| {
        out.push(TxRun {
            first: 0,
            count: ncells,
            offset: SimTime::ZERO,
            step,
        });
        step.times(n - 1) + step
    };
    if let Some(interval) = paced {
        return regular(out, interval);
    }
    match tx {
        TxSpacing::None => {
            regular(out, cell);
            SimTime::ZERO
        }
        TxSpacing::PeakCellRate { interval } => regular(out, interval),
        TxSpacing::Packet { interval } => {
            regular(out, cell);
            interval
        }
        TxSpacing::Cell {
            idle_units,
            host_buffer_stall,
        } => {
            let step = cell + CELL_SPACING_UNIT.times(idle_units as u64);
            let mut first = 0u32;
            let mut offset = SimTime::ZERO;
            if host_buffer_stall {
                let mut b = 1u64;
                while HOST_BUFFER_BYTES * b < payload_len as u64 {
                    let k = (HOST_BUFFER_BYTES * b / CELL_PAYLOAD) as u32;
                    out.push(TxRun {
                        first,
                        count: k - first,
                        offset,
                        step,
                    });
                    offset = offset + step.times((k - first) as u64) + cell.times(stall_cells(b));
                    first = k;
                    b += 1;
                }
            }
            out.push(TxRun {
                first,
                count: ncells - first,
                offset,
                step,
            });
            offset + step.times((ncells - first) as u64)
        }
        TxSpacing::CellBurst { burst, period } => {
            let mut first = 0u32;
            let mut offset = SimTime::ZERO;
            while first < ncells {
                let count = burst.min(ncells - first);
                out.push(TxRun {
                    first,
                    count,
                    offset,
                    step: cell,
                });
                first += count;
                offset += period;
            }
            offset
        }
    }
}

impl AdapterSpec {
    /// The shortest start-to-start time of back-to-back PDUs of `ncells` cells
    /// (`payload_len` CPCS payload bytes) from this adapter, its cells paced at
    /// `paced` or under its own spacing: what [`AdapterRt::place`] allows (the
    /// spacing's constraint and the last cell's end plus the PDU gap), for
    /// explanations of what bound a transfer.
    pub fn pdu_period(&self, paced: Option<SimTime>, ncells: u32, payload_len: u32) -> SimTime {
        let Ok(cell) = cell_time_of(self.rate) else {
            return SimTime::ZERO;
        };
        if ncells == 0 {
            return SimTime::ZERO;
        }
        let mut runs = Vec::new();
        let next = schedule(self.tx, paced, cell, ncells, payload_len, &mut runs);
        let last = runs.last().expect("a PDU has a cell");
        let last_start = last.offset + last.step.times(last.count as u64 - 1);
        next.max(last_start + cell + self.pdu_gap)
    }
}

impl AdapterRt {
    /// Places a PDU handed over at `now` on the access link: fills `runs` and
    /// returns the start of its first cell and the end of its spacing
    /// constraint for the next PDU on the same footing (see the module doc).
    /// `paced` is the circuit's pacing interval and the earliest start it allows.
    #[inline]
    pub(super) fn place(
        &mut self,
        now: SimTime,
        ncells: u32,
        payload_len: u32,
        paced: Option<(SimTime, SimTime)>,
        runs: &mut Vec<TxRun>,
    ) -> (SimTime, SimTime) {
        let spaced_from = match paced {
            Some((_, free)) => free,
            None => self.spacing_free,
        };
        let start = now.max(self.free_at).max(spaced_from);
        let next = schedule(
            self.tx,
            paced.map(|p| p.0),
            self.cell,
            ncells,
            payload_len,
            runs,
        );
        let last = runs.last().expect("a PDU has a cell");
        let last_start = start + last.offset + last.step.times(last.count as u64 - 1);
        self.free_at = last_start + self.cell + self.gap;
        let next = start + next;
        if paced.is_none() {
            self.spacing_free = next;
        }
        (start, next)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const OC3: BitRate = BitRate(149_760_000);
    const C: SimTime = SimTime(2_831_196);

    fn starts(tx: TxSpacing, ncells: u32, payload: u32) -> (Vec<u64>, SimTime) {
        let mut runs = vec![];
        let next = schedule(tx, None, C, ncells, payload, &mut runs);
        let mut v = vec![];
        for r in &runs {
            for k in 0..r.count {
                assert_eq!(r.first + k, v.len() as u32);
                v.push((r.offset + r.step.times(k as u64)).as_ps());
            }
        }
        (v, next)
    }

    #[test]
    fn test_cell_level_picks_nearest_unit() {
        // (16.01 − 2.831196) / 0.492 = 26.79 → 27 units → 2.831196 + 13.284 µs.
        let (tx, got) = TxSpacing::cell_level(OC3, SimTime::from_us_f64(16.01), true).unwrap();
        assert_eq!(
            tx,
            TxSpacing::Cell {
                idle_units: 27,
                host_buffer_stall: true
            }
        );
        assert_eq!(got, SimTime(2_831_196 + 27 * 492_000));
        for (us, n) in [(16.50, 28), (17.98, 31), (19.45, 34)] {
            let (tx, _) = TxSpacing::cell_level(OC3, SimTime::from_us_f64(us), false).unwrap();
            assert_eq!(
                tx,
                TxSpacing::Cell {
                    idle_units: n,
                    host_buffer_stall: false
                },
                "{us}"
            );
        }
        let (_, got) = TxSpacing::cell_level(OC3, C, false).unwrap();
        assert_eq!(got, C);
        let err = TxSpacing::cell_level(OC3, SimTime::from_us(2), false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cell interval 2 µs not allowed: at least the line's cell time 2.831196 µs"
        );
    }

    #[test]
    fn test_stall_positions_of_a_full_pdu() {
        let tx = TxSpacing::Cell {
            idle_units: 27,
            host_buffer_stall: true,
        };
        let (v, next) = starts(tx, 192, 9188);
        let i = C.0 + 27 * 492_000;
        // Stalls before cells 21, 42, 64, 85, 106, 128, 149, 170: 7, 8, 7, 8, … cell times.
        let stalls = [
            (21, 7),
            (42, 8),
            (64, 7),
            (85, 8),
            (106, 7),
            (128, 8),
            (149, 7),
            (170, 8),
        ];
        for (j, &t) in v.iter().enumerate() {
            let extra: u64 = stalls
                .iter()
                .filter(|&&(k, _)| k <= j)
                .map(|&(_, s)| s * C.0)
                .sum();
            assert_eq!(t, j as u64 * i + extra, "cell {j}");
        }
        assert_eq!(next.0, v[191] + i);
        // A PDU of exactly 1024 bytes of payload needs one buffer: no stall.
        let (v, _) = starts(tx, aal5(1024), 1024);
        assert!(v.windows(2).all(|w| w[1] - w[0] == i));
        let (v, _) = starts(tx, aal5(1025), 1025);
        assert_eq!(v[21] - v[20], i + 7 * C.0);
    }

    fn aal5(len: u32) -> u32 {
        super::super::aal5_cells(len)
    }

    #[test]
    fn test_cell_burst_rule() {
        // At the line rate: 11; at 16.39 µs on OC-3c: 6 + round(0.864) = 7.
        let t = TxSpacing::cell_burst(OC3, C).unwrap();
        assert_eq!(
            t,
            TxSpacing::CellBurst {
                burst: 11,
                period: C.times(11)
            }
        );
        let i = SimTime(16_390_000);
        let t = TxSpacing::cell_burst(OC3, i).unwrap();
        assert_eq!(
            t,
            TxSpacing::CellBurst {
                burst: 7,
                period: i.times(7)
            }
        );
        assert_eq!(t.mean_interval(C), i);
        let t = TxSpacing::cell_burst(OC3, SimTime::from_ms(10)).unwrap();
        assert!(matches!(t, TxSpacing::CellBurst { burst: 6, .. }));
        let (v, next) = starts(t, 14, 600);
        let p = SimTime::from_ms(10).times(6).0;
        assert_eq!(&v[..7], &[0, C.0, 2 * C.0, 3 * C.0, 4 * C.0, 5 * C.0, p]);
        assert_eq!(v[13], 2 * p + C.0);
        assert_eq!(next.0, 3 * p);
    }

    #[test]
    fn test_packet_spacing_keeps_cells_back_to_back() {
        let (v, next) = starts(
            TxSpacing::Packet {
                interval: SimTime::from_us(700),
            },
            3,
            100,
        );
        assert_eq!(v, vec![0, C.0, 2 * C.0]);
        assert_eq!(next, SimTime::from_us(700));
    }
}
