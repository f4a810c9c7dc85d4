//! Python bindings: the calculators (cellbench_core::atm). Numbers cross as
//! floats in µs, ms and Mb/s; the core's helpers turn them into integer
//! picoseconds and bits/s, refusing bad values with messages that name them.

use crate::error::value_error;
use cellbench_core::atm::calc::{self, TrainLength};
use cellbench_core::atm::gcra::Gcra;
use cellbench_core::atm::phy::{Framing, Phy};
use cellbench_core::wire::llc_snap::Encap;
use cellbench_core::{BitRate, SimTime};
use pyo3::prelude::*;

const PS_PER_US: u64 = 1_000_000;
const PS_PER_MS: u64 = 1_000_000_000;

fn us(what: &'static str, value: f64, zero_ok: bool) -> PyResult<SimTime> {
    calc::time_from_f64(what, value, PS_PER_US, "µs", zero_ok).map_err(value_error)
}

/// A Python int the core wants as u64, refused here (not as PyO3's
/// OverflowError) when negative or too large, naming the value and `allowed`.
fn whole(what: &str, value: i128, allowed: &str) -> PyResult<u64> {
    u64::try_from(value)
        .map_err(|_| value_error(format!("{what} = {value} not allowed: {allowed}")))
}

fn framing(modelled: bool) -> Framing {
    if modelled {
        Framing::Modelled
    } else {
        Framing::Neglected
    }
}

fn mbps(r: BitRate) -> f64 {
    r.bps() as f64 / 1e6
}

/// (line Mb/s, cell Mb/s, cell time µs, cells/s) of a physical layer.
#[pyfunction]
#[pyo3(signature = (phy, framing = true))]
fn calc_phy(phy: &str, framing: bool) -> PyResult<(f64, f64, f64, f64)> {
    let phy: Phy = phy.parse().map_err(value_error)?;
    let f = self::framing(framing);
    Ok((
        mbps(phy.line_rate()),
        mbps(phy.cell_rate(f)),
        phy.cell_time(f).as_us_f64(),
        phy.cells_per_sec(f),
    ))
}

/// ([(layer, Mb/s)], cells per PDU, MTU used, encapsulation header bytes).
#[pyfunction]
#[pyo3(signature = (phy, encap = "llc-snap", mtu = None, framing = true))]
#[allow(clippy::type_complexity)]
fn calc_layers(
    phy: &str,
    encap: &str,
    mtu: Option<i128>,
    framing: bool,
) -> PyResult<(Vec<(&'static str, f64)>, u64, u64, u64)> {
    let phy: Phy = phy.parse().map_err(value_error)?;
    let encap: Encap = encap.parse().map_err(value_error)?;
    let range = calc::mtu_range(encap);
    let mtu = match mtu {
        None => encap.default_mtu() as u64,
        Some(m) => u64::try_from(m).map_err(|_| {
            let (lo, hi) = (range.start(), range.end());
            value_error(format!(
                "MTU {m} out of range for {encap}: allowed {lo}..={hi}"
            ))
        })?,
    };
    let l = calc::layer_bandwidth(phy, self::framing(framing), encap, mtu).map_err(value_error)?;
    let rows = l.rows().into_iter().map(|(n, r)| (n, mbps(r))).collect();
    Ok((rows, l.cells_per_pdu, mtu, encap.header_len() as u64))
}

/// Longest burst a buffer absorbs, or None (unbounded).
#[pyfunction]
fn calc_buffer_burst(
    buffer_cells: i128,
    in_cell_us: f64,
    out_cell_us: f64,
) -> PyResult<Option<u64>> {
    let l = whole("buffer size in cells", buffer_cells, "must be >= 1")?;
    let ti = us("input cell time", in_cell_us, false)?;
    let to = us("output cell time", out_cell_us, false)?;
    calc::buffer_burst(l, ti, to).map_err(value_error)
}

fn gcra(t_us: f64, tau_us: f64) -> PyResult<Gcra> {
    let t = us("GCRA increment T", t_us, false)?;
    let tau = us("GCRA limit tau", tau_us, true)?;
    Gcra::new(t, tau).map_err(value_error)
}

/// (max burst cells, idle after µs, idle to repeat µs), or None (unbounded).
#[pyfunction]
fn calc_gcra_burst(t_us: f64, tau_us: f64, cell_us: f64) -> PyResult<Option<(u64, f64, f64)>> {
    let g = gcra(t_us, tau_us)?;
    let tj = us("cell interval", cell_us, false)?;
    Ok(calc::gcra_burst(g, tj).map_err(value_error)?.map(|b| {
        (
            b.max_burst_cells,
            b.idle_after.as_us_f64(),
            b.idle_to_repeat.as_us_f64(),
        )
    }))
}

/// (first failure as (pdu, cell, arrival µs) or None, non-conforming cells or
/// None). `pdus` None: the steady state.
#[pyfunction]
#[pyo3(signature = (cells_per_pdu, cell_us, gap_us, t_us, tau_us, pdus = None))]
#[allow(clippy::type_complexity)]
fn calc_train(
    py: Python<'_>,
    cells_per_pdu: i128,
    cell_us: f64,
    gap_us: f64,
    t_us: f64,
    tau_us: f64,
    pdus: Option<i128>,
) -> PyResult<(Option<(u64, u64, f64)>, Option<u64>)> {
    let train = calc::PduTrain {
        cells_per_pdu: whole("cells per PDU", cells_per_pdu, "must be >= 1")?,
        cell_interval: us("cell interval", cell_us, false)?,
        gap: us("inter-PDU gap", gap_us, true)?,
    };
    let g = gcra(t_us, tau_us)?;
    let length = match pdus {
        None => TrainLength::SteadyState,
        Some(k) => TrainLength::Pdus(whole("number of PDUs", k, "must be >= 1")?),
    };
    // Up to 10^8 cells: let other Python threads run meanwhile.
    let r = py
        .allow_threads(|| calc::train_conformance(&train, g, length))
        .map_err(value_error)?;
    let first = r
        .first_failure
        .map(|c| (c.pdu, c.cell, c.arrival.as_us_f64()));
    Ok((first, r.non_conforming_cells))
}

/// (window rate Mb/s, throughput bound Mb/s, "window"|"link", BDP bytes or None).
#[pyfunction]
#[pyo3(signature = (window_bytes, rtt_ms, rate_mbps = None))]
fn calc_window(
    window_bytes: i128,
    rtt_ms: f64,
    rate_mbps: Option<f64>,
) -> PyResult<(f64, f64, &'static str, Option<u64>)> {
    let w = whole("window", window_bytes, "must be >= 1 byte")?;
    let rtt = calc::time_from_f64("round-trip time", rtt_ms, PS_PER_MS, "ms", false)
        .map_err(value_error)?;
    let link = rate_mbps
        .map(|r| calc::rate_from_mbps("link rate", r))
        .transpose()
        .map_err(value_error)?;
    let b = calc::window_bound(w, rtt, link).map_err(value_error)?;
    let limit = match b.limited_by {
        calc::Limit::Window => "window",
        calc::Limit::Link => "link",
    };
    Ok((mbps(b.window_rate), mbps(b.throughput), limit, b.bdp_bytes))
}

/// The simple window model: per ACK policy (name, usable window bytes,
/// throughput Mb/s, limited by).
#[pyfunction]
fn calc_window_model(
    window_bytes: i128,
    mss: i128,
    rtt_ms: f64,
    rate_mbps: f64,
) -> PyResult<Vec<(&'static str, u64, f64, &'static str)>> {
    let w = whole("window", window_bytes, "must be >= 1 byte")?;
    let mss = whole("MSS", mss, "must be >= 1 byte")?;
    let rtt = calc::time_from_f64("round-trip time", rtt_ms, PS_PER_MS, "ms", false)
        .map_err(value_error)?;
    let rate = calc::rate_from_mbps("rate", rate_mbps).map_err(value_error)?;
    let rows = calc::window_model(w, mss, rtt, rate).map_err(value_error)?;
    Ok(rows
        .into_iter()
        .map(|(p, usable, b)| {
            let limit = match b.limited_by {
                calc::Limit::Window => "window",
                calc::Limit::Link => "rate",
            };
            (p.name(), usable, mbps(b.throughput), limit)
        })
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(calc_window_model, m)?)?;
    m.add_function(wrap_pyfunction!(calc_phy, m)?)?;
    m.add_function(wrap_pyfunction!(calc_layers, m)?)?;
    m.add_function(wrap_pyfunction!(calc_buffer_burst, m)?)?;
    m.add_function(wrap_pyfunction!(calc_gcra_burst, m)?)?;
    m.add_function(wrap_pyfunction!(calc_train, m)?)?;
    m.add_function(wrap_pyfunction!(calc_window, m)?)?;
    Ok(())
}
