"""One setting's value checked as a number or a flag, refused at its position.

Every reader of the experiment file (traffic, tests, the tester block, and the
testbed's keys for the type a run spec's key holds) takes its numbers through these,
so a bad value names its file, line and range alike. Below both ``model`` and
``testbed``: each reads its settings through this one module.
"""

from __future__ import annotations

import math
import sys

from cellbench import vocab
from cellbench.experiment.lang import Name, Number, Value, expected, render

#: The widths of the run spec's whole numbers (the core's u32 and u64 counts).
U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1


def _number(
    v: Value,
    what: str,
    *,
    lo: float,
    integer: bool,
    hi: float | None = None,
    above: bool = False,
) -> int | float:
    """A number lo..hi (above lo when ``above``; a whole one when ``integer``: ``1e6``
    counts as whole)."""
    x = v.value if isinstance(v, Number) else None
    if integer and isinstance(x, float) and x.is_integer():
        x = int(x)
    if x is not None and (isinstance(x, int) or not integer) and lo <= x < math.inf:
        if (hi is None or x <= hi) and not (above and x == lo):
            return x
    kind = "a whole number" if integer else "a number"
    bound = f" and <= {_shown(hi)}" if hi is not None else ""
    least = ">" if above else ">="
    raise expected(v.pos, render(v), f"{kind} {least} {_shown(lo)}{bound} for {what}")


def _spec_number(
    v: Value, what: str, record: str, key: str, *, integer: bool, hi: float | None = None
) -> int | float:
    """A number in the range the run spec's ``record.key`` takes (``vocab.SPEC_KEYS``):
    from its least (excluded where the core's range is above it) to its most, or to
    ``hi`` where the file's own bound is tighter (a duration within a run's time limit).
    An unbounded most (the largest float) is no bound."""
    entry = vocab.spec_key(record, key)
    lo, most = entry["range"]
    if hi is not None:
        most = min(most, hi)
    unbounded = most >= sys.float_info.max
    return _number(
        v, what, lo=lo, integer=integer, hi=None if unbounded else most, above=entry["above"]
    )


def _spec_value(v: Value, what: str, record: str, key: str) -> int | float:
    """A number of the type the run spec's ``record.key`` holds (its kind in
    ``vocab.SPEC_KEYS``): a whole one from 0 to the most its count holds (a u32; a
    u64 where the key's range reaches past one, or it has none), or any finite one (a
    float). The range the key takes is the core's check alone: its refusal names the
    key, and lands on this setting (``model.refusals``; the testbed's keys through
    ``Testbed.positions``)."""
    entry = vocab.spec_key(record, key)
    if entry["kind"] == "int":
        rng = entry["range"]
        most = U64_MAX if rng is None or rng[1] > U32_MAX else U32_MAX
        return _number(v, what, lo=0, integer=True, hi=most)
    x = v.value if isinstance(v, Number) else None
    if isinstance(x, (int, float)) and math.isfinite(x):
        return float(x)
    raise expected(v.pos, render(v), f"a finite number for {what}")


def _shown(x: float) -> str:
    """A limit as a message gives it: whole numbers in full (1048576), others as %g."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e20 else f"{x:g}"


def _flag(v: Value, what: str) -> bool:
    if isinstance(v, Number) and v.value in (0, 1):
        return bool(v.value)
    if isinstance(v, Name) and v.text.lower() in ("yes", "no", "true", "false", "on", "off"):
        return v.text.lower() in ("yes", "true", "on")
    raise expected(v.pos, render(v), f"0, 1, yes or no for {what}")
