"""Adapter timing as SPEC §5 states it, seen from the testbed (issue 15 §5): what a
pacing rate counts, and the MAGIC path's delay derived once for both WAN studies.
(The cell-level rules -- the gap beyond the spacing interval, the stalls at host
buffer boundaries -- are tested in the Rust core: net/adapter.rs, host/socket.rs.)"""

from __future__ import annotations

import re

import pytest

from cellbench import _native
from cellbench.experiment import lang, model, testbed


def test_magic_path_delays_are_derived_from_the_same_facts():
    # wan-window and wan-mismatch describe one 600 km path: one trunk delay for both,
    # the fibre's 5 µs/km plus what the measured 8.8 ms round trip leaves to equipment.
    assert testbed.MAGIC_FIBRE_MS == pytest.approx(600 * 5e-3)
    assert testbed.MAGIC_EQUIPMENT_MS == pytest.approx(8.8 / 2 - 3.0)
    delays = {
        name: [t["delay_ms"] for t in testbed.preset(name).trunks]
        for name in ("wan-window", "wan-mismatch")
    }
    assert delays["wan-window"] == delays["wan-mismatch"] == [pytest.approx(4.4)]
    assert 2 * delays["wan-mismatch"][0] == pytest.approx(testbed.MAGIC_RTT_MS)


def test_the_mismatch_senders_pacing_counts_cells():
    tb = testbed.preset("wan-mismatch")
    assert tb.hosts["alpha1"].pacing_counts == "cells"
    assert model.host_spec(tb.hosts["alpha1"])["pacing_counts"] == "cells"
    # Any host not saying otherwise counts cells too.
    assert testbed.HostSpec(name="x").pacing_counts == "cells"


PACED = """
testbed {
    defaults { profile = alpha-3000; phy = oc3c; flavour = osf1; }
    host tx { pacing_counts = $counts; }
    host rx { }
}
cluster {
    test t { type = full (blocksize=64K, nbytes=4M); protocol = tcp (window=128K, pacing=40);
             own = tx:5001; peer = rx:5001; }
    test r { type = sink (blocksize=64K); protocol = tcp (window=128K);
             own = rx:5001; peer = tx:5001; }
}
"""


def test_pacing_counts_is_a_host_option_of_the_testbed_language():
    exp = model.build(lang.parse(PACED.replace("$counts", "datagrams"), "p.netspec"))
    tx = next(h for h in exp.spec(1, 0)["hosts"] if h["name"] == "tx")
    assert tx["pacing_counts"] == "datagrams"
    with pytest.raises(lang.ExperimentError) as e:
        model.build(lang.parse(PACED.replace("$counts", "bits"), "p.netspec"))
    assert re.match(r"p\.netspec:4:31: ", str(e.value)), str(e.value)
    assert "cells, payloads, datagrams" in str(e.value)


def _paced_mbps(counts: str) -> float:
    spec = {
        "hosts": [
            {"name": n, "profile": "alpha-3000", "phy": "oc3c", "flavour": "osf1"}
            | ({"pacing_counts": counts} if n == "tx" else {})
            for n in ("tx", "rx")
        ],
        "connections": [
            {
                "transmitter": "tx",
                "receiver": "rx",
                "encap": "llc-snap",
                "sndbuf": 131072,
                "rcvbuf": 131072,
                "pacing_mbps": 40,
                "traffic": {"type": "full", "blocksize": 65536, "nbytes": 4 << 20},
            }
        ],
    }
    return _native.simulate(spec)["connections"][0]["throughput_bps"] / 1e6


def test_what_the_pacing_rate_counts_sets_the_data_rate():
    # 40 Mb/s of 53-byte cells carries less data than 40 Mb/s of 48-byte payloads,
    # which carries a little less than 40 Mb/s of IP datagrams (the AAL5 trailer and
    # pad, the LLC/SNAP header); each bound by its own 40 Mb/s.
    cells, payloads, datagrams = (_paced_mbps(c) for c in ("cells", "payloads", "datagrams"))
    assert cells < payloads < datagrams < 40
    assert cells < 40 * 48 / 53
    assert datagrams > 0.9 * 40


def test_a_bad_pacing_quantity_in_a_run_spec_is_named():
    spec = {
        "hosts": [{"name": "a", "pacing_counts": "bytes"}, {"name": "b"}],
        "connections": [{"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}],
    }
    with pytest.raises(ValueError, match='host "a": pacing_counts "bytes": expected one of cells'):
        _native.simulate(spec)
