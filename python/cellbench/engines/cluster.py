"""A sweep on a Dask cluster (``--dask ADDRESS``): runs go out in batches, rows come
back as Arrow, and a lost worker costs only the batch it held.

One Dask task per run cost the controller milliseconds of CPU per run (submitting,
tracking and receiving a future, then building the run's rows), so one controller
could feed only a few workers. Here a task is a batch of consecutive runs
(``run_batch``), sized from the measured cost of a run so that it lasts about
``TARGET_TASK_S``, and its worker builds the rows and returns them as one Arrow IPC
stream per table (``results.to_ipc``); the controller journals those bytes as they
are and keeps them columnar until a part is written (``results.write_batch``). The
store cuts parts by run, whatever the batches were, so the stored bytes are those of
a local run at any batch size and number of workers.

The in-flight window is ``WINDOW_PER_THREAD`` batches per worker thread the
scheduler reports, read again every ``WATCH_S``: a cluster that grows or shrinks
mid-sweep is used as it is. A worker that dies takes its in-flight batch with it:
the scheduler gives that task to another worker (Dask's own recovery), the runs come
back the same (they are pure functions of the plan), and the sweep says at its end
which workers were lost. A controller that dies leaves the journal, as locally:
``--resume`` stores what finished and runs the rest.

What is pickled for the workers is the plan, the engine and the stored columns, once
per sweep (``_Shipment``); each worker keeps the last few it was sent
(``_WORKER_PLANS``), so a batch carries a few kilobytes of plan, not a rebuilt one.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import queue
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from cellbench.engines.base import merge_meta, run_error
from cellbench.errors import Interrupted
from cellbench.experiment import lang, results

#: How long one batch should run on its worker (s). Dask's scheduler costs about a
#: millisecond per task (Dask's best-practices page: tasks "should take longer than
#: 100 ms"); an assumption with a range of 0.1..10 s, where 1 s keeps the scheduler's
#: and the controller's cost per run to a thousandth of the run and the run's rows held
#: on a worker to a second's worth.
TARGET_TASK_S = 1.0
#: Runs in each batch before a run's cost is known (the first wave measures it).
FIRST_BATCH_RUNS = 2
#: The most runs in one batch: a part's worth (``results.PART_RUNS``), which also
#: bounds what the controller holds for one batch.
MAX_BATCH_RUNS = results.PART_RUNS
#: Batches in flight per worker thread: one running and one waiting, so a thread
#: never idles while its next batch travels.
WINDOW_PER_THREAD = 2
#: Toward the sweep's end batches shrink to what is left over this many batches per
#: thread (guided self-scheduling), so the threads finish together instead of one
#: running a last full batch alone ...
GUIDED_BATCHES_PER_THREAD = 2
#: ... but not below this long (s): the threads then finish within about this of each
#: other, and a sweep's tail is not a crowd of tiny tasks (an assumption, 0.05..0.5 s).
MIN_TASK_S = 0.1
#: How often the cluster's size is asked for again (s).
WATCH_S = 2.0
#: How often the wait for a batch looks for a signal: a stop request does not reach
#: runs on other machines, so the wait itself must end. A finished batch ends the wait
#: at once (its future's done callback), not at the next look: polling for it cost
#: about 10 ms a batch, paid in full by the first wave and the last batch (issue 32).
SIGNAL_POLL_S = 0.02
#: A test sets this to fix every batch's size (determinism across batch sizes).
FIXED_BATCH_RUNS: int | None = None


@dataclass
class SweepReport:
    """What a sweep on the cluster did (``bench_dask.py`` prints it)."""

    runs: int = 0
    batches: int = 0
    #: The most worker threads seen at once, and the most batches in flight.
    threads: int = 0
    most_in_flight: int = 0
    #: Per run on a worker: its simulation and its rows (s), as measured there.
    run_cost_s: float = 0.0
    #: The controller's CPU and wall time over the sweep (s).
    controller_cpu_s: float = 0.0
    wall_s: float = 0.0
    #: Workers the scheduler removed unexpectedly during the sweep, and how many of
    #: this sweep's batches (and runs) they held and Dask ran again elsewhere.
    lost_workers: list[str] = field(default_factory=list)
    rerun_batches: int = 0
    rerun_runs: int = 0

    def lines(self) -> list[str]:
        if not self.lost_workers:
            return []
        return [
            f"dask: {len(self.lost_workers)} worker(s) lost mid-sweep "
            f"({', '.join(self.lost_workers)}): the {self.rerun_batches} batch(es) they held "
            f"({self.rerun_runs} run(s)) ran again on the others; the result is complete"
        ]


#: How long ``--dask ADDRESS`` waits for the scheduler to answer.
DASK_TIMEOUT_S = 5


def dask_client(address: str):
    """A client of the Dask scheduler at ``address``; connected before anything is
    written, so an unreachable one is a one-line error and leaves no result behind."""
    try:
        from dask.distributed import Client
        from distributed.comm import connect
        from distributed.security import Security
    except ImportError:
        raise lang.ExperimentError(
            None, "--dask needs dask.distributed: pip install 'cellbench[dask]'"
        ) from None

    # A tls:// scheduler: the certificates Dask's configuration names
    # (distributed.comm.tls.ca-file and .client.cert/.key; README, "A sweep on a Dask cluster").
    security = Security()

    async def probe() -> None:
        args = security.get_connection_args("client")
        comm = await connect(address, timeout=DASK_TIMEOUT_S, **args)
        await comm.close()

    try:
        # A probe first: a Client that fails to connect keeps retrying to close itself
        # when collected, and prints a traceback for it. (In a thread: the caller may
        # run an event loop of its own.)
        with ThreadPoolExecutor(max_workers=1) as one:
            one.submit(asyncio.run, probe()).result()
        return Client(address, timeout=DASK_TIMEOUT_S, set_as_default=False, security=security)
    except Exception as e:  # refused, timed out, not an address, not a scheduler
        if isinstance(e, (OSError, ValueError)):
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
        else:  # e.g. a length prefix of exabytes: what answered speaks another protocol
            why = "something answered that does not speak Dask's protocol"
        raise lang.ExperimentError(
            None, f"--dask {address}: no Dask scheduler reached within {DASK_TIMEOUT_S} s ({why})"
        ) from None


# --- on a worker --------------------------------------------------------------------------

#: Plans a worker was sent, by digest (the last few sweeps').
_WORKER_PLANS: dict[str, tuple] = {}
_WORKER_PLANS_KEPT = 4


def run_batch(digest: str, shipment: bytes, runs: list[int]) -> dict:
    """Run ``runs`` (in order) of the shipped plan on this worker; their rows as Arrow
    IPC bytes per table. A run the simulator refuses (ValueError) ends the batch: the
    runs before it are returned with it, so the controller stores them and names it."""
    import cloudpickle

    start = time.perf_counter()
    got = _WORKER_PLANS.get(digest)
    if got is None:
        while len(_WORKER_PLANS) >= _WORKER_PLANS_KEPT:
            _WORKER_PLANS.pop(next(iter(_WORKER_PLANS)))
        got = _WORKER_PLANS[digest] = cloudpickle.loads(shipment)
    plan, engine, columns = got
    rows: dict[str, list[dict]] = {t: [] for t in results.TABLES}
    done, lines, meta, failed = [], [], {}, None
    for run in runs:
        task = plan.task(run)
        try:
            out = engine.work(engine.payload(task))
        except ValueError as e:
            failed = (run, str(e))
            break
        tables = engine.tables(plan, task, out)
        for t, part in zip(results.TABLES, tables.stored()):
            rows[t] += part
        lines += tables.lines
        merge_meta(meta, tables.meta)
        done.append(run)
    return {
        "runs": done,
        "arrow": results.to_ipc(rows, columns),
        "lines": lines,
        "meta": meta,
        "failed": failed,
        "seconds": time.perf_counter() - start,
    }


# --- on the controller --------------------------------------------------------------------


def batch_runs(cost_s: float | None, remaining: int, threads: int) -> int:
    """Runs in the next batch: ``TARGET_TASK_S`` of runs at the measured cost, no more
    than the remaining runs spread over ``GUIDED_BATCHES_PER_THREAD`` batches a thread
    unless that is under ``MIN_TASK_S`` of runs."""
    if FIXED_BATCH_RUNS is not None:
        return FIXED_BATCH_RUNS
    if cost_s is None:
        return FIRST_BATCH_RUNS
    cost_s = max(cost_s, 1e-6)
    size = min(
        round(TARGET_TASK_S / cost_s),
        max(
            math.ceil(remaining / (GUIDED_BATCHES_PER_THREAD * max(threads, 1))),
            round(MIN_TASK_S / cost_s),
        ),
    )
    return max(1, min(size, MAX_BATCH_RUNS))


class _Cluster:
    """The scheduler's view of its workers, asked for at most every ``WATCH_S``."""

    def __init__(self, client):
        self.client = client
        self.asked = -math.inf
        self.nthreads = 1

    def threads(self) -> int:
        now = time.monotonic()
        if now - self.asked >= WATCH_S:
            self.asked = now
            self.nthreads = sum(self.client.nthreads().values())
        return self.nthreads

    def lost(self, since: float, keys: dict[str, int]) -> tuple[list[str], int, int]:
        """Workers removed unexpectedly since ``since`` (the scheduler's event log),
        and how many of ``keys`` (task key -> its runs) they held, running or done."""
        workers, batches, runs = [], 0, 0
        for when, msg in self.client.get_events("all"):
            if (
                isinstance(msg, dict)
                and msg.get("action") == "remove-worker"
                and not msg.get("expected")
            ):
                # Running there, or finished there and not yet fetched: both run again.
                lost = [*msg.get("processing-tasks", ()), *msg.get("lost-computed-tasks", ())]
                held = [k for k in dict.fromkeys(lost) if k in keys]
                if when >= since or held:
                    workers.append(str(msg.get("worker")))
                    batches += len(held)
                    runs += sum(keys[k] for k in held)
        return workers, batches, runs


def drive(plan, engine, store, todo: Iterator[int], remaining: int, client, bar, signals):
    """Every run of ``todo`` (``remaining`` of them) on the cluster of ``client``, in
    batches, each stored as it comes back; a signal stops the sweep with every finished
    batch kept (``Interrupted``). The sweep's ``SweepReport``."""
    import cloudpickle

    report = SweepReport()
    cpu0, wall0, since = time.process_time(), time.perf_counter(), time.time()
    shipment = cloudpickle.dumps((plan, engine, store.columns))
    digest = hashlib.sha256(shipment).hexdigest()
    cluster = _Cluster(client)
    # Futures as they finish (or fail, or are cancelled), put there by Dask's callback
    # thread: the wait below wakes when one comes.
    finished: queue.SimpleQueue = queue.SimpleQueue()
    inflight: dict[Any, list[int]] = {}
    sizes: dict[str, int] = {}  # every batch's task key -> its runs
    spent_s, measured = 0.0, 0

    def store_batch(f) -> None:
        nonlocal spent_s, measured
        runs = inflight.pop(f)
        try:
            out = f.result()
        except Exception as e:
            raise lang.ExperimentError(
                None, f"--dask: runs {runs[0]}..{runs[-1]} failed on the cluster: "
                f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            ) from None  # fmt: skip
        if out["runs"]:
            store.write_batch(out["runs"], out["arrow"])
            merge_meta(store.meta, out["meta"])
            for line in out["lines"]:
                bar.write(line, file=sys.stderr)
            bar.update(len(out["runs"]))
            spent_s += out["seconds"]
            measured += len(out["runs"])
            report.runs += len(out["runs"])
        report.batches += 1
        if out["failed"] is not None:
            run, why = out["failed"]
            raise run_error(plan, plan.task(run), ValueError(why))

    try:
        while True:
            if signals:
                raise Interrupted(signals[0])
            threads = cluster.threads()
            report.threads = max(report.threads, threads)
            while remaining > 0 and len(inflight) < WINDOW_PER_THREAD * max(threads, 1):
                cost = spent_s / measured if measured else None
                runs = list(islice(todo, batch_runs(cost, remaining, threads)))
                remaining -= len(runs)
                f = client.submit(run_batch, digest, shipment, runs, pure=False)
                inflight[f] = runs
                sizes[f.key] = len(runs)
                f.add_done_callback(finished.put)
            report.most_in_flight = max(report.most_in_flight, len(inflight))
            if not inflight:
                break
            ready = []
            while not ready and not signals:
                try:
                    ready.append(finished.get(timeout=SIGNAL_POLL_S))
                except queue.Empty:
                    pass
            while not signals:
                try:
                    ready.append(finished.get_nowait())
                except queue.Empty:
                    break
            for f in ready if not signals else ():
                store_batch(f)
    except BaseException:
        # What has not finished is dropped (a worker may finish it unseen); every
        # finished batch is stored, the rest runs again on --resume.
        client.cancel([f for f in inflight if not f.done()])
        for f in [f for f in inflight if f.status == "finished"]:
            try:
                store_batch(f)
            except BaseException:
                pass
        # A signal asked this process's runs to stop (``Engine.interrupt``): it has
        # none here, and the next sweep in it must run.
        engine.allow_runs()
        raise
    finally:
        report.controller_cpu_s = time.process_time() - cpu0
        report.wall_s = time.perf_counter() - wall0
        report.run_cost_s = spent_s / measured if measured else 0.0
    report.lost_workers, report.rerun_batches, report.rerun_runs = cluster.lost(since, sizes)
    return report
