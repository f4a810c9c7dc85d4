//! Python bindings: wire (cells, AAL5, RFC 1483, pcap). Thin: every check and
//! message comes from cellbench-core; only the argument ranges Python cannot type
//! are checked here.

// pyo3 0.22's #[pyfunction]/#[pymethods] expansion converts PyErr into PyErr, which
// recent clippy flags in user code; nothing here to fix.
#![allow(clippy::useless_conversion)]

use crate::error::value_error;
use cellbench_core::time::{BitRate, SimTime};
use cellbench_core::wire::aal5::{self, Reassembled, Reassembler, Vc, MAX_PAYLOAD};
use cellbench_core::wire::cell::{self, CellHeader, HeaderFormat, HecStatus, CELL_LEN};
use cellbench_core::wire::llc_snap::Encap;
use cellbench_core::wire::pcap::{read_pcap, PcapLink, PcapWriter, Record};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::fs::File;
use std::io::BufWriter;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hec, m)?)?;
    m.add_function(wrap_pyfunction!(aal5_crc32, m)?)?;
    m.add_function(wrap_pyfunction!(aal5_cells_for, m)?)?;
    m.add_function(wrap_pyfunction!(wire_encode, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_write, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_read, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_cell_iats, m)?)?;
    m.add_class::<CellDecoder>()?;
    Ok(())
}

fn parse_encap(name: &str) -> PyResult<Encap> {
    name.parse::<Encap>().map_err(value_error)
}

/// A value in `lo..=hi`, or a ValueError naming it and the range.
fn in_range(what: &str, value: i64, lo: i64, hi: i64) -> PyResult<i64> {
    if !(lo..=hi).contains(&value) {
        return Err(value_error(format!(
            "{what} {value} out of range {lo}..={hi}"
        )));
    }
    Ok(value)
}

/// The UNI user-data header for a VC (VPI 0..=255, VCI 0..=65535, CLP 0/1).
fn uni_header(vpi: i64, vci: i64, clp: i64) -> PyResult<CellHeader> {
    let vpi = in_range("VPI", vpi, 0, 255)? as u16;
    let vci = in_range("VCI", vci, 0, 65535)? as u16;
    let clp = in_range("CLP", clp, 0, 1)? == 1;
    Ok(CellHeader::uni(vpi, vci, clp))
}

/// The AAL5 payload for `payload` under `encap`, with a message that says what the
/// encapsulation added when the size is wrong.
fn encapsulated(payload: &[u8], encap: Encap) -> PyResult<Vec<u8>> {
    if payload.is_empty() {
        return Err(value_error("payload is empty: give at least 1 byte"));
    }
    let sdu = encap.encapsulate(payload);
    if sdu.len() > MAX_PAYLOAD {
        return Err(value_error(format!(
            "payload of {} bytes + {}-byte {} header = {} bytes: an AAL5 PDU carries 1..={MAX_PAYLOAD}",
            payload.len(),
            encap.header_len(),
            encap,
            sdu.len()
        )));
    }
    Ok(sdu)
}

/// The I.432 HEC of a 4-byte header.
#[pyfunction]
fn hec(header4: &[u8]) -> PyResult<u8> {
    let h: [u8; 4] = header4.try_into().map_err(|_| {
        value_error(format!(
            "the HEC covers 4 header bytes, got {}",
            header4.len()
        ))
    })?;
    Ok(cell::hec(&h))
}

/// The AAL5 CRC-32 (CRC-32/BZIP2) of `data`.
#[pyfunction]
fn aal5_crc32(data: &[u8]) -> u32 {
    aal5::crc32(data)
}

/// Cells of the AAL5 PDU carrying `payload_len` bytes.
#[pyfunction]
fn aal5_cells_for(payload_len: usize) -> PyResult<usize> {
    if !(1..=MAX_PAYLOAD).contains(&payload_len) {
        return Err(value_error(format!(
            "AAL5 payload of {payload_len} bytes: allowed 1..={MAX_PAYLOAD}"
        )));
    }
    Ok(aal5::cells_for(payload_len))
}

/// The 53-byte cells carrying `payload` (encapsulated) on UNI VC vpi/vci.
#[pyfunction]
#[pyo3(signature = (payload, vpi, vci, encap = "llc-snap", clp = 0))]
fn wire_encode<'py>(
    py: Python<'py>,
    payload: &[u8],
    vpi: i64,
    vci: i64,
    encap: &str,
    clp: i64,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let header = uni_header(vpi, vci, clp)?;
    let sdu = encapsulated(payload, parse_encap(encap)?)?;
    let cells = aal5::segment(&header, &sdu).map_err(value_error)?;
    Ok(cells.iter().map(|c| PyBytes::new_bound(py, c)).collect())
}

/// Write the cells (or the one AAL5 PDU) carrying `payload` as a pcap file; cells
/// are timed back to back at the OC-3c cell rate from `start_ps`. Returns the
/// number of packets written.
#[pyfunction]
#[pyo3(signature = (path, payload, vpi, vci, encap = "llc-snap", clp = 0, pdus = false, start_ps = 0))]
#[allow(clippy::too_many_arguments)]
fn pcap_write(
    path: &str,
    payload: &[u8],
    vpi: i64,
    vci: i64,
    encap: &str,
    clp: i64,
    pdus: bool,
    start_ps: u64,
) -> PyResult<usize> {
    let header = uni_header(vpi, vci, clp)?;
    let encap = parse_encap(encap)?;
    let sdu = encapsulated(payload, encap)?;
    let cells = aal5::segment(&header, &sdu).map_err(value_error)?;
    let file = File::create(path).map_err(|e| value_error(format!("cannot write {path}: {e}")))?;
    let link = if pdus {
        PcapLink::Pdus
    } else {
        PcapLink::Cells
    };
    let mut w = PcapWriter::new(BufWriter::new(file), link).map_err(value_error)?;
    // 149.76 Mb/s: the cell rate SONET OC-3c leaves to ATM (SPEC §2).
    let oc3c = BitRate(149_760_000);
    let start = SimTime::from_ps(start_ps);
    let written = if pdus {
        let vc = Vc {
            vpi: header.vpi,
            vci: header.vci,
        };
        // The PDU is complete when its last cell has arrived.
        let t = oc3c.offset_of(start, cells.len() as u64, 8 * CELL_LEN as u64);
        w.write_pdu(t, vc, encap, &sdu).map_err(value_error)?;
        1
    } else {
        for (k, c) in cells.iter().enumerate() {
            w.write_cell(oc3c.offset_of(start, k as u64, 8 * CELL_LEN as u64), c)
                .map_err(value_error)?;
        }
        cells.len()
    };
    w.flush().map_err(value_error)?;
    Ok(written)
}

/// Read a pcap file written by `pcap_write` (ERF ATM cells or SunATM PDUs): a list
/// of dicts, each with `kind` ("cell", "pdu" or "frame") and `time_ps`; cells have `cell`
/// (53 bytes, HEC recomputed), PDUs `vpi`, `vci`, `llc`, `payload`, Ethernet
/// frames `frame` (destination address on) and `fcs` (whether it ends in its FCS).
#[pyfunction]
fn pcap_read<'py>(py: Python<'py>, path: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let bytes = std::fs::read(path).map_err(|e| value_error(format!("cannot read {path}: {e}")))?;
    let pcap = read_pcap(&bytes).map_err(|e| value_error(format!("{path}: {e}")))?;
    let mut out = Vec::with_capacity(pcap.records.len());
    for r in &pcap.records {
        let d = PyDict::new_bound(py);
        d.set_item("time_ps", r.time().as_ps())?;
        match r {
            Record::Cell { cell, .. } => {
                d.set_item("kind", "cell")?;
                d.set_item("cell", PyBytes::new_bound(py, cell))?;
            }
            Record::Pdu {
                vc, llc, payload, ..
            } => {
                d.set_item("kind", "pdu")?;
                d.set_item("vpi", vc.vpi)?;
                d.set_item("vci", vc.vci)?;
                d.set_item("llc", *llc)?;
                d.set_item("payload", PyBytes::new_bound(py, payload))?;
            }
            Record::Frame { frame, fcs, .. } => {
                d.set_item("kind", "frame")?;
                d.set_item("frame", PyBytes::new_bound(py, frame))?;
                d.set_item("fcs", *fcs)?;
            }
        }
        out.push(d);
    }
    Ok(out)
}

/// A tester's capture (ERF ATM cells) read back: `cells`, `pdus`, `vcs` (a list of
/// `(vpi, vci, cells)`), `first_ps`, `last_ps`, `slots` (each cell's
/// inter-arrival time in slots of `slot_ps`, rounded; `iat_ps` unrounded) and `pdu_ends` (the
/// indices of the cells that end PDUs) (`sim::capture::cell_iats`);
/// `vpi`/`vci`: only that VC's cells. A bad file is a ValueError, one line.
#[pyfunction]
#[pyo3(signature = (path, slot_ps, vpi=None, vci=None))]
fn pcap_cell_iats<'py>(
    py: Python<'py>,
    path: &str,
    slot_ps: u64,
    vpi: Option<u16>,
    vci: Option<u16>,
) -> PyResult<Bound<'py, PyDict>> {
    let bytes = std::fs::read(path).map_err(|e| value_error(format!("cannot read {path}: {e}")))?;
    let vc = match (vpi, vci) {
        (Some(p), Some(c)) => Some((p, c)),
        (None, None) => None,
        _ => return Err(value_error("a VC is a VPI and a VCI: give both or neither")),
    };
    let x = py
        .allow_threads(|| cellbench_core::sim::capture::cell_iats(&bytes, SimTime(slot_ps), vc))
        .map_err(|e| value_error(format!("{path}: {e}")))?;
    let d = PyDict::new_bound(py);
    d.set_item("cells", x.cells)?;
    d.set_item("pdus", x.pdus)?;
    let vcs: Vec<(u16, u16, u64)> = x.vcs.iter().map(|(&(p, c), &n)| (p, c, n)).collect();
    d.set_item("vcs", vcs)?;
    d.set_item("first_ps", x.first.map(|t| t.as_ps()))?;
    d.set_item("last_ps", x.last.map(|t| t.as_ps()))?;
    d.set_item("slots", x.slots)?;
    d.set_item("pdu_ends", x.pdu_ends)?;
    d.set_item("iat_ps", x.iat_ps)?;
    Ok(d)
}

/// A receiver of UNI cells: HEC check and single-bit correction per cell, AAL5
/// reassembly per VC, decapsulation.
#[pyclass(module = "cellbench._native")]
struct CellDecoder {
    encap: Encap,
    reassembler: Reassembler,
}

#[pymethods]
impl CellDecoder {
    #[new]
    #[pyo3(signature = (encap = "llc-snap"))]
    fn new(encap: &str) -> PyResult<CellDecoder> {
        Ok(CellDecoder {
            encap: parse_encap(encap)?,
            reassembler: Reassembler::new(),
        })
    }

    /// Feed one 53-byte cell. Returns `(packet, warning)`: the decapsulated packet
    /// when this cell ends a PDU (else None), and a warning when a header error was
    /// corrected or the cell was not user data (else None). Raises ValueError for a
    /// cell that must be discarded or a PDU that fails reassembly.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        cell: &[u8],
    ) -> PyResult<(Option<Bound<'py, PyBytes>>, Option<String>)> {
        let rx = self
            .reassembler
            .push_cell(cell, HeaderFormat::Uni)
            .map_err(value_error)?;
        let mut warning = match rx.hec {
            HecStatus::Valid => None,
            HecStatus::Corrected { bit } => Some(format!(
                "single-bit header error corrected (bit {} of 40, in header byte {})",
                bit + 1,
                bit / 8 + 1
            )),
        };
        if !rx.header.pti.is_user_data() {
            let note = format!(
                "cell with PTI {} (OAM/RM, not user data) ignored",
                rx.header.pti.bits()
            );
            warning = Some(match warning {
                Some(w) => format!("{w}; {note}"),
                None => note,
            });
        }
        let packet = match rx.pdu {
            None => None,
            Some(Reassembled { vc, result }) => {
                let sdu = result.map_err(|e| value_error(format!("VC {vc}: {e}")))?;
                let packet = self
                    .encap
                    .decapsulate(&sdu)
                    .map_err(|e| value_error(format!("VC {vc}: {e}")))?;
                Some(PyBytes::new_bound(py, packet))
            }
        };
        Ok((packet, warning))
    }

    /// Raise ValueError if a PDU is still incomplete (input ended before its
    /// end-of-PDU cell).
    fn finish(&self) -> PyResult<()> {
        if let Some((vc, cells)) = self.reassembler.pending().next() {
            return Err(value_error(format!(
                "input ended inside a PDU: VC {vc} has {cells} cells but no end-of-PDU cell (PTI AUU bit)"
            )));
        }
        Ok(())
    }
}
