"""``cellbench run FILE --engine emu``: the emulator's command line."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from cellbench.cli.common import UsageError, interrupted


def _terminate(signum, frame) -> None:
    # SIGTERM ends the run as Ctrl-C does: every namespace and TUN device removed
    # (exit status 143: Interrupted carries the signal).
    from cellbench.experiment.runner import Interrupted

    raise Interrupted(signum)


def run_emu(args: argparse.Namespace) -> int:
    from cellbench.cli.run import _print_summary, make_plan
    from cellbench.experiment import results

    for flag, on in (("--trace", args.trace), ("--dask", args.dask)):
        if on:
            raise UsageError(f"{flag} is not available with --engine emu yet")
    if args.hosts:
        raise UsageError("--host is for --engine real; emulated hosts take the testbed's address")
    check_platform()
    plan = make_plan(args, series=args.series)
    out = args.out or Path(Path(args.file).stem + ".result")
    try:
        if not run_plan(
            plan,
            out,
            resume=args.resume,
            overwrite=args.overwrite,
            check=args.check,
            pcap=args.pcap,
            stall_s=args.stall_timeout,
        ):
            return 0
    except KeyboardInterrupt as e:
        return interrupted(args, out, e)
    result = results.load(out)
    print(f"cellbench: result in {out} ({result.num_rows} rows)", file=sys.stderr)
    _print_summary(result, "json" if args.json else "table")
    return 0


def check_platform() -> None:
    if sys.platform != "linux":
        raise UsageError("--engine emu needs Linux (network namespaces and TUN devices)")


def run_plan(
    plan,
    out: Path,
    *,
    resume: bool = False,
    overwrite: bool = False,
    check: bool = False,
    drain_s: float | None = None,
    pcap: str | None = None,
    stall_s: float | None = None,
) -> bool:
    """Run ``plan`` (``runner.make_plan``) on the emulator into the result ``out``, the
    notes on stderr: ``cellbench run --engine emu``, and ``cellbench reproduce --engine
    emu`` (cellbench.reproduce.emu). ``check``: only check it and say so (False).
    ``drain_s``: how long a sink waits for the rest after a timed source's end (default:
    the engine's). ``pcap``: ``--pcap PORT=FILE``. ``stall_s``: ``--stall-timeout`` (None: the
    engine's STALL_TIMEOUT_S; 0: never)."""
    from cellbench.emu import engine, netns
    from cellbench.experiment import results
    from cellbench.real import plan as rplan

    exps = []
    for pt, e in zip(plan.points, plan.experiments):
        engine.check_frames(e)
        exps.append(
            rplan.build(
                plan.text, plan.file, pt, plan.sweep.params, e, engine.addresses(e), engine="emu"
            )
        )
    # A PORT=FILE that names no port fails here, before anything is made.
    engine.pcap_target(pcap, plan.task(0).spec, 0, plan.runs_total)
    for note in sorted(set(plan.notes) | set(engine.notes(plan.experiments[0]))):
        print(f"cellbench: note: {note}", file=sys.stderr)
    if check:
        print(
            f"{plan.file}: ok: {len(exps[0].connections)} connection(s), "
            f"{len(plan.points)} point(s) x {plan.replications} replication(s) = "
            f"{plan.runs_total} run(s), engine emu"
        )
        return False
    netns.check_privileges()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        store = results.ResultDir(out, engine.meta(plan), resume=resume, overwrite=overwrite)
        engine.run_plan(
            plan,
            store,
            exps,
            progress=True,
            drain_s=drain_s,
            pcap=pcap,
            stall_s=engine.STALL_TIMEOUT_S if stall_s is None else stall_s,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    return True
