"""`cellbench calc`: the closed-form calculators.

    cellbench calc layers --phy oc3c --encap llc-snap [--mtu 9180] [--no-framing] [--json]
    cellbench calc phy --phy oc3c [--no-framing] [--json]
    cellbench calc buffer-burst --buffer-cells L --in-cell-us TI --out-cell-us TO [--json]
    cellbench calc gcra-burst --T-us T --tau-us TAU --cell-us TJ [--json]
    cellbench calc train --cells-per-pdu N --cell-us TC --gap-us G --T-us T --tau-us TAU
                         [--pdus K] [--json]
    cellbench calc window --window-bytes W --rtt-ms R [--rate-mbps V] [--json]

Mb/s is 10^6 bit/s throughout.
"""

from __future__ import annotations

import argparse
import math

from cellbench import calc, vocab
from cellbench.cli.common import positive_float, positive_int, print_json

_PHYS = ", ".join(vocab.PHYS) + " or rate:<Mb/s>"


def _non_negative_float(what: str):
    """An argparse type: a finite number >= 0, with an error naming `what`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if not (value >= 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{what} must be a finite number >= 0, got {text!r}")
        return value

    return parse


def _whole_number(what: str):
    """An argparse type: any whole number (its range is checked by the calculator)."""

    def parse(text: str) -> int:
        try:
            return int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number, got {text!r}"
            ) from None

    return parse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calc",
        help="closed-form calculators: layer bandwidth, burst tolerances, window bounds",
        description="Closed-form calculators engineers used to size ATM paths. "
        "Rates in Mb/s (10^6 bit/s), times in µs unless named otherwise.",
    )
    csub = p.add_subparsers(dest="calc_command", metavar="CALC_COMMAND")
    csub.required = True

    lay = csub.add_parser(
        "layers",
        help="bandwidth left to each layer: line, atm, aal5, ip, tcp_payload",
        description="Bandwidth left to each layer when full-MTU IP datagrams travel in "
        "AAL5 over a physical layer (header, trailer and padding overhead only).",
    )
    _phy_args(lay)
    lay.add_argument(
        "--encap",
        default="llc-snap",
        help="llc-snap (RFC 1483, 8-byte header; default) or vc-mux (no header)",
    )
    lay.add_argument(
        "--mtu",
        type=_whole_number("--mtu"),
        help="IP MTU in bytes (default: the encapsulation's, 9180 llc-snap, 9188 vc-mux)",
    )
    _json_arg(lay)
    lay.set_defaults(func=_layers)

    phy = csub.add_parser(
        "phy",
        help="line rate, cell rate and cell time of a physical layer",
        description="Line rate, the rate left to cells, and the time of one cell.",
    )
    _phy_args(phy)
    _json_arg(phy)
    phy.set_defaults(func=_phy)

    bb = csub.add_parser(
        "buffer-burst",
        help="longest burst a buffer of L cells absorbs: L / (1 - T_i/T_o)",
        description="Longest burst (whole cells) a buffer of L cells absorbs when cells "
        "arrive every T_i and leave every T_o: L / (1 - T_i/T_o). Unbounded when "
        "T_i >= T_o (JSON: max_burst_cells null).",
    )
    bb.add_argument(
        "--buffer-cells", type=positive_int("--buffer-cells"), required=True, metavar="L"
    )
    bb.add_argument(
        "--in-cell-us",
        type=positive_float("--in-cell-us"),
        required=True,
        metavar="TI",
        help="time between arriving cells, µs",
    )
    bb.add_argument(
        "--out-cell-us",
        type=positive_float("--out-cell-us"),
        required=True,
        metavar="TO",
        help="time between departing cells, µs",
    )
    _json_arg(bb)
    bb.set_defaults(func=_buffer_burst)

    gb = csub.add_parser(
        "gcra-burst",
        help="longest burst GCRA(T, tau) passes at a cell interval, and the idle after it",
        description="Longest burst at cell interval T_j that GCRA(T, tau) passes, "
        "1 + floor(tau / (T - T_j)), and the idle time (beyond the cell interval) "
        "before another such burst passes in full. Unbounded when T_j >= T.",
    )
    _gcra_args(gb)
    gb.add_argument(
        "--cell-us",
        type=positive_float("--cell-us"),
        required=True,
        metavar="TJ",
        help="cell interval within the burst, µs",
    )
    _json_arg(gb)
    gb.set_defaults(func=_gcra_burst)

    tr = csub.add_parser(
        "train",
        help="does a train of PDUs conform to GCRA(T, tau)? which cell fails first?",
        description="A train of PDUs of N cells at interval TC, with an idle gap G "
        "(beyond the cell interval) between the last cell of one PDU and the first "
        "of the next, against GCRA(T, tau). Without --pdus: the steady state. PDUs "
        "and cells are counted from 0.",
    )
    tr.add_argument(
        "--cells-per-pdu", type=positive_int("--cells-per-pdu"), required=True, metavar="N"
    )
    tr.add_argument(
        "--cell-us",
        type=positive_float("--cell-us"),
        required=True,
        metavar="TC",
        help="cell interval within a PDU, µs",
    )
    tr.add_argument(
        "--gap-us",
        type=_non_negative_float("--gap-us"),
        required=True,
        metavar="G",
        help="idle time between PDUs beyond the cell interval, µs",
    )
    _gcra_args(tr)
    tr.add_argument(
        "--pdus",
        type=positive_int("--pdus"),
        metavar="K",
        help="number of PDUs (default: the steady state, indefinitely many)",
    )
    _json_arg(tr)
    tr.set_defaults(func=_train)

    win = csub.add_parser(
        "window",
        help="window/RTT throughput bound and bandwidth-delay product",
        description="At most one window per round trip: throughput <= window / RTT "
        "(and <= the link rate if given). With a link rate, also the bandwidth-delay "
        "product: the least window that fills the link.",
    )
    win.add_argument(
        "--window-bytes", type=positive_int("--window-bytes"), required=True, metavar="W"
    )
    win.add_argument(
        "--rtt-ms", type=positive_float("--rtt-ms"), required=True, metavar="R", help="ms"
    )
    win.add_argument(
        "--rate-mbps",
        type=positive_float("--rate-mbps"),
        metavar="V",
        help="link rate, Mb/s (10^6 bit/s)",
    )
    _json_arg(win)
    win.set_defaults(func=_window)

    wm = csub.add_parser(
        "window-model",
        help="usable window and throughput bound per ACK policy (TCP over a policed VP)",
        description="The simple model: the whole window is usable up to 2 x MSS; beyond it "
        "only whole MSS-sized segments (an even number when every second segment is "
        "ACKed; the whole window when one ACK covers it); throughput <= min(rate, usable / RTT).",
    )
    wm.add_argument("--rtt-ms", type=positive_float("--rtt-ms"), required=True, metavar="R")
    wm.add_argument(
        "--rate-mbps", type=positive_float("--rate-mbps"), required=True, metavar="V",
        help="VP or link rate, Mb/s (10^6 bit/s)",
    )  # fmt: skip
    wm.add_argument("--mss", type=positive_int("--mss"), required=True, metavar="M")
    wm.add_argument("--window", type=positive_int("--window"), required=True, metavar="W")
    _json_arg(wm)
    wm.set_defaults(func=_window_model)


def _phy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phy", required=True, help=f"physical layer: {_PHYS}")
    p.add_argument(
        "--no-framing",
        dest="framing",
        action="store_false",
        help="neglect the physical layer's framing (cells get the whole line rate)",
    )


def _gcra_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--T-us",
        dest="T_us",
        type=positive_float("--T-us"),
        required=True,
        metavar="T",
        help="GCRA increment (1/PCR), µs",
    )
    p.add_argument(
        "--tau-us",
        dest="tau_us",
        type=_non_negative_float("--tau-us"),
        required=True,
        metavar="TAU",
        help="GCRA limit (CDVT or burst tolerance), µs",
    )


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _framing_text(framing: bool) -> str:
    return "framing modelled" if framing else "framing neglected"


def _layers(args: argparse.Namespace) -> int:
    t = calc.layer_table(args.phy, args.encap, args.mtu, args.framing)
    pub = _published_layers(t)
    if args.json:
        rows = t["layers"]
        if pub is not None:
            rows = [r | {"published_mbps": pub[r["layer"]]} for r in rows]
        print_json(rows)
        return 0
    print(
        f"Bandwidth left to each layer: {t['phy']} ({_framing_text(t['framing'])}), "
        f"{t['encap']} ({t['encap_header_bytes']}-byte header), MTU {t['mtu']} "
        f"({t['cells_per_pdu']} cells per PDU)"
    )
    print(f"{'layer':<12} {'Mb/s':>9}" + ("  published" if pub else ""))
    for row in t["layers"]:
        line = f"{row['layer']:<12} {row['mbps']:>9.3f}"
        print(line + (f"  {pub[row['layer']]:>9.3f}" if pub else ""))
    print("(Mb/s = 10^6 bit/s)")
    if pub is not None:
        print("published: the OC-3c per-layer table (python/cellbench/data/layer_bandwidth.csv)")
    return 0


def _published_layers(t: dict) -> dict[str, float] | None:
    """The published per-layer figures for this configuration, where the table gives
    them: OC-3c with its SONET framing, Classical IP at MTU 9180 or VC-mux at 9188."""
    from cellbench.data.published import layer_bandwidth

    if t["phy"] != "oc3c" or not t["framing"]:
        return None
    return layer_bandwidth().get((t["encap"], t["mtu"]))


def _phy(args: argparse.Namespace) -> int:
    r = calc.phy_rates(args.phy, args.framing)
    if args.json:
        print_json(r)
        return 0
    print(f"{r['phy']} ({_framing_text(r['framing'])})")
    print(f"  line rate   {r['line_mbps']:.3f} Mb/s")
    print(f"  cell rate   {r['cell_mbps']:.3f} Mb/s ({r['cells_per_sec']:.1f} cells/s)")
    print(f"  cell time   {r['cell_time_us']:.6f} µs")
    return 0


def _buffer_burst(args: argparse.Namespace) -> int:
    r = calc.buffer_burst(args.buffer_cells, args.in_cell_us, args.out_cell_us)
    if args.json:
        print_json(r)
        return 0
    if r["unbounded"]:
        print(
            f"unbounded: cells leave every {args.out_cell_us:g} µs, at least as fast as they "
            f"arrive (every {args.in_cell_us:g} µs), so the {args.buffer_cells}-cell buffer "
            "never fills"
        )
    else:
        print(
            f"A {args.buffer_cells}-cell buffer absorbs bursts of up to "
            f"{r['max_burst_cells']} cells (in every {args.in_cell_us:g} µs, out every "
            f"{args.out_cell_us:g} µs: L / (1 - T_i/T_o))"
        )
    return 0


def _gcra_burst(args: argparse.Namespace) -> int:
    r = calc.gcra_burst(args.T_us, args.tau_us, args.cell_us)
    if args.json:
        print_json(r)
        return 0
    gcra = f"GCRA({args.T_us:g} µs, {args.tau_us:g} µs)"
    if r["unbounded"]:
        print(
            f"unbounded: cells every {args.cell_us:g} µs are no faster than T = "
            f"{args.T_us:g} µs, so {gcra} passes them all"
        )
        return 0
    print(
        f"{gcra} passes bursts of up to {r['max_burst_cells']} cells at {args.cell_us:g} µs "
        "(1 + floor(tau / (T - T_j)))"
    )
    print(
        f"idle after the burst before another passes in full: {r['idle_after_us']:.6f} µs "
        "(beyond the cell interval)"
    )
    print(f"idle to repeat such bursts indefinitely: {r['idle_to_repeat_us']:.6f} µs")
    return 0


def _failure_text(f: dict | None) -> str:
    if f is None:
        return "none"
    return f"PDU {f['pdu']}, cell {f['cell']} (counted from 0), arriving at {f['time_us']:g} µs"


def _train(args: argparse.Namespace) -> int:
    r = calc.train(args.cells_per_pdu, args.cell_us, args.gap_us, args.T_us, args.tau_us, args.pdus)
    if args.json:
        print_json(r)
        return 0
    what = f"{args.pdus} PDUs" if args.pdus is not None else "PDUs"
    how_many = "" if args.pdus is not None else ", repeated indefinitely"
    verdict = "conform" if r["conforming"] else "do not conform"
    print(
        f"{what} of {args.cells_per_pdu} cells at {args.cell_us:g} µs with a {args.gap_us:g} µs "
        f"gap{how_many}: {verdict} to GCRA({args.T_us:g} µs, {args.tau_us:g} µs)"
    )
    if not r["conforming"]:
        print(f"first non-conforming cell: {_failure_text(r['first_failure'])}")
    if args.pdus is not None:
        print(f"non-conforming cells: {r['non_conforming_cells']}")
        steady = "conforms" if r["steady_state_conforming"] else "does not conform"
        print(f"steady state (indefinitely many PDUs): {steady}", end="")
        if not r["steady_state_conforming"]:
            print(f"; first failure {_failure_text(r['steady_state_first_failure'])}", end="")
        print()
    return 0


def _window_model(args: argparse.Namespace) -> int:
    r = calc.window_model(args.window, args.mss, args.rtt_ms, args.rate_mbps)
    if args.json:
        print_json(r)
        return 0
    print(
        f"window {args.window} B, MSS {args.mss} B, RTT {args.rtt_ms:g} ms, "
        f"rate {args.rate_mbps:g} Mb/s"
    )
    print(f"{'ACK policy':<18} {'usable window':>14} {'bound':>12}  limited by")
    for p in r["policies"]:
        print(
            f"{p['ack']:<18} {p['usable_window_bytes']:>12} B {p['throughput_mbps']:>7.3f} Mb/s"
            f"  {p['limited_by']}"
        )
    print("(Mb/s = 10^6 bit/s)")
    return 0


def _window(args: argparse.Namespace) -> int:
    r = calc.window_bound(args.window_bytes, args.rtt_ms, args.rate_mbps)
    if args.json:
        print_json(r)
        return 0
    print(
        f"window / RTT = {args.window_bytes} B / {args.rtt_ms:g} ms = "
        f"{r['window_rate_mbps']:.3f} Mb/s"
    )
    if r["link_mbps"] is not None:
        print(
            f"throughput bound: {r['throughput_mbps']:.3f} Mb/s (limited by the {r['limited_by']})"
        )
        print(
            f"bandwidth-delay product: {r['bdp_bytes']} bytes "
            f"({r['link_mbps']:g} Mb/s × {args.rtt_ms:g} ms)"
        )
    print("(Mb/s = 10^6 bit/s)")
    return 0
