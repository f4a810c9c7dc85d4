"""What a figure may draw from a stored result: the rows ``--where`` picks, the fit
check (each axis swept, nothing else varying unless picked or drawn per value with
``--by``), ``--by``'s facets, and a one-run figure's run and connection."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import PlotError, value_text

#: The runs columns a figure reads besides the sweep parameters: its rows' identity and
#: ends, what the sweep kinds aggregate (``load.carried_bps``'s UDP, TCP and paced
#: loads; ``buffers``, ``lines``) and what a one-run figure's title and counts quote
#: (``series``). ``plot`` and ``report`` read only these of a stored result
#: (``Result.narrowed``): the rows' other hundred columns are ~1 KB a run.
DRAWN_COLUMNS = (
    "run", "point", "replication", "connection", "test", "transmitter", "receiver",
    "protocol", "traffic", "blocksize", "sndbuf", "rcvbuf", "offered_bps", "period_us",
    "duration_s", "throughput_bps", "throughput_mbit_ttcp", "goodput_bps", "lockstep",
    "datagrams_received", "sender_seconds", "receiver_seconds", "cells_lost",
    "sim_seconds", "timeouts", "retransmitted_segments",
)  # fmt: skip


def drawn_columns(result, also=()) -> list[str]:
    """The runs columns a figure of ``result`` reads: ``DRAWN_COLUMNS``, the sweep's
    parameters and ``also`` (the columns ``--where`` and ``--by`` name)."""
    return list(dict.fromkeys([*DRAWN_COLUMNS, *result.params, *also]))


def result_rows(result) -> pd.DataFrame:
    """The result's rows with their throughput in Mb/s (``mbps``); none is refused."""
    df = result.rows_view()
    if df.empty:
        raise PlotError("the result has no runs yet")
    df = df.assign(mbps=df["throughput_bps"].astype(float) / 1e6)
    return df


def select(df: pd.DataFrame, where: list[str], params: list[str]) -> tuple[pd.DataFrame, dict]:
    """The rows each ``KEY=VALUE`` of ``where`` picks (a parameter or a row column),
    and the picked values (for the title)."""
    from cellbench.experiment.lang import number_value

    picked = {}
    for item in where:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise PlotError(f"--where {item!r}: expected KEY=VALUE, e.g. --where snd=16K")
        if key not in df.columns:
            raise PlotError(
                f"--where {key}: not a parameter of the result; its parameters: "
                + (", ".join(params) or "none")
                + " (or a row column: test, sndbuf, rcvbuf, blocksize, ...)"
            )
        col = df[key]
        value: object = text.strip()
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            try:
                value = number_value(str(value))
            except ValueError:
                raise PlotError(f"--where {item}: {key} is a number, not {text!r}") from None
            sel = df[np.isclose(col.astype(float), float(value), rtol=1e-9, atol=0)]
        else:
            sel = df[col.astype(str) == value]
        if sel.empty:
            raise PlotError(f"--where {item}: no run has it; {key} takes {_values(col)}")
        picked[key] = value
        df = sel
    return df, picked


def _values(col: pd.Series) -> str:
    vals = sorted({value_text(v) for v in col.dropna()}, key=_natural)
    return ", ".join(vals[:8]) + (", ..." if len(vals) > 8 else "")


def _natural(text: str):
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def check_fit(
    df: pd.DataFrame,
    kind: str,
    axes: dict[str, str],
    params: list[str],
    by: str | None,
    per_connection: bool = True,
    swept: str = "all",
) -> None:
    """Refuse a result the figure would misdraw: each axis (column -> what it is)
    must take two values or more, and every other parameter of the sweep (and, for
    a per-connection figure, the connection) must be fixed by the axes and --by,
    else the figure would average unrelated runs into one point."""
    flat = [c for c in axes if df[c].nunique(dropna=True) < 2]
    # A grid may be one row or one column ("any"); a line or surface needs every axis.
    for col, what in axes.items():
        if col in flat and (swept == "all" or len(flat) == len(axes)):
            raise PlotError(
                f"{kind} needs {what} swept: the result has {what} {_values(df[col]) or 'none'}"
            )
    if by is not None and by not in df.columns:
        raise PlotError(
            f"--by {by}: not a parameter of the result; its parameters: "
            + (", ".join(params) or "none")
        )
    keys = [*axes, *([by] if by else [])]
    candidates = [*params, *(["test"] if per_connection else [])]
    varying = []
    for p in candidates:
        if p in keys or p not in df.columns:
            continue
        if df.groupby(keys, dropna=False)[p].nunique(dropna=False).max() > 1:
            varying.append(f"{p} ({_values(df[p])})")
    if varying:
        along = " and ".join(axes.values())
        raise PlotError(
            f"{kind}: {', '.join(varying)} {'vary' if len(varying) > 1 else 'varies'} besides "
            f"{along}: pick a value with --where KEY=VALUE or draw one per value with --by KEY"
        )


def facets(df: pd.DataFrame, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per value of ``by`` in natural order (one, unlabelled, without)."""
    if by is None:
        return [("", df)]
    keys = sorted(df[by].dropna().unique(), key=lambda v: _natural(value_text(v)))
    out = [(f"{by}={value_text(k)}", df[df[by] == k]) for k in keys]
    if df[by].isna().any():
        out.append((f"{by}=none", df[df[by].isna()]))
    return out


def one_run(result, df: pd.DataFrame, run: int | None, where: list[str]) -> int | None:
    """The run a one-run figure draws: --run, else the first that --where picks."""
    if not where:
        return run
    runs = sorted(int(r) for r in df["run"].unique())
    if run is not None and run not in runs:
        raise PlotError(f"--run {run} is not among the runs --where picks: {few(runs)}")
    return run if run is not None else runs[0]


def pick_run(df: pd.DataFrame, run: int | None, what: str) -> tuple[int, pd.DataFrame]:
    """The samples of one run (default: the first that has any)."""
    if run is None:
        run = int(df["run"].iloc[0])
    sel = df[df["run"] == run]
    if sel.empty:
        runs = sorted(int(r) for r in df["run"].unique())
        raise PlotError(f"no {what} for run {run}: the result has it for runs {few(runs)}")
    return run, sel


def pick_connection(
    df: pd.DataFrame, run: int | None, connection: int | None, what: str, none_note: str = ""
) -> tuple[int, int, pd.DataFrame]:
    """The samples of one connection of one run (default: the first of each that has any)."""
    run, sel = pick_run(df, run, what)
    if connection is None:
        connection = int(sel["connection"].iloc[0])
    part = sel[sel["connection"] == connection]
    if part.empty:
        have = sorted(int(c) for c in sel["connection"].unique())
        raise PlotError(
            f"no {what} for run {run} connection {connection}: "
            f"it has connections {few(have)}{none_note}"
        )
    return run, connection, part


def few(values: list[int]) -> str:
    """The first ten of ``values``, for a message."""
    return ", ".join(map(str, values[:10])) + (", ..." if len(values) > 10 else "")


def run_end(rows: pd.DataFrame, run: int) -> float | None:
    """The simulated time the run ended (its last event), for the time axis."""
    ends = rows.loc[rows["run"] == run, "sim_seconds"].dropna()
    return float(ends.max()) if len(ends) else None


def who(result, run: int, connection: int) -> str:
    """A connection's ends, for a title: " (sender → receiver)"."""
    rows = result.rows_view()
    row = rows[(rows["run"] == run) & (rows["connection"] == connection)]
    return f" ({row['transmitter'].iloc[0]} → {row['receiver'].iloc[0]})" if len(row) else ""
