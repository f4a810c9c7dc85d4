"""The time series a result run with ``--series`` stores, one run's over time:
``cwnd`` (a connection's congestion window, ssthresh and data in flight, with the loss
reactions the series shows), ``queue`` (switch output ports' occupancy in cells
against the buffer) and ``acr`` (ABR circuits' allowed cell rates)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import PlotError, subtitle
from cellbench.plots.kinds import Request
from cellbench.plots.pick import few, pick_connection, pick_run, run_end, who


def loss_reactions(t, cwnd, ssthresh) -> tuple[np.ndarray, np.ndarray]:
    """Times the sender reacted to a loss, read off its series: only a loss sets
    ssthresh (to half the flight), with cwnd then below it (back to one segment:
    a retransmission timeout) or at or above it (fast retransmit: ssthresh plus
    three segments)."""
    cut = np.zeros(len(t), dtype=bool)
    cut[1:] = ssthresh[1:] != ssthresh[:-1]
    timeout = cut & (cwnd < ssthresh)
    return t[timeout], t[cut & ~timeout]


def cwnd(result, fig, request: Request) -> None:
    """A connection's congestion window, ssthresh and data in flight over time, with the
    loss reactions marked and the run's counts of them."""
    picked = request.picked
    run, connection, sel = pick_connection(
        request.stored, request.run, request.connection, "cwnd series", " (UDP has none)"
    )
    sel = sel.sort_values("t_s", kind="stable")
    t = sel["t_s"].to_numpy(float)
    kb = {k: sel[k].to_numpy(float) / 1024 for k in ("cwnd", "ssthresh", "flight")}
    ax = fig.add_subplot()
    # A long series' fill is an image in a vector file (.svg, .pdf, the report's page):
    # as a path it would take a vertex per sample, megabytes for one transfer.
    ax.fill_between(
        t, kb["flight"], step="post", color="tab:green", alpha=0.25, linewidth=0,
        label="in flight", rasterized=len(t) > 2000,
    )  # fmt: skip
    ax.step(t, kb["cwnd"], where="post", color="tab:blue", linewidth=1.2, label="cwnd")
    # Before the first loss ssthresh is "infinite" (a gigabyte or so): draw it only
    # where it is on the scale of the window.
    top = max(kb["cwnd"].max(), kb["flight"].max()) * 1.15
    thresh = np.where(kb["ssthresh"] <= top, kb["ssthresh"], np.nan)
    ax.step(t, thresh, where="post", color="tab:red", linestyle="--", label="ssthresh")
    timeouts, fast = loss_reactions(t, kb["cwnd"], kb["ssthresh"])
    rows = result.rows_view()
    row = rows[(rows["run"] == run) & (rows["connection"] == connection)]
    # The real engine stores no timeouts (null); the emulator TCP_INFO's (Linux 6.7+).
    counts = [
        f"{int(row[k].iloc[0])} {what}"
        for k, what in (
            ("timeouts", "timeout(s)"),
            ("retransmitted_segments", "retransmitted segment(s)"),
        )
        if len(row) and pd.notna(row[k].iloc[0])
    ]
    counted = f" (the run counted {', '.join(counts)})" if counts else ""
    ymax = top or 1
    if len(timeouts):
        ax.plot(
            timeouts,
            np.full(len(timeouts), ymax * 0.97),
            "v",
            color="black",
            markersize=7,
            label=f"timeout: cwnd back to one segment{counted}",
        )
    if len(fast):
        ax.plot(
            fast,
            np.full(len(fast), ymax * 0.97),
            "v",
            color="tab:purple",
            mfc="none",
            markersize=7,
            label="fast retransmit: ssthresh set to half the flight",
        )
    if not len(timeouts) and not len(fast):
        ax.plot([], [], " ", label="no loss reaction (ssthresh never lowered)" + counted)
    ax.set_ylim(0, ymax)
    end = run_end(rows, run)
    ax.set_xlim(0, end or None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bytes (KB, 1024 bytes)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.12), ncols=2, frameon=False)
    ax.set_title(
        f"Congestion window: run {run}, connection {connection}{who(result, run, connection)}\n"
        + subtitle(result, picked),
        fontsize=10,
    )


def queue(result, fig, request: Request) -> None:
    """Switch output ports' occupancy over time against the port buffer: every port
    that queued, or --port's."""
    df, run, port, picked = request.stored, request.run, request.port, request.picked
    run, sel = pick_run(df, run, "queue series")
    if port is not None:
        sel = sel[sel["port"] == port]
        if sel.empty:
            have = sorted(int(p) for p in df[df["run"] == run]["port"].unique())
            raise PlotError(f"no queue series for run {run} port {port}: it has ports {few(have)}")
    ax = fig.add_subplot()
    end = run_end(result.rows_view(), run)
    drawn = 0
    # Results stored when serial steps ran as separate simulations ("stages")
    # carry a stage column in their series.
    keys = ["stage", "port"] if "stage" in sel.columns else ["port"]
    for key, part in sel.groupby(keys, sort=True):
        stage, p = key if len(keys) == 2 else (0, key[0])
        part = part.sort_values("t_s", kind="stable")
        peak = int(part["cells"].max())
        if port is None and peak <= 1:
            continue  # a port that never queued: a flat line at 0–1 cells
        where = f"port {p} to {part['host'].iloc[0]}" + (f", stage {stage}" if stage else "")
        t, cells = part["t_s"].to_numpy(float), part["cells"].to_numpy(float)
        if end is not None and t[-1] < end:
            # The last sample holds until the run ends.
            t, cells = np.append(t, end), np.append(cells, cells[-1])
        ax.step(t, cells, where="post", label=f"{where} (peak {peak})")
        drawn += 1
    if drawn == 0:
        ax.plot([], [], " ", label="no port ever held more than one cell")
    buffer = result.meta.get("testbed", {}).get("switch", {}).get("buffer_cells")
    if buffer:
        ax.axhline(
            buffer, color="black", linestyle="--", linewidth=1, label=f"port buffer: {buffer} cells"
        )
        ax.set_ylim(0, buffer * 1.08)
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlim(0, end or None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("occupancy (cells)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(f"Switch output queues: run {run}\n" + subtitle(result, picked), fontsize=10)


def acr(result, fig, request: Request) -> None:
    """ABR circuits' allowed cell rates over time (one run; every ABR connection, or
    --connection's), Mb/s of cells, each sample holding until the next."""
    df, run, connection, picked = request.stored, request.run, request.connection, request.picked
    if connection is not None:
        run, connection, sel = pick_connection(df, run, connection, "ACR series")
    else:
        run, sel = pick_run(df, run, "ACR series")
    ax = fig.add_subplot()
    end = run_end(result.rows_view(), run)
    for c, part in sel.groupby("connection", sort=True):
        part = part.sort_values("t_s", kind="stable")
        t, mbps = part["t_s"].to_numpy(float), part["acr_bps"].to_numpy(float) / 1e6
        if end is not None and t[-1] < end:
            t, mbps = np.append(t, end), np.append(mbps, mbps[-1])
        ax.step(t, mbps, where="post", label=f"connection {c}{who(result, run, int(c))}")
    ax.set_xlim(0, end or None)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("ACR (Mb/s of cells)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title(f"ABR allowed cell rate: run {run}\n" + subtitle(result, picked), fontsize=10)
