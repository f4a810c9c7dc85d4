"""`cellbench cells FILE.pcap`: a cell tester's capture as an inter-arrival-time histogram."""

from __future__ import annotations

import argparse

from cellbench.cli.common import UsageError, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cells",
        help="a cell tester's capture: the inter-arrival-time histogram in cell slots",
        description="Read a pcap of ERF ATM cells (cellbench run --cells, a tester { } block, "
        "--engine emu --pcap) and print how many cells came how many cell slots of the "
        "captured link after the cell before them (rounded to the nearest slot). The slot "
        "is the link's cell time, from the description the simulator writes beside its "
        "captures (FILE.json), else --phy or --slot-us.",
    )
    p.add_argument("file", help="the capture (pcap of ERF ATM cells)")
    p.add_argument("--phy", help="the captured link's physical layer (oc3c, taxi100, ...)")
    p.add_argument("--slot-us", type=float, help="the cell slot in µs (e.g. 2.726)")
    p.add_argument("--vc", metavar="VPI/VCI", help="only this VC's cells (default: all)")
    p.add_argument(
        "--max-slots",
        type=int,
        metavar="N",
        help="count the inter-arrival times longer than N slots in one last row",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cellbench import cells

    vc = cells.parse_vc(args.vc) if args.vc else None
    if args.max_slots is not None and args.max_slots < 1:
        raise UsageError(f"--max-slots {args.max_slots}: expected a number of slots >= 1")
    c = cells.read(args.file, phy=args.phy, slot_us=args.slot_us, vc=vc)
    if args.json:
        print_json(cells.to_json(c))
    else:
        print(cells.report(c, args.max_slots))
    return 0
