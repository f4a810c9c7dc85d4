"""Every engine by its ``--engine`` name: the one place that lists them.

An engine is a package of ``cellbench.engines`` whose ``ENGINE`` is its class; nothing
else registers it. The command line's ``--engine`` choices, its help and refusals, the
options only some engines take, and the store's column groups come from here; each
engine says the rest of itself on its class (``base.Engine``).
"""

from __future__ import annotations

import importlib
import pkgutil

from cellbench import engines
from cellbench.engines.base import Engine, Option
from cellbench.experiment.results import columns

#: The engines in the order ``cellbench run --help`` lists them, the default first; an
#: engine not named here (a new one) follows them in its package's name order.
ORDER = ("sim", "real", "emu")


def _discover() -> dict[str, type[Engine]]:
    """The ``ENGINE`` of every package in ``cellbench.engines`` that has one."""
    found = []
    for info in pkgutil.iter_modules(engines.__path__):
        if info.ispkg:
            module = importlib.import_module(f"{engines.__name__}.{info.name}")
            found += [module.ENGINE] if hasattr(module, "ENGINE") else []
    rank = {name: i for i, name in enumerate(ORDER)}
    found.sort(key=lambda e: (rank.get(e.name, len(ORDER)), e.name))
    return {e.name: e for e in found}


#: Every engine by its ``--engine`` name, in ``cellbench run --help``'s order (the
#: simulator, the default, first).
ENGINES: dict[str, type[Engine]] = _discover()
#: ``--engine``'s choices, and the one a command runs without it (and a result that
#: names none was made by).
NAMES = tuple(ENGINES)
DEFAULT = NAMES[0]
#: The engines ``cellbench reproduce NAME --engine`` offers, and ``ttcp`` and ``netperf``.
STUDY_NAMES = tuple(n for n, e in ENGINES.items() if e.studies)
TOOL_NAMES = tuple(n for n, e in ENGINES.items() if e.tools)


def give_the_store_its_columns() -> None:
    """Every engine's column groups (``Engine.columns``) to the store, which is below
    the engines and imports none (``results.columns.use_engine_groups``)."""
    columns.use_engine_groups(g for e in ENGINES.values() for g in e.columns)


give_the_store_its_columns()


def get(name: str) -> type[Engine]:
    """The engine ``name`` (one of ``NAMES``)."""
    try:
        return ENGINES[name]
    except KeyError:
        raise ValueError(f"engine {name!r}: expected one of {', '.join(NAMES)}") from None


def help_text(names: tuple[str, ...] | None = None) -> str:
    """``--engine``'s help: each engine's ``about`` (of ``names``, every engine when
    None), the default said."""
    return "; ".join(
        f"{n}: {e.about}" + (" (default)" if n == DEFAULT else "")
        for n, e in ENGINES.items()
        if names is None or n in names
    )


def run_options() -> list[Option]:
    """The options the engines add to ``cellbench run`` (their own ``options``), engine
    by engine in the table's order."""
    out: dict[str, Option] = {}
    for e in ENGINES.values():
        for o in e.options:
            if o.own:
                if o.dest in out:
                    raise ValueError(f"--engine {e.name}: {o.flags[0]} is another engine's own")
                out[o.dest] = o
    return list(out.values())


def tool_options() -> list[Option]:
    """The options the engines that ``ttcp`` and ``netperf`` offer add to them
    (``Engine.tool_options``), in the table's order."""
    out: dict[str, Option] = {}
    for n in TOOL_NAMES:
        for o in get(n).tool_options:
            out.setdefault(o.dest, o)
    return list(out.values())


def refused(name: str, given) -> str | None:
    """What ``cellbench run --engine NAME`` says of an option that only other engines
    take (``Engine.options``), if one was given (``given(option)``, by its ``dest``);
    None if none was."""
    takes = {o.dest for o in get(name).options}
    for engine in ENGINES.values():
        for option in engine.options:
            if option.refusal is not None and option.dest not in takes and given(option.dest):
                return option.refusal.format(engine=name)
    return None


def simulated(name: str) -> bool:
    """Whether engine ``name`` runs in simulated time (the simulator), rather than in
    real time on kernels (the emulator, real hosts): what ``reproduce NAME --engine``
    asks to run a study itself or beside the simulator."""
    return get(name).simulated
