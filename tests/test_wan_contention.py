"""wan-contention (TESTBEDS.md): the mechanisms each part reproduces, end to end."""

from __future__ import annotations

import json

import pytest

from cellbench.cli import main
from cellbench.reproduce import wan_contention


@pytest.fixture(scope="module")
def offered_load():
    return wan_contention.run(["offered-load"])


def test_offered_load_curve_has_a_lossless_knee(offered_load):
    rows = offered_load["rows"]
    assert {r["part"] for r in rows} == {"offered-load"}
    for r in rows:
        assert {"throughput_bps", "cells_lost", "limited_by", "period"} <= set(r)
    # Aggregate per point, by offered load.
    points: dict[float, list[dict]] = {}
    for r in rows:
        points.setdefault(r["period"], []).append(r)
    curve = sorted(
        (sum(r["offered_bps"] for r in rs), sum(r["throughput_bps"] for r in rs),
         sum(r["cells_lost"] for r in rs))
        for rs in points.values()
    )  # fmt: skip
    lossless = [p for p in curve if p[2] == 0]
    lossy = [p for p in curve if p[2] > 0]
    assert lossless and lossy
    # The knee: every load below it is lossless and carried in full, every load above
    # it loses cells; it sits below the shared DS-3's capacity for 8 KB datagrams
    # (96000 cells/s / 172 cells x 65536 bit = 36.58 Mb/s).
    knee = max(p[0] for p in lossless)
    assert all(p[0] > knee for p in lossy)
    assert all(c >= 0.99 * o for o, c, _ in lossless)
    assert knee < 96000 / 172 * 65536
    f = offered_load["offered_load"]
    assert f["lossless_bps"] == pytest.approx(lossless[-1][1])
    assert f["peak_bps"] >= f["lossless_bps"]
    # Full blast loses a cell of nearly every datagram at the shared port.
    assert f["full_load_bps"] < 0.1 * f["peak_bps"]
    losses = [r for r in rows if r["cells_lost"]]
    assert all(r["limited_by"] == "cell-loss" for r in losses)
    assert all("trunk kc->lawrence" in r["lost_at"] for r in losses if r["transmitter"] != "mpls1")


def test_deterministic_and_json_contract(offered_load, capsys):
    assert main(["reproduce", "wan-contention", "--part", "offered-load", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(offered_load))
    assert set(printed["offered_load"]) >= {"lossless_bps", "peak_bps", "full_load_bps"}


def test_out_is_a_result_show_and_plot_read(tmp_path, capsys):
    out = tmp_path / "wc"
    assert main(["reproduce", "wan-contention", "--part", "offered-load", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "maximum lossless throughput" in text and "Mb/s" in text
    assert main(["show", str(out / "offered-load")]) == 0
    png = tmp_path / "ol.svg"
    assert main(["plot", str(out / "offered-load"), "--kind", "offered-load", "-o", str(png)]) == 0
    svg = png.read_text()
    assert "lossless point" in svg and "peak" in svg and "full load" in svg


@pytest.fixture(scope="module")
def credits():
    return wan_contention.run(["credits"])["rows"]


def test_credits_prevent_cell_loss(credits):
    assert {r["mix"] for r in credits} == {"tcp-tcp", "udp-udp", "tcp-udp"}
    assert {r["stream"] for r in credits} == {"local", "remote"}
    with_credits = [r for r in credits if r["flow_control"] == "credit"]
    without = [r for r in credits if r["flow_control"] == "none"]
    assert len(with_credits) == len(without) == 8
    # Without flow control the shared port (and the hub's DS-3 port) overflow in every
    # case; with credits no cell is lost anywhere, and the two streams fill the port
    # to the receiver (OC-3c: 134.5 Mb/s of TCP payload in 9180-byte datagrams).
    cases = {(r["local"], r["remote"]) for r in credits}
    for case in cases:
        no = [r for r in without if (r["local"], r["remote"]) == case]
        yes = [r for r in with_credits if (r["local"], r["remote"]) == case]
        assert sum(r["cells_lost"] for r in no) > 0, case
        assert all(r["cells_lost"] == 0 and r["lost_at"] == [] for r in yes), case
        total = sum(r["throughput_bps"] for r in yes)
        assert total > 0.9 * 134.5e6 and total > sum(r["throughput_bps"] for r in no), case
        # Without credits, the remote stream (TCP: it backs off) starves in every case.
        remote = [r for r in no if r["stream"] == "remote"][0]
        assert remote["throughput_bps"] < 1e6 and remote["cells_lost"] > 0, case
    # The remote stream crosses the DS-3: it never gets more than its rate.
    assert all(r["throughput_bps"] < 36.9e6 for r in with_credits if r["stream"] == "remote")
    # Credits per VC per hop cover the longest hop's round trip: kclab -> hub, OC-3c,
    # 0.5 ms each way: (2.831 µs + 1 ms) / 2.831 µs -> 355 cells.
    assert {r["credits"] for r in with_credits} == {355}


def test_credits_on_a_switch_without_flow_control_are_refused(tmp_path, capsys):
    bad = tmp_path / "bad.netspec"
    bad.write_text(
        "testbed wan-contention {\n"
        "    switch lawrence { buffer_cells = 512;\n"
        "                      credits = 64; }\n"
        "}\n"
        "cluster { test a { type = full (duration=1); own = law1:1; peer = law2:1; }\n"
        "          test b { type = sink; own = law2:1; peer = law1:1; } }\n"
    )
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"cellbench: error: {bad}:3:33: found credits = 64, expected credits only on a "
        "switch with flow_control = credit"
    )
    bad.write_text(bad.read_text().replace("credits = 64;", "flow_control = credit;"))
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"cellbench: error: {bad}:2:5: found flow_control = credit, expected")
