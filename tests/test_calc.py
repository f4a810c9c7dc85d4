"""The calculators end to end: `cellbench calc ...` as a user runs it, and the Python API."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cellbench
from cellbench import calc

# The published tables the project carries (python/cellbench/data, with their sources).
REFERENCE = Path(__file__).resolve().parents[1] / "python" / "cellbench" / "data"
LAYER_CSV = REFERENCE / "layer_bandwidth.csv"

_EXE = shutil.which("cellbench")
CELLBENCH = [_EXE] if _EXE else [sys.executable, "-m", "cellbench"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CELLBENCH, *args], capture_output=True, text=True, timeout=60, check=False
    )


def run_json(*args: str):
    p = run(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def reference_columns() -> dict[str, dict[str, str]]:
    with LAYER_CSV.open() as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {
        col: {r["layer"]: r[col] for r in rows}
        for col in ("classical_ip_mtu_9180", "vc_mux_mtu_9188")
    }


# --- layer bandwidth -------------------------------------------------------------


@pytest.mark.parametrize(
    "column, encap, mtu",
    [("classical_ip_mtu_9180", "llc-snap", "9180"), ("vc_mux_mtu_9188", "vc-mux", "9188")],
)
def test_layers_cli_reproduces_reference_table(column, encap, mtu):
    expected = reference_columns()[column]
    got = run_json("calc", "layers", "--phy", "oc3c", "--encap", encap, "--mtu", mtu)
    assert [r["layer"] for r in got] == ["line", "atm", "aal5", "ip", "tcp_payload"]
    assert {r["layer"]: f"{r['mbps']:.3f}" for r in got} == expected


def test_layers_api_reproduces_reference_table_with_default_mtu():
    ref = reference_columns()
    for column, encap in (("classical_ip_mtu_9180", "llc-snap"), ("vc_mux_mtu_9188", "vc-mux")):
        got = calc.layers("oc3c", encap)
        assert {r["layer"]: f"{r['mbps']:.3f}" for r in got} == ref[column]
    assert calc.layers("oc3c", "llc-snap", 9180) == calc.layers("oc3c", "llc-snap")
    assert cellbench.calc.layers is calc.layers


@pytest.mark.parametrize(
    "column, encap, mtu",
    [("classical_ip_mtu_9180", "llc-snap", "9180"), ("vc_mux_mtu_9188", "vc-mux", "9188")],
)
def test_layers_print_the_published_figures_where_the_table_gives_them(column, encap, mtu):
    expected = reference_columns()[column]
    got = run_json("calc", "layers", "--phy", "oc3c", "--encap", encap, "--mtu", mtu)
    assert {r["layer"]: f"{r['published_mbps']:.3f}" for r in got} == expected
    text = run("calc", "layers", "--phy", "oc3c", "--encap", encap, "--mtu", mtu).stdout
    assert "published" in text.splitlines()[1]
    for layer, value in expected.items():
        [line] = [x for x in text.splitlines() if x.startswith(layer + " ")]
        assert line.split()[-1] == value
    # Elsewhere the table gives nothing, and nothing is printed beside the figures.
    for other in (["--mtu", "1500"], ["--no-framing"], ["--phy", "taxi100"]):
        args = ["calc", "layers", "--phy", "oc3c", "--encap", encap, "--mtu", mtu, *other]
        assert all("published_mbps" not in r for r in run_json(*args))
        assert "published" not in run(*args).stdout


def test_layers_table_has_units_and_context():
    p = run("calc", "layers", "--phy", "oc3c", "--encap", "llc-snap", "--mtu", "9180")
    assert p.returncode == 0, p.stderr
    assert "Mb/s" in p.stdout and "10^6 bit/s" in p.stdout
    assert "192 cells per PDU" in p.stdout
    assert "134.513" in p.stdout and "155.520" in p.stdout


def test_layers_by_hand_taxi_and_mtu():
    # TAXI 100, VC-mux, MTU 9188: 192 cells; ip = 100 × 9188 / (53 × 192) = 90.2909 Mb/s.
    ip = {r["layer"]: r["mbps"] for r in calc.layers("taxi100", "vc-mux", 9188)}["ip"]
    assert ip == pytest.approx(100 * 9188 / (53 * 192), abs=1e-6)
    # MTU 1500 with LLC/SNAP: 1500 + 8 + 8 = 1516 → 32 cells; tcp = 149.76 × 1460/(53 × 32).
    t = calc.layer_table("oc3c", "llc-snap", 1500)
    assert t["cells_per_pdu"] == 32
    tcp = t["layers"][-1]["mbps"]
    assert tcp == pytest.approx(149.76 * 1460 / (53 * 32), abs=1e-6)


def test_layers_no_framing_gives_cells_the_line_rate():
    got = run_json("calc", "layers", "--phy", "oc3c", "--encap", "llc-snap", "--no-framing")
    by = {r["layer"]: r["mbps"] for r in got}
    assert by["atm"] == by["line"] == 155.52
    assert by["aal5"] == pytest.approx(155.52 * 48 / 53, abs=1e-6)


def test_phy_rates():
    assert calc.phy_rates("ds3")["cell_mbps"] == 40.704  # 96,000 cells/s × 424 bits
    assert calc.phy_rates("ds3")["cells_per_sec"] == pytest.approx(96_000)
    assert calc.phy_rates("e3")["cell_mbps"] == 33.92  # 530 of 537 G.832 bytes
    assert calc.phy_rates("oc12c")["cell_mbps"] == 599.04
    assert calc.phy_rates("taxi100")["cell_time_us"] == 4.24
    assert calc.phy_rates("taxi140")["cell_mbps"] == 140.0
    assert calc.phy_rates("rate:45")["cell_mbps"] == 45.0
    assert calc.phy_rates("oc3c", framing=False)["cell_mbps"] == 155.52
    got = run_json("calc", "phy", "--phy", "oc3c")
    assert got["cell_time_us"] == pytest.approx(424 / 149.76, abs=1e-6)


# --- bursts ----------------------------------------------------------------------


def test_buffer_burst_by_hand():
    # 256 cells, OC-3c in (2.83 µs), TAXI out (4.24 µs): 256 / (1 − 2.83/4.24) = 769.8 → 769.
    got = run_json(
        "calc", "buffer-burst", "--buffer-cells", "256", "--in-cell-us", "2.83", "--out-cell-us",
        "4.24",
    )  # fmt: skip
    assert got["max_burst_cells"] == 769
    assert got["unbounded"] is False
    p = run("calc", "buffer-burst", "--buffer-cells", "256", "--in-cell-us", "2.83",
            "--out-cell-us", "4.24")  # fmt: skip
    assert "769 cells" in p.stdout


def test_buffer_burst_unbounded():
    got = run_json(
        "calc", "buffer-burst", "--buffer-cells", "256", "--in-cell-us", "4.24", "--out-cell-us",
        "2.83",
    )  # fmt: skip
    assert got["max_burst_cells"] is None and got["unbounded"] is True
    assert calc.buffer_burst(10, 3.0, 3.0)["max_burst_cells"] is None
    p = run("calc", "buffer-burst", "--buffer-cells", "256", "--in-cell-us", "4.24",
            "--out-cell-us", "2.83")  # fmt: skip
    assert p.stdout.startswith("unbounded")


def test_gcra_burst_by_hand():
    # GCRA(16.39 µs, 101 µs) at 2.83 µs: d = 13.56, N = 1 + ⌊101/13.56⌋ = 8;
    # idle = 8 × 13.56 − (101 − 7 × 13.56) = 108.48 − 6.08 = 102.4 µs.
    got = run_json("calc", "gcra-burst", "--T-us", "16.39", "--tau-us", "101", "--cell-us", "2.83")
    assert got["max_burst_cells"] == 8
    assert got["idle_after_us"] == pytest.approx(102.4, abs=1e-6)
    assert got["idle_to_repeat_us"] == pytest.approx(108.48, abs=1e-6)


def test_gcra_burst_unbounded():
    got = run_json("calc", "gcra-burst", "--T-us", "10", "--tau-us", "0", "--cell-us", "10")
    assert got["max_burst_cells"] is None and got["idle_after_us"] is None


def gcra_verdicts(t: float, tau: float, arrivals: list[float]) -> list[bool]:
    """Virtual scheduling in exact integer ps (an independent Python reference)."""
    tat = None
    out = []
    for a in arrivals:
        if tat is not None and a < tat - tau:
            out.append(False)
            continue
        tat = (a if tat is None else max(a, tat)) + t
        out.append(True)
    return out


@settings(max_examples=60, deadline=None)
@given(
    t=st.integers(2, 200),
    tau=st.integers(0, 2000),
    tj=st.integers(1, 199),
)
def test_gcra_burst_against_reference_gcra(t, tau, tj):
    """Whole µs so Python's own integer GCRA is exact: N passes, N + 1 does not,
    and after idle_after_us a second burst of N passes in full."""
    got = calc.gcra_burst(t, tau, tj)
    if tj >= t:
        assert got["unbounded"]
        return
    n = got["max_burst_cells"]
    assert n == 1 + tau // (t - tj)
    burst = [k * tj for k in range(n + 1)]
    assert gcra_verdicts(t, tau, burst) == [True] * n + [False]
    idle = round(got["idle_after_us"])
    start2 = (n - 1) * tj + tj + idle
    two = [k * tj for k in range(n)] + [start2 + k * tj for k in range(n)]
    assert all(gcra_verdicts(t, tau, two))
    early = [k * tj for k in range(n)] + [start2 - 1 + k * tj for k in range(n)]
    assert not all(gcra_verdicts(t, tau, early))


# --- trains ----------------------------------------------------------------------

TRAIN = ["--cells-per-pdu", "4", "--cell-us", "5", "--T-us", "10", "--tau-us", "25"]


def test_train_steady_state_conforming():
    # Period 4 × 5 + 30 = 50 µs ≥ 4 × T = 40 µs, and 4 cells fit τ: conforming for ever.
    got = run_json("calc", "train", *TRAIN, "--gap-us", "30")
    assert got["conforming"] is True and got["first_failure"] is None


def test_train_first_failure_by_hand():
    # Gap 10: period 30 µs, each PDU leaves TAT 4 × 10 − 30 = 10 µs further ahead; cell k of
    # PDU j conforms iff 10j + 5k ≤ 25 → first failure PDU 2, cell 2, at 2 × 30 + 2 × 5 = 70 µs.
    got = run_json("calc", "train", *TRAIN, "--gap-us", "10")
    assert got["conforming"] is False
    assert got["first_failure"] == {"pdu": 2, "cell": 2, "time_us": 70.0}
    two = run_json("calc", "train", *TRAIN, "--gap-us", "10", "--pdus", "2")
    assert two["conforming"] is True and two["non_conforming_cells"] == 0
    assert two["steady_state_conforming"] is False
    three = run_json("calc", "train", *TRAIN, "--gap-us", "10", "--pdus", "3")
    assert three["first_failure"] == got["first_failure"]
    # PDU 2 starts at 60 µs with TAT 80: cells at 60, 65 pass (TAT → 100), the one at 70 fails
    # (70 < 100 − 25) and leaves TAT at 100, so the one at 75 passes (75 = 100 − 25): one failure.
    assert three["non_conforming_cells"] == 1
    p = run("calc", "train", *TRAIN, "--gap-us", "10")
    assert "PDU 2, cell 2" in p.stdout and "do not conform" in p.stdout


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 8),
    tc=st.integers(1, 20),
    gap=st.integers(0, 60),
    t=st.integers(1, 30),
    tau=st.integers(0, 80),
    pdus=st.integers(1, 12),
)
def test_train_against_reference_gcra(n, tc, gap, t, tau, pdus):
    arrivals = [j * (n * tc + gap) + k * tc for j in range(pdus) for k in range(n)]
    verdicts = gcra_verdicts(t, tau, arrivals)
    got = calc.train(n, tc, gap, t, tau, pdus)
    assert got["conforming"] == all(verdicts)
    assert got["non_conforming_cells"] == verdicts.count(False)
    if not all(verdicts):
        i = verdicts.index(False)
        assert (got["first_failure"]["pdu"], got["first_failure"]["cell"]) == divmod(i, n)
    # The steady state agrees with any finite prefix that already failed.
    if not all(verdicts):
        assert got["steady_state_first_failure"] == got["first_failure"]


# --- window ----------------------------------------------------------------------


def test_window_bound():
    # 64 KB / 8.8 ms = 65536 × 8 / 0.0088 = 59.578 Mb/s; BDP at 135.632 Mb/s = 149,196 bytes.
    got = run_json("calc", "window", "--window-bytes", "65536", "--rtt-ms", "8.8")
    assert got["throughput_mbps"] == pytest.approx(59.578, abs=1e-3)
    assert got["limited_by"] == "window" and got["bdp_bytes"] is None
    got = run_json(
        "calc", "window", "--window-bytes", "1048576", "--rtt-ms", "8.8", "--rate-mbps", "135.632"
    )
    assert got["throughput_mbps"] == 135.632 and got["limited_by"] == "link"
    assert got["bdp_bytes"] == math.ceil(135.632e6 * 0.0088 / 8)
    p = run("calc", "window", "--window-bytes", "65536", "--rtt-ms", "8.8")
    assert "59.578 Mb/s" in p.stdout


# --- bad input -------------------------------------------------------------------

BAD = [
    (["calc", "layers", "--phy", "oc48"], "oc48", "oc3c"),
    (["calc", "layers", "--phy", "rate:0"], "rate", "> 0"),
    (["calc", "layers", "--phy", "rate:-5"], "-5", "> 0"),
    (["calc", "layers", "--phy", "oc3c", "--encap", "aal2"], "aal2", "llc-snap"),
    (["calc", "layers", "--phy", "oc3c", "--mtu", "70000"], "70000", "41..=65527"),
    (["calc", "layers", "--phy", "oc3c", "--encap", "vc-mux", "--mtu", "40"], "40", "41..=65535"),
    (["calc", "layers", "--phy", "oc3c", "--mtu", "-3"], "-3", "41..=65527"),
    (["calc", "layers", "--phy", "oc3c", "--mtu", "big"], "big", "whole number"),
    (["calc", "buffer-burst", "--buffer-cells", "0", "--in-cell-us", "1", "--out-cell-us", "2"],
     "0", ">= 1"),
    (["calc", "buffer-burst", "--buffer-cells", "5", "--in-cell-us", "-1", "--out-cell-us", "2"],
     "-1", "> 0"),
    (["calc", "gcra-burst", "--T-us", "10", "--tau-us", "-1", "--cell-us", "2"], "-1", ">= 0"),
    (["calc", "gcra-burst", "--T-us", "0", "--tau-us", "1", "--cell-us", "2"], "0", "> 0"),
    (["calc", "gcra-burst", "--T-us", "10", "--tau-us", "1", "--cell-us", "nan"], "nan", "> 0"),
    (["calc", "gcra-burst", "--T-us", "10", "--tau-us", "1", "--cell-us", "1e-9"], "0.000000001",
     "at least 1 ps"),
    (["calc", "train", *TRAIN, "--gap-us", "-2"], "-2", ">= 0"),
    (["calc", "train", *TRAIN, "--gap-us", "1", "--pdus", "0"], "0", ">= 1"),
    (["calc", "train", "--cells-per-pdu", "1000", "--cell-us", "5", "--T-us", "10", "--tau-us",
      "25", "--gap-us", "0", "--pdus", "1000000"], "1000000000", "100000000"),
    (["calc", "window", "--window-bytes", "10", "--rtt-ms", "0"], "0", "> 0"),
    (["calc", "window", "--window-bytes", "10", "--rtt-ms", "1", "--rate-mbps", "-4"], "-4",
     "> 0"),
]  # fmt: skip


@pytest.mark.parametrize("args, value, allowed", BAD, ids=[" ".join(b[0][1:4]) for b in BAD])
def test_bad_input_is_one_line_exit_2(args, value, allowed):
    p = run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("cellbench") and "error:" in lines[0]
    assert value in lines[0] and allowed in lines[0], lines[0]
    assert "Traceback" not in p.stderr and p.stdout == ""


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: calc.layers("oc48"), '"oc48"'),
        (lambda: calc.layers("oc3c", "llc-snap", 0), "MTU 0 out of range"),
        (lambda: calc.layers("oc3c", "llc-snap", -7), "MTU -7 out of range"),
        (lambda: calc.layers("oc3c", "llc-snap", 65528), "41..=65527"),
        (lambda: calc.buffer_burst(-1, 1.0, 2.0), "-1"),
        (lambda: calc.buffer_burst(0, 1.0, 2.0), "= 0"),
        (lambda: calc.buffer_burst(1, 0.0, 2.0), "input cell time = 0"),
        (lambda: calc.gcra_burst(10.0, -1.0, 2.0), "tau = -1"),
        (lambda: calc.gcra_burst(0.0, 1.0, 2.0), "T = 0"),
        (lambda: calc.gcra_burst(10.0, 1.0, math.inf), "inf"),
        (lambda: calc.train(0, 5.0, 0.0, 10.0, 25.0), "cells per PDU = 0"),
        (lambda: calc.train(4, 5.0, -1.0, 10.0, 25.0), "gap = -1"),
        (lambda: calc.train(4, 5.0, 1.0, 10.0, 25.0, pdus=0), "number of PDUs = 0"),
        (lambda: calc.window_bound(0, 8.8), "window in bytes = 0"),
        (lambda: calc.window_bound(100, -1.0), "-1 ms"),
        (lambda: calc.window_bound(100, 1.0, 0.0), "0 Mb/s"),
    ],
)
def test_api_bad_values_raise_value_error(call, fragment):
    with pytest.raises(ValueError, match=None) as e:
        call()
    assert fragment in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
