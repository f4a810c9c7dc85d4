"""``cellbench ttcp`` and ``cellbench netperf`` with ``--engine real``: one
connection between two daemons, reported in the simulated connection's keys so
that the tools print it exactly as they print a simulated one.

The transfer is an experiment like any other (a two-host testbed, a source and
its sink) run by the controller, so the daemons' checks and limits hold; only
the result is not stored.
"""

from __future__ import annotations

import argparse

from cellbench.errors import UsageError

#: The options ``--engine real`` adds to ttcp and netperf.
HOST_HELP = (
    "--engine real: NAME=ADDRESS of a daemon's host, twice: the transmitter first, "
    "then the receiver"
)


#: --scheduler's help, the same for `run` and the tools.
SCHEDULER_HELP = (
    "--engine real: the address of the daemons' scheduler (the daemon started "
    "without --scheduler hosts it; cellbench daemon --help)"
)


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=["sim", "real"],
        default="sim",
        help="sim: the simulator (default); real: two hosts' daemons (cellbench daemon --help)",
    )
    p.add_argument(
        "--host", dest="hosts", action="append", default=[], metavar="NAME=ADDRESS", help=HOST_HELP
    )
    p.add_argument("--scheduler", metavar="tls://HOST:PORT", help=SCHEDULER_HELP)
    p.add_argument("--credentials", metavar="DIR", help="--engine real: the TLS credentials")


def _hosts(args: argparse.Namespace, receiver: str | None) -> tuple[str, str, dict[str, str]]:
    """(transmitter, receiver, {name: address}) from --host and the tool's host argument."""
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
    return tx, rx, given


def run_one(args: argparse.Namespace, receiver: str | None, connection: dict) -> dict:
    """Run ``connection`` (the simulator's connection keys: protocol, sndbuf, rcvbuf,
    nodelay, receiver_blocksize, traffic) from the first --host to the receiver on
    their daemons; the report in the simulated connection's keys."""
    from cellbench.engines.real import RealEngine, measure
    from cellbench.experiment.plan import make_plan

    tx, rx, given = _hosts(args, receiver)
    t = connection["traffic"]
    amount = f"nbytes={t['nbytes']}" if "nbytes" in t else f"duration={t['duration_s']:g}"
    proto = connection["protocol"]
    send_opts = [f"sndbuf={connection['sndbuf']}"] if connection.get("sndbuf") else []
    if connection.get("nodelay"):
        send_opts.append("nodelay=true")
    recv_opts = [f"rcvbuf={connection['rcvbuf']}"] if connection.get("rcvbuf") else []
    port = args.p if getattr(args, "p", None) else 5001
    rblock = connection.get("receiver_blocksize", t["blocksize"])
    hosts = " ".join(f"host {h} {{ address = {a}; }}" for h, a in given.items())
    text = (
        f"testbed {{ {hosts} }}\ncluster {{\n"
        f"test t {{ type = full (blocksize={t['blocksize']}, {amount}); "
        f"protocol = {proto} ({', '.join(send_opts)}); own = {tx}:{port}; peer = {rx}:{port}; }}\n"
        f"test r {{ type = sink (blocksize={rblock}); "
        f"protocol = {proto} ({', '.join(recv_opts)}); own = {rx}:{port}; peer = {tx}:{port}; }}\n"
        "}\n"
    )
    plan = make_plan(text, file=f"<{args.command} --engine real>")
    engine = RealEngine(scheduler=args.scheduler, credentials=args.credentials)
    engine.check(plan)
    engine.open()
    try:
        engine.begin(plan)
        run, _ = engine.work(plan.task(0))
    finally:
        engine.close()
    sent, got, _ = run.reports[0]
    limited_by, evidence = measure.explain(proto, sent, got, None)
    nbytes = t.get("nbytes")
    return {
        "transmitter": tx,
        "receiver": rx,
        "completed": not got["timed_out"] and (nbytes is None or got["bytes"] == nbytes),
        "bytes": sent["bytes"],
        "sender_seconds": sent["seconds"],
        "writes": sent["blocks"],
        "bytes_received": got["bytes"],
        "receiver_seconds": got["seconds"],
        "reads": got["reads"],
        # The real agents do not measure CPU time yet: no rusage line.
        "sender_cpu_busy": None,
        "receiver_cpu_busy": None,
        "datagrams_sent": sent["blocks"],
        "datagrams_received": got["datagrams"],
        "pdus_dropped_at_adapter": sent["send_errors"],
        # What the kernel granted, as netperf prints it (getsockopt after setting).
        "sndbuf_granted": sent.get("sndbuf_granted"),
        "rcvbuf_granted": got.get("rcvbuf_granted"),
        "limited_by": limited_by,
        "limit_evidence": evidence,
    }
