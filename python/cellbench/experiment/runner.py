"""Planning and running an experiment: every point × replication, on a pool of workers.

A run's simulations are pure functions of plain data (``execute``), so they run the
same in this process, in a thread pool (the native calls release the GIL), or on
a Dask cluster; rows are put together here and stored per run, so the result does
not depend on how many workers there were or in what order runs finished.

Every stage is one call of the simulator's generic runner, ``_native.simulate``
(a spec dict in, a result dict out); an experiment file of the lan-buffers study
gives the numbers of ``cellbench reproduce lan-buffers`` (tests/test_experiment_run.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cellbench.experiment import lang, model, results, sweep
from cellbench.experiment import testbed as tbmod


@dataclass
class Task:
    run: int
    point: int
    replication: int
    specs: list[dict]


@dataclass
class Plan:
    file: str
    text: str
    sets: list[str]
    sweep: sweep.Sweep
    points: list[dict[str, lang.Value]]
    experiments: list[model.Experiment]
    replications: int
    seed: int
    trace: bool
    testbed_arg: str | None
    series: bool = False

    @property
    def runs_total(self) -> int:
        return len(self.points) * self.replications

    @functools.cached_property
    def columns(self) -> dict[str, str]:
        """Sweep key -> its result column (renamed when it clashes with a stored column);
        computed once: every stored row asks for it."""
        cols = results.param_columns(self._params())
        return {p.key: c[0] for p, c in zip(self.sweep.params, cols)}

    def _params(self) -> list[dict]:
        return [
            {"key": p.key, "values": [self._column_value(p.key, v) for v in p.values]}
            for p in self.sweep.params
        ]

    @functools.cached_property
    def _text_params(self) -> set[str]:
        """Parameters whose values mix words and numbers (``off, 64``): a text column."""
        return {
            p.key
            for p in self.sweep.params
            if any(isinstance(sweep.column_value(v), str) for v in p.values)
        }

    def _column_value(self, key: str, v) -> Any:
        x = sweep.column_value(v)
        return str(x) if key in self._text_params else x

    def param_values(self, point: int) -> dict[str, Any]:
        return {k: self._column_value(k, v) for k, v in self.points[point].items()}

    def tasks(self) -> Iterable[Task]:
        for p, exp in enumerate(self.experiments):
            for r in range(self.replications):
                specs = [
                    exp.spec(s, self.seed, r, self.trace, self.series) for s in range(exp.stages)
                ]
                yield Task(p * self.replications + r, p, r, specs)

    def meta(self) -> dict:
        from cellbench import __version__

        first = self.experiments[0]
        params = self._params()
        hosts = [h.name for h in first.hosts]
        core = {
            "experiment": {"file": self.file, "text": self.text},
            "set": self.sets,
            "seed": self.seed,
            "replications": self.replications,
            "trace": self.trace,
            "testbed_arg": self.testbed_arg,
            # Only when on: a result without series keeps the digest it always had.
            **({"series": True} if self.series else {}),
        }
        digest = hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()
        return {
            "format": results.FORMAT,
            "format_version": results.FORMAT_VERSION,
            "cellbench_version": __version__,
            **core,
            "plan_digest": digest,
            "testbed": first.testbed.to_dict(hosts),
            "sweep": params,
            "param_columns": [list(c) for c in results.param_columns(params)],
            "points": len(self.points),
            "runs_total": self.runs_total,
            "connections_per_run": len(first.connections),
            "stages": first.stages,
            "notes": sorted({n for e in self.experiments for n in e.notes}),
            "units": {
                "throughput_bps": "bit/s (10^6 bit/s = 1 Mb/s)",
                "throughput_mbit_ttcp": "Mbit/s as ttcp prints it (2^20 bit/s)",
                "sndbuf": "bytes",
                "period_us": "µs",
            },
        }


def _native():
    from cellbench import _native

    return _native


def check_engine() -> None:
    """Before anything runs: this build has the generic simulator."""
    if not hasattr(_native(), "simulate"):
        raise lang.ExperimentError(
            None, "this build of cellbench has no generic simulator (_native.simulate): rebuild it"
        )


def execute(specs: list[dict]) -> list[dict]:
    """Run one run's stages (simulate-contract specs); the simulator's result per stage."""
    native = _native()
    return [native.simulate(spec) for spec in specs]


def _rows(plan: Plan, task: Task, stages: list[dict]) -> tuple[list[dict], ...]:
    """The stored rows of one run: per connection, per trace line, per switch port,
    per cwnd sample and per queue sample (the last two with --series)."""
    exp = plan.experiments[task.point]
    params = plan.param_values(task.point)
    rows, traces, ports, cwnd, queue = [], [], [], [], []
    for s, out in enumerate(stages):
        ident = {"run": task.run, "point": task.point, "replication": task.replication}
        for c, r in zip(exp.stage_connections(s), out["connections"]):
            t = c.traffic
            row = {
                **ident,
                "seed": plan.seed,
                "stage": s,
                "connection": c.index,
                "test": c.name,
                "transmitter": c.transmitter,
                "receiver": c.receiver,
                "protocol": c.protocol,
                "traffic": t.type,
                "blocksize": t.blocksize,
                "receiver_blocksize": c.receiver_blocksize,
                "nbytes": t.nbytes,
                "duration_s": t.duration_s,
                "period_us": t.period_us,
                "offered_bps": t.blocksize * 8 / (t.period_us * 1e-6) if t.period_us else None,
                "sndbuf": c.sndbuf,
                "rcvbuf": c.rcvbuf,
                "nodelay": c.nodelay,
                "start_s": c.start_s,
                "events": out.get("events"),
                "sim_seconds": out.get("sim_seconds"),
            }
            policers = out.get("policers") or []
            measures = {**r, **results.cycle_columns(r)}
            if policers:
                measures["met_contract"] = all(x["met_contract"] for x in policers)
            for name, _ in results.ROW_COLUMNS:
                if name not in row and name in measures:
                    row[name] = measures[name]
            if isinstance(row.get("cycle_pattern"), list):
                row["cycle_pattern"] = " -> ".join(row["cycle_pattern"])
            for k, v in params.items():
                row[plan.columns[k]] = v
            rows.append(row)
            for i, line in enumerate(r.get("trace") or []):
                traces.append(
                    {**ident, "stage": s, "connection": c.index, "line_no": i, "line": line}
                )
            for t_s, w, thresh, flight in r.get("cwnd_series") or []:
                cwnd.append(
                    {**ident, "stage": s, "connection": c.index, "t_s": t_s, "cwnd": w}
                    | {"ssthresh": thresh, "flight": flight}
                )
        for p in out.get("ports", []):
            p = dict(p)
            for t_s, cells in p.pop("queue_series", None) or []:
                queue.append(
                    {**ident, "stage": s, "port": p["port"], "host": p["host"]}
                    | {"t_s": t_s, "cells": cells}
                )
            ports.append({**ident, "stage": s, **p})
    return rows, traces, ports, cwnd, queue


def make_plan(
    source: str | os.PathLike,
    *,
    sets: list[str] | None = None,
    replications: int | None = None,
    seed: int | None = None,
    testbed: str | None = None,
    trace: bool = False,
    series: bool = False,
    file: str | None = None,
) -> Plan:
    """Parse, apply every sweep point, build and check every experiment. Nothing runs."""
    text, name = _source(source, file)
    doc = lang.parse(text, name)
    base = tbmod.load(testbed) if testbed else None
    sets = list(sets or [])
    sw = sweep.merge(sweep.from_document(doc), [sweep.parse_set(s) for s in sets])
    reps = replications if replications is not None else (sw.replications or 1)
    if reps < 1:
        raise lang.ExperimentError(None, f"replications {reps}: must be at least 1")
    seed = seed if seed is not None else (sw.seed if sw.seed is not None else 1)
    if not 0 <= seed <= model.U64_MAX:
        raise lang.ExperimentError(None, f"seed {seed}: must be 0..{model.U64_MAX} (2^64-1)")
    points = sw.points()
    experiments = [model.build(sweep.apply(doc, p, sw.params), base) for p in points]
    if reps * experiments[0].stages > model.U32_MAX:
        raise lang.ExperimentError(None, f"replications {reps}: at most {model.U32_MAX}")
    first = experiments[0]
    shape = [(c.name, c.stage) for c in first.connections]
    for e in experiments[1:]:
        if [(c.name, c.stage) for c in e.connections] != shape:
            raise lang.ExperimentError(
                None, "the sweep changes which connections exist: it may change values only"
            )
    check_engine()
    for e in experiments:
        model.check_with_engine(e, seed)
    return Plan(name, text, sets, sw, points, experiments, reps, seed, trace, testbed, series)


def _source(source: str | os.PathLike, file: str | None) -> tuple[str, str]:
    if isinstance(source, os.PathLike) or ("{" not in str(source) and "\n" not in str(source)):
        name = file or str(source)
        return lang.read(Path(source), name, "the experiment"), name
    return str(source), file or "<text>"


def execute_plan(
    plan: Plan,
    store,
    *,
    workers: int | None = None,
    progress: bool = False,
    dask: str | None = None,
    executor: Callable[[list[dict]], list[dict]] = execute,
) -> None:
    """Run every task not yet in ``store``; each finished run is stored at once."""
    done = store.done()
    todo = [t for t in plan.tasks() if t.run not in done]
    from tqdm import tqdm

    bar = tqdm(
        total=plan.runs_total,
        initial=len(done),
        unit="run",
        desc="cellbench run",
        disable=None if progress else True,
        file=sys.stderr,
    )
    try:
        if dask is not None:
            _run_dask(plan, store, todo, dask, bar, executor)
        else:
            _run_local(plan, store, todo, workers, bar, executor)
    finally:
        bar.close()
    store.finish()


def _fail(task: Task, plan: Plan, e: Exception) -> Exception:
    point = ", ".join(f"{k}={v}" for k, v in plan.param_values(task.point).items())
    where = f"run {task.run} ({point + ', ' if point else ''}replication {task.replication})"
    return lang.ExperimentError(None, f"{where}: {e}")


def _run_local(plan, store, todo, workers, bar, executor) -> None:
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for task in todo:
            try:
                out = executor(task.specs)
            except ValueError as e:
                raise _fail(task, plan, e) from None
            store.write_run(task.run, *_rows(plan, task, out))
            bar.update()
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = {pool.submit(executor, t.specs): t for t in todo}
        try:
            # as_completed waits on all futures at once: waiting on the whole
            # pending set after each completion would cost O(runs^2).
            for f in as_completed(list(pending)):
                task = pending.pop(f)
                try:
                    out = f.result()
                except ValueError as e:
                    raise _fail(task, plan, e) from None
                store.write_run(task.run, *_rows(plan, task, out))
                bar.update()
        except BaseException:
            # Drop what has not started, stop what is running (each stops within a few
            # thousand events), and keep every run that finished meanwhile.
            for f in pending:
                f.cancel()
            _native().stop_runs()
            try:
                for f, task in pending.items():
                    if not f.cancelled() and f.exception() is None:
                        try:
                            store.write_run(task.run, *_rows(plan, task, f.result()))
                        except Exception:
                            pass
            finally:
                _native().allow_runs()
            raise


def _run_dask(plan, store, todo, address, bar, executor) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise lang.ExperimentError(
            None, "--dask needs dask.distributed: pip install 'cellbench[dask]'"
        ) from None
    client = address if not isinstance(address, str) else Client(address)
    try:
        futures = client.map(executor, [t.specs for t in todo], pure=False)
        by_key = {f.key: t for f, t in zip(futures, todo)}
        for f in as_completed(futures):
            task = by_key[f.key]
            try:
                out = f.result()
            except ValueError as e:
                raise _fail(task, plan, e) from None
            store.write_run(task.run, *_rows(plan, task, out))
            bar.update()
    finally:
        if isinstance(address, str):
            client.close()


def run(
    source: str | os.PathLike,
    *,
    out: str | os.PathLike | None = None,
    set: dict[str, Any] | list[str] | None = None,  # noqa: A002 - the CLI's word
    replications: int | None = None,
    seed: int | None = None,
    testbed: str | None = None,
    trace: bool = False,
    series: bool = False,
    workers: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    dask: str | None = None,
    **overrides: Any,
) -> results.Result:
    """Run an experiment (a path or the text itself) and return its result.

    ``overrides`` and ``set`` are --set values: ``window=65536``,
    ``snd=[16384, 32768]`` (a sweep), or ``set={"sender.type.blocksize": 4096}``.
    With ``out``, the result is stored there (and ``resume`` finishes a started one).
    ``trace`` keeps every connection's segment trace; ``series`` its sender's cwnd,
    ssthresh and flight over time and every switch port's queue occupancy.
    """
    sets = _as_sets(set) + _as_sets(overrides)
    plan = make_plan(
        source,
        sets=sets,
        replications=replications,
        seed=seed,
        testbed=testbed,
        trace=trace,
        series=series,
    )
    meta = plan.meta()
    if out is not None:
        store = results.ResultDir(Path(out), meta, resume=resume, overwrite=overwrite)
        execute_plan(plan, store, workers=workers, progress=progress, dask=dask)
        return results.load(out)
    mem = results.MemoryResult(meta)
    execute_plan(plan, mem, workers=workers, progress=progress, dask=dask)
    return results.Result.from_memory(mem)


def _as_sets(values: dict[str, Any] | list[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, list):
        return list(values)
    out = []
    for k, v in values.items():
        if isinstance(v, (list, tuple, range)):
            out.append(f"{k}=" + ",".join(str(x) for x in v))
        else:
            out.append(f"{k}={v}")
    return out
