//! Every TCP flavour (`tcp::flavour`) carries a LAN transfer through the whole
//! simulator: the lan-buffers testbed at the era's largest buffer and at the
//! largest the flavour allows, complete and without a retransmission.

use cellbench_core::sim::testbeds::LanBuffers;
use cellbench_core::sim::world::run;
use cellbench_core::tcp::Flavour;

#[test]
fn every_flavour_completes_a_lan_transfer_through_the_simulator() {
    for flavour in Flavour::ALL {
        // The era's largest buffer, and the largest the flavour allows (to 1 MB).
        for buf in [52_428, flavour.policy().max_sockbuf.min(1 << 20)] {
            let study = LanBuffers {
                sndbuf: buf,
                rcvbuf: buf,
                nbytes: 2 << 20,
                flavour,
                ..LanBuffers::default()
            };
            let r = run(&study.spec(1, 0, false).scenario().unwrap()).unwrap();
            let t = &r.transfers[0];
            assert!(t.completed, "{flavour} {buf}");
            assert_eq!(t.bytes, 2 << 20);
            assert_eq!(t.sender.segs_retransmitted, 0, "{flavour} {buf}");
            assert!(t.mbit_ttcp() > 10.0, "{flavour} {buf}: {}", t.mbit_ttcp());
        }
    }
}
