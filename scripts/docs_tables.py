"""The results tables of the study pages in docs/, generated from the commands.

Each table stands in its page between two markers,

    <!-- generated: NAME (scripts/docs_tables.py; do not edit by hand) -->
    ...
    <!-- end generated: NAME -->

and is rendered here from `cellbench reproduce STUDY --json` (seed 1), run once per
study. `python3 scripts/docs_tables.py` rewrites every block; `--check` rewrites
nothing and exits 1 naming each block whose page and command disagree
(tests/test_docs_tables.py runs the check). docs/fidelity.md is generated whole by
`cellbench fidelity --markdown`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: The command behind each study's tables (its --json output), as a user types it.
COMMANDS = {
    "wan-mismatch": ["reproduce", "wan-mismatch"],
    "hetero-lan": ["reproduce", "hetero-lan"],
    "europe-vp": ["reproduce", "europe-vp"],
    "lan-buffers-ethernet": [
        "reproduce",
        "lan-buffers",
        "--part",
        "ftp",
        "--part",
        "ethernet-footnote",
    ],  # fmt: skip
    "wan-contention": ["reproduce", "wan-contention"],
    "europe-vp-tester": ["reproduce", "europe-vp", "--part", "tester"],
    "wan-window": ["reproduce", "wan-window"],
    "lan-buffers-two-cells": [
        "reproduce",
        "lan-buffers",
        "--send-buffer",
        "24K",
        "--recv-buffer",
        "24K",
        "--recv-buffer",
        "48K",
    ],  # fmt: skip
}

#: 000 §1: the ftp example's mean throughputs, Mb/s (a 4.4 MB file, same hosts).
PUBLISHED_FTP_000 = {"ethernet": 1.313, "atm": 0.366}
#: 004's text: NRL -> JPL over DS-3, Mb/s: ttcp's maximum, unmodified ftp, and ftp
#: modified for extended windows ("likely limited by disk I/O").
PUBLISHED_FTP_004 = {"ttcp": 23.8, "ftp-default": 2.88, "ftp-extended": 22.4}
#: 003 Experiment 4: aggregate Mb/s of each run ((a) unpaced, (b) paced).
PUBLISHED_CASE3 = {"case3a": "46.71", "case3b": "61.17"}
#: 003 Experiments 2 and 3: one sender unpaced / paced at 70; two senders unpaced /
#: paced at 35 each (Mb/s; Experiment 3's figures are the two senders' aggregate).
PUBLISHED_CASES = {(1, False): "0.87", (1, True): "68.20", (2, False): "1.66", (2, True): "52.36"}


@functools.cache
def study_output(name: str, as_json: bool = True) -> str:
    """The command's output, --json or its report (run once per process)."""
    from cellbench.cli import main

    argv = [*COMMANDS[name], *(["--json"] if as_json else [])]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code != 0:
        raise SystemExit(f"cellbench {' '.join(argv)} exited {code}")
    return out.getvalue()


def study_json(name: str) -> dict:
    return json.loads(study_output(name))


def table(head: list[str], rows: list[list], right: set[int] | None = None) -> str:
    """A Markdown table (columns in ``right`` aligned right)."""
    right = right or set()
    align = ["---:" if i in right else "---" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def mbps(bps: float | None, digits: int = 3) -> str:
    return "-" if bps is None else f"{bps / 1e6:.{digits}f}"


def source(name: str) -> str:
    return f"`cellbench {' '.join(COMMANDS[name])}` (seed 1)"


# --- wan-mismatch ------------------------------------------------------------------------


def wan_mismatch_cases() -> str:
    d = study_json("wan-mismatch")
    rows = []
    for r in d["rows"]:
        paced = r["pacing_mbps"] is not None
        rows.append([
            r["case"], f"{r['pacing_mbps']:g}" if paced else "none", r["transmitter"],
            mbps(r["throughput_bps"]), f"{100 * r['segment_loss_rate']:.2f}%", r["cells_lost"],
            r["limited_by"], PUBLISHED_CASES[(r["case"], paced)],
        ])  # fmt: skip
    return (
        f"{source('wan-mismatch')}; published: 003 Experiment 2 (case 1) and 3 (case 2, the "
        "two senders' aggregate):\n\n"
        + table(
            [
                "case",
                "pacing Mb/s",
                "transmitter",
                "Mb/s",
                "seg loss",
                "cells lost",
                "limited by",
                "published Mb/s",
            ],
            rows,
            {3, 4, 5, 7},
        )  # fmt: skip
    )


def wan_mismatch_case3() -> str:
    d = study_json("wan-mismatch")
    rows = []
    for r in d["case3"]:
        rows.append([
            r["run"].removeprefix("case"), r["transmitter"], r["receiver"],
            mbps(r["throughput_bps"]), r["cells_lost"], r["packets_lost"],
            ", ".join(r["lost_at"]) or "-", r["limited_by"],
        ])  # fmt: skip
    agg = [
        [
            name.removeprefix("case"),
            mbps(a["aggregate_bps"]),
            f"{a['packets_lost_per_s']:.1f}",
            PUBLISHED_CASE3[name],
            "2 to 4" if name == "case3a" else "none",
        ]
        for name, a in d["case3_aggregates"].items()
    ]
    return (
        f"{source('wan-mismatch')}, case 3, each connection:\n\n"
        + table(
            [
                "run",
                "transmitter",
                "receiver",
                "Mb/s",
                "cells lost",
                "packets lost",
                "lost at",
                "limited by",
            ],
            rows,
            {3, 4, 5},
        )  # fmt: skip
        + "\n\nEach run beside 003 Experiment 4:\n\n"
        + table(
            [
                "run",
                "aggregate Mb/s",
                "packets lost per s",
                "published Mb/s",
                "published losses per s",
            ],
            agg,
            {1, 2, 3},
        )  # fmt: skip
    )


def wan_mismatch_segment_size() -> str:
    d = study_json("wan-mismatch")
    by = {(r["run"], r["mtu"]): r for r in d["segment_size"]}
    rows = []
    for mtu in sorted({m for _, m in by}):
        e5, e6 = by[("experiment-5", mtu)], by[("experiment-6", mtu)]
        rows.append([
            mtu, mtu - 40, mbps(e5["throughput_bps"]), e5["cells_lost"], e5["limited_by"],
            mbps(e6["throughput_bps"]), e6["pdus_refused_at_sender"], e6["limited_by"],
        ])  # fmt: skip
    return (
        f"{source('wan-mismatch')}, Experiments 5 and 6 (003 gives both as figures only):\n\n"
        + table(
            [
                "MTU",
                "segment",
                "Exp. 5 Mb/s",
                "Exp. 5 cells lost",
                "Exp. 5 limited by",
                "Exp. 6 Mb/s",
                "Exp. 6 PDUs refused at the sender",
                "Exp. 6 limited by",
            ],
            rows,
            {0, 1, 2, 3, 5, 6},
        )  # fmt: skip
    )


# --- hetero-lan --------------------------------------------------------------------------

PAIR_NAMES = {
    "sparc10->challenge": "SPARC-10 → Power Challenge",
    "pentium90->pentium90": "Pentium-90 → Pentium-90",
    "challenge->pentium100": "Power Challenge → Pentium-100",
    "ultra1->challenge": "Ultra-1 → Power Challenge",
    "sparc20->sparc20": "SPARC-20 → SPARC-20",
    "ultra1->ultra1": "Ultra-1 → Ultra-1",
}


def hetero_lan_maxima() -> str:
    d = study_json("hetero-lan")
    rows = [
        [
            PAIR_NAMES.get(m["pair"], m["pair"]), mbps(m["throughput_bps"], 2),
            f"{m['percent_of_theoretical']:.1f}", m["limited_by"],
            f"{m['published_bps'] / 1e6:.2f}", f"{m['published_percent_of_theoretical']:.2f}",
            f"{m['ratio']:.2f}",
        ]
        for m in d["maxima"]
    ]  # fmt: skip
    return f"{source('hetero-lan')}, beside 001 Table 3:\n\n" + table(
        ["pair", "simulated Mb/s", "% of TCP payload", "limited by", "published Mb/s",
         "published %", "ratio"],
        rows, {1, 2, 4, 5, 6},
    )  # fmt: skip


def _surface(d: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in d["rows"]:
        out.setdefault(r["pair"], []).append(r)
    return out


def hetero_lan_one_mss() -> str:
    d = study_json("hetero-lan")
    rows = []
    for pair, rs in _surface(d).items():
        mss = rs[0]["mtu"] - 40
        at = {(r["socket_buffer"], r["message_size"]): r for r in rs}
        one, two = at.get((mss, mss)), at.get((2 * mss, mss))
        small = [r["throughput_bps"] for r in rs if r["socket_buffer"] == 8192]
        rows.append([
            PAIR_NAMES.get(pair, pair), mss,
            mbps(one and one["throughput_bps"], 2), one["limited_by"] if one else "-",
            mbps(two and two["throughput_bps"], 2),
            mbps(statistics.median(r["throughput_bps"] for r in rs), 2),
            f"{mbps(min(small), 2)} to {mbps(max(small), 2)}" if small else "-",
        ])  # fmt: skip
    return (
        f"{source('hetero-lan')}: each pair at socket buffer = message = one MSS, with a "
        "buffer of two MSS (message one MSS), the median over its whole surface, and its "
        "range with an 8 KB buffer (Mb/s):\n\n"
        + table(
            ["pair", "MSS", "1 MSS", "limited by (1 MSS)", "buffer 2 MSS", "median", "8 KB buffer"],
            rows,
            {1, 2, 4, 5},
        )  # fmt: skip
    )


def hetero_lan_limits() -> str:
    d = study_json("hetero-lan")
    surf = _surface(d)
    kinds = sorted({r["limited_by"] for r in d["rows"]})
    rows = []
    for pair, rs in surf.items():
        c = Counter(r["limited_by"] for r in rs)
        rows.append([PAIR_NAMES.get(pair, pair), len(rs), *(c.get(k, 0) for k in kinds)])
    total = Counter(r["limited_by"] for r in d["rows"])
    rows.append(["all", len(d["rows"]), *(total.get(k, 0) for k in kinds)])
    return f"{source('hetero-lan')}: what bound each point, points per pair:\n\n" + table(
        ["pair", "points", *kinds], rows, set(range(1, len(kinds) + 2))
    )


def hetero_lan_remarkable() -> str:
    d = study_json("hetero-lan")
    rows = []
    for r in d["remarkable"]:
        extra = (
            f"median of the surface {mbps(r['median_bps'], 2)}"
            if "median_bps" in r
            else f"best at one MSS or more {mbps(r.get('best_at_or_above_mss_bps'), 2)}"
        )
        rows.append([
            r["case"], PAIR_NAMES.get(r["pair"], r["pair"]), r["socket_buffer"],
            r["message_size"], mbps(r["throughput_bps"], 2), extra, r["limited_by"],
        ])  # fmt: skip
    return f"{source('hetero-lan')}: the remarkable cases the report finds:\n\n" + table(
        ["case", "pair", "socket buffer", "message", "Mb/s", "beside", "limited by"],
        rows, {2, 3, 4},
    )  # fmt: skip


# --- europe-vp ---------------------------------------------------------------------------


def europe_vp() -> str:
    d = study_json("europe-vp")
    groups: dict[tuple, list[dict]] = {}
    for r in d["rows"]:
        groups.setdefault((r["spacing_us"], r["window"]), []).append(r)
    writes = sorted({r["write_size"] for r in d["rows"]})
    rows = []
    for (spacing, window), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["write_size"])
        limits = Counter(r["limited_by"] for r in rs)
        limit = ", ".join(f"{k} ({n})" if len(limits) > 1 else k for k, n in limits.items())
        if not all(r["met_contract"] for r in rs):
            limit += f"; contract violated ({sum(not r['met_contract'] for r in rs)})"
        rows.append([
            "none" if spacing is None else f"{spacing:.2f}", f"{window // 1024} KB",
            " / ".join(mbps(r["throughput_bps"], 2) for r in rs), limit,
        ])  # fmt: skip
    sizes = " / ".join(f"{w // 1024}K" for w in writes)
    return f"{source('europe-vp')}; limited by: what bound each connection (count):\n\n" + table(
        ["spacing µs", "window", f"Mb/s (writes {sizes})", "limited by"], rows
    )


def europe_vp_tester() -> str:
    text = study_output("europe-vp-tester", as_json=False)
    body = text[text.index("driver 2.2.9") :].rstrip("\n")
    return f"{source('europe-vp-tester')}, its report from the first driver on:\n\n```\n{body}\n```"


# --- wan-window --------------------------------------------------------------------------


def wan_window() -> str:
    d = study_json("wan-window")
    rows = [
        [
            r["window"], mbps(r["throughput_bps"]), f"{r['published_bps'] / 1e6:g}",
            f"{r['throughput_bps'] / r['published_bps']:.2f}", r["limited_by"],
        ]
        for r in d["rows"]
    ]  # fmt: skip
    return f"{source('wan-window')}, beside 003 Experiment 1:\n\n" + table(
        ["window B", "Mb/s", "published Mb/s", "ratio", "limited by"], rows, {0, 1, 2, 3}
    )


# --- lan-buffers: the Ethernet parts -----------------------------------------------------


def lan_buffers_ethernet() -> str:
    d = study_json("lan-buffers-ethernet")
    rows = []
    for part, key in (("ftp", "ftp"), ("footnote", "ethernet_footnote")):
        groups: dict[tuple, list[dict]] = {}
        for r in d[key]:
            groups.setdefault((r["interface"], r["send_buffer"], r["recv_buffer"]), []).append(r)
        for (iface, snd, rcv), rs in groups.items():
            limits = Counter(r["limited_by"] for r in rs)
            pub = PUBLISHED_FTP_000[iface] if part == "ftp" else None
            rows.append([
                part, f"{iface}, MSS {rs[0]['mss']}", f"{snd // 1024}K/{rcv // 1024}K",
                len(rs), mbps(statistics.fmean(r["throughput_bps"] for r in rs)),
                f"{sum(r['lockstep'] for r in rs)}/{len(rs)}", limits.most_common(1)[0][0],
                "-" if pub is None else f"{pub:.3f}",
            ])  # fmt: skip
    return (
        f"{source('lan-buffers-ethernet')}; Mb/s = 10^6 bit/s, the mean over the "
        "replications; limited by: most replications' verdict; published: 000 §1's ftp "
        "example (the footnote gives no figure):\n\n"
        + table(
            [
                "part",
                "interface",
                "snd/rcv",
                "runs",
                "Mb/s",
                "locked",
                "limited by",
                "published Mb/s",
            ],
            rows,
            {3, 4, 7},
        )  # fmt: skip
    )


def lan_buffers_two_cells() -> str:
    d = study_json("lan-buffers-two-cells")
    rows = [
        [
            f"{c['send_buffer'] // 1024}K/{c['recv_buffer'] // 1024}K", c["replications"],
            f"{c['throughput_mbit_ttcp']:.3f}", f"{c['throughput_mbit_ttcp'] * 2**20 / 1e6:.3f}",
            f"{100 * c['lockstep_fraction']:.0f}%", c["limited_by"], c["published"],
        ]
        for c in d["cells"]
    ]  # fmt: skip
    return f"{source('lan-buffers-two-cells')}:\n\n" + table(
        ["snd/rcv", "runs", "mean Mbit/s (2^20)", "mean Mb/s", "locked", "limited by",
         "published Mbit/s"],
        rows, {1, 2, 3, 4, 6},
    )  # fmt: skip


# --- wan-contention ----------------------------------------------------------------------


def _curve(rows: list[dict]) -> list[dict]:
    from cellbench.reproduce.wan_contention import offered_load

    return offered_load.offered_load_curve(rows)


def wan_contention_offered_load() -> str:
    d = study_json("wan-contention")
    out = []
    for part, key, what in (
        ("offered-load", "offered_load", "TCP, paced by the application"),
        ("offered-load-udp", "offered_load_udp", "UDP, constant rate"),
    ):
        curve = _curve([r for r in d["rows"] if r["part"] == part])
        rows = [
            [
                "full blast" if p["offered_bps"] is None else mbps(p["offered_bps"], 1),
                mbps(p["carried_bps"], 2), p["cells_lost"], ", ".join(p["lost_at"]) or "-",
                p["limited_by"],
            ]
            for p in curve
        ]  # fmt: skip
        f = d[key]
        out += [
            f"{what}:",
            "",
            table(
                ["offered Mb/s", "carried Mb/s", "cells lost", "lost at", "limited by"],
                rows,
                {0, 1, 2},
            ),  # fmt: skip
            "",
            f"Maximum lossless {mbps(f['lossless_bps'], 2)} Mb/s (at "
            f"{mbps(f['lossless_offered_bps'], 2)} offered), peak {mbps(f['peak_bps'], 2)}, "
            f"full load {mbps(f['full_load_bps'], 2)}"
            + ("; 004 Fig. 4: about 28, about 29.5 and 18.4." if part == "offered-load" else "."),
            "",
        ]
    return f"{source('wan-contention')}, the aggregate of the three pairs:\n\n" + "\n".join(
        out
    ).rstrip("\n")


def wan_contention_five_pairs() -> str:
    d = study_json("wan-contention")
    rs = [r for r in d["rows"] if r["part"] == "five-pairs"]
    rows = [
        [
            "together" if r["together"] else "alone", r["pair"], f"{r['rtt_ms']:g}",
            f"{r['window'] // 1024} KB", mbps(r["throughput_bps"], 2), r["cells_lost"],
            ", ".join(r["lost_at"]) or "-", r["limited_by"],
        ]
        for r in rs
    ]  # fmt: skip
    from cellbench.reproduce.wan_contention import five_pairs

    agg = five_pairs.five_pairs_aggregates(rs)
    alone, both = agg["alone_bps"], agg["together_bps"]
    return (
        f"{source('wan-contention')}, five pairs:\n\n"
        + table(
            ["run", "pair", "RTT ms", "window", "Mb/s", "cells lost", "lost at", "limited by"],
            rows,
            {2, 4, 5},
        )  # fmt: skip
        + f"\n\nAggregate {mbps(alone, 2)} Mb/s alone (summed), {mbps(both, 2)} together "
        f"({100 * (1 - both / alone):.0f}% less); 004's five pairs: 73.84 alone, 55.19 "
        "together (25% less)."
    )


def wan_contention_credits() -> str:
    d = study_json("wan-contention")
    rows = [
        [
            r["flow_control"], r["mix"], r["stream"], r["protocol"], mbps(r["throughput_bps"], 2),
            r["cells_lost"], ", ".join(r["lost_at"]) or "-", r["limited_by"],
        ]
        for r in d["rows"]
        if r["part"] == "credits"
    ]  # fmt: skip
    return f"{source('wan-contention')}, credits:\n\n" + table(
        ["flow control", "mix", "stream", "protocol", "Mb/s", "cells lost", "lost at",
         "limited by"],
        rows, {4, 5},
    )  # fmt: skip


def _size(n: float) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n:g} B"


def wan_contention_burst() -> str:
    d = study_json("wan-contention")
    rows = []
    for b in d["buffers"]:
        lo, hi = b["buffer_estimate_bytes"]
        rows.append([
            b["direction"], b["site"], _size(b["knee_bytes"]), _size(b["first_lossy_bytes"]),
            f"{_size(lo)} to {_size(hi)}", _size(b["buffer_bytes"]),
        ])  # fmt: skip
    return (
        f"{source('wan-contention')}, bursts: the knee read back into a buffer size "
        "(004's estimates, which the preset takes as the buffers: 3.5 MB at GSD's switch, "
        "35 kB at NRL's):\n\n"
        + table(
            [
                "direction",
                "edge",
                "last burst without loss",
                "first with loss",
                "buffer estimate",
                "configured",
            ],
            rows,
        )  # fmt: skip
    )


def wan_contention_ftp() -> str:
    d = study_json("wan-contention")
    rows = [
        [
            r["app"], f"{r['window'] // 1024} KB", mbps(r["throughput_bps"], 3), r["cells_lost"],
            r["limited_by"], f"{PUBLISHED_FTP_004[r['app']]:g}",
        ]
        for r in d["rows"]
        if r["part"] == "ftp"
    ]  # fmt: skip
    return f"{source('wan-contention')}, NRL -> JPL, beside 004's text:\n\n" + table(
        ["app", "window", "Mb/s", "cells lost", "limited by", "published Mb/s"], rows, {2, 3, 5}
    )


#: Block name -> (page, renderer).
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "wan-mismatch-cases": ("wan-mismatch.md", wan_mismatch_cases),
    "wan-mismatch-case3": ("wan-mismatch.md", wan_mismatch_case3),
    "wan-mismatch-segment-size": ("wan-mismatch.md", wan_mismatch_segment_size),
    "hetero-lan-maxima": ("hetero-lan.md", hetero_lan_maxima),
    "hetero-lan-one-mss": ("hetero-lan.md", hetero_lan_one_mss),
    "hetero-lan-remarkable": ("hetero-lan.md", hetero_lan_remarkable),
    "hetero-lan-limits": ("hetero-lan.md", hetero_lan_limits),
    "europe-vp": ("europe-vp.md", europe_vp),
    "europe-vp-tester": ("europe-vp.md", europe_vp_tester),
    "wan-window": ("wan-window.md", wan_window),
    "lan-buffers-ethernet": ("lan-buffers.md", lan_buffers_ethernet),
    "lan-buffers-two-cells": ("lan-buffers.md", lan_buffers_two_cells),
    "wan-contention-offered-load": ("wan-contention.md", wan_contention_offered_load),
    "wan-contention-five-pairs": ("wan-contention.md", wan_contention_five_pairs),
    "wan-contention-credits": ("wan-contention.md", wan_contention_credits),
    "wan-contention-burst": ("wan-contention.md", wan_contention_burst),
    "wan-contention-ftp": ("wan-contention.md", wan_contention_ftp),
}

BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) \(scripts/docs_tables\.py; do not edit by hand\) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- end generated: (?P=name) -->)",
    re.S,
)


def blocks_in(text: str) -> list[str]:
    """The names of the generated blocks a page holds, in order."""
    return [m.group("name") for m in BLOCK.finditer(text)]


def rewrite(text: str, render: Callable[[str], str] | None = None) -> str:
    """The page with every generated block rendered afresh."""
    render = render or (lambda name: BLOCKS[name][1]())

    def sub(m: re.Match) -> str:
        return m.group(1) + render(m.group("name")).rstrip("\n") + "\n" + m.group(4)

    return BLOCK.sub(sub, text)


def pages() -> dict[str, str]:
    names = sorted({p for p, _ in BLOCKS.values()})
    return {p: (DOCS / p).read_text(encoding="utf-8") for p in names}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if stale")
    args = ap.parse_args(argv)
    stale = []
    for page, text in pages().items():
        new = rewrite(text)
        if new != text:
            stale.append(page)
            if not args.check:
                (DOCS / page).write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "rewritten"
    print(f"{len(stale)} page(s) {verb}" + (": " + ", ".join(stale) if stale else ""))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "python"))
    sys.exit(main())
