"""wan-mismatch's experiment-file parts (docs/wan-mismatch.md): the slides' Experiment 4
(case 3, two separate runs) and Experiments 5 and 6 (throughput against the TCP segment
size), on the ``magic`` testbed preset (python/cellbench/experiment/testbed.py: the
MAGIC sites, Lawrence, Kansas City and South Dakota).

Cases 1 and 2 stay in ``reproduce.wan`` (specs built from the wan-mismatch preset); these
parts are experiment files beside this module, run by the experiment runner, so
``--out`` stores them where ``cellbench show`` and ``plot`` read them.

- ``case3``: (a) two SPARC-10s on TAXI, Kansas and South Dakota, unpaced, into an SGI
  Onyx on TAXI in Kansas City; (b) two paced Alphas on OC-3c in Lawrence into the same
  Onyx. Aggregate throughput and packet losses per second for each.
- ``segment-size``: Experiment 5 (Alpha OC-3c in Lawrence -> SPARC-10 TAXI in South
  Dakota) and Experiment 6 (Alpha -> Alpha at one site), the MTU swept from 1 KB to
  9180 bytes. The slides give both only as figures, without numbers: the study prints
  what cellbench finds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cellbench.reproduce import study, wan

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The parts, in the order they run and print (``cases``: reproduce.wan's cases 1 and 2).
PARTS = ("cases", "case3", "segment-size")
#: Part -> (its runs' names, each an experiment file wan-mismatch-NAME.netspec).
RUNS = {"case3": ("case3a", "case3b"), "segment-size": ("experiment-5", "experiment-6")}
#: TCP and IP headers without options (a segment is the MTU less these).
TCPIP_HEADER = 40


def _lost_at(result: Result, run: int) -> list[str]:
    """The switch ports that lost cells in a run (results name them by the host a port
    feeds, or ``trunk a->b``)."""
    ports = result.ports()
    hit = ports[(ports["run"] == run) & (ports["cells_lost"] > 0)]
    return sorted(str(h) for h in hit["host"])


def _rows(name: str, result: Result) -> list[dict]:
    df = result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")
    rows = []
    for r in df.to_dict(orient="records"):
        run = int(r["run"])
        refused = int(r["pdus_dropped_at_adapter"] or 0)
        # The ports that lost cells in the run, named for a connection that lost cells.
        ports = _lost_at(result, run) if r["cells_lost"] else []
        where = ports + (["sender's interface queue"] if refused else [])
        lost = int(r["data_pdus_lost"] or 0) + refused
        row = {
            "run": name,
            "transmitter": r["transmitter"],
            "receiver": r["receiver"],
            "replication": int(r["replication"]),
            "seed": int(r["seed"]),
            "seconds": float(r["duration_s"]),
            "throughput_bps": float(r["throughput_bps"]),
            "cells_lost": int(r["cells_lost"] or 0),
            "data_pdus_lost": int(r["data_pdus_lost"] or 0),
            "pdus_refused_at_sender": refused,
            "packets_lost": lost,
            "packets_lost_per_s": lost / float(r["duration_s"]),
            "lost_at": where,
            "retransmitted_segments": int(r["retransmitted_segments"] or 0),
            "timeouts": int(r["timeouts"] or 0),
            "limited_by": r["limited_by"],
            "limit_evidence": r["limit_evidence"],
        }
        if "mtu" in r:
            row["mtu"] = int(r["mtu"])
            row["segment"] = int(r["mtu"]) - TCPIP_HEADER
        rows.append(row)
    return rows


def run(
    parts: list[str] | None = None,
    *,
    seed: int = 1,
    workers: int = 0,
    out: str | Path | None = None,
    progress: bool = False,
) -> dict:
    """Run the experiment-file parts chosen (``case3``, ``segment-size``; default both);
    ``{"case3": [...], "segment_size": [...]}``, a row per connection. With ``out``, run
    R's result is stored at ``out/R`` (``out/case3a`` ... ``out/experiment-6``)."""
    chosen = tuple(p for p in (parts or PARTS) if p != "cases")
    for p in chosen:
        if p not in RUNS:
            raise ValueError(f"unknown part {p!r}: expected one of {', '.join(PARTS)}")
    if not chosen:
        return {}
    opts = study.Options(seed=seed, workers=workers, out=None if out is None else Path(out),
                         progress=progress, parts=chosen)  # fmt: skip
    got = study.run_parts(WAN_MISMATCH, opts)
    return {p.replace("-", "_"): rows for p, rows in got.items()}


def _mbps(x: float) -> str:
    return f"{x / 1e6:.3f}"


def _where(x: list[str]) -> str:
    return ", ".join(x) or "-"


def report(res: dict) -> str:
    import pandas as pd

    out: list[str] = []
    if "case3" in res:
        out.append(_case3_report(pd.DataFrame(res["case3"])))
    if "segment_size" in res:
        out.append(_segment_report(pd.DataFrame(res["segment_size"])))
    return "\n\n".join(out)


def _case3_report(df: pd.DataFrame) -> str:
    import pandas as pd

    show = pd.DataFrame(
        {
            "run": df["run"].str.replace("case", ""),
            "transmitter": df.transmitter,
            "receiver": df.receiver,
            "Mb/s": df.throughput_bps.map(_mbps),
            "cells lost": df.cells_lost,
            "packets lost": df.packets_lost,
            "lost at": df.lost_at.map(_where),
            "limited by": df.limited_by,
        }
    )
    reps = int(df.replication.nunique())
    if reps > 1:
        show.insert(3, "rep", df.replication)
    lines = [
        "case 3 (the slides' Experiment 4), two runs, TCP 128 KB windows, 64 KB writes: "
        "(3a) SPARC-10s on TAXI in Kansas (Lawrence) and South Dakota, unpaced, into the "
        "SGI Onyx (TAXI) in Kansas City; (3b) two Alphas on OC-3c in Lawrence, each paced "
        "at 35 Mb/s, into the same Onyx",
        show.to_string(index=False),
    ]
    for name, a in case3_aggregates(df).items():
        lines.append(
            f"  {name.replace('case', '')}: aggregate {_mbps(a['aggregate_bps'])} Mb/s, "
            f"{a['packets_lost_per_s']:.1f} packets lost per second"
            + (
                f" ({a['packets_lost']:g} in {a['seconds']:g} s)"
                if reps == 1
                else f" (mean of {reps} replications; aggregate "
                f"{_mbps(a['aggregate_min_bps'])} to {_mbps(a['aggregate_max_bps'])} Mb/s, "
                f"{a['packets_lost_per_s_min']:.1f} to {a['packets_lost_per_s_max']:.1f} "
                "packets lost per second)"
            )
        )
    lines.append(
        f"published (003 Experiment 4): (a) unpaced {PUBLISHED_CASE3['case3a']} Mb/s "
        "aggregate, two to four packet losses per second; (b) paced "
        f"{PUBLISHED_CASE3['case3b']} Mb/s aggregate, no packet loss; "
        "lost at: the switch port (named by the host it feeds) that dropped cells"
    )
    return "\n".join(lines)


#: 003 Experiment 4's results table: each run's aggregate throughput, Mb/s (its
#: comments add two to four packet losses per second in (a), none in (b)).
PUBLISHED_CASE3 = {"case3a": 46.71, "case3b": 61.17}


def case3_aggregates(df: pd.DataFrame) -> dict[str, dict]:
    """Per run (3a, 3b): the aggregate throughput (the connections' sum) and packets
    lost per second of each replication, averaged over the replications, with the
    lowest and highest (one replication: all three alike)."""
    out = {}
    for name, g in df.groupby("run", sort=False):
        per = g.groupby("replication").agg(
            bps=("throughput_bps", "sum"), lost=("packets_lost", "sum"), s=("seconds", "first")
        )
        per["rate"] = per.lost / per.s
        out[str(name)] = {
            "replications": len(per),
            "seconds": float(per.s.mean()),
            "aggregate_bps": float(per.bps.mean()),
            "aggregate_min_bps": float(per.bps.min()),
            "aggregate_max_bps": float(per.bps.max()),
            "packets_lost": float(per.lost.mean()),
            "packets_lost_per_s": float(per.rate.mean()),
            "packets_lost_per_s_min": float(per.rate.min()),
            "packets_lost_per_s_max": float(per.rate.max()),
        }
    return out


def _segment_report(df: pd.DataFrame) -> str:
    import pandas as pd

    lines = []
    what = {
        "experiment-5": "Experiment 5: an Alpha (OC-3c) in Lawrence to the SPARC-10 (TAXI) in "
        "South Dakota, 600 km",
        "experiment-6": "Experiment 6: an Alpha (OC-3c) to an Alpha (OC-3c) at the same site",
    }
    for name, g in df.groupby("run", sort=False):
        show = pd.DataFrame(
            {
                "MTU": g.mtu,
                "segment": g.segment,
                "Mb/s": g.throughput_bps.map(_mbps),
                "cells lost": g.cells_lost,
                "packets lost": g.packets_lost,
                "retransmits": g.retransmitted_segments,
                "lost at": g.lost_at.map(_where),
                "limited by": g.limited_by,
            }
        )
        lines += [
            f"{what[name]}; TCP 128 KB window, 64 KB writes, full blast; segment = MTU - 40 "
            "(OSF/1 sends 8192-byte segments at MTU 9180)",
            show.to_string(index=False),
            "",
        ]
    lines.append(
        "published: 003 gives Experiments 5 and 6 as figures only; these numbers are "
        "cellbench's. "
        "`cellbench plot OUT/experiment-5 --kind segment-size` draws each"
    )
    return "\n".join(lines)


def _frame(rows: list[dict]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows)


def _case3_figures(rows: list[dict]) -> dict[str, study.Simulated]:
    """003 Experiment 4: each run's aggregate and its packet losses per second."""
    out = {}
    for run, key in (("case3a", "003-e4a"), ("case3b", "003-e4b")):
        mine = [r for r in rows if r["run"] == run]
        seconds = mine[0]["seconds"]
        lost = sum(r["packets_lost"] for r in mine)
        out[f"{key}-aggregate"] = study.Simulated(
            sum(r["throughput_bps"] for r in mine) / 1e6,
            detail="limited by " + ", ".join(sorted({r["limited_by"] for r in mine})),
        )
        out[f"{key}-losses"] = study.Simulated(
            lost / seconds, detail=f"{lost} packets lost in {seconds:g} s"
        )
    return out


#: What each part compares with 003 (cellbench fidelity).
_PUBLISHED = {
    "case3": (
        study.Compares(
            ("003-e4a-aggregate", "003-e4a-losses", "003-e4b-aggregate", "003-e4b-losses"),
            _case3_figures,
            what="runs 3a and 3b",
        ),
    ),
}


def _part(name: str, doc: str, report) -> study.Part:
    return study.Part(
        name,
        doc,
        lambda o: [study.Run(f"wan-mismatch-{r}", where=r) for r in RUNS[name]],
        collect=lambda o, ran: [row for r in ran for row in _rows(r.run.where, r.result)],
        report=lambda o, rows: report(_frame(rows)),
        to_json=lambda o, rows: (
            {name.replace("-", "_"): rows}
            | ({"case3_aggregates": case3_aggregates(_frame(rows))} if name == "case3" else {})
        ),
        published=_PUBLISHED.get(name, ()),
    )


def _study() -> study.Study:
    return study.Study(
        "wan-mismatch",
        "MAGIC WAN: OC-3c senders into a TAXI receiver, with and without pacing",
        (
            wan.MISMATCH_CASES_PART,
            _part("case3", "the slides' Experiment 4: runs 3a and 3b", _case3_report),
            _part("segment-size", "Experiments 5 and 6", _segment_report),
        ),
        json_head=lambda o: {"study": "wan-mismatch", "rows": []},
        replications_help="runs per configuration (default 1)",
        emu=wan.emu_options,
    )


WAN_MISMATCH = _study()
