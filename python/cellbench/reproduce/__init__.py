"""The classic testbeds, runnable as reproductions (``cellbench reproduce NAME``).

``REGISTRY`` holds every study (``reproduce.study.Study``: its parts, their experiment
files, rows, tables and JSON, the published results they compare, how it runs on the
emulator); the command line, ``cellbench fidelity``, ``--engine emu``, the row hashes
and the Python API are made from it. A study is a module here whose ``STUDY`` is a
``Study``, its experiment files beside it and its page docs/NAME.md: nothing else
registers it (docs/design.md, "Adding a study").

From Python, ``cellbench.reproduce(NAME, parts=..., **options)`` runs a study and
returns its rows as a pandas DataFrame (this package is callable for that).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cellbench.reproduce import study as _study
from cellbench.reproduce.study import Study

if TYPE_CHECKING:
    import pandas as pd

#: The studies in the order ``cellbench reproduce --help`` lists them; a study not
#: named here (a new one) follows them in module-name order.
ORDER = ("lan-buffers", "hetero-lan", "wan-window", "wan-mismatch", "europe-vp",
         "wan-contention", "ubr")  # fmt: skip


def _discover() -> dict[str, Study]:
    """The ``STUDY`` of every module and package in this package that has one."""
    found: list[Study] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found += [module.STUDY] if isinstance(getattr(module, "STUDY", None), Study) else []
    rank = {name: i for i, name in enumerate(ORDER)}
    found.sort(key=lambda s: (rank.get(s.name, len(ORDER)), s.name))
    return {s.name: s for s in found}


#: Every study, in the order ``cellbench reproduce --help`` lists them.
REGISTRY: dict[str, Study] = _discover()


def reproduce(name: str, parts: str | Sequence[str] | None = None, **options: Any) -> pd.DataFrame:
    """Run study ``name`` as ``cellbench reproduce NAME`` does; its rows as a DataFrame.

    ``cellbench.reproduce("lan-buffers", send_buffer=[16384], replications=5)``: one row
    per transfer; ``parts`` chooses parts (default the study's); ``options`` are the
    runner's (``seed``, ``workers``, ``out``, ``resume``, ``overwrite``, ``dask``,
    ``series``, ``replications``, ``sets``) and the study's own, named as its command
    line's (``reproduce.study.reproduce``)."""
    try:
        chosen = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown study {name!r}: expected one of {', '.join(REGISTRY)}") from None
    return _study.reproduce(chosen, parts, **options)


class _Callable(types.ModuleType):
    """This package, callable: ``cellbench.reproduce(NAME)`` is ``reproduce(NAME)``
    while ``cellbench.reproduce.REGISTRY`` and its modules stay reachable (a function
    of the same name would hide the package)."""

    def __call__(self, name: str, parts: str | Sequence[str] | None = None, **options: Any):
        return reproduce(name, parts, **options)


sys.modules[__name__].__class__ = _Callable

__all__ = ["REGISTRY", "Study", "reproduce"]
