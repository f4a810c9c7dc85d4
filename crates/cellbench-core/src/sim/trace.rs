//! A segment trace as data: what `TraceRecord::line` prints, field by field, so
//! that Python plots and stores the segments without reading the text back. A
//! connection's trace crosses as columns (`TraceColumns`: one list per field),
//! which Python reads several times faster than a list of records.

use super::world::TraceRecord;
use serde::Serialize;

/// One traced segment, as it left its host (after the CPU paid for it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceRow {
    /// When it left, simulated seconds.
    pub t_s: f64,
    /// Sent by the transmitter (the data side, `A` in the line), else by the receiver.
    pub from_sender: bool,
    /// tcpdump's flag letters: `S`, `F`, `R` as set, `.` for none of them.
    pub flags: String,
    /// The first sequence number and the data bytes (the line's `seq:end(len)`;
    /// `end` is `seq + len` modulo 2^32).
    pub seq: u32,
    pub len: u32,
    /// The acknowledgement number; None without the ACK flag.
    pub ack: Option<u32>,
    /// The window field as sent (shifted by the sender's scale once scaling is on).
    pub win: u32,
    /// Why tcp_output sent it (`SendReason`: `full-mss`, `delack-timer`, ...).
    pub reason: &'static str,
}

impl From<&TraceRecord> for TraceRow {
    fn from(r: &TraceRecord) -> TraceRow {
        let f = r.seg.flags;
        let mut flags: String = [(f.syn, 'S'), (f.fin, 'F'), (f.rst, 'R')]
            .iter()
            .filter(|(on, _)| *on)
            .map(|&(_, c)| c)
            .collect();
        if flags.is_empty() {
            flags.push('.');
        }
        TraceRow {
            t_s: r.at.as_secs_f64(),
            from_sender: r.from_sender,
            flags,
            seq: r.seg.seq.0,
            len: r.seg.len,
            ack: f.ack.then_some(r.seg.ack.0),
            win: r.seg.win,
            reason: r.seg.reason.as_str(),
        }
    }
}

/// A trace as columns: field `f` of segment `i` is `f[i]`; every list is as long.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceColumns {
    pub t_s: Vec<f64>,
    pub from_sender: Vec<bool>,
    pub flags: Vec<String>,
    pub seq: Vec<u32>,
    pub len: Vec<u32>,
    pub ack: Vec<Option<u32>>,
    pub win: Vec<u32>,
    pub reason: Vec<&'static str>,
}

impl TraceColumns {
    pub fn len(&self) -> usize {
        self.t_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }

    /// Segment `i` as a row.
    pub fn row(&self, i: usize) -> TraceRow {
        TraceRow {
            t_s: self.t_s[i],
            from_sender: self.from_sender[i],
            flags: self.flags[i].clone(),
            seq: self.seq[i],
            len: self.len[i],
            ack: self.ack[i],
            win: self.win[i],
            reason: self.reason[i],
        }
    }
}

impl FromIterator<TraceRow> for TraceColumns {
    fn from_iter<I: IntoIterator<Item = TraceRow>>(rows: I) -> TraceColumns {
        let mut c = TraceColumns::default();
        for r in rows {
            c.t_s.push(r.t_s);
            c.from_sender.push(r.from_sender);
            c.flags.push(r.flags);
            c.seq.push(r.seq);
            c.len.push(r.len);
            c.ack.push(r.ack);
            c.win.push(r.win);
            c.reason.push(r.reason);
        }
        c
    }
}

#[cfg(test)]
mod test {
    use crate::sim::testbeds::LanBuffers;

    /// Every row says what its line says: the line is made from the row's fields.
    #[test]
    fn rows_agree_with_lines() {
        let study = LanBuffers {
            sndbuf: 16_384,
            rcvbuf: 24_576,
            nbytes: 256 << 10,
            ..LanBuffers::default()
        };
        let c = study.spec(1, 0, true).run().unwrap().connections[0].clone();
        assert_eq!(c.trace.len(), c.trace_records.len());
        assert!(c.trace_records.flags.iter().any(|f| f == "S"));
        let rows = (0..c.trace_records.len()).map(|i| c.trace_records.row(i));
        for (line, r) in c.trace.iter().zip(rows) {
            let (src, dst) = if r.from_sender {
                ("A", "B")
            } else {
                ("B", "A")
            };
            // The line's time is the row's, truncated to the microsecond.
            let (time, rest) = line.split_once(' ').unwrap();
            let t: f64 = time.parse().unwrap();
            assert!(t <= r.t_s + 1e-9 && r.t_s - t < 1e-6, "{line} at {}", r.t_s);
            let mut made = format!("{src} > {dst}: {} ", r.flags);
            if r.len > 0 || r.flags.contains(['S', 'F']) {
                made += &format!("{}:{}({}) ", r.seq, r.seq.wrapping_add(r.len), r.len);
            }
            if let Some(a) = r.ack {
                made += &format!("ack {a} ");
            }
            made += &format!("win {}", r.win);
            assert!(rest.starts_with(&made), "{line:?} against {made:?}");
            assert!(line.ends_with(&format!("[{}]", r.reason)), "{line}");
        }
    }
}
