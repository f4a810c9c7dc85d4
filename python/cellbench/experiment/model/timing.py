"""When each test starts: the ``serial``/``parallel`` block tree turned into each
test's ``after`` (the connections it waits for), the earliest start that implies,
and the tree of connections the engines on the real clock walk.
"""

from __future__ import annotations

from cellbench.experiment.lang import Block
from cellbench.experiment.model.records import Endpoint, Group


def _schedule(
    b: Block, after: list[Endpoint], eps: dict[int, Endpoint], out: list[Endpoint]
) -> list[Endpoint]:
    """Give every test under ``b`` the transmitters whose connections it waits for
    (``after``: those that end the previous serial step); return the transmitters
    whose connections end ``b`` (none when ``b`` holds only sinks)."""
    if b.kind == "test":
        ep = eps[id(b)]
        ep.after = after
        out.append(ep)
        return [] if ep.is_sink else [ep]
    if b.kind in ("cluster", "parallel"):
        return [e for c in b.blocks() for e in _schedule(c, after, eps, out)]
    # serial: each step waits for the last one that has connections of its own.
    ends: list[Endpoint] = []
    for c in b.blocks():
        step_ends = _schedule(c, after, eps, out)
        if step_ends:
            after = ends = step_ends
    return ends


def _starts_no_later(sink: Endpoint, tx: Endpoint) -> bool:
    """Whether every connection ``sink`` waits for has surely ended when ``tx``
    starts: one ``tx`` waits for, or one those waited for (and so on)."""
    wanted = {id(e) for e in sink.after} - {id(e) for e in tx.after}
    seen: set[int] = set()
    todo = list(tx.after)
    while wanted and todo:
        e = todo.pop()
        if id(e) not in seen:
            seen.add(id(e))
            wanted.discard(id(e))
            todo.extend(e.after)
    return not wanted


def _tree(b: Block, eps: dict[int, Endpoint], index: dict[str, int]) -> Group | int | None:
    """The block tree under ``b`` with each transmitter test as its connection's index;
    a block holding only sinks is left out."""
    if b.kind == "test":
        ep = eps[id(b)]
        return None if ep.is_sink else index[ep.name]
    g = Group("serial" if b.kind == "serial" else "parallel")
    for child in b.blocks():
        t = _tree(child, eps, index)
        if t is not None:
            g.children.append(t)
    return g if g.children else None


def _earliest_starts(eps: list[Endpoint]) -> dict[int, float]:
    """For each test, the earliest simulated time it can start: a serial step starts
    when its predecessors end, which is no earlier than their durations say (a byte
    count's end is known only once it runs, so it counts as instant here)."""
    earliest: dict[int, float] = {}
    for ep in eps:  # predecessors come earlier in the file
        earliest[id(ep)] = max(
            (earliest.get(id(p), 0.0) + (p.traffic.duration_s or 0.0) for p in ep.after),
            default=0.0,
        )
    return earliest
