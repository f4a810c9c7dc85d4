"""The classic figure kinds, drawn from a stored result (never by re-running).

- ``buffer-grid``: mean throughput over sender SO_SNDBUF × receiver SO_RCVBUF, a heat
  map with the values written in and lock-step cells marked.
- ``buffer-surface``: the same as a 3-D surface.
- ``window``: throughput against the TCP window (the smaller socket buffer).
- ``message-size``: throughput against the application's write size.
- ``offered-load``: aggregate carried load against aggregate offered load, with the
  lossless point (the highest load carried whole, nothing retransmitted or lost)
  and the peak marked.
- ``time-sequence``: a traced connection's data segments and ACKs over time.
- ``cwnd``: a connection's congestion window, ssthresh and data in flight over time.
- ``queue``: switch output ports' occupancy (cells) over time.

The last two need a result run with ``--series`` (``series=True``).

matplotlib's Agg backend (files only, no display); rates in Mb/s = 10^6 bit/s.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

KINDS = (
    "buffer-grid",
    "buffer-surface",
    "window",
    "message-size",
    "offered-load",
    "time-sequence",
    "cwnd",
    "queue",
)
MBPS = "throughput (Mb/s, 10^6 bit/s)"


class PlotError(ValueError):
    """The result does not hold what the figure kind needs."""


def _figure(size=(7.5, 5.5)):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def _size(n: float) -> str:
    n = int(n)
    if n == 52428:
        return "51K"
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


def _subtitle(result) -> str:
    m = result.meta
    exp = m.get("experiment", {}).get("file") or m.get("study", "")
    reps = m.get("replications")
    testbed = m.get("testbed", {}).get("name", "?")
    return f"{Path(str(exp)).name}, testbed {testbed}, {reps} replication(s), seed {m.get('seed')}"


def _rows(result) -> pd.DataFrame:
    df = result.to_pandas()
    if df.empty:
        raise PlotError("the result has no runs yet")
    df = df.assign(mbps=df["throughput_bps"].astype(float) / 1e6)
    return df


def _grid(result):
    import numpy as np
    import pandas as pd

    df = _rows(result)
    g = df.groupby(["sndbuf", "rcvbuf"]).agg(mbps=("mbps", "mean"), lock=("lockstep", "mean"))
    snd = sorted(df["sndbuf"].dropna().unique())
    rcv = sorted(df["rcvbuf"].dropna().unique())
    z = np.full((len(snd), len(rcv)), np.nan)
    lock = np.zeros_like(z, dtype=bool)
    for (s, r), row in g.iterrows():
        z[snd.index(s), rcv.index(r)] = row["mbps"]
        lock[snd.index(s), rcv.index(r)] = (
            bool(row["lock"] > 0.5) if pd.notna(row["lock"]) else False
        )
    return snd, rcv, z, lock


def buffer_grid(result, fig) -> None:
    import numpy as np
    from matplotlib.patches import Patch

    snd, rcv, z, lock = _grid(result)
    ax = fig.add_subplot()
    im = ax.imshow(z, origin="lower", cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(rcv)), [_size(x) for x in rcv])
    ax.set_yticks(range(len(snd)), [_size(x) for x in snd])
    ax.set_xlabel("receiver SO_RCVBUF (bytes; K = 1024)")
    ax.set_ylabel("sender SO_SNDBUF (bytes; K = 1024)")
    top = np.nanmax(z) if np.isfinite(z).any() else 1.0
    for i in range(len(snd)):
        for j in range(len(rcv)):
            if np.isfinite(z[i, j]):
                color = "black" if z[i, j] > 0.6 * top else "white"
                text = f"{z[i, j]:.1f}" + ("*" if lock[i, j] else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
    fig.colorbar(im, ax=ax, label="mean " + MBPS)
    ax.set_title("Throughput over send × receive buffer\n" + _subtitle(result), fontsize=10)
    ax.legend(
        handles=[Patch(color="none", label="* = Nagle/delayed-ACK lock-step (most replications)")],
        loc="upper left",
        bbox_to_anchor=(0, -0.12),
        frameon=False,
        fontsize=8,
    )


def buffer_surface(result, fig) -> None:
    import mpl_toolkits.mplot3d  # noqa: F401 - registers the 3-D projection
    import numpy as np

    snd, rcv, z, _ = _grid(result)
    if len(snd) < 2 or len(rcv) < 2:
        raise PlotError(
            f"buffer-surface needs at least 2 send and 2 receive buffer sizes, "
            f"the result has {len(snd)} x {len(rcv)}"
        )
    ax = fig.add_subplot(projection="3d")
    x, y = np.meshgrid(np.array(rcv, float) / 1024, np.array(snd, float) / 1024)
    surf = ax.plot_surface(x, y, np.nan_to_num(z), cmap="viridis", edgecolor="grey", linewidth=0.3)
    ax.set_xlabel("receiver SO_RCVBUF (KB)")
    ax.set_ylabel("sender SO_SNDBUF (KB)")
    ax.set_zlabel("Mb/s")
    fig.colorbar(surf, ax=ax, shrink=0.6, label="mean " + MBPS)
    ax.set_title("Throughput surface over send × receive buffer\n" + _subtitle(result), fontsize=10)


def _series(df: pd.DataFrame, x: str, by: str, label) -> list[tuple[str, pd.DataFrame]]:
    out = []
    for key, part in df.groupby(by, sort=True):
        g = part.groupby(x)["mbps"].agg(["mean", "min", "max"]).reset_index().sort_values(x)
        out.append((label(key), g))
    return out


def _lines(ax, series, x: str) -> None:
    import numpy as np

    for label, g in series:
        err = np.vstack([g["mean"] - g["min"], g["max"] - g["mean"]])
        ax.errorbar(g[x], g["mean"], yerr=err, marker="o", capsize=3, label=label)
    ax.set_ylabel("mean " + MBPS + ", bars: min–max")
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)


def window(result, fig) -> None:
    import numpy as np

    df = _rows(result)
    df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
    ax = fig.add_subplot()
    _lines(ax, _series(df, "window", "blocksize", lambda b: f"writes of {int(b)} bytes"), "window")
    ax.set_xlabel("TCP window = min(SO_SNDBUF, SO_RCVBUF) (bytes)")
    ax.set_title("Throughput against window size\n" + _subtitle(result), fontsize=10)


def message_size(result, fig) -> None:
    import numpy as np

    df = _rows(result)
    df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
    ax = fig.add_subplot()
    _lines(ax, _series(df, "blocksize", "window", lambda w: f"window {int(w)} bytes"), "blocksize")
    ax.set_xlabel("message (write) size (bytes)")
    ax.set_title("Throughput against message size\n" + _subtitle(result), fontsize=10)


def offered_load(result, fig) -> None:
    df = _rows(result)
    if df["offered_bps"].isna().all():
        raise PlotError(
            "offered-load needs constant-rate traffic (burst/burstq with blocksize and period): "
            "the result's connections have no offered load"
        )
    lost = df["retransmitted_segments"].fillna(0) + df["cells_lost"].fillna(0)
    per_run = (
        df.assign(lost=lost)
        .groupby(["point", "run"])
        .agg(
            offered=("offered_bps", "sum"), carried=("throughput_bps", "sum"), lost=("lost", "sum")
        )
        .reset_index()
    )
    pts = (
        per_run.groupby("point")
        .agg(offered=("offered", "mean"), carried=("carried", "mean"), lost=("lost", "max"))
        .sort_values("offered")
    )
    x, y = pts["offered"] / 1e6, pts["carried"] / 1e6
    ax = fig.add_subplot()
    ax.plot(x, y, marker="o", label="aggregate carried load")
    top = float(max(x.max(), y.max())) * 1.05
    ax.plot([0, top], [0, top], linestyle=":", color="grey", label="carried = offered")
    whole = pts[(pts["lost"] == 0) & (pts["carried"] >= 0.98 * pts["offered"])]
    if len(whole):
        lw = whole.iloc[-1]
        ax.plot(
            lw["offered"] / 1e6,
            lw["carried"] / 1e6,
            "s",
            markersize=11,
            mfc="none",
            mew=2,
            color="tab:green",
            label=f"lossless point ({lw['carried'] / 1e6:.1f} Mb/s)",
        )
    else:
        ax.plot([], [], " ", label="lossless point: none (every load lost cells or retransmitted)")
    peak = pts.loc[pts["carried"].idxmax()]
    ax.plot(
        peak["offered"] / 1e6,
        peak["carried"] / 1e6,
        "^",
        markersize=11,
        color="tab:red",
        label=f"peak ({peak['carried'] / 1e6:.1f} Mb/s)",
    )
    ax.set_xlabel("aggregate offered load (Mb/s, 10^6 bit/s)")
    ax.set_ylabel("aggregate carried load (Mb/s, 10^6 bit/s)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Carried against offered load\n" + _subtitle(result), fontsize=10)


_SEG = re.compile(
    r"^\s*(\d+(?:\.\d+)?) (\S+) > (\S+): \S*\s*(?:(\d+):(\d+)\((\d+)\))?.*?(?: ack (\d+))?"
)


def parse_trace(lines: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(data segments: time, start, end, retransmit), (ACKs: time, ack) from a segment trace."""
    import pandas as pd

    data, acks = [], []
    sender = None
    for line in lines:
        m = _SEG.match(line)
        if not m:
            continue
        t, src = float(m.group(1)), m.group(2)
        if m.group(6) and int(m.group(6)) > 0:
            sender = sender or src
            if src == sender:
                data.append((t, int(m.group(4)), int(m.group(5))))
                continue
        ack = re.search(r" ack (\d+)", line)
        if ack and sender is not None and src != sender:
            acks.append((t, int(ack.group(1))))
    d = pd.DataFrame(data, columns=["time", "start", "end"])
    a = pd.DataFrame(acks, columns=["time", "ack"])
    if not d.empty:
        high = d["end"].cummax().shift(fill_value=d["start"].iloc[0])
        d["retransmit"] = d["start"] < high
    return d, a


def time_sequence(result, fig, run: int | None = None, connection: int | None = None) -> None:
    tr = result.traces()
    if tr.empty:
        raise PlotError("the result holds no trace: run it with --trace")
    run, connection, sel = _pick_connection(tr, run, connection, "trace")
    d, a = parse_trace(list(sel["line"]))
    if d.empty:
        raise PlotError(f"the trace of run {run} connection {connection} has no data segments")
    base = int(d["start"].min())
    ax = fig.add_subplot()
    fresh = d[~d["retransmit"]]
    again = d[d["retransmit"]]
    ax.vlines(
        fresh["time"],
        (fresh["start"] - base) / 1024,
        (fresh["end"] - base) / 1024,
        color="tab:blue",
        linewidth=1.5,
        label="data segment (sequence range)",
    )
    if len(again):
        ax.vlines(
            again["time"],
            (again["start"] - base) / 1024,
            (again["end"] - base) / 1024,
            color="tab:red",
            linewidth=2,
            label="retransmission",
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
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative sequence number (KB, 1024 bytes)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(
        f"Time–sequence graph: run {run}, connection {connection}{_who(result, run, connection)}\n"
        + _subtitle(result),
        fontsize=10,
    )


def _pick_run(df: pd.DataFrame, run: int | None, what: str) -> tuple[int, pd.DataFrame]:
    """The samples of one run (default: the first that has any)."""
    if run is None:
        run = int(df["run"].iloc[0])
    sel = df[df["run"] == run]
    if sel.empty:
        runs = sorted(int(r) for r in df["run"].unique())
        raise PlotError(f"no {what} for run {run}: the result has it for runs {_few(runs)}")
    return run, sel


def _pick_connection(
    df: pd.DataFrame, run: int | None, connection: int | None, what: str, none_note: str = ""
) -> tuple[int, int, pd.DataFrame]:
    """The samples of one connection of one run (default: the first of each that has any)."""

    run, sel = _pick_run(df, run, what)
    if connection is None:
        connection = int(sel["connection"].iloc[0])
    part = sel[sel["connection"] == connection]
    if part.empty:
        have = sorted(int(c) for c in sel["connection"].unique())
        raise PlotError(
            f"no {what} for run {run} connection {connection}: "
            f"it has connections {_few(have)}{none_note}"
        )
    return run, connection, part


def _few(values: list[int]) -> str:
    return ", ".join(map(str, values[:10])) + (", ..." if len(values) > 10 else "")


def cwnd(result, fig, run: int | None = None, connection: int | None = None) -> None:
    import numpy as np

    df = result.cwnd_series()
    if df.empty:
        raise PlotError("the result holds no cwnd series: run it with --series")
    run, connection, sel = _pick_connection(df, run, connection, "cwnd series", " (UDP has none)")
    sel = sel.sort_values("t_s", kind="stable")
    t = sel["t_s"].to_numpy(float)
    kb = {k: sel[k].to_numpy(float) / 1024 for k in ("cwnd", "ssthresh", "flight")}
    ax = fig.add_subplot()
    ax.step(t, kb["cwnd"], where="post", color="tab:blue", label="cwnd")
    ax.step(t, kb["flight"], where="post", color="tab:green", linewidth=0.8, label="in flight")
    # Before the first loss ssthresh is "infinite" (a gigabyte or so): draw it only
    # where it is on the scale of the window.
    top = max(kb["cwnd"].max(), kb["flight"].max()) * 1.15
    thresh = np.where(kb["ssthresh"] <= top, kb["ssthresh"], np.nan)
    ax.step(t, thresh, where="post", color="tab:red", linestyle="--", label="ssthresh")
    ax.set_ylim(0, top or 1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bytes (KB, 1024 bytes)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(
        f"Congestion window: run {run}, connection {connection}{_who(result, run, connection)}\n"
        + _subtitle(result),
        fontsize=10,
    )


def _who(result, run: int, connection: int) -> str:
    rows = result.to_pandas()
    row = rows[(rows["run"] == run) & (rows["connection"] == connection)]
    return f" ({row['transmitter'].iloc[0]} → {row['receiver'].iloc[0]})" if len(row) else ""


def queue(result, fig, run: int | None = None, port: int | None = None) -> None:
    df = result.queue_series()
    if df.empty:
        raise PlotError("the result holds no queue series: run it with --series")
    run, sel = _pick_run(df, run, "queue series")
    if port is not None:
        sel = sel[sel["port"] == port]
        if sel.empty:
            have = sorted(int(p) for p in df[df["run"] == run]["port"].unique())
            raise PlotError(f"no queue series for run {run} port {port}: it has ports {_few(have)}")
    ax = fig.add_subplot()
    drawn = 0
    # Results stored before serial steps shared one timeline ran them as separate
    # simulations ("stages"): their series carry a stage column.
    keys = ["stage", "port"] if "stage" in sel.columns else ["port"]
    for key, part in sel.groupby(keys, sort=True):
        stage, p = key if len(keys) == 2 else (0, key[0])
        part = part.sort_values("t_s", kind="stable")
        peak = int(part["cells"].max())
        if port is None and peak <= 1:
            continue  # a port that never queued: a flat line at 0–1 cells
        where = f"port {p} to {part['host'].iloc[0]}" + (f", stage {stage}" if stage else "")
        ax.step(part["t_s"], part["cells"], where="post", label=f"{where} (peak {peak})")
        drawn += 1
    if drawn == 0:
        ax.plot([], [], " ", label="no port ever held more than one cell")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("occupancy (cells)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Switch output queues: run {run}\n" + _subtitle(result), fontsize=10)


def plot(
    result,
    kind: str,
    output: str | Path,
    *,
    run: int | None = None,
    connection: int | None = None,
    port: int | None = None,
) -> Path:
    """Draw ``kind`` from ``result`` into ``output`` (.png, .svg or .pdf)."""
    if kind not in KINDS:
        raise PlotError(f"plot kind {kind!r}: expected one of {', '.join(KINDS)}")
    output = Path(output)
    fig = _figure()
    if kind == "buffer-grid":
        buffer_grid(result, fig)
    elif kind == "buffer-surface":
        buffer_surface(result, fig)
    elif kind == "window":
        window(result, fig)
    elif kind == "message-size":
        message_size(result, fig)
    elif kind == "offered-load":
        offered_load(result, fig)
    elif kind == "cwnd":
        cwnd(result, fig, run, connection)
    elif kind == "queue":
        queue(result, fig, run, port)
    else:
        time_sequence(result, fig, run, connection)
    # No dates in the file: the same result draws the same bytes.
    meta = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(output.suffix.lower())
    fig.savefig(output, dpi=120, metadata=meta)
    return output
