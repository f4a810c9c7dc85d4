//! Simulator benchmarks (filled in with the simulator).
fn main() {}
