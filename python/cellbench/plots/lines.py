"""Mean throughput against one swept value, a line per ``--by`` value, the
replications' min–max as bars and lock-step points ringed: ``window`` (the smaller
socket buffer; on wan-window with the published points, window / RTT and the link's
TCP payload rate), ``message-size`` (the application's write size) and
``segment-size`` (MTU − 40, for a result whose testbed sweeps its MTU); and
``measurements``: each chosen cell's throughput against measurement number (the
replications one by one, as the LAN study plots its 50 per configuration), so a
reader sees which replications locked and which flowed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import MBPS, PlotError, size_axis, spread_note, subtitle, value_text
from cellbench.plots.kinds import Request
from cellbench.plots.pick import check_fit, facets
from cellbench.plots.published import hetero_published, wan_window_published


def _lines(kind: str, df: pd.DataFrame, x: str, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    """The series of a mean-against-X figure, refused when every one is a single
    point: a legend of one-point lines says less than the table (each --by value
    would pair with one x value only, as lan-buffers' window by SO_SNDBUF does)."""
    panels = facets(df, by)
    if len(panels) > 1 and all(part[x].nunique() < 2 for _, part in panels):
        raise PlotError(
            f"{kind} --by {by}: every line would be one point ({by} fixes {x}): "
            "the summary table holds these values"
        )
    return panels


#: How a point where most runs were in the Nagle/delayed-ACK lock-step is ringed.
LOCKSTEP_STYLE = {"marker": "o", "s": 130, "facecolors": "none", "edgecolors": "crimson",
                  "linewidths": 1.6, "zorder": 5}  # fmt: skip


def _line(ax, df: pd.DataFrame, x: str, label: str, **style) -> pd.DataFrame:
    """Mean throughput against ``x``, with the replications' min–max as bars, and a
    ring round each point where most runs were in the lock-step."""
    g = df.groupby(x)["mbps"].agg(["mean", "min", "max", "count"]).reset_index().sort_values(x)
    if g["count"].max() > 1:
        err = np.vstack([g["mean"] - g["min"], g["max"] - g["mean"]])
        ax.errorbar(g[x], g["mean"], yerr=err, marker="o", capsize=3, label=label, **style)
    else:
        ax.plot(g[x], g["mean"], marker="o", label=label, **style)
    if "lockstep" in df and df["lockstep"].notna().any():
        share = df["lockstep"].astype(float).groupby(df[x]).mean()
        lock = share.reindex(g[x]).fillna(0).to_numpy() > 0.5
        if lock.any():
            labelled = any(h.get_label() == LOCKSTEP_LABEL for h in ax.collections)
            ax.scatter(g[x][lock], g["mean"][lock], **LOCKSTEP_STYLE,
                       label="_" if labelled else LOCKSTEP_LABEL)  # fmt: skip
    return g


LOCKSTEP_LABEL = "Nagle/delayed-ACK lock-step (most runs)"


def _mean_axes(ax, df: pd.DataFrame, xlabel: str, what: str, result, picked) -> None:
    """The finish every mean-throughput-against-X figure shares: its labels (each with
    its unit), a grid, a zero-based linear y axis, the spread as the legend's title."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("mean " + MBPS)
    ax.grid(True, alpha=0.3)
    if ax.get_yscale() == "linear":
        ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, title=spread_note(df), title_fontsize=8)
    ax.set_title(f"Throughput against {what}\n" + subtitle(result, picked), fontsize=10)


def fit_window(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
    check_fit(df, "window", {"window": "the window (min of SO_SNDBUF, SO_RCVBUF)"}, params, by)
    return df


def window(result, fig, request: Request) -> None:
    """Throughput against the window; on wan-window beside the published points."""
    df, picked, by = request.rows, request.picked, request.by
    df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
    ax = fig.add_subplot()
    for label, part in _lines("window", df, "window", by):
        _line(ax, part, "window", label or "simulated")
    if result.meta.get("testbed", {}).get("name") == "wan-window":
        wan_window_published(result, ax, df["window"])
    size_axis(ax, df["window"])
    _mean_axes(ax, df, "TCP window = min(SO_SNDBUF, SO_RCVBUF) (bytes; K = 1024)",
               "window size", result, picked)  # fmt: skip


def fit_message_size(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    check_fit(df, "message-size", {"blocksize": "the message (write) size"}, params, by)
    return df


def message_size(result, fig, request: Request) -> None:
    """Throughput against the write size; on hetero-lan with the pair's published maximum."""
    df, picked, by = request.rows, request.picked, request.by
    ax = fig.add_subplot()
    for label, part in _lines("message-size", df, "blocksize", by):
        _line(ax, part, "blocksize", label or "simulated")
    pub = hetero_published(result, df)
    if pub:
        ax.axhline(pub[1], color="black", linestyle="--", linewidth=1,
                   label=f"published maximum of {pub[0].name}: {pub[1]:.2f} Mb/s "
                   "(the study's Table 3)")  # fmt: skip
    size_axis(ax, df["blocksize"])
    _mean_axes(ax, df, "message (write) size (bytes; K = 1024)", "message size", result, picked)


#: TCP and IP headers without options: a segment is the MTU less these.
TCPIP_HEADER = 40


def fit_segment_size(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    if "mtu" not in df:
        raise PlotError(
            "segment-size needs the MTU swept (testbed { mtu = $mtu; } and mtu = [...] "
            "in the sweep): this result has one MTU"
        )
    check_fit(df, "segment-size", {"mtu": "the MTU (segment size + 40)"}, params, by)
    return df


def segment_size(result, fig, request: Request) -> None:
    """Throughput against the TCP segment size, MTU − 40."""
    df, picked, by = request.rows, request.picked, request.by
    df = df.assign(segment=df["mtu"].astype(int) - TCPIP_HEADER)
    ax = fig.add_subplot()
    for label, part in _lines("segment-size", df, "segment", by):
        _line(ax, part, "segment", label or "simulated")
    _mean_axes(ax, df, "TCP segment size: MTU - 40 (bytes)", "TCP segment size", result, picked)


#: The most cells ``measurements`` draws as lines of their own (more are unreadable).
MEASURED_CELLS = 8


def _cells(df: pd.DataFrame, params: list[str]):
    """The parameters that vary, the keys of a cell (the sweep point and, in a result
    with several connections, the connection) and the cells' rows."""
    varying = [p for p in params if p in df and df[p].nunique(dropna=False) > 1]
    keys = ["point", *(["test"] if df["test"].nunique() > 1 else [])]
    return varying, keys, list(df.groupby(keys, sort=True))


def fit_measurements(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    varying, _, cells = _cells(df, params)
    if len(cells) > MEASURED_CELLS:
        raise PlotError(
            f"measurements draws at most {MEASURED_CELLS} cells, and {len(cells)} are "
            "picked: choose them with --where (e.g. --where snd=24K --where rcv=48K)"
            + (f"; the result varies {', '.join(varying)}" if varying else "")
        )
    return df


def measurements(result, fig, request: Request) -> None:
    """Throughput against measurement number (replication + 1), a line per cell."""
    df, picked = request.rows, request.picked
    varying, keys, cells = _cells(df, request.params)
    ax = fig.add_subplot()
    for _key, part in cells:
        first = part.iloc[0]
        label = ", ".join(f"{p}={value_text(first[p])}" for p in varying)
        if "test" in keys:
            label = f"{label}, {first['test']}" if label else str(first["test"])
        part = part.sort_values("replication")
        ax.plot(part["replication"] + 1, part["mbps"], marker="o", markersize=4,
                linewidth=0.8, label=label or "the result's one cell")  # fmt: skip
    lo, hi = float(df["mbps"].min()), float(df["mbps"].max())
    # Locked and flowing replications differ by orders of magnitude: a log axis shows both.
    if lo > 0 and hi / lo > 20:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("measurement number (replication)")
    ax.set_ylabel(MBPS)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Throughput of each measurement\n" + subtitle(result, picked), fontsize=10)
