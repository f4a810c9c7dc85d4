"""`cellbench daemon`: one per host of a real testbed (the real engine)."""

from __future__ import annotations

import argparse
import sys

from cellbench.cli.common import UsageError, positive_float, positive_int

HELP = """\
Start the daemon of one testbed host for `cellbench run FILE --engine real`.
The daemon is a Dask distributed worker named after the host; without
--scheduler it also hosts the scheduler, so a testbed needs:

  once:           cellbench daemon --make-credentials creds/   (copy creds/ to every host)
  on host a:      cellbench daemon --name a --listen 10.1.0.1 --allow 10.1.0.0/24 \\
                      --credentials creds/
  on host b, ...: cellbench daemon --name b --listen 10.1.0.2 --allow 10.1.0.0/24 \\
                      --scheduler tls://10.1.0.1:8786 --credentials creds/
  controller:     cellbench run FILE --engine real --scheduler tls://10.1.0.1:8786 \\
                      --credentials creds/

Security: the daemon listens on 127.0.0.1 unless --listen names an address;
the control channel is TLS with both ends authenticated by the certificates in
--credentials (a controller without them is refused at the handshake). The
daemon runs only the built-in traffic agents with plain parameters, never code
or commands from an experiment file. It refuses, before any traffic, a
destination outside loopback and its --allow networks, a transfer longer than
--max-duration and a paced rate above --max-rate (a full blast is held below
it); the refusal reaches the controller as a one-line error naming the
connection.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "daemon",
        help="run the daemon of one host of a real testbed (--engine real)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--name", help="this host's name in the testbed (e.g. a)")
    p.add_argument(
        "--listen",
        default="127.0.0.1",
        metavar="ADDRESS[:PORT]",
        help="the address to listen on (default 127.0.0.1; the scheduler's port 8786)",
    )
    p.add_argument(
        "--scheduler",
        metavar="tls://HOST:PORT",
        help="join this scheduler (default: host one on --listen)",
    )
    p.add_argument(
        "--credentials", metavar="DIR", help="the TLS credentials (--make-credentials DIR)"
    )
    p.add_argument(
        "--make-credentials",
        metavar="DIR",
        help="create a CA certificate and a certificate and key it signed in DIR, then exit",
    )
    p.add_argument(
        "--agents",
        type=positive_int("--agents"),
        default=512,
        help="traffic agents that may run at once (default 512)",
    )
    p.add_argument(
        "--max-duration",
        type=positive_float("--max-duration"),
        default=300.0,
        metavar="SECONDS",
        help="refuse a transfer longer than this (default 300 s)",
    )
    p.add_argument(
        "--max-rate",
        type=positive_float("--max-rate"),
        default=10_000.0,
        metavar="MBPS",
        help="refuse a paced rate above this and hold a full blast below it (default 10000 Mb/s)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NETWORK",
        help="also send to this address or network (e.g. 10.1.0.0/24; repeatable); "
        "only loopback without it",
    )
    p.add_argument(
        "--no-realtime",
        action="store_true",
        help="pace at the normal priority (default: real-time where permitted)",
    )
    p.set_defaults(func=daemon_main)


def daemon_main(args: argparse.Namespace) -> int:
    from cellbench.real import credentials, daemon

    if args.make_credentials:
        try:
            paths = credentials.make(args.make_credentials)
        except OSError as e:
            raise UsageError(f"--make-credentials {args.make_credentials}: {e.strerror}") from None
        print(f"cellbench: wrote {', '.join(str(p) for p in paths)}", file=sys.stderr)
        return 0
    if not args.name:
        raise UsageError("daemon: --name HOST is required (the host's name in the testbed)")
    if not args.credentials:
        raise UsageError(
            "daemon: --credentials DIR is required (create them: cellbench daemon "
            "--make-credentials DIR)"
        )
    try:
        daemon.serve(
            args.name,
            listen=args.listen,
            scheduler=args.scheduler,
            creds=args.credentials,
            agents_n=args.agents,
            max_duration_s=args.max_duration,
            max_rate_bps=args.max_rate * 1e6,
            allow=args.allow,
            realtime=not args.no_realtime,
        )
    except KeyboardInterrupt:
        return 0
    except OSError as e:
        raise UsageError(f"daemon: cannot listen or connect: {e}") from None
    return 0
