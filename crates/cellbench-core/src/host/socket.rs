//! The socket layer's side of a send: how sosend moves user data into the send
//! buffer. SunOS 4.1.1 copies into 4 KB clusters while it can, otherwise in
//! whole 1 KB pieces; a last piece under 1 KB goes in whole. tcp_output runs
//! after each piece, which is why the amounts TCP sees are multiples of 1 KB.
//! Each piece is a turn of 4.3BSD's sosend loop, so the test at its top comes
//! before each: while a cluster or more of the write remains, a piece goes in
//! only when a whole cluster is free (or the buffer holds less than one). A
//! writer woken by an ACK that freed a few hundred bytes sleeps on instead of
//! trickling in a kilobyte.

/// One cluster (MCLBYTES on the era's Sun kernels with 4 KB pages).
pub const CLUSTER: u32 = 4096;
/// The smaller unit sosend falls back to.
pub const SMALL_UNIT: u32 = 1024;

/// Which kernel's sosend moves user data into the send buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppendRule {
    /// SunOS 4.1.1: 4 KB clusters, else whole 1 KB pieces (see [`sunos_append`]).
    SunOs,
    /// 4.4BSD: block while the free space is below the low-water mark (one
    /// mbuf cluster, or the buffer if smaller) and the write does not fit; then
    /// one cluster (or what fits) per tcp_output call. Carries MCLBYTES.
    Bsd44 { mclbytes: u32 },
}

impl AppendRule {
    /// How many bytes sosend appends next, given the send buffer's size and the
    /// bytes it holds and the user data still to copy; `None`: the writer
    /// blocks until an ACK frees space.
    pub fn next(self, hiwat: u32, cc: u32, resid: u32) -> Option<u32> {
        let space = hiwat.saturating_sub(cc);
        match self {
            AppendRule::SunOs => {
                if sunos_waits_for_a_cluster(cc, space, resid) {
                    return None;
                }
                sunos_append(space, resid)
            }
            AppendRule::Bsd44 { mclbytes } => {
                let lowat = mclbytes.min(hiwat);
                if resid == 0 || (space < resid && space < lowat) {
                    return None;
                }
                Some(space.min(resid).min(mclbytes))
            }
        }
    }
}

/// The test at the top of 4.3BSD's sosend loop (uipc_socket.c): the writer
/// sleeps while at least a cluster of the write remains, the buffer holds a
/// cluster or more and less than a cluster is free.
///
/// It decides part of the lan-buffers grid. A writer that topped up a 20 KB
/// buffer kilobyte by kilobyte after each small ACK would leave a 36 KB
/// receiver's window updates just short of 35% and lock it into the
/// delayed-ACK cycle, which the published study does not show.
pub fn sunos_waits_for_a_cluster(cc: u32, space: u32, resid: u32) -> bool {
    resid >= CLUSTER && space < CLUSTER && cc >= CLUSTER
}

/// SunOS 4.1.1's sosend past that test: how many bytes it appends next, given
/// the send buffer's free space and the user data still to copy; `None` means
/// the writer must block until an ACK frees space.
pub fn sunos_append(space: u32, resid: u32) -> Option<u32> {
    if resid == 0 {
        return None;
    }
    if space >= CLUSTER && resid >= CLUSTER {
        return Some(CLUSTER);
    }
    if resid < SMALL_UNIT {
        return (space >= resid).then_some(resid);
    }
    let n = space.min(resid) / SMALL_UNIT * SMALL_UNIT;
    (n > 0).then_some(n)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn sunos_clusters_first_then_whole_kilobytes_then_the_tail() {
        assert_eq!(sunos_append(16384, 8192), Some(4096));
        // Free space 3 KB: three 1 KB pieces at once.
        assert_eq!(sunos_append(3 * 1024 + 100, 8192), Some(3072));
        // Remaining user data 3.5 KB with room: whole kilobytes, then the 512-byte tail.
        assert_eq!(sunos_append(16384, 3584), Some(3072));
        assert_eq!(sunos_append(16384, 512), Some(512));
        // Blocks when no piece fits.
        assert_eq!(sunos_append(1000, 8192), None);
        assert_eq!(sunos_append(300, 512), None);
        assert_eq!(sunos_append(16384, 0), None);
    }

    #[test]
    fn sunos_bulk_writer_waits_for_a_whole_cluster() {
        let sunos = AppendRule::SunOs;
        // 3 KB free in a 20 KB buffer, 8 KB to write: the writer sleeps ...
        assert_eq!(sunos.next(20480, 17408, 8192), None);
        assert_eq!(sunos.next(20480, 16384, 8192), Some(4096));
        // ... but a write's rest under a cluster, or a nearly empty buffer, goes in.
        assert_eq!(sunos.next(20480, 17408, 3000), Some(2048));
        assert_eq!(sunos.next(4096, 1024, 8192), Some(3072));
    }

    #[test]
    fn bsd_appends_a_cluster_at_a_time_above_the_low_water_mark() {
        let bsd = AppendRule::Bsd44 { mclbytes: 2048 };
        assert_eq!(bsd.next(65536, 0, 8192), Some(2048));
        let alpha = AppendRule::Bsd44 { mclbytes: 8192 };
        assert_eq!(alpha.next(65536, 0, 65536), Some(8192));
        assert_eq!(alpha.next(65536, 59536, 65536), None);
        // Below the low-water mark ...
        assert_eq!(bsd.next(65536, 64036, 8192), None);
        // ... unless the write fits.
        assert_eq!(bsd.next(65536, 64036, 1000), Some(1000));
        // A buffer smaller than a cluster: the low-water mark is the buffer.
        assert_eq!(bsd.next(512, 0, 65536), Some(512));
        assert_eq!(bsd.next(512, 412, 65536), None);
    }
}
