//! `--pcap`: the cells leaving one switch port, as a pcap file of ERF ATM cells
//! (what `cellbench wire pcap` writes, which Wireshark and tshark decode).
//!
//! The network's port tap (`Network::set_port_tap`) says when each cell left,
//! with its label and CLP; the bytes are the emulated datagram's own CPCS-PDU,
//! still held by the emulator (it lets go of a PDU only when delivering it, and
//! a cell leaves its last port before the PDU is delivered). Times are the
//! network's: seconds since the emulator started, as the simulator's are
//! since the run's start.

use super::SetupError;
use crate::sim::capture::cell_bytes;
use crate::sim::net::{CellFate, CellRecord, Network};
use crate::wire::pcap::{PcapLink, PcapWriter};
use serde::Deserialize;
use std::fs::File;
use std::io::BufWriter;

/// Which port, into which file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapSpec {
    /// The port's number in the ports table (`RunSpec::port_labels`).
    pub port: usize,
    pub path: String,
}

pub struct CellTap {
    writer: PcapWriter<BufWriter<File>>,
    records: Vec<CellRecord>,
    /// Cells written.
    pub cells: u64,
    /// The first write error; nothing more is written after it.
    pub error: Option<String>,
}

impl CellTap {
    /// Create the file and put the tap on the port.
    pub fn open(spec: &PcapSpec, net: &mut Network) -> Result<CellTap, SetupError> {
        let fail =
            |e: &dyn std::fmt::Display| SetupError(format!("cannot write {}: {e}", spec.path));
        let file = File::create(&spec.path).map_err(|e| fail(&e))?;
        // The tap runs on the emulator's real-time thread: writes into the page
        // cache of 64 KB (~950 cells) each, tens of µs, rather than one per cell
        // or long stalls of megabytes.
        let out = BufWriter::with_capacity(64 << 10, file);
        let writer = PcapWriter::new(out, PcapLink::Cells).map_err(|e| fail(&e))?;
        net.set_port_tap(spec.port);
        Ok(CellTap {
            writer,
            records: Vec::new(),
            cells: 0,
            error: None,
        })
    }

    /// Write the cells the port sent since the last call; `pdu(token)` is the
    /// CPCS-PDU the emulator handed the network under that token.
    pub fn write<'a>(&mut self, net: &mut Network, pdu: impl Fn(u64) -> Option<&'a [u8]>) {
        net.drain_cell_log(&mut self.records);
        for r in self.records.drain(..) {
            if r.fate != CellFate::Sent || self.error.is_some() {
                continue;
            }
            let cell = match pdu(r.token) {
                // An RM cell carries its own payload.
                _ if r.rm.is_some() => cell_bytes(&r, &[]),
                Some(bytes) => cell_bytes(&r, bytes),
                None => Err("a PDU the emulator no longer holds".to_string()),
            };
            let written = cell.and_then(|c| {
                self.writer
                    .write_cell(r.at, &c)
                    .map_err(|e| format!("writing: {e}"))
            });
            match written {
                Ok(()) => self.cells += 1,
                Err(e) => self.error = Some(e),
            }
        }
    }

    /// Flush the file; the cells written, or the first error.
    pub fn finish(mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.writer.flush().map_err(|e| format!("writing: {e}"))?;
        Ok(self.cells)
    }
}
