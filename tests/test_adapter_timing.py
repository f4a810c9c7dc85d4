"""Adapter timing as docs/design.md §5 states it, seen from the testbed (issue 15 §5): what a
pacing rate counts, and the MAGIC path's delay derived once for both WAN studies.
(The cell-level rules -- the gap beyond the spacing interval, the stalls at host
buffer boundaries -- are tested in the Rust core: net/adapter.rs, host/socket.rs.)"""

from __future__ import annotations

import itertools
import re
import tempfile
from pathlib import Path

import pytest

from cellbench import _native, cells, vocab
from cellbench.experiment import lang, model, testbed
from cellbench.experiment.testbed.geometry import MAGIC_EQUIPMENT_MS, MAGIC_FIBRE_MS, MAGIC_RTT_MS
from cellbench.experiment.testbed.schema import ADAPTERS


def test_magic_path_delays_are_derived_from_the_same_facts():
    # wan-window and wan-mismatch describe one 600 km path: one trunk delay for both,
    # the fibre's 5 µs/km plus what the measured 8.8 ms round trip leaves to equipment.
    assert MAGIC_FIBRE_MS == pytest.approx(600 * 5e-3)
    assert MAGIC_EQUIPMENT_MS == pytest.approx(8.8 / 2 - 3.0)
    delays = {
        name: [t["delay_ms"] for t in testbed.preset(name).trunks]
        for name in ("wan-window", "wan-mismatch")
    }
    assert delays["wan-window"] == delays["wan-mismatch"] == [pytest.approx(4.4)]
    assert 2 * delays["wan-mismatch"][0] == pytest.approx(MAGIC_RTT_MS)


def test_the_mismatch_senders_pacing_counts_cells():
    tb = testbed.preset("wan-mismatch")
    assert tb.hosts["alpha1"].pacing_counts == "cells"
    # Cells are the run spec's default: the core's own stands, nothing is sent.
    assert "pacing_counts" not in model.host_spec(tb.hosts["alpha1"])
    assert vocab.DEFAULTS["host"]["pacing_counts"] == "cells"
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
    # pad, the LLC/SNAP header); each bound by its own 40 Mb/s, as ttcp measures at the
    # sender: its last write returns with up to a send buffer (128 KB of the 4 MB) not
    # yet sent, so the bound is 40 x 4 MB / (4 MB - 128 KB). (The OTTO has no gap
    # between PDUs to hide that under: docs/design.md §5.)
    cells, payloads, datagrams = (_paced_mbps(c) for c in ("cells", "payloads", "datagrams"))
    sender_side = (4 << 20) / ((4 << 20) - 131072)
    assert cells < payloads < datagrams < 40 * sender_side
    assert cells < 40 * 48 / 53 * sender_side
    assert datagrams > 0.9 * 40


def test_a_bad_pacing_quantity_in_a_run_spec_is_named():
    spec = {
        "hosts": [{"name": "a", "pacing_counts": "bytes"}, {"name": "b"}],
        "connections": [{"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}],
    }
    with pytest.raises(ValueError, match='host "a": pacing_counts "bytes": expected one of cells'):
        _native.simulate(spec)


# --- adapter timing per adapter, driver and send path (issue 21 §1) ------------------------

#: The 155.52 Mb/s ATM tester's cell slot, µs: the unit the study gave its IATs in.
SLOT_US = 424 / 155.52


def _host(name: str, **keys) -> dict:
    return {"name": name, "profile": "sparc-10", "phy": "oc3c"} | keys


def _cells(tx: dict, protocol: str, nbytes: int, window: int = 49152) -> list[list[float]]:
    """The start times (µs) of each data PDU's cells from ``tx`` as they leave the
    switch port to the receiver (an OC-3c port, no slower than the sender's link, so
    the cells keep the spacing they left the adapter with), PDU by PDU."""
    spec = {
        "hosts": [tx, _host("rx")],
        "connections": [
            {
                "transmitter": tx["name"],
                "receiver": "rx",
                "protocol": protocol,
                "sndbuf": window,
                "rcvbuf": window,
                "traffic": {"type": "full", "blocksize": 8192, "nbytes": nbytes},
            }
        ],
    }
    with tempfile.TemporaryDirectory(prefix="cellbench-adapter-") as tmp:
        path = Path(tmp) / "rx.pcap"
        _native.simulate(spec | {"cells": {"place": "rx", "path": str(path)}})
        # The forward circuit (connection 0, VCI 100); ACKs go the other way.
        c = cells.read(path, vc=(0, 100))
    assert c.first_s is not None
    at = round(c.first_s * 1e12)
    times = [at] + [at + d for d in itertools.accumulate(c.iat_ps)]
    starts = [0] + [end + 1 for end in c.pdu_ends[:-1]]
    return [[t / 1e6 for t in times[first : end + 1]] for first, end in zip(starts, c.pdu_ends)]


def test_tcp_segments_on_a_spaced_sba200_have_no_stall_and_the_52us_gap():
    # docs/design.md §5: on the policed VP the study's conformance analysis, borne out by its
    # traces, has every cell of a TCP segment at exactly the spacing interval and the
    # 52 µs gap (beyond the interval) between segments. SunOS's send buffer holds a bulk
    # writer's data in 4 KB clusters, whose ends stall nothing.
    tx = _host("tx", flavour="sunos411", spacing_us=16.01)
    pdus = _cells(tx, "tcp", 1 << 20)
    interval = 424 / 155.52 + 27 * 0.492  # 27 idle units of 0.492 µs: 16.0103 µs
    full = [p for p in pdus if len(p) == 192]
    assert len(full) > 50
    steps = [b - a for p in full for a, b in zip(p, p[1:])]
    assert max(steps) == pytest.approx(interval, abs=0.01)
    assert min(steps) == pytest.approx(interval, abs=0.01)
    # Back-to-back segments: the next one's first cell one interval plus 52 µs after
    # the last cell of the one before, never sooner.
    gaps = [b[0] - a[-1] for a, b in zip(full, full[1:])]
    assert min(gaps) == pytest.approx(interval + 52, abs=0.05)


def test_udp_datagrams_from_1k_clusters_stall_7_to_8_slots_every_21_to_22_cells():
    # The study's cell-tester measurement: a TAXI 140 SBA-200, driver 2.2.9, 8 KB UDP
    # datagrams (172 cells) at a requested 22.3 Mb/s at the ATM level: an increase of
    # 7-8 slots on top of the regular interval every 21-22 cells.
    tx = _host("tx", phy="taxi140", spacing_us=424 / 22.3)
    pdus = [p for p in _cells(tx, "udp", 8 * 8192) if len(p) == 172]
    assert len(pdus) >= 4
    for p in pdus:
        steps = [b - a for a, b in zip(p, p[1:])]
        regular = min(steps)
        extra = [(j + 1, (s - regular) / SLOT_US) for j, s in enumerate(steps) if s > regular + 1]
        assert len(extra) == 7, extra
        assert all(7 - 1e-3 <= x <= 8 + 1e-3 for _, x in extra), extra
        at = [0] + [j for j, _ in extra]
        assert {b - a for a, b in zip(at, at[1:])} <= {21, 22}, at


def test_cell_burst_gives_6_cell_bursts_at_22_3_mbps():
    # Driver 2.3.0 at the same requested 22.3 Mb/s: 6 cells back to back, about 40
    # tester slots between burst starts.
    tx = _host("tx", phy="taxi140", spacing="cell-burst", spacing_us=424 / 22.3)
    pdus = [p for p in _cells(tx, "udp", 4 * 8192) if len(p) == 172]
    assert pdus
    taxi140_cell = 424 / 140
    for p in pdus:
        starts = [0] + [j + 1 for j, (a, b) in enumerate(zip(p, p[1:])) if b - a > 2 * taxi140_cell]
        sizes = {b - a for a, b in zip(starts, starts[1:])}
        assert sizes == {6}, sizes
        periods = [(p[b] - p[a]) / SLOT_US for a, b in zip(starts, starts[1:])]
        assert all(38 <= x <= 44 for x in periods), periods


@pytest.mark.parametrize(
    "profile,adapter", [("sparc-10", None), ("ultra-1", None), ("pentium-90", "pca200")]
)
def test_unspaced_hosts_get_no_52us_gap(profile, adapter):
    # Unspaced, no adapter has a published gap (the SBA-200's is at most ~16 µs): PDUs
    # leave back to back when the sender has them.
    tx = _host("tx", profile=profile) | ({"adapter": adapter} if adapter else {})
    pdus = [p for p in _cells(tx, "tcp", 1 << 20) if len(p) > 100]
    gaps = [b[0] - a[-1] for a, b in zip(pdus, pdus[1:])]
    assert min(gaps) < 5, min(gaps)


def test_an_explicit_pdu_gap_overrides_the_table():
    # pdu_gap_us on a host replaces what its adapter model gives (here none, unspaced).
    tx = _host("tx", pdu_gap_us=30.0)
    pdus = [p for p in _cells(tx, "tcp", 1 << 20) if len(p) > 100]
    gaps = [b[0] - a[-1] for a, b in zip(pdus, pdus[1:])]
    cell_us = 424 / (155.52 * 26 / 27)  # an OC-3c cell time, SONET framing counted
    assert min(gaps) == pytest.approx(30 + cell_us, abs=0.05)


def test_the_adapter_table_names_a_source_for_every_entry():
    table = dict(_native.adapter_models())
    assert set(table) == {"sba100", "sba200", "pca200", "vma200", "otto"}
    for name, modes in table.items():
        for mode, gap_us, stall, source in modes:
            assert source
            if (name, mode) == ("sba200", "cell-level"):
                assert (gap_us, stall) == (52, True)
            else:
                assert (gap_us, stall) == (0, False) and source.startswith("none published")
    # The testbed language takes exactly these.
    assert ADAPTERS == tuple(table)


SPACED = """
testbed {
    defaults { profile = sparc-10; phy = oc3c; }
    host tx { spacing_us = 19.01; $key }
    host rx { }
}
cluster {
    test t { type = full (blocksize=8K, nbytes=1M); protocol = udp;
             own = tx:5001; peer = rx:5001; }
    test r { type = sink (blocksize=8K); protocol = udp; own = rx:5001; peer = tx:5001; }
}
"""


def test_spacing_and_adapter_are_host_options_of_the_testbed_language():
    exp = model.build(lang.parse(SPACED.replace("$key", "spacing = cell-burst;"), "s.netspec"))
    tx = next(h for h in exp.spec(1, 0)["hosts"] if h["name"] == "tx")
    assert tx["spacing"] == "cell-burst" and tx.get("pdu_gap_us") is None
    exp = model.build(lang.parse(SPACED.replace("$key", "adapter = otto;"), "s.netspec"))
    tx = next(h for h in exp.spec(1, 0)["hosts"] if h["name"] == "tx")
    assert tx["adapter"] == "otto"


@pytest.mark.parametrize(
    "key,expect",
    [
        ("spacing = burst;", "an adapter spacing mode: one of cell-level, cell-burst"),
        ("spacing = 3;", "an adapter spacing mode: one of cell-level, cell-burst"),
        ("adapter = sba-200;", "a host adapter: one of sba100, sba200, pca200, vma200, otto"),
    ],
)
def test_a_bad_spacing_or_adapter_is_named_with_its_place(key, expect):
    with pytest.raises(lang.ExperimentError) as e:
        model.build(lang.parse(SPACED.replace("$key", key), "s.netspec"))
    text = str(e.value)
    assert re.match(r"s\.netspec:4:\d+: ", text), text
    assert key.split("= ")[1].rstrip(";") in text and expect in text, text


def test_a_bad_spacing_in_a_run_spec_is_named():
    spec = {
        "hosts": [_host("a", spacing_us=19.0, spacing="bursty"), _host("b")],
        "connections": [{"transmitter": "a", "receiver": "b", "traffic": {"type": "full"}}],
    }
    with pytest.raises(ValueError, match='host "a": spacing "bursty": expected cell-level'):
        _native.check_spec(spec)
