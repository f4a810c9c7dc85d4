"""`cellbench calc window-model`: the simple model of TCP over a policed VP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cellbench import calc


def test_usable_window_per_ack_policy_by_hand() -> None:
    # 48 KB window, MSS 9140 (MTU 9180), 8 ms RTT, a 100 Mb/s path so the window limits.
    r = calc.window_model(49152, 9140, 8.0, 100.0)
    by = {p["ack"]: p for p in r["policies"]}
    assert by["per-window"]["usable_window_bytes"] == 49152  # idle sender sends it all
    assert by["per-segment"]["usable_window_bytes"] == 5 * 9140
    assert by["per-two-segments"]["usable_window_bytes"] == 4 * 9140
    # min(rate, usable / RTT): 36560 B x 8 / 8 ms = 36.56 Mb/s.
    assert by["per-two-segments"]["throughput_mbps"] == pytest.approx(36.56)
    assert all(p["limited_by"] == "window" for p in r["policies"])
    # A VP slower than every window / RTT limits them all.
    assert {p["limited_by"] for p in calc.window_model(49152, 9140, 8.0, 23.42)["policies"]} == {
        "rate"
    }


def test_cli_json_and_bad_input() -> None:
    cmd = [sys.executable, "-m", "cellbench", "calc", "window-model", "--rtt-ms", "8"]
    ok = subprocess.run(
        [*cmd, "--rate-mbps", "23.42", "--mss", "9140", "--window", "16384", "--json"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    policies = json.loads(ok.stdout)["policies"]
    assert [p["usable_window_bytes"] for p in policies] == [16384] * 3  # below 2 MSS: all of it
    bad = subprocess.run(
        [*cmd, "--rate-mbps", "23.42", "--mss", "0", "--window", "16384"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--mss" in bad.stderr
