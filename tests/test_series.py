"""Time series (docs/design.md §8): cwnd per TCP sender and queue occupancy per switch port,
stored with a result (--series) and drawn from it (cwnd, queue) without re-running."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import cellbench
from cellbench import _native
from cellbench.cli import main
from cellbench.plots import draw, series

# Two full-blast Reno senders into one receiver through a 256-cell tail-drop port:
# the port to the sink fills, loses cells, and the senders' windows react. A 52 µs gap
# between each adapter's PDUs (pdu_gap_us overrides the unspaced SBA-200's none) keeps
# the two interleaving at the port, so both lose and react; with no gap one of them can
# hold the port whole (a lock-out) and the other only time out.
CONGESTED = """
testbed lan {
    defaults { profile = ultra-1; phy = oc3c; flavour = reno; pdu_gap_us = 52; }
    switch { buffer_cells = 256; policy = tail-drop; }
}
cluster {
    parallel {
        test a { type = full (blocksize=8K, duration=1); protocol = tcp (window=64K);
                 own = a.atm:7001; peer = sink.atm:7001; }
        test b { type = full (blocksize=8K, duration=1); protocol = tcp (window=64K);
                 own = b.atm:7002; peer = sink.atm:7002; }
        test sa { type = sink (blocksize=8K); protocol = tcp (window=64K);
                  own = sink.atm:7001; peer = a.atm:7001; }
        test sb { type = sink (blocksize=8K); protocol = tcp (window=64K);
                  own = sink.atm:7002; peer = b.atm:7002; }
    }
}
"""


@pytest.fixture(scope="module")
def netspec(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "congested.netspec"
    path.write_text(CONGESTED)
    return path


@pytest.fixture(scope="module")
def stored(netspec, tmp_path_factory):
    out = tmp_path_factory.mktemp("series") / "r"
    assert main(["run", str(netspec), "--series", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def plain(netspec, tmp_path_factory):
    out = tmp_path_factory.mktemp("plain") / "r"
    cellbench.run(netspec, out=out)
    return out


def test_stored_series_match_the_counters(stored):
    res = cellbench.experiment.load(stored)
    assert res.meta["series"] is True
    cw, q, ports = res.cwnd_series(), res.queue_series(), res.ports()
    assert set(cw["connection"]) == {0, 1}
    for _, part in cw.groupby("connection"):
        assert part["t_s"].is_monotonic_increasing
        # A sample only when something changed.
        vals = part[["cwnd", "ssthresh", "flight"]].to_numpy()
        assert (vals[1:] != vals[:-1]).any(axis=1).all()
    # The congested port fills to its buffer; every port's series peaks at its counter.
    sink = ports[ports["host"] == "sink.atm"].iloc[0]
    assert sink["cells_lost"] > 0 and sink["peak_occupancy"] == 256
    # Every lost cell has one cause: a tail-drop port loses by overflow only.
    causes = ["overflow", "ppd", "epd", "policed", "clp"]
    assert (ports[[f"cells_lost_{c}" for c in causes]].sum(axis=1) == ports["cells_lost"]).all()
    assert sink["cells_lost_overflow"] == sink["cells_lost"] and sink["pdus_damaged"] > 0
    peaks = q.groupby("port")["cells"].max()
    for _, p in ports.iterrows():
        assert peaks[p["port"]] == p["peak_occupancy"], p["host"]
    # A loss cuts ssthresh below the 64 KB window it started at.
    assert cw["ssthresh"].min() < cw["ssthresh"].iloc[0]


def test_in_memory_and_stored_series_agree(netspec, stored):
    mem = cellbench.run(netspec, series=True)
    disk = cellbench.experiment.load(stored)
    assert mem.cwnd_series().equals(disk.cwnd_series())
    assert mem.queue_series().equals(disk.queue_series())


def test_without_series_nothing_is_added(plain, netspec):
    res = cellbench.experiment.load(plain)
    assert "series" not in res.meta
    assert res.cwnd_series().empty and res.queue_series().empty
    assert not any((plain / "cwnd").iterdir()) and not any((plain / "queue").iterdir())
    # The simulator's own output has no series keys unless asked.
    plan = cellbench.experiment.plan.make_plan(netspec)
    spec = plan.experiments[0].spec(1, 0)
    off = _native.simulate({**spec, "series": False})
    on = _native.simulate({**spec, "series": True})
    assert "cwnd_series" not in json.dumps(off) and "queue_series" not in json.dumps(off)
    for c in on["connections"]:
        c.pop("cwnd_series")
    for p in on["ports"]:
        p.pop("queue_series")
    assert on == off


@pytest.mark.parametrize("kind, suffix", [("cwnd", ".svg"), ("queue", ".svg"), ("cwnd", ".png")])
def test_plots_from_a_stored_result(stored, tmp_path, kind, suffix):
    out = tmp_path / f"{kind}{suffix}"
    assert main(["plot", str(stored), "--kind", kind, "-o", str(out)]) == 0
    data = out.read_bytes()
    assert len(data) > 2000
    if suffix == ".svg":
        text = data.decode()
        if kind == "cwnd":
            for label in ("Congestion window", "cwnd", "ssthresh", "in flight", "a.atm"):
                assert label in text, label
        else:
            assert "occupancy (cells)" in text and "sink.atm (peak 256)" in text
            assert "a.atm (peak" not in text  # ports that never queued are left out
            assert "port buffer: 256 cells" in text


def test_cwnd_marks_the_loss_reactions_its_series_shows(stored):
    """A timeout leaves cwnd below the new ssthresh; a fast retransmit at or above it."""
    res = cellbench.experiment.load(stored)
    s = res.cwnd_series()
    s = s[(s.run == 0) & (s.connection == 0)].sort_values("t_s", kind="stable")
    t, cw, th = (s[k].to_numpy(float) for k in ("t_s", "cwnd", "ssthresh"))
    timeouts, fast = series.loss_reactions(t, cw, th)
    row = res.to_pandas().query("run == 0 and connection == 0").iloc[0]
    # Every loss reaction the sender counted shows in the series, and no more.
    assert len(timeouts) == row.timeouts
    assert len(timeouts) + len(fast) >= 1 and row.retransmitted_segments >= len(fast)


def test_plot_selects_a_connection_and_a_port(stored, tmp_path):
    res = cellbench.experiment.load(stored)
    out = tmp_path / "b.svg"
    draw.plot(res, "cwnd", out, run=0, connection=1)
    assert "connection 1 (b.atm → sink.atm)" in out.read_text()
    draw.plot(res, "queue", out, port=0)
    assert "port 0 to a.atm (peak 1)" in out.read_text()


def test_plot_errors_name_what_is_missing(stored, plain, tmp_path, capsys):
    png = str(tmp_path / "x.png")
    for kind in ("cwnd", "queue"):
        assert main(["plot", str(plain), "--kind", kind, "-o", png]) == 2
        err = capsys.readouterr().err
        assert err == f"cellbench: error: the result holds no {kind} series: run it with --series\n"
    assert main(["plot", str(stored), "--kind", "cwnd", "--connection", "7", "-o", png]) == 2
    assert "no cwnd series for run 0 connection 7: it has connections 0, 1" in (
        capsys.readouterr().err
    )
    assert main(["plot", str(stored), "--kind", "queue", "--run", "4", "-o", png]) == 2
    assert "no queue series for run 4: the result has it for runs 0" in capsys.readouterr().err
    assert main(["plot", str(stored), "--kind", "queue", "--port", "9", "-o", png]) == 2
    assert "no queue series for run 0 port 9: it has ports 0, 1, 2" in capsys.readouterr().err


def test_reproductions_store_series_with_out(tmp_path) -> None:
    """`reproduce ... --series --out DIR`: the study's result carries the series to plot."""
    out = tmp_path / "ww"
    cmd = [sys.executable, "-m", "cellbench"]
    r = subprocess.run([*cmd, "reproduce", "wan-window", "--series", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    png = tmp_path / "cwnd.png"
    r = subprocess.run([*cmd, "plot", str(out), "--kind", "cwnd", "--run", "8", "-o", str(png)],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 0
    # Series live only in a stored result.
    r = subprocess.run([*cmd, "reproduce", "europe-vp", "--series"],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 2 and "--series needs --out" in r.stderr
