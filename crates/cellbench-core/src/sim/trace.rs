//! A segment trace as data: what `TraceRecord::line` prints, field by field, so
//! that Python plots and stores the segments without reading the text back.

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
        assert!(c.trace_records.iter().any(|r| r.flags == "S"));
        for (line, r) in c.trace.iter().zip(&c.trace_records) {
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
