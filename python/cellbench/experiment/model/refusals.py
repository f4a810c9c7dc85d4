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
from cellbench.experiment.model.checks import check_event_budget
from cellbench.experiment.model.records import TRAFFIC_SETTINGS, Experiment
from cellbench.experiment.model.tester import check_tester


def check_with_engine(exp: Experiment, seed: int) -> None:
    """The run's spec through the simulator's own checks, without running it: a value
    the core refuses is refused before the first run, at the setting that gave it (the
    test of the connection it names, the host's, switch's or trunk's key)."""
    try:
        _native.check_spec(exp.spec(seed, 0))
        check_event_budget(exp.connections)
        if exp.tester is not None:
            check_tester(exp, exp.tester, exp.tester_pos)
    except ExperimentError:
        raise
    except ValueError as e:
        pos, also = _conflict_pos(exp, getattr(e, "path", None), getattr(e, "other", None))
        raise ExperimentError(
            pos or Pos(exp.file, 1, 1), f"the simulator refuses it: {e}{also}"
        ) from None


def _conflict_pos(
    exp: Experiment, path: dict[str, Any] | None, other: dict[str, Any] | None
) -> tuple[Pos | None, str]:
    """Where a refusal points, and what it adds. One setting: its position. Two that
    conflict (``SpecError.other``): of the ones the file writes, the one written later
    (the one more likely just added; in the experiment's own file before a --testbed
    file), the message naming the other's value and position; neither written: the
    first's place (its record's block or test)."""
    if other is None:
        return refusal_pos(exp, path), ""
    written = [(p, q) for p, q in ((path, other), (other, path)) if setting_pos(exp, p)]
    if not written:
        return refusal_pos(exp, path), ""
    (p, q), *_ = sorted(written, key=lambda w: _order(exp, setting_pos(exp, w[0])), reverse=True)
    at, there = setting_pos(exp, p), setting_pos(exp, q)
    if there is None or there == at:
        return at, ""
    return at, f" (against {q['key']}={q['value']} at {there})"


def _order(exp: Experiment, pos: Pos | None) -> tuple[bool, int, int]:
    assert pos is not None
    return pos.file == exp.file, pos.line, pos.col


def _connection(exp: Experiment, index: int | None):
    """The experiment's connection a key path's index names (None: none)."""
    conns = exp.connections
    return conns[index] if index is not None and 0 <= index < len(conns) else None


def setting_pos(exp: Experiment, path: dict[str, Any] | None) -> Pos | None:
    """Where the file writes the setting a key path names (None: it writes none, the
    core's default or the testbed's stands): a connection's key at its test's setting
    or the testbed's; a host's (else the defaults'), a switch's (else the testbed-wide
    one's) or a trunk's setting of the key."""
    if path is None:
        return None
    record, index, name, key = path["record"], path["index"], path["name"], path["key"]
    tb = exp.testbed
    if record == "connection":
        c = _connection(exp, index)
        if c is None:
            return None
        t = key.removeprefix("traffic.")
        written = (
            key in c.given
            or (t != key and t in TRAFFIC_SETTINGS and c.traffic.sets(t))
            or (key == "pacing_mbps" and c.pacing_mbps is not None)
            or (key == "abr" and c.abr is not None)
        )
        return (c.positions.get(key) if written else None) or tb.positions.get(
            ("connection", None, key)
        )
    if record == "host":
        places = [("host", name, key), ("host", "*", key)]
    elif record == "switch":
        places = [("switch", name, key), ("switch", None, key)]
    elif record == "trunk":
        places = [("trunk", index, key)]
    else:
        places = []
    return next((tb.positions[p] for p in places if p in tb.positions), None)


def refusal_pos(exp: Experiment, path: dict[str, Any] | None) -> Pos | None:
    """Where the file sets what a refusal's key path names (``setting_pos``), else
    where it would: a connection's key at its test's setting of its kind
    (``Connection.positions``: the protocol, the type) else the test; a host's key at
    its block, any other at the testbed block; None for no path."""
    if path is None:
        return None
    at = setting_pos(exp, path)
    if at is not None:
        return at
    record, index, name, key = path["record"], path["index"], path["name"], path["key"]
    tb = exp.testbed
    if record == "connection":
        c = _connection(exp, index)
        return None if c is None else c.positions.get(key) or c.pos
    if record == "host":
        return tb.given.get(name) or tb.pos
    return tb.pos
