//! The laws of a traffic parameter (NetSpec's random-rate traffic): a block
//! size or an inter-block time, a fixed value or drawn anew for every block
//! from a uniform or exponential law. [`Param`] is how an experiment writes
//! one (the simulator's run spec and the real engine's source spec alike),
//! [`Dist`] what a source draws from.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A traffic parameter: a number, or a law it is drawn from anew for every block
/// (NetSpec's random-rate traffic): `{"uniform": [min, max]}`, `{"exponential": mean}`.
#[derive(Copy, Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a number, {\"uniform\": [min, max]} or {\"exponential\": mean}"
)]
pub enum Param {
    Value(f64),
    Law(Law),
}

/// A law a parameter is drawn from, as an experiment writes it.
#[derive(Copy, Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Law {
    Uniform([f64; 2]),
    Exponential(f64),
}

impl Param {
    pub fn dist(self) -> Dist {
        match self {
            Param::Value(v) => Dist::Fixed(v),
            Param::Law(Law::Uniform([lo, hi])) => Dist::Uniform(lo, hi),
            Param::Law(Law::Exponential(mean)) => Dist::Exponential(mean),
        }
    }
}

/// A value, or a law to draw it from. Units are the parameter's own.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Dist {
    Fixed(f64),
    /// Uniform on [lo, hi].
    Uniform(f64, f64),
    /// Exponential with this mean.
    Exponential(f64),
}

/// A distribution whose parameters make no sense for what it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct BadDist(pub String);

impl fmt::Display for BadDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Dist {
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> f64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform(lo, hi) => lo + (hi - lo) * rng.gen::<f64>(),
            // Inverse transform; 1 - u is in (0, 1], so the log is finite.
            Dist::Exponential(mean) => -mean * (1.0 - rng.gen::<f64>()).ln(),
        }
    }

    /// Every value it can take lies in (0, max] (> 0 and finite).
    pub fn check(&self, what: &str, max: f64) -> Result<(), BadDist> {
        let ok = |v: f64| v.is_finite() && v > 0.0 && v <= max;
        let good = match *self {
            Dist::Fixed(v) => ok(v),
            Dist::Uniform(lo, hi) => ok(lo) && ok(hi) && lo <= hi,
            Dist::Exponential(mean) => ok(mean),
        };
        if good {
            Ok(())
        } else {
            Err(BadDist(format!(
                "{what} {self}: every value must be > 0 and at most {max}"
            )))
        }
    }

    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed(v) | Dist::Exponential(v) => v,
            Dist::Uniform(lo, hi) => (lo + hi) / 2.0,
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Fixed(v) => write!(f, "{v}"),
            Dist::Uniform(lo, hi) => write!(f, "uniform({lo}, {hi})"),
            Dist::Exponential(m) => write!(f, "exponential({m})"),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_have_the_law_s_mean_and_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 20_000;
        let u: Vec<f64> = (0..n)
            .map(|_| Dist::Uniform(10.0, 30.0).sample(&mut rng))
            .collect();
        assert!(u.iter().all(|&x| (10.0..=30.0).contains(&x)));
        let mean = u.iter().sum::<f64>() / n as f64;
        assert!((mean - 20.0).abs() < 0.2, "{mean}");
        let e: Vec<f64> = (0..n)
            .map(|_| Dist::Exponential(5.0).sample(&mut rng))
            .collect();
        let mean = e.iter().sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.15, "{mean}");
        assert!(e.iter().all(|&x| x >= 0.0 && x.is_finite()));
    }

    #[test]
    fn nonsense_parameters_are_refused() {
        assert!(Dist::Uniform(5.0, 1.0).check("blocksize", 1e6).is_err());
        assert!(Dist::Exponential(-1.0).check("period", 1e6).is_err());
        assert!(Dist::Fixed(0.0).check("period", 1e6).is_err());
        let e = Dist::Fixed(70_000.0)
            .check("blocksize", 65_507.0)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "blocksize 70000: every value must be > 0 and at most 65507"
        );
    }
}
