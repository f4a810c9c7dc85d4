"""`cellbench report RESULT [RESULT...] -o FILE.html`: stored results as one page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cellbench.cli.common import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write stored results as one self-contained HTML page",
        description="Write one HTML file (no server, nothing fetched: it opens from disk) "
        "with each result's experiment file, its summary per sweep point (what bound it, "
        "the evidence, the published value where the repository has it) and its figures; "
        "results of one experiment from several engines (sim, emu, real) side by side.",
    )
    p.add_argument("results", type=Path, nargs="+", metavar="RESULT", help="result directories")
    p.add_argument("-o", "--output", type=Path, required=True, help="the page, FILE.html")
    p.add_argument("--title", help="the page's title (default: the experiments' names)")
    p.set_defaults(func=report_main)


def check_output(path: Path, flag: str = "-o") -> None:
    if path.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"{flag} {path}: expected an .html file name")


def write_report(results: list, output: Path, title: str | None = None) -> None:
    """Write the page and say what it holds, on stderr."""
    from cellbench.plots.report.page import write

    write(results, output, title)
    kb = output.stat().st_size / 1024
    print(f"cellbench: wrote {output} ({len(results)} result(s), {kb:.0f} KB)", file=sys.stderr)


def report_main(args: argparse.Namespace) -> int:
    from cellbench.experiment import results

    check_output(args.output)
    loaded = []
    for path in args.results:
        try:
            loaded.append(results.load(path))
        except results.ResultError as e:
            raise UsageError(str(e)) from None
    write_report(loaded, args.output, args.title)
    return 0
