"""The suite runs under pytest-xdist (scripts/test.sh) and keeps its system tests apart:
every module that makes namespaces, daemons or an emulated network, and every test
that bounds a wall-clock time, is marked (tests/conftest.py) and run after the
parallel run, one at a time."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import conftest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

#: What a module that builds a network of its own uses: the real engine's namespaces
#: and daemons, the emulator's namespaces, or another such module's helpers.
SYSTEM_USE = re.compile(r"real_fixtures|cellbench\.engines\.emu import netns|from test_emu import")


def test_every_module_that_builds_a_network_is_marked_system():
    uses = {
        f.stem
        for f in TESTS.glob("test_*.py")
        if f.name != Path(__file__).name and SYSTEM_USE.search(f.read_text(encoding="utf-8"))
    }
    assert uses == set(conftest.SYSTEM_MODULES)


def test_other_root_tests_that_build_a_network_are_marked_system():
    """A module outside SYSTEM_MODULES that needs root or TUN for some tests (an
    emulated run beside simulated ones) marks those tests system."""
    for f in TESTS.glob("test_*.py"):
        text = f.read_text(encoding="utf-8")
        if f.stem in conftest.SYSTEM_MODULES or "/dev/net/tun" not in text:
            continue
        assert "@pytest.mark.system" in text, f.name


def test_every_test_to_run_alone_exists():
    """A renamed test would silently run in parallel again."""
    for name in conftest.ALONE_TESTS:
        module, _, test = name.partition("::")
        assert f"def {test}(" in (TESTS / module).read_text(encoding="utf-8"), name


def test_the_marks_are_given_to_those_tests_only():
    class Item:
        def __init__(self, module, name="test_x"):
            self.module = SimpleNamespace(__name__=module)
            self.originalname = name
            self.marks = []

        def add_marker(self, mark):
            self.marks.append(mark.mark.name)

    alone = next(iter(conftest.ALONE_TESTS))
    items = [
        Item("test_real_netns"),
        Item("test_calc"),
        Item("tests.test_emu"),
        Item(alone.partition(".py")[0], alone.partition("::")[2]),
    ]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.marks for i in items] == [["system"], [], ["system"], ["alone"]]


def test_the_test_script_runs_the_rest_in_parallel_then_the_marked_one_at_a_time():
    script = (ROOT / "scripts" / "test.sh").read_text()
    pytest_lines = [line for line in script.splitlines() if "-m pytest" in line]
    assert len(pytest_lines) == 2
    parallel, serial = pytest_lines
    assert " -n " in parallel and f'-m "{conftest.PARALLEL}"' in parallel
    assert " -n " not in serial and serial.endswith(f'-m "{conftest.SERIAL}"')
    pyproject = (ROOT / "pyproject.toml").read_text()
    test_extra = re.search(r"^test = \[(.*?)^\]", pyproject, re.S | re.M)
    assert test_extra and '"pytest-xdist' in test_extra.group(1)
