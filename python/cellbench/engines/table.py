"""Every engine by its ``--engine`` name: the one place that lists them.

The command line's ``--engine`` choices and everything else keyed by an engine's name
come from here; each engine says the rest of itself on its class (``base.Engine``).
"""

from __future__ import annotations

from cellbench.engines.base import Engine
from cellbench.engines.emu import EmuEngine
from cellbench.engines.real import RealEngine
from cellbench.engines.sim import SimEngine

#: Every engine by its ``--engine`` name, in ``cellbench run --help``'s order (the
#: simulator, the default, first).
ENGINES: dict[str, type[Engine]] = {e.name: e for e in (SimEngine, RealEngine, EmuEngine)}
#: ``--engine``'s choices.
NAMES = tuple(ENGINES)


def get(name: str) -> type[Engine]:
    """The engine ``name`` (one of ``NAMES``)."""
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"engine {name!r}: expected one of {', '.join(NAMES)}") from None


def simulated(name: str) -> bool:
    """Whether engine ``name`` runs in simulated time (the simulator), rather than in
    real time on kernels (the emulator, real hosts): what ``reproduce NAME --engine``
    asks to run a study itself or beside the simulator."""
    return get(name).simulated
