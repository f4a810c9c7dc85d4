"""ubr: many TCP connections through one congested output port (docs/ubr.md).

The experiment every TCP-over-ATM laboratory of 1994-95 ran on UBR (A. Romanow and
S. Floyd, "Dynamics of TCP traffic over ATM networks", IEEE JSAC 13(4), 1995, where
Partial and Early Packet Discard come from): N bulk TCP transfers from N hosts, each
on its own OC-3c link, into one switch and out of one OC-3c port to one destination.
The port is the bottleneck; its buffer, its drop policy, the MTU and the TCP flavour
are varied. Per point the study reports the effective throughput (the bytes the
receivers read over the port's span, from the first transfer's start to the last one's
end, against the port's cell payload rate), how the port's time went (cells of
delivered PDUs, wasted cells of PDUs never delivered, idle while a connection had
data), Jain's fairness index, the starved connections and what limited each
(issue 34's instruments, docs/mechanisms.md, "Many TCPs through one congested port").

Parts (each one experiment the study writes, its points a sweep, so ``cellbench show``
and ``cellbench plot OUT/PART --kind port-buffer`` read it):

- ``buffers`` (default): buffer 256..8192 cells x tail drop, PPD, EPD x MTU 9180, 1500;
- ``epd-threshold``: EPD's threshold swept from 1/8 to 9/10 of one buffer;
- ``flavours``: the era's TCPs (and a modern one) at one buffer, per policy;
- ``connections``: 2 to 30 connections at one buffer, per policy.

Constants: OC-3c everywhere (ANSI T1.105: 149.76 Mb/s of cells), DEC Alpha 3000 hosts
(fast enough to fill OC-3c, docs/design.md §6.3) so the network, not a CPU, binds;
48 KB windows (an assumption: the era's studies ran 32-64 KB); 20 m of fibre per host
(era.rs). EPD's threshold in ``buffers`` is half the buffer (``epd_threshold_share = 0.5``: an
assumption, a threshold leaving room for the PDUs in progress; the ``epd-threshold``
part sweeps it from 1/8 to 9/10 of the buffer).
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TYPE_CHECKING, Any

from cellbench.reproduce import study
from cellbench.reproduce.study import Ran, Run

if TYPE_CHECKING:
    import pandas as pd

#: OC-3c's cell payload rate: 149.76 Mb/s of cells (ANSI T1.105), 48 of 53 bytes.
PAYLOAD_BPS = 149_760_000 * 48 / 53

BUFFERS = (256, 512, 1024, 2048, 4096, 8192)
POLICIES = ("tail-drop", "ppd", "epd")
MTUS = (9180, 1500)
#: EPD's threshold as a share of the buffer (the testbed's epd_threshold_share).
EPD_SHARE = 0.5
FLAVOURS = ("sunos411", "reno", "osf1", "modern")
CONNECTIONS = (2, 5, 10, 20, 30)
#: The buffer the flavours, connections and EPD-threshold parts hold.
ONE_BUFFER = 1024
EPD_SHARES = (0.125, 0.25, 0.5, 0.75, 0.9)
WINDOW = "48K"
#: Runs per point, each with its own seed stream (the hosts' timer phases and costs):
#: who captures the port depends on them.
REPLICATIONS = 3


def experiment_text(n: int, sweep: dict[str, Any], seconds: float) -> str:
    """N senders h0..h(N-1), each on its own OC-3c link, to one destination ``dst``
    through the one switch's port to it; ``sweep`` gives $mtu, $flavour, $buffer,
    $policy and $epd, EPD's threshold as a share of the buffer (lists or single
    values)."""
    hosts = " ".join(f"host h{i} {{ }}" for i in range(n))
    tests = []
    for i in range(n):
        tests.append(
            f"        test s{i} {{ type = full (blocksize=64K, duration={seconds:g}); "
            f"protocol = tcp (window={WINDOW}); own = h{i}:{7000 + i}; peer = dst:{7000 + i}; }}"
        )
    for i in range(n):
        tests.append(
            f"        test k{i} {{ type = sink (blocksize=64K); protocol = tcp (window={WINDOW}); "
            f"own = dst:{7000 + i}; peer = h{i}:{7000 + i}; }}"
        )

    def value(v) -> str:
        return "[" + ", ".join(str(x) for x in v) + "]" if isinstance(v, (list, tuple)) else str(v)

    sw = "\n".join(f"    {k} = {value(v)};" for k, v in sweep.items())
    return f"""# ubr (docs/ubr.md): {n} bulk TCP transfers, each from its own host on OC-3c,
# through one switch's OC-3c output port to one destination (reproduce/ubr.py
# names every constant's source). Written by `cellbench reproduce ubr`.

testbed lan {{
    encap = llc-snap; mtu = $mtu;
    defaults {{ profile = alpha-3000; phy = oc3c; flavour = $flavour; }}
    switch {{ buffer_cells = $buffer; policy = $policy; epd_threshold_share = $epd; }}
    {hosts} host dst {{ }}
}}

cluster {{
    parallel {{
{chr(10).join(tests)}
    }}
}}

sweep {{
{sw}
    replications = {REPLICATIONS};
}}
"""


def _sweeps(o: study.Options) -> dict[str, dict[str, Any]]:
    flavour = o.params.get("flavour", "reno")
    one = {"mtu": 9180, "flavour": flavour, "buffer": ONE_BUFFER, "epd": EPD_SHARE}
    return {
        "buffers": {
            "mtu": list(MTUS),
            "flavour": flavour,
            "buffer": list(BUFFERS),
            "policy": list(POLICIES),
            "epd": EPD_SHARE,
        },
        "epd-threshold": {**one, "policy": "epd", "epd": list(EPD_SHARES)},
        "flavours": {**one, "flavour": list(FLAVOURS), "policy": list(POLICIES)},
        "connections": {**one, "policy": list(POLICIES)},
    }


def _runs(part: str):
    def runs(o: study.Options) -> list[Run]:
        n, seconds = o.params.get("connections", 8), o.params.get("seconds", 2.0)
        sweep = _sweeps(o)[part]
        if part != "connections":
            return [Run(text=experiment_text(n, sweep, seconds), where=part)]
        return [
            Run(text=experiment_text(k, sweep, seconds), where=f"connections/n{k}")
            for k in CONNECTIONS
        ]

    return runs


def point_rows(part: str, ran: list[Ran]) -> list[dict]:
    """One row per run: its point's parameters, how the bottleneck port's time went
    and the effective throughput (``contention.port_time``), fairness, and what limited
    the connections."""
    from cellbench.experiment.results import contention

    rows = []
    for r in ran:
        df = r.result.to_pandas()
        port = contention.port_time(r.result).set_index("run")
        for run, conns in df.groupby("run", sort=True):
            first, pt = conns.iloc[0], port.loc[run]
            limits = conns["limited_by"].value_counts()
            starved = [s for s in str(first["starved"] or "").split(" -> ") if s]
            rows.append(
                {
                    "part": part,
                    "connections": len(conns),
                    "buffer": int(first["buffer"]),
                    "policy": str(first["policy"]),
                    "epd_threshold": round(float(first["epd"]) * int(first["buffer"])),
                    "mtu": int(first["mtu"]),
                    "flavour": str(first["flavour"]),
                    "seed": int(first["seed"]),
                    "bytes_received": int(conns["bytes_received"].sum()),
                    "span_s": float(pt["span_s"]),
                    "effective": float(pt["effective"]),
                    "delivered_pct": float(pt["delivered_pct"]),
                    "wasted_pct": float(pt["wasted_pct"]),
                    "idle_pct": float(pt["idle_pct"]),
                    "cells_out": int(pt["cells_out"]),
                    "cells_delivered": int(pt["cells_delivered"]),
                    "cells_wasted": int(pt["cells_wasted"]),
                    "idle_s": float(pt["idle_s"]),
                    "cells_lost_overflow": int(pt["cells_lost_overflow"]),
                    "cells_lost_ppd": int(pt["cells_lost_ppd"]),
                    "cells_lost_epd": int(pt["cells_lost_epd"]),
                    "fairness_jain": float(first["fairness_jain"] or 0.0),
                    "starved": len(starved),
                    "timeouts": int(conns["timeouts"].sum()),
                    "max_backoff": int(conns["max_backoff"].max()),
                    "replication": int(first["replication"]),
                    "limits": {str(k): int(v) for k, v in limits.items()},
                }
            )
    return rows


def frame(rows: list[dict]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows)


#: The table's columns per part: the varied ones, then the measures.
_VARIED = {
    "buffers": ["mtu", "buffer", "policy"],
    "epd-threshold": ["epd_threshold"],
    "flavours": ["flavour", "policy"],
    "connections": ["connections", "policy"],
}
_MEASURES = [
    "effective",
    "delivered_pct",
    "wasted_pct",
    "idle_pct",
    "fairness_jain",
    "starved",
    "timeouts",
    "limited_by",
]
_TITLES = {
    "buffers": "port buffer x drop policy x MTU",
    "epd-threshold": f"EPD's threshold at a {ONE_BUFFER}-cell buffer",
    "flavours": f"TCP flavour x drop policy at a {ONE_BUFFER}-cell buffer",
    "connections": f"connections x drop policy at a {ONE_BUFFER}-cell buffer",
}


def _limit_counts(limits) -> str:
    """Limits counted over several runs' ``limits``, the most common first."""
    total: Counter = Counter()
    for x in limits:
        total.update(x)
    return ", ".join(f"{k} {v}" for k, v in total.most_common())


def report_part(part: str, rows: list[dict]) -> str:
    df = frame(rows)
    if df.empty:
        return ""
    head = (
        f"ubr {part}: {_TITLES[part]}; {df['connections'].max()} connection(s) "
        f"({df['flavour'].iloc[0] if part != 'flavours' else 'each flavour'}, 48 KB windows) "
        "into one OC-3c port; means over the runs.\n"
        "effective = bytes read by the receivers over the port's span (first start to last "
        "end, a starved transfer's backed-off timeouts included) / the port's cell payload "
        f"rate ({PAYLOAD_BPS / 1e6:.2f} Mb/s); the port's time (%): delivered = cells of PDUs "
        "delivered, wasted = cells of PDUs never delivered, idle = idle while a connection "
        "had data; Jain's fairness index; starved = connections under 5% of the fair share; "
        "timeouts summed over a run's connections; limited_by counted over every run"
    )
    keys = [*_VARIED[part]] if part != "connections" else ["connections", "policy"]
    g = df.groupby(keys, sort=False)
    table = g[[m for m in _MEASURES if m != "limited_by"]].mean()
    # What limited the connections, counted over every replication.
    table["limited_by"] = g["limits"].agg(_limit_counts)
    table.insert(0, "runs", g.size())
    table = table.reset_index().to_string(
        index=False,
        formatters={
            "effective": "{:.3f}".format,
            "delivered_pct": "{:.1f}".format,
            "wasted_pct": "{:.2f}".format,
            "idle_pct": "{:.1f}".format,
            "fairness_jain": "{:.3f}".format,
            "starved": "{:.1f}".format,
            "timeouts": "{:.1f}".format,
        },
    )
    return head + "\n" + table


def _part(name: str, doc: str) -> study.Part:
    return study.Part(
        name,
        doc,
        _runs(name),
        lambda o, ran: point_rows(name, ran),
        lambda o, rows: report_part(name, rows),
        lambda o, rows: {"rows": rows},
    )


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--connections",
        type=int,
        default=8,
        metavar="N",
        help="TCP connections through the port, 2..30 (default 8; the connections part varies it)",
    )
    p.add_argument(
        "--flavour",
        default="reno",
        help="the senders' and receiver's TCP (default reno; the flavours part varies it)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        help="each transfer's length, s of simulated time (default 2)",
    )


def _check(o: study.Options) -> None:
    n = o.params.get("connections", 8)
    if not 2 <= n <= 30:
        raise ValueError(f"--connections {n}: expected 2 to 30")
    if not o.params.get("seconds", 2.0) > 0:
        raise ValueError(f"--seconds {o.params.get('seconds')}: expected a duration above 0")


UBR = study.Study(
    "ubr",
    "N TCPs through one congested OC-3c port: buffer, drop policy (tail drop, PPD, EPD), "
    "MTU, TCP flavour",
    (
        _part("buffers", "port buffer 256..8192 cells x tail drop, PPD, EPD x MTU 9180, 1500"),
        _part("epd-threshold", f"EPD's threshold 1/8..9/10 of a {ONE_BUFFER}-cell buffer"),
        _part("flavours", f"sunos411, reno, osf1, modern x policy at {ONE_BUFFER} cells"),
        _part("connections", f"2 to 30 connections x policy at {ONE_BUFFER} cells"),
    ),
    description=__doc__ or "",
    default_parts=("buffers",),
    options=_options,
    params=lambda a: {"connections": a.connections, "flavour": a.flavour, "seconds": a.seconds},
    check=_check,
    json_head=lambda o: {
        "study": "ubr",
        "seed": o.seed,
        "connections": o.params.get("connections", 8),
        "payload_bps": PAYLOAD_BPS,
        "rows": [],
    },
)
