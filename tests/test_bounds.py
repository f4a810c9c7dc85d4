"""Bounded resources: absurd event rates refused up front, an event budget per run, and
Ctrl-C stopping a running simulation at once with every finished run kept."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cellbench import _native
from cellbench.experiment import lang, runner
from cellbench.experiment.results import load

#: A transfer that runs for minutes of wall time (an hour of OC-3c), beside one that
#: takes a moment: the sweep's first point finishes, its second is still running.
LONG = """testbed wan-window { }
cluster {
  test s { type = full (blocksize=64K, duration=$d); protocol = tcp (window=512K);
           own = alpha-west:1; peer = alpha-east:1; }
  test r { type = sink (blocksize=64K); protocol = tcp (window=512K);
           own = alpha-east:1; peer = alpha-west:1; }
}
sweep { d = [0.5, 3000]; }
"""


def test_an_absurd_event_rate_is_refused_with_the_bound() -> None:
    text = """cluster {
  test s { type = burst (blocksize=8K, period=0.000001, duration=1); own = A:1; peer = B:1; }
  test r { type = sink; own = B:1; peer = A:1; }
}"""
    # Refused by planning, before anything is simulated.
    with pytest.raises(lang.ExperimentError) as e:
        runner.make_plan(text)
    assert str(e.value) == (
        "<text>:2:47: found period 1e-06 µs, expected at least 127 µs, the time one write() "
        "takes on sparc-ipc: no host writes blocks more often"
    )
    # The same bound in the simulator, for specs that do not come from a file.
    spec = runner.make_plan(text.replace("0.000001", "1000")).experiments[0].spec(1, 0)
    spec["connections"][0]["traffic"]["period_us"] = 1e-6
    with pytest.raises(ValueError, match="at least 127 µs, the time one write"):
        _native.simulate(spec)


def test_every_run_has_an_event_budget() -> None:
    spec = _native.lan_buffers_spec(16384, 16384)
    spec["max_events"] = 20_000
    with pytest.raises(ValueError, match=r"event budget exhausted: \d+ events by [\d.]+ s"):
        _native.simulate(spec)
    spec["max_events"] = 10**7
    assert _native.simulate(spec)["connections"][0]["completed"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_a_running_simulation_and_keeps_finished_runs(tmp_path, workers) -> None:
    f = tmp_path / "long.netspec"
    f.write_text(LONG)
    out = tmp_path / "long.result"
    p = subprocess.Popen(
        [sys.executable, "-m", "cellbench", "run", str(f), "--out", str(out)]
        + ["--workers", workers],
        stderr=subprocess.PIPE,
        text=True,
    )
    # Wait until the short run is stored: the long one is running by then.
    deadline = time.monotonic() + 60
    journal = Path(out, ".incoming", "journal")  # where a finished run goes first
    while not (journal.exists() and journal.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=30)[1]
    stopped = time.monotonic() - t
    assert p.returncode == 130, err
    # The long run would take minutes: stopping within seconds shows the stop flag reached
    # the simulation (0.35-0.40 s on an idle machine; the bound leaves room for a loaded one).
    assert stopped < 5.0, f"{stopped:.2f} s from SIGINT to exit"
    assert "Traceback" not in err and "interrupted: 1/2 runs kept" in err, err
    result = load(out)
    assert list(result.to_pandas()["duration_s"]) == [0.5]


def test_simulate_raises_keyboard_interrupt_once_runs_are_stopped() -> None:
    spec = _native.lan_buffers_spec(16384, 16384)
    _native.stop_runs()
    try:
        with pytest.raises(KeyboardInterrupt):
            _native.simulate(spec)
    finally:
        _native.allow_runs()
    assert _native.simulate(spec)["connections"][0]["completed"]


def test_a_run_the_time_limit_cuts_is_marked_truncated_with_its_rate_so_far(tmp_path) -> None:
    """The transfer (4 KB window over 8.8 ms: 3.6 Mb/s) needs 4400 s for 2 GB: the
    3600 s limit cuts it, and every output says so, with the rate it had reached."""
    text = """testbed wan-window { }
cluster {
  test s { type = full (blocksize=8K, nbytes=2G); protocol = tcp (window=4K);
           own = alpha-west:1; peer = alpha-east:1; }
  test r { type = sink (blocksize=8K); protocol = tcp (window=4K);
           own = alpha-east:1; peer = alpha-west:1; }
}"""
    result = runner.run(text)
    row = result.to_pandas().iloc[0]
    assert not row.completed and row.limited_by == "window"
    # The summary (`run`, `show`) counts the runs the limit cut; a result without
    # such runs has no such column.
    assert list(result.summary()["truncated"]) == [1]
    assert 3.4e6 < row.throughput_bps < 3.7e6
    assert row.limit_evidence.startswith("truncated: cut by the simulated-time limit (3600 s)")
    assert f"{row.throughput_bps / 1e6:.3f} Mb/s so far" in row.limit_evidence
