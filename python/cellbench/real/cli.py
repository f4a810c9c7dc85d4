"""``cellbench run FILE --engine real``: the controller's command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cellbench.cli.common import UsageError, interrupted


def run_real(args: argparse.Namespace) -> int:
    from cellbench.cli.run import _print_summary, make_plan
    from cellbench.experiment import results
    from cellbench.real import controller
    from cellbench.real import plan as rplan

    for flag, on in (("--trace", args.trace), ("--dask", args.dask)):
        if on:
            raise UsageError(f"{flag} is not available with --engine real yet")
    given = rplan.parse_hosts(args.hosts)
    plan = make_plan(args, series=args.series)
    # Resolve every point's hosts before anything connects: a bad address is exit 2.
    exps = [
        rplan.build(plan.text, plan.file, pt, plan.sweep.params, e, given)
        for pt, e in zip(plan.points, plan.experiments)
    ]
    if args.check:
        e = exps[0]
        hosts = ", ".join(f"{h}={a}" for h, a in e.addresses.items())
        print(
            f"{args.file}: ok: {len(e.connections)} connection(s) on {hosts}, "
            f"{len(plan.points)} point(s) x {plan.replications} replication(s) = "
            f"{plan.runs_total} run(s), engine real"
        )
        return 0
    if not args.scheduler or not args.credentials:
        raise UsageError(
            "--engine real needs --scheduler tls://HOST:PORT and --credentials DIR "
            "(see cellbench daemon --help)"
        )
    out = args.out or Path(Path(args.file).stem + ".result")
    client = controller.connect(args.scheduler, args.credentials)
    try:
        store = results.ResultDir(
            out,
            controller.meta(plan, args.scheduler, exps[0].addresses),
            resume=args.resume,
            overwrite=args.overwrite,
        )
        controller.run_plan(plan, store, client, exps, progress=True)
    except KeyboardInterrupt:
        return interrupted(args, out)
    finally:
        client.close()

    result = results.load(out)
    print(f"cellbench: result in {out} ({len(result.to_pandas())} rows)", file=sys.stderr)
    _print_summary(result, "json" if args.json else "table")
    return 0
