"""One walk of an experiment's block tree on the real clock, for every engine that
runs kernels (the emulator, real hosts).

The simulator cuts the tree into each connection's ``after`` and times everything
from the run's events; on kernels NetSpec's meaning holds as written: ``serial { }``
starts each child when the previous one has ended, on the real clock, whatever its
length, and ``parallel { }`` (and the cluster) starts its children together. The tree
is the model's (``model.Experiment.tree``: connections by index, sinks left out).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Protocol

from cellbench.experiment.model import Group


class Starts(Protocol):
    """How an engine starts connections (``launch``) and waits for them (``finish``)."""

    def launch(self, conns: list[int], start_at: float) -> Any:
        """Start connections ``conns`` together at ``start_at`` (time.time()); a job."""
        ...

    def finish(self, job: Any) -> None:
        """Wait for a started job's connections to end and keep their reports."""
        ...

    def margin(self, n: int) -> float:
        """Seconds from handing ``n`` connections over to their agreed start."""
        ...

    def stop(self) -> None:
        """End every connection of the run now (a signal, or a sibling failed)."""
        ...


def walk(node: Group | int, start_at: float, starts: Starts) -> None:
    """Run ``node`` from ``start_at``: a connection, or a group of them. A parallel
    group's own connections start as one job; its nested groups run beside them,
    each on a thread; the first failure is raised once all have ended."""
    if isinstance(node, int):
        starts.finish(starts.launch([node], start_at))
    elif node.kind == "serial":
        for i, child in enumerate(node.children):
            if i:
                n = len(child.connections()) if isinstance(child, Group) else 1
                start_at = time.time() + starts.margin(n)
            walk(child, start_at, starts)
    elif len(node.children) == 1:
        walk(node.children[0], start_at, starts)
    else:
        conns = [c for c in node.children if isinstance(c, int)]
        groups = [c for c in node.children if isinstance(c, Group)]
        job = starts.launch(conns, start_at) if conns else None
        pool = ThreadPoolExecutor(max_workers=len(groups) + 1)
        futures = [pool.submit(walk, g, start_at, starts) for g in groups]
        if job is not None:
            futures.append(pool.submit(starts.finish, job))
        wait_all(pool, futures, starts.stop)


def wait_all(pool: ThreadPoolExecutor, futures: list, stop: Callable[[], None]) -> None:
    """Wait for every one of ``futures`` (on ``pool``), then raise the first failure.
    Interrupted (Ctrl-C), ``stop`` first: the pool would wait for the agents. (Waiting
    on futures, not on Thread.join: a join that a signal interrupts can leave a running
    thread marked as ended, CPython 3.11, and the interpreter's exit then does not wait
    for it.)"""
    try:
        errors = [f.exception() for f in futures]
    except BaseException:
        stop()
        raise
    finally:
        pool.shutdown(wait=True)
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
