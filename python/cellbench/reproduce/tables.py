"""The results tables of a study's page (docs/NAME.md), generated from its command.

A study lists its page's tables (``Study.tables``): each a block of the page between
two markers,

    <!-- generated: NAME (scripts/docs_tables.py; do not edit by hand) -->
    ...
    <!-- end generated: NAME -->

and a function from the command's output (``Command``: ``cellbench reproduce STUDY
ARGS``, seed 1, run once per process) to the block's Markdown. Whoever builds a
``Command`` hands it the command line's entry (``cellbench.cli.main``), so the studies
import no command line: the command line imports them.
``scripts/docs_tables.py`` rewrites or checks every block (tests/test_docs_tables.py).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """``cellbench reproduce STUDY ARGS`` as the page's tables read it, run by ``main``
    (``cellbench.cli.main``)."""

    argv: tuple[str, ...]
    main: Callable[[list[str]], int]

    @property
    def source(self) -> str:
        """The command as a table's caption names it."""
        return f"`cellbench {' '.join(self.argv)}` (seed 1)"

    def json(self) -> dict:
        return json.loads(output(self.main, self.argv, True))

    def text(self) -> str:
        return output(self.main, self.argv, False)


@dataclass(frozen=True)
class DocsTable:
    """A generated block of the study's page: its name, the arguments after
    ``cellbench reproduce STUDY``, and how the block is drawn from that command."""

    name: str
    render: Callable[[Command], str]
    args: tuple[str, ...] = ()


@functools.cache
def output(main: Callable[[list[str]], int], argv: tuple[str, ...], as_json: bool = True) -> str:
    """The command's output, --json or its report (run once per process)."""
    full = [*argv, *(["--json"] if as_json else [])]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(full)
    if code != 0:
        raise SystemExit(f"cellbench {' '.join(full)} exited {code}")
    return out.getvalue()


def table(head: list[str], rows: list[list], right: set[int] | None = None) -> str:
    """A Markdown table (columns in ``right`` aligned right)."""
    right = right or set()
    align = ["---:" if i in right else "---" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def mbps(bps: float | None, digits: int = 3) -> str:
    return "-" if bps is None else f"{bps / 1e6:.{digits}f}"
