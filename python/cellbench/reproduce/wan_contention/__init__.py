"""wan-contention (docs/wan-contention.md): several transfers sharing WAN links and switch buffers.

Every part is an experiment file in the studies' directory (``wan-contention-PART.netspec``)
on the ``wan-contention`` testbed preset (python/cellbench/experiment/testbed/presets.py: five
sites on DS-3 and OC-3c access links around a carrier hub, 256-cell edge switches),
run by the experiment runner, so ``--out`` stores results that ``cellbench show`` and
``plot`` read. Every parameter comes from the setup and physical facts; nothing is
tuned to a published number. One file per part family: ``common`` (where cells were
lost, what bound a stream), ``offered_load``, ``credits``, ``flow_control``,
``flow_control_five_pairs``, ``burst``, ``five_pairs``, ``ftp``; each holds its part, its
rows, its table and its figures.

- ``offered-load`` (a): the AAI network's three pairs (WPAFB -> ITTC, NRL -> ITTC,
  ARL -> GSD), TCP paced by the application, sharing one DS-3 (the
  ``wan-contention-aai`` preset), then full blast; the ATM Forum's lossless, peak and
  full-load throughput. ``offered-load-udp``: the same with constant-rate UDP.
- ``credits`` (c): a local and a remote host into one receiver on lawrence's switch,
  TCP/UDP against TCP/UDP, without flow control and with credit-based hop-by-hop
  flow control at every switch port (``sim::net::credit``), credits per VC per hop
  from the longest hop's round trip.
- ``flow-control`` (c'): the ``credits`` streams under UBR (tail drop, EPD), credits,
  ABR with EFCI marking and ABR with ERICA's explicit rate (``sim::net::abr``), with
  Jain's fairness index of the two streams.
- ``flow-control-five-pairs`` (b'): the ``five-pairs`` pairs, all together, under the
  same five schemes (their DS-3 pacing the ABR circuits' PCR); goodput, cells lost,
  peak queue, ACR and what limited each pair, Jain's index of the five.
- ``burst`` (d): UDP at 35 Mb/s in bursts of 1 KB .. 8 MB between an OC-3c site and
  a DS-3 site, both ways; each edge switch's buffer estimated from the knee.
- ``five-pairs`` (b): five TCP pairs (round trips 2 to 70 ms, windows their
  bandwidth-delay products) each alone, then together; where each lost cells.
- ``ftp`` (e): NRL (Washington) to JPL (Pasadena) over DS-3 access links, 37.4 ms
  round trip from the great-circle distance (004 gives none for this path; its window
  example implies near 60 ms coast to coast: docs/wan-contention.md): FTP with its
  default window, FTP with an extended window (its disk read at an assumed 4 MB/s),
  and ttcp full blast.
"""

from __future__ import annotations

from cellbench.reproduce import study
from cellbench.reproduce.tables import Command, DocsTable, mbps, table
from cellbench.reproduce.wan_contention import (
    burst,
    credits,
    five_pairs,
    flow_control,
    flow_control_five_pairs,
    ftp,
)
from cellbench.reproduce.wan_contention import offered_load as load
from cellbench.reproduce.wan_contention.burst import burst_report
from cellbench.reproduce.wan_contention.common import size
from cellbench.reproduce.wan_contention.credits import credits_header, credits_table
from cellbench.reproduce.wan_contention.five_pairs import five_pairs_report
from cellbench.reproduce.wan_contention.flow_control import flow_control_table
from cellbench.reproduce.wan_contention.flow_control_five_pairs import scheme_report
from cellbench.reproduce.wan_contention.ftp import ftp_report
from cellbench.reproduce.wan_contention.offered_load import offered_load_report


def report(res: dict) -> str:
    """Readable tables, one per part, with units and what limited each row."""
    import pandas as pd

    out = [f"wan-contention (seed {res['seed']}): rates in Mb/s (10^6 bit/s)"]
    rows = pd.DataFrame(res["rows"])
    for part, key in (("offered-load", "offered_load"), ("offered-load-udp", "offered_load_udp")):
        if key in res:
            out += ["", offered_load_report(rows[rows.part == part], res[key], part)]
    if (rows.part == "credits").any() if len(rows) else False:
        df = rows[rows.part == "credits"]
        out += [
            "",
            credits_header(df),
            credits_table(df),
            "limited by: cell-loss where a port overflowed; link: the stream's path or "
            "(with credits) the credits its next hop returned held it",
        ]
    if len(rows) and (rows.part == "flow-control").any():
        out += [
            "",
            "flow control side by side: the credits part's streams under UBR (tail drop, "
            "EPD), credits, and ABR (EFCI marking, ERICA explicit rate; sources from ICR "
            "10 Mb/s); Mb/s carried (UDP: datagrams that arrived); fairness: Jain's index "
            "of the two",
            flow_control_table(rows[rows.part == "flow-control"]),
        ]
    if len(rows) and (rows.part == flow_control_five_pairs.PART_NAME).any():
        out += ["", scheme_report(rows[rows.part == flow_control_five_pairs.PART_NAME])]
    if len(rows) and (rows.part == "burst").any():
        out += ["", burst_report(rows[rows.part == "burst"], res.get("buffers", []))]
    if len(rows) and (rows.part == "five-pairs").any():
        out += ["", five_pairs_report(rows[rows.part == "five-pairs"])]
    if len(rows) and (rows.part == "ftp").any():
        out += ["", ftp_report(rows[rows.part == "ftp"])]
    return "\n".join(out)


# --- the tables of its page (docs/wan-contention.md; reproduce.tables) --------------------

#: 004's text: NRL -> JPL over DS-3, Mb/s: ttcp's maximum, unmodified ftp, and ftp
#: modified for extended windows ("likely limited by disk I/O").
PUBLISHED_FTP_004 = {"ttcp": 23.8, "ftp-default": 2.88, "ftp-extended": 22.4}


def _table_offered_load(command: Command) -> str:
    d = command.json()
    out = []
    for part, key, what in (
        ("offered-load", "offered_load", "TCP, paced by the application"),
        ("offered-load-udp", "offered_load_udp", "UDP, constant rate"),
    ):
        curve = load.offered_load_curve([r for r in d["rows"] if r["part"] == part])
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
    return f"{command.source}, the aggregate of the three pairs:\n\n" + "\n".join(out).rstrip("\n")


def _table_five_pairs(command: Command) -> str:
    d = command.json()
    rs = [r for r in d["rows"] if r["part"] == "five-pairs"]
    rows = [
        [
            "together" if r["together"] else "alone", r["pair"], f"{r['rtt_ms']:g}",
            f"{r['window'] // 1024} KB", mbps(r["throughput_bps"], 2), r["cells_lost"],
            ", ".join(r["lost_at"]) or "-", r["limited_by"],
        ]
        for r in rs
    ]  # fmt: skip
    agg = five_pairs.five_pairs_aggregates(rs)
    alone, both = agg["alone_bps"], agg["together_bps"]
    return (
        f"{command.source}, five pairs:\n\n"
        + table(
            ["run", "pair", "RTT ms", "window", "Mb/s", "cells lost", "lost at", "limited by"],
            rows,
            {2, 4, 5},
        )  # fmt: skip
        + f"\n\nAggregate {mbps(alone, 2)} Mb/s alone (summed), {mbps(both, 2)} together "
        f"({100 * (1 - both / alone):.0f}% less); 004's five pairs: 73.84 alone, 55.19 "
        "together (25% less)."
    )


def _table_credits(command: Command) -> str:
    d = command.json()
    rows = [
        [
            r["flow_control"], r["mix"], r["stream"], r["protocol"], mbps(r["throughput_bps"], 2),
            r["cells_lost"], ", ".join(r["lost_at"]) or "-", r["limited_by"],
        ]
        for r in d["rows"]
        if r["part"] == "credits"
    ]  # fmt: skip
    return f"{command.source}, credits:\n\n" + table(
        ["flow control", "mix", "stream", "protocol", "Mb/s", "cells lost", "lost at",
         "limited by"],
        rows, {4, 5},
    )  # fmt: skip


def _table_burst(command: Command) -> str:
    d = command.json()
    rows = []
    for b in d["buffers"]:
        lo, hi = b["buffer_estimate_bytes"]
        rows.append([
            b["direction"], b["site"], size(b["knee_bytes"]), size(b["first_lossy_bytes"]),
            f"{size(lo)} to {size(hi)}", size(b["buffer_bytes"]),
        ])  # fmt: skip
    return (
        f"{command.source}, bursts: the knee read back into a buffer size "
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


def _table_ftp(command: Command) -> str:
    d = command.json()
    rows = [
        [
            r["app"], f"{r['window'] // 1024} KB", mbps(r["throughput_bps"], 3), r["cells_lost"],
            r["limited_by"], f"{PUBLISHED_FTP_004[r['app']]:g}",
        ]
        for r in d["rows"]
        if r["part"] == "ftp"
    ]  # fmt: skip
    return f"{command.source}, NRL -> JPL, beside 004's text:\n\n" + table(
        ["app", "window", "Mb/s", "cells lost", "limited by", "published Mb/s"], rows, {2, 3, 5}
    )


STUDY = study.Study(
    "wan-contention",
    "several transfers sharing WAN links: offered load, credits, flow control, burst, "
    "five pairs, ftp",
    (
        *load.PARTS,
        credits.PART,
        flow_control.PART,
        flow_control_five_pairs.PART,
        burst.PART,
        five_pairs.PART,
        ftp.PART,
    ),
    json_head=lambda o: {"study": "wan-contention", "seed": o.seed, "rows": []},
    # The flow-control part with Linux TCP: each scheme an emulated result of its own.
    emulated=study.Emulated(
        "wan-contention-flow-control",
        {"local": "local", "remote": "remote"},
        lambda a: ({"seed": a.seed, "sets": []}, []),
        reduced={"local": "tcp (window=64K)", "remote": "tcp (window=64K)", "seconds": 3},
        sim_transfer="2 s",
        sim_part="flow-control",
        variants=flow_control.schemes,
        variant_key="scheme",
        row=flow_control.emu_row,
        row_keys=("stream",),
        note=flow_control.EMU_NOTE,
    ),
    report=lambda o, got: report(study.to_json(STUDY, o, got)),
    tables=(
        DocsTable("wan-contention-offered-load", _table_offered_load),
        DocsTable("wan-contention-five-pairs", _table_five_pairs),
        DocsTable("wan-contention-flow-control-five-pairs", flow_control_five_pairs.docs_table),
        DocsTable("wan-contention-credits", _table_credits),
        DocsTable("wan-contention-burst", _table_burst),
        DocsTable("wan-contention-ftp", _table_ftp),
    ),
)
