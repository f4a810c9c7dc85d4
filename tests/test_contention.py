"""Many TCPs through one congested port (issue 34's instruments): what a run stores
and prints about fairness, starvation, backoff, wasted cells and idle time, held to
what must hold whatever the outcome (docs/mechanisms.md, "Many TCPs through one
congested port")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cellbench.engines.sim.api import run as run_experiment
from cellbench.experiment.results import contention


def _test(i: int) -> str:
    return (
        f"test s{i} {{ type = full (blocksize=64K, duration=2); protocol = tcp (window=48K); "
        f"own = h{i}:{7000 + i}; peer = dst:{7000 + i}; }}\n"
        f"test k{i} {{ type = sink (blocksize=64K); protocol = tcp (window=48K); "
        f"own = dst:{7000 + i}; peer = h{i}:{7000 + i}; }}\n"
    )


#: Three Reno senders on OC-3c into one OC-3c port, 256 and 4096 cells of buffer.
EXPERIMENT = (
    "testbed lan { encap = llc-snap; mtu = 9180;\n"
    "  defaults { profile = alpha-3000; phy = oc3c; flavour = reno; }\n"
    "  switch { buffer_cells = $buffer; policy = tail-drop; }\n"
    "  host h0 { } host h1 { } host h2 { } host dst { } }\n"
    "cluster { parallel {\n" + "".join(_test(i) for i in range(3)) + "} }\n"
    "sweep { buffer = [256, 4096]; }\n"
)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    d = tmp_path_factory.mktemp("contention")
    (d / "e.netspec").write_text(EXPERIMENT)
    return d, run_experiment(d / "e.netspec", out=d / "r", workers=1)


def test_every_connection_and_port_carries_the_instruments(stored):
    _, result = stored
    rows = result.to_pandas()
    senders = rows[rows["test"].str.startswith("s")]
    for col in ("goodput_bps", "timeouts", "max_backoff", "rexmt_wait_s", "fairness_jain"):
        assert senders[col].notna().all(), col
    # Jain's index lies in [1/n, 1] for the n connections of a run.
    assert senders["fairness_jain"].between(1 / 3 - 1e-9, 1 + 1e-9).all()
    # A backoff is only reached through timeouts, and waiting needs a timeout.
    assert (senders["max_backoff"] <= senders["timeouts"]).all()
    assert ((senders["rexmt_wait_s"] > 0) == (senders["timeouts"] > 0)).all()
    ports = result.ports()
    # Every PDU's cells a port carried were delivered or wasted, or still in flight.
    assert (ports["cells_delivered"] + ports["cells_wasted"] <= ports["cells_out"]).all()
    assert ports["idle_s"].dropna().ge(0).all()


def test_a_starved_connection_says_who_held_the_port(stored):
    _, result = stored
    rows = result.to_pandas()
    for _, r in rows[rows["limited_by"] == "capture"].iterrows():
        ev = r["limit_evidence"]
        assert ev.startswith("starved: ") and "held it at" in ev and "backed off" in ev, ev
        assert r["transmitter"] + "->dst" in r["starved"].replace(" -> ", ",").split(",")
    # Whoever starves is named by its run; a run naming none has no capture.
    for _, run in rows.groupby("run"):
        if not run["starved"].fillna("").any():
            assert not run["limited_by"].eq("capture").any()


def test_show_prints_the_contention_tables_where_there_is_contention(stored):
    d, result = stored
    lines = contention.lines(result)
    out = subprocess.run(
        [sys.executable, "-m", "cellbench", "show", str(d / "r")],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    for line in lines:
        assert line in out
    if result.ports()["cells_lost"].gt(0).any():
        assert any(line.startswith("# ports that lost cells") for line in lines)


def _row(tx: str, mbps: float, cells_lost: int) -> dict:
    return {
        "protocol": "tcp", "transmitter": tx, "receiver": "dst", "throughput_bps": mbps * 1e6,
        "cells_lost": cells_lost, "retransmits": 3 if cells_lost else 0,
        "limited_by": "cell-loss" if cells_lost else "window", "limit_evidence": "counts",
    }  # fmt: skip


def test_a_real_tcp_run_names_capture_from_its_rows():
    rows = [_row("a", 130.0, 0), _row("b", 0.3, 900), _row("c", 0.2, 0), _row("d", 40.0, 10)]
    contention.name_capture(rows)
    # b starved where the network lost its cells and a held the port: capture; c starved
    # too but lost nothing (no capture); d got under its share but is not starved.
    assert [r["limited_by"] for r in rows] == ["window", "capture", "window", "cell-loss"]
    assert rows[1]["limit_evidence"].startswith("starved: 0.300 Mb/s")
    assert "a->dst held the port at 130.00 Mb/s" in rows[1]["limit_evidence"]
    assert all(r["starved"] == "b->dst -> c->dst" for r in rows)
    xs = [130.0, 0.3, 0.2, 40.0]
    assert rows[0]["fairness_jain"] == pytest.approx(sum(xs) ** 2 / (4 * sum(x * x for x in xs)))
