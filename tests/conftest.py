"""Which tests may run beside others under pytest-xdist (scripts/test.sh: -n auto
--dist loadgroup).

Every test runs in parallel except those that build a network of their own: network
namespaces and TUN devices (the emulator), daemons listening on fixed ports inside
namespaces with fixed addresses (the real engine), and checks that count what is left
behind system-wide (namespaces, processes): SYSTEM_MODULES' tests, and any other test
marked ``@pytest.mark.system``. Those share one xdist group, so one worker
runs them one after another, never two at once (as they ran before xdist); the
emulator's real-time runs also keep a core each way. Without -n (a single file, a
developer's run) the marks do nothing.
"""

from __future__ import annotations

import pytest

#: Test modules that make namespaces, daemons or emulated networks (see above).
SYSTEM_MODULES = frozenset(
    {
        "test_emu",
        "test_emu_observe",
        "test_reproduce_emu",
        "test_real_cli",
        "test_real_guard",
        "test_real_max_rate",
        "test_real_measure",
        "test_real_netns",
    }
)

#: The xdist group of SYSTEM_MODULES' tests.
SYSTEM_GROUP = "system"

#: Tests that bound a wall-clock time (a signal to the process's exit within 2 s):
#: beside another worker on 2 loaded cores they overrun on main as on this branch
#: (2.1-2.6 s measured), so they are marked ``alone`` and scripts/test.sh runs them
#: after the parallel run, by themselves.
ALONE_TESTS = frozenset(
    {
        "test_bounds.py::test_ctrl_c_stops_a_running_simulation_and_keeps_finished_runs",
        "test_bounds.py::test_ctrl_c_at_random_moments_of_a_two_worker_sweep_always_exits",
        "test_bounds.py::test_sigterm_during_a_sweep_exits_143_saying_what_was_kept",
        "test_bounds.py::test_a_signal_while_a_long_run_is_submitted_stops_it",
    }
)


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if f"{item.module.__name__.rpartition('.')[2]}.py::{item.originalname}" in ALONE_TESTS:
            item.add_marker(pytest.mark.alone)
        if (
            item.module.__name__.rpartition(".")[2] in SYSTEM_MODULES
            or item.get_closest_marker("system") is not None
        ):
            item.add_marker(pytest.mark.xdist_group(SYSTEM_GROUP))
