//! An ATM cell tester on one link of the simulated network: every cell leaving
//! a switch output port or a host's adapter, into a pcap file of ERF ATM cells
//! (`wire::pcap`, what the emulator's `--pcap` and `cellbench wire pcap` write,
//! which tshark decodes), streaming: the cells go to the file as the network
//! decides them, so memory does not grow with the run.
//!
//! What a record holds. The time is when the cell starts on the link (the
//! network's [`CellRecord::at`], exact to the picosecond in both fidelities;
//! the file keeps nanoseconds), from the run's start. The header is the cell's
//! label on that link (VPI/VCI after translation), PTI (user data, AUU set on
//! a PDU's last cell) and CLP (as a policer upstream left it). The simulator
//! carries PDU lengths, not bytes: the payload of a simulated PDU is its number
//! in the run ([`CellRecord::pdu`], 8 bytes big-endian) followed by zeros, with
//! a valid AAL5 trailer (CPCS length and CRC-32), so each cell's PDU can be read
//! back from the capture (`simulated_cell`). The emulator puts the datagram's
//! own CPCS-PDU there ([`cell_bytes`], shared).
//!
//! Order and the end of a run. A place's records come out of the network in
//! time order (`tests/net_cells.rs`), but Train decides some cells ahead of the
//! run's clock and a multi-input port's cells up to one PDU late. So the capture
//! holds the cells decided beyond the clock until the clock passes them, and at
//! the run's end asks the network to decide every cell that arrived by then
//! ([`Network::settle`]) and writes the cells that started by the end: both
//! fidelities write the same file.

use crate::sim::net::{CellFate, CellRecord, Network, Place};
use crate::time::SimTime;
use crate::wire::aal5;
use crate::wire::cell::{CellHeader, HeaderFormat, Pti, CELL_LEN, PAYLOAD_LEN};
use crate::wire::pcap::{PcapError, PcapLink, PcapWriter};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;

/// The header of a logged cell on its link: UNI, or NNI for a VPI above 8 bits.
fn header_of(r: &CellRecord) -> CellHeader {
    CellHeader {
        format: if r.vpi > HeaderFormat::Uni.max_vpi() {
            HeaderFormat::Nni
        } else {
            HeaderFormat::Uni
        },
        gfc: 0,
        vpi: r.vpi,
        vci: r.vci,
        pti: Pti::user_data(false, false),
        clp: r.clp,
    }
}

/// The 53 bytes of a logged cell, `pdu` being its whole CPCS-PDU (payload, pad
/// and trailer): the `r.cell`-th 48 bytes, AUU on the last. The emulator's tap
/// and the simulator's capture both make their cells here.
pub fn cell_bytes(r: &CellRecord, pdu: &[u8]) -> Result<[u8; CELL_LEN], String> {
    if let Some(rm) = r.rm {
        // An ABR RM cell: PTI 110 and its own payload (`wire::rm`).
        return rm.cell(&header_of(r)).map_err(|e| format!("RM cell: {e}"));
    }
    aal5::pdu_cell(&header_of(r), pdu, r.cell as usize)
        .map_err(|e| format!("cell {} of a PDU: {e}", r.cell))
}

/// Bytes of a simulated PDU's payload that are not zero: its number, big-endian.
const PDU_NUMBER_LEN: usize = 8;

/// A cell of a simulated PDU (see the module's documentation): its number in
/// the first 8 payload bytes, zeros, and on the last cell the AAL5 trailer.
pub fn simulated_cell(r: &CellRecord) -> Result<[u8; CELL_LEN], String> {
    if r.rm.is_some() {
        return cell_bytes(r, &[]);
    }
    let len = r.pdu_len as usize;
    let number = r.pdu.to_be_bytes();
    let last = aal5::cells_for(len).saturating_sub(1);
    if r.cell as usize == last {
        // The trailer's CRC covers the whole PDU: built once, at its last cell.
        let mut payload = vec![0u8; len];
        let n = len.min(PDU_NUMBER_LEN);
        payload[..n].copy_from_slice(&number[..n]);
        let pdu = aal5::build_pdu(&payload, 0, 0).map_err(|e| format!("PDU {}: {e}", r.pdu))?;
        return cell_bytes(r, &pdu);
    }
    if r.cell as usize > last {
        return Err(format!(
            "cell {} of PDU {}: it has {} cells",
            r.cell,
            r.pdu,
            last + 1
        ));
    }
    // Cells before the last: the number in cell 0, zeros elsewhere.
    let mut payload = [0u8; PAYLOAD_LEN];
    if r.cell == 0 {
        let n = len.min(PDU_NUMBER_LEN);
        payload[..n].copy_from_slice(&number[..n]);
    }
    header_of(r)
        .cell(&payload)
        .map_err(|e| format!("PDU {}: {e}", r.pdu))
}

/// What a capture wrote.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureCounts {
    /// Cells written (those that started on the link by the run's end).
    pub cells: u64,
    /// PDUs whose last cell was written.
    pub pdus: u64,
    /// Cells the network had decided to send after the run's end (not written).
    pub after_end: u64,
}

/// The tester: one place's cells into a pcap file as the run goes.
pub struct CellCapture<W: Write> {
    writer: PcapWriter<W>,
    place: Place,
    /// Cells decided beyond the run's clock, in time order.
    ahead: VecDeque<(SimTime, [u8; CELL_LEN], bool)>,
    scratch: Vec<CellRecord>,
    counts: CaptureCounts,
    /// The first error; nothing more is written after it.
    error: Option<String>,
}

impl<W: Write> CellCapture<W> {
    /// Start the file (its header) and put the tap on `place` of `net`.
    pub fn new(out: W, place: Place, net: &mut Network) -> Result<CellCapture<W>, PcapError> {
        let writer = PcapWriter::new(out, PcapLink::Cells)?;
        net.set_tap(place);
        Ok(CellCapture {
            writer,
            place,
            ahead: VecDeque::new(),
            scratch: Vec::new(),
            counts: CaptureCounts::default(),
            error: None,
        })
    }

    pub fn place(&self) -> Place {
        self.place
    }

    /// Take the records the network logged since the last call and write the
    /// cells that started by `now` (the run's clock).
    pub fn take(&mut self, net: &mut Network, now: SimTime) {
        net.drain_cell_log(&mut self.scratch);
        for r in self.scratch.drain(..) {
            if r.fate != CellFate::Sent || self.error.is_some() {
                continue;
            }
            match simulated_cell(&r) {
                Ok(cell) => {
                    let eom =
                        r.rm.is_none() && r.cell + 1 == aal5::cells_for(r.pdu_len as usize) as u32;
                    self.ahead.push_back((r.at, cell, eom));
                }
                Err(e) => self.error = Some(e),
            }
        }
        self.write_until(now);
    }

    fn write_until(&mut self, t: SimTime) {
        while self.ahead.front().is_some_and(|c| c.0 <= t) {
            let (at, cell, eom) = self.ahead.pop_front().expect("peeked");
            if self.error.is_some() {
                continue;
            }
            match self.writer.write_cell(at, &cell) {
                Ok(()) => {
                    self.counts.cells += 1;
                    self.counts.pdus += u64::from(eom);
                }
                Err(e) => self.error = Some(format!("writing: {e}")),
            }
        }
    }

    /// The run ended at `end`: decide every cell that arrived anywhere by then,
    /// write those that started by then, flush. The counts, or the first error.
    pub fn finish(mut self, net: &mut Network, end: SimTime) -> Result<CaptureCounts, String> {
        net.settle(end);
        self.take(net, end);
        self.counts.after_end = self.ahead.len() as u64;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.writer.flush().map_err(|e| format!("writing: {e}"))?;
        Ok(self.counts)
    }
}

/// A tester's capture read back: its cells' inter-arrival times in cell
/// slots of the link (what `cellbench cells` prints as a histogram).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CellIats {
    /// Cells counted (of the VC asked for, or all).
    pub cells: u64,
    /// Of them, the last cells of PDUs (AUU set).
    pub pdus: u64,
    /// Cells per VPI/VCI (read as UNI headers), all cells of the file.
    pub vcs: BTreeMap<(u16, u16), u64>,
    pub first: Option<SimTime>,
    pub last: Option<SimTime>,
    /// Each cell's time since the one before, in slots, rounded to the nearest
    /// (a tester counts whole slots); one fewer than `cells`.
    pub slots: Vec<u64>,
    /// The same, unrounded, in picoseconds.
    pub iat_ps: Vec<u64>,
    /// The indices (0 = the first cell counted) of the cells that end a PDU.
    pub pdu_ends: Vec<u64>,
}

/// Read a capture of ERF ATM cells (`bytes`, a pcap file) and measure each
/// cell's inter-arrival time in slots of `slot`; `vc`: only that VPI/VCI's
/// cells. Any bytes give a result or one error line; never a panic.
pub fn cell_iats(bytes: &[u8], slot: SimTime, vc: Option<(u16, u16)>) -> Result<CellIats, String> {
    if slot == SimTime::ZERO {
        return Err("cell slot of 0 s: the link's cell time must be > 0".into());
    }
    let records = crate::wire::pcap::records(bytes).map_err(|e| e.to_string())?;
    if records.link() != PcapLink::Cells {
        return Err(format!(
            "the file holds {}, not cells: a tester's capture is {}",
            records.link().describe(),
            PcapLink::Cells.describe()
        ));
    }
    let mut out = CellIats::default();
    for (n, rec) in records.enumerate() {
        let rec = rec.map_err(|e| e.to_string())?;
        let crate::wire::pcap::Record::Cell { time, cell } = rec else {
            continue;
        };
        // UNI: GFC(4) VPI(8) VCI(16) PTI(3) CLP(1).
        let vpi = (u16::from(cell[0] & 0x0f) << 4) | u16::from(cell[1] >> 4);
        let vci =
            (u16::from(cell[1] & 0x0f) << 12) | (u16::from(cell[2]) << 4) | u16::from(cell[3] >> 4);
        *out.vcs.entry((vpi, vci)).or_default() += 1;
        if vc.is_some_and(|v| v != (vpi, vci)) {
            continue;
        }
        if let Some(prev) = out.last {
            if time < prev {
                return Err(format!(
                    "record {} at {} s is earlier than the cell before it ({} s): not one \
                     link's cells in time order",
                    n + 1,
                    time.as_secs_f64(),
                    prev.as_secs_f64()
                ));
            }
            let dt = time.0 - prev.0;
            out.iat_ps.push(dt);
            out.slots
                .push(dt / slot.0 + u64::from(dt % slot.0 >= slot.0.div_ceil(2)));
        }
        out.first.get_or_insert(time);
        out.last = Some(time);
        out.cells += 1;
        // PTI 0xx: user data; its low bit is AUU.
        if cell[3] & 0x0a == 0x02 {
            out.pdu_ends.push(out.cells - 1);
            out.pdus += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wire::aal5::CpcsPdu;

    fn record(pdu: u64, pdu_len: u32, cell: u32) -> CellRecord {
        CellRecord {
            place: Place::Port(0),
            at: SimTime::ZERO,
            circuit: 0,
            token: 7,
            cell,
            pdu,
            pdu_len,
            vpi: 0,
            vci: 32,
            clp: false,
            fate: CellFate::Sent,
            rm: None,
        }
    }

    #[test]
    fn a_simulated_pdu_reassembles_with_its_number_and_length() {
        for len in [1u32, 7, 8, 40, 41, 9188, 65535] {
            let n = aal5::cells_for(len as usize) as u32;
            let cells: Vec<_> = (0..n)
                .map(|k| simulated_cell(&record(0x0102_0304_0506_0708, len, k)).unwrap())
                .collect();
            let mut pdu = Vec::new();
            for (k, c) in cells.iter().enumerate() {
                let view = crate::wire::cell::Cell::new_checked(&c[..]).unwrap();
                let h = CellHeader::parse(&view, HeaderFormat::Uni).unwrap();
                assert_eq!(h.pti.auu(), k + 1 == n as usize, "len {len} cell {k}");
                pdu.extend_from_slice(&c[5..]);
            }
            let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
            view.check_crc().unwrap();
            assert_eq!(view.length() as u32, len);
            let want = &0x0102_0304_0506_0708u64.to_be_bytes()[..(len as usize).min(8)];
            assert_eq!(&view.payload()[..want.len()], want);
        }
        assert!(simulated_cell(&record(1, 100, 3)).is_err());
    }

    #[test]
    fn iats_round_to_whole_slots_and_never_panic() {
        let mut w = PcapWriter::new(Vec::new(), PcapLink::Cells).unwrap();
        let slot = SimTime(2_831_196);
        // Cells 1, 7 and 6.4 slots apart (ns in the file: rounding to the slot).
        for (k, t) in [0u64, 1, 8, 14].iter().enumerate() {
            let at =
                SimTime::from_ns((slot.0 * t + if k == 3 { slot.0 * 2 / 5 } else { 0 }) / 1000);
            let r = record(1, 40, 0);
            w.write_cell(at, &simulated_cell(&r).unwrap()).unwrap();
        }
        let f = w.into_inner();
        let x = cell_iats(&f, slot, None).unwrap();
        assert_eq!(x.slots, vec![1, 7, 6]);
        assert_eq!((x.cells, x.pdus), (4, 4));
        assert_eq!(x.pdu_ends, vec![0, 1, 2, 3]);
        assert_eq!(x.vcs.get(&(0, 32)), Some(&4));
        assert_eq!(cell_iats(&f, slot, Some((0, 33))).unwrap().cells, 0);
        assert!(cell_iats(&f[..f.len() - 3], slot, None).is_err());
        assert!(cell_iats(&f, SimTime::ZERO, None).is_err());
    }

    #[test]
    fn a_file_that_is_not_cells_is_named_by_its_link_type() {
        // An Ethernet capture (link type 1) was called "AAL5 PDUs (SunATM, link type 123)".
        for (link, what) in [
            (PcapLink::Ethernet, "Ethernet frames (link type 1)"),
            (PcapLink::Pdus, "AAL5 PDUs (SunATM, link type 123)"),
        ] {
            let f = PcapWriter::new(Vec::new(), link).unwrap().into_inner();
            assert_eq!(
                cell_iats(&f, SimTime(1), None).unwrap_err(),
                format!(
                    "the file holds {what}, not cells: a tester's capture is ERF ATM cells \
                     (link type 197)"
                )
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn iats_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = cell_iats(&bytes, SimTime(2_831_196), None);
            let mut f = PcapWriter::new(Vec::new(), PcapLink::Cells).unwrap().into_inner();
            f.extend_from_slice(&bytes);
            let _ = cell_iats(&f, SimTime(1), Some((0, 32)));
        }
    }
}
