//! Traffic contracts and their policing: the Generic Cell Rate Algorithm.
//!
//! GCRA(T, τ) (ITU-T I.371, ATM Forum TM 4.0 §4.4.3) is given two ways, which
//! must agree cell for cell (a property test below checks it):
//! - virtual scheduling: a cell at t_a is non-conforming if t_a < TAT − τ (TAT
//!   unchanged); otherwise TAT ← max(t_a, TAT) + T;
//! - continuous-state leaky bucket: X' = X − (t_a − LCT); non-conforming if
//!   X' > τ (state unchanged); otherwise X ← max(0, X') + T, LCT ← t_a.
//!
//! All arithmetic is in integer picoseconds. Arrival times should be
//! nondecreasing (they are instants on one link); earlier ones are still
//! handled without panicking, and both algorithms still agree on them.
//! Sums saturate at `SimTime::MAX` (213 days), far beyond any experiment.
//!
//! A contract is CBR (one GCRA on the peak cell rate) or VBR (the dual GCRA of
//! TM 4.0: peak and sustainable rate; a cell conforms only if it conforms to
//! both, and a non-conforming cell updates neither).

use crate::time::{SimTime, PS_PER_SEC};
use core::fmt;

/// Why contract parameters were refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ContractError {
    /// The increment T must be > 0 (a cell rate must be finite).
    ZeroIncrement,
    /// A cell rate of 0 cells/s.
    ZeroRate { what: &'static str },
    /// SCR above PCR (both as emission intervals T_SCR < T_PCR, in ps).
    ScrAbovePcr { t_scr: SimTime, t_pcr: SimTime },
    /// A maximum burst size of 0 cells.
    ZeroMbs,
}

impl fmt::Display for ContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ContractError::ZeroIncrement => {
                write!(f, "GCRA increment T = 0 µs not allowed: T must be > 0")
            }
            ContractError::ZeroRate { what } => {
                write!(f, "{what} = 0 cells/s not allowed: a cell rate must be > 0")
            }
            ContractError::ScrAbovePcr { t_scr, t_pcr } => write!(
                f,
                "SCR above PCR not allowed: 1/SCR = {} µs is shorter than 1/PCR = {} µs \
                 (SCR must be <= PCR)",
                t_scr.as_us_f64(),
                t_pcr.as_us_f64()
            ),
            ContractError::ZeroMbs => {
                write!(
                    f,
                    "maximum burst size 0 cells not allowed: MBS must be >= 1"
                )
            }
        }
    }
}

impl std::error::Error for ContractError {}

/// A cell rate, held as its emission interval T = 1/rate in picoseconds (what
/// the GCRA uses), so that a rate given either way is exact.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRate(SimTime);

impl CellRate {
    /// From cells per second (as UNI signalling encodes PCR and SCR). T is
    /// rounded down to the picosecond, so a source spaced at exactly this rate
    /// (cell times also rounded down) conforms.
    pub fn from_cells_per_sec(
        what: &'static str,
        cells_per_sec: u64,
    ) -> Result<CellRate, ContractError> {
        if cells_per_sec == 0 {
            return Err(ContractError::ZeroRate { what });
        }
        CellRate::from_interval(SimTime(PS_PER_SEC / cells_per_sec))
    }

    /// From the emission interval T (> 0).
    pub fn from_interval(t: SimTime) -> Result<CellRate, ContractError> {
        if t == SimTime::ZERO {
            return Err(ContractError::ZeroIncrement);
        }
        Ok(CellRate(t))
    }

    /// The emission interval T = 1/rate.
    pub const fn interval(self) -> SimTime {
        self.0
    }

    /// Cells per second (for display).
    pub fn cells_per_sec(self) -> f64 {
        PS_PER_SEC as f64 / self.0.as_ps() as f64
    }
}

/// The parameters of GCRA(T, τ): increment T > 0 and limit τ ≥ 0.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gcra {
    increment: SimTime,
    limit: SimTime,
}

impl Gcra {
    pub fn new(increment: SimTime, limit: SimTime) -> Result<Gcra, ContractError> {
        if increment == SimTime::ZERO {
            return Err(ContractError::ZeroIncrement);
        }
        Ok(Gcra { increment, limit })
    }

    /// T.
    pub const fn increment(&self) -> SimTime {
        self.increment
    }

    /// τ.
    pub const fn limit(&self) -> SimTime {
        self.limit
    }
}

/// One way of running GCRA(T, τ). `conforms` only looks; `commit` updates the
/// state for a conforming cell. They are split so the dual GCRA can ask both
/// halves before letting either change (TM 4.0: a non-conforming cell updates
/// neither).
pub trait GcraAlgorithm {
    /// A fresh state: the first cell conforms.
    fn new(gcra: Gcra) -> Self;
    /// Would a cell arriving at `t_a` conform?
    fn conforms(&self, t_a: SimTime) -> bool;
    /// Account for a conforming cell at `t_a`.
    fn commit(&mut self, t_a: SimTime);
    /// Police one cell: true if it conforms (and then the state is updated).
    fn arrive(&mut self, t_a: SimTime) -> bool {
        let ok = self.conforms(t_a);
        if ok {
            self.commit(t_a);
        }
        ok
    }
}

/// GCRA by virtual scheduling: the theoretical arrival time TAT.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VirtualScheduling {
    gcra: Gcra,
    /// None before the first cell (which always conforms: TAT = t_a).
    tat: Option<SimTime>,
}

impl VirtualScheduling {
    /// The theoretical arrival time of the next cell, if any cell has come.
    pub fn tat(&self) -> Option<SimTime> {
        self.tat
    }
}

impl GcraAlgorithm for VirtualScheduling {
    fn new(gcra: Gcra) -> Self {
        VirtualScheduling { gcra, tat: None }
    }

    fn conforms(&self, t_a: SimTime) -> bool {
        match self.tat {
            None => true,
            // t_a < TAT − τ, rearranged as t_a + τ < TAT so nothing goes below zero.
            Some(tat) => t_a.0.saturating_add(self.gcra.limit.0) >= tat.0,
        }
    }

    fn commit(&mut self, t_a: SimTime) {
        let tat = self.tat.unwrap_or(t_a).max(t_a);
        self.tat = Some(SimTime(tat.0.saturating_add(self.gcra.increment.0)));
    }
}

/// GCRA by the continuous-state leaky bucket: content X, last conformance time LCT.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LeakyBucket {
    gcra: Gcra,
    /// Bucket content X (ps) after the last conforming cell.
    x: u64,
    /// Last conformance time; None before the first cell (X = 0 then anyway).
    lct: Option<SimTime>,
}

impl LeakyBucket {
    /// X' = X − (t_a − LCT), the content drained to `t_a`; may be negative.
    /// i128 holds any difference of two u64 without wrapping.
    fn drained(&self, t_a: SimTime) -> i128 {
        match self.lct {
            None => 0,
            Some(lct) => self.x as i128 - (t_a.0 as i128 - lct.0 as i128),
        }
    }
}

impl GcraAlgorithm for LeakyBucket {
    fn new(gcra: Gcra) -> Self {
        LeakyBucket {
            gcra,
            x: 0,
            lct: None,
        }
    }

    fn conforms(&self, t_a: SimTime) -> bool {
        self.drained(t_a) <= self.gcra.limit.0 as i128
    }

    fn commit(&mut self, t_a: SimTime) {
        let x_prime = self.drained(t_a).max(0);
        // x_prime <= τ + (LCT − t_a)^+ fits in u64 whenever the cell conformed;
        // saturate like virtual scheduling does.
        let x = u64::try_from(x_prime).unwrap_or(u64::MAX);
        self.x = x.saturating_add(self.gcra.increment.0);
        self.lct = Some(t_a);
    }
}

/// A traffic contract (ATM Forum TM 4.0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Contract {
    /// Constant bit rate: GCRA(1/PCR, CDVT).
    Cbr { pcr: CellRate, cdvt: SimTime },
    /// Variable bit rate: GCRA(1/PCR, CDVT) and GCRA(1/SCR, BT + CDVT).
    Vbr {
        pcr: CellRate,
        cdvt: SimTime,
        scr: CellRate,
        bt: SimTime,
    },
}

impl Contract {
    /// A VBR contract with BT from the maximum burst size:
    /// BT = (MBS − 1)(1/SCR − 1/PCR), from the same integer intervals the
    /// GCRA uses, so that exactly MBS cells at PCR pass the SCR bucket.
    pub fn vbr_from_mbs(
        pcr: CellRate,
        cdvt: SimTime,
        scr: CellRate,
        mbs: u64,
    ) -> Result<Contract, ContractError> {
        let bt = burst_tolerance(pcr, scr, mbs)?;
        let c = Contract::Vbr { pcr, cdvt, scr, bt };
        c.check()?;
        Ok(c)
    }

    /// SCR ≤ PCR.
    pub fn check(&self) -> Result<(), ContractError> {
        match *self {
            Contract::Cbr { .. } => Ok(()),
            Contract::Vbr { pcr, scr, .. } => {
                if scr.interval() < pcr.interval() {
                    Err(ContractError::ScrAbovePcr {
                        t_scr: scr.interval(),
                        t_pcr: pcr.interval(),
                    })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// The GCRAs a cell must pass: peak, and for VBR sustainable.
    pub fn gcras(&self) -> (Gcra, Option<Gcra>) {
        match *self {
            Contract::Cbr { pcr, cdvt } => (
                Gcra {
                    increment: pcr.interval(),
                    limit: cdvt,
                },
                None,
            ),
            Contract::Vbr { pcr, cdvt, scr, bt } => (
                Gcra {
                    increment: pcr.interval(),
                    limit: cdvt,
                },
                // TM 4.0: the SCR test tolerates BT plus the CDVT of the path.
                Some(Gcra {
                    increment: scr.interval(),
                    limit: SimTime(bt.0.saturating_add(cdvt.0)),
                }),
            ),
        }
    }
}

/// BT = (MBS − 1)(1/SCR − 1/PCR), in whole picoseconds.
pub fn burst_tolerance(pcr: CellRate, scr: CellRate, mbs: u64) -> Result<SimTime, ContractError> {
    if mbs == 0 {
        return Err(ContractError::ZeroMbs);
    }
    let (t_pcr, t_scr) = (pcr.interval(), scr.interval());
    if t_scr < t_pcr {
        return Err(ContractError::ScrAbovePcr { t_scr, t_pcr });
    }
    Ok(SimTime((mbs - 1).saturating_mul(t_scr.0 - t_pcr.0)))
}

/// What a policer does with a non-conforming cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Discard,
    /// Pass it with CLP = 1 (low priority).
    Tag,
}

/// A policer's verdict on one cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Conforming,
    /// Non-conforming, dropped.
    Discarded,
    /// Non-conforming, passed with CLP set to 1.
    Tagged,
}

impl Verdict {
    pub const fn is_conforming(self) -> bool {
        matches!(self, Verdict::Conforming)
    }
    /// The cell goes on (conforming or tagged).
    pub const fn passes(self) -> bool {
        !matches!(self, Verdict::Discarded)
    }
    /// The CLP bit the cell leaves with, given the one it came with.
    pub const fn clp(self, clp_in: bool) -> bool {
        clp_in || matches!(self, Verdict::Tagged)
    }
}

/// Usage parameter control for one connection: its contract's GCRA(s) and the
/// action on non-conforming cells. Virtual scheduling by default; the leaky
/// bucket gives the same verdicts.
#[derive(Clone, Debug)]
pub struct Policer<A: GcraAlgorithm = VirtualScheduling> {
    peak: A,
    sustained: Option<A>,
    action: Action,
}

impl<A: GcraAlgorithm> Policer<A> {
    pub fn new(contract: &Contract, action: Action) -> Result<Policer<A>, ContractError> {
        contract.check()?;
        let (peak, sustained) = contract.gcras();
        Ok(Policer::from_gcras(peak, sustained, action))
    }

    /// A policer on explicit GCRAs (the second, if any, is the sustainable one).
    pub fn from_gcras(peak: Gcra, sustained: Option<Gcra>, action: Action) -> Policer<A> {
        Policer {
            peak: A::new(peak),
            sustained: sustained.map(A::new),
            action,
        }
    }

    /// Police a cell arriving at `t_a`: it conforms only if it conforms to every
    /// GCRA, and only then does any GCRA's state change.
    pub fn police(&mut self, t_a: SimTime) -> Verdict {
        let ok = self.peak.conforms(t_a) && self.sustained.as_ref().is_none_or(|s| s.conforms(t_a));
        if ok {
            self.peak.commit(t_a);
            if let Some(s) = self.sustained.as_mut() {
                s.commit(t_a);
            }
            Verdict::Conforming
        } else {
            match self.action {
                Action::Discard => Verdict::Discarded,
                Action::Tag => Verdict::Tagged,
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    fn us(x: u64) -> SimTime {
        SimTime::from_us(x)
    }

    fn verdicts<A: GcraAlgorithm>(gcra: Gcra, arrivals: &[SimTime]) -> Vec<bool> {
        let mut a = A::new(gcra);
        arrivals.iter().map(|&t| a.arrive(t)).collect()
    }

    #[test]
    fn test_cbr_worked_example() {
        // GCRA(10 µs, 15 µs), cells at 0, 2, 4, 6, 8, 30 µs.
        // VS by hand: 0 → TAT 10; 2: 2 ≥ 10−15 ok → TAT 20; 4: 4 ≥ 20−15=5? no (non-conf,
        // TAT stays 20); 6: 6 ≥ 5 ok → TAT 30; 8: 8 ≥ 15? no; 30: ok → TAT 40.
        let g = Gcra::new(us(10), us(15)).unwrap();
        let arr: Vec<_> = [0, 2, 4, 6, 8, 30].iter().map(|&t| us(t)).collect();
        let expect = vec![true, true, false, true, false, true];
        assert_eq!(verdicts::<VirtualScheduling>(g, &arr), expect);
        assert_eq!(verdicts::<LeakyBucket>(g, &arr), expect);
    }

    #[test]
    fn test_boundary_is_conforming() {
        // t_a == TAT − τ exactly conforms (the test is strict <).
        let g = Gcra::new(us(10), us(3)).unwrap();
        let arr = [us(0), us(7), SimTime(us(14).0 - 1)];
        // 0 → TAT 10; 7 = 10 − 3 ok → TAT 20; 14 − 1ps < 17 → non-conforming.
        assert_eq!(
            verdicts::<VirtualScheduling>(g, &arr),
            vec![true, true, false]
        );
        assert_eq!(verdicts::<LeakyBucket>(g, &arr), vec![true, true, false]);
    }

    #[test]
    fn test_decreasing_arrivals_do_not_panic() {
        let g = Gcra::new(us(10), us(0)).unwrap();
        let arr = [us(100), us(5), us(0), us(200), SimTime::MAX, SimTime::ZERO];
        assert_eq!(
            verdicts::<VirtualScheduling>(g, &arr),
            verdicts::<LeakyBucket>(g, &arr)
        );
    }

    #[test]
    fn test_errors() {
        assert_eq!(
            Gcra::new(SimTime::ZERO, us(1)),
            Err(ContractError::ZeroIncrement)
        );
        assert_eq!(
            CellRate::from_cells_per_sec("PCR", 0),
            Err(ContractError::ZeroRate { what: "PCR" })
        );
        let pcr = CellRate::from_cells_per_sec("PCR", 1000).unwrap();
        let scr = CellRate::from_cells_per_sec("SCR", 2000).unwrap();
        let e = Contract::vbr_from_mbs(pcr, SimTime::ZERO, scr, 10).unwrap_err();
        assert!(matches!(e, ContractError::ScrAbovePcr { .. }));
        assert!(
            e.to_string().contains("500 µs") && e.to_string().contains("1000 µs"),
            "{e}"
        );
        assert_eq!(burst_tolerance(scr, pcr, 0), Err(ContractError::ZeroMbs));
        assert!(ContractError::ZeroRate { what: "SCR" }
            .to_string()
            .contains("SCR = 0"));
    }

    #[test]
    fn test_pcr_to_interval_and_bt_from_mbs() {
        // PCR 100,000 cells/s → T = 10 µs; SCR 25,000 → 40 µs.
        // BT for MBS 11 = (11 − 1)(40 − 10) µs = 300 µs.
        let pcr = CellRate::from_cells_per_sec("PCR", 100_000).unwrap();
        let scr = CellRate::from_cells_per_sec("SCR", 25_000).unwrap();
        assert_eq!(pcr.interval(), us(10));
        assert_eq!(burst_tolerance(pcr, scr, 11), Ok(us(300)));
        // OC-3c line rate as PCR: 353,207 cells/s → T = 10^12/353207 = 2,831,200.2 ps → 2,831,200.
        assert_eq!(
            CellRate::from_cells_per_sec("PCR", 353_207)
                .unwrap()
                .interval(),
            SimTime(2_831_200)
        );
    }

    #[test]
    fn test_vbr_passes_exactly_mbs_at_pcr() {
        // Cells at PCR (10 µs apart): MBS = 11 pass, the 12th fails the SCR test.
        let pcr = CellRate::from_cells_per_sec("PCR", 100_000).unwrap();
        let scr = CellRate::from_cells_per_sec("SCR", 25_000).unwrap();
        let c = Contract::vbr_from_mbs(pcr, SimTime::ZERO, scr, 11).unwrap();
        let mut p: Policer = Policer::new(&c, Action::Discard).unwrap();
        let v: Vec<_> = (0..12).map(|k| p.police(us(10 * k))).collect();
        assert!(v[..11].iter().all(|v| v.is_conforming()));
        assert_eq!(v[11], Verdict::Discarded);
        // After a pause long enough for the SCR bucket to drain, cells conform again.
        assert_eq!(p.police(us(10_000)), Verdict::Conforming);
    }

    #[test]
    fn test_dual_gcra_nonconforming_updates_neither() {
        // PCR T = 10 µs, CDVT 0; SCR T = 100 µs, BT 0. By hand (TAT_p, TAT_s):
        //   0: conforms → (10, 100).
        //   5: fails PCR (5 < 10). Had SCR been updated, TAT_s = 200 and 100 would fail.
        //  95: passes PCR alone, fails SCR (95 < 100). Had PCR been updated,
        //      TAT_p = 105 and the cell at 100 would fail PCR.
        // 100: conforms to both, since neither state moved for the failures.
        let c = Contract::Vbr {
            pcr: CellRate::from_interval(us(10)).unwrap(),
            cdvt: SimTime::ZERO,
            scr: CellRate::from_interval(us(100)).unwrap(),
            bt: SimTime::ZERO,
        };
        let expect = [
            Verdict::Conforming,
            Verdict::Tagged,
            Verdict::Tagged,
            Verdict::Conforming,
        ];
        let mut vs: Policer = Policer::new(&c, Action::Tag).unwrap();
        let mut lb: Policer<LeakyBucket> = Policer::new(&c, Action::Tag).unwrap();
        for (t, e) in [0, 5, 95, 100].into_iter().zip(expect) {
            assert_eq!(vs.police(us(t)), e, "{t} µs");
            assert_eq!(lb.police(us(t)), e, "{t} µs");
        }
        assert!(Verdict::Tagged.clp(false) && Verdict::Tagged.passes());
        assert!(!Verdict::Conforming.clp(false) && Verdict::Conforming.clp(true));
        assert!(!Verdict::Discarded.passes());
    }

    /// A time unit: 1 ps, 1 ns, 1 µs or an OC-3c cell time. Everything in a
    /// case is a small multiple of it, so ties (t_a == TAT − τ exactly), where
    /// the two algorithms could disagree, are common.
    fn unit() -> impl Strategy<Value = u64> {
        prop_oneof![Just(1u64), Just(1_000), Just(1_000_000), Just(2_831_196)]
    }

    /// A nondecreasing arrival stream: `start` plus cumulative `gaps`, in units.
    fn stream(unit: u64, start: u64, gaps: &[u64]) -> Vec<SimTime> {
        let mut t = start * unit;
        gaps.iter()
            .map(|g| {
                t += g * unit;
                SimTime(t)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn prop_vs_and_leaky_bucket_agree(
            unit in unit(), start in 0u64..1 << 20,
            gaps in prop::collection::vec(0u64..40, 0..300),
            t in 1u64..30, tau in 0u64..100,
        ) {
            let arr = stream(unit, start, &gaps);
            let g = Gcra::new(SimTime(t * unit), SimTime(tau * unit)).unwrap();
            prop_assert_eq!(verdicts::<VirtualScheduling>(g, &arr), verdicts::<LeakyBucket>(g, &arr));
        }

        #[test]
        fn prop_dual_gcra_agrees(
            unit in unit(), start in 0u64..1 << 20,
            gaps in prop::collection::vec(0u64..40, 0..300),
            t_p in 1u64..10, cdvt in 0u64..20, extra in 0u64..30, bt in 0u64..200,
            tag in any::<bool>(),
        ) {
            let arr = stream(unit, start, &gaps);
            let c = Contract::Vbr {
                pcr: CellRate::from_interval(SimTime(t_p * unit)).unwrap(),
                cdvt: SimTime(cdvt * unit),
                scr: CellRate::from_interval(SimTime((t_p + extra) * unit)).unwrap(),
                bt: SimTime(bt * unit),
            };
            let action = if tag { Action::Tag } else { Action::Discard };
            let mut vs: Policer<VirtualScheduling> = Policer::new(&c, action).unwrap();
            let mut lb: Policer<LeakyBucket> = Policer::new(&c, action).unwrap();
            for &t in &arr {
                prop_assert_eq!(vs.police(t), lb.police(t));
            }
        }

        #[test]
        fn prop_arbitrary_times_never_panic(
            arr in prop::collection::vec(any::<u64>(), 0..50), t in 1u64.., tau in any::<u64>(),
        ) {
            let arr: Vec<_> = arr.into_iter().map(SimTime).collect();
            let g = Gcra::new(SimTime(t), SimTime(tau)).unwrap();
            let _ = verdicts::<VirtualScheduling>(g, &arr);
            let _ = verdicts::<LeakyBucket>(g, &arr);
        }
    }
}
