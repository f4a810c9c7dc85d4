"""`cellbench daemon`: one per host of a real testbed (the real engine)."""

from __future__ import annotations

import argparse
import sys

from cellbench.cli.common import UsageError, positive_float, positive_int
from cellbench.engines.real import agents

HELP = """\
Start the daemon of one testbed host for `cellbench run FILE --engine real`.
The daemon is a Dask distributed worker named after the host; without
--scheduler it also hosts the scheduler, so a testbed needs:

  once:           cellbench daemon --make-credentials creds/ --hosts a,b,c
                  (copy each host ca.pem and its own daemon-NAME*.pem, host a
                  also scheduler*.pem; the controller ca.pem and controller*.pem)
  on host a:      cellbench daemon --name a --listen 10.1.0.1 --allow 10.1.0.0/24 \\
                      --credentials creds/
  on host b, ...: cellbench daemon --name b --listen 10.1.0.2 --allow 10.1.0.0/24 \\
                      --scheduler tls://10.1.0.1:8786 --credentials creds/
  controller:     cellbench run FILE --engine real --scheduler tls://10.1.0.1:8786 \\
                      --credentials creds/

Security: the daemon listens on 127.0.0.1 unless --listen names an address;
the control channel is TLS with both ends authenticated by certificates from
one testbed CA: the controller's, the scheduler's and one per daemon, each with
its own key. The scheduler takes orders only from the controller's certificate
and lets a daemon's speak only for its own host; a daemon takes orders only
from the scheduler's. A connection without both handshakes done in 10 s is
closed. The daemon runs only the built-in traffic agents with plain parameters
(checked as data), never code: Dask's other operations (Client.run, plugins,
any other function) are refused, and it unpickles nothing but the task graph's
containers and the agents' names. Started as root, it runs as nobody once it
has read its credentials, keeping one capability, CAP_SYS_NICE, for the
real-time pacer's SCHED_FIFO (none with --no-realtime).

Limits: it refuses, before any traffic, a destination outside loopback and its
--allow networks, a transfer longer than --max-duration and a paced rate above
--max-rate; the refusal reaches the controller as a one-line error naming the
connection. The agents hold the same limits themselves, whatever they are
sent: a source sends only inside the allow list and ends at --max-duration, and
all the daemon's sources together stay under --max-rate (one rate cap that
every write of every connection reserves its bytes from, so a full blast, or
several, is held under it).
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
        help="create a testbed CA and, signed by it, the controller's, the scheduler's and "
        "each --hosts daemon's certificate and key in DIR, then exit",
    )
    p.add_argument(
        "--hosts",
        metavar="NAME,...",
        help="with --make-credentials: the testbed's hosts, a daemon certificate each",
    )
    p.add_argument(
        "--agents",
        type=positive_int("--agents"),
        default=512,
        help="traffic agents that may run at once (default 512)",
    )
    p.add_argument(
        "--max-duration",
        type=positive_float("--max-duration", most=agents.MAX_DURATION_LIMIT_S),
        default=300.0,
        metavar="SECONDS",
        help="refuse a transfer longer than this (default 300 s; at most 30 days)",
    )
    p.add_argument(
        "--max-rate",
        type=positive_float("--max-rate", least=agents.MIN_RATE_LIMIT_BPS / 1e6),
        default=10_000.0,
        metavar="MBPS",
        help="refuse a paced rate above this and hold all the daemon's sources together "
        "below it (default 10000 Mb/s)",
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
        help="pace at the normal priority (default: real-time, SCHED_FIFO 1, where permitted)",
    )
    p.set_defaults(func=daemon_main)


def daemon_main(args: argparse.Namespace) -> int:
    from cellbench.engines.real import credentials, daemon

    if args.make_credentials:
        hosts = [h.strip() for h in (args.hosts or "").split(",") if h.strip()]
        try:
            paths = credentials.make(args.make_credentials, hosts)
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
    except daemon.StartError as e:
        raise UsageError(f"daemon {args.name}: {e}") from None
    except OSError as e:
        raise UsageError(f"daemon {args.name}: cannot listen or connect: {e}") from None
    return 0
