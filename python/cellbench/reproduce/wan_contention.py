"""wan-contention (TESTBEDS.md): several transfers sharing WAN links and switch buffers.

Every part is an experiment file beside this module (``wan-contention-PART.netspec``)
on the ``wan-contention`` testbed preset (python/cellbench/experiment/testbed.py: five
sites on DS-3 and OC-3c access links around a carrier hub, 256-cell edge switches),
run by the experiment runner, so ``--out`` stores results that ``cellbench show`` and
``plot`` read. Every parameter comes from the setup and physical facts; nothing is
tuned to a published number.

- ``offered-load`` (a): three UDP constant-rate sources at different sites into
  lawrence, sharing the hub's DS-3 port; the ATM Forum's lossless, peak and
  full-load throughput.
- ``credits`` (c): a local and a remote host into one receiver on lawrence's switch,
  TCP/UDP against TCP/UDP, without flow control and with credit-based hop-by-hop
  flow control at every switch port (``sim::net::credit``), credits per VC per hop
  from the longest hop's round trip.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cellbench.reproduce import study

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The parts, in the order they run and print.
PARTS = ("offered-load", "credits")


def _experiment(part: str) -> str:
    return f"wan-contention-{part}"


def _run_part(part: str, *, seed: int, workers: int, out: Path | None, progress: bool,
              **sets: Any) -> Result:  # fmt: skip
    return study.run(
        _experiment(part),
        seed=seed,
        workers=workers,
        out=out,
        progress=progress,
        set=sets or None,
    )


# --- where cells were lost --------------------------------------------------------------


def _lost_at(result: Result) -> dict[int, dict[str, int]]:
    """Per run, the ports that lost cells and how many (``trunk kc->lawrence``: the
    hub's output port onto lawrence's access link; a host name: its access port)."""
    ports = result.ports()
    out: dict[int, dict[str, int]] = {}
    for r in ports[ports["cells_lost"] > 0].itertuples(index=False):
        out.setdefault(int(r.run), {})[str(r.host)] = int(r.cells_lost)
    return out


def _path_ports(result: Result, transmitter: str, receiver: str) -> list[str]:
    """The output ports a connection's cells cross, named as the result names ports:
    the trunks from the transmitter's site to the receiver's (fewest hops), then the
    receiver's access port."""
    tb = result.meta["testbed"]
    site = {h["name"]: h["site"] for h in tb["hosts"]}
    a, b = site[transmitter], site[receiver]
    links = [(t["from"], t["to"]) for t in tb["trunks"]]
    links += [(y, x) for x, y in links]
    came: dict[str, tuple[str, str] | None] = {a: None}
    frontier = [a]
    while frontier and b not in came:
        nxt = []
        for here in frontier:
            for x, y in links:
                if x == here and y not in came:
                    came[y] = (x, y)
                    nxt.append(y)
        frontier = nxt
    hops: list[str] = []
    at = b
    while came.get(at):
        x, y = came[at]  # type: ignore[misc]
        hops.append(f"trunk {x}->{y}")
        at = x
    return [*reversed(hops), receiver]


def _loss_note(lost: dict[str, int], path: list[str]) -> tuple[list[str], str]:
    where = [p for p in path if p in lost]
    text = ", ".join(f"{lost[p]} cells at {p}" for p in where)
    return where, text


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
        return "cell-loss", f"lost {text}"
    refused = int(r["pdus_dropped_at_adapter"] or 0)
    if r["protocol"] == "udp" and refused:
        return "link", (
            f"the source's interface queue refused {refused} datagrams (ENOBUFS): it "
            "writes faster than its adapter may send"
        )
    return r["limited_by"], r["limit_evidence"]


def offered_load_rows(result: Result) -> list[dict]:
    df = _senders(result)
    lost = _lost_at(result)
    rows = []
    for r in df.to_dict(orient="records"):
        path = _path_ports(result, r["transmitter"], r["receiver"])
        where, text = _loss_note(lost.get(int(r["run"]), {}), path)
        carried = _udp_carried_bps(r)
        cells = int(r["cells_lost"] or 0)
        limited, evidence = _limit(r, text)
        rows.append(
            {
                "part": "offered-load",
                "period": float(r["period_us"]),
                "blocksize": int(r["blocksize"]),
                "offered_bps": float(r["offered_bps"]),
                "transmitter": r["transmitter"],
                "receiver": r["receiver"],
                "protocol": r["protocol"],
                "replication": int(r["replication"]),
                "seed": int(r["seed"]),
                "throughput_bps": carried,
                "sender_bps": float(r["throughput_bps"]),
                "datagrams_sent": int(r["datagrams_sent"] or 0),
                "datagrams_received": int(r["datagrams_received"] or 0),
                "cells_lost": cells,
                "lost_at": where,
                "limited_by": limited,
                "limit_evidence": evidence,
            }
        )
    return rows


def offered_load_figures(rows: list[dict]) -> dict:
    """The ATM Forum's three figures from the aggregate curve: maximum lossless
    throughput (carried at the highest offered load that lost no cell), peak
    throughput, and full-load throughput (at the highest offered load: full blast)."""
    points: dict[tuple[int, float], list[dict]] = {}
    for r in rows:
        points.setdefault((r["replication"], r["period"]), []).append(r)
    agg = sorted(
        (
            sum(r["offered_bps"] for r in rs),
            sum(r["throughput_bps"] for r in rs),
            sum(r["cells_lost"] for r in rs),
        )
        for rs in points.values()
    )
    lossless = [c for o, c, lost in agg if lost == 0]
    return {
        "lossless_bps": lossless[-1] if lossless else 0.0,
        "lossless_offered_bps": max((o for o, c, lost in agg if lost == 0), default=0.0),
        "peak_bps": max(c for _, c, _ in agg),
        "full_load_bps": agg[-1][1],
        "full_load_offered_bps": agg[-1][0],
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
    hops += [need(h["phy"], h["distance_m"] * FIBRE_S_PER_M) for h in hosts]
    return max(hops)


#: Light in fibre, as the testbed's distances count it (5 µs per km).
FIBRE_S_PER_M = 5e-9
#: The carrier hub every site's access link reaches (the preset's star).
HUB = "kc"
#: The sites of the credits part's hosts (law4, law1 at lawrence; kclab2 at kclab).
CREDIT_SITES = ("lawrence", "kclab")


def _run_credits(*, seed: int, workers: int, out: Path | None, progress: bool) -> list[Result]:
    from cellbench.experiment import testbed as tbmod

    tb = tbmod.preset("wan-contention").to_dict()
    n = hop_credits(tb, CREDIT_SITES)
    results = []
    for flow, sets in (
        ("none", {}),
        ("credit", {"testbed.switch.flow_control": "credit", "testbed.switch.credits": n}),
    ):
        where = out / flow if out is not None else None
        results.append(
            _run_part("credits", seed=seed, workers=workers, out=where, progress=progress, **sets)
        )
    return results


def _protocol_name(value: str) -> str:
    return "udp" if str(value).startswith("udp") else "tcp"


def credits_rows(results: list[Result]) -> list[dict]:
    rows = []
    for result in results:
        switch = result.meta["testbed"]["switch"]
        flow = switch.get("flow_control", "none")
        lost = _lost_at(result)
        df = _senders(result)
        for r in df.to_dict(orient="records"):
            local, remote = _protocol_name(r["local"]), _protocol_name(r["remote"])
            # The mixes the setup names: TCP against TCP, UDP against UDP, and TCP
            # against UDP (either way round: which stream is UDP is the row's protocol).
            mix = f"{local}-{remote}" if local == remote else "tcp-udp"
            path = _path_ports(result, r["transmitter"], r["receiver"])
            where, text = _loss_note(lost.get(int(r["run"]), {}), path)
            limited, evidence = _limit(r, text)
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


# --- common -----------------------------------------------------------------------------


def _senders(result: Result) -> pd.DataFrame:
    """The transmitting connections' rows (sinks are the other end of the same
    connection in the experiment language, and not rows of their own)."""
    df = result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")
    return df.astype(object).where(df.notna(), None)


#: Part -> its rows from its stored result(s).
_ROWS = {"offered-load": lambda rs: offered_load_rows(rs[0]), "credits": credits_rows}


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
    chosen = list(parts or PARTS)
    for p in chosen:
        if p not in PARTS:
            raise ValueError(f"unknown part {p!r}: expected one of {', '.join(PARTS)}")
    rows: list[dict] = []
    extra: dict[str, Any] = {}
    for p in chosen:
        where = Path(out) / p if out is not None else None
        if p == "credits":
            results = _run_credits(seed=seed, workers=workers, out=where, progress=progress)
        else:
            results = [_run_part(p, seed=seed, workers=workers, out=where, progress=progress)]
        part_rows = _ROWS[p](results)
        rows += part_rows
        if p == "offered-load":
            extra["offered_load"] = offered_load_figures(part_rows)
    return {"study": "wan-contention", "seed": seed, "rows": rows, **extra}


def _mbps(x: float) -> str:
    return f"{x / 1e6:.3f}"


def report(res: dict) -> str:
    """Readable tables, one per part, with units and what limited each row."""
    import pandas as pd

    out = [f"wan-contention (seed {res['seed']}): rates in Mb/s (10^6 bit/s)"]
    rows = pd.DataFrame(res["rows"])
    if "offered_load" in res:
        df = rows[rows.part == "offered-load"].copy()
        agg = (
            df.groupby(["replication", "period"], sort=False)
            .agg(
                offered=("offered_bps", "sum"),
                carried=("throughput_bps", "sum"),
                cells_lost=("cells_lost", "sum"),
            )
            .reset_index()
            .sort_values("offered")
        )
        where = df.groupby(["replication", "period"], sort=False)["lost_at"].agg(
            lambda xs: ", ".join(sorted({p for x in xs for p in x})) or "-"
        )
        agg["lost at"] = [where[(r, p)] for r, p in zip(agg.replication, agg.period)]
        table = pd.DataFrame(
            {
                "period µs": agg.period.map(lambda x: f"{x:g}"),
                "offered Mb/s": agg.offered.map(_mbps),
                "carried Mb/s": agg.carried.map(_mbps),
                "cells lost": agg.cells_lost,
                "lost at (port)": agg["lost at"],
            }
        )
        f = res["offered_load"]
        out += [
            "",
            "(a) offered load: three UDP constant-rate sources (kclab1, mpls1, dc1 -> "
            "lawrence) sharing the hub's DS-3 port onto lawrence (256 cells); carried = "
            "datagrams that arrived",
            table.to_string(index=False),
            f"maximum lossless throughput {_mbps(f['lossless_bps'])} Mb/s (at "
            f"{_mbps(f['lossless_offered_bps'])} offered), peak {_mbps(f['peak_bps'])} Mb/s, "
            f"full load {_mbps(f['full_load_bps'])} Mb/s (all sources at full blast, "
            f"{_mbps(f['full_load_offered_bps'])} offered)",
            "limited by: no loss -> the sources' rate (application); loss -> cell-loss at "
            "the ports named (a lost cell loses its whole datagram)",
        ]
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
    return "\n".join(out)
