//! Selective acknowledgment: the receiver's list of blocks to report (RFC 2018)
//! and the sender's scoreboard for loss recovery (RFC 6675, simplified: loss is
//! judged by the bytes SACKed above a hole, one retransmission per hole per
//! recovery).

use super::segment::SackBlocks;
use super::seq::Seq;

/// The receiver's out-of-order blocks, the most recently changed first
/// (RFC 2018 4: the first block reports the segment that triggered the ACK,
/// then the other most recent ones).
#[derive(Clone, Debug, Default)]
pub struct ReceivedBlocks {
    recent: Vec<(Seq, Seq)>,
}

impl ReceivedBlocks {
    /// A segment arrived out of order; `block` is the whole contiguous run of
    /// queued data that now contains it.
    pub fn record(&mut self, block: (Seq, Seq)) {
        // Older blocks the new run swallowed are reported as part of it.
        self.recent.retain(|&(s, e)| e.lt(block.0) || s.gt(block.1));
        self.recent.insert(0, block);
    }

    /// The cumulative ACK moved to `rcv_nxt`: blocks below it are no longer news.
    pub fn prune(&mut self, rcv_nxt: Seq) {
        self.recent.retain(|&(_, e)| e.gt(rcv_nxt));
    }

    pub fn clear(&mut self) {
        self.recent.clear();
    }

    /// The first `max` blocks, as an option.
    pub fn blocks(&self, max: usize) -> SackBlocks {
        let mut b = SackBlocks::default();
        for &(s, e) in self.recent.iter().take(max) {
            b.push(s, e);
        }
        b
    }
}

/// The sender's scoreboard: what the receiver has SACKed above snd_una, and how
/// far the current recovery has retransmitted.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges, sorted and disjoint (adjacent ranges merged).
    sacked: Vec<(Seq, Seq)>,
    /// HighRxt: the end of the highest range retransmitted in this recovery.
    pub high_rxt: Seq,
}

/// An unSACKed range between snd_una and snd_max, and whether RFC 6675 would
/// call it lost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hole {
    pub start: Seq,
    pub end: Seq,
    pub lost: bool,
}

impl Scoreboard {
    /// Record the blocks of one ACK; blocks outside (snd_una, snd_max] are ignored.
    pub fn update(&mut self, blocks: &SackBlocks, snd_una: Seq, snd_max: Seq) {
        for &(s, e) in blocks.as_slice() {
            let s = s.max(snd_una);
            let e = if e.gt(snd_max) { snd_max } else { e };
            if s.lt(e) {
                self.add(s, e);
            }
        }
    }

    fn add(&mut self, s: Seq, e: Seq) {
        let (mut s, mut e) = (s, e);
        // Merge with every range it touches, then insert in order.
        self.sacked.retain(|&(a, b)| {
            if b.lt(s) || a.gt(e) {
                true
            } else {
                if a.lt(s) {
                    s = a;
                }
                if b.gt(e) {
                    e = b;
                }
                false
            }
        });
        let pos = self
            .sacked
            .iter()
            .position(|&(a, _)| s.lt(a))
            .unwrap_or(self.sacked.len());
        self.sacked.insert(pos, (s, e));
    }

    /// The cumulative ACK reached `snd_una`: forget what lies below it.
    pub fn advance(&mut self, snd_una: Seq) {
        self.sacked.retain(|&(_, e)| e.gt(snd_una));
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(snd_una);
        }
        self.high_rxt = self.high_rxt.max(snd_una);
    }

    /// After a retransmit timeout SACK information is not trusted (RFC 2018 8).
    pub fn clear(&mut self, snd_una: Seq) {
        self.sacked.clear();
        self.high_rxt = snd_una;
    }

    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    pub fn sacked_ranges(&self) -> &[(Seq, Seq)] {
        &self.sacked
    }

    /// The unSACKed ranges of [snd_una, snd_max), lowest first. A hole is lost
    /// (RFC 6675 IsLost, by bytes) when more than `(DupThresh − 1) × MSS`
    /// bytes are SACKed above it; the range above the highest SACKed byte
    /// never is.
    pub fn holes(&self, snd_una: Seq, snd_max: Seq, lost_bytes: u32) -> Vec<Hole> {
        let mut holes = Vec::with_capacity(self.sacked.len() + 1);
        let mut above: u64 = self.sacked.iter().map(|&(s, e)| (e - s) as u64).sum();
        let mut at = snd_una;
        for &(s, e) in &self.sacked {
            if at.lt(s) {
                holes.push(Hole {
                    start: at,
                    end: s,
                    lost: above > lost_bytes as u64,
                });
            }
            above -= (e - s) as u64;
            at = e;
        }
        if at.lt(snd_max) {
            holes.push(Hole {
                start: at,
                end: snd_max,
                lost: false,
            });
        }
        holes
    }

    /// RFC 6675 SetPipe: bytes presumed in the network. An unSACKed byte counts
    /// once unless it is lost, and once more if it was retransmitted.
    pub fn pipe(&self, snd_una: Seq, snd_max: Seq, lost_bytes: u32) -> u32 {
        let mut pipe: i64 = 0;
        for h in self.holes(snd_una, snd_max, lost_bytes) {
            if !h.lost {
                pipe += h.end - h.start;
            }
            if h.start.lt(self.high_rxt) {
                let end = if h.end.lt(self.high_rxt) {
                    h.end
                } else {
                    self.high_rxt
                };
                pipe += end - h.start;
            }
        }
        pipe.max(0) as u32
    }

    /// RFC 6675 NextSeg for retransmissions: the first unSACKed range above
    /// HighRxt that is lost (rule 1), or with `rule3` any unSACKed range above
    /// HighRxt below the highest SACKed byte. Returns (start, length ≤ mss).
    pub fn next_seg(
        &self,
        snd_una: Seq,
        snd_max: Seq,
        mss: u32,
        lost_bytes: u32,
        rule3: bool,
    ) -> Option<(Seq, u32)> {
        let fack = self.sacked.last()?.1;
        self.holes(snd_una, snd_max, lost_bytes)
            .into_iter()
            .filter(|h| h.end.le(fack) && h.end.gt(self.high_rxt) && (h.lost || rule3))
            .map(|h| {
                let start = h.start.max(self.high_rxt);
                (start, ((h.end - start) as u32).min(mss))
            })
            .next()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn blocks(v: &[(u32, u32)]) -> SackBlocks {
        let mut b = SackBlocks::default();
        for &(s, e) in v {
            b.push(Seq(s), Seq(e));
        }
        b
    }

    #[test]
    fn receiver_reports_the_newest_block_first_and_merges() {
        let mut r = ReceivedBlocks::default();
        r.record((Seq(200), Seq(300)));
        r.record((Seq(500), Seq(600)));
        assert_eq!(
            r.blocks(4).as_slice(),
            &[(Seq(500), Seq(600)), (Seq(200), Seq(300))]
        );
        // 300..500 arrives: one run 200..600 replaces both.
        r.record((Seq(200), Seq(600)));
        assert_eq!(r.blocks(4).as_slice(), &[(Seq(200), Seq(600))]);
        r.record((Seq(700), Seq(800)));
        r.prune(Seq(600));
        assert_eq!(r.blocks(4).as_slice(), &[(Seq(700), Seq(800))]);
        r.prune(Seq(800));
        assert!(r.blocks(4).is_empty());
    }

    #[test]
    fn scoreboard_merges_and_finds_lost_holes() {
        let mut sb = Scoreboard::default();
        let (una, max, mss) = (Seq(0), Seq(1000), 100);
        sb.update(&blocks(&[(200, 300)]), una, max);
        sb.update(&blocks(&[(300, 400), (600, 700)]), una, max);
        sb.update(&blocks(&[(700, 800), (5000, 6000)]), una, max);
        assert_eq!(
            sb.sacked_ranges(),
            &[(Seq(200), Seq(400)), (Seq(600), Seq(800))]
        );
        let lost = 2 * mss;
        let h = sb.holes(una, max, lost);
        assert_eq!(
            h,
            vec![
                Hole {
                    start: Seq(0),
                    end: Seq(200),
                    lost: true
                },
                Hole {
                    start: Seq(400),
                    end: Seq(600),
                    lost: false
                },
                Hole {
                    start: Seq(800),
                    end: Seq(1000),
                    lost: false
                },
            ]
        );
        // Pipe: the two holes not lost (200 + 200 bytes).
        assert_eq!(sb.pipe(una, max, lost), 400);
        assert_eq!(sb.next_seg(una, max, mss, lost, false), Some((Seq(0), 100)));
        sb.high_rxt = Seq(100);
        assert_eq!(sb.pipe(una, max, lost), 500);
        assert_eq!(
            sb.next_seg(una, max, mss, lost, false),
            Some((Seq(100), 100))
        );
        sb.high_rxt = Seq(200);
        assert_eq!(sb.next_seg(una, max, mss, lost, false), None);
        // Rule 3: the unSACKed range between blocks, though not yet lost.
        assert_eq!(
            sb.next_seg(una, max, mss, lost, true),
            Some((Seq(400), 100))
        );
        sb.advance(Seq(300));
        assert_eq!(sb.sacked_ranges()[0], (Seq(300), Seq(400)));
        sb.clear(Seq(300));
        assert!(sb.is_empty() && sb.high_rxt == Seq(300));
    }
}
