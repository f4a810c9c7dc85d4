"""What the daemons answer, checked as data before the controller uses it.

A daemon's task answers in JSON bytes (``agents.answers_in_json``), and the
controller's process unpickles nothing but the type ``bytes`` (guard's
``CONTROLLER_PICKLE_GLOBALS``), so whoever holds a daemon's certificate can send
back only data. This module checks that data's shape: what each answer must be,
field by field, with one line naming the host when it is not (``BadAnswer``).
"""

from __future__ import annotations

import json
import math


class BadAnswer(ValueError):
    """A daemon's answer that is not what a cellbench daemon sends."""


def _number(v) -> bool:
    # NaN and infinities included: a rate over no time is one (JSON as Python writes it).
    return isinstance(v, int | float) and not isinstance(v, bool)


def _text(v) -> bool:
    return isinstance(v, str) and len(v) <= 4096


#: Each kind of field: its test and what the refusal says it should be.
_KINDS = {
    "number": (_number, "a number"),
    "finite": (lambda v: _number(v) and math.isfinite(v), "a finite number"),
    "count": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a count"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "text": (_text, "a string"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
    "list": (lambda v: isinstance(v, list), "a list"),
}

#: The probe's answer (agents.probe).
PROBE = {"time": ("finite", False), "version": ("text", False)}
#: A source's report (real/agent.rs): the fields the controller's rows and
#: measure.py read, each with its kind; True marks one that may be absent or null.
SOURCE_REPORT = {
    "seconds": ("number", False),
    "throughput_bps": ("number", False),
    "started_at": ("number", False),
    "ended_at": ("number", False),
    "bytes": ("count", False),
    "blocks": ("count", False),
    "send_errors": ("count", False),
    "tcp_info": ("dict", True),
    "timing": ("dict", True),
    "host": ("dict", True),
    "series": ("list", True),
    "notes": ("list", True),
    "cap_bps": ("number", True),
    "cap_wait_s": ("number", True),
    "cap_waits": ("count", True),
    "congestion": ("text", True),
    "sndbuf_granted": ("count", True),
}
#: A sink's report.
SINK_REPORT = {
    "seconds": ("number", False),
    "throughput_bps": ("number", False),
    "bytes": ("count", False),
    "reads": ("count", False),
    "datagrams": ("count", True),
    "rcvbuf_granted": ("count", True),
    "timed_out": ("bool", False),
    "last_at": ("number", True),
    "accepted_at": ("number", True),
    "first_at": ("number", True),
    "read_seconds": ("number", True),
    "host": ("dict", True),
}


def _check(obj, fields: dict, what: str) -> dict:
    if not isinstance(obj, dict):
        raise BadAnswer(f"{what} is {_kind_of(obj)}, not an object")
    for key, (kind, optional) in fields.items():
        value = obj.get(key)
        if value is None and optional:
            continue
        if key not in obj:
            raise BadAnswer(f"{what} has no {key}")
        test, expected = _KINDS[kind]
        if not test(value):
            raise BadAnswer(f"{what}'s {key} = {_show(value)}: expected {expected}")
    return obj


def _kind_of(v) -> str:
    return "null" if v is None else f"a {type(v).__name__}"


def _show(v) -> str:
    return repr(v)[:60]


def load(raw) -> object:
    """The JSON a daemon's task answered; a refusal the daemon made in its place
    (guard's refused task) raises with its words."""
    if not isinstance(raw, bytes):
        raise BadAnswer(f"sent {_kind_of(raw)} where a cellbench daemon sends JSON bytes")
    try:
        got = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadAnswer(f"sent bytes that are not JSON ({e})") from None
    if isinstance(got, dict) and set(got) == {"refused"} and _text(got["refused"]):
        raise BadAnswer(got["refused"])
    return got


def probe(raw) -> dict:
    return _check(load(raw), PROBE, "its probe's answer")


def admissions(raw, n: int) -> list[str | None]:
    """``admit``'s answer for ``n`` sources: a refusal (text) or null each."""
    got = load(raw)
    if not isinstance(got, list) or len(got) != n:
        raise BadAnswer(f"answered {n} admission question(s) with {_show(got)}")
    for why in got:
        if why is not None and not _text(why):
            raise BadAnswer(f"answered an admission question with {_show(why)}")
    return got


def reports(raw, n: int, role: str) -> list[dict]:
    """A batch's answer for ``n`` agents of ``role`` (source, sink): for each,
    ``{"report": {...}}`` checked field by field, or ``{"error": text}``."""
    got = load(raw)
    if not isinstance(got, list) or len(got) != n:
        raise BadAnswer(f"answered a batch of {n} {role}(s) with {_show(got)}")
    fields = SOURCE_REPORT if role == "source" else SINK_REPORT
    for out in got:
        if isinstance(out, dict) and set(out) == {"error"} and _text(out["error"]):
            continue
        if not isinstance(out, dict) or set(out) != {"report"}:
            raise BadAnswer(f"answered for a {role} with {_show(out)}")
        _check(out["report"], fields, f"a {role}'s report")
    return got
