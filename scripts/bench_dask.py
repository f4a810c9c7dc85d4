"""The same sweep on local threads and on a Dask cluster of 1, 2, 4 and 8 worker
processes, side by side (issue 32).

    python scripts/bench_dask.py [--replications N] [--workers 1,2,4,8]

The sweep is the lan-buffers study's grid (100 buffer pairs, 32 MB each) at
``--replications`` (default 10: 1000 runs), stored with --out as a user would. Each
row is one sweep on a fresh result directory, timed from its first submitted run to
its stored result (the plan is made once, before; a Dask cluster is started with
Dask's own commands and warmed first, so a worker's one-time imports are not counted:
a one-point sweep, which reaches one worker, and then every worker's imports,
``warm_workers``).

`--repeat N` runs every row N times, in rounds, and keeps each row's fastest.

Columns: wall time; parallel efficiency (the `--workers 1` wall over N x this wall,
N the worker threads: on a 2-core machine at most 2/N past two workers); the
controller's CPU time (this process: client, store, journal) per run and per batch,
for the Dask rows (the local rows' CPU is the simulations'); and the 1-minute load
average when the kept sweep finished, as other users of the machine show in it.

The closing lines are a model on paper of a 100-worker cluster, from the row with the
most workers that have a core each (2 here):
one controller keeps up while its CPU per run is less than a run's time divided by
the workers, so it can feed (run time on a worker) / (controller CPU per run)
workers. Assumptions: runs cost what they cost here, one thread per worker, the
controller has a core of its own, Dask's scheduler spends about 1 ms per task
(`SCHEDULER_S_PER_TASK`, Dask's best-practices page; its own core), and the network
carries a batch's Arrow bytes (about a kilobyte per run) without limiting. The last
line scales to a long sweep, whose batches all last ``cluster.TARGET_TASK_S``: the
controller's CPU per batch (which also holds its per-run work, so this errs high)
spread over a full batch's runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from cellbench.engines import cluster, localcluster
from cellbench.engines.loop import execute_plan
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan
from cellbench.reproduce import lan_buffers

#: Dask's scheduler per task (s): an assumption, 0.2..2 ms (Dask's best practices page
#: says "about 1 ms of overhead" per task).
SCHEDULER_S_PER_TASK = 1e-3
#: The cluster the model sizes.
MODEL_WORKERS = 100


#: What a fresh worker process imports in its first batch: the simulator, Arrow, and
#: pandas, which pyarrow imports the first time it converts a Python list (about
#: 0.25 s of a worker's first batch on the 2-core machine, issue 32).
WORKER_IMPORTS = ("cellbench._native", "cellbench.engines.cluster", "pyarrow", "pandas")


def warm_workers(address: str) -> None:
    """Every worker of the cluster at ``address`` has made ``WORKER_IMPORTS``: the
    warm sweep's one batch pays them on one worker only, and the other's first batch
    of the timed sweep would carry them."""
    from dask.distributed import Client

    with Client(address, set_as_default=False) as client:
        for module in WORKER_IMPORTS:
            client.run(importlib.import_module, module)


def sweep(plan, out: Path, **how):
    """One sweep into a fresh ``out``: (wall s, CPU s of this process, its report)."""
    shutil.rmtree(out, ignore_errors=True)
    store = results.ResultDir(out, plan.meta(), resume=False)
    cpu, wall = time.process_time(), time.perf_counter()
    report = execute_plan(plan, store, SimEngine(), **how)
    return time.perf_counter() - wall, time.process_time() - cpu, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=10)
    ap.add_argument("--workers", default="1,2,4,8", help="Dask worker processes, comma-separated")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of every row; each row keeps its fastest"
    )
    args = ap.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    plan = make_plan(lan_buffers.EXPERIMENT, replications=args.replications)
    warm = make_plan(lan_buffers.EXPERIMENT, replications=1, sets=["snd=16384", "rcv=16384"])
    n = plan.runs_total
    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    best: dict[tuple[str, int], tuple] = {}  # row -> (wall, cpu, report, load)

    def keep(row: tuple[str, int], wall: float, cpu: float, report) -> None:
        if row not in best or wall < best[row][0]:
            best[row] = (wall, cpu, report, os.getloadavg()[0])

    try:
        # Rounds, each row once a round: what else the machine runs drifts, and a row
        # measured only at a busy moment would carry it.
        for _ in range(args.repeat):
            for w in (1, 2):
                keep(("threads", w), *sweep(plan, tmp / "r", workers=w))
            for k in counts:
                with localcluster.LocalCluster(k) as c:
                    sweep(warm, tmp / "warm", dask=c.address)
                    warm_workers(c.address)
                    keep(("dask", k), *sweep(plan, tmp / "r", dask=c.address))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"lan-buffers, {n} runs of 32 MB; machine: {os.cpu_count()} cores; "
          f"fastest of {args.repeat} round(s)")  # fmt: skip
    head = f"{'how':<34} {'wall s':>7} {'eff':>5} {'ctl ms/run':>10} {'ctl ms/batch':>12} "
    print(head + f"{'batches':>7} {'load':>5}")
    base = best[("threads", 1)][0]
    for (kind, k), (wall, cpu, rep, load) in best.items():
        eff = base / (k * wall)
        if kind == "threads":
            print(f"{f'--workers {k}':<34} {wall:7.2f} {eff:5.2f} {'-':>10} {'-':>12} "
                  f"{'-':>7} {load:5.2f}")  # fmt: skip
            continue
        per_run, per_batch = 1e3 * cpu / n, 1e3 * cpu / max(rep.batches, 1)
        print(f"{f'--dask, {k} worker process(es)':<34} {wall:7.2f} {eff:5.2f} "
              f"{per_run:10.3f} {per_batch:12.1f} {rep.batches:7d} {load:5.2f}")  # fmt: skip
    if ("dask", 2) in best:
        ratio = best[("dask", 2)][0] / best[("threads", 2)][0]
        print(f"--dask with 2 worker processes / --workers 2, wall: {ratio:.2f}")
    # The model: from the row with the most workers that each have a core of their own
    # (past that, workers share cores, a run's wall time grows, and the batches shrink
    # to last a second: not what a cluster of machines would see).
    k = max([c for c in counts if c <= (os.cpu_count() or 1)] or counts[:1])
    wall, cpu, rep, _ = best[("dask", k)]
    per_run = cpu / n
    run_s = rep.run_cost_s
    runs_per_batch = n / max(rep.batches, 1)
    fed = run_s / per_run
    sched = SCHEDULER_S_PER_TASK / runs_per_batch
    need = MODEL_WORKERS * per_run / run_s
    print()
    print(f"model ({MODEL_WORKERS}-worker cluster, from the {k}-worker row): a run takes "
          f"{1e3 * run_s:.2f} ms on a worker; the controller spends {1e3 * per_run:.3f} ms "
          f"of CPU per run, so one controller feeds up to {fed:,.0f} workers; "
          f"{MODEL_WORKERS} workers need {100 * need:.0f}% of its core. At "
          f"{runs_per_batch:.0f} runs per batch the scheduler spends "
          f"{1e3 * sched:.3f} ms per run (assumed {1e3 * SCHEDULER_S_PER_TASK:.0f} ms "
          f"per task): it feeds up to {run_s / sched:,.0f} workers.")  # fmt: skip
    # A long sweep's batches last TARGET_TASK_S (this one's shrink toward its end and
    # carry its fixed costs): the controller's CPU per batch over a full batch's runs.
    full = cluster.TARGET_TASK_S / run_s
    per_run_full = cpu / max(rep.batches, 1) / full
    print(f"a long sweep's full batches ({cluster.TARGET_TASK_S:.0f} s = {full:.0f} runs): "
          f"{1e3 * per_run_full:.3f} ms of controller CPU per run (its CPU per batch, "
          f"{1e3 * cpu / max(rep.batches, 1):.1f} ms, over a batch's runs): one controller "
          f"feeds up to {run_s / per_run_full:,.0f} workers; the scheduler, "
          f"{run_s * full / SCHEDULER_S_PER_TASK:,.0f}.")  # fmt: skip


if __name__ == "__main__":
    main()
