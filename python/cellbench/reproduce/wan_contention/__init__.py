"""wan-contention (docs/wan-contention.md): several transfers sharing WAN links and switch buffers.

Every part is an experiment file in the studies' directory (``wan-contention-PART.netspec``)
on the ``wan-contention`` testbed preset (python/cellbench/experiment/testbed.py: five
sites on DS-3 and OC-3c access links around a carrier hub, 256-cell edge switches),
run by the experiment runner, so ``--out`` stores results that ``cellbench show`` and
``plot`` read. Every parameter comes from the setup and physical facts; nothing is
tuned to a published number. One file per part family: ``common`` (where cells were
lost, what bound a stream), ``offered_load``, ``credits``, ``flow_control``, ``burst``,
``five_pairs``, ``ftp``; each holds its part, its rows, its table and its figures.

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
from cellbench.reproduce.wan_contention import burst, credits, five_pairs, flow_control, ftp
from cellbench.reproduce.wan_contention import offered_load as load
from cellbench.reproduce.wan_contention.burst import burst_report
from cellbench.reproduce.wan_contention.credits import credits_table
from cellbench.reproduce.wan_contention.five_pairs import five_pairs_report
from cellbench.reproduce.wan_contention.flow_control import flow_control_table
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
        n = df.credits.dropna()
        out += [
            "",
            "(c) credit-based flow control: local law4 and remote kclab2 (via the hub and "
            "the DS-3) full blast into law1 on lawrence's switch; TCP 64 KB window, UDP 8 KB "
            f"datagrams; with credits: every switch port, {int(n.iloc[0]) if len(n) else '-'} "
            "credits per VC per hop (the longest hop's round trip); UDP Mb/s = datagrams "
            "that arrived",
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
    if len(rows) and (rows.part == "burst").any():
        out += ["", burst_report(rows[rows.part == "burst"], res.get("buffers", []))]
    if len(rows) and (rows.part == "five-pairs").any():
        out += ["", five_pairs_report(rows[rows.part == "five-pairs"])]
    if len(rows) and (rows.part == "ftp").any():
        out += ["", ftp_report(rows[rows.part == "ftp"])]
    return "\n".join(out)


STUDY = study.Study(
    "wan-contention",
    "several transfers sharing WAN links: offered load, credits, flow control, burst, "
    "five pairs, ftp",
    (*load.PARTS, credits.PART, flow_control.PART, burst.PART, five_pairs.PART, ftp.PART),
    json_head=lambda o: {"study": "wan-contention", "seed": o.seed, "rows": []},
    report=lambda o, got: report(study.to_json(STUDY, o, got)),
)
