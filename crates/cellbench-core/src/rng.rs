//! Random streams: one master seed plus a replication number; every component
//! draws from its own stream derived from (seed, replication, stream id), so
//! adding a component never perturbs another's draws. The simulator's hosts
//! and transfers draw here, and the real engine's agents draw their
//! connection's stream (`traffic::Draws`), so one seed names one schedule.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// SplitMix64 finaliser: a well-mixed 64-bit value from any input.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream for component `stream` of replication `replication` under `seed`.
pub fn stream(seed: u64, replication: u32, stream: u64) -> ChaCha8Rng {
    let key = mix(mix(seed)
        ^ mix(replication as u64 ^ 0xA5A5_0000_0000_0000)
        ^ mix(stream.wrapping_add(1) << 1));
    ChaCha8Rng::seed_from_u64(key)
}

/// Stream ids of the components that draw.
pub mod ids {
    /// Host `h`'s timer phases.
    pub fn host_timers(h: usize) -> u64 {
        0x1000 + h as u64
    }
    /// Transfer `t`'s application draws (random block sizes and intervals), in
    /// every engine (`traffic::Draws`).
    pub fn app(t: usize) -> u64 {
        0x3000 + t as u64
    }
    /// Host `h`'s processing-time jitter.
    pub fn host_jitter(h: usize) -> u64 {
        0x2000 + h as u64
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = stream(1, 0, 7).next_u64();
        assert_eq!(a, stream(1, 0, 7).next_u64());
        assert_ne!(a, stream(1, 1, 7).next_u64());
        assert_ne!(a, stream(1, 0, 8).next_u64());
        assert_ne!(a, stream(2, 0, 7).next_u64());
    }
}
