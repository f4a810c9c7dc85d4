"""The one run loop of every engine: a plan's runs executed and stored, in run order.

``execute_plan`` drives any ``Engine`` (``engines.base``). On the simulator a run is a
pure function of plain data, so runs go to a pool of threads (the native calls release
the GIL), or to a Dask cluster in batches (``engines.cluster``: a worker puts its
batch's rows together, as Arrow); the emulator and real hosts run one run at a time on
the real clock. Rows are handed to the store, which puts them in run order, so the
result does not depend on how many workers there were or in what order runs finished.
A run is planned when it is submitted, at most ``lookahead(workers)`` runs past the
oldest unfinished one, so memory stays bounded whatever the sweep's size.

Each engine says how it stops (``Engine.interrupt``, ``stop_runs``, ``allow_runs``):
the loop names none of them and imports none.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from cellbench.engines.base import Engine, merge_meta, run_error
from cellbench.errors import Interrupted
from cellbench.experiment import captures, lang, results
from cellbench.experiment.plan import Plan, Task
from cellbench.progress import heartbeat, progress_bar, shown

#: The bound on memory, as --help states it.
LOOKAHEAD_HELP = (
    "Memory stays bounded whatever the number of runs: each run is planned when it is "
    "submitted, at most max(4 x workers, 16) runs past the oldest unfinished one are "
    f"submitted or waiting, and runs are stored in parts of up to {results.PART_RUNS} runs "
    f"or {results.PART_ROWS:,} rows."
)


#: The most worker threads a sweep starts: far more than the cores of any machine it
#: runs on. Threads beyond the cores run nothing faster and each costs memory (a
#: running simulation, and four runs of look-ahead): 10^6 of them took 1.7 GB.
MAX_WORKERS = 1024


def check_workers(workers: int | None) -> None:
    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        raise lang.ExperimentError(
            None, f"workers {workers}: must be 0 (all cores) to {MAX_WORKERS}"
        )


def lookahead(workers: int) -> int:
    """Runs submitted or finished-but-unstored past the oldest unfinished run: enough
    to keep ``workers`` busy, and what bounds memory whatever the sweep's size."""
    return max(4 * workers, 16)


#: The CLI sets this: a second signal while a sweep stops ends the process at once
#: (os._exit) -- every finished run is in the journal (``results``), as after a kill.
#: A library caller (a notebook) gets KeyboardInterrupt instead.
EXIT_ON_SECOND_SIGNAL = False


@contextlib.contextmanager
def _signals_stop_runs(engine: Engine) -> Iterator[list[int]]:
    """While a sweep runs, SIGINT and SIGTERM are noted and handed to the engine
    (``Engine.interrupt``). The simulator only asks every simulation to stop
    (``stop_runs``); the sweep loop sees the note at its next step and stops there
    (``Interrupted``): a KeyboardInterrupt raised wherever the main thread happened to
    be could leave a lock taken -- inside ``concurrent.futures.wait``'s acquisition of
    its futures' locks -- which the workers then wait on forever while the main thread
    joins them. An engine on the real clock raises ``Interrupted`` at once: its run
    stops its agents and cleans up as it unwinds, and is not stored."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got  # only the main thread receives signals
        return

    def note(signum, frame) -> None:
        again = bool(got)
        got.append(signum)
        if again and engine.simulated:  # the user insists
            if EXIT_ON_SECOND_SIGNAL:
                os.write(2, b"cellbench: interrupted again: exiting now (--resume keeps every "
                            b"finished run)\n")  # fmt: skip
                os._exit(128 + signum)
            raise Interrupted(signum)
        engine.interrupt(signum)

    previous = {}
    # Installed inside the try: a signal that arrives while the handlers go in (run as
    # KeyboardInterrupt by the handler still in place) must not leave ``note`` behind,
    # where it would swallow a later Ctrl-C outside any sweep.
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:  # (nohup, a background job)
                previous[sig] = signal.signal(sig, note)
        yield got
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def execute_plan(
    plan: Plan,
    store,
    engine: Engine,
    *,
    workers: int | None = None,
    progress: bool = False,
    dask=None,
):
    """Run every run not yet in ``store`` on ``engine``, in run order; each finished
    run goes to the store at once. An engine in simulated time runs on a pool of
    ``workers`` threads with a bounded look-ahead (``lookahead``), or with ``dask`` (a
    scheduler address or a connected client) on a cluster in batches (``cluster``; its
    ``SweepReport`` is returned); an engine on the real clock runs one at a time, here.
    SIGINT or SIGTERM stops the sweep with every finished run kept (``Interrupted``)."""
    done = store.done()
    todo = (run for run in range(plan.runs_total) if run not in done)
    engine.begin(plan, store, dask)
    client = client_of(dask)
    check_workers(workers)
    workers = workers or os.cpu_count() or 1
    if client is not None and engine.simulated:
        return _on_cluster(plan, engine, store, todo, len(done), client, dask, progress)
    if not engine.simulated:
        pool: _Pool = _InPlacePool(engine.work)
    elif workers == 1:
        pool = _InlinePool(engine.work)
    else:
        pool = _ThreadPool(workers, engine.work)
    runs = progress_bar(plan, done, engine.label, progress)
    try:
        with _signals_stop_runs(engine) as signals, heartbeat(runs):
            try:
                with _kept_if_stopped(store, signals):
                    _drive(plan, engine, store, todo, pool, runs, signals)
            finally:
                pool.close()
                if isinstance(dask, str):
                    client.close()
        # Sealing the last part and the result's files can take long after the last
        # run (10,000 connections): the bar says so and keeps its clock.
        runs.set_postfix_str("storing the result", refresh=shown(runs))
        with heartbeat(runs):
            store.finish()
    finally:
        runs.close()


@contextlib.contextmanager
def _kept_if_stopped(store, signals: list[int]) -> Iterator[None]:
    """A sweep that stops early (a signal, an error) puts every finished run in a part;
    the rest stays missing, for --resume."""
    try:
        yield
    except BaseException as e:
        try:
            store.close()
        except Exception:
            pass  # (the store failing again must not hide why the sweep stopped)
        if signals and isinstance(e, KeyboardInterrupt):
            raise Interrupted(signals[0]) from None
        raise


def _on_cluster(plan: Plan, engine: Engine, store, todo, done: int, client, dask, progress: bool):
    """``execute_plan`` on a Dask cluster: runs in batches (``cluster``); its report."""
    from cellbench.engines import cluster

    bar = progress_bar(plan, range(done), engine.label, progress)
    with _signals_stop_runs(engine) as signals:
        try:
            with _kept_if_stopped(store, signals):
                report = cluster.drive(
                    plan, engine, store, todo, plan.runs_total - done, client, bar, signals
                )
        finally:
            bar.close()
            if isinstance(dask, str):
                client.close()
    store.finish()
    for line in report.lines():
        print(f"cellbench: {line}", file=sys.stderr)
    return report


def _drive(
    plan: Plan, engine: Engine, store, todo: Iterator[int], pool: _Pool, bar, signals: list[int]
) -> None:
    """Submit runs in order while they are within the look-ahead of the oldest one
    unfinished; store each as it finishes; stop at a signal (``signals``)."""
    inflight: dict[Any, Task] = {}
    nxt = next(todo, None)
    try:
        while nxt is not None or inflight:
            if signals:
                raise Interrupted(signals[0])
            oldest = min((t.run for t in inflight.values()), default=nxt)
            while nxt is not None and nxt < oldest + pool.lookahead:
                task = plan.task(nxt)
                inflight[pool.submit(engine.payload(task))] = task
                nxt = next(todo, None)
            for f in pool.wait_any(list(inflight), signals):
                _store(plan, engine, store, inflight.pop(f), f, bar)
                bar.update()
    except BaseException:
        # Drop what has not started, stop what is running here (each simulation
        # stops within a few thousand events) and keep every run that finished.
        for f in inflight:
            f.cancel()
        engine.stop_runs()
        try:
            for f, task in inflight.items():
                if not f.cancelled():
                    try:
                        _store(plan, engine, store, task, f, bar)
                    except BaseException:
                        pass  # stopped or failed: it runs again on --resume
        finally:
            engine.allow_runs()
        raise


def _store(plan: Plan, engine: Engine, store, task: Task, future, bar) -> None:
    try:
        out = future.result()
    except ValueError as e:
        raise run_error(plan, task, e) from None
    tables = engine.tables(plan, task, out)
    merge_meta(store.meta, tables.meta)
    store.write_run(task.run, *tables.stored())
    for line in tables.lines:
        bar.write(line, file=sys.stderr)


class _Pool:
    """Where runs execute: ``submit(payload)`` gives a future, ``wait_any(futures,
    signals)`` those of them that are done (at least one, unless a signal came)."""

    lookahead = 1

    def submit(self, payload): ...

    def wait_any(self, futures: list, signals: list[int]) -> list: ...

    def close(self) -> None:
        pass


class _InlinePool(_Pool):
    """One worker: each run executes when submitted, in this thread."""

    def __init__(self, executor):
        self.executor = executor

    def submit(self, payload):
        f: Future = Future()
        try:
            f.set_result(self.executor(payload))
        except Exception as e:  # a Ctrl-C is not caught: it stops the sweep at once
            f.set_exception(e)
        return f

    def wait_any(self, futures, signals):
        return futures


class _InPlacePool(_InlinePool):
    """An engine on the real clock: one run at a time, in this thread; its failure
    ends the sweep as it is (it names its host and connection)."""

    def submit(self, payload):
        f: Future = Future()
        f.set_result(self.executor(payload))
        return f


class _ThreadPool(_Pool):
    """Threads: the native calls release the GIL."""

    def __init__(self, workers: int, executor):
        self.executor = executor
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.lookahead = lookahead(workers)

    def submit(self, payload):
        return self.pool.submit(self.executor, payload)

    def wait_any(self, futures, signals):
        # A signal stops the running simulations (stop_runs): their futures end.
        return wait(futures, return_when=FIRST_COMPLETED).done

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_plan(
    plan: Plan,
    out: str | os.PathLike | None,
    engine: Engine,
    *,
    resume: bool = False,
    overwrite: bool = False,
    check: bool = False,
    workers: int | None = None,
    dask=None,
    progress: bool = True,
) -> bool:
    """``cellbench run FILE`` on any engine, into the result ``out``: the engine's
    notes on stderr; with ``check`` only its check line (and False); else the result
    stored (``resume``, ``overwrite``: as ``ResultDir``), what a resume repaired said,
    every run executed (``execute_plan``; ``workers``, ``dask``: the simulator's), and
    True. The engine is closed at the end. Without ``out`` the result is kept nowhere
    (``run_task``)."""
    for note in engine.check(plan):
        print(f"cellbench: note: {note}", file=sys.stderr)
    # (The simulator's testers: the other engines record no cells.)
    if engine.simulated and out is not None:
        captures.check(plan, Path(out), plan.cells_max)
    if check:
        print(engine.check_line(plan))
        return False
    # The scheduler first: an unreachable one leaves nothing written.
    client = client_of(dask)
    try:
        engine.open()
        if out is None:
            store = _Unkept(engine.meta(plan))
        else:
            store = results.ResultDir(
                Path(out), engine.meta(plan), resume=resume, overwrite=overwrite
            )
            if progress:
                store.print_repairs()
        execute_plan(plan, store, engine, workers=workers, progress=progress, dask=client)
    finally:
        engine.close()
        if isinstance(dask, str) and client is not None:
            client.close()
    return True


def client_of(dask):
    """``dask`` as a connected client: an address is connected to (``cluster.dask_client``)."""
    if not isinstance(dask, str):
        return dask
    from cellbench.engines import cluster

    return cluster.dask_client(dask)


def run_task(plan: Plan, engine: Engine) -> Any:
    """A plan of one run through the loop on ``engine``, its rows kept nowhere, quietly
    (no bar); the engine's outcome of it (``Engine.work``'s), for a tool that prints the
    engine's own report of the run (``ttcp``, ``netperf``: ``Engine.connection_report``)."""
    kept = _Keeping(engine)
    run_plan(plan, None, kept, progress=False, workers=1)  # type: ignore[arg-type]
    return kept.outcomes[0]


class _Unkept:
    """A store that keeps no run: the loop's store for ``run_task`` (no Arrow, no files)."""

    path = None

    def __init__(self, meta: dict):
        self.meta = meta

    def done(self) -> set[int]:
        return set()

    def write_run(self, run: int, *tables) -> None:
        pass

    def finish(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Keeping:
    """``engine`` as it is, keeping each run's outcome as the loop hands it over."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.outcomes: dict[int, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def tables(self, plan, task, out):
        self.outcomes[task.run] = out
        return self.engine.tables(plan, task, out)
