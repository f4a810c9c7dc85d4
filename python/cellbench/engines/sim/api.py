"""``cellbench.run``: an experiment on the simulator from Python, as a result (stored
with ``out``, else in memory). The command line's ``cellbench run`` is the same loop
on any engine (``engines.loop.run_plan``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cellbench.engines import loop
from cellbench.engines.sim import SimEngine
from cellbench.experiment import captures, results
from cellbench.experiment.plan import as_sets, make_plan


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
    dask=None,
    cells: str | None = None,
    cells_dir: str | os.PathLike | None = None,
    alone: str | None = None,
    cells_runs: str | None = None,
    cells_max: int | None = None,
    **overrides: Any,
) -> results.Result:
    """Run an experiment (a path or the text itself) and return its result.

    ``overrides`` and ``set`` are --set values: ``window=65536``,
    ``snd=[16384, 32768]`` (a sweep), or ``set={"sender.type.blocksize": 4096}``.
    With ``out``, the result is stored there (and ``resume`` finishes or repairs a
    started one). ``trace`` keeps every connection's segment trace; ``series`` its
    sender's cwnd, ssthresh and flight over time and every switch port's queue
    occupancy. ``dask`` is a scheduler address or a ``distributed.Client``.
    ``progress`` shows a progress bar and what a resume repaired, on stderr.
    ``cells`` puts a cell tester on a place (as ``--cells``; the file's ``tester { }``
    block otherwise), its captures into ``cells_dir`` (default ``out/cells``);
    ``cells_runs`` and ``cells_max`` as ``--cells-runs`` and ``--cells-max``.
    ``alone`` names a transmitting test that runs by itself in the whole experiment's
    network (``Plan.alone``).
    """
    sets = as_sets(set) + as_sets(overrides)
    loop.check_workers(workers)  # before a result directory is made
    plan = make_plan(
        source,
        sets=sets,
        replications=replications,
        seed=seed,
        testbed=testbed,
        trace=trace,
        series=series,
        cells=cells,
        alone=alone,
        cells_runs=cells_runs,
        cells_max=cells_max,
    )
    if cells_dir is not None:
        plan.cells_dir = Path(cells_dir)
    if plan.cells_dir is not None or out is not None:
        captures.check(plan, plan.cells_dir or Path(out), cells_max)
    meta = plan.meta()
    client = loop.client_of(dask)
    try:
        if out is not None:
            store = results.ResultDir(Path(out), meta, resume=resume, overwrite=overwrite)
            if progress:
                store.print_repairs()
            loop.execute_plan(
                plan, store, SimEngine(), workers=workers, progress=progress, dask=client
            )
            return results.load(out)
        mem = results.MemoryResult(meta)
        loop.execute_plan(plan, mem, SimEngine(), workers=workers, progress=progress, dask=client)
        return results.Result.from_memory(mem)
    finally:
        if isinstance(dask, str):
            client.close()
