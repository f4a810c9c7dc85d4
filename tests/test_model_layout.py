"""experiment/model/ is split by idea with no import circle: each module imports only
the modules before it in the package's order (docs/design.md §7), never the package."""

from __future__ import annotations

import ast
from pathlib import Path

import cellbench.experiment.model as model

#: The package's modules, lowest first (as its docstring and docs/design.md list them).
ORDER = (
    "limits",
    "records",
    "traffic",
    "endpoints",
    "timing",
    "checks",
    "hosts",
    "tester",
    "refusals",
    "builder",
)
PACKAGE = "cellbench.experiment.model"


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_every_module_is_in_the_order():
    here = Path(model.__file__).parent
    assert {p.stem for p in here.glob("*.py")} - {"__init__"} == set(ORDER)


def test_modules_import_only_earlier_ones():
    here = Path(model.__file__).parent
    for i, name in enumerate(ORDER):
        inside = {m for m in _imports(here / f"{name}.py") if m.startswith(PACKAGE)}
        assert PACKAGE not in inside, f"{name} imports the package itself"
        later = {m.rsplit(".", 1)[1] for m in inside} - set(ORDER[:i])
        assert not later, f"{name} imports {sorted(later)}, not listed before it"


def test_reexports_resolve():
    for name in model.__all__:
        assert getattr(model, name) is not None, name
    # `build` is the function, not a submodule of that name.
    assert callable(model.build) and model.build.__module__ == f"{PACKAGE}.builder"
