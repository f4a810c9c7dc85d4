"""wan-contention (docs/wan-contention.md): several transfers sharing WAN links and switch buffers.

Every part is an experiment file beside this module (``wan-contention-PART.netspec``)
on the ``wan-contention`` testbed preset (python/cellbench/experiment/testbed.py: five
sites on DS-3 and OC-3c access links around a carrier hub, 256-cell edge switches),
run by the experiment runner, so ``--out`` stores results that ``cellbench show`` and
``plot`` read. Every parameter comes from the setup and physical facts; nothing is
tuned to a published number.

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

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cellbench import vocab
from cellbench.data.published import CLAIMS
from cellbench.reproduce import study
from cellbench.reproduce.study import Ran, Run

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The parts, in the order they run and print.
PARTS = (
    "offered-load",
    "offered-load-udp",
    "credits",
    "flow-control",
    "burst",
    "five-pairs",
    "ftp",
)


def _experiment(part: str) -> str:
    return f"wan-contention-{part}"


# --- where cells were lost --------------------------------------------------------------


def _lost_at(result: Result) -> dict[int, dict[str, int]]:
    """Per run, the ports that lost cells and how many (``trunk kc->lawrence``: the
    hub's output port onto lawrence's access link; a host name: its access port)."""
    ports = result.ports()
    out: dict[int, dict[str, int]] = {}
    for r in ports[ports["cells_lost"] > 0].itertuples(index=False):
        out.setdefault(int(r.run), {})[str(r.host)] = int(r.cells_lost)
    return out


def _ports_on_paths(tb: dict, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """The output ports each (transmitter, receiver)'s cells cross, named as results
    name ports: the trunks from the transmitter's site to the receiver's, then the
    receiver's access port; routed by the simulator itself (the fewest trunks:
    ``_native.connection_ports``)."""
    from cellbench import _native
    from cellbench.experiment.model import host_spec
    from cellbench.experiment.testbed import HostSpec

    pairs = list(dict.fromkeys(pairs))
    conns = [
        {"transmitter": a, "receiver": b, "traffic": {"type": "full", "blocksize": 1, "nbytes": 1}}
        for a, b in pairs
    ]
    hosts = [host_spec(HostSpec(**h)) for h in tb["hosts"]]
    spec = {"hosts": hosts, "trunks": tb["trunks"], "connections": conns}
    return dict(zip(pairs, _native.connection_ports(spec)))


def _ports_on_path(tb: dict, transmitter: str, receiver: str) -> list[str]:
    """The output ports one connection's cells cross (``_ports_on_paths``)."""
    return _ports_on_paths(tb, [(transmitter, receiver)])[(transmitter, receiver)]


def _loss_note(lost: dict[str, int], path: list[str]) -> tuple[list[str], str]:
    where = [p for p in path if p in lost]
    text = ", ".join(f"{lost[p]} cells at {p}" for p in where)
    return where, text


def _streams(result: Result):
    """Each sending stream's row, with the ports on its path that lost cells and what
    bound it (``_limit``): (row, lost_at, limited_by, limit_evidence)."""
    lost = _lost_at(result)
    rows = _senders(result).to_dict(orient="records")
    paths = _ports_on_paths(
        result.meta["testbed"], [(r["transmitter"], r["receiver"]) for r in rows]
    )
    for r in rows:
        path = paths[(r["transmitter"], r["receiver"])]
        where, text = _loss_note(lost.get(int(r["run"]), {}), path)
        yield (r, where, *_limit(r, text))


# --- (a) offered load ---------------------------------------------------------------------


def _udp_carried_bps(r: dict) -> float:
    """A UDP stream's carried load: the datagrams that arrived, over the sender's time
    or the receiver's if longer (its throughput_bps is the sender's, as ttcp measures
    it, and counts datagrams its own interface queue refused)."""
    seconds = max(r["sender_seconds"] or 0.0, r["receiver_seconds"] or 0.0)
    received = (r["datagrams_received"] or 0) * (r["blocksize"] or 0) * 8
    return received / seconds if seconds > 0 else 0.0


def _carried_bps(r: dict) -> float:
    return _udp_carried_bps(r) if r["protocol"] == "udp" else float(r["throughput_bps"])


def _limit(r: dict, text: str) -> tuple[str, str]:
    """What bound a stream: cell loss where it lost cells (named), else the simulator's
    verdict; a UDP source whose interface queue refused datagrams was held by its link
    (or, with credits, by the credits its first hop returned)."""
    if r["cells_lost"]:
        return vocab.CELL_LOSS, f"lost {text}"
    refused = int(r["pdus_dropped_at_adapter"] or 0)
    if r["protocol"] == "udp" and refused:
        return vocab.LINK, (
            f"the source's interface queue refused {refused} datagrams (ENOBUFS): it "
            "writes faster than its adapter may send"
        )
    return r["limited_by"], r["limit_evidence"]


def blocks_due(duration_s: float, period_us: float) -> int:
    """The blocks a paced source's period lets fall due in its duration: one at the
    start and one every period after, while the duration lasts (62 in 2 s at 32.768 ms:
    at 0, 32.768, ... 1998.8 ms)."""
    return math.ceil(duration_s * 1e6 / period_us - 1e-9)


def offered_load_rows(result: Result, part: str = "offered-load") -> list[dict]:
    """One row per source per point: paced ones (``load`` "paced", carried over the
    periods its blocks own) and full-blast ones (``load`` "full", carried as ttcp
    measures: bytes over the sender's time)."""
    from cellbench.experiment.plots import carried_bps

    # What each source carried, as `plot --kind offered-load` counts it (plots.py).
    carried_all = carried_bps(_sorted(result)).tolist()
    rows = []
    for (r, where, limited, evidence), carried in zip(_streams(result), carried_all):
        paced = r["traffic"] != "full"
        n = blocks_due(float(r["duration_s"]), float(r["period_us"])) if paced else None
        got = round(carried * n * float(r["period_us"]) * 1e-6 / 8) if paced else None
        cells = int(r["cells_lost"] or 0)
        if paced and not cells and limited in (vocab.APPLICATION, None):
            limited, evidence = (
                vocab.APPLICATION,
                (
                    f"paced source: {n} blocks of {int(r['blocksize'])} B due in "
                    f"{float(r['duration_s']):g} s, {got} B arrived: {_mbps(carried)} of "
                    f"{_mbps(float(r['offered_bps']))} Mb/s offered"
                ),
            )
        rows.append(
            {
                "part": part,
                "load": "paced" if paced else "full",
                "period": float(r["period_us"]) if paced else None,
                "blocksize": int(r["blocksize"]),
                "offered_bps": float(r["offered_bps"]) if paced else None,
                "transmitter": r["transmitter"],
                "receiver": r["receiver"],
                "protocol": r["protocol"],
                "replication": int(r["replication"]),
                "seed": int(r["seed"]),
                "throughput_bps": carried,
                "sender_bps": float(r["throughput_bps"]),
                "blocks_due": n,
                "bytes_received": got,
                "datagrams_sent": int(r["datagrams_sent"] or 0),
                "datagrams_received": int(r["datagrams_received"] or 0),
                "retransmitted_segments": int(r["retransmitted_segments"] or 0),
                "timeouts": int(r["timeouts"] or 0),
                "cells_lost": cells,
                "lost_at": where,
                "limited_by": limited,
                "limit_evidence": evidence,
            }
        )
    return rows


def offered_load_points(rows: list[dict]) -> list[dict]:
    """The aggregate curve: per replication and point (a period, or full blast), the
    three sources' offered and carried loads summed, in order of offered load (full
    blast last), with the cells lost, the retransmissions, the ports that lost cells
    and what limited the point (cell-loss if any source lost cells, else the sources'
    most common limit)."""
    points: dict[tuple[int, float | None], list[dict]] = {}
    for r in rows:
        # Full blast has no period (None, or NaN once through a table).
        period = r["period"] if r["period"] == r["period"] else None
        points.setdefault((r["replication"], period), []).append(r)
    out = []
    for (rep, period), rs in points.items():
        limits = [r["limited_by"] for r in rs]
        full = period is None
        out.append(
            {
                "replication": rep,
                "period": period,
                "load": "full" if full else "paced",
                "offered_bps": None if full else sum(r["offered_bps"] for r in rs),
                "carried_bps": sum(r["throughput_bps"] for r in rs),
                "cells_lost": sum(r["cells_lost"] for r in rs),
                "retransmitted_segments": sum(r["retransmitted_segments"] for r in rs),
                "timeouts": sum(r["timeouts"] for r in rs),
                "lost_at": sorted({p for r in rs for p in r["lost_at"]}),
                "limited_by": vocab.CELL_LOSS
                if any(r["cells_lost"] for r in rs)
                else max(set(limits), key=limits.count),
            }
        )
    return sorted(out, key=lambda p: (p["offered_bps"] is None, p["offered_bps"] or 0.0))


#: 004's text on its Fig. 4 (three pairs into one DS-3): the maximum lossless
#: throughput where the curve leaves a straight line, "around 28" Mb/s; the peak
#: "around 29.5"; full-rate traffic measured at 18.4 Mb/s.
PUBLISHED_OFFERED_LOAD = {"lossless": 28.0, "peak": 29.5, "full_load": 18.4}


def offered_load_curve(rows: list[dict]) -> list[dict]:
    """The aggregate curve over the replications: per point (a period, or full blast),
    the carried load's mean over the replications with its lowest and highest, the
    replications that lost cells, and the cells lost, retransmissions and timeouts
    summed over them; ``lossless`` only if no replication lost a cell. One replication:
    ``offered_load_points`` with these keys added."""
    by: dict[float | None, list[dict]] = {}
    for p in offered_load_points(rows):
        by.setdefault(p["period"], []).append(p)
    out = []
    for ps in by.values():
        carried = [p["carried_bps"] for p in ps]
        lossy = sum(1 for p in ps if p["cells_lost"])
        limits = [p["limited_by"] for p in ps]
        out.append(
            ps[0]
            | {
                "replications": len(ps),
                "carried_bps": sum(carried) / len(ps),
                "carried_min_bps": min(carried),
                "carried_max_bps": max(carried),
                "lossy_replications": lossy,
                "lossless": lossy == 0,
                "cells_lost": sum(p["cells_lost"] for p in ps),
                "retransmitted_segments": sum(p["retransmitted_segments"] for p in ps),
                "timeouts": sum(p["timeouts"] for p in ps),
                "lost_at": sorted({x for p in ps for x in p["lost_at"]}),
                "limited_by": vocab.CELL_LOSS if lossy else max(set(limits), key=limits.count),
            }
        )
    return out


def offered_load_figures(rows: list[dict]) -> dict:
    """The ATM Forum's three figures from the aggregate curve averaged over the
    replications (``offered_load_curve``): maximum lossless throughput (the most
    carried at any offered load that lost no cell in any replication), peak throughput
    (the most carried at any load), and full-load throughput (every source at full
    blast: the full-blast point, else the highest offered load); each a mean, with the
    replications' lowest and highest at that point (``*_range_bps``)."""
    agg = offered_load_curve(rows)
    lossless = [p for p in agg if p["lossless"] and p["offered_bps"] is not None]
    best = max(lossless, key=lambda p: p["carried_bps"], default=None)
    peak = max(agg, key=lambda p: p["carried_bps"])
    full = agg[-1]

    def spread(p: dict | None) -> list[float]:
        return [p["carried_min_bps"], p["carried_max_bps"]] if p else [0.0, 0.0]

    return {
        "replications": full["replications"],
        "lossless_bps": best["carried_bps"] if best else 0.0,
        "lossless_offered_bps": best["offered_bps"] if best else 0.0,
        "lossless_range_bps": spread(best),
        "peak_bps": peak["carried_bps"],
        "peak_range_bps": spread(peak),
        "full_load_bps": full["carried_bps"],
        "full_load_range_bps": spread(full),
        # Full blast offers what the hosts and links take: no number of its own.
        "full_load_offered_bps": full["offered_bps"],
    }


# --- (c) credit-based flow control -----------------------------------------------------------


def hop_credits(testbed: dict, sites: tuple[str, ...]) -> int:
    """Credits per VC per hop that let a VC go at its link's rate over the longest hop
    among ``sites`` (and the hub): a cell leaving at t arrives after one cell time C and
    the delay d, is forwarded at once at best, and its credit is back d later; so
    (C + 2d) / C cells must be on the way (machine-room links need a few, trunks more)."""
    from cellbench import _native

    def need(phy: str, delay_s: float) -> int:
        cell_s = _native.calc_phy(phy, True)[2] * 1e-6
        return math.ceil((cell_s + 2 * delay_s) / cell_s)

    trunks = [t for t in testbed["trunks"] if {t["from"], t["to"]} <= {*sites, HUB}]
    hosts = [h for h in testbed["hosts"] if h["site"] in sites]
    hops = [need(t["phy"], t["delay_ms"] * 1e-3) for t in trunks]
    hops += [need(h["phy"], h["distance_m"] * vocab.FIBRE_S_PER_M) for h in hosts]
    return max(hops)


#: The carrier hub every site's access link reaches (the preset's star).
HUB = "kc"
#: The sites of the credits part's hosts (law4, law1 at lawrence; kclab2 at kclab).
CREDIT_SITES = ("lawrence", "kclab")


def _credits_runs(o: study.Options) -> list[Run]:
    """Without flow control, then with credits at every switch port (OUT/credits/none,
    OUT/credits/credit)."""
    from cellbench.experiment import testbed as tbmod

    n = hop_credits(tbmod.preset("wan-contention").to_dict(), CREDIT_SITES)
    credit = {"testbed.switch.flow_control": "credit", "testbed.switch.credits": n}
    return [
        Run(_experiment("credits"), where="credits/none"),
        Run(_experiment("credits"), where="credits/credit", sets=study.sets(credit)),
    ]


#: The flow-control part's schemes: UBR with tail drop and with EPD, credits, and ABR
#: with EFCI marking and with ERICA's explicit rate (issue 29). ABR sources start at
#: ICR = 10 Mb/s of cells (an assumption: TM 4.0's default ICR = PCR would start a
#: WAN source at the line rate); the EFCI threshold is half the 256-cell buffer, ERICA
#: targets 0.9 over 1 ms (assumptions, docs/mechanisms.md "ABR").
FLOW_SCHEMES = ("ubr-tail", "ubr-epd", "credit", "abr-efci", "abr-er")
_ABR_SOURCE = "abr (icr = 10M)"


def _flow_control_runs(o: study.Options) -> list[Run]:
    """The credits part's streams under each scheme (OUT/flow-control/SCHEME)."""
    from cellbench.experiment import testbed as tbmod

    n = hop_credits(tbmod.preset("wan-contention").to_dict(), CREDIT_SITES)
    sets = {
        "ubr-tail": {},
        "ubr-epd": {"testbed.switch.policy": "epd"},
        "credit": {"testbed.switch.flow_control": "credit", "testbed.switch.credits": n},
        "abr-efci": {"service": _ABR_SOURCE, "testbed.switch.abr": "efci (threshold = 128)"},
        "abr-er": {
            "service": _ABR_SOURCE,
            "testbed.switch.abr": "erica (target = 0.9, interval_us = 1000)",
        },
    }
    return [
        Run(_experiment("flow-control"), where=f"flow-control/{s}", sets=study.sets(sets[s]))
        for s in FLOW_SCHEMES
    ]


def flow_control_rows(ran: list[Ran]) -> list[dict]:
    """The credits part's row per stream, with its scheme and the ABR figures."""
    rows = []
    for r, scheme in zip(ran, FLOW_SCHEMES):
        for row in credits_rows([r.result]):
            row.update(part="flow-control", scheme=scheme)
            rows.append(row)
    return rows


def jain_fairness(x: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one
    takes everything (R. Jain, D. Chiu and W. Hawe, DEC-TR-301, 1984)."""
    total, squares = sum(x), sum(v * v for v in x)
    return total * total / (len(x) * squares) if squares > 0 else 1.0


def _flow_control_table(df: pd.DataFrame) -> str:
    import pandas as pd

    out = []
    for (_mix, local, remote), g in df.groupby(["mix", "local", "remote"], sort=False):
        for scheme in FLOW_SCHEMES:
            s = g[g.scheme == scheme]
            by = {r.stream: r for r in s.itertuples()}
            lo, re_ = by.get("local"), by.get("remote")
            if lo is None or re_ is None:
                continue
            out.append(
                {
                    "local/remote": f"{local}/{remote}",
                    "scheme": scheme,
                    "local Mb/s": _mbps(lo.throughput_bps),
                    "remote Mb/s": _mbps(re_.throughput_bps),
                    "fairness": f"{jain_fairness([lo.throughput_bps, re_.throughput_bps]):.2f}",
                    "cells lost": int(lo.cells_lost + re_.cells_lost),
                    "limited by (local; remote)": f"{lo.limited_by}; {re_.limited_by}",
                }
            )
    return pd.DataFrame(out).to_string(index=False)


def _protocol_name(value: str) -> str:
    return "udp" if str(value).startswith("udp") else "tcp"


def credits_rows(results: list[Result]) -> list[dict]:
    rows = []
    for result in results:
        switch = result.meta["testbed"]["switch"]
        flow = switch.get("flow_control", "none")
        for r, where, limited, evidence in _streams(result):
            local, remote = _protocol_name(r["local"]), _protocol_name(r["remote"])
            # The mixes the setup names: TCP against TCP, UDP against UDP, and TCP
            # against UDP (either way round: which stream is UDP is the row's protocol).
            mix = f"{local}-{remote}" if local == remote else "tcp-udp"
            rows.append(
                {
                    "part": "credits",
                    "flow_control": flow,
                    "credits": switch.get("credits"),
                    "mix": mix,
                    "stream": r["test"],
                    "protocol": r["protocol"],
                    "local": local,
                    "remote": remote,
                    "transmitter": r["transmitter"],
                    "receiver": r["receiver"],
                    "replication": int(r["replication"]),
                    "seed": int(r["seed"]),
                    "throughput_bps": _carried_bps(r),
                    "cells_lost": int(r["cells_lost"] or 0),
                    "lost_at": where,
                    "retransmitted_segments": int(r["retransmitted_segments"] or 0),
                    "timeouts": int(r["timeouts"] or 0),
                    "datagrams_refused_at_source": int(r["pdus_dropped_at_adapter"] or 0),
                    "limited_by": limited,
                    "limit_evidence": evidence,
                }
            )
    return rows


def _credits_table(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "flow control": df.flow_control,
            "local-remote": df.local + "-" + df.remote,
            "stream": df.stream,
            "protocol": df.protocol,
            "Mb/s": df.throughput_bps.map(_mbps),
            "cells lost": df.cells_lost,
            "lost at (port)": df.lost_at.map(lambda x: ", ".join(x) or "-"),
            "limited by": df.limited_by,
        }
    )
    agg = df.groupby(["flow_control", "local", "remote"], sort=False).agg(
        total=("throughput_bps", "sum"), lost=("cells_lost", "sum")
    )
    agg["lost"] = agg["lost"].astype(int)
    lines = [show.to_string(index=False), "aggregate per case:"]
    for (flow, lo, re_), a in agg.iterrows():
        lines.append(
            f"  {flow:6s} local {lo} / remote {re_}: {_mbps(a.total)} Mb/s, {a.lost} cells lost"
        )
    return "\n".join(lines)


# --- (d) switch buffering ----------------------------------------------------------------

#: What a buffer is counted in (docs/design.md §4: 256 cells = 12 KB): cell payload bytes.
CELL_PAYLOAD = 48


def burst_rows(result: Result) -> list[dict]:
    rows = []
    for r, where, limited, evidence in _streams(result):
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
                "throughput_bps": _udp_carried_bps(r),
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


# --- (b) five pairs ----------------------------------------------------------------------


def bdp_window(rate_bps: float, rtt_s: float) -> int:
    """A window of the bandwidth-delay product, rounded up to a KB."""
    return math.ceil(rate_bps * rtt_s / 8 / 1024) * 1024


def pair_rtt_s(testbed: dict, a: str, b: str) -> float:
    """Round trip between two hosts of the star: their sites' trunks to the hub and
    their machine-room links, both ways (no queueing)."""
    host = {h["name"]: h for h in testbed["hosts"]}
    delay = {t["from"]: t["delay_ms"] * 1e-3 for t in testbed["trunks"]}
    one_way = sum(
        delay[host[x]["site"]] + host[x]["distance_m"] * vocab.FIBRE_S_PER_M for x in (a, b)
    )
    return 2 * one_way


#: The five pairs' transmitting tests (wan-contention-five-pairs.netspec).
PAIRS = ("pair1", "pair2", "pair3", "pair4", "pair5")


def _five_pairs_runs(o: study.Options) -> list[Run]:
    """Each pair alone in the whole network (OUT/five-pairs-alone/PAIR), then all
    together (OUT/five-pairs)."""
    f = _experiment("five-pairs")
    alone = [Run(f, where=f"five-pairs-alone/{p}", alone=p) for p in PAIRS]
    return [*alone, Run(f, where="five-pairs")]


def five_pairs_rows(ran: list[Ran]) -> list[dict]:
    from cellbench.experiment import testbed as tbmod

    tb = tbmod.preset("wan-contention").to_dict()
    rows = []
    for r in ran:
        for c, where, limited, evidence in _streams(r.result):
            a, b = c["transmitter"], c["receiver"]
            # The ports a pair lost cells at (none named for a pair that lost none).
            where = where if c["cells_lost"] else []
            rows.append(
                {
                    "part": "five-pairs",
                    "pair": f"{a}->{b}",
                    "together": r.run.alone is None,
                    "window": int(c["sndbuf"]),
                    "rtt_ms": round(pair_rtt_s(tb, a, b) * 1e3, 3),
                    "transmitter": a,
                    "receiver": b,
                    "replication": int(c["replication"]),
                    "seed": int(c["seed"]),
                    "throughput_bps": float(c["throughput_bps"]),
                    "cells_lost": int(c["cells_lost"]),
                    "lost_at": where,
                    "retransmitted_segments": int(c["retransmitted_segments"]),
                    "timeouts": int(c["timeouts"]),
                    "limited_by": limited,
                    "limit_evidence": evidence,
                }
            )
    return rows


def five_pairs_aggregates(rows: list[dict]) -> dict:
    """The five pairs' throughputs summed, alone and together, per replication, then
    averaged over the replications with the lowest and highest."""
    sums: dict[tuple[bool, int], float] = {}
    for r in rows:
        key = (bool(r["together"]), int(r.get("replication", 0)))
        sums[key] = sums.get(key, 0.0) + float(r["throughput_bps"])
    out: dict = {"replications": len({rep for _, rep in sums})}
    for name, together in (("alone", False), ("together", True)):
        got = [v for (t, _), v in sums.items() if t == together] or [0.0]
        out[f"{name}_bps"] = sum(got) / len(got)
        out[f"{name}_range_bps"] = [min(got), max(got)]
    return out


# --- (e) ftp ----------------------------------------------------------------------------


def ftp_rows(result: Result) -> list[dict]:
    """NRL -> JPL: FTP with its default window, FTP with an extended window, ttcp; the
    round trip from the distance (the testbed's trunks, both ways)."""
    rtt_ms = round(2 * sum(t["delay_ms"] for t in result.meta["testbed"]["trunks"]), 3)
    rows = []
    for r, where, limited, evidence in _streams(result):
        rows.append(
            {
                "part": "ftp",
                "app": r["test"],
                "window": int(r["sndbuf"]),
                "disk_rate": float(r["disk"]) if r["test"].startswith("ftp") else None,
                "rtt_ms": rtt_ms,
                "transmitter": r["transmitter"],
                "receiver": r["receiver"],
                "replication": int(r["replication"]),
                "seed": int(r["seed"]),
                "throughput_bps": float(r["throughput_bps"]),
                "cells_lost": int(r["cells_lost"] or 0),
                "lost_at": where,
                "retransmitted_segments": int(r["retransmitted_segments"] or 0),
                "limited_by": limited,
                "limit_evidence": evidence,
            }
        )
    return rows


# --- common -----------------------------------------------------------------------------


def _senders(result: Result) -> pd.DataFrame:
    """The transmitting connections' rows (sinks are the other end of the same
    connection in the experiment language, and not rows of their own)."""
    df = _sorted(result)
    return df.astype(object).where(df.notna(), None)


def _sorted(result: Result) -> pd.DataFrame:
    return result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")


def run(
    parts: list[str] | None = None,
    *,
    seed: int = 1,
    workers: int = 0,
    out: str | Path | None = None,
    progress: bool = False,
) -> dict:
    """Run the parts (default all); ``{"rows": [...], "offered_load": {...}}``.
    With ``out``, part P's result is stored at ``out/P``."""
    opts = study.Options(seed=seed, workers=workers, out=None if out is None else Path(out),
                         progress=progress, parts=tuple(parts or ()))  # fmt: skip
    return document(opts, study.run_parts(WAN_CONTENTION, opts))


def document(opts: study.Options, got: dict) -> dict:
    """The study's JSON document: ``{"study", "seed", "rows", ...}`` (the parts' rows
    one after another, then each part's figures)."""
    return study.to_json(WAN_CONTENTION, opts, got)


def _mbps(x: float) -> str:
    return f"{x / 1e6:.3f}"


def report(res: dict) -> str:
    """Readable tables, one per part, with units and what limited each row."""
    import pandas as pd

    out = [f"wan-contention (seed {res['seed']}): rates in Mb/s (10^6 bit/s)"]
    rows = pd.DataFrame(res["rows"])
    for part, key in (("offered-load", "offered_load"), ("offered-load-udp", "offered_load_udp")):
        if key in res:
            out += ["", _offered_load_report(rows[rows.part == part], res[key], part)]
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
            _credits_table(df),
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
            _flow_control_table(rows[rows.part == "flow-control"]),
        ]
    if len(rows) and (rows.part == "burst").any():
        out += ["", _burst_report(rows[rows.part == "burst"], res.get("buffers", []))]
    if len(rows) and (rows.part == "five-pairs").any():
        out += ["", _five_pairs_report(rows[rows.part == "five-pairs"])]
    if len(rows) and (rows.part == "ftp").any():
        out += ["", _ftp_report(rows[rows.part == "ftp"])]
    return "\n".join(out)


def _lost_text(x: list[str]) -> str:
    return ", ".join(x) or "-"


def _size(n: float) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n:g} B"


def _burst_report(df: pd.DataFrame, buffers: list[dict]) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "direction": df.direction,
            "burst": df.burst_bytes.map(_size),
            "Mb/s": df.throughput_bps.map(_mbps),
            "cells lost": df.cells_lost,
            "lost at (port)": df.lost_at.map(_lost_text),
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
            f"  {b['direction']}: knee between {_size(b['knee_bytes'])} (no loss) and "
            f"{_size(b['first_lossy_bytes'])} bursts -> the {b['site']} edge buffer holds "
            f"{_size(lo)} .. {_size(hi)} (burst x (1 - T_in/T_out), OC-3c into DS-3); "
            f"configured {_size(b['buffer_bytes'])} ({b['buffer_cells']} cells)"
        )
    lines.append(
        "limited by: application = the 35 Mb/s source (1 KB bursts: small datagrams need "
        "more cells than the DS-3 carries); cell-loss where a burst overran the edge buffer"
    )
    return "\n".join(lines)


def _five_pairs_report(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "run": df.together.map({False: "alone", True: "together"}),
            "pair": df.pair,
            "RTT ms": df.rtt_ms,
            "window": df.window.map(_size),
            "Mb/s": df.throughput_bps.map(_mbps),
            "cells lost": df.cells_lost,
            "lost at (port)": df.lost_at.map(_lost_text),
            "limited by": df.limited_by,
        }
    )
    agg = five_pairs_aggregates(df.to_dict(orient="records"))
    reps = agg["replications"]
    if reps > 1:
        show.insert(2, "rep", df.replication)

    def spread(key: str) -> str:
        lo, hi = agg[f"{key}_range_bps"]
        return f" ({_mbps(lo)} to {_mbps(hi)})" if reps > 1 else ""

    return "\n".join(
        [
            "(b) five pairs across the WAN (TCP full blast, windows = bandwidth-delay "
            "products, cells paced at each VC's DS-3 rate), each alone, then all together",
            show.to_string(index=False),
            f"aggregate: {_mbps(agg['alone_bps'])} Mb/s summed over the pairs alone"
            f"{spread('alone')}, {_mbps(agg['together_bps'])} Mb/s together{spread('together')}"
            + (f"; each the mean of {reps} replications (lowest to highest)" if reps > 1 else ""),
            "published (004's text on its Fig. 5): 73.84 Mb/s summed alone, 55.19 Mb/s "
            "together (25% less)",
            "lost at: the ports on the pair's path that lost cells in that run (trunk a->b: "
            "site a's output port onto the link to b; a host: its access port)",
        ]
    )


def _ftp_report(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "app": df.app,
            "window": df.window.map(_size),
            "disk": df.disk_rate.map(lambda x: "-" if pd.isna(x) else _size(x) + "/s"),
            "Mb/s": df.throughput_bps.map(_mbps),
            "cells lost": df.cells_lost,
            "limited by": df.limited_by,
        }
    )
    rtt = float(df.rtt_ms.iloc[0])
    return "\n".join(
        [
            f"(e) file transfer across the United States, NRL (Washington) -> JPL "
            f"(Pasadena), each site on a DS-3, {rtt:g} ms round trip (3,700 km at 5 µs/km); "
            "ftp with its default window (4.3BSD's 4 KB), ftp with an extended (RFC 1323) "
            "window, ttcp full blast with it; the disk's 4 MB/s is an assumption",
            show.to_string(index=False),
            "limited by: window = window / RTT; application = the disk; link = the DS-3",
            "published (004's text): ttcp 23.8 Mb/s, ftp 2.88 Mb/s, ftp modified for "
            "extended windows 22.4 Mb/s (likely disk-limited); 004 gives no round trip for "
            "this path, and its window example implies near 60 ms coast to coast, not "
            f"{rtt:g} ms (docs/wan-contention.md)",
        ]
    )


def _offered_load_report(df: pd.DataFrame, f: dict, part: str) -> str:
    import pandas as pd

    agg = pd.DataFrame(offered_load_curve(df.to_dict(orient="records")))
    reps = int(f.get("replications", 1))
    table = pd.DataFrame(
        {
            "period µs": agg.period.map(lambda x: "full" if pd.isna(x) else f"{x:g}"),
            "offered Mb/s": agg.offered_bps.map(lambda x: "full blast" if pd.isna(x) else _mbps(x)),
            "carried Mb/s": agg.carried_bps.map(_mbps),
            ("cells lost" if reps == 1 else "cells lost (all runs)"): agg.cells_lost,
            "retransmits": agg.retransmitted_segments.astype(int),
            "timeouts": agg.timeouts.astype(int),
            "lost at (port)": agg.lost_at.map(_lost_text),
            "limited by": agg.limited_by,
        }
    )
    if reps > 1:
        # Mean over the replications, their range, and how many lost cells.
        table.insert(
            3,
            "min-max",
            [f"{_mbps(a)}-{_mbps(b)}" for a, b in zip(agg.carried_min_bps, agg.carried_max_bps)],
        )
        table.insert(4, "lossy runs", [f"{n}/{reps}" for n in agg.lossy_replications])
    tcp = part == "offered-load"
    if not tcp:
        table = table.drop(columns=["retransmits", "timeouts"])
    head = (
        "(a) offered load: three TCP connections (64 KB windows) paced by the application "
        "(NetSpec constant-rate: an 8 KB block every period), WPAFB->ITTC, NRL->ITTC and "
        "ARL->GSD, sharing the Washington->Kansas City DS-3 (256-cell port); last row: all "
        "three full blast; carried = bytes the receivers got over the periods their "
        "blocks own"
        if tcp
        else "(a, UDP) offered load: the same three pairs sending constant-rate UDP (an 8 KB "
        "datagram every period; last period: full blast at the VC's DS-3 cell rate); "
        "carried = datagrams that arrived over the periods they own"
    )
    full = (
        "all sources at full blast"
        if f["full_load_offered_bps"] is None
        else f"all sources at full blast, {_mbps(f['full_load_offered_bps'])} offered"
    )
    return "\n".join(
        [
            head,
            table.to_string(index=False),
            f"maximum lossless throughput {_mbps(f['lossless_bps'])} Mb/s (at "
            f"{_mbps(f['lossless_offered_bps'])} offered), peak {_mbps(f['peak_bps'])} Mb/s, "
            f"full load {_mbps(f['full_load_bps'])} Mb/s ({full})"
            + (
                f"; each the mean of {reps} replications (min-max: lossless "
                + ", peak ".join(
                    f"{_mbps(lo)}-{_mbps(hi)}"
                    for lo, hi in (f["lossless_range_bps"], f["peak_range_bps"])
                )
                + f", full load {_mbps(f['full_load_range_bps'][0])}-"
                f"{_mbps(f['full_load_range_bps'][1])}); a load is lossless only if no "
                "replication lost a cell"
                if reps > 1
                else ""
            ),
            "limited by: application = the sources' pacing (no loss); cell-loss at the ports "
            "named"
            + (
                " (TCP retransmits what was lost, and waits out timeouts)"
                if tcp
                else " (a lost cell loses its whole datagram)"
            ),
            *(
                [
                    CLAIMS["wan-contention offered-load"] + "; cellbench fidelity compares",
                    "published (004 Fig. 4 and its text, aggregate of the three pairs): "
                    f"maximum lossless about {PUBLISHED_OFFERED_LOAD['lossless']:g} Mb/s, "
                    f"peak about {PUBLISHED_OFFERED_LOAD['peak']:g} Mb/s, full load "
                    f"{PUBLISHED_OFFERED_LOAD['full_load']:g} Mb/s; the study's carrier "
                    "network was congestion-free and its losses at the edges, where this "
                    "part's are in the carrier (docs/wan-contention.md)",
                ]
                if tcp
                else []
            ),
        ]
    )


# --- the registry's entry ---------------------------------------------------------------


def _one(part: str) -> Callable[[study.Options], list[Run]]:
    return lambda o: [Run(_experiment(part), where=part)]


def _offered_load(part: str, key: str) -> Callable[[study.Options, list[Ran]], dict]:
    def collect(o: study.Options, ran: list[Ran]) -> dict:
        rows = [row for r in ran for row in offered_load_rows(r.result, part)]
        return {"rows": rows, key: offered_load_figures(rows)}

    return collect


def _burst(o: study.Options, ran: list[Ran]) -> dict:
    rows = burst_rows(ran[0].result)
    return {"rows": rows, "buffers": buffer_estimates(rows, ran[0].result.meta["testbed"])}


# --- what the parts compare with 004 (cellbench fidelity) ---------------------------------


def _in_mbps(bps: float) -> float:
    return bps / 1e6


def _offered_load_figures(got: dict) -> dict[str, study.Simulated]:
    """004 Fig. 4: lossless, peak and full-load aggregates, the drop, where cells are lost."""
    f = got["offered_load"]
    rows = [r for r in got["rows"] if r["part"] == "offered-load"]
    lost = sum(r["cells_lost"] for r in rows)
    ports = sorted({p for r in rows for p in r["lost_at"]})
    peak, full = _in_mbps(f["peak_bps"]), _in_mbps(f["full_load_bps"])
    return {
        "004-fig4-lossless": study.Simulated(
            _in_mbps(f["lossless_bps"]),
            detail=f"at {_in_mbps(f['lossless_offered_bps']):.2f} offered",
        ),
        "004-fig4-peak": study.Simulated(peak),
        "004-fig4-full": study.Simulated(full),
        "004-fig4-drop": study.Simulated(
            holds=lost > 0 and full < 0.5 * peak,
            detail=f"{lost} cells lost; peak {peak:.2f} -> full load {full:.2f} Mb/s "
            "(sharply: under half the peak)",
        ),
        "004-s5-edge": study.Simulated(
            holds=not any(p.startswith("trunk") for p in ports),
            detail="cells lost at " + (", ".join(ports) or "no port"),
        ),
    }


def _five_pairs_figures(got: dict) -> dict[str, study.Simulated]:
    """004 Fig. 5: the aggregate of the pairs alone, together, and the fall."""
    rows = got["rows"]
    alone = sum(r["throughput_bps"] for r in rows if not r["together"]) / 1e6
    together = sum(r["throughput_bps"] for r in rows if r["together"]) / 1e6
    return {
        "004-fig5-aggregate-alone": study.Simulated(alone),
        "004-fig5-aggregate-together": study.Simulated(together),
        "004-fig5-drop": study.Simulated(100 * (together / alone - 1)),
    }


def _credits_figures(got: dict) -> dict[str, study.Simulated]:
    """004 Table 3's text: TCP against TCP loses 15% without credits; credits raise every
    mix's aggregate; without them TCP still loses cells and UDP takes most."""
    agg: dict[tuple[str, str, str], float] = {}
    lost: dict[tuple[str, str, str], int] = {}
    for r in got["rows"]:
        k = (r["flow_control"], r["local"], r["remote"])
        agg[k] = agg.get(k, 0.0) + r["throughput_bps"] / 1e6
        lost[k] = lost.get(k, 0) + r["cells_lost"]
    mixes = sorted({(a, b) for _, a, b in agg})

    def udp_bps(mix: tuple[str, str]) -> float:
        return sum(
            r["throughput_bps"] / 1e6
            for r in got["rows"]
            if (r["flow_control"], r["local"], r["remote"]) == ("none", *mix)
            and r["protocol"] == "udp"
        )

    udp_share = [
        (mix, udp_bps(mix) / agg[("none", *mix)]) for mix in mixes if sorted(mix) == ["tcp", "udp"]
    ]
    tt = ("tcp", "tcp")
    return {
        "004-t3-tcp-tcp-drop": study.Simulated(
            100 * (agg[("none", *tt)] / agg[("credit", *tt)] - 1),
            detail=f"{agg[('none', *tt)]:.2f} without, {agg[('credit', *tt)]:.2f} Mb/s with",
        ),
        "004-t3-aggregate": study.Simulated(
            holds=all(agg[("credit", *m)] > agg[("none", *m)] for m in mixes),
            detail="; ".join(
                f"{a}-{b} {agg[('none', a, b)]:.1f} -> {agg[('credit', a, b)]:.1f}"
                for a, b in mixes
            ),
        ),
        "004-t3-tcp-loss": study.Simulated(
            holds=lost[("none", *tt)] > 0, detail=f"{lost[('none', *tt)]} cells lost"
        ),
        "004-t3-udp-dominates": study.Simulated(
            holds=any(share > 0.5 for _, share in udp_share),
            detail="; ".join(f"local {a}, remote {b}: UDP {s:.0%}" for (a, b), s in udp_share),
        ),
    }


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


def _ftp_figures(got: dict) -> dict[str, study.Simulated]:
    """004's NRL -> JPL figures: ttcp, unmodified FTP, FTP with extended windows."""
    by = {r["app"]: r for r in got["rows"]}

    def sim(app: str) -> study.Simulated:
        r = by[app]
        return study.Simulated(
            _in_mbps(r["throughput_bps"]),
            detail=f"window {r['window']}, RTT {r['rtt_ms']:g} ms, limited by {r['limited_by']}",
        )

    rtt = by["ttcp"]["rtt_ms"]
    return {
        "004-s3-ttcp": sim("ttcp"),
        "004-s3-ftp": sim("ftp-default"),
        "004-s3-ftp-extended": sim("ftp-extended"),
        # The paper's own arithmetic (window / round trip) on the path's round trip.
        "004-s3-64k-9mbps": study.Simulated(
            65536 * 8 / (rtt * 1e-3) / 1e6, detail=f"64 KB / the path's {rtt:g} ms round trip"
        ),
    }


#: What each part compares with 004 (cellbench fidelity).
_PUBLISHED = {
    "offered-load": (
        ("004-fig4-lossless", "004-fig4-peak", "004-fig4-full", "004-fig4-drop", "004-s5-edge"),
        _offered_load_figures,
    ),
    "five-pairs": (
        ("004-fig5-aggregate-alone", "004-fig5-aggregate-together", "004-fig5-drop"),
        _five_pairs_figures,
    ),
    "credits": (
        ("004-t3-tcp-tcp-drop", "004-t3-aggregate", "004-t3-tcp-loss", "004-t3-udp-dominates"),
        _credits_figures,
    ),
    "burst": (("004-fig8-gsd", "004-fig8-nrl"), _burst_figures),
    "ftp": (
        ("004-s3-64k-9mbps", "004-s3-ttcp", "004-s3-ftp", "004-s3-ftp-extended"),
        _ftp_figures,
    ),
}


def _part(name: str, doc: str, runs, collect) -> study.Part:
    # The parts' tables are printed together (``report``): their rows share one frame.
    compares = ()
    if name in _PUBLISHED:
        ids, figures = _PUBLISHED[name]
        compares = (study.Compares(ids, figures, what=name),)
    return study.Part(
        name, doc, runs, collect, report=lambda o, d: "", to_json=lambda o, d: d,
        published=compares,
    )  # fmt: skip


WAN_CONTENTION = study.Study(
    "wan-contention",
    "several transfers sharing WAN links: offered load, credits, flow control, burst, "
    "five pairs, ftp",
    (
        _part(
            "offered-load",
            "(a) three TCP sources paced into one DS-3 port, then full blast (OUT/full-load)",
            lambda o: [Run(_experiment(p), where=p) for p in ("offered-load", "full-load")],
            _offered_load("offered-load", "offered_load"),
        ),
        _part(
            "offered-load-udp",
            "(a) the same with constant-rate UDP",
            _one("offered-load-udp"),
            _offered_load("offered-load-udp", "offered_load_udp"),
        ),
        _part(
            "credits",
            "(c) without and with credit-based flow control",
            _credits_runs,
            lambda o, ran: {"rows": credits_rows([r.result for r in ran])},
        ),
        _part(
            "flow-control",
            "(c') the credits part's streams under UBR, EPD, credits, ABR EFCI and ABR ER",
            _flow_control_runs,
            lambda o, ran: {"rows": flow_control_rows(ran)},
        ),
        _part("burst", "(d) bursts against the edge buffers", _one("burst"), _burst),
        _part(
            "five-pairs",
            "(b) five TCP pairs, each alone, then together",
            _five_pairs_runs,
            lambda o, ran: {"rows": five_pairs_rows(ran)},
        ),
        _part(
            "ftp",
            "(e) NRL to JPL: ftp and ttcp",
            _one("ftp"),
            lambda o, ran: {"rows": ftp_rows(ran[0].result)},
        ),
    ),
    json_head=lambda o: {"study": "wan-contention", "seed": o.seed, "rows": []},
    report=lambda o, got: report(document(o, got)),
)
