"""What an emulated run records besides its rows (``--engine emu``, as root): the
simulator's per-port counters by cause, ``--series`` (each port's occupancy from the
network, each TCP sender's cwnd from TCP_INFO), drawn by ``cellbench plot``."""

from __future__ import annotations

import subprocess

import pandas as pd
from test_emu import CELLBENCH, leftovers, pytestmark, run  # noqa: F401 - the markers

import cellbench

#: OC-3c into a TAXI-100 port of 256 cells, Linux TCP with a 1 MB window: the port
#: fills and overflows.
LOSSY = """
testbed {
    host a { phy = oc3c; }
    host b { phy = taxi100; }
}
cluster {
    test t { type = full (blocksize=64K, nbytes=1M); protocol = tcp (window=1M);
             own = a:5001; peer = b:5001; }
    test r { type = sink (blocksize=64K); protocol = tcp (window=1M); own = b:5001; peer = a:5001; }
}
"""


def test_series_and_port_counters_as_the_simulators(tmp_path):
    before = leftovers()
    r = run(tmp_path, LOSSY, "--engine", "emu", "--series", "--out", "s.result")
    assert r.returncode == 0, r.stderr
    assert leftovers() == before
    res = cellbench.experiment.load(tmp_path / "s.result")
    ports, q, cw = res.ports(), res.queue_series(), res.cwnd_series()
    # The port to b fills to its buffer, and its series peaks where its counter does.
    to_b = ports[ports["host"] == "b"].iloc[0]
    assert to_b["peak_occupancy"] == 256 and to_b["cells_lost"] > 0
    assert not q.empty
    peaks = q.groupby("port")["cells"].max()
    for _, p in ports[ports["cells_out"] > 0].iterrows():
        assert peaks[p["port"]] == p["peak_occupancy"], p["host"]
    # Every lost cell has its cause; a tail-drop port loses by overflow only.
    causes = ["cells_lost_overflow", "cells_lost_ppd", "cells_lost_epd", "cells_lost_policed"]
    assert (ports[causes].sum(axis=1) + ports["cells_lost_clp"] == ports["cells_lost"]).all()
    assert to_b["cells_lost_overflow"] == to_b["cells_lost"]
    # The series are on the run's clock: the port's first cells come as the sender
    # starts (its first TCP_INFO sample; the emulator started 0.3 s before the run).
    assert set(cw["connection"]) == {0}
    assert abs(q["t_s"].min() - cw["t_s"].min()) < 0.05, (q["t_s"].min(), cw["t_s"].min())
    assert (cw["cwnd"] > 0).all()
    for kind in ("queue", "cwnd"):
        out = tmp_path / f"{kind}.png"
        p = subprocess.run(
            CELLBENCH + ["plot", "s.result", "--kind", kind, "-o", str(out)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert p.returncode == 0, p.stderr
        assert out.stat().st_size > 0


def test_without_series_no_samples(tmp_path):
    r = run(tmp_path, LOSSY.replace("1M)", "256K)", 1), "--engine", "emu", "--out", "p.result")
    assert r.returncode == 0, r.stderr
    res = cellbench.experiment.load(tmp_path / "p.result")
    assert res.queue_series().empty and res.cwnd_series().empty
    assert isinstance(res.ports(), pd.DataFrame) and res.ports()["cells_out"].sum() > 0
