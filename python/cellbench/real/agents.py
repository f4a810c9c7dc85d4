"""What runs on a daemon: the traffic agents (Rust, off the GIL) behind the
daemon's own limits, and the probes the controller asks before any traffic.

The controller sends plain specs (data); nothing from an experiment file is
executed here. A daemon refuses a spec beyond its limits (``--max-duration``),
so a controller cannot make it send for longer than its owner allowed.
"""

from __future__ import annotations

import time

#: Set by ``cellbench daemon`` in its own process; the defaults hold elsewhere.
LIMITS = {"max_duration_s": 300.0}


class RefusedError(RuntimeError):
    """The daemon will not run this spec."""


def _check(spec: dict, until_key: str | None) -> None:
    cap = LIMITS["max_duration_s"]
    if (spec.get("duration_s") or 0) > cap:
        raise RefusedError(
            f"duration {spec['duration_s']} s exceeds this daemon's --max-duration {cap:g} s"
        )
    if until_key and spec[until_key] - time.time() > cap + 60:
        raise RefusedError(f"a deadline beyond this daemon's --max-duration {cap:g} s")


def source(spec: dict) -> dict:
    from cellbench import _native

    _check(spec, None)
    return _native.real_source(spec)


def sink(spec: dict) -> dict:
    from cellbench import _native

    spec = dict(spec)
    # A sink waits at most the daemon's cap, whatever the controller asked.
    spec["deadline_at"] = min(spec["deadline_at"], time.time() + LIMITS["max_duration_s"] + 60)
    return _native.real_sink(spec)


def probe() -> dict:
    """This daemon's clock and version, for the controller's checks."""
    from cellbench import __version__

    return {"time": time.time(), "version": __version__}


def stop(group: str) -> None:
    """End every agent of the controller's run ``group`` on this daemon (Ctrl-C)."""
    from cellbench import _native

    _native.real_stop(group)
