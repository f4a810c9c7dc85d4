"""``offered-load``: aggregate carried load against aggregate offered load (UDP: the
datagrams that arrived; paced sources: what arrived over the periods their blocks
own), with the lossless point (the largest offered load with no cell lost in any
replication), the highest carried and the highest offered load marked; logarithmic
axes when the loads span more than a decade."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import PlotError, spread_note, subtitle
from cellbench.plots.kinds import Request
from cellbench.plots.pick import check_fit, facets


def carried_bps(df: pd.DataFrame) -> pd.Series:
    """The load a connection carried: TCP's throughput (all of it arrived); for UDP,
    whose throughput the sender measures (as ttcp does), the datagrams that arrived,
    over the sender's time or the receiver's if longer. A paced source (constant-rate
    traffic, TCP or UDP) carried the bytes that arrived over the periods its due blocks
    own: ceil(duration / period) blocks fall due, one at the start and one every period
    (62 in 2 s at 32.768 ms), so one that delivered every block carried exactly what it
    offered, never more."""
    import numpy as np

    udp = df["protocol"].eq("udp") & df["datagrams_received"].notna()
    received = df["datagrams_received"].fillna(0) * df["blocksize"].fillna(0) * 8
    longer = df[["sender_seconds", "receiver_seconds"]].max(axis=1)
    seconds = longer.where(longer > 0)
    carried = df["throughput_bps"].where(~udp, (received / seconds).fillna(0.0))
    # TCP's bytes delivered: its goodput over the receiver's time.
    tcp_bits = df["goodput_bps"].fillna(0.0) * df["receiver_seconds"].fillna(0.0)
    got = received.where(udp, tcp_bits)
    paced = df["traffic"].isin(["burst", "burstq"]) & df["period_us"].notna()
    period = df["period_us"].where(paced)
    due = np.ceil(df["duration_s"] * 1e6 / period - 1e-9)
    return carried.where(~paced, got / (due * period * 1e-6))


def load_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per sweep point: aggregate offered and carried load over the replications
    (mean, min, max of each run's sum over its connections) and the most cells
    any one replication lost."""
    per_run = (
        df.assign(lost=df["cells_lost"].fillna(0), carried_bps=carried_bps(df))
        .groupby(["point", "run"])
        .agg(offered=("offered_bps", "sum"), carried=("carried_bps", "sum"), lost=("lost", "sum"))
        .reset_index()
    )
    return (
        per_run.groupby("point")
        .agg(
            offered=("offered", "mean"),
            carried=("carried", "mean"),
            lo=("carried", "min"),
            hi=("carried", "max"),
            lost=("lost", "max"),
            runs=("run", "count"),
        )
        .sort_values("offered")
    )


def _plain_log_ticks(ax) -> None:
    """Log axes ticked at 1, 2 and 5 of each decade, labelled as plain numbers: over
    less than a decade matplotlib labels its minor ticks 6×10^0 otherwise."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def _mark(ax, point: pd.Series, marker: str, color: str, label: str, **style) -> None:
    """One of the figure's marked points (``load_points``' row: its offered and carried
    load), in Mb/s."""
    style = {"markersize": 11, **style}
    at = (point["offered"] / 1e6, point["carried"] / 1e6)
    ax.plot(*at, marker, color=color, label=label, **style)


def fit_offered_load(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    if df["offered_bps"].isna().all():
        raise PlotError(
            "offered-load needs constant-rate traffic (burst/burstq with blocksize and "
            "period): the result's connections have no offered load"
        )
    # The aggregate offered load of a point is a sum over its connections: the
    # connections themselves are not a dimension here.
    load = df.groupby(["point", "run"])["offered_bps"].transform("sum")
    df = df.assign(aggregate_offered=load)
    check_fit(df, "offered-load", {"aggregate_offered": "the offered load"}, params, by, False)
    return df


def offered_load(result, fig, request: Request) -> None:
    """Carried against offered load, a line per --by value, its points marked."""
    df, picked, by = request.rows, request.picked, request.by
    ax = fig.add_subplot()
    top = 0.0
    panels = facets(df, by)
    for k, (label, part) in enumerate(panels):
        pts = load_points(part)
        x, y = pts["offered"] / 1e6, pts["carried"] / 1e6
        color = f"C{k}"
        err = np.vstack([y - pts["lo"] / 1e6, pts["hi"] / 1e6 - y])
        name = "aggregate carried load" + (f", {label}" if label else "")
        if pts["runs"].max() > 1:
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color=color, label=name)
        else:
            ax.plot(x, y, marker="o", color=color, label=name)
        top = max(top, float(max(x.max(), y.max())) * 1.05)
        runs = int(pts["runs"].min())
        whole = pts[pts["lost"] == 0]
        if len(whole):
            lw = whole.iloc[-1]
            lossless = (
                f"lossless point: largest offered load with no cell lost in any of {runs} "
                f"replication(s) ({lw['offered'] / 1e6:.1f} Mb/s offered)"
            )
            green = color if by else "tab:green"
            _mark(ax, lw, "s", green, lossless, markersize=12, mfc="none", mew=2)
        else:
            ax.plot([], [], " ", label="lossless point: none (every load lost cells)")
        if not by:
            # The ATM Forum's peak and full-load figures count full blast, which a paced
            # sweep (wan-contention's offered-load part) does not hold: these marks name
            # what they are, so they cannot be read as the study's table.
            peak = pts.loc[pts["carried"].idxmax()]
            highest = f"highest carried of these loads ({peak['carried'] / 1e6:.1f} Mb/s)"
            _mark(ax, peak, "^", "tab:red", highest)
            full = pts.iloc[-1]
            offered = (
                f"highest offered load: {full['offered'] / 1e6:.1f} Mb/s offered, "
                f"{full['carried'] / 1e6:.1f} carried (full blast is not a point here)"
            )
            _mark(ax, full, "v", "tab:purple", offered)
    loads = df.groupby(["point", "run"])["offered_bps"].sum() / 1e6
    low = float(loads[loads > 0].min()) if (loads > 0).any() else 0.0
    # Loads over more than a decade (the study's 5 to 400 Mb/s): logarithmic axes, so
    # the interesting low range is not squeezed into a corner and the markers part.
    log = low > 0 and top / low > 10
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        floor = low / 1.5
        carried = load_points(df)["carried"] / 1e6
        # Down to the smallest load carried: a collapse at full load stays in view.
        bottom = min(floor, float(carried[carried > 0].min()) / 1.5) if (carried > 0).any() \
            else floor  # fmt: skip
        ax.plot([floor, top], [floor, top], linestyle=":", color="grey",
                label="carried = offered")  # fmt: skip
        ax.set_xlim(floor, top)
        ax.set_ylim(bottom, top)
    else:
        ax.plot([0, top], [0, top], linestyle=":", color="grey", label="carried = offered")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
    if log:
        _plain_log_ticks(ax)
    scale = " (log scale)" if log else ""
    ax.set_xlabel(f"aggregate offered load (Mb/s, 10^6 bit/s){scale}")
    ax.set_ylabel(f"aggregate carried load (Mb/s, 10^6 bit/s){scale}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5, title=spread_note(df), title_fontsize=8, loc="upper left")
    ax.set_title("Carried against offered load\n" + subtitle(result, picked), fontsize=10)
