//! The ATM layer's numbers: physical-layer rates, traffic contracts (GCRA) and
//! the closed-form calculators engineers used to size ATM paths.

pub mod calc;
pub mod gcra;
pub mod phy;
