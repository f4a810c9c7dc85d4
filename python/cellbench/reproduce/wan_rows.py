"""The rows the table-shaped WAN studies share (wan-window, europe-vp and wan-mismatch's
cases): one per connection per configuration and replication, parameters named as in
the experiment language, the simulator's measures beside them, and one readable table.

Each study module names its own parameters and what its table adds (reproduce.wan_window,
europe_vp, wan_mismatch); this module holds what they have in common.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cellbench.data.published import CLAIMS
from cellbench.reproduce import study

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The simulator's per-connection values a row carries (with their Python types).
MEASURES = {
    "transmitter": str,
    "receiver": str,
    "completed": bool,
    "bytes": int,
    "throughput_bps": float,
    "data_pdus_sent": int,
    "data_pdus_lost": int,
    "cells_lost": int,
    "cells_policed": int,
    "retransmitted_segments": int,
    "timeouts": int,
    "limited_by": str,
    "limit_evidence": str,
}


def result_rows(result: Result) -> list[dict]:
    """A result's connection rows in the study's order: replications outermost."""
    df = result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")
    return df.to_dict(orient="records")


def with_measures(params: dict, r: dict) -> dict:
    """A study row: its parameters, replication and seed, and the simulator's measures."""
    import pandas as pd

    met = None if pd.isna(r["met_contract"]) else bool(r["met_contract"])
    ident = {"replication": int(r["replication"]), "seed": int(r["seed"])}
    return _row(params | ident, {k: r[k] for k in MEASURES}, met)


def _row(params: dict, c: dict, met_contract: bool | None) -> dict:
    # Stored rows come back as numpy values: make them the simulator's own types.
    c = {k: None if c[k] is None else kind(c[k]) for k, kind in MEASURES.items()}
    sent = c["data_pdus_sent"]
    row = params | {
        "transmitter": c["transmitter"],
        "receiver": c["receiver"],
        "completed": c["completed"],
        "bytes": c["bytes"],
        "throughput_bps": c["throughput_bps"],
        "segment_loss_rate": c["data_pdus_lost"] / sent if sent else 0.0,
        "cells_lost": c["cells_lost"],
        "cells_policed": c["cells_policed"],
        "retransmitted_segments": c["retransmitted_segments"],
        "timeouts": c["timeouts"],
        "limited_by": c["limited_by"],
        "limit_evidence": c["limit_evidence"],
    }
    if met_contract is not None:
        row["met_contract"] = met_contract
    return row


def _param(key: str, value: Any) -> Any:
    """A stored sweep value as the rows give it: spacing ``off`` is None (back to back)."""
    if key == "spacing_us":
        return None if value == "off" else float(value)
    return int(value)


def sweep_rows(params: list[str], result: Result) -> list[dict]:
    """An experiment's stored (or in-memory) result as a study's rows, its sweep
    ``params`` first: one per connection per configuration and replication,
    replications outermost."""
    return [with_measures({k: _param(k, r[k]) for k in params}, r) for r in result_rows(result)]


def frame(rows: list[dict]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows)


def records(df: pd.DataFrame) -> list[dict]:
    """A study's rows as JSON rows (NaN as null)."""
    return df.astype(object).where(df.notna(), None).to_dict(orient="records")


def report(
    name: str, df: pd.DataFrame, by_transmitter: bool = False, published_line: str = ""
) -> str:
    """A readable table with units: a row per connection (``by_transmitter``: named by
    its transmitter), beside the published throughput where the rows carry it
    (``published_bps``); ``published_line``: a last line giving the published figures."""
    import pandas as pd

    show = df.copy()
    show["Mb/s"] = (show.throughput_bps / 1e6).round(3)
    show["seg loss"] = show.segment_loss_rate.map(lambda x: f"{100 * x:.2f}%")
    cols = [c for c in ("case", "pacing_mbps", "spacing_us", "window", "write_size") if c in show]
    cols += ["transmitter"] if by_transmitter else []
    cols += ["Mb/s"]
    # A run the simulated-time limit (or its event budget) cut: its rate is the rate so
    # far, which `show` and the report page say too (their `truncated`).
    cut = "completed" in show and not show.completed.fillna(True).astype(bool).all()
    if cut:
        show["run"] = show.completed.map(lambda x: "cut" if x is False else "done")
        cols += ["run"]
    cols += ["seg loss", "cells_lost", "cells_policed", "timeouts"]
    if "published_bps" in show:
        show["published Mb/s"] = show.published_bps / 1e6
        show["error"] = (100 * (show.throughput_bps - show.published_bps) / show.published_bps).map(
            lambda x: f"{x:+.1f}%"
        )
        cols += ["published Mb/s", "error"]
    if "met_contract" in show:
        show["contract"] = show.met_contract.map({True: "met", False: "VIOLATED"})
        cols += ["contract"]
    show["limited by"] = show.limited_by
    cols += ["limited by"]
    if "pacing_mbps" in show:
        show["pacing_mbps"] = show.pacing_mbps.map(lambda x: "none" if pd.isna(x) else f"{x:g}")
    if "spacing_us" in show:
        show["spacing_us"] = show.spacing_us.map(lambda x: "none" if pd.isna(x) else f"{x:g}")
    head = f"{name}: throughput in Mb/s (10^6 bit/s); segment loss = data PDUs lost / sent"
    foot = "limited by: what bound each connection (--json: limited_by, limit_evidence)"
    if cut:
        foot += (
            "\ncut: the run reached the simulated-time limit (or its event budget) before "
            "it finished; its Mb/s is the rate so far (--json: completed false; the "
            "evidence says where it was cut)"
        )
    if name in CLAIMS:
        foot += "\n" + CLAIMS[name] + "; cellbench fidelity compares"
    if published_line:
        foot += "\n" + published_line
    return head + "\n" + show[cols].to_string(index=False) + "\n" + foot


def table_part(
    name: str,
    part: str,
    doc: str,
    runs: Callable[[study.Options], list[study.Run]],
    collect: Callable[[list[study.Ran]], pd.DataFrame],
    published: tuple[study.Compares, ...] = (),
    **report_options: Any,
) -> study.Part:
    """A part whose rows (``collect``: a DataFrame from its runs) are one table
    (``report``, with ``report_options``) and the JSON's ``rows``."""
    return study.Part(
        part,
        doc,
        runs,
        collect=lambda o, ran: collect(ran),
        report=lambda o, df: report(name, df, **report_options),
        to_json=lambda o, df: {"rows": records(df)},
        published=published,
    )


def emu_options(a) -> tuple[dict, list[str]]:
    """An emulated WAN study's simulator options and --set values: its seed alone."""
    return {"seed": a.seed, "sets": []}, []
