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
#: ``--engine``'s choices, and the one a command runs without it (and a result that
#: names none was made by).
NAMES = tuple(ENGINES)
DEFAULT = NAMES[0]
#: The engines ``cellbench reproduce NAME --engine`` offers, and ``ttcp`` and ``netperf``.
STUDY_NAMES = tuple(n for n, e in ENGINES.items() if e.studies)
TOOL_NAMES = tuple(n for n, e in ENGINES.items() if e.tools)


def get(name: str) -> type[Engine]:
    """The engine ``name`` (one of ``NAMES``)."""
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"engine {name!r}: expected one of {', '.join(NAMES)}") from None


def refused(name: str, given) -> str | None:
    """What ``cellbench run --engine NAME`` says of an option that only other engines
    take (``Engine.options``), if one was given (``given(option)``); None if none was."""
    takes = get(name).options
    for engine in ENGINES.values():
        for option, why in engine.options.items():
            if why is not None and option not in takes and given(option):
                return why.format(engine=name)
    return None


def simulated(name: str) -> bool:
    """Whether engine ``name`` runs in simulated time (the simulator), rather than in
    real time on kernels (the emulator, real hosts): what ``reproduce NAME --engine``
    asks to run a study itself or beside the simulator."""
    return get(name).simulated
