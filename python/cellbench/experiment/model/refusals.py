"""The run spec through the simulator's own checks before anything runs, a refusal
mapped back onto the file: the core's ``SpecError`` names the record, which one and the
key (``ScenarioError``'s key path), and the testbed knows where each key is set
(``Testbed.positions``), each connection where its tests set its keys
(``Connection.positions``).
"""

from __future__ import annotations

from typing import Any

from cellbench import _native
from cellbench.experiment.lang import ExperimentError, Pos
from cellbench.experiment.model.records import Experiment
from cellbench.experiment.model.tester import check_tester

#: Keys a refusal of one names that another setting may be the one to move: an EPD
#: threshold against the buffer; credits without credit flow control; a UPC's contract.
_RELATED = {
    "buffer_cells": ("epd_threshold_cells",),
    "epd_threshold_cells": ("buffer_cells",),
    "flow_control": ("credits",),
    "upc": ("upc.t_us", "upc.tau_us"),
}


def check_with_engine(exp: Experiment, seed: int) -> None:
    """The run's spec through the simulator's own checks, without running it: a value
    the core refuses is refused before the first run, at the setting that gave it (the
    test of the connection it names, the host's, switch's or trunk's key)."""
    try:
        _native.check_spec(exp.spec(seed, 0))
        if exp.tester is not None:
            check_tester(exp, exp.tester, exp.tester_pos)
    except ExperimentError:
        raise
    except ValueError as e:
        path = getattr(e, "path", None)
        raise ExperimentError(
            refusal_pos(exp, path) or Pos(exp.file, 1, 1),
            f"the simulator refuses it: {e}",
        ) from None


def refusal_pos(exp: Experiment, path: dict[str, Any] | None) -> Pos | None:
    """Where the file sets what a refusal's key path names: the connection's test, or
    the host's (else the defaults'), the switch's (else the testbed-wide one's) or the
    trunk's setting of the key, else the testbed block; a connection's key at its test's
    setting (``Connection.positions``: a socket buffer, pacing, a traffic key) or the
    testbed's (its ``mtu``); None for no path."""
    if path is None:
        return None
    record, index, name, key = path["record"], path["index"], path["name"], path["key"]
    tb = exp.testbed
    if record == "connection":
        conns = exp.connections
        if index is None or index >= len(conns):
            return None
        # The test's setting of the key, else the testbed's (mtu, encap), else the test.
        c = conns[index]
        return c.positions.get(key) or tb.positions.get(("connection", None, key)) or c.pos
    keys = (key, *_RELATED.get(key, ()))
    if record == "host":
        places = [("host", name, k) for k in keys] + [("host", "*", k) for k in keys]
        fallback = tb.given.get(name)
    elif record == "switch":
        places = [("switch", name, k) for k in keys] + [("switch", None, k) for k in keys]
        fallback = None
    elif record == "trunk":
        places = [("trunk", index, k) for k in keys]
        fallback = None
    else:
        places, fallback = [], None
    for p in places:
        if p in tb.positions:
            return tb.positions[p]
    return fallback or tb.pos
