"""``cellbench ttcp`` and ``cellbench netperf`` with ``--engine real``: the options
and the two hosts of one connection between two daemons.

The transfer is an experiment like any other (a two-host testbed, a source and its
sink) run through the loop (``cli.tools``), so the daemons' checks and limits hold;
the engine reports it in the simulated connection's keys
(``RealEngine.connection_report``), so the tools print it as they print a simulated
one; the result is not stored.
"""

from __future__ import annotations

import argparse

from cellbench.engines.base import Option
from cellbench.errors import UsageError

#: --scheduler's help, the same for `run` and the tools.
SCHEDULER_HELP = (
    "--engine real: the address of the daemons' scheduler (the daemon started "
    "without --scheduler hosts it; cellbench daemon --help)"
)
#: --scheduler and --credentials, the same for `run` and the tools.
SCHEDULER = Option("--scheduler", metavar="tls://HOST:PORT", help=SCHEDULER_HELP)
CREDENTIALS = Option("--credentials", metavar="DIR", help="--engine real: the TLS credentials")

#: The options ``--engine real`` adds to ttcp and netperf (``RealEngine.tool_options``).
TOOL_OPTIONS = (
    Option(
        "--host",
        dest="hosts",
        action="append",
        default=[],
        metavar="NAME=ADDRESS",
        help="--engine real: NAME=ADDRESS of a daemon's host, twice: the transmitter first, "
        "then the receiver",
    ),
    SCHEDULER,
    CREDENTIALS,
)


def hosts(args: argparse.Namespace, receiver: str | None) -> tuple[str, str, str]:
    """The transmitter, the receiver and the experiment's testbed block (their
    addresses) from --host and the tool's host argument."""
    from cellbench.engines.real import plan as rplan

    given = rplan.parse_hosts(args.hosts)
    names = list(given)
    if len(names) != 2:
        raise UsageError(
            f"--engine real needs two --host NAME=ADDRESS (transmitter, then receiver); "
            f"got {len(names)}"
        )
    tx, rx = names
    if receiver is not None:
        if receiver not in given:
            raise UsageError(f"host {receiver}: not one of the --host names ({', '.join(names)})")
        if receiver == tx:
            tx, rx = rx, tx
    if not args.scheduler or not args.credentials:
        raise UsageError(
            "--engine real needs --scheduler tls://HOST:PORT and --credentials DIR "
            "(see cellbench daemon --help)"
        )
    block = " ".join(f"host {h} {{ address = {a}; }}" for h, a in given.items())
    return tx, rx, f"testbed {{ {block} }}"
