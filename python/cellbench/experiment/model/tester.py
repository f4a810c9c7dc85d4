"""The cell tester: the ``tester { }`` block read, and its place checked against the
experiment's network.
"""

from __future__ import annotations

from cellbench import _native
from cellbench.experiment.lang import (
    Document,
    ExperimentError,
    Name,
    Number,
    Pos,
    String,
    expected,
    render,
)
from cellbench.experiment.model.limits import MAX_TIME_US
from cellbench.experiment.model.records import Experiment
from cellbench.experiment.values import _number


def check_tester(exp: Experiment, place: str, pos: Pos | None) -> None:
    """A tester's place is a switch output port or an adapter of the experiment's
    network (``_native.tester_places``); else an error listing every one."""
    try:
        _native.tester_places(exp.spec(0, 0), place)
    except ValueError as e:
        raise ExperimentError(pos, str(e)) from None


def _tester(doc: Document) -> tuple[str | None, Pos | None, float | None]:
    """The ``tester { port = PLACE; slot_us = US; }`` block, if any: PLACE as a name or
    a string (``"adapter:HOST"``, ``"trunk a->b"``) or a port's number; ``slot_us``
    (optional) the slot the tester counts inter-arrival times in."""
    blocks = [b for b in doc.blocks if b.kind == "tester"]
    if not blocks:
        return None, None, None
    if len(blocks) > 1:
        raise expected(blocks[1].pos, "a second 'tester' block", "one tester per experiment")
    port: tuple[str, Pos] | None = None
    slot_us: float | None = None
    for st in blocks[0].settings():
        if st.key == "slot_us":
            slot_us = float(
                _number(
                    st.value,
                    "the tester's cell slot in µs",
                    lo=0,
                    integer=False,
                    hi=MAX_TIME_US,
                    above=True,
                )
            )
            continue
        if st.key != "port":
            raise expected(
                st.pos, f"setting '{st.key}'", "'port' (the tester's place) or 'slot_us'"
            )
        v = st.value
        if isinstance(v, (Name, String)):
            port = (v.text, v.pos)
        elif isinstance(v, Number) and isinstance(v.value, int) and v.value >= 0:
            port = (str(v.value), v.pos)
        else:
            raise expected(
                st.pos,
                render(v),
                'a switch output port or adapter: a host\'s name, "trunk A->B", '
                '"adapter:HOST" or a port\'s number',
            )
    if port is None:
        raise expected(blocks[0].pos, "a tester block without 'port'", "port = PLACE;")
    return port[0], port[1], slot_us
