"""wan-contention's flow-control-five-pairs part (b'): the five pairs, all together,
under the flow-control part's five schemes (issue 29): UBR with tail drop and with EPD,
credits, ABR with EFCI marking and ABR with ERICA's explicit rate.

Each pair's adapter paces its VC at its path's peak cell rate (the five-pairs file's
``pacing``). Under UBR and credits that pacing stays; an ABR circuit refuses pacing
(its ACR is its rate), so under the ABR schemes the pacing becomes the circuit's PCR:
a source never goes faster than the paced one did, and the network's feedback can
only slow it (docs/wan-contention.md). Per scheme and pair: goodput, cells lost, the
peak queue on its path, the ACR (ABR), what limited it; per scheme Jain's fairness
index of the five goodputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cellbench.reproduce import study
from cellbench.reproduce.study import Ran, Run
from cellbench.reproduce.tables import Command, table
from cellbench.reproduce.wan_contention.common import (
    experiment,
    lost_text,
    mbps,
    part,
    ports_on_paths,
    size,
    streams,
)
from cellbench.reproduce.wan_contention.credits import hop_credits
from cellbench.reproduce.wan_contention.five_pairs import pair_rtt_s
from cellbench.reproduce.wan_contention.flow_control import (
    ABR_ICR,
    FLOW_SCHEMES,
    jain_fairness,
    scheme_sets,
)

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

PART_NAME = "flow-control-five-pairs"


def _pairs(o: study.Options) -> list[tuple[str, str, str, float | None]]:
    """The five-pairs file's transmitting tests as this run's options build them:
    (test, transmitter, receiver, pacing in Mb/s of cells or None)."""
    from cellbench.experiment.plan import make_plan

    f = experiment("five-pairs")
    sets = [*o.sets, *o.file_sets.get(f, ())]
    first = make_plan(study.experiment_file(f), sets=sets).experiments[0]
    return [(c.name, c.transmitter, c.receiver, c.pacing_mbps) for c in first.connections]


def abr_source(test: str, pacing_mbps: float | None) -> dict[str, str]:
    """The settings that make ``test``'s data circuit ABR: its pacing off, and the rate
    it paced at its PCR (none paced: TM 4.0's default PCR, the adapter's cell rate)."""
    pcr = "" if pacing_mbps is None else f"pcr = {pacing_mbps:g}M, "
    return {f"{test}.protocol.pacing": "off", f"{test}.service": f"abr ({pcr}icr = {ABR_ICR})"}


def _runs(o: study.Options) -> list[Run]:
    """All five pairs at once under each scheme (OUT/flow-control-five-pairs/SCHEME)."""
    from cellbench.experiment import testbed as tbmod

    tb = tbmod.preset("wan-contention").to_dict()
    pairs = _pairs(o)
    site = {h["name"]: h["site"] for h in tb["hosts"]}
    # Credits per VC per hop cover the longest hop any pair crosses (as the credits part).
    n = hop_credits(tb, tuple(sorted({site[h] for _, a, b, _ in pairs for h in (a, b)})))
    abr: dict[str, str] = {}
    for test, _, _, pacing in pairs:
        abr |= abr_source(test, pacing)
    return [
        Run(
            experiment("five-pairs"),
            where=f"{PART_NAME}/{s}",
            sets=study.sets(scheme_sets(s, n, abr)),
        )
        for s in FLOW_SCHEMES
    ]


def _peak_queues(result: Result) -> dict[int, dict[str, int]]:
    """Per run, each port's peak occupancy (cells)."""
    ports = result.ports()
    out: dict[int, dict[str, int]] = {}
    for r in ports.itertuples(index=False):
        out.setdefault(int(r.run), {})[str(r.host)] = int(r.peak_occupancy)
    return out


def _optional(x: object) -> float | None:
    return None if x is None else float(x)  # type: ignore[arg-type]


def scheme_rows(ran: list[Ran]) -> list[dict]:
    """One row per scheme, run and pair."""
    rows: list[dict] = []
    for r, scheme in zip(ran, FLOW_SCHEMES):
        result = r.result
        tb = result.meta["testbed"]
        switch = tb["switch"]
        peaks = _peak_queues(result)
        got = list(streams(result))
        paths = ports_on_paths(tb, [(c["transmitter"], c["receiver"]) for c, *_ in got])
        mine: list[dict] = []
        for c, where, limited, evidence in got:
            a, b = c["transmitter"], c["receiver"]
            peak = peaks.get(int(c["run"]), {})
            path = paths[(a, b)]
            # The fullest port on the pair's path (the first of them along it on a tie).
            at = max(path, key=lambda p: peak.get(p, 0))
            mine.append(
                {
                    "part": PART_NAME,
                    "scheme": scheme,
                    "pair": f"{a}->{b}",
                    "test": c["test"],
                    "transmitter": a,
                    "receiver": b,
                    "rtt_ms": round(pair_rtt_s(tb, a, b) * 1e3, 3),
                    "window": int(c["sndbuf"]),
                    "credits": switch.get("credits"),
                    "replication": int(c["replication"]),
                    "seed": int(c["seed"]),
                    "goodput_bps": float(c["goodput_bps"]),
                    "throughput_bps": float(c["throughput_bps"]),
                    "cells_lost": int(c["cells_lost"] or 0),
                    "data_pdus_lost": int(c["data_pdus_lost"] or 0),
                    "lost_at": where if c["cells_lost"] else [],
                    "retransmitted_segments": int(c["retransmitted_segments"] or 0),
                    "timeouts": int(c["timeouts"] or 0),
                    "peak_queue_cells": int(peak.get(at, 0)),
                    "peak_queue_at": at,
                    "acr_bps": _optional(c["abr_acr_bps"]),
                    "acr_min_bps": _optional(c["abr_acr_min_bps"]),
                    "limited_by": limited,
                    "limit_evidence": evidence,
                }
            )
        # Jain's index of the five goodputs, per run (each run is one replication).
        for rep in sorted({m["replication"] for m in mine}):
            group = [m for m in mine if m["replication"] == rep]
            fairness = jain_fairness([m["goodput_bps"] for m in group])
            for m in group:
                m["fairness_jain"] = fairness
        rows += mine
    return rows


def scheme_summary(rows: list[dict]) -> list[dict]:
    """Per scheme (and replication): the five pairs' aggregate goodput, Jain's index,
    cells and PDUs lost, and the peak queue of any port on their paths."""
    out: dict[tuple[str, int], dict] = {}
    for r in rows:
        s = out.setdefault(
            (r["scheme"], r["replication"]),
            {"scheme": r["scheme"], "replication": r["replication"], "goodput_bps": 0.0,
             "fairness_jain": r["fairness_jain"], "cells_lost": 0, "data_pdus_lost": 0,
             "peak_queue_cells": -1, "peak_queue_at": ""},
        )  # fmt: skip
        s["goodput_bps"] += r["goodput_bps"]
        s["cells_lost"] += r["cells_lost"]
        s["data_pdus_lost"] += r["data_pdus_lost"]
        if r["peak_queue_cells"] > s["peak_queue_cells"]:
            s["peak_queue_cells"], s["peak_queue_at"] = r["peak_queue_cells"], r["peak_queue_at"]
    return list(out.values())


def _acr(x: float | None) -> str:
    return "-" if x is None or x != x else mbps(x)


def scheme_report(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "scheme": df.scheme,
            "pair": df.pair,
            "RTT ms": df.rtt_ms,
            "window": df.window.map(size),
            "goodput Mb/s": df.goodput_bps.map(mbps),
            "cells lost": df.cells_lost,
            "lost at (port)": df.lost_at.map(lost_text),
            "peak queue": df.peak_queue_cells.astype(str) + " at " + df.peak_queue_at,
            "ACR Mb/s": df.acr_bps.map(_acr),
            "limited by": df.limited_by,
        }
    )
    summary = pd.DataFrame(scheme_summary(df.to_dict(orient="records")))
    many = summary.replication.nunique() > 1
    if many:
        show.insert(1, "rep", df.replication)
    total = pd.DataFrame(
        {
            "scheme": summary.scheme,
            **({"rep": summary.replication} if many else {}),
            "aggregate Mb/s": summary.goodput_bps.map(mbps),
            "fairness": summary.fairness_jain.map(lambda f: f"{f:.2f}"),
            "cells lost": summary.cells_lost,
            "PDUs lost": summary.data_pdus_lost,
            "peak queue": summary.peak_queue_cells.astype(str) + " at " + summary.peak_queue_at,
        }
    )
    credits = df.credits.dropna()
    return "\n".join(
        [
            "(b') the five pairs together under UBR (tail drop, EPD), credits "
            f"({int(credits.iloc[0]) if len(credits) else '-'} per VC per hop: the longest "
            "hop's round trip), ABR EFCI and ABR ER; under ABR each pair's DS-3 pacing is "
            f"its circuit's PCR, sources from ICR = {ABR_ICR} bit/s of cells; goodput: bytes "
            "delivered to the receiving application over its time; ACR: at the end of the "
            "run; peak queue: the fullest port on the pair's path (cells)",
            show.to_string(index=False),
            "per scheme (fairness: Jain's index of the five goodputs):",
            total.to_string(index=False),
        ]
    )


def docs_table(command: Command) -> str:
    """docs/wan-contention.md's table of this part (``Study.tables``)."""
    rows = [r for r in command.json()["rows"] if r["part"] == PART_NAME]
    per_pair = [
        [
            r["scheme"], r["pair"], f"{r['rtt_ms']:g}", mbps(r["goodput_bps"]), r["cells_lost"],
            f"{r['peak_queue_cells']} ({r['peak_queue_at']})", _acr(r["acr_bps"]), r["limited_by"],
        ]
        for r in rows
    ]  # fmt: skip
    per_scheme = [
        [
            s["scheme"], mbps(s["goodput_bps"]), f"{s['fairness_jain']:.2f}", s["cells_lost"],
            s["data_pdus_lost"], f"{s['peak_queue_cells']} ({s['peak_queue_at']})",
        ]
        for s in scheme_summary(rows)
    ]  # fmt: skip
    return (
        f"{command.source}, the five pairs together under each scheme (goodput: "
        "bytes delivered to the receiving application; peak queue: the fullest port on the "
        "pair's path, cells; ACR at the end of the run, Mb/s of cells):\n\n"
        + table(
            [
                "scheme",
                "pair",
                "RTT ms",
                "goodput Mb/s",
                "cells lost",
                "peak queue",
                "ACR",
                "limited by",
            ],
            per_pair,
            {2, 3, 4, 6},
        )  # fmt: skip
        + "\n\nPer scheme (fairness: Jain's index of the five goodputs):\n\n"
        + table(
            ["scheme", "aggregate Mb/s", "fairness", "cells lost", "PDUs lost", "peak queue"],
            per_scheme,
            {1, 2, 3, 4},
        )  # fmt: skip
    )


PART = part(
    PART_NAME,
    "(b') the five pairs together under UBR, EPD, credits, ABR EFCI and ABR ER",
    _runs,
    lambda o, ran: {"rows": scheme_rows(ran)},
)
