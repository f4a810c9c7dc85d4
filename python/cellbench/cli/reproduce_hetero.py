"""`cellbench reproduce hetero-lan`: the heterogeneous-host netperf sweeps."""

from __future__ import annotations

import argparse
from pathlib import Path

from cellbench.cli.common import UsageError, check_workers, print_json
from cellbench.reproduce import hetero_lan


def register(studies: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    doc = (
        "heterogeneous ATM LAN on OC-3c: netperf TCP_STREAM for six host pairs (NT 3.51, "
        "Solaris 2.4/2.5, IRIX 6.0.1, SunOS 4.1.3), socket buffer x message size"
    )
    p = studies.add_parser("hetero-lan", parents=[common], help=doc, description=doc)
    p.add_argument(
        "--pair",
        action="append",
        type=_pair,
        help="only this pair: ultra1-ultra1, or 'ultra1->ultra1' quoted (> is the shell's); "
        "repeatable (default: all six)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=hetero_lan.SECONDS,
        help=f"netperf -l: seconds per measurement (default {hetero_lan.SECONDS:g})",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="store one result per pair in DIR/PAIR (e.g. DIR/ultra1-ultra1; cellbench "
        "show/plot read it)",
    )
    p.add_argument(
        "--resume", action="store_true", help="finish an interrupted --out run (per pair)"
    )
    p.set_defaults(func=main)


def _pair(text: str) -> str:
    for p in hetero_lan.PAIRS:
        if text in (p.name, p.slug):
            return p.name
    raise argparse.ArgumentTypeError(
        f"unknown pair {text!r}: expected one of {', '.join(hetero_lan.PAIR_NAMES)}"
    )


def main(args: argparse.Namespace) -> int:
    check_workers(args.workers)
    if args.resume and args.out is None:
        raise UsageError("--resume needs --out DIR (the results to finish)")
    if not 0 < args.seconds <= 3600:
        raise UsageError(f"--seconds {args.seconds}: must be in (0, 3600]")
    df = hetero_lan.run(
        pairs=args.pair,
        seconds=args.seconds,
        seed=args.seed,
        workers=args.workers,
        out=args.out,
        resume=args.resume,
        progress=True,
    )
    if args.json:
        print_json(hetero_lan.to_json(df))
    else:
        print(hetero_lan.report(df))
    return 0
