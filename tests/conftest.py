"""Which tests may run beside others under pytest-xdist (scripts/test.sh).

Every test runs in parallel (-n auto) except two kinds, which scripts/test.sh runs
afterwards in a second pytest, one at a time, as they ran before xdist:

- ``system``: tests that build a network of their own: network namespaces and TUN
  devices (the emulator, whose runs keep real time), daemons listening on fixed ports
  inside namespaces with fixed addresses (the real engine), and checks that count
  what is left behind system-wide (namespaces, processes). SYSTEM_MODULES' tests get
  the mark here; another test may carry ``@pytest.mark.system`` itself.
- ``alone``: tests that bound a wall-clock time (ALONE_TESTS).

Marks, not xdist's ``xdist_group`` with ``--dist loadgroup``: on pytest 9.2 loadgroup
silently stops grouping (its node-id suffix no longer takes effect; pytest-xdist
issue 1386), so two namespace tests could run at once. Without -n (a single file, a
developer's run) the marks change nothing.
"""

from __future__ import annotations

import signal

import pytest

# A test run started in the background of a non-interactive shell (`bash .ci/run &`)
# inherits SIGINT ignored (POSIX), and so does every child it starts: the tests that
# stop a sweep with Ctrl-C would then test nothing (the sweep leaves an ignored SIGINT
# alone, as under nohup) and time out. A handler here (this process and each xdist
# worker) lets a child start with SIGINT's default action again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: Test modules that make namespaces, daemons or emulated networks (see above).
SYSTEM_MODULES = frozenset(
    {
        "test_emu",
        "test_emu_observe",
        "test_reproduce_emu",
        "test_real_cli",
        "test_real_guard",
        "test_real_hostile",
        "test_real_max_rate",
        "test_real_measure",
        "test_real_netns",
    }
)

#: Tests that bound a wall-clock time (a signal to the process's exit within 2 s):
#: beside another worker on 2 loaded cores they overran on main as on this branch
#: (2.1-2.6 s measured), so they run after the parallel run, by themselves.
ALONE_TESTS = frozenset(
    {
        "test_bounds.py::test_ctrl_c_stops_a_running_simulation_and_keeps_finished_runs",
        "test_bounds.py::test_ctrl_c_at_random_moments_of_a_two_worker_sweep_always_exits",
        "test_bounds.py::test_sigterm_during_a_sweep_exits_143_saying_what_was_kept",
        "test_bounds.py::test_a_signal_while_a_long_run_is_submitted_stops_it",
        # Two threads started together within 50 ms.
        "test_engines.py::test_the_walker_keeps_serial_and_parallel_on_the_real_clock",
    }
)

#: What scripts/test.sh selects for its parallel run, and for the serial one after.
PARALLEL = "not system and not alone"
SERIAL = "system or alone"


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        module = item.module.__name__.rpartition(".")[2]
        if module in SYSTEM_MODULES:
            item.add_marker(pytest.mark.system)
        if f"{module}.py::{item.originalname}" in ALONE_TESTS:
            item.add_marker(pytest.mark.alone)
