"""cellbench reproduce ubr (docs/ubr.md): N TCPs through one congested OC-3c port. The
checks hold by construction whatever the outcome: the port's time is delivered +
wasted + idle (+ cells of PDUs still in flight), EPD refuses whole PDUs only, the
train and per-cell networks agree on every run, Jain's index is within its bounds;
and bad options are refused in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cellbench import _native, calc
from cellbench.experiment.plan import make_plan
from cellbench.reproduce import REGISTRY, study, ubr

#: The port's cells per second (OC-3c: ANSI T1.105).
OC3C_CELLS_PER_S = calc.phy_rates("oc3c")["cells_per_sec"]


@pytest.fixture(scope="module")
def rows():
    opts = study.Options(
        seed=1,
        workers=2,
        replications=1,
        sets=("buffer=256,2048", "mtu=9180,1500"),
        params={"connections": 5, "flavour": "reno", "seconds": 0.5},
    )
    got = study.run_parts(REGISTRY["ubr"], opts)
    return got["buffers"]


def test_the_port_time_is_delivered_wasted_idle_and_in_flight(rows):
    assert len(rows) == 2 * 2 * 3
    for r in rows:
        in_flight = r["cells_out"] - r["cells_delivered"] - r["cells_wasted"]
        # Cells of PDUs whose fate was not known at the end: at most a buffer's worth
        # and each connection's window in flight (none once every transfer finished).
        assert 0 <= in_flight <= r["buffer"] + r["connections"] * 6 * 193, r
        parts = r["delivered_pct"] + r["wasted_pct"] + r["idle_pct"]
        assert parts == pytest.approx(
            100 - 100 * in_flight / (r["cells_out"] + r["idle_s"] * OC3C_CELLS_PER_S), abs=1e-6
        )
        assert 0 < r["effective"] <= 1
        assert 1 / r["connections"] - 1e-9 <= r["fairness_jain"] <= 1 + 1e-9
        assert r["max_backoff"] <= r["timeouts"]


def test_each_policy_drops_only_its_own_causes(rows):
    for r in rows:
        if r["policy"] == "tail-drop":
            assert r["cells_lost_ppd"] == r["cells_lost_epd"] == 0, r
        if r["policy"] == "ppd":
            assert r["cells_lost_epd"] == 0, r
    assert any(r["cells_lost_overflow"] for r in rows), "the grid must congest the port"


def test_train_and_per_cell_agree_on_a_ubr_run():
    sweep = {"mtu": 9180, "flavour": "reno", "buffer": 256, "policy": "epd", "epd": 0.5}
    plan = make_plan(ubr.experiment_text(4, sweep, 0.3), file="ubr.netspec")
    spec = next(iter(plan.tasks())).spec
    train = _native.simulate({**spec, "per_cell": False})
    per_cell = _native.simulate({**spec, "per_cell": True})
    for r in (train, per_cell):
        r.pop("events")
    assert train == per_cell
    assert any(p["cells_lost"] for p in train["ports"]), "the run must congest the port"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--connections", "1"], "--connections 1: expected 2 to 30"),
        (["--connections", "31"], "--connections 31: expected 2 to 30"),
        (["--seconds", "0"], "--seconds 0.0: expected a duration above 0"),
    ],
)
def test_bad_options_are_refused_in_one_line(args, message):
    r = subprocess.run(
        [sys.executable, "-m", "cellbench", "reproduce", "ubr", *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode != 0
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_port_buffer_plot_draws_a_stored_buffers_part(tmp_path):
    from cellbench.experiment import results
    from cellbench.plots.draw import plot

    opts = study.Options(
        seed=1,
        workers=2,
        replications=1,
        out=tmp_path / "ubr",
        sets=("buffer=256,1024", "mtu=9180"),
        params={"connections": 3, "flavour": "reno", "seconds": 0.3},
    )
    study.run_parts(REGISTRY["ubr"], opts)
    result = results.load(tmp_path / "ubr" / "buffers")
    svg = plot(result, "port-buffer", tmp_path / "p.svg").read_text()
    assert "switch port buffer (cells)" in svg and "wasted cells" in svg
    for policy in ("tail-drop", "ppd", "epd"):
        assert f"policy {policy}" in svg
