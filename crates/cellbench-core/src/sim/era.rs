//! The era's constants: what the mid-1990s testbeds had when an experiment says nothing
//! (a workgroup switch's port buffer, BSD's interface queue, a machine room's fibre),
//! shared by the run spec's defaults and the testbed presets.

use crate::time::SimTime;

/// Propagation in fibre: 5 µs per km.
pub const FIBRE_PS_PER_M: u64 = 5_000;

/// The ATM Forum era's workgroup switch: 256 cells per output port.
pub const DEFAULT_PORT_BUFFER_CELLS: u32 = 256;
/// BSD's interface queue limit (ifq_maxlen).
pub const IFQ_MAXLEN: usize = 50;
/// A few metres of fibre in a machine room: 20 m at 5 ns/m.
pub const MACHINE_ROOM_DELAY: SimTime = SimTime(20 * FIBRE_PS_PER_M);
