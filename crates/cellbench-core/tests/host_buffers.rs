//! A TCP segment reaches the adapter with the places where a 1 KB cluster mbuf
//! of the send buffer ends, where the SBA-200 stalls (SPEC §5), as the socket
//! layer appended them (SPEC §6.1): SunOS's 8 KB writes into a roomy buffer go
//! in as 4 KB clusters, so a full segment has none.

use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::run;

#[test]
fn sunos_segments_from_4k_clusters_give_the_adapter_no_stall() {
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
    assert!(b.is_empty(), "{b:?}");
    // Writes of 1 KB land in 1 KB clusters: their ends are the stalls, 1 KB apart.
    let small = LanBuffers {
        nbytes: 1 << 20,
        buflen: 1024,
        ..LanBuffers::default()
    };
    let r = run(&small.spec(1, 0, false).scenario().expect("valid")).expect("runs");
    let b = &r.transfers[0].probe.largest_segment_buffers;
    assert!(!b.is_empty(), "{b:?}");
    assert!(b.windows(2).all(|w| w[1] - w[0] == 1024), "{b:?}");
    assert!(b.iter().all(|&x| x < 9188), "{b:?}");
}
