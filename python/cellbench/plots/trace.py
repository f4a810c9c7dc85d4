"""``time-sequence``: a traced connection's data segments, ACKs and receive window
over time (tcptrace's style), from a result run with ``--trace``; a long transfer
gets a second panel zoomed in on a stretch from its middle."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import PlotError, subtitle
from cellbench.plots.kinds import Request
from cellbench.plots.pick import pick_connection, who


def segments(trace: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(data segments: time, start, end, retransmit), (ACKs: time, ack, advertised
    window win) from one connection's stored trace records (the traces table's
    ``t_s``, ``from_sender``, ``seq``, ``len``, ``ack``, ``win``): the data of the end
    that sent data first, and the other end's ACKs from then on."""
    if "seq" not in trace or (len(trace) and trace["seq"].isna().all()):
        raise PlotError(
            "this result's trace was stored as lines only (before its segments were "
            "kept as data): run it again with --trace to draw it"
        )
    tr = trace.sort_values("line_no") if "line_no" in trace else trace
    carries = (tr["len"] > 0).to_numpy()
    d = pd.DataFrame(columns=["time", "start", "end"])
    a = pd.DataFrame(columns=["time", "ack", "win"])
    if not carries.any():
        return d, a
    first = int(np.argmax(carries))
    sender = tr["from_sender"].to_numpy(bool) == bool(tr["from_sender"].iloc[first])
    after = np.arange(len(tr)) > first
    data = tr[carries & sender]
    start = data["seq"].astype("int64")
    d = pd.DataFrame(
        {"time": data["t_s"], "start": start, "end": (start + data["len"].astype("int64")) % 2**32}
    ).reset_index(drop=True)
    acked = tr[after & ~sender & tr["ack"].notna().to_numpy()]
    a = pd.DataFrame(
        {"time": acked["t_s"], "ack": acked["ack"].astype("int64"), "win": acked["win"]}
    ).reset_index(drop=True)
    high = d["end"].cummax().shift(fill_value=d["start"].iloc[0])
    d["retransmit"] = d["start"] < high
    return d, a


def time_sequence(result, fig, request: Request) -> None:
    """One connection's time-sequence graph (--connection, else the run's first traced)."""
    picked = request.picked
    run, connection, sel = pick_connection(request.stored, request.run, request.connection, "trace")
    d, a = segments(sel)
    if d.empty:
        raise PlotError(f"the trace of run {run} connection {connection} has no data segments")
    base = int(d["start"].min())
    # A long transfer packs its segments into one line: a second panel zooms in on
    # a stretch from its middle, where data, ACKs and the window edge read apart.
    zoom = len(d) > 60
    if zoom:
        fig.set_size_inches(7.5, 8.5)
        ax, zx = fig.subplots(2, 1, height_ratios=[1, 1.2])
        mid = len(d) // 2
        t0, t1 = float(d["time"].iloc[mid]), float(d["time"].iloc[min(mid + 12, len(d) - 1)])
        pad = 0.05 * (t1 - t0)
        _ts_panel(zx, d, a, base, (t0 - pad, t1 + pad))
        zx.set_title(f"zoom: {t0:.3f} s to {t1:.3f} s", fontsize=9)
        ax.axvspan(t0 - pad, t1 + pad, color="grey", alpha=0.25, label="zoomed below")
    else:
        ax = fig.add_subplot()
    _ts_panel(ax, d, a, base, None)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(
        f"Time–sequence graph: run {run}, connection {connection}{who(result, run, connection)}\n"
        + subtitle(result, picked),
        fontsize=10,
    )


def _ts_panel(ax, d: pd.DataFrame, a: pd.DataFrame, base: int, span) -> None:
    """Data as vertical bars (each segment's sequence range, tcptrace's style);
    the cumulative ACK and the receive window's right edge as steps."""
    if span is not None:
        d = d[(d["time"] >= span[0]) & (d["time"] <= span[1])]
        # The ACK in force when the span opens, and those within it.
        before = a[a["time"] < span[0]].tail(1)
        a = pd.concat([before, a[(a["time"] >= span[0]) & (a["time"] <= span[1])]])
    fresh = d[~d["retransmit"]]
    again = d[d["retransmit"]]
    ax.vlines(
        fresh["time"],
        (fresh["start"] - base) / 1024,
        (fresh["end"] - base) / 1024,
        color="tab:blue",
        linewidth=2.2,
        label="data segment (its sequence range)",
    )
    if len(again):
        ax.vlines(
            again["time"],
            (again["start"] - base) / 1024,
            (again["end"] - base) / 1024,
            color="tab:red",
            linewidth=3,
            label="retransmitted segment",
        )
    if not a.empty:
        ax.step(
            a["time"],
            (a["ack"] - base) / 1024,
            where="post",
            color="tab:green",
            linewidth=1,
            label="cumulative ACK",
        )
        edge = a.dropna(subset=["win"])
        if len(edge):
            ax.step(
                edge["time"],
                (edge["ack"] + edge["win"] - base) / 1024,
                where="post",
                color="tab:orange",
                linestyle="--",
                linewidth=1,
                label="receive window edge (ACK + advertised window)",
            )
    if span is not None:
        ax.set_xlim(*span)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative sequence number (KB, 1024 bytes)")
    ax.grid(True, alpha=0.3)
