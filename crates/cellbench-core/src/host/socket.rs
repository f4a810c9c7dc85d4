//! The socket layer's side of a send: how sosend moves user data into the send
//! buffer. SunOS 4.1.1 copies into 4 KB clusters while it can, otherwise in
//! whole 1 KB pieces; a last piece under 1 KB goes in whole. tcp_output runs
//! after each piece, which is why the amounts TCP sees are multiples of 1 KB.

/// One cluster (MCLBYTES on the era's Sun kernels with 4 KB pages).
pub const CLUSTER: u32 = 4096;
/// The smaller unit sosend falls back to.
pub const SMALL_UNIT: u32 = 1024;

/// How many bytes sosend appends next, given the send buffer's free space and
/// the user data still to copy; `None` means the writer must block until an
/// ACK frees space.
pub fn next_append(space: u32, resid: u32) -> Option<u32> {
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
    fn clusters_first_then_whole_kilobytes_then_the_tail() {
        assert_eq!(next_append(16384, 8192), Some(4096));
        // Free space 3 KB: three 1 KB pieces at once.
        assert_eq!(next_append(3 * 1024 + 100, 8192), Some(3072));
        // Remaining user data 3.5 KB with room: whole kilobytes, then the 512-byte tail.
        assert_eq!(next_append(16384, 3584), Some(3072));
        assert_eq!(next_append(16384, 512), Some(512));
        // Blocks when no piece fits.
        assert_eq!(next_append(1000, 8192), None);
        assert_eq!(next_append(300, 512), None);
        assert_eq!(next_append(16384, 0), None);
    }
}
