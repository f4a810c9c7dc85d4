"""Helpers shared by the subcommands: errors, argument types, output."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

# The commands take it from here; the engines from cellbench.errors.
from cellbench.errors import UsageError
from cellbench.experiment.values import U32_MAX


def positive_float(what: str, least: float | None = None, most: float | None = None):
    """An argparse type: a finite number > 0 (and in least..=most where given), with an
    error naming `what`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{what} must be a finite number > 0, got {text!r}")
        if least is not None and value < least:
            raise argparse.ArgumentTypeError(f"{what} must be at least {least:g}, got {text!r}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{what} must be at most {most:g}, got {text!r}")
        return value

    return parse


def _whole_number(what: str, lo: int, hi: int, hi_text: str):
    """An argparse type: a whole number lo..hi, with an error naming `what`."""

    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number, got {text!r}"
            ) from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"{what} must be >= {lo} and at most {hi_text}, got {text!r}"
            )
        return value

    return parse


def positive_int(what: str, hi: int = U32_MAX):
    """An argparse type: a whole number 1..hi, with an error naming `what` (by default the
    simulator's u32 of counts and sizes: a value beyond it is a usage error, not an
    OverflowError)."""
    return _whole_number(what, 1, hi, str(hi))


def count(what: str, hi: int = U32_MAX):
    """An argparse type: a whole number 0..hi (0 turning something off), naming `what`."""
    return _whole_number(what, 0, hi, str(hi))


def seed(what: str = "--seed"):
    """An argparse type: a master seed, a whole number 0..2^63-1 (what a result stores,
    ``model.SEED_MAX``)."""
    from cellbench.experiment.model import SEED_MAX

    return _whole_number(what, 0, SEED_MAX, f"{SEED_MAX} (2^63-1)")


def check_workers(workers: int) -> None:
    """--workers: 0 means all cores; fewer, or more than ``engines.loop.MAX_WORKERS``, is a
    usage error."""
    from cellbench.engines.loop import MAX_WORKERS

    if not 0 <= workers <= MAX_WORKERS:
        raise UsageError(
            f"--workers {workers}: must be 0 (all cores) to {MAX_WORKERS} (threads beyond "
            "the cores add only memory)"
        )


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


def resume_command(args: argparse.Namespace) -> str:
    """The command as it was typed (``args.argv``), to finish what it started:
    with --resume, without --overwrite."""
    words = ["cellbench", *args.argv]
    if getattr(args, "overwrite", False):
        # argparse takes any unambiguous prefix of --overwrite.
        words = [w for w in words if not (w.startswith("--ov") and "--overwrite".startswith(w))]
    if not getattr(args, "resume", False):
        words.append("--resume")
    return shlex.join(words)


def signal_status(e: BaseException | None) -> int:
    """The exit status of a command a signal stopped: 128 + its number, as a shell
    reports it (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + getattr(e, "signum", 2)


def interrupted(args: argparse.Namespace, out: Path, e: BaseException | None = None) -> int:
    """Ctrl-C or SIGTERM (``e``) with a result directory: what was kept, and the
    command that finishes it; the exit status, ``signal_status``."""
    from cellbench.experiment import results

    if getattr(args, "out_for_report_only", False):
        print("cellbench: interrupted; no page written (--out DIR keeps a result to "
              "finish with --resume)", file=sys.stderr)  # fmt: skip
        return 130

    try:
        total = results.read_meta(out).get("runs_total", "?")
    except results.ResultError:
        total = "?"
    print(
        f"cellbench: interrupted: {results.stored_runs(out)}/{total} runs kept in {out}; "
        f"finish with: {resume_command(args)}",
        file=sys.stderr,
    )
    return signal_status(e)
