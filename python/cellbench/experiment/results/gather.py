"""Finished runs gathered in run order and cut into parts: the runs done as ranges
(``RunSet``) and the gatherer that holds a run finished early until every run
before it is in, so the parts depend only on the results, not on the order runs
finished in."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from cellbench.experiment.results.tables import TABLES


class RunSet:
    """Run numbers as sorted, disjoint ranges ``[first, last]``: a sweep of a million
    runs costs a few ranges, not a million set entries."""

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()):
        self._firsts: list[int] = []
        self._lasts: list[int] = []
        for first, last in sorted(ranges):
            self.add(first, last)

    def add(self, first: int, last: int) -> None:
        i = bisect.bisect_left(self._firsts, first)
        self._firsts.insert(i, first)
        self._lasts.insert(i, last)
        # Merge with touching neighbours so the lists stay short.
        j = max(i - 1, 0)
        while j + 1 < len(self._firsts):
            if self._lasts[j] + 1 >= self._firsts[j + 1]:
                self._lasts[j] = max(self._lasts[j], self._lasts[j + 1])
                del self._firsts[j + 1], self._lasts[j + 1]
            elif j >= i:
                break
            else:
                j += 1

    def __contains__(self, run: int) -> bool:
        i = bisect.bisect_right(self._firsts, run) - 1
        return i >= 0 and run <= self._lasts[i]

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in zip(self._firsts, self._lasts))

    def __str__(self) -> str:
        """``0-9,17``, as ``--cells-runs`` takes it."""
        return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in zip(self._firsts, self._lasts))


class _Gatherer:
    """Puts finished runs in run order and cuts them into parts.

    A run finished early waits in ``ready`` until every run before it is in;
    the runner submits at most its look-ahead past the oldest unfinished run,
    so ``ready`` stays that small. ``seal(first, last, tables)`` stores a part.
    """

    def __init__(self, sealed: Iterable[tuple[int, int]], seal, part_runs: int, part_rows: int):
        self.sealed_at = dict(sealed)  # first run of a stored part -> its last
        self.seal = seal
        self.part_runs, self.part_rows = part_runs, part_rows
        self.ready: dict[int, tuple[dict, bytes | None]] = {}
        self.open: list[tuple[int, dict]] = []
        self.open_rows = 0
        self.next = self._skip(0)

    def _skip(self, run: int) -> int:
        while run in self.sealed_at:
            run = self.sealed_at[run] + 1
        return run

    def add(self, run: int, tables: dict, journal_line: bytes | None = None) -> None:
        self.ready[run] = (tables, journal_line)
        while self.next in self.ready:
            tables, _ = self.ready.pop(self.next)
            self.open.append((self.next, tables))
            self.open_rows += sum(len(t) for t in tables.values())
            after = self._skip(self.next + 1)
            # A part ends at the thresholds, or where a part stored earlier begins.
            if (
                after != self.next + 1
                or len(self.open) >= self.part_runs
                or self.open_rows >= self.part_rows
            ):
                self._seal_open()
            self.next = after

    def _seal_open(self) -> None:
        if not self.open:
            return
        first, last = self.open[0][0], self.open[-1][0]
        tables = {t: [run[t] for _, run in self.open if t in run] for t in TABLES}
        self.open, self.open_rows = [], 0
        self.seal(first, last, tables)
        self.sealed_at[first] = last

    def flush(self) -> None:
        """Put every finished run in a part: the open one, then each unbroken
        stretch of runs that finished ahead of a missing one."""
        self._seal_open()
        for run in sorted(self.ready):
            tables, _ = self.ready.pop(run)
            if self.open and self.open[-1][0] != run - 1:
                self._seal_open()
            self.open.append((run, tables))
            self.open_rows += sum(len(t) for t in tables.values())
            if len(self.open) >= self.part_runs or self.open_rows >= self.part_rows:
                self._seal_open()
        self._seal_open()

    def pending_lines(self) -> list[bytes]:
        """The journal lines of finished runs not yet in a part (a batch's once)."""
        return list(dict.fromkeys(line for _, line in self.ready.values() if line is not None))

    def done(self) -> RunSet:
        runs = RunSet(self.sealed_at.items())
        for run, _ in self.open:
            runs.add(run, run)
        for run in self.ready:
            runs.add(run, run)
        return runs
