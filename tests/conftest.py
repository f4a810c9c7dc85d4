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


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if (
            item.module.__name__.rpartition(".")[2] in SYSTEM_MODULES
            or item.get_closest_marker("system") is not None
        ):
            item.add_marker(pytest.mark.xdist_group(SYSTEM_GROUP))
