//! Which block a source writes next and when it is due: a fixed block every
//! fixed period (NetSpec's burst), or sizes and inter-block times drawn anew
//! for every block (NetSpec's random-rate traffic) from one stream per
//! connection, the same in every engine, so that one seed names one schedule.

use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::time::Duration;

use super::law::{Dist, Law, Param};
use crate::rng;

/// One connection's random-rate draws: its block sizes and inter-block times
/// come from one stream, the one the run's seed and replication give the
/// connection ([`rng::ids::app`]), whichever engine runs it.
///
/// The order of draws is the simulator's: a source draws the time to its next
/// block when a block falls due, and a block's size when it starts writing
/// it. While the source keeps up (each block written before the next falls
/// due) they alternate, interval then size, as [`Schedule`] lays them out; a
/// simulated `burst` source that skips a block draws no size for it.
#[derive(Clone, Debug)]
pub struct Draws {
    rng: ChaCha8Rng,
}

impl Draws {
    /// Connection `connection`'s draws in replication `replication` of a run seeded `seed`.
    pub fn connection(seed: u64, replication: u32, connection: usize) -> Draws {
        Draws::from(rng::stream(seed, replication, rng::ids::app(connection)))
    }

    /// µs from the block falling due now to the next one: `period_us`, or drawn from it.
    pub fn interval_us(&mut self, period_us: Dist) -> f64 {
        period_us.sample(&mut self.rng)
    }

    /// The length of the block starting now: drawn from `size` (bytes, rounded,
    /// 1 to `max`), or `max` when the size is fixed.
    pub fn block_len(&mut self, size: Option<Dist>, max: u64) -> u64 {
        match size {
            Some(d) => (d.sample(&mut self.rng).round() as u64).clamp(1, max),
            None => max,
        }
    }
}

/// Draws from a stream the caller derived (the simulator derives each
/// transfer's beside its hosts' streams).
impl From<ChaCha8Rng> for Draws {
    fn from(rng: ChaCha8Rng) -> Draws {
        Draws { rng }
    }
}

/// Random-rate traffic: the laws, and where the draws come from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSpec {
    /// Bytes per write, drawn for every block (capped by the spec's `blocksize`).
    #[serde(default)]
    pub blocksize: Option<Law>,
    /// µs from one block's due time to the next's, drawn for every block.
    #[serde(default)]
    pub period_us: Option<Law>,
    pub seed: u64,
    #[serde(default)]
    pub replication: u32,
    /// The connection's index in its experiment (the simulator's transfer number).
    pub connection: usize,
}

/// One block: its length, when it is due (from the first block's due time),
/// and how long until the next one is due (a block starting later than that is late).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    pub len: usize,
    pub due: Option<Duration>,
    pub interval: Option<Duration>,
}

/// The blocks a source that keeps up writes, one after another.
pub struct Schedule {
    max: usize,
    size: Option<Dist>,
    period_us: Option<Dist>,
    draws: Draws,
    /// µs from the first due time to the next block's.
    next_due_us: f64,
}

impl Schedule {
    /// `blocksize`: the fixed size, or the cap of a drawn one; `period_us`: the fixed
    /// period (none: full blast) unless `random` draws it.
    pub fn new(blocksize: usize, period_us: Option<f64>, random: Option<&RandomSpec>) -> Schedule {
        let law = |l: Option<Law>| l.map(|l| Param::Law(l).dist());
        let (size, drawn_period, draws) = match random {
            Some(r) => (
                law(r.blocksize),
                law(r.period_us),
                Draws::connection(r.seed, r.replication, r.connection),
            ),
            None => (None, None, Draws::connection(0, 0, 0)),
        };
        Schedule {
            max: blocksize,
            size,
            period_us: drawn_period.or(period_us.map(Dist::Fixed)),
            draws,
            next_due_us: 0.0,
        }
    }

    /// The next block, of at most `left` bytes (None: no limit).
    pub fn next(&mut self, left: Option<u64>) -> Block {
        // Draws' order: the interval to the next block as this one falls due,
        // then this block's size as it is written.
        let (due, interval) = match self.period_us {
            None => (None, None),
            Some(p) => {
                let due = self.next_due_us;
                let gap = self.draws.interval_us(p);
                self.next_due_us += gap;
                (
                    Some(Duration::from_secs_f64(due * 1e-6)),
                    Some(Duration::from_secs_f64(gap * 1e-6)),
                )
            }
        };
        let len = self.draws.block_len(self.size, self.max as u64);
        let len = left.map_or(len, |l| l.min(len)) as usize;
        Block { len, due, interval }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn random(blocksize: Option<Law>, period_us: Option<Law>) -> RandomSpec {
        RandomSpec {
            blocksize,
            period_us,
            seed: 7,
            replication: 0,
            connection: 2,
        }
    }

    #[test]
    fn test_fixed_schedule() {
        let mut s = Schedule::new(1000, Some(250.0), None);
        let b: Vec<Block> = (0..3).map(|_| s.next(Some(2500))).collect();
        assert_eq!(b[2].due, Some(Duration::from_micros(500)));
        assert!(b
            .iter()
            .all(|x| x.len == 1000 && x.interval == Some(Duration::from_micros(250))));
        assert_eq!(s.next(Some(10)).len, 10);
        assert_eq!(
            Schedule::new(64, None, None).next(None),
            Block {
                len: 64,
                due: None,
                interval: None
            }
        );
    }

    #[test]
    fn test_drawn_sizes_and_periods_follow_their_laws() {
        let r = random(
            Some(Law::Uniform([100.0, 300.0])),
            Some(Law::Exponential(1000.0)),
        );
        let mut s = Schedule::new(300, None, Some(&r));
        let n = 20_000;
        let blocks: Vec<Block> = (0..n).map(|_| s.next(None)).collect();
        assert!(blocks.iter().all(|b| (100..=300).contains(&b.len)));
        let mean_len = blocks.iter().map(|b| b.len as f64).sum::<f64>() / n as f64;
        assert!((mean_len - 200.0).abs() < 3.0, "{mean_len}");
        let last = blocks[n - 1].due.unwrap().as_secs_f64() * 1e6;
        let mean_gap = last / (n - 1) as f64;
        assert!((mean_gap - 1000.0).abs() < 30.0, "{mean_gap}");
        // Due times add up the drawn intervals.
        for w in blocks.windows(2) {
            let d = w[1].due.unwrap().as_secs_f64() - w[0].due.unwrap().as_secs_f64();
            assert!((d - w[0].interval.unwrap().as_secs_f64()).abs() < 3e-9);
        }
    }

    #[test]
    fn test_one_seed_one_schedule() {
        let r = random(
            Some(Law::Exponential(500.0)),
            Some(Law::Uniform([10.0, 20.0])),
        );
        let draw = |r: &RandomSpec| {
            let mut s = Schedule::new(65507, None, Some(r));
            (0..50).map(|_| s.next(None)).collect::<Vec<_>>()
        };
        assert_eq!(draw(&r), draw(&r));
        let other = RandomSpec {
            connection: 3,
            ..r.clone()
        };
        assert_ne!(draw(&r), draw(&other));
    }
}
