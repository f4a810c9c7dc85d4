"""The results tables of the study pages in docs/, generated from the commands.

Each table stands in its page between two markers,

    <!-- generated: NAME (scripts/docs_tables.py; do not edit by hand) -->
    ...
    <!-- end generated: NAME -->

and is rendered from `cellbench reproduce STUDY ... --json` (seed 1), run once per
command, by its study (`Study.tables` in the registry, python/cellbench/reproduce/:
each study draws its own page's tables). `python3 scripts/docs_tables.py` rewrites
every block; `--check` rewrites nothing and exits 1 naming each block whose page and
command disagree (tests/test_docs_tables.py runs the check). docs/fidelity.md is
generated whole by `cellbench fidelity --markdown`.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "python"))


def _blocks() -> dict[str, tuple[str, Callable[[], str]]]:
    """Block name -> (its page, its renderer): every study's ``tables``, on its page
    docs/STUDY.md, drawn from ``cellbench reproduce STUDY ARGS``."""
    from cellbench.cli import main
    from cellbench.reproduce import REGISTRY
    from cellbench.reproduce.tables import Command

    out = {}
    for s in REGISTRY.values():
        for t in s.tables:
            command = Command(("reproduce", s.name, *t.args), main)
            out[t.name] = (f"{s.name}.md", functools.partial(t.render, command))
    return out


#: Block name -> (page, renderer).
BLOCKS = _blocks()

BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) \(scripts/docs_tables\.py; do not edit by hand\) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- end generated: (?P=name) -->)",
    re.S,
)


def blocks_in(text: str) -> list[str]:
    """The names of the generated blocks a page holds, in order."""
    return [m.group("name") for m in BLOCK.finditer(text)]


def rewrite(text: str, render: Callable[[str], str] | None = None) -> str:
    """The page with every generated block rendered afresh."""
    render = render or (lambda name: BLOCKS[name][1]())

    def sub(m: re.Match) -> str:
        return m.group(1) + render(m.group("name")).rstrip("\n") + "\n" + m.group(4)

    return BLOCK.sub(sub, text)


def pages() -> dict[str, str]:
    names = sorted({p for p, _ in BLOCKS.values()})
    return {p: (DOCS / p).read_text(encoding="utf-8") for p in names}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if stale")
    args = ap.parse_args(argv)
    stale = []
    for page, text in pages().items():
        new = rewrite(text)
        if new != text:
            stale.append(page)
            if not args.check:
                (DOCS / page).write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "rewritten"
    print(f"{len(stale)} page(s) {verb}" + (": " + ", ".join(stale) if stale else ""))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
