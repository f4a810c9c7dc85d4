"""The suite runs under pytest-xdist (scripts/test.sh) and keeps its system tests apart:
every module that makes namespaces, daemons or an emulated network is in conftest's
one group, which a single worker runs one test at a time."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import conftest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

#: What a module that builds a network of its own uses: the real engine's namespaces
#: and daemons, the emulator's namespaces, or another such module's helpers.
SYSTEM_USE = re.compile(r"real_fixtures|cellbench\.emu import netns|from test_emu import")


def test_every_module_that_builds_a_network_is_in_the_serial_group():
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


def test_the_group_is_given_to_those_modules_tests_only():
    class Item:
        def __init__(self, module):
            self.module = SimpleNamespace(__name__=module)
            self.originalname = "test_x"
            self.marks = []

        def get_closest_marker(self, name):
            return None

        def add_marker(self, mark):
            self.marks.append(mark.mark)

    items = [Item("test_real_netns"), Item("test_calc"), Item("tests.test_emu")]
    conftest.pytest_collection_modifyitems(None, items)
    grouped = [[(m.name, m.args) for m in i.marks] for i in items]
    assert grouped == [[("xdist_group", ("system",))], [], [("xdist_group", ("system",))]]


def test_every_test_to_run_alone_exists():
    """A renamed test would silently run in parallel again."""
    for name in conftest.ALONE_TESTS:
        module, _, test = name.partition("::")
        assert f"def {test}(" in (TESTS / module).read_text(encoding="utf-8"), name


def test_the_test_script_runs_pytest_on_every_core_by_group_then_the_alone_tests():
    script = (ROOT / "scripts" / "test.sh").read_text()
    pytest_lines = [line for line in script.splitlines() if "-m pytest" in line]
    assert len(pytest_lines) == 2
    parallel, alone = pytest_lines
    assert "--dist loadgroup" in parallel and " -n " in parallel and '-m "not alone"' in parallel
    assert alone.endswith("-m alone") and " -n " not in alone
    pyproject = (ROOT / "pyproject.toml").read_text()
    test_extra = re.search(r"^test = \[(.*?)^\]", pyproject, re.S | re.M)
    assert test_extra and '"pytest-xdist' in test_extra.group(1)
