"""wan-contention's burst part (d): UDP at 35 Mb/s in bursts of 1 KB .. 8 MB between an
OC-3c site and a DS-3 site, both ways; each edge switch's buffer estimated from the knee
(004 Fig. 8)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cellbench.reproduce import study
from cellbench.reproduce.study import Ran
from cellbench.reproduce.wan_contention.common import (
    lost_text,
    mbps,
    one,
    part,
    size,
    streams,
    udp_carried_bps,
)

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result


#: What a buffer is counted in (docs/design.md §4: 256 cells = 12 KB): cell payload bytes.
CELL_PAYLOAD = 48


def burst_rows(result: Result) -> list[dict]:
    rows = []
    for r, where, limited, evidence in streams(result):
        rows.append(
            {
                "part": "burst",
                "direction": r["test"],
                "burst_bytes": int(r["burst"]),
                "rate_bps": 35e6,
                "transmitter": r["transmitter"],
                "receiver": r["receiver"],
                "replication": int(r["replication"]),
                "seed": int(r["seed"]),
                "throughput_bps": udp_carried_bps(r),
                "datagrams_sent": int(r["datagrams_sent"] or 0),
                "datagrams_received": int(r["datagrams_received"] or 0),
                "cells_lost": int(r["cells_lost"] or 0),
                "lost_at": where,
                "limited_by": limited,
                "limit_evidence": evidence,
            }
        )
    return rows


def buffer_estimates(rows: list[dict], result_testbed: dict) -> list[dict]:
    """Per direction, the knee: the largest burst that lost no cell (and the next,
    which did), and the buffer it implies. A burst of B cells arriving every T_i into
    a port that sends one every T_o leaves B (1 - T_i / T_o) cells queued at its end
    (docs/design.md §3's burst calculator, read backwards), so the buffer lies between the
    queue the lossless burst left and the one the lossy burst would have."""
    from cellbench import _native

    out = []
    for direction in dict.fromkeys(r["direction"] for r in rows):
        rs = sorted(
            (r for r in rows if r["direction"] == direction), key=lambda r: r["burst_bytes"]
        )
        # Bursts too small lose cells to the cell tax (small datagrams need more cells
        # than the DS-3 carries at the rate); the knee is where loss starts again above
        # the first lossless burst.
        first = next((i for i, r in enumerate(rs) if r["cells_lost"] == 0), None)
        after = [i for i, r in enumerate(rs) if first is not None and i > first and r["cells_lost"]]
        if first is None or not after:
            out.append({"direction": direction, "knee_bytes": None})
            continue
        lossless, lossy = rs[after[0] - 1]["burst_bytes"], rs[after[0]]["burst_bytes"]
        host = {h["name"]: h for h in result_testbed["hosts"]}[rs[0]["transmitter"]]
        t_in = _native.calc_phy(host["phy"], True)[2]
        t_out = _native.calc_phy(result_testbed["trunks"][0]["phy"], True)[2]
        keep = 1 - t_in / t_out
        lo = _cells(lossless) * keep
        hi = _cells(lossy) * keep
        site = {h["name"]: h["site"] for h in result_testbed["hosts"]}[rs[0]["transmitter"]]
        sw = result_testbed.get("sites", {}).get(site, result_testbed["switch"])
        out.append(
            {
                "direction": direction,
                "site": site,
                "knee_bytes": lossless,
                "first_lossy_bytes": lossy,
                "buffer_estimate_cells": [round(lo), round(hi)],
                "buffer_estimate_bytes": [round(lo * CELL_PAYLOAD), round(hi * CELL_PAYLOAD)],
                "buffer_cells": sw["buffer_cells"],
                "buffer_bytes": sw["buffer_cells"] * CELL_PAYLOAD,
            }
        )
    return out


def _cells(burst: int) -> float:
    """Cells of a burst of ``burst`` bytes in UDP datagrams of at most 8 KB over
    LLC/SNAP (28 bytes of IP/UDP header, 8 of LLC/SNAP, 8 of AAL5 trailer)."""
    n = -(-burst // 8192)
    size = -(-burst // n)
    return n * math.ceil((size + 28 + 8 + 8) / 48)


def burst_report(df: pd.DataFrame, buffers: list[dict]) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "direction": df.direction,
            "burst": df.burst_bytes.map(size),
            "Mb/s": df.throughput_bps.map(mbps),
            "cells lost": df.cells_lost,
            "lost at (port)": df.lost_at.map(lost_text),
            "limited by": df.limited_by,
        }
    )
    lines = [
        "(d) switch buffering: UDP at 35 Mb/s in bursts (8 KB datagrams back to back), "
        "OC-3c site <-> DS-3 site over the DS-3; edge buffers 3.5 MB (oc3-site) and 35 KB "
        "(ds3-site); Mb/s = datagrams that arrived",
        show.to_string(index=False),
    ]
    for b in buffers:
        if b.get("knee_bytes") is None:
            lines.append(f"  {b['direction']}: no knee in the bursts swept")
            continue
        lo, hi = b["buffer_estimate_bytes"]
        lines.append(
            f"  {b['direction']}: knee between {size(b['knee_bytes'])} (no loss) and "
            f"{size(b['first_lossy_bytes'])} bursts -> the {b['site']} edge buffer holds "
            f"{size(lo)} .. {size(hi)} (burst x (1 - T_in/T_out), OC-3c into DS-3); "
            f"configured {size(b['buffer_bytes'])} ({b['buffer_cells']} cells)"
        )
    lines.append(
        "limited by: application = the 35 Mb/s source; link = the DS-3 (1 KB bursts: small "
        "datagrams need more cells than the DS-3 carries, 34.2 Mb/s of them); cell-loss "
        "where a burst overran the edge buffer"
    )
    return "\n".join(lines)


def _burst(o: study.Options, ran: list[Ran]) -> dict:
    rows = burst_rows(ran[0].result)
    return {"rows": rows, "buffers": buffer_estimates(rows, ran[0].result.meta["testbed"])}


def _burst_figures(got: dict) -> dict[str, study.Simulated]:
    """004 Fig. 8: each edge switch's buffer from the knee (the largest lossless burst)."""
    by = {b["site"]: b for b in got["buffers"]}
    gsd, nrl = by["oc3-site"], by["ds3-site"]
    return {
        "004-fig8-gsd": study.Simulated(
            gsd["buffer_estimate_bytes"][0] / 2**20, detail=f"knee at {gsd['knee_bytes']} bytes"
        ),
        "004-fig8-nrl": study.Simulated(
            nrl["buffer_estimate_bytes"][0] / 1024, detail=f"knee at {nrl['knee_bytes']} bytes"
        ),
    }


PART = part(
    "burst",
    "(d) bursts against the edge buffers",
    one("burst"),
    _burst,
    (("004-fig8-gsd", "004-fig8-nrl"), _burst_figures),
)
