//! A TCP segment reaches the adapter with the boundaries of the send-buffer
//! mbufs it is gathered from (SPEC §5), as the socket layer appended them
//! (SPEC §6.1): SunOS's 8 KB writes into a roomy buffer go in as 4 KB clusters.

use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::run;

#[test]
fn sunos_segments_carry_their_4k_cluster_boundaries() {
    let study = LanBuffers {
        nbytes: 1 << 20,
        ..LanBuffers::default()
    };
    let scenario = study.spec(1, 0, false).scenario().expect("valid");
    let r = run(&scenario).expect("runs");
    let p = &r.transfers[0].probe;
    // A full segment: 9148 data bytes after 40 bytes of TCP/IP headers (VC-mux).
    assert_eq!(p.largest_segment, Some((9148, 9188)));
    let b = &p.largest_segment_buffers;
    // The header buffer ends at 40; then 4 KB clusters: 2 or 3 begin inside
    // 9148 bytes, 4096 apart.
    assert_eq!(b[0], 40, "{b:?}");
    assert!((3..=4).contains(&b.len()), "{b:?}");
    assert!(b[1..].windows(2).all(|w| w[1] - w[0] == 4096), "{b:?}");
    assert!(b.iter().all(|&x| x < 9188), "{b:?}");
}
