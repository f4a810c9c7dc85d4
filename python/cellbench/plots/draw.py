"""The classic figure kinds, drawn from a stored result (never by re-running).

- ``buffer-grid``: mean throughput (ttcp's Mbit/s, 2^20 bit/s, like the published
  grid) over sender SO_SNDBUF × receiver SO_RCVBUF, a heat map with the values
  written in and lock-step cells marked; ``compare="published"`` adds the published
  mean under each cell and the error per cell (lan-buffers).
- ``buffer-surface``: the same as a heat map with its maximum (and the published
  maximum) marked; on a result whose socket buffers are equal at both ends and whose
  message size varies (hetero-lan), over socket buffer × message size.
- ``window``: throughput against the TCP window (the smaller socket buffer); on
  wan-window with the published points, window / RTT and the link's TCP payload rate.
- ``message-size``: throughput against the application's write size.
- ``offered-load``: aggregate carried load against aggregate offered load (UDP: the
  datagrams that arrived; paced sources: what arrived over the periods their blocks
  own), with the full-load point (the highest offered load), the
  lossless point (the largest offered load with no cell lost in any replication)
  and the peak marked; logarithmic axes when the loads span more than a decade.
- ``segment-size``: throughput against the TCP segment size, MTU − 40 (TCP/IP
  headers), for a result whose testbed sweeps its MTU (``testbed { mtu = $mtu; }``).
- ``measurements``: each chosen cell's throughput against measurement number (the
  replications one by one, as the LAN study plots its 50 per configuration), a line
  per cell (pick at most MEASURED_CELLS with ``--where``), so a reader sees which
  replications locked and which flowed.
- ``time-sequence``: a traced connection's data segments, ACKs and receive window.
- ``cwnd``: a connection's congestion window, ssthresh and data in flight over time,
  with the loss reactions the series shows.
- ``queue``: switch output ports' occupancy (cells) over time against the buffer.

The last two need a result run with ``--series`` (``series=True``). Each sweep kind
checks that the result fits it (``check_fit``): what it draws was swept and nothing
else varies unless picked (``where``) or drawn per value (``by``).

matplotlib's Agg backend (files only, no display); rates in Mb/s = 10^6 bit/s
except where a figure says ttcp's Mbit/s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cellbench.plots.kinds import CAPTURE, KINDS, ONE_RUN

MBPS = "throughput (Mb/s, 10^6 bit/s)"
MBIT = "throughput (Mbit/s as ttcp prints it, 2^20 bit/s)"


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
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    return str(n)


def _subtitle(result, picked: dict | None = None) -> str:
    m = result.meta
    exp = m.get("experiment", {}).get("file") or m.get("study", "")
    reps = m.get("replications")
    testbed = m.get("testbed", {}).get("name", "?")
    where = "".join(f", {k}={_value_text(v)}" for k, v in (picked or {}).items())
    return (
        f"{Path(str(exp)).name}, testbed {testbed}, {reps} replication(s), "
        f"seed {m.get('seed')}{where}"
    )


def _value_text(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def _rows(result) -> pd.DataFrame:
    df = result.rows_view()
    if df.empty:
        raise PlotError("the result has no runs yet")
    df = df.assign(mbps=df["throughput_bps"].astype(float) / 1e6)
    return df


# --- what a figure may draw: --where picks, --by facets, the rest must not vary ---------------


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
    vals = sorted({_value_text(v) for v in col.dropna()}, key=_natural)
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


def _facets(df: pd.DataFrame, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    if by is None:
        return [("", df)]
    keys = sorted(df[by].dropna().unique(), key=lambda v: _natural(_value_text(v)))
    out = [(f"{by}={_value_text(k)}", df[df[by] == k]) for k in keys]
    if df[by].isna().any():
        out.append((f"{by}=none", df[df[by].isna()]))
    return out


#: The least distance between two size ticks, as a share of the axis: a label such as
#: "128K" at 10 pt is ~0.35 in, 5% of a 7.5 in figure's axis.
MIN_TICK_GAP = 0.06


def _spaced_ticks(vals: list[float], scale) -> list[float]:
    """The sweep's values to label, none closer than MIN_TICK_GAP of the axis to the
    one before (the smallest and the largest always kept)."""
    pos = [float(scale(v)) for v in vals]
    span = (pos[-1] - pos[0]) or 1.0
    kept = [0]
    for i in range(1, len(vals)):
        if (pos[i] - pos[kept[-1]]) / span >= MIN_TICK_GAP:
            kept.append(i)
    if kept[-1] != len(vals) - 1:
        kept[-1] = len(vals) - 1  # the largest, in place of the one too close to it
    return [vals[i] for i in kept]


def _size_axis(ax, values, axis: str = "x") -> None:
    """A byte-size sweep's axis, ticked at the sweep's own values in K (1024 bytes):
    log2 for a power-of-two (geometric) sweep such as 512 .. 128K, linear for a
    stepped one such as 4K .. 48K."""
    from matplotlib.ticker import FixedLocator, NullLocator

    vals = sorted({float(v) for v in values if v and v > 0})
    if len(vals) < 2:
        return
    # Values over a span of 8x or more (512 .. 64K with a 9K among them) crowd the low
    # end of a linear axis: log2 spreads them.
    geometric = len(vals) >= 3 and (
        all(b / a >= 1.5 for a, b in zip(vals, vals[1:])) or vals[-1] / vals[0] >= 8
    )
    if geometric:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks = _spaced_ticks(vals, np.log2 if geometric else (lambda v: v))
    target.set_major_locator(FixedLocator(ticks))
    target.set_minor_locator(NullLocator())
    (ax.set_xticklabels if axis == "x" else ax.set_yticklabels)([_size(v) for v in ticks])


# --- buffer grid and surface ----------------------------------------------------------------


def _grid(df: pd.DataFrame):
    g = df.groupby(["sndbuf", "rcvbuf"]).agg(
        mbit=("throughput_mbit_ttcp", "mean"),
        lo=("throughput_mbit_ttcp", "min"),
        hi=("throughput_mbit_ttcp", "max"),
        runs=("run", "count"),
        lock=("lockstep", "mean"),
    )
    snd = sorted(df["sndbuf"].dropna().unique())
    rcv = sorted(df["rcvbuf"].dropna().unique())
    z = np.full((len(snd), len(rcv)), np.nan)
    lo, hi = z.copy(), z.copy()
    lock = np.zeros_like(z, dtype=bool)
    for (s, r), row in g.iterrows():
        i, j = snd.index(s), rcv.index(r)
        z[i, j], lo[i, j], hi[i, j] = row["mbit"], row["lo"], row["hi"]
        lock[i, j] = bool(row["lock"] > 0.5) if pd.notna(row["lock"]) else False
    return snd, rcv, z, lock, (lo, hi), int(g["runs"].max())


def _published_grid(result, snd, rcv):
    """The published lan-buffers table on the result's cells (NaN where it has none)."""
    from cellbench.data.published import lan_buffer_table

    name = result.meta.get("testbed", {}).get("name")
    if name != "lan-buffers":
        raise PlotError(
            f"--compare published: the published buffer grid is lan-buffers'; "
            f"this result ran on testbed {name}"
        )
    table = lan_buffer_table()
    pub = np.array([[table.get((int(s), int(r)), np.nan) for r in rcv] for s in snd])
    if not np.isfinite(pub).any():
        raise PlotError("--compare published: none of the result's cells is in the published grid")
    return pub


def _heat(ax, snd, rcv, z, text, cmap="viridis", vmin=None, vmax=None):
    im = ax.imshow(z, origin="lower", cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
    # Past ten columns (the Ultra-1 surface has 16) the labels would touch: turned.
    turned = {"rotation": 45, "ha": "right", "rotation_mode": "anchor"} if len(rcv) > 10 else {}
    ax.set_xticks(range(len(rcv)), [_size(x) for x in rcv], **turned)
    ax.set_yticks(range(len(snd)), [_size(x) for x in snd])
    ax.set_xlabel("receiver SO_RCVBUF (bytes; K = 1024)")
    ax.set_ylabel("sender SO_SNDBUF (bytes; K = 1024)")
    lo = np.nanmin(z) if vmin is None and np.isfinite(z).any() else (vmin or 0.0)
    hi = np.nanmax(z) if vmax is None and np.isfinite(z).any() else (vmax or 1.0)
    for i in range(len(snd)):
        for j in range(len(rcv)):
            if text[i][j]:
                dark = cmap == "viridis" and z[i, j] < lo + 0.6 * (hi - lo)
                ax.text(
                    j,
                    i,
                    text[i][j],
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if dark else "black",
                )
    return im


def buffer_grid(result, fig, df, picked, by=None, compare=None) -> None:
    from matplotlib.patches import Patch

    from cellbench.data.published import LAN_ANOMALOUS

    facets = _facets(df, by)
    if compare and by:
        raise PlotError("--compare published draws one grid: pick the other values with --where")
    width = 7.5 if compare is None and len(facets) == 1 else 7.0 * min(len(facets) + 1, 3)
    fig.set_size_inches(width, 5.8 if len(facets) <= 3 else 5.2 * ((len(facets) + 2) // 3))
    ncols = 2 if compare else min(len(facets), 3)
    nrows = 1 if compare else (len(facets) + ncols - 1) // ncols
    for k, (label, part) in enumerate(facets):
        snd, rcv, z, lock, (lo, hi), runs = _grid(part)
        ax = fig.add_subplot(nrows, ncols, k + 1)
        pub = _published_grid(result, snd, rcv) if compare else None
        text = [
            [
                ""
                if not np.isfinite(z[i, j])
                else f"{z[i, j]:.1f}"
                + ("*" if lock[i, j] else "")
                + (
                    f"\n({pub[i, j]:.1f}{'†' if (snd[i], rcv[j]) in LAN_ANOMALOUS else ''})"
                    if pub is not None and np.isfinite(pub[i, j])
                    else ""
                )
                # The replications' min–max (with a comparison, in the error panel).
                + (f"\n{lo[i, j]:.1f}–{hi[i, j]:.1f}" if runs > 1 and pub is None else "")
                for j in range(len(rcv))
            ]
            for i in range(len(snd))
        ]
        im = _heat(ax, snd, rcv, z, text)
        fig.colorbar(im, ax=ax, label="mean " + MBIT)
        ax.set_title(
            ("simulated" + (" (published)" if pub is not None else "") if not label else label),
            fontsize=9,
        )
        if pub is not None:
            err = 100 * (z - pub) / pub
            ax2 = fig.add_subplot(nrows, ncols, 2)
            etext = [
                [
                    f"{round(err[i, j]):+d}%"
                    + (_spread_pct(lo[i, j], hi[i, j], pub[i, j]) if runs > 1 else "")
                    if np.isfinite(err[i, j])
                    else ""
                    for j in range(len(rcv))
                ]
                for i in range(len(snd))
            ]
            bound = max(25.0, float(np.nanmax(np.abs(err))) if np.isfinite(err).any() else 25.0)
            im2 = _heat(ax2, snd, rcv, err, etext, cmap="RdBu_r", vmin=-bound, vmax=bound)
            fig.colorbar(im2, ax=ax2, label="(simulated − published) / published (%)")
            ax2.set_title("error per cell against the published grid", fontsize=9)
    spread = (
        f"; under it, the {runs} replications' min–max" + (" (as errors, right)" if compare else "")
        if runs > 1
        else ""
    )
    fig.suptitle(
        "Mean ttcp throughput over send × receive buffer (Mbit/s, 2^20 bit/s)\n"
        + _subtitle(result, picked),
        fontsize=10,
    )
    notes = ["* = Nagle/delayed-ACK lock-step (most replications)" + spread]
    if compare:
        notes.append(
            "(x) = the published mean of the cell (ttcp, 50 transfers); "
            "† = a cell the study marks anomalous"
        )
    fig.legend(
        handles=[Patch(color="none", label=n) for n in notes],
        loc="outside lower left",
        frameon=False,
        fontsize=8,
    )


def _spread_pct(lo: float, hi: float, pub: float) -> str:
    """The replications' range as errors against the published value: [min, max]."""
    return f"\n[{round(100 * (lo - pub) / pub):+d}, {round(100 * (hi - pub) / pub):+d}]"


def _mark_maximum(ax, z, unit: str, published=None, published_label: str = "") -> list:
    """A red box round the cell of the highest mean, and the published maximum: a
    dashed box round its cell (``published`` an (i, j, value)) or, where the study
    gives only the value, a line on the colour bar (``published`` a number). The
    legend's handles."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    handles = []
    if np.isfinite(z).any():
        i, j = np.unravel_index(np.nanargmax(z), z.shape)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.5))
        handles.append(Line2D([], [], color="red", lw=2.5, label=f"maximum: {z[i, j]:.2f} {unit}"))
    if published is not None:
        value = published[2] if isinstance(published, tuple) else published
        if isinstance(published, tuple):
            i, j = published[:2]
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", lw=2, ls="--")
            )
        handles.append(
            Line2D([], [], color="black", lw=2, ls="--",
                   label=f"published maximum: {value:.2f} {unit}{published_label}")
        )  # fmt: skip
    return handles


def _surface_legend(fig, handles) -> None:
    fig.legend(handles=handles, loc="outside lower left", frameon=False, fontsize=8)


def buffer_surface(result, fig, df, picked) -> None:
    """Mean throughput over send x receive buffer as a heat map with the values in
    the cells (a 3-D surface hid the lock-step collapses behind the plateau), its
    maximum and, on lan-buffers, the published grid's maximum over the same cells."""
    snd, rcv, z, lock, _, _ = _grid(df)
    if len(snd) < 2 or len(rcv) < 2:
        raise PlotError(
            f"buffer-surface needs at least 2 send and 2 receive buffer sizes, "
            f"the result has {len(snd)} x {len(rcv)}"
        )
    fig.set_size_inches(8, 6.5)
    ax = fig.add_subplot()
    text = [
        [f"{z[i, j]:.1f}" + ("*" if lock[i, j] else "") if np.isfinite(z[i, j]) else ""
         for j in range(len(rcv))]
        for i in range(len(snd))
    ]  # fmt: skip
    published = None
    if result.meta.get("testbed", {}).get("name") == "lan-buffers":
        try:
            pub = _published_grid(result, snd, rcv)
        except PlotError:
            pub = None
        if pub is not None:
            i, j = np.unravel_index(np.nanargmax(pub), pub.shape)
            published = (i, j, float(pub[i, j]))
    im = _heat(ax, snd, rcv, z, text)
    fig.colorbar(im, ax=ax, label="mean " + MBIT)
    handles = _mark_maximum(ax, z, "Mbit/s (2^20)", published, " (the study's grid)")
    handles.append(_note("* = Nagle/delayed-ACK lock-step (most replications)"))
    _surface_legend(fig, handles)
    ax.set_title(
        "Throughput over send × receive buffer (Mbit/s, 2^20 bit/s)\n" + _subtitle(result, picked),
        fontsize=10,
    )


def _note(text: str):
    from matplotlib.patches import Patch

    return Patch(color="none", label=text)


def _equal_buffers(df: pd.DataFrame) -> bool:
    """Every run set its send and receive buffers alike, and the message size varies."""
    return bool((df["sndbuf"] == df["rcvbuf"]).all()) and df["blocksize"].nunique() > 1


def hetero_pair(result, df: pd.DataFrame):
    """The hetero-lan pair a result's runs are (data.published.PAIRS), or None."""
    if result.meta.get("testbed", {}).get("name") != "hetero-lan":
        return None
    from cellbench.data.published import PAIRS

    ends = set(zip(df["transmitter"], df["receiver"]))
    encap = result.meta["testbed"].get("encap")
    for pair in PAIRS:
        if ends == {(pair.transmitter, pair.receiver)} and encap in (None, pair.encap):
            return pair
    return None


def _hetero_published(result, df: pd.DataFrame):
    """(pair, published maximum Mb/s, its percent of the TCP payload rate) or None."""
    from cellbench.data.published import hetero_lan_maxima

    pair = hetero_pair(result, df)
    published = hetero_lan_maxima().get(pair.name) if pair is not None else None
    if published is None:
        return None
    return pair, published["max_bps"] / 1e6, published["percent_of_theoretical"]


def message_surface(result, fig, df, picked) -> None:
    """Mean throughput (Mb/s) over socket buffer x message size as a heat map with the
    values in the cells, its maximum and, for a hetero-lan pair, the study's maximum
    (Table 3 gives the value, not where it was)."""
    g = df.groupby(["sndbuf", "blocksize"])["mbps"].mean()
    buf = sorted(df["sndbuf"].unique())
    msg = sorted(df["blocksize"].unique())
    z = np.full((len(buf), len(msg)), np.nan)
    for (b, m), v in g.items():
        z[buf.index(b), msg.index(m)] = v
    fig.set_size_inches(8.5, 6.5)
    ax = fig.add_subplot()
    text = [[f"{v:.1f}" if np.isfinite(v) else "" for v in row] for row in z]
    pub = _hetero_published(result, df)
    top = max(float(np.nanmax(z)), pub[1] if pub else 0.0)
    im = _heat(ax, buf, msg, z, text, vmin=0.0, vmax=top)
    ax.set_xlabel("message size, send() (bytes)")
    ax.set_ylabel("socket buffer, both ends (bytes; K = 1024)")
    bar = fig.colorbar(im, ax=ax, label="mean " + MBPS)
    if pub:
        bar.ax.axhline(pub[1], color="black", linestyle="--", linewidth=2)
    label = f" ({pub[2]:.1f}% of the TCP payload rate; the study's Table 3)" if pub else ""
    handles = _mark_maximum(ax, z, "Mb/s", pub[1] if pub else None, label)
    _surface_legend(fig, handles)
    name = f"{pub[0].name}: " if pub else ""
    ax.set_title(
        f"{name}throughput over socket buffer × message size (Mb/s, 10^6 bit/s)\n"
        + _subtitle(result, picked),
        fontsize=10,
    )


def _lines(kind: str, df: pd.DataFrame, x: str, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    """The series of a mean-against-X figure, refused when every one is a single
    point: a legend of one-point lines says less than the table (each --by value
    would pair with one x value only, as lan-buffers' window by SO_SNDBUF does)."""
    facets = _facets(df, by)
    if len(facets) > 1 and all(part[x].nunique() < 2 for _, part in facets):
        raise PlotError(
            f"{kind} --by {by}: every line would be one point ({by} fixes {x}): "
            "the summary table holds these values"
        )
    return facets


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


def _spread_note(df: pd.DataFrame) -> str:
    runs = int(df.groupby("point")["run"].nunique().max())
    return f"mean of {runs} replications, bars: min–max" if runs > 1 else "one run per point"


def _mean_axes(ax, df: pd.DataFrame, xlabel: str, what: str, result, picked) -> None:
    """The finish every mean-throughput-against-X figure shares: its labels (each with
    its unit), a grid, a zero-based linear y axis, the spread as the legend's title."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("mean " + MBPS)
    ax.grid(True, alpha=0.3)
    if ax.get_yscale() == "linear":
        ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, title=_spread_note(df), title_fontsize=8)
    ax.set_title(f"Throughput against {what}\n" + _subtitle(result, picked), fontsize=10)


def window(result, fig, df, picked, by=None) -> None:
    df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
    ax = fig.add_subplot()
    for label, part in _lines("window", df, "window", by):
        _line(ax, part, "window", label or "simulated")
    if result.meta.get("testbed", {}).get("name") == "wan-window":
        _wan_window_published(result, ax, df["window"])
    _size_axis(ax, df["window"])
    _mean_axes(ax, df, "TCP window = min(SO_SNDBUF, SO_RCVBUF) (bytes; K = 1024)",
               "window size", result, picked)  # fmt: skip


def _wan_window_published(result, ax, windows: pd.Series) -> None:
    """The study's published points, and its two bounds: window / RTT (the round
    trip of the testbed's trunks) and the TCP payload rate of the OC-3c path."""
    from cellbench import calc
    from cellbench.data.published import wan_window_table

    tb = result.meta["testbed"]
    pub = wan_window_table()
    w = sorted(pub)
    ax.plot(
        w,
        [pub[x] / 1e6 for x in w],
        "D",
        color="black",
        mfc="none",
        markersize=7,
        label="published (the study's table)",
    )
    rtt_s = 2 * sum(float(t["delay_ms"]) for t in tb["trunks"]) / 1e3
    phy = tb["trunks"][0]["phy"] if tb["trunks"] else tb["hosts"][0]["phy"]
    rows = calc.layers(phy, tb["encap"], tb["mtu"])
    link = next(r["mbps"] for r in rows if r["layer"] == "tcp_payload")
    lo, hi = min(float(windows.min()), w[0]), max(float(windows.max()), w[-1])
    xs = np.geomspace(lo, hi, 64)
    ax.plot(
        xs,
        xs * 8 / rtt_s / 1e6,
        linestyle="--",
        color="grey",
        label=f"window / RTT ({rtt_s * 1e3:.1f} ms round trip)",
    )
    ax.axhline(
        link, linestyle=":", color="tab:red", label=f"{phy} TCP payload rate {link:.1f} Mb/s"
    )
    # Both axes logarithmic: window / RTT is then the diagonal, and the small
    # windows' points read as well as the large ones'.
    ax.set_yscale("log")
    ax.set_ylim(0.2, link * 1.6)


#: The most cells ``measurements`` draws as lines of their own (more are unreadable).
MEASURED_CELLS = 8


def measurements(result, fig, df, picked, params: list[str]) -> None:
    """Throughput against measurement number (replication + 1), a line per cell: the
    sweep point and, in a result with several connections, the connection."""
    varying = [p for p in params if p in df and df[p].nunique(dropna=False) > 1]
    keys = ["point", *(["test"] if df["test"].nunique() > 1 else [])]
    cells = list(df.groupby(keys, sort=True))
    if len(cells) > MEASURED_CELLS:
        raise PlotError(
            f"measurements draws at most {MEASURED_CELLS} cells, and {len(cells)} are "
            "picked: choose them with --where (e.g. --where snd=24K --where rcv=48K)"
            + (f"; the result varies {', '.join(varying)}" if varying else "")
        )
    ax = fig.add_subplot()
    for _key, part in cells:
        first = part.iloc[0]
        label = ", ".join(f"{p}={_value_text(first[p])}" for p in varying)
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
    ax.set_title("Throughput of each measurement\n" + _subtitle(result, picked), fontsize=10)


#: TCP and IP headers without options: a segment is the MTU less these.
TCPIP_HEADER = 40


def segment_size(result, fig, df, picked, by=None) -> None:
    df = df.assign(segment=df["mtu"].astype(int) - TCPIP_HEADER)
    ax = fig.add_subplot()
    for label, part in _lines("segment-size", df, "segment", by):
        _line(ax, part, "segment", label or "simulated")
    _mean_axes(ax, df, "TCP segment size: MTU - 40 (bytes)", "TCP segment size", result, picked)


def message_size(result, fig, df, picked, by=None) -> None:
    ax = fig.add_subplot()
    for label, part in _lines("message-size", df, "blocksize", by):
        _line(ax, part, "blocksize", label or "simulated")
    pub = _hetero_published(result, df)
    if pub:
        ax.axhline(pub[1], color="black", linestyle="--", linewidth=1,
                   label=f"published maximum of {pub[0].name}: {pub[1]:.2f} Mb/s "
                   "(the study's Table 3)")  # fmt: skip
    _size_axis(ax, df["blocksize"])
    _mean_axes(ax, df, "message (write) size (bytes; K = 1024)", "message size", result, picked)


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


def _load_points(df: pd.DataFrame) -> pd.DataFrame:
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


def offered_load(result, fig, df, picked, by=None) -> None:
    ax = fig.add_subplot()
    top = 0.0
    facets = _facets(df, by)
    for k, (label, part) in enumerate(facets):
        pts = _load_points(part)
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
            ax.plot(
                lw["offered"] / 1e6,
                lw["carried"] / 1e6,
                "s",
                markersize=12,
                mfc="none",
                mew=2,
                color=color if by else "tab:green",
                label=f"lossless point: largest offered load with no cell lost in any of "
                f"{runs} replication(s) ({lw['offered'] / 1e6:.1f} Mb/s offered)",
            )
        else:
            ax.plot([], [], " ", label="lossless point: none (every load lost cells)")
        if not by:
            peak = pts.loc[pts["carried"].idxmax()]
            ax.plot(
                peak["offered"] / 1e6,
                peak["carried"] / 1e6,
                "^",
                markersize=11,
                color="tab:red",
                # The ATM Forum's peak and full-load figures count full blast, which a
                # paced sweep (wan-contention's offered-load part) does not hold: these
                # marks name what they are, so they cannot be read as the study's table.
                label=f"highest carried of these loads ({peak['carried'] / 1e6:.1f} Mb/s)",
            )
            full = pts.iloc[-1]
            ax.plot(
                full["offered"] / 1e6,
                full["carried"] / 1e6,
                "v",
                markersize=11,
                color="tab:purple",
                label=f"highest offered load: {full['offered'] / 1e6:.1f} Mb/s offered, "
                f"{full['carried'] / 1e6:.1f} carried (full blast is not a point here)",
            )
    loads = df.groupby(["point", "run"])["offered_bps"].sum() / 1e6
    low = float(loads[loads > 0].min()) if (loads > 0).any() else 0.0
    # Loads over more than a decade (the study's 5 to 400 Mb/s): logarithmic axes, so
    # the interesting low range is not squeezed into a corner and the markers part.
    log = low > 0 and top / low > 10
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        floor = low / 1.5
        carried = _load_points(df)["carried"] / 1e6
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
    ax.legend(fontsize=7.5, title=_spread_note(df), title_fontsize=8, loc="upper left")
    ax.set_title("Carried against offered load\n" + _subtitle(result, picked), fontsize=10)


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


def time_sequence(result, fig, run=None, connection=None, picked=None) -> None:
    tr = result.traces()
    if tr.empty:
        raise PlotError("the result holds no trace: run it with --trace")
    run, connection, sel = _pick_connection(tr, run, connection, "trace")
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
        f"Time–sequence graph: run {run}, connection {connection}{_who(result, run, connection)}\n"
        + _subtitle(result, picked),
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


def _loss_reactions(t, cwnd, ssthresh) -> tuple[np.ndarray, np.ndarray]:
    """Times the sender reacted to a loss, read off its series: only a loss sets
    ssthresh (to half the flight), with cwnd then below it (back to one segment:
    a retransmission timeout) or at or above it (fast retransmit: ssthresh plus
    three segments)."""
    cut = np.zeros(len(t), dtype=bool)
    cut[1:] = ssthresh[1:] != ssthresh[:-1]
    timeout = cut & (cwnd < ssthresh)
    return t[timeout], t[cut & ~timeout]


def cwnd(result, fig, run=None, connection=None, picked=None) -> None:
    df = result.cwnd_series()
    if df.empty:
        raise PlotError("the result holds no cwnd series: run it with --series")
    run, connection, sel = _pick_connection(df, run, connection, "cwnd series", " (UDP has none)")
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
    timeouts, fast = _loss_reactions(t, kb["cwnd"], kb["ssthresh"])
    rows = result.rows_view()
    row = rows[(rows["run"] == run) & (rows["connection"] == connection)]
    # The real engine counts retransmissions but not timeouts (TCP_INFO has no total).
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
    end = _run_end(rows, run)
    ax.set_xlim(0, end or None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bytes (KB, 1024 bytes)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.12), ncols=2, frameon=False)
    ax.set_title(
        f"Congestion window: run {run}, connection {connection}{_who(result, run, connection)}\n"
        + _subtitle(result, picked),
        fontsize=10,
    )


def _run_end(rows: pd.DataFrame, run: int) -> float | None:
    """The simulated time the run ended (its last event), for the time axis."""
    ends = rows.loc[rows["run"] == run, "sim_seconds"].dropna()
    return float(ends.max()) if len(ends) else None


def _who(result, run: int, connection: int) -> str:
    rows = result.rows_view()
    row = rows[(rows["run"] == run) & (rows["connection"] == connection)]
    return f" ({row['transmitter'].iloc[0]} → {row['receiver'].iloc[0]})" if len(row) else ""


def queue(result, fig, run=None, port=None, picked=None) -> None:
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
    end = _run_end(result.rows_view(), run)
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
    ax.set_title(f"Switch output queues: run {run}\n" + _subtitle(result, picked), fontsize=10)


def acr(result, fig, run=None, connection=None, picked=None) -> None:
    """ABR circuits' allowed cell rates over time (one run; every ABR connection, or
    --connection's), Mb/s of cells, each sample holding until the next."""
    df = result.acr_series()
    if df.empty:
        raise PlotError("the result holds no ACR series: run ABR circuits with --series")
    if connection is not None:
        run, connection, sel = _pick_connection(df, run, connection, "ACR series")
    else:
        run, sel = _pick_run(df, run, "ACR series")
    ax = fig.add_subplot()
    end = _run_end(result.to_pandas(), run)
    for c, part in sel.groupby("connection", sort=True):
        part = part.sort_values("t_s", kind="stable")
        t, mbps = part["t_s"].to_numpy(float), part["acr_bps"].to_numpy(float) / 1e6
        if end is not None and t[-1] < end:
            t, mbps = np.append(t, end), np.append(mbps, mbps[-1])
        ax.step(t, mbps, where="post", label=f"connection {c}{_who(result, run, int(c))}")
    ax.set_xlim(0, end or None)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("ACR (Mb/s of cells)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title(f"ABR allowed cell rate: run {run}\n" + _subtitle(result, picked), fontsize=10)


def _one_run(result, df: pd.DataFrame, run: int | None, where: list[str]) -> int | None:
    """The run a one-run figure draws: --run, else the first that --where picks."""
    if not where:
        return run
    runs = sorted(int(r) for r in df["run"].unique())
    if run is not None and run not in runs:
        raise PlotError(f"--run {run} is not among the runs --where picks: {_few(runs)}")
    return run if run is not None else runs[0]


def iat(capture, output: str | Path, driver: str | None = None) -> Path:
    """The inter-arrival-time histogram of a cell tester's capture (``cells.Capture``):
    cells against their IAT in cell slots of the captured link (the European study's
    figures 3a/3b). ``driver``: how the sender spaced its cells (the figures differ by
    driver), named in the title."""
    hist = capture.histogram()
    if not hist:
        raise PlotError(f"{capture.path}: fewer than two cells: no inter-arrival time")
    fig = _figure()
    ax = fig.add_subplot()
    slots = [k for k, _ in hist]
    counts = [n for _, n in hist]
    ax.bar(slots, counts, width=0.8, color="tab:blue")
    for k, n in hist:
        ax.annotate(str(n), (k, n), ha="center", va="bottom", fontsize=8)
    lk = capture.link
    ax.set_xlabel(f"inter-arrival time (cell slots of {lk.slot_us:.4g} µs)")
    ax.set_ylabel("cells")
    ax.set_xlim(-0.5, max(slots) + 1.5)
    ax.set_ylim(0, max(counts) * 1.1)
    where = lk.description or Path(capture.path).name
    sent = f"\nsender: {driver}" if driver else ""
    ax.set_title(f"{where}: {capture.cells} cells, {capture.pdus} PDUs{sent}", fontsize=10)
    output = Path(output)
    meta = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(output.suffix.lower())
    fig.savefig(output, dpi=120, metadata=meta)
    return output


def plot(
    result,
    kind: str,
    output: str | Path,
    *,
    run: int | None = None,
    connection: int | None = None,
    port: int | None = None,
    where: list[str] | tuple[str, ...] = (),
    by: str | None = None,
    compare: str | None = None,
) -> Path:
    """Draw ``kind`` from ``result`` into ``output`` (.png, .svg or .pdf).

    ``where``: ``KEY=VALUE`` picks (a sweep parameter or a row column); ``by``: a line
    or panel per value of one; ``compare="published"``: the study's published values
    (buffer-grid on lan-buffers; window on wan-window draws them always)."""
    if kind not in KINDS:
        raise PlotError(f"plot kind {kind!r}: expected one of {', '.join(KINDS)}")
    if kind in CAPTURE:
        raise PlotError(f"{kind} draws a cell tester's capture: plots.iat(cells.read(FILE))")
    if compare not in (None, "published"):
        raise PlotError(f"--compare {compare}: expected published")
    if compare and kind != "buffer-grid":
        raise PlotError(
            f"--compare published: {kind} has no published grid to compare "
            "(buffer-grid on lan-buffers; window on wan-window draws its published points itself)"
        )
    if by and kind in ONE_RUN + ("buffer-surface",):
        raise PlotError(
            f"--by: {kind} draws one {'surface' if kind == 'buffer-surface' else 'run'}"
            "; pick the others' values with --where"
        )
    output = Path(output)
    fig = _figure()
    df, picked = select(_rows(result), list(where), result.params)
    params = result.params
    if kind not in ONE_RUN and "traffic" in df and df["traffic"].eq("rr").any():
        raise PlotError(
            f"{kind} draws throughput; the result's connections are request/response "
            "(traffic rr), measured in transactions per second (cellbench show: "
            "mean_trans_per_s)"
        )
    if kind in ONE_RUN:
        run = _one_run(result, df, run, list(where))
        if kind == "cwnd":
            cwnd(result, fig, run, connection, picked)
        elif kind == "queue":
            queue(result, fig, run, port, picked)
        elif kind == "acr":
            acr(result, fig, run, connection, picked)
        else:
            time_sequence(result, fig, run, connection, picked)
    elif kind == "buffer-surface" and _equal_buffers(df):
        # Socket buffers set equal at both ends (netperf -s/-S): the surface is over
        # the one buffer and the message size (hetero-lan).
        check_fit(
            df,
            kind,
            {
                "sndbuf": "the socket buffer (SO_SNDBUF = SO_RCVBUF)",
                "blocksize": "the message size",
            },
            params,
            by,
        )
        message_surface(result, fig, df, picked)
    elif kind in ("buffer-grid", "buffer-surface"):
        check_fit(
            df,
            kind,
            {"sndbuf": "the send buffer (SO_SNDBUF)", "rcvbuf": "the receive buffer (SO_RCVBUF)"},
            params,
            by,
            swept="any" if kind == "buffer-grid" else "all",
        )
        pairs = df[["sndbuf", "rcvbuf"]].drop_duplicates()
        if len(pairs) > 1 and len(pairs) == pairs["sndbuf"].nunique() == pairs["rcvbuf"].nunique():
            raise PlotError(
                f"{kind} needs the send and receive buffers swept apart: in this result each "
                "send buffer comes with its own receive buffer (a window sweep: --kind window)"
            )
        if kind == "buffer-grid":
            buffer_grid(result, fig, df, picked, by, compare)
        else:
            buffer_surface(result, fig, df, picked)
    elif kind == "window":
        df = df.assign(window=np.minimum(df["sndbuf"], df["rcvbuf"]))
        check_fit(df, kind, {"window": "the window (min of SO_SNDBUF, SO_RCVBUF)"}, params, by)
        window(result, fig, df, picked, by)
    elif kind == "message-size":
        check_fit(df, kind, {"blocksize": "the message (write) size"}, params, by)
        message_size(result, fig, df, picked, by)
    elif kind == "measurements":
        measurements(result, fig, df, picked, params)
    elif kind == "port-buffer":
        from cellbench.plots.port import PortBufferError, port_buffer

        try:
            port_buffer(result, fig, df, picked)
        except PortBufferError as e:
            raise PlotError(str(e)) from None
    elif kind == "segment-size":
        if "mtu" not in df:
            raise PlotError(
                "segment-size needs the MTU swept (testbed { mtu = $mtu; } and mtu = [...] "
                "in the sweep): this result has one MTU"
            )
        check_fit(df, kind, {"mtu": "the MTU (segment size + 40)"}, params, by)
        segment_size(result, fig, df, picked, by)
    else:
        if df["offered_bps"].isna().all():
            raise PlotError(
                "offered-load needs constant-rate traffic (burst/burstq with blocksize and "
                "period): the result's connections have no offered load"
            )
        # The aggregate offered load of a point is a sum over its connections: the
        # connections themselves are not a dimension here.
        load = df.groupby(["point", "run"])["offered_bps"].transform("sum")
        df = df.assign(aggregate_offered=load)
        check_fit(df, kind, {"aggregate_offered": "the offered load"}, params, by, False)
        offered_load(result, fig, df, picked, by)
    # No dates in the file: the same result draws the same bytes.
    meta = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(output.suffix.lower())
    fig.savefig(output, dpi=120, metadata=meta)
    return output
