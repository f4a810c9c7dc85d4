"""The ``cellbench`` command.

Each area of the command line lives in its own module and adds its subcommands
through ``register(subparsers)``. Every user error ends the program with one
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from cellbench.cli import calc, daemon, reproduce, run, tools, wire
from cellbench.cli.common import UsageError, signal_status


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (exit 2), not a usage dump."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cellbench",
        description="A laboratory for TCP/IP performance over ATM networks.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for area in (calc, wire, reproduce, run, tools, daemon):
        area.register(sub)
    return parser


def _version() -> str:
    from cellbench import __version__

    return f"cellbench {__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # As typed: an interrupted command prints itself back with --resume.
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from cellbench.experiment import runner

    runner.EXIT_ON_SECOND_SIGNAL = True
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError) as e:
        print(f"cellbench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print("cellbench: interrupted", file=sys.stderr)
        return signal_status(e)
    except BrokenPipeError:
        return 0
    except OSError as e:
        # A path the user gave that cannot be written or read (--out, -o, a pcap).
        where = f"{e.filename}: " if e.filename else ""
        print(f"cellbench: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
