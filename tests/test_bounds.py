"""Bounded resources: absurd event rates refused up front, an event budget per run, and
Ctrl-C stopping a running simulation at once with every finished run kept."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cellbench import _native
from cellbench.engines.sim.api import run as run_experiment
from cellbench.experiment import lang
from cellbench.experiment.plan import make_plan
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
        make_plan(text)
    assert str(e.value) == (
        "<text>:2:47: the simulator refuses it: connection 0 (A -> B): block period 0.000001 "
        "µs: at least 127 µs, the time one write() takes on sparc-ipc (no host writes blocks "
        "more often)"
    )
    # The same bound in the simulator, for specs that do not come from a file.
    spec = make_plan(text.replace("0.000001", "1000")).experiments[0].spec(1, 0)
    spec["connections"][0]["traffic"]["period_us"] = 1e-6
    with pytest.raises(ValueError, match="at least 127 µs, the time one write"):
        _native.simulate(spec)


def test_every_run_has_an_event_budget_and_keeps_what_it_did_in_it() -> None:
    """A run that spends its budget ends there as one the time limit cuts: not
    completed, its rate so far (before: an error, and nothing kept)."""
    spec = _native.lan_buffers_spec(16384, 16384)
    spec["max_events"] = 20_000
    out = _native.simulate(spec)
    [c] = out["connections"]
    assert 20_000 < out["events"] < 20_000 + 4096 + 100  # checked every 4096 steps
    assert not c["completed"] and c["limited_by"] == "event-budget"
    assert 0 < c["bytes"] < 32 * 2**20 and c["throughput_bps"] > 10e6
    assert c["limit_evidence"].startswith(
        "truncated: cut by the event budget (20000 events, max_events) at "
        f"{out['sim_seconds']:.3f} s of simulated time after {c['bytes']} of its bytes"
    )
    assert f"{c['throughput_bps'] / 1e6:.3f} Mb/s so far" in c["limit_evidence"]
    spec["max_events"] = 10**7
    assert _native.simulate(spec)["connections"][0]["completed"]


def test_a_run_its_event_budget_would_cut_is_refused_before_it_runs() -> None:
    """Found only after the run spent its budget (47 s here); the writes a run asks
    for are a floor on its events, known before it runs."""
    text = """cluster {
  test s { type = burst (blocksize=1K, period=200, duration=600); own = A:1; peer = B:1; }
  test t { type = full (blocksize=1, nbytes=1G); own = A:2; peer = B:2; }
  test r { type = sink; own = B:1; peer = A:1; }
  test q { type = sink; own = B:2; peer = A:2; }
}"""
    with pytest.raises(lang.ExperimentError) as e:
        make_plan(text)
    assert str(e.value) == (
        "<text>:3:45: found test t: 1.074e+09 writes (1073741824 bytes in 1-byte writes), "
        "1.077e+09 in the run, expected at most 5e+08 (each write is at least one event, and "
        "a run ends when it has spent its event budget of 5e+08): larger writes, longer "
        "periods, fewer bytes or a shorter duration"
    )
    assert len(make_plan(text.replace("nbytes=1G", "nbytes=1M")).points) == 1


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
    result = run_experiment(text)
    row = result.to_pandas().iloc[0]
    assert not row.completed and row.limited_by == "window"
    # The summary (`run`, `show`) counts the runs the limit cut; a result without
    # such runs has no such column.
    assert list(result.summary()["truncated"]) == [1]
    assert 3.4e6 < row.throughput_bps < 3.7e6
    assert row.limit_evidence.startswith("truncated: cut by the simulated-time limit (3600 s)")
    assert f"{row.throughput_bps / 1e6:.3f} Mb/s so far" in row.limit_evidence


def _sweep_cmd(out: Path, *extra: str) -> list[str]:
    """A two-worker sweep of many short runs (never finished within a test)."""
    lan = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"
    sets = ["--set", "snd=16K,32K", "--set", "rcv=16K,32K", "--set", "nbytes=64K"]
    return [sys.executable, "-m", "cellbench", "run", str(lan), *sets, "--replications", "100000"]\
        + ["--out", str(out), "--workers", "2", *extra]  # fmt: skip


def _signal_during_sweep(out: Path, sig: int, delay: float) -> tuple[int, str, float]:
    """Start the sweep, send ``sig`` ``delay`` s after its first run was stored; the
    exit status, stderr and the seconds from the signal to the exit."""
    p = subprocess.Popen(_sweep_cmd(out), stderr=subprocess.PIPE, text=True)
    journal = out / ".incoming" / "journal"
    deadline = time.monotonic() + 60
    while not (journal.exists() and journal.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(delay)
    t = time.monotonic()
    p.send_signal(sig)
    try:
        err = p.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        err = p.communicate()[1]
        return -9, err, 30.0
    return p.returncode, err, time.monotonic() - t


def test_ctrl_c_at_random_moments_of_a_two_worker_sweep_always_exits(tmp_path) -> None:
    """Ctrl-C once raised KeyboardInterrupt wherever the main thread was: inside
    concurrent.futures' taking of its futures' locks it left one taken, the workers
    waited on it forever and the main thread joined them (2 hangs in 40). Now a signal
    only asks the runs to stop, and the sweep stops at its next step."""
    rng = random.Random(25)
    for i in range(15):
        out = tmp_path / f"r{i}"
        rc, err, took = _signal_during_sweep(out, signal.SIGINT, rng.uniform(0, 0.6))
        assert rc == 130, f"try {i}: exit {rc}: {err[-2000:]}"
        assert "Traceback" not in err and "runs kept in" in err, err
        # 0.1-0.5 s on an idle machine (the summary into parts); room for a loaded one.
        assert took < 2.0, f"try {i}: {took:.2f} s from SIGINT to exit"
        shutil.rmtree(out)


#: Many sweeps in one process, each interrupted at a random moment by a timer; the
#: runs are instant (one stored result), so the main thread is almost always
#: somewhere in the sweep loop's Python code when the signal comes. A hang ends the
#: process with every thread's stack (faulthandler) and status 1.
_STRESS = """
import faulthandler, random, signal, sys
import tqdm  # (what the sweep imports on first use: not where this test looks)
from cellbench import _native
from cellbench.engines.loop import execute_plan
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan
plan = make_plan(sys.argv[1], sets=["snd=16K,32K", "rcv=16K,32K", "nbytes=64K"],
                 replications=100000)
out = _native.simulate(plan.task(0).spec)
signal.signal(signal.SIGALRM, lambda *a: signal.raise_signal(signal.SIGINT))
rng = random.Random(int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    faulthandler.dump_traceback_later(10, exit=True)
    signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.001, 0.1))
    try:
        execute_plan(plan, results.MemoryResult(plan.meta()), SimEngine(lambda spec: out),
                     workers=2)
    except KeyboardInterrupt:  # (Interrupted, or before the sweep began)
        pass
    faulthandler.cancel_dump_traceback_later()
print("ok")
"""


def test_sweep_loop_survives_a_signal_at_any_moment() -> None:
    lan = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"
    r = subprocess.run(
        [sys.executable, "-c", _STRESS, str(lan), "25", "150"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Before: a hang within 30-190 sweeps (workers in set_running_or_notify_cancel,
    # the main thread in ThreadPoolExecutor.shutdown).
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr[-3000:]


def test_sigterm_during_a_sweep_exits_143_saying_what_was_kept(tmp_path) -> None:
    out = tmp_path / "t"
    rc, err, took = _signal_during_sweep(out, signal.SIGTERM, 0.3)
    assert rc == 143, err
    assert "Traceback" not in err and f"runs kept in {out}; finish with: " in err, err
    assert took < 2.0
    kept = int(err.split("interrupted: ")[1].split("/")[0])
    assert kept >= 1 and len(load(out).to_pandas()) == kept  # one connection per run


#: A signal that comes while a long run is being handed to a worker thread: before,
#: KeyboardInterrupt left the submit before its future was recorded, so nothing
#: stopped that run, which ran to its end (minutes) while the sweep waited for it.
_SIGNAL_IN_SUBMIT = """
import signal, sys, time
from cellbench.engines import loop
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan
plan = make_plan(sys.argv[1])
submit = loop._ThreadPool.submit
def submit_then_signal(self, spec):
    f = submit(self, spec)
    while not f.running():
        time.sleep(0.001)
    signal.raise_signal(signal.SIGINT)
    return f
loop._ThreadPool.submit = submit_then_signal
t = time.monotonic()
try:
    loop.execute_plan(plan, results.MemoryResult(plan.meta()), SimEngine(), workers=2)
except KeyboardInterrupt:
    print(f"stopped after {time.monotonic() - t:.1f} s")
"""


def test_a_signal_while_a_long_run_is_submitted_stops_it(tmp_path) -> None:
    f = tmp_path / "long.netspec"
    f.write_text(LONG.replace("d = [0.5, 3000]", "d = 3000"))
    r = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_SUBMIT, str(f)], capture_output=True, text=True
    )
    assert r.stdout.startswith("stopped after "), r.stderr
    # The run alone takes 6 s on a loaded 2-core machine; stopped, 0.0-0.1 s.
    assert float(r.stdout.split()[2]) < 2.0, r.stdout


#: A result of N runs made in a moment: each run's output one of eight real runs'.
_MAKE_RESULT = """
import sys
from pathlib import Path
from cellbench import _native
from cellbench.engines.loop import execute_plan
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan
plan = make_plan(sys.argv[1], sets=["snd=16K,32K", "rcv=16K,32K", "nbytes=64K"],
                 replications=int(sys.argv[3]) // 4)
outs = [_native.simulate(plan.task(i).spec) for i in range(8)]
store = results.ResultDir(Path(sys.argv[2]), plan.meta(), resume=False)
made = iter(range(10**9))
execute_plan(plan, store, SimEngine(lambda spec: outs[next(made) % 8]), workers=1)
"""


def _peak_rss_kb(argv: list[str]) -> int:
    import os

    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, argv
    return usage.ru_maxrss


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory) -> dict[int, Path]:
    """Stored results of 2,000 and 30,000 runs (by run count)."""
    lan = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"
    tmp = tmp_path_factory.mktemp("many")
    made = {}
    for n in (2_000, 30_000):
        made[n] = tmp / f"r{n}"
        subprocess.run(
            [sys.executable, "-c", _MAKE_RESULT, str(lan), str(made[n]), str(n)], check=True
        )
    return made


def _bytes_a_run(many_runs: dict[int, Path], *argv: str) -> float:
    """What one more stored run adds to the peak RSS of ``cellbench ARGV RESULT``."""
    peak = {n: _peak_rss_kb([sys.executable, "-m", "cellbench", *argv[:1], str(path),
                             *argv[1:]]) for n, path in many_runs.items()}  # fmt: skip
    return (peak[30_000] - peak[2_000]) * 1024 / 28_000


def test_the_summary_of_a_result_does_not_grow_with_its_rows(many_runs) -> None:
    """`show` and the end of `run` summed every row in memory, all 110 columns: some
    2.3 KB a run (10^5 runs: 488 MB). Now it reads the summary's columns and keeps a
    limit's evidence once per point: about 0.25 KB a run on top of the libraries."""
    per_run = _bytes_a_run(many_runs, "show")
    assert per_run < 1000, f"{per_run:.0f} bytes a run"


def test_the_report_page_reads_only_the_columns_it_shows(many_runs, tmp_path) -> None:
    """`report` of a 100k-run result peaked at 482 MB RSS for a 49 KB page (issue 31:
    588 MB before its rows were read without copies): it read every column of every
    row, ~1.2 KB a run in memory, to show a summary and figures of some thirty. Now
    it reads those columns (``Result.narrowed``): about 0.6 KB a run on top of the
    libraries (2.9 KB before, measured on the 2-core VM)."""
    per_run = _bytes_a_run(many_runs, "report", "-o", str(tmp_path / "page.html"))
    assert (tmp_path / "page.html").stat().st_size > 10_000
    assert per_run < 1200, f"{per_run:.0f} bytes a run"


#: SIGTERM at a moment outside the sweep loop: as the result's last part is stored
#: (``ResultDir.finish``), or between a study's parts (``study.execute``'s second call).
_SIGTERM_AT = """
import os, signal, sys
from cellbench.cli import main
from cellbench.experiment import results
from cellbench.reproduce import study
where = sys.argv[1]
if where == "storing":
    finish = results.ResultDir.finish
    def finish_then_term(self):
        os.kill(os.getpid(), signal.SIGTERM)
        return finish(self)
    results.ResultDir.finish = finish_then_term
    argv = ["run", sys.argv[2], "--set", "snd=16K", "--set", "rcv=16K", "--set", "nbytes=64K",
            "--replications", "1", "--out", sys.argv[3]]
else:
    execute, calls = study.execute, []
    def term_between_parts(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return execute(*args, **kwargs)
    study.execute = term_between_parts
    argv = ["reproduce", "wan-mismatch", "--part", "case3", "--part", "segment-size"]
sys.exit(main(argv))
"""


@pytest.mark.parametrize("where", ["storing", "between-parts"])
def test_sigterm_outside_a_sweep_says_so_and_exits_143(tmp_path, where) -> None:
    """Before: the default action, status -15 and no word (2 of 30 SIGTERMs)."""
    lan = Path(__file__).resolve().parents[1] / "examples" / "lan-buffers.netspec"
    r = subprocess.run(
        [sys.executable, "-c", _SIGTERM_AT, where, str(lan), str(tmp_path / "r")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 143, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("cellbench: interrupted"), r.stderr[-2000:]


def test_a_killed_processs_scratch_directory_is_removed_by_the_next(tmp_path, monkeypatch):
    """cellbench-study-* and cellbench-daemon-* stayed in /tmp after SIGKILL."""
    from cellbench import scratch

    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom cellbench import scratch\n"
         "with scratch.directory('cellbench-study-') as d:\n"
         "    print(d, flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    left = Path(child.stdout.readline().strip())
    (left / "part.parquet").write_bytes(b"x")
    # Alive: its lock is held, so it stays, however old.
    os.utime(left, (0, 0))
    assert scratch.remove_stale("cellbench-study-") == [] and left.is_dir()
    child.kill()
    child.wait()
    child.stdout.close()
    # Not ours (no lock file), a link, or too young: kept.
    other = tmp_path / "cellbench-study-other"
    other.mkdir()
    os.utime(other, (0, 0))
    (tmp_path / "cellbench-study-link").symlink_to(left)
    with scratch.directory("cellbench-study-") as fresh:
        assert not left.exists() and other.is_dir() and Path(fresh).is_dir()
        assert (tmp_path / "cellbench-study-link").is_symlink()
    assert not Path(fresh).exists()
