"""The simulator as an engine: one run is one call of ``_native.simulate`` (a spec
dict in, a result dict out), a pure function of plain data, so runs go to a pool of
threads (the native call releases the GIL) or a Dask cluster, and a signal asks the
running ones to stop (``_native.stop_runs``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from cellbench.engines.base import Option, Tables, check_line
from cellbench.engines.rows import connection_row, ident, port_rows
from cellbench.experiment import results
from cellbench.experiment.lang import ExperimentError

#: The captures a plan lists by name (``Plan.captures``); the rest are counted.
MAX_CAPTURES_LISTED = 10


def execute(spec: dict) -> dict:
    """Run one run (a simulate-contract spec); the simulator's result."""
    from cellbench import _native

    return _native.simulate(spec)


class SimEngine:
    name = "sim"
    simulated = True
    time_limit = "the simulated time limit"
    label = "cellbench run"
    about = "the simulator"
    # ``run``'s own options that the plan and the loop read, which only it takes.
    options = (
        Option("--cells", refusal="--cells is the simulator's cell tester (--engine emu: "
               "--pcap PORT=FILE)"),
        Option("--trace", refusal="--trace is not available with --engine {engine} yet"),
        Option("--dask", refusal="--dask is not available with --engine {engine} yet"),
        # (It ignores the real engine's --host, as it always did.)
        Option("--host", dest="hosts"),
    )  # fmt: skip
    studies = True
    tools = True
    tool_options: tuple = ()
    traffic_not_yet: dict[str, str] = {}
    # Its measures are its vocabulary's fields (``vocab.RESULT_FIELDS``), which the
    # store reads itself.
    columns: tuple = ()

    def __init__(self, executor: Callable[[dict], dict] | None = None):
        #: What runs a spec: the simulator, or a caller's stand-in (a test's).
        self.executor = executor or execute

    @classmethod
    def from_options(cls, args) -> SimEngine:
        return cls()

    def check(self, plan) -> list[str]:
        return plan.notes

    def check_line(self, plan) -> str:
        from cellbench.experiment import captures

        words = f"testbed {plan.experiments[0].testbed.name}"
        if plan.captured_runs:
            words += (
                f"; cell captures of {plan.captured_runs} run(s): some "
                f"{captures.size_text(plan.capture_bytes)} (an estimate)"
            )
        return check_line(plan, words)

    def meta(self, plan) -> dict:
        return plan.meta()

    def open(self) -> None:
        pass

    def begin(self, plan, store, dask=None) -> None:
        """A cell tester's captures go beside the result, where the runs execute."""
        if plan.tester(0) is None:
            return
        if dask is not None:
            raise ExperimentError(
                None, "a cell tester (--cells, tester { }) writes its files where a run "
                "executes: not with --dask"
            )  # fmt: skip
        if plan.cells_dir is None and getattr(store, "path", None) is not None:
            plan.cells_dir = Path(store.path) / "cells"
        if plan.cells_dir is None:
            raise ExperimentError(
                plan.experiments[0].tester_pos, "a cell tester writes its captures beside the "
                "result: store it (--out DIR; from Python out= or cells_dir=)"
            )  # fmt: skip
        plan.cells_dir.mkdir(parents=True, exist_ok=True)

    def payload(self, task) -> dict:
        return task.spec

    @property
    def work(self) -> Callable[[Any], Any]:
        return self.executor

    def tables(self, plan, task, out: dict) -> Tables:
        if out.get("cells"):
            plan.captures_total += 1
            if not out["cells"].get("cells"):
                plan.captures_empty.append(task.run)
            if len(plan.captures) < MAX_CAPTURES_LISTED:
                plan.captures.append({"run": task.run, **out["cells"]})
        return _tables(plan, task, out)

    def interrupt(self, signum: int) -> None:
        # Every running simulation stops within a few thousand events; the loop stops
        # at its next step.
        self.stop_runs()

    def stop_runs(self) -> None:
        """Every simulation running in this process stops within a few thousand events
        (KeyboardInterrupt), and none starts, until ``allow_runs``."""
        from cellbench import _native

        _native.stop_runs()

    def allow_runs(self) -> None:
        from cellbench import _native

        _native.allow_runs()

    def close(self) -> None:
        pass

    @staticmethod
    def summary_lines(result) -> list[str]:
        return []

    def connection_report(self, plan, out: dict) -> dict:
        return out["connections"][0]


def _tables(plan, task, out: dict) -> Tables:
    """The stored rows of one run: per connection, per trace line, per switch port,
    per cwnd sample, per queue sample (the last two with --series) and per UPC."""
    params = plan.param_values(task.point)
    rows, traces, cwnd, acr = [], [], [], []
    run = ident(task)
    # The connections that ran (all, or the one Plan.alone names).
    for c, r in zip(plan.connections(task.point), out["connections"]):
        # start_s and end_s, like every measure, come from the simulator: a serial
        # step starts when the run gets there.
        row = connection_row(plan, task, c, params, c.sndbuf, c.rcvbuf)
        row.update(results.simulator_measures(out, r, skip=row))
        rows.append(row)
        traces += results.trace_rows({**run, "connection": c.index}, r)
        for t_s, bps in r.get("acr_series") or []:
            acr.append({**run, "connection": c.index, "t_s": t_s, "acr_bps": bps})
        for t_s, w, thresh, flight in r.get("cwnd_series") or []:
            cwnd.append(
                {**run, "connection": c.index, "t_s": t_s, "cwnd": w}
                | {"ssthresh": thresh, "flight": flight}
            )
    ports, queue = port_rows(run, out.get("ports", []))
    policers = [{**run, **p} for p in out.get("policers") or []]
    return Tables(rows, traces, ports, cwnd, queue, policers, acr=acr)


#: This package's engine (``engines.table`` finds it).
ENGINE = SimEngine
