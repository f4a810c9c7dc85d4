//! The reassembly queue (4.4BSD tcp_reass, netinet/tcp_input.c): out-of-order
//! segments held as (seq, len), sorted, until the hole before them fills.

use super::Tcb;
use crate::tcp::seq::Seq;

impl Tcb {
    pub(super) fn reass_insert(&mut self, seq: Seq, len: u32) {
        let pos = self
            .reass
            .iter()
            .position(|&(s, _)| seq.lt(s))
            .unwrap_or(self.reass.len());
        self.reass.insert(pos, (seq, len));
    }

    /// The contiguous run of queued data that contains `seq`.
    pub(super) fn reass_run(&self, seq: Seq) -> (Seq, Seq) {
        let mut run: Option<(Seq, Seq)> = None;
        for &(s, l) in &self.reass {
            let e = s + l;
            run = match run {
                Some((a, b)) if s.le(b) => Some((a, b.max(e))),
                Some((a, b)) if seq.ge(a) && seq.lt(b) => return (a, b),
                _ => Some((s, e)),
            };
        }
        run.unwrap_or((seq, seq))
    }

    /// Move now-contiguous queued segments into the receive buffer.
    pub(super) fn reass_pull(&mut self) {
        while let Some(&(s, l)) = self.reass.first() {
            if s.gt(self.rcv_nxt) {
                break;
            }
            self.reass.remove(0);
            let end = s + l;
            if end.gt(self.rcv_nxt) {
                let n = (end - self.rcv_nxt) as u32;
                self.rcv_nxt = end;
                self.rcv.cc += n;
            }
        }
    }
}
