"""``cellbench run FILE --engine emu``: the emulator's command line."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from cellbench.cli.common import UsageError, interrupted


def _terminate(signum, frame) -> None:
    # SIGTERM ends the run as Ctrl-C does: every namespace and TUN device removed.
    raise KeyboardInterrupt


def run_emu(args: argparse.Namespace) -> int:
    from cellbench.cli.run import _print_summary, make_plan
    from cellbench.emu import engine, netns
    from cellbench.experiment import results
    from cellbench.real import plan as rplan

    for flag, on in (("--trace", args.trace), ("--dask", args.dask)):
        if on:
            raise UsageError(f"{flag} is not available with --engine emu yet")
    if args.hosts:
        raise UsageError("--host is for --engine real; emulated hosts take the testbed's address")
    if sys.platform != "linux":
        raise UsageError("--engine emu needs Linux (network namespaces and TUN devices)")
    plan = make_plan(args, series=args.series)
    exps = []
    for pt, e in zip(plan.points, plan.experiments):
        exps.append(
            rplan.build(
                plan.text, plan.file, pt, plan.sweep.params, e, engine.addresses(e), engine="emu"
            )
        )
    # A PORT=FILE that names no port fails here, before anything is made.
    engine.pcap_target(args.pcap, plan.task(0).spec, 0, plan.runs_total)
    for note in sorted(set(plan.notes) | set(engine.notes(plan.experiments[0]))):
        print(f"cellbench: note: {note}", file=sys.stderr)
    if args.check:
        print(
            f"{args.file}: ok: {len(exps[0].connections)} connection(s), "
            f"{len(plan.points)} point(s) x {plan.replications} replication(s) = "
            f"{plan.runs_total} run(s), engine emu"
        )
        return 0
    netns.check_privileges()
    out = args.out or Path(Path(args.file).stem + ".result")
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        store = results.ResultDir(
            out, engine.meta(plan), resume=args.resume, overwrite=args.overwrite
        )
        engine.run_plan(plan, store, exps, progress=True, pcap=args.pcap)
    except KeyboardInterrupt:
        return interrupted(args, out)
    finally:
        signal.signal(signal.SIGTERM, previous)

    result = results.load(out)
    print(f"cellbench: result in {out} ({len(result.to_pandas())} rows)", file=sys.stderr)
    _print_summary(result, "json" if args.json else "table")
    return 0
