//! The transmit side of a host adapter: when each cell of a PDU starts on the
//! access link, for every transmission mode of docs/design.md §5.
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
//!   `j·I`, plus, with the stall, the stalls at or before cell j. **Stall
//!   positions**: the send path gives the CPCS payload offsets where the
//!   adapter moves on from a 1 KB cluster mbuf to the next host buffer
//!   ([`super::Network::send_gathered`]; `send` assumes 1 KB clusters from the
//!   payload's start). Which boundaries those are is a property of the send
//!   path (`host/socket.rs`): docs/design.md §5's two measurements put the stall at the
//!   ends of the 1 KB cluster mbufs of 8 KB UDP datagrams (the cell tester saw
//!   it every 21–22 cells) and none inside TCP segments (the conformance
//!   analysis on the policed VP, borne out by its traces); the model gets the
//!   second by assuming each 4 KB append to SunOS's send buffer is one host
//!   buffer (000 §4.1.1 has SunOS's mbufs point to 1 KB blocks: why TCP misses
//!   the stall is not known, docs/mechanisms.md). The cell holding the next buffer's first byte,
//!   `⌊offset / 48⌋`, is the first that needs it, so the pipeline stalls just
//!   before that cell (1 KB clusters of a 9188-byte PDU: cells 21, 42, 64, 85,
//!   106, 128, 149, 170). A boundary inside cell 0 stalls nothing of its own:
//!   the adapter sets up the PDU's first buffers before its first cell, in the
//!   firmware time between PDUs that was measured as the gap. **Stall
//!   length**: the published figure is "7–8 cell slots" of the 155 Mb/s
//!   tester ([`STALL_SLOT`]); we alternate, 7 slots before the first, third, …
//!   stall of each PDU and 8 before the second, fourth, … (7.5 on average), so
//!   the result is deterministic and the mean is right.
//! - `CellBurst { burst: k, period: P }`: cell j at `⌊j/k⌋·P + (j mod k)·C`.
//!   **Burst rule** of [`TxSpacing::cell_burst`] for a mean interval I:
//!   `k = 6 + ⌊5·C/I⌋` (11 at the line rate, 6 below a fifth of it: the
//!   driver's 6–11), `P = k·I`, so the mean rate is exactly 1/I. An
//!   assumption constrained by the one published point (docs/design.md §5: 6 cells
//!   back to back, ~40 tester slots of 2.726 µs between burst starts, at a
//!   requested 22.3 Mb/s from a TAXI 140 SBA-200, where C/I = 0.16): the
//!   linear rule rounding to nearest would give 7 there.
//! - Per-VC pacing ([`super::VcPacing`]) at interval I: cell j at `j·I`,
//!   whatever the adapter's mode. I follows from the rate and what it counts:
//!   `424/R` (cells with headers), `384/R` (cell payloads), or for IP datagrams
//!   `8·L/(R·n)` for a PDU carrying an L-byte datagram in n cells (never below C).
//!
//! # Between PDUs
//!
//! PDUs are segmented one at a time, in FIFO order. A PDU handed over at `now`
//! starts at the latest of:
//! - `now`;
//! - the previous PDU's last cell plus `pdu_gap`, counted from the end of that
//!   cell, or with cell-level spacing on (`Cell`, `PeakCellRate`) from one
//!   spacing interval I after its start: the gap is idle time beyond the
//!   spacing interval (docs/design.md §5; the era's conformance analyses count it so);
//! - for an unpaced circuit, what the spacing asks of the previous unpaced PDU:
//!   I after its last cell's start (`PeakCellRate`, `Cell`), P after its first
//!   cell's start (`Packet`), P after its last burst's start (`CellBurst`);
//! - for a paced circuit, its interval after the start of its own previous cell.
//!
//! So a spaced or paced stream keeps its rate across PDU boundaries too.

use super::{AdapterRt, AdapterSpec, PacedQuantity, TxSpacing, VcPacing};
use crate::atm::phy::CELL_BITS;
use crate::time::{BitRate, SimTime};
use std::fmt;

/// The idle-time granularity of cell-level spacing (0.492 µs).
pub const CELL_SPACING_UNIT: SimTime = SimTime(492_000);
/// The host buffer size [`super::Network::send`] assumes: the 1 KB cluster
/// mbufs the SBus adapter's stalls were measured with (docs/design.md §5).
pub const HOST_BUFFER_BYTES: u64 = 1024;

/// The host adapters of the studies (docs/design.md §5), each with its own timing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AdapterModel {
    /// Fore SBA-100: the first-generation SBus adapter (AAL5 in hardware, data
    /// moved by programmed I/O), the SPARCstation IPC's in the LAN study.
    Sba100,
    /// Fore SBA-200: SBus, an i960 doing AAL5 segmentation from host memory
    /// by DMA; the firmware spaces cells (driver 2.2.9: cell level; 2.3.0:
    /// cell bursts).
    Sba200,
    /// Fore PCA-200: PCI (the Pentium PCs of the heterogeneous LAN).
    Pca200,
    /// Fore VMA-200: VME (the SGI Power Challenge).
    Vma200,
    /// DEC OTTO: TURBOchannel, per-VC pacing by a schedule of cell slots (the
    /// MAGIC Alphas).
    Otto,
}

/// How a host's driver spaces its cells, for the adapter timing that depends
/// on it (`TxSpacing` says how exactly).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SpacingMode {
    /// Back to back at the line rate.
    Unspaced,
    /// Cell-level spacing (SBA-200 driver 2.2.9).
    CellLevel,
    /// Cell-burst spacing (SBA-200 driver 2.3.0).
    CellBurst,
}

/// One adapter timing constant and where it comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AdapterTiming {
    /// Idle time between one PDU's last cell and the next PDU's first.
    pub pdu_gap: SimTime,
    /// Whether the pipeline stalls 7–8 cell slots at the end of each 1 KB
    /// cluster mbuf a PDU is gathered from (cell-level spacing only).
    pub stall: bool,
    /// The source, or "none published".
    pub source: &'static str,
}

/// The one table of adapter timing: (adapter, spacing mode) -> gap, stall, source.
/// A host's explicit `pdu_gap_us` overrides the gap. Nothing here is fitted.
const ADAPTER_TIMING: [(AdapterModel, SpacingMode, AdapterTiming); 15] = {
    use AdapterModel::*;
    use SpacingMode::*;
    const NONE: AdapterTiming = AdapterTiming {
        pdu_gap: SimTime::ZERO,
        stall: false,
        source: "none published",
    };
    [
        (Sba100, Unspaced, NONE),
        (Sba100, CellLevel, NONE),
        (Sba100, CellBurst, NONE),
        (
            Sba200,
            Unspaced,
            AdapterTiming {
                // The heterogeneous-LAN study's Ultra-1 pair carried TCP at
                // about 97% of the OC-3c TCP payload rate with 9188-byte MTUs:
                // at most ~16 µs between PDUs (docs/design.md §5,
                // docs/hetero-lan.md). An upper bound, with the hosts' own share of
                // the 3% unknown: no positive gap is justified, so none.
                pdu_gap: SimTime::ZERO,
                stall: false,
                source: "none published: at most ~16 µs (hetero-lan Ultra-1 pair, 97% of OC-3c)",
            },
        ),
        (
            Sba200,
            CellLevel,
            AdapterTiming {
                // Bonaventure et al. (European ATM Pilot): about 52 µs between
                // PDUs with the cell-spacing firmware (driver 2.2.9), measured
                // with UDP as a lower bound and attributed to the firmware, so
                // TCP segments see it too; and the 7–8-slot pipeline stall at
                // the 1 KB cluster mbufs of 8 KB UDP datagrams (docs/design.md §5).
                pdu_gap: SimTime::from_us(52),
                stall: true,
                source: "European ATM Pilot study, driver 2.2.9 (docs/design.md §5): ~52 µs, \
                         7-8 slot stall per 1 KB cluster mbuf",
            },
        ),
        (
            Sba200,
            CellBurst,
            AdapterTiming {
                // The same study's cell-tester trace of driver 2.3.0 gives the
                // bursts (6 cells, ~40 slots apart) and no gap or stall.
                pdu_gap: SimTime::ZERO,
                stall: false,
                source: "none published for driver 2.3.0 (European ATM Pilot study)",
            },
        ),
        (Pca200, Unspaced, NONE),
        (Pca200, CellLevel, NONE),
        (Pca200, CellBurst, NONE),
        (Vma200, Unspaced, NONE),
        (Vma200, CellLevel, NONE),
        (Vma200, CellBurst, NONE),
        (Otto, Unspaced, NONE),
        (Otto, CellLevel, NONE),
        (Otto, CellBurst, NONE),
    ]
};

impl AdapterModel {
    /// Every model, by its language name.
    pub const ALL: [(AdapterModel, &'static str); 5] = [
        (AdapterModel::Sba100, "sba100"),
        (AdapterModel::Sba200, "sba200"),
        (AdapterModel::Pca200, "pca200"),
        (AdapterModel::Vma200, "vma200"),
        (AdapterModel::Otto, "otto"),
    ];

    pub fn name(self) -> &'static str {
        AdapterModel::ALL
            .iter()
            .find(|(m, _)| *m == self)
            .map(|(_, n)| *n)
            .expect("every model is named")
    }

    pub fn by_name(name: &str) -> Option<AdapterModel> {
        AdapterModel::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(m, _)| *m)
    }

    /// The adapter a host profile (docs/design.md §6.3) had in its study: the SPARCs'
    /// SBus adapters (the IPC's first-generation SBA-100; SBA-200 for the
    /// SPARCstation 10/20 and Ultra-1), the Pentiums' PCA-200 (PCI adapters;
    /// docs/mechanisms.md, "Adapters"), the Power Challenge's VMA-200, the
    /// Alphas' OTTO.
    /// `None` for a profile this table does not know.
    pub fn of_profile(profile: &str) -> Option<AdapterModel> {
        Some(match profile {
            "sparc-ipc" => AdapterModel::Sba100,
            "sparc-10" | "sparc-20" | "ultra-1" => AdapterModel::Sba200,
            "pentium-90" | "pentium-100" => AdapterModel::Pca200,
            "power-challenge" => AdapterModel::Vma200,
            "alpha-3000" => AdapterModel::Otto,
            _ => return None,
        })
    }

    /// This adapter's timing under a spacing mode ([`ADAPTER_TIMING`]).
    pub fn timing(self, mode: SpacingMode) -> AdapterTiming {
        ADAPTER_TIMING
            .iter()
            .find(|(m, s, _)| *m == self && *s == mode)
            .map(|(.., t)| *t)
            .expect("the table has every adapter and mode")
    }
}
/// Payload bytes per cell.
const CELL_PAYLOAD: u64 = 48;

/// The unit the stall was published in: a cell slot of the 155.52 Mb/s ATM
/// tester that timed it (424 bits / 155.52 Mb/s = 2.726337 µs; docs/design.md §5). The
/// stall is kept in that absolute time whatever the sender's own link (the
/// measured sender was on TAXI 140, whose cell slot is 3.03 µs): read as
/// "7–8 tester slots", it is also about one spacing interval at the requested
/// 22.3 Mb/s (19.01 µs), a missed transmit opportunity; one published point
/// cannot tell the two readings apart, and this one keeps the number as measured.
pub const STALL_SLOT: SimTime = SimTime(2_726_337);

/// The PDU's `b`-th stall (1-based), in tester slots: 7, 8, 7, 8, ….
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
    /// `rate`: bursts of `k = 6 + ⌊5·C/interval⌋` cells every `k·interval`
    /// (the module doc says why the floor).
    pub fn cell_burst(rate: BitRate, interval: SimTime) -> Result<TxSpacing, SpacingError> {
        let c = cell_time_of(rate)?;
        if interval < c {
            return Err(SpacingError::TooFine {
                requested: interval,
                cell_time: c,
            });
        }
        // ⌊5C/I⌋: C <= I so it is 0..=5.
        let k = 6 + (5 * c.0 as u128) / (interval.0 as u128);
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

    /// How long after its last cell's start a PDU ends, for the PDU gap that
    /// follows: the cell time, or with cell-level spacing on one spacing
    /// interval, so that the gap is idle time beyond the spacing (docs/design.md §5).
    fn gap_origin(&self, cell: SimTime) -> SimTime {
        match self {
            TxSpacing::PeakCellRate { .. } | TxSpacing::Cell { .. } => self.mean_interval(cell),
            TxSpacing::None | TxSpacing::Packet { .. } | TxSpacing::CellBurst { .. } => cell,
        }
    }
}

impl VcPacing {
    /// The start-to-start interval of the cells of a PDU of `ncells` cells
    /// carrying `payload_len` CPCS payload bytes, at least the link's cell time
    /// `cell`: for cells and cell payloads the fixed interval; for IP datagrams
    /// the datagram's share, `interval × L / (48·n)` for an L-byte datagram,
    /// so that its bytes flow at the rate.
    pub fn cell_interval(&self, ncells: u32, payload_len: u32, cell: SimTime) -> SimTime {
        let i = match self.counts {
            PacedQuantity::Cells | PacedQuantity::CellPayloads => self.interval,
            PacedQuantity::IpDatagrams { encap_header } => {
                let ip = payload_len.saturating_sub(encap_header) as u128;
                let per = CELL_PAYLOAD as u128 * ncells.max(1) as u128;
                SimTime((self.interval.0 as u128 * ip / per) as u64)
            }
        };
        i.max(cell)
    }
}

/// The host buffers [`super::Network::send`] assumes: 1 KB clusters from the
/// CPCS payload's start, so one ends (and the next begins) at 1024, 2048, …
/// below `payload_len`.
pub(super) fn kilobyte_buffers(payload_len: u32, out: &mut Vec<u32>) {
    out.clear();
    out.extend(
        (1..)
            .map(|b| b * HOST_BUFFER_BYTES as u32)
            .take_while(|&b| b < payload_len),
    );
}

/// Cells `first..first+count` of a PDU start at `offset + k·step` from the PDU's start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct TxRun {
    pub first: u32,
    pub count: u32,
    pub offset: SimTime,
    pub step: SimTime,
}

/// The runs of a PDU of `ncells` cells under `tx` (or at `paced` when the
/// circuit is paced); `buffers` are the CPCS payload offsets, ascending, where
/// a 1 KB cluster mbuf ends and the next host buffer begins. Returns the offset from the PDU's
/// start before which the spacing lets no next PDU start.
/// (Always inlined into `place`, the per-PDU path, whatever else calls it.)
#[inline(always)]
pub(super) fn schedule(
    tx: TxSpacing,
    paced: Option<SimTime>,
    cell: SimTime,
    ncells: u32,
    buffers: &[u32],
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
                let mut stalls = 0u64;
                for &b in buffers {
                    let k = (b as u64 / CELL_PAYLOAD) as u32;
                    // Inside cell 0: set up before the PDU starts (module doc).
                    if k == 0 || k < first || k >= ncells {
                        continue;
                    }
                    if k > first {
                        out.push(TxRun {
                            first,
                            count: k - first,
                            offset,
                            step,
                        });
                        offset += step.times((k - first) as u64);
                        first = k;
                    }
                    stalls += 1;
                    offset += STALL_SLOT.times(stall_cells(stalls));
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
    /// gathered from host buffers whose 1 KB clusters end at `buffers` (CPCS payload offsets)
    /// from this adapter, its cells paced at `paced` or under its own spacing:
    /// what [`AdapterRt::place`] allows (the spacing's constraint and the last
    /// cell plus the PDU gap), for explanations of what bound a transfer.
    pub fn pdu_period(&self, paced: Option<SimTime>, ncells: u32, buffers: &[u32]) -> SimTime {
        let Ok(cell) = cell_time_of(self.rate) else {
            return SimTime::ZERO;
        };
        if ncells == 0 {
            return SimTime::ZERO;
        }
        let mut runs = Vec::new();
        let next = schedule(self.tx, paced, cell, ncells, buffers, &mut runs);
        let last = runs.last().expect("a PDU has a cell");
        let last_start = last.offset + last.step.times(last.count as u64 - 1);
        next.max(last_start + gap_origin(self.tx, paced, cell) + self.pdu_gap)
    }
}

/// Where the PDU gap is counted from, after the last cell's start: a paced
/// circuit's cells are not spaced by the adapter, so from the cell's end.
fn gap_origin(tx: TxSpacing, paced: Option<SimTime>, cell: SimTime) -> SimTime {
    match paced {
        Some(_) => cell,
        None => tx.gap_origin(cell),
    }
}

impl AdapterRt {
    /// Places a PDU handed over at `now` on the access link: fills `runs` and
    /// returns the start of its first cell and the end of its spacing
    /// constraint for the next PDU on the same footing (see the module doc).
    /// `paced` is the circuit's cell interval for this PDU and the earliest
    /// start it allows; `buffers` as for [`schedule`].
    #[inline]
    pub(super) fn place(
        &mut self,
        now: SimTime,
        ncells: u32,
        buffers: &[u32],
        paced: Option<(SimTime, SimTime)>,
        runs: &mut Vec<TxRun>,
    ) -> (SimTime, SimTime) {
        let spaced_from = match paced {
            Some((_, free)) => free,
            None => self.spacing_free,
        };
        let start = now.max(self.free_at).max(spaced_from);
        let interval = paced.map(|p| p.0);
        let next = schedule(self.tx, interval, self.cell, ncells, buffers, runs);
        let last = runs.last().expect("a PDU has a cell");
        let last_start = start + last.offset + last.step.times(last.count as u64 - 1);
        self.free_at = last_start + gap_origin(self.tx, interval, self.cell) + self.gap;
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

    /// Cell start offsets of a PDU gathered from 1 KB host buffers.
    fn starts(tx: TxSpacing, ncells: u32, payload: u32) -> (Vec<u64>, SimTime) {
        let mut kb = vec![];
        kilobyte_buffers(payload, &mut kb);
        starts_gathered(tx, ncells, &kb)
    }

    fn starts_gathered(tx: TxSpacing, ncells: u32, buffers: &[u32]) -> (Vec<u64>, SimTime) {
        let mut runs = vec![];
        let next = schedule(tx, None, C, ncells, buffers, &mut runs);
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
                .map(|&(_, s)| s * STALL_SLOT.0)
                .sum();
            assert_eq!(t, j as u64 * i + extra, "cell {j}");
        }
        assert_eq!(next.0, v[191] + i);
        // A PDU of exactly 1024 bytes of payload needs one buffer: no stall.
        let (v, _) = starts(tx, aal5(1024), 1024);
        assert!(v.windows(2).all(|w| w[1] - w[0] == i));
        let (v, _) = starts(tx, aal5(1025), 1025);
        assert_eq!(v[21] - v[20], i + 7 * STALL_SLOT.0);
    }

    fn aal5(len: u32) -> u32 {
        super::super::aal5_cells(len)
    }

    #[test]
    fn test_cell_burst_rule() {
        // At the line rate: 11; at 16.39 µs on OC-3c: 6 + ⌊0.864⌋ = 6.
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
                burst: 6,
                period: i.times(6)
            }
        );
        assert_eq!(t.mean_interval(C), i);
        // Half the line rate: 6 + ⌊2.5⌋ = 8; a fifth: 7.
        let t = TxSpacing::cell_burst(OC3, C.times(2)).unwrap();
        assert!(matches!(t, TxSpacing::CellBurst { burst: 8, .. }), "{t:?}");
        let t = TxSpacing::cell_burst(OC3, C.times(5)).unwrap();
        assert!(matches!(t, TxSpacing::CellBurst { burst: 7, .. }), "{t:?}");
        let t = TxSpacing::cell_burst(OC3, SimTime::from_ms(10)).unwrap();
        assert!(matches!(t, TxSpacing::CellBurst { burst: 6, .. }));
        let (v, next) = starts(t, 14, 600);
        let p = SimTime::from_ms(10).times(6).0;
        assert_eq!(&v[..7], &[0, C.0, 2 * C.0, 3 * C.0, 4 * C.0, 5 * C.0, p]);
        assert_eq!(v[13], 2 * p + C.0);
        assert_eq!(next.0, 3 * p);
    }

    #[test]
    fn test_cell_burst_gives_the_published_point() {
        // docs/design.md §5: a TAXI 140 SBA-200 with driver 2.3.0 at a requested
        // 22.3 Mb/s at the ATM level: bursts of 6 cells, about 40 slots of the
        // 155 Mb/s tester (424 bits / 155.52 Mb/s = 2.726 µs) between burst
        // starts.
        let taxi140 = BitRate(140_000_000);
        let interval = BitRate(22_300_000).time_for_bits(CELL_BITS);
        let t = TxSpacing::cell_burst(taxi140, interval).unwrap();
        let TxSpacing::CellBurst { burst, period } = t else {
            panic!("{t:?}")
        };
        assert_eq!(burst, 6);
        let slots = period.as_us_f64() / (424.0 / 155.52);
        assert!((38.0..=44.0).contains(&slots), "{slots} slots");
        // Cells 0..5 back to back at the TAXI's cell time, the 7th a period on.
        let c = taxi140.time_for_bits(CELL_BITS);
        let mut runs = vec![];
        schedule(t, None, c, 172, &[], &mut runs);
        assert!(runs.iter().all(|r| r.step == c));
        assert_eq!(runs.len(), 172usize.div_ceil(6));
        assert_eq!(runs[1].offset, period);
    }

    #[test]
    fn test_adapter_timing_table() {
        use AdapterModel::*;
        use SpacingMode::*;
        // Every entry names its source; only the SBA-200 with cell-level
        // spacing (driver 2.2.9) has a gap and a stall.
        for (m, name) in AdapterModel::ALL {
            assert_eq!(AdapterModel::by_name(name), Some(m));
            assert_eq!(m.name(), name);
            for mode in [Unspaced, CellLevel, CellBurst] {
                let t = m.timing(mode);
                assert!(!t.source.is_empty());
                let published = (m, mode) == (Sba200, CellLevel);
                assert_eq!(t.pdu_gap > SimTime::ZERO, published, "{name} {mode:?}");
                assert_eq!(t.stall, published, "{name} {mode:?}");
                if !published {
                    assert!(t.source.starts_with("none published"), "{}", t.source);
                }
            }
        }
        assert_eq!(Sba200.timing(CellLevel).pdu_gap, SimTime::from_us(52));
        // The unspaced SBA-200's bound: at most ~16 µs, taken as none.
        assert_eq!(Sba200.timing(Unspaced).pdu_gap, SimTime::ZERO);
        assert!(Sba200.timing(Unspaced).source.contains("16"));
        assert_eq!(AdapterModel::by_name("sba-200"), None);
        // Each profile's adapter.
        for (p, m) in [
            ("sparc-ipc", Sba100),
            ("sparc-10", Sba200),
            ("ultra-1", Sba200),
            ("pentium-90", Pca200),
            ("power-challenge", Vma200),
            ("alpha-3000", Otto),
        ] {
            assert_eq!(AdapterModel::of_profile(p), Some(m), "{p}");
        }
        for p in crate::host::profile::HostProfile::names() {
            assert!(AdapterModel::of_profile(p).is_some(), "{p}");
        }
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

    fn adapter(tx: TxSpacing, gap: SimTime) -> AdapterRt {
        AdapterRt {
            cell: C,
            delay: SimTime::ZERO,
            tx,
            gap,
            ifq: crate::sim::net::ifq::Ifq::new(50),
            free_at: SimTime::ZERO,
            spacing_free: SimTime::ZERO,
        }
    }

    #[test]
    fn test_gap_is_idle_time_beyond_the_spacing_interval() {
        // docs/design.md §5: with cell-level spacing on, the next PDU's first cell leaves
        // one spacing interval plus the gap after the previous PDU's last cell.
        let gap = SimTime::from_us(52);
        let tx = TxSpacing::Cell {
            idle_units: 27,
            host_buffer_stall: false,
        };
        let i = SimTime(C.0 + 27 * 492_000);
        let mut ad = adapter(tx, gap);
        let mut runs = vec![];
        let (s0, _) = ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        let last = s0 + i.times(3);
        let (s1, _) = ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        assert_eq!(s1, last + i + gap);
        // The same at a peak cell rate, and with no gap the spacing alone.
        let pcr = TxSpacing::PeakCellRate { interval: i };
        let mut ad = adapter(pcr, gap);
        ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        let (s1, _) = ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        assert_eq!(s1, i.times(3) + i + gap);
        let mut ad = adapter(tx, SimTime::ZERO);
        ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        let (s1, _) = ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        assert_eq!(s1, i.times(4));
        // Back to back, and for a paced circuit, the gap follows the last
        // cell's end.
        let mut ad = adapter(TxSpacing::None, gap);
        ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        let (s1, _) = ad.place(SimTime::ZERO, 4, &[], None, &mut runs);
        assert_eq!(s1, C.times(4) + gap);
        let mut ad = adapter(tx, gap);
        let paced = Some((i, SimTime::ZERO));
        let (_, free) = ad.place(SimTime::ZERO, 4, &[], paced, &mut runs);
        let (s1, _) = ad.place(SimTime::ZERO, 4, &[], Some((i, free)), &mut runs);
        assert_eq!(s1, i.times(3) + C + gap);
        // pdu_period says the same as place.
        let spec = AdapterSpec {
            rate: OC3,
            delay: SimTime::ZERO,
            tx,
            pdu_gap: gap,
            tx_queue_pdus: 50,
        };
        assert_eq!(spec.pdu_period(None, 4, &[]), i.times(4) + gap);
    }

    #[test]
    fn test_stalls_at_the_host_buffers_a_pdu_is_gathered_from() {
        let tx = TxSpacing::Cell {
            idle_units: 27,
            host_buffer_stall: true,
        };
        let i = C.0 + 27 * 492_000;
        // A 9188-byte payload whose 1 KB cluster mbufs end at CPCS offsets 40,
        // 1040 and 5136: the first boundary (in cell 0) stalls nothing, the
        // next buffers begin in cells 1040 / 48 = 21 and 5136 / 48 = 107.
        let (v, next) = starts_gathered(tx, 192, &[40, 1040, 5136]);
        for (j, &t) in v.iter().enumerate() {
            let stall = match j {
                0..=20 => 0,
                21..=106 => 7,
                _ => 15,
            };
            assert_eq!(t, j as u64 * i + stall * STALL_SLOT.0, "cell {j}");
        }
        assert_eq!(next.0, v[191] + i);
        // Stall off: no stall anywhere.
        let off = TxSpacing::Cell {
            idle_units: 27,
            host_buffer_stall: false,
        };
        let (v, _) = starts_gathered(off, 192, &[40, 1040, 5136]);
        assert!(v.windows(2).all(|w| w[1] - w[0] == i));
        // A cluster ending with cell 0: a stall before cell 1. Two clusters
        // ending in one cell stall twice.
        let (v, _) = starts_gathered(tx, 10, &[48, 100, 140]);
        assert_eq!(v[1] - v[0], i + 7 * STALL_SLOT.0);
        assert_eq!(v[2] - v[1], i + (8 + 7) * STALL_SLOT.0);
        // Back to back, the buffers change nothing.
        let (v, _) = starts_gathered(TxSpacing::None, 10, &[48, 100]);
        assert_eq!(v, (0..10).map(|j| j * C.0).collect::<Vec<_>>());
        // Each stall delays the next PDU as much (it starts after the last cell).
        let spec = AdapterSpec {
            rate: OC3,
            delay: SimTime::ZERO,
            tx,
            pdu_gap: SimTime::from_us(52),
            tx_queue_pdus: 50,
        };
        let bare = spec.pdu_period(None, 192, &[]);
        assert_eq!(
            spec.pdu_period(None, 192, &[40, 1040, 5136]),
            bare + STALL_SLOT.times(15)
        );
    }

    #[test]
    fn test_pacing_counts_cells_payloads_or_datagrams() {
        // 53.0 Mb/s of cells: a 424-bit cell every 8 µs; of payloads, 384 bits
        // every 7.2453 µs; of IP datagrams, a 9180-byte datagram in 192 cells
        // (LLC/SNAP) takes 9180·8 / 53e6 s, spread over its cells.
        let rate = BitRate(53_000_000);
        let cells = VcPacing::of(0, rate, PacedQuantity::Cells).unwrap();
        assert_eq!(cells.cell_interval(192, 9188, C), SimTime::from_us(8));
        let payloads = VcPacing::of(0, rate, PacedQuantity::CellPayloads).unwrap();
        assert_eq!(
            payloads.cell_interval(192, 9188, C),
            rate.time_for_bits(384)
        );
        let ip = PacedQuantity::IpDatagrams { encap_header: 8 };
        let dgrams = VcPacing::of(0, rate, ip).unwrap();
        let per_pdu = dgrams.cell_interval(192, 9188, C).times(192).as_secs_f64();
        assert!((per_pdu - 9180.0 * 8.0 / 53e6).abs() < 1e-9, "{per_pdu}");
        // A 40-byte ACK in one cell: its 320 bits at the rate.
        let ack = dgrams.cell_interval(1, 48, C).as_secs_f64();
        assert!((ack - 320.0 / 53e6).abs() < 1e-11, "{ack}");
        // Never faster than the link.
        let fast = VcPacing::of(0, BitRate(130_000_000), ip).unwrap();
        assert_eq!(fast.cell_interval(1, 9, C), C);
        assert!((cells.rate_bps() - 53e6).abs() < 1.0);
        assert!((payloads.rate_bps() - 53e6).abs() < 1.0);
    }
}
