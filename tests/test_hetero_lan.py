"""hetero-lan: the heterogeneous host pairs, each with its own OS's TCP.

Each test asserts a mechanism: a pair whose hosts cannot fill OC-3c (SPEC §6.3: a
host sends or receives about twice its loopback rate) is bound by a host's CPU; a
pair of fast hosts is bound by the link; Windows NT's unbuffered send (a send of at
least SO_SNDBUF returns only once acknowledged) against an NT receiver that ACKs only
every second full segment releases one message per 200 ms delayed-ACK timer; the
same seed gives the same rows at any worker count.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from cellbench.experiment import testbed
from cellbench.reproduce import hetero_lan

#: Short measurements: every mechanism below shows within a second.
SECONDS = 1.0


@pytest.fixture(scope="module")
def surfaces():
    return hetero_lan.run(seconds=SECONDS, workers=2)


def test_every_pair_sweeps_buffers_and_messages_in_whole_mss(surfaces) -> None:
    assert tuple(dict.fromkeys(surfaces.pair)) == hetero_lan.PAIR_NAMES
    for pair in hetero_lan.PAIRS:
        part = surfaces[surfaces.pair == pair.name]
        assert set(part.message_size) >= {k * pair.mss for k in range(1, 8)}
        assert part.socket_buffer.min() == 8192
        # Equal at both ends, never beyond what both kernels accept.
        tb = testbed.preset("hetero-lan")
        for host in (pair.transmitter, pair.receiver):
            limit = testbed.FLAVOUR_MAX_SOCKBUF[tb.hosts[host].flavour]
            assert part.socket_buffer.max() <= limit
    small = surfaces[surfaces.pair == "ultra1->ultra1"].message_size
    assert set(small) >= set(hetero_lan.SMALL_MESSAGES)
    assert {"throughput_bps", "cells_lost", "limited_by"} <= set(surfaces.columns)


@pytest.mark.parametrize(
    "pair, host",
    [
        # SPARCstation 10 (43.55 Mb/s loopback) sending to a Power Challenge.
        ("sparc10->challenge", "sender CPU (sparc-10)"),
        # Pentium-100 (49.30) receiving from a Power Challenge.
        ("challenge->pentium100", "receiver CPU (pentium-100)"),
    ],
)
def test_slow_hosts_bind_their_pairs_at_large_buffers(surfaces, pair: str, host: str) -> None:
    part = surfaces[surfaces.pair == pair]
    big = part[part.socket_buffer == part.socket_buffer.max()]
    assert (big.limited_by == "host-cpu").all(), big[["message_size", "limit_evidence"]]
    assert big.limit_evidence.str.startswith(host).all()
    # Well below what OC-3c carries: the host, not the link.
    assert big.percent_of_theoretical.max() < 75


def test_fast_hosts_fill_the_link(surfaces) -> None:
    for pair in ("ultra1->ultra1", "sparc20->sparc20"):
        part = surfaces[surfaces.pair == pair]
        big = part[part.socket_buffer == part.socket_buffer.max()]
        assert (big.limited_by == "link").all()
        assert big.percent_of_theoretical.min() > 80
    # The fast pairs outrun every host-limited one.
    best = {m["pair"]: m["throughput_bps"] for m in hetero_lan.maxima(surfaces)}
    assert min(best["ultra1->ultra1"], best["sparc20->sparc20"]) > max(
        best["sparc10->challenge"], best["challenge->pentium100"], best["pentium90->pentium90"]
    )


def test_nt_unbuffered_send_collapses_to_one_message_per_delayed_ack(surfaces) -> None:
    # An 8 KB socket buffer and one-MSS messages: each send is at least SO_SNDBUF, so
    # it returns only once acknowledged; its last piece (9148 - 8192 bytes) is not a
    # full segment, and the NT receiver ACKs it only when its 200 ms timer runs out.
    part = surfaces[surfaces.pair == "pentium90->pentium90"]
    row = part[(part.socket_buffer == 8192) & (part.message_size == 9148)].iloc[0]
    per_timer = 9148 * 8 / 0.200
    # (a 1 s run holds five timer periods and the first message, sent at once)
    assert row.throughput_bps == pytest.approx(per_timer, rel=0.25)
    # The explanation names it: the sender waits in send(), not in Nagle.
    assert row.limited_by == "lockstep"
    assert row.limit_evidence.startswith("unacknowledged-send/delayed-ACK circular wait")
    # With room for the message in the buffer AFD copies it and returns at once.
    roomy = part[(part.socket_buffer == 2 * 9148) & (part.message_size == 9148)].iloc[0]
    assert roomy.throughput_bps > 50 * row.throughput_bps


def test_remarkable_cases_are_read_from_the_surfaces(surfaces) -> None:
    cases = hetero_lan.remarkable(surfaces)
    for c in cases:
        part = surfaces[surfaces.pair == c["pair"]]
        pair = next(p for p in hetero_lan.PAIRS if p.name == c["pair"])
        if c["case"] == "collapse":
            assert c["socket_buffer"] == c["message_size"] == pair.mss
            assert c["throughput_bps"] < hetero_lan.COLLAPSE_SHARE * part.throughput_bps.median()
        else:
            assert c["message_size"] < pair.mss
            if c["scope"] == "socket_buffer":
                part = part[part.socket_buffer == c["socket_buffer"]]
            assert c["throughput_bps"] == part.throughput_bps.max()
            above = part[part.message_size >= pair.mss].throughput_bps.max()
            assert c["throughput_bps"] > (1 + hetero_lan.FASTER_BY) * above


def test_same_seed_same_rows_at_any_worker_count() -> None:
    one = hetero_lan.run(pairs=["sparc20->sparc20"], seconds=0.3, workers=1)
    two = hetero_lan.run(pairs=["sparc20->sparc20"], seconds=0.3, workers=2)
    assert one.to_dict(orient="records") == two.to_dict(orient="records")


def test_json_contract_and_stored_result(tmp_path) -> None:
    out = tmp_path / "h"
    cmd = [sys.executable, "-m", "cellbench", "reproduce", "hetero-lan", "--json"]
    p = subprocess.run(
        [*cmd, "--pair", "ultra1->ultra1", "--seconds", "0.3", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    d = json.loads(p.stdout)
    (m,) = d["maxima"]
    assert m["pair"] == "ultra1->ultra1"
    assert set(m) >= {"throughput_bps", "percent_of_theoretical", "socket_buffer", "message_size"}
    assert all({"throughput_bps", "cells_lost", "limited_by"} <= set(r) for r in d["rows"])
    assert {"socket_buffer", "message_size"} <= set(d["rows"][0])
    # The stored result draws its surface.
    png = tmp_path / "s.png"
    subprocess.run(
        [sys.executable, "-m", "cellbench", "plot", str(out / "ultra1-ultra1"), "--kind",
         "buffer-surface", "-o", str(png)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize(
    "host, message",
    [
        # A flavour name the core does not know, with its position.
        ("flavour = nt4;", "x.netspec:2:58: found nt4, expected a TCP flavour: one of"),
        ("profile = pentium-133;", "x.netspec:2:58: found pentium-133, expected a host profile"),
    ],
)
def test_unknown_flavour_or_profile_is_one_line_with_position(tmp_path, host, message) -> None:
    f = tmp_path / "x.netspec"
    f.write_text(
        "testbed hetero-lan {\n"
        f"    host pentium90-a {{ phy = oc3c; site = tb1; {host} }}\n"
        "}\n"
        "cluster {\n"
        "    test s { type = full (nbytes=1M); own = pentium90-a:1; peer = pentium90-b:1; }\n"
        "    test r { type = sink; own = pentium90-b:1; peer = pentium90-a:1; }\n"
        "}\n"
    )
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "run", "x.netspec"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert message in p.stderr


def test_a_window_nt_cannot_advertise_is_an_error(tmp_path) -> None:
    f = tmp_path / "w.netspec"
    f.write_text(
        "testbed hetero-lan { }\n"
        "cluster {\n"
        "    test s { type = full (nbytes=1M); protocol = tcp (window=128K);\n"
        "             own = challenge:1; peer = pentium100:1; }\n"
        "    test r { type = sink; protocol = tcp (window=128K);\n"
        "             own = pentium100:1; peer = challenge:1; }\n"
        "}\n"
    )
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "run", "w.netspec"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr == (
        "cellbench: error: w.netspec:5:38: SO_RCVBUF 131072 is a window nt351 cannot "
        "advertise: at most 65535 (no RFC 1323 window scaling)\n"
    )


def test_ultra1_pair_at_8k_is_fastest_with_messages_below_the_mss(surfaces) -> None:
    # An 8 KB window holds two whole 4 KB messages (4096-byte segments, 87 cells);
    # messages of one MSS and more split into 8192-byte segments and short tails that
    # wait on the receiver's delayed ACK. The study's small messages show it.
    cases = [c for c in hetero_lan.remarkable(surfaces) if c["case"] == "fastest-below-mss"]
    at_8k = [c for c in cases if c["pair"] == "ultra1->ultra1" and c["socket_buffer"] == 8192]
    assert at_8k and at_8k[0]["message_size"] < 9148


def test_one_mss_buffer_and_message_is_a_stop_and_wait_bound_by_the_window(surfaces) -> None:
    # Buffer = message = one MSS: the sender has one segment out, then waits for the
    # receiver to take it in, read it and open the window again. Both hosts' work is
    # in that loop, so the window over the segment's round trip overstates it; over
    # the round trip the window really took, it is the bound.
    part = surfaces[surfaces.pair == "pentium90->pentium90"]
    row = part[(part.socket_buffer == 9148) & (part.message_size == 9148)].iloc[0]
    assert row.limited_by == "window", row.limit_evidence
    assert row.limit_evidence.startswith(
        "window 9148 B in flight (sndbuf 9148, rcvbuf 9148) closed "
    ), row.limit_evidence
    m = re.search(
        r"round trip with both hosts' work ([\d.]+) ms \(segment out to its ACK in ([\d.]+) ms\) "
        r"= ([\d.]+) Mb/s; measured ([\d.]+) Mb/s",
        row.limit_evidence,
    )
    assert m, row.limit_evidence
    loop_ms, rtt_ms, bound, measured = map(float, m.groups())
    # The loop is longer than the segment's round trip by the sender's own work
    # (the window update's input, the next write's copy, its output).
    assert loop_ms > 1.3 * rtt_ms
    # One segment per loop is what the transfer got.
    assert bound == pytest.approx(9148 * 8 / loop_ms / 1e3, rel=0.01)
    assert measured == pytest.approx(bound, rel=0.10)
