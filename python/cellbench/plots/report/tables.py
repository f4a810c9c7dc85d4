"""The page's tables: a DataFrame as a table that sorts on a click of a header, and a
result's summary as the page shows it (per sweep point and connection, the published
value and the error where the repository has it, what the engines record besides, and
where connections contended, ``experiment/results/contention.py``'s instruments)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


#: The runs columns the tables read besides the sweep parameters (``Result.summary``
#: and ``contention`` read their own): the keys they aggregate by, the buffers the
#: published value is found by, the emulator's lateness and real time, the real
#: engine's notes.
TABLE_COLUMNS = ("run", "connection", "test", "transmitter", "receiver", "sndbuf", "rcvbuf",
                 "lateness_p99_us", "real_time", "notes")  # fmt: skip

#: A summary table longer than this is cut (with a line saying so): a sweep of more
#: points than a reader scrolls through is read from its figures and `cellbench show`.
MAX_TABLE_ROWS = 2000


def _cell(value) -> tuple[str, str]:
    """(text, sort key) of one table cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "", ""
    if isinstance(value, bool):
        return ("yes" if value else "no"), str(int(value))
    if isinstance(value, float):
        text = f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
        return text, repr(value)
    if isinstance(value, int):
        return str(value), str(value)
    return str(value), ""


def table(df: pd.DataFrame, caption: str = "", cls: str = "") -> str:
    """A DataFrame as a sortable HTML table (a click on a header sorts by it)."""
    import numpy as np

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    shown = df.head(MAX_TABLE_ROWS)
    for row in shown.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, np.generic):
                v = v.item()
            text, key = _cell(v)
            attr = f' data-sort="{html.escape(key)}"' if key else ""
            num = ' class="num"' if key and not isinstance(v, bool) else ""
            if not key and len(text) > 40:
                num = ' class="prose"'
            cells.append(f"<td{attr}{num}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cut = (
        f'<p class="note">the first {MAX_TABLE_ROWS} of {len(df)} rows; cellbench show '
        "prints them all</p>"
        if len(df) > MAX_TABLE_ROWS
        else ""
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="sortable {cls}">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{cut}"
    )


def varying_params(result, df: pd.DataFrame) -> tuple[list[str], dict]:
    """The parameters that vary over the result, and the fixed ones with their value."""
    varying, fixed = [], {}
    for p in result.params:
        if p not in df:
            continue
        values = df[p].dropna().unique()
        if len(values) > 1:
            varying.append(p)
        elif len(values) == 1:
            fixed[p] = values[0]
    return varying, fixed


def _per_summary_row(result, summary: pd.DataFrame, rows: pd.DataFrame, **agg) -> pd.DataFrame:
    """Row columns aggregated per summary row (``agg`` as pandas' named aggregation),
    in the summary's order: its keys are those ``Result.summary`` groups by."""
    keys = [k for k in [*result.params, "connection", "test", "transmitter", "receiver"]
            if k in summary]  # fmt: skip
    per = rows.groupby(keys, dropna=False, sort=False).agg(**agg)
    return per.reindex(summary.set_index(keys).index)


def published_column(result, summary: pd.DataFrame, rows: pd.DataFrame):
    """(column name, the published value of each summary row) where the repository
    carries the study's table: lan-buffers' grid (ttcp's Mbit/s) by send and receive
    buffer, wan-window's (Mb/s) by window; None for any other testbed."""
    import pandas as pd

    from cellbench.data.published import lan_buffer_table, wan_window_table

    name = result.meta.get("testbed", {}).get("name")
    if name not in ("lan-buffers", "wan-window") or summary.empty:
        return None
    bufs = _per_summary_row(result, summary, rows, snd=("sndbuf", "first"), rcv=("rcvbuf", "first"))
    pairs = [(int(s), int(r)) if pd.notna(s) and pd.notna(r) else None
             for s, r in zip(bufs["snd"], bufs["rcv"])]  # fmt: skip
    if name == "lan-buffers":
        table_ = lan_buffer_table()
        col, values = "published Mbit/s (2^20)", [p and table_.get(p) for p in pairs]
    else:
        table_ = {w: bps / 1e6 for w, bps in wan_window_table().items()}
        col, values = "published Mb/s", [p and table_.get(min(p)) for p in pairs]
    if not any(v is not None for v in values):
        return None
    return col, values


def summary_frame(result) -> tuple[pd.DataFrame, dict]:
    """The result's summary as the page shows it: per sweep point and connection,
    the varying parameters, the throughput over the replications, the published
    value and the error against it where there is one, what bound it and the
    evidence; and the parameters fixed over the whole result."""
    summary = result.summary()
    rows = result.rows_view()
    varying, fixed = varying_params(result, rows)
    if summary.empty:
        return summary, fixed
    show = summary[[*varying]].copy()
    ends = summary["transmitter"] + " → " + summary["receiver"]
    if summary["test"].nunique(dropna=False) > 1:
        show["test"] = summary["test"]
        show["transmitter → receiver"] = ends
    else:
        # One connection: said once, under the table, with the fixed parameters.
        fixed = {"connection": f"{summary['test'].iloc[0]} ({ends.iloc[0]})", **fixed}
    for col in ("runs", "truncated", "mean_mbps", "min_mbps", "max_mbps", "mean_mbit_ttcp",
                "mean_trans_per_s", "retransmits", "lockstep"):  # fmt: skip
        if col in summary:
            show[col] = summary[col]
    pub = published_column(result, summary, rows)
    if pub is not None:
        col, values = pub
        show[col] = values
        ours = summary["mean_mbit_ttcp"] if "Mbit" in col else summary["mean_mbps"]
        show["error %"] = [
            100 * (o - p) / p if p else None for o, p in zip(ours, values)
        ]  # fmt: skip
    engine_columns(result, rows, summary, show)
    show["limited_by"] = summary["limited_by"]
    show["limit_evidence"] = summary["limit_evidence"]
    return show, fixed


def engine_columns(result, rows: pd.DataFrame, summary: pd.DataFrame, show) -> None:
    """What an emulated or real result records besides: the emulator's worst p99
    lateness per point and whether every run kept real time; the real engine's
    notes (the kernel's refusals, a daemon's rate cap)."""
    if rows["lateness_p99_us"].notna().any():
        per = _per_summary_row(
            result, summary, rows,
            p99=("lateness_p99_us", "max"),
            real=("real_time", lambda s: bool(s.fillna(False).all())),
        )  # fmt: skip
        show["worst p99 lateness µs"] = per["p99"].to_numpy()
        show["real time"] = per["real"].to_numpy()
    if rows["notes"].notna().any():
        per = _per_summary_row(
            result, summary, rows, notes=("notes", lambda s: "; ".join(dict.fromkeys(s.dropna())))
        )
        show["notes"] = per["notes"].to_numpy()


def contention_tables(result) -> list[str]:
    """Where connections contended (a timeout, a starved connection, a port that lost
    cells): the instruments of ``experiment/results/contention.py`` as tables."""
    from cellbench.experiment.results import contention

    out = []
    c = contention.connections(result)
    if c is not None:
        out.append(
            table(
                c,
                "contention per connection: goodput Mb/s, retransmit timeouts, "
                "longest backoff (2^k), s waiting on retransmit timers; per point "
                "Jain's fairness index and the starved connections",
                "contention",
            )
        )
    p = contention.ports(result)
    if p is not None:
        out.append(
            table(
                p,
                "ports that lost cells: cells carried, of PDUs delivered and "
                "not (wasted), idle s while a connection through it ran, cells "
                "lost by cause",
                "ports",
            )
        )
    return out
