"""A reproduction as an experiment like any other: its ``.netspec`` file beside
this module, run by the experiment runner (``cellbench.experiment.runner``).

Every study that is an experiment file runs through ``run`` here, so each offers
the runner's options with one meaning: ``out`` stores the result where ``cellbench
show``/``plot`` read it, ``resume`` finishes an interrupted one (a complete one runs
nothing), ``dask`` runs on a Dask scheduler, ``workers`` threads (0: all cores).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cellbench.experiment.results import Result

#: The studies' experiment files.
HERE = Path(__file__).parent


def experiment_file(name: str) -> Path:
    """The experiment file of study ``name`` (``lan-buffers`` -> lan-buffers.netspec)."""
    return HERE / f"{name}.netspec"


def run(
    name: str,
    *,
    replications: int | None = None,
    seed: int | None = None,
    workers: int = 0,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    dask: str | None = None,
    progress: bool = False,
    series: bool = False,
    set: dict[str, Any] | None = None,  # noqa: A002 - the runner's word
    cells_dir: str | Path | None = None,
    **overrides: Any,
) -> Result:
    """Run study ``name``'s experiment file; ``overrides``/``set`` are --set values
    (``window=[512, 1024]``, ``set={"testbed.mtu": 9180}``); ``series`` stores the
    cwnd and queue-occupancy time series with the result; ``cells_dir`` where a
    study's cell tester writes its captures (default ``out/cells``)."""
    if replications is not None and replications < 1:
        raise ValueError(f"replications {replications}: must be at least 1")
    if resume and out is None:
        raise ValueError("resume needs out (the result to finish)")
    from cellbench.experiment.runner import run as run_experiment

    return run_experiment(
        str(experiment_file(name)),
        out=out,
        resume=resume,
        overwrite=overwrite,
        dask=dask,
        workers=workers or None,
        replications=replications,
        seed=seed,
        progress=progress,
        series=series,
        cells_dir=cells_dir,
        set=set,
        **overrides,
    )
