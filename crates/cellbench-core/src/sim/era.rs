//! The era's constants: what the mid-1990s testbeds had when an experiment says nothing
//! (a workgroup switch's port buffer, BSD's interface queue, a machine room's fibre),
//! shared by the run spec's defaults and the testbed presets.

use crate::time::SimTime;

/// Propagation in fibre: 5 µs per km.
pub const FIBRE_PS_PER_M: u64 = 5_000;

/// The ATM Forum era's workgroup switch: 256 cells per output port.
pub const DEFAULT_PORT_BUFFER_CELLS: u32 = 256;
/// EPD's threshold when a switch sets none, cells queued: an *assumption*. The
/// papers give none (004 says only that second-generation switches implement
/// EPD); 200 of the 256-cell buffer leaves 56 cells for the PDUs already let in,
/// and is the threshold cellbench's testbeds have always had. Its range is
/// 1..=buffer_cells; the ubr study's epd-threshold part sweeps 1/8..9/10 of a buffer.
pub const DEFAULT_EPD_THRESHOLD_CELLS: u32 = 200;
/// BSD's interface queue limit (ifq_maxlen).
pub const IFQ_MAXLEN: usize = 50;
/// A few metres of fibre in a machine room: 20 m at 5 ns/m.
pub const MACHINE_ROOM_DELAY: SimTime = SimTime(20 * FIBRE_PS_PER_M);
