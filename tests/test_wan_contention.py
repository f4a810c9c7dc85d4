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
