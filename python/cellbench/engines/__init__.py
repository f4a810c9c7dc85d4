"""The engines an experiment runs on, behind one seam.

- ``sim``: the simulator (``_native.simulate``), in simulated time: many runs at once
  on a pool of threads or a Dask cluster, the same bytes at any number of workers.
- ``emu``: this machine's Linux TCP in network namespaces over the simulator's cell
  network in real time (``cellbench.emu``), one run at a time.
- ``real``: kernel sockets on real hosts through their daemons (``cellbench.real``),
  one run at a time.

Each is an ``Engine`` (``base``): it checks a plan before anything is written, gives
the result's metadata, runs one task into the stored tables (``Tables``), and says
what a result of its own adds to the summary. The runner's one loop
(``experiment.runner.execute_plan``) drives any of them; the real and emulated
engines walk the experiment's block tree with one walker (``walk``). The command
line picks an engine by name from ``ENGINES`` and never asks which one it has.
"""

from __future__ import annotations

from typing import Callable

from cellbench.engines.base import Engine, Tables


def _sim() -> type[Engine]:
    from cellbench.engines.sim import SimEngine

    return SimEngine


def _emu() -> type[Engine]:
    from cellbench.engines.emu import EmuEngine

    return EmuEngine


def _real() -> type[Engine]:
    from cellbench.engines.real import RealEngine

    return RealEngine


#: Every engine by its ``--engine`` name, loaded when first asked for (the real
#: engine's module needs no Dask until it connects, but the emulator's needs Linux).
ENGINES: dict[str, Callable[[], type[Engine]]] = {"sim": _sim, "real": _real, "emu": _emu}
#: ``--engine``'s choices, in ``cellbench run --help``'s order (the simulator, the default,
#: first).
NAMES = tuple(ENGINES)


def get(name: str) -> type[Engine]:
    """The engine ``name`` (one of ``NAMES``)."""
    try:
        return ENGINES[name]()
    except KeyError:
        raise ValueError(f"engine {name!r}: expected one of {', '.join(NAMES)}") from None


def simulated(name: str) -> bool:
    """Whether engine ``name`` runs in simulated time (the simulator), rather than in
    real time on kernels (the emulator, real hosts): what ``reproduce NAME --engine``
    asks to run a study itself or beside the simulator."""
    return get(name).simulated


__all__ = ["ENGINES", "NAMES", "Engine", "Tables", "get", "simulated"]
