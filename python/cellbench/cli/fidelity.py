"""`cellbench fidelity`: every published result beside the simulator's (docs/fidelity.md)."""

from __future__ import annotations

import argparse
import sys

from cellbench.cli.common import check_workers, count, print_json, seed
from cellbench.reproduce.spread import DEFAULT_REPLICATIONS


def register(sub: argparse._SubParsersAction) -> None:
    doc = (
        "list every result the five papers publish and run the study parts that produce them: "
        "place, kind, published, simulated, ratio, tolerance, verdict, counts per paper, and "
        "the seed spread of each result the seed moves (under a minute on 2 cores)"
    )
    p = sub.add_parser("fidelity", help=doc, description=doc)
    p.add_argument("--seed", type=seed(), default=1, help="master seed (default 1)")
    p.add_argument("--workers", type=int, default=0, help="worker threads (default: all cores)")
    p.add_argument(
        "--replications",
        type=count("--replications", 1000),
        default=None,
        metavar="N",
        help="seeds per result the seed moves (several TCPs at a congested port: each "
        "study's Compares.seeded): the verdict stays SEED's, and each such line also gives "
        "the figure's min, mean and max over seeds SEED..SEED+N-1 and whether the published "
        f"figure lies inside (default {DEFAULT_REPLICATIONS}; 0: none)",
    )
    p.add_argument(
        "--envelope",
        action="store_true",
        help="run each result that depends on an open setup value (an experiment file's "
        "assume) at every corner of the assumed ranges, and say where the published value "
        "falls (a few minutes on 2 cores)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON: {seed, counts, lines}")
    out.add_argument(
        "--markdown",
        action="store_true",
        help="print docs/fidelity.md (cellbench fidelity --markdown > docs/fidelity.md)",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cellbench.reproduce import fidelity

    check_workers(args.workers)
    if args.envelope:
        from cellbench.reproduce import envelope

        if args.markdown:
            raise ValueError("--envelope prints text or --json, not --markdown")
        if args.replications is not None:
            raise ValueError("--envelope runs one seed: --replications is the scoreboard's")
        print(envelope.main(seed=args.seed, workers=args.workers, as_json=args.json))
        return 0
    n = DEFAULT_REPLICATIONS if args.replications is None else args.replications
    lines, seconds = fidelity.run(
        seed=args.seed, workers=args.workers, progress=True, replications=n
    )
    print(f"fidelity: {len(lines)} results in {seconds:.1f} s", file=sys.stderr)
    if args.json:
        print_json(fidelity.to_json(lines, args.seed))
    elif args.markdown:
        sys.stdout.write(fidelity.markdown(lines, args.seed))
    else:
        print(fidelity.report(lines, args.seed))
    return 0
