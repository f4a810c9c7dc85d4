//! TCP sequence numbers: 32-bit, compared modulo 2^32 (4.3BSD SEQ_LT and friends).

use std::fmt;
use std::ops::{Add, Sub};

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Seq(pub u32);

impl Seq {
    /// SEQ_LT: `self` comes before `other` on the sequence circle.
    pub fn lt(self, other: Seq) -> bool {
        (self.0.wrapping_sub(other.0) as i32) < 0
    }
    pub fn le(self, other: Seq) -> bool {
        (self.0.wrapping_sub(other.0) as i32) <= 0
    }
    pub fn gt(self, other: Seq) -> bool {
        other.lt(self)
    }
    pub fn ge(self, other: Seq) -> bool {
        other.le(self)
    }
    pub fn max(self, other: Seq) -> Seq {
        if self.lt(other) {
            other
        } else {
            self
        }
    }
}

impl Add<u32> for Seq {
    type Output = Seq;
    fn add(self, n: u32) -> Seq {
        Seq(self.0.wrapping_add(n))
    }
}

/// The signed distance `self - other` (bytes between two sequence numbers).
impl Sub for Seq {
    type Output = i64;
    fn sub(self, other: Seq) -> i64 {
        self.0.wrapping_sub(other.0) as i32 as i64
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn comparisons_wrap() {
        let a = Seq(u32::MAX - 10);
        let b = a + 20;
        assert!(a.lt(b) && b.gt(a) && a.le(a) && b - a == 20 && a - b == -20);
    }
}
