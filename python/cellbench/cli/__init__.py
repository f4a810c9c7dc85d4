"""The ``cellbench`` command.

Each area of the command line lives in its own module and adds its subcommands
through ``register(subparsers)``. Every user error ends the program with one
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from cellbench.cli import calc, cells, daemon, fidelity, reproduce, run, tools, wire
from cellbench.cli.common import UsageError, signal_status
from cellbench.engines import table as engine_table

#: The optional dependencies (pyproject's extras), by the module a command imports:
#: Dask is the real engine's control plane (and --dask's), cryptography makes its TLS
#: certificates. `real` holds both.
OPTIONAL = {"dask": "real", "distributed": "real", "cryptography": "real"}


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (exit 2), not a usage dump."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cellbench",
        description="A laboratory for TCP/IP performance over ATM networks.",
    )
    parser.add_argument("-V", "--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for area in (calc, wire, reproduce, fidelity, run, tools, daemon, cells):
        area.register(sub)
    return parser


def _version() -> str:
    from cellbench import __version__

    return f"cellbench {__version__}"


def _name_the_command(args: argparse.Namespace) -> None:
    """The progress bar names the command: `cellbench reproduce lan-buffers`."""
    from cellbench import progress

    study = [args.name] if args.command == "reproduce" else []
    progress.COMMAND = " ".join(["cellbench", args.command, *study])


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _name_the_command(args)
    # As typed: an interrupted command prints itself back with --resume.
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from cellbench.engines import loop

    loop.EXIT_ON_SECOND_SIGNAL = True
    previous = _sigterm_interrupts()
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
    except ModuleNotFoundError as e:
        extra = OPTIONAL.get((e.name or "").partition(".")[0])
        if extra is None:
            raise
        if getattr(args, "dask", None) and engine_table.simulated(
            getattr(args, "engine", engine_table.DEFAULT)
        ):
            extra = "dask"  # --dask ADDRESS on the simulator needs Dask alone
        print(
            f"cellbench: error: {args.command} needs {e.name}, an optional dependency: "
            f"pip install 'cellbench[{extra}]'",
            file=sys.stderr,
        )
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _sigterm_interrupts():
    """SIGTERM stops the command as Ctrl-C does (``Interrupted``: one line, exit status
    143) wherever it comes: outside a sweep (storing a part, between a study's parts)
    its default action ended the process with no word (status -15). The previous
    handler, to put back; None where SIGTERM is ignored (nohup) or not the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return None

    def interrupt(signum, frame):
        from cellbench.errors import Interrupted

        raise Interrupted(signum)

    signal.signal(signal.SIGTERM, interrupt)
    return previous if previous is not None else signal.SIG_DFL


if __name__ == "__main__":
    sys.exit(main())
