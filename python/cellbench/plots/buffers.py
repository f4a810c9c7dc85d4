"""``buffer-grid`` and ``buffer-surface``: mean throughput over sender SO_SNDBUF ×
receiver SO_RCVBUF as heat maps with the values written in and lock-step cells marked.

- ``buffer-grid``: ttcp's Mbit/s (2^20 bit/s, like the published grid), the
  replications' min–max under each mean; a panel per ``--by`` value;
  ``compare="published"`` adds the published mean under each cell and the error per
  cell (lan-buffers).
- ``buffer-surface``: the same with its maximum (and the published maximum) marked; on
  a result whose socket buffers are equal at both ends and whose message size varies
  (hetero-lan), over socket buffer × message size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import MBIT, MBPS, PlotError, note, size_label, subtitle
from cellbench.plots.kinds import Request
from cellbench.plots.pick import check_fit, facets
from cellbench.plots.published import hetero_published, published_grid


def grid_means(df: pd.DataFrame):
    """Per send × receive buffer: the mean of ttcp's Mbit/s, its min and max over the
    replications and whether most were in the lock-step, as arrays (rows: SO_SNDBUF)."""
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


def heat(ax, snd, rcv, z, text, cmap="viridis", vmin=None, vmax=None):
    """``z`` as a heat map, rows ``snd`` and columns ``rcv`` labelled in K, with ``text``
    written in each cell (white on the dark ones)."""
    im = ax.imshow(z, origin="lower", cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
    # Past ten columns (the Ultra-1 surface has 16) the labels would touch: turned.
    turned = {"rotation": 45, "ha": "right", "rotation_mode": "anchor"} if len(rcv) > 10 else {}
    ax.set_xticks(range(len(rcv)), [size_label(x) for x in rcv], **turned)
    ax.set_yticks(range(len(snd)), [size_label(x) for x in snd])
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


def buffer_grid(result, fig, request: Request) -> None:
    """The grid (a panel per --by value), or beside the published grid its error per cell."""
    from matplotlib.patches import Patch

    from cellbench.data.published import LAN_ANOMALOUS

    df, picked, by, compare = request.rows, request.picked, request.by, request.compare
    panels = facets(df, by)
    if compare and by:
        raise PlotError("--compare published draws one grid: pick the other values with --where")
    width = 7.5 if compare is None and len(panels) == 1 else 7.0 * min(len(panels) + 1, 3)
    fig.set_size_inches(width, 5.8 if len(panels) <= 3 else 5.2 * ((len(panels) + 2) // 3))
    ncols = 2 if compare else min(len(panels), 3)
    nrows = 1 if compare else (len(panels) + ncols - 1) // ncols
    for k, (label, part) in enumerate(panels):
        snd, rcv, z, lock, (lo, hi), runs = grid_means(part)
        ax = fig.add_subplot(nrows, ncols, k + 1)
        pub = published_grid(result, snd, rcv) if compare else None
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
        im = heat(ax, snd, rcv, z, text)
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
            im2 = heat(ax2, snd, rcv, err, etext, cmap="RdBu_r", vmin=-bound, vmax=bound)
            fig.colorbar(im2, ax=ax2, label="(simulated − published) / published (%)")
            ax2.set_title("error per cell against the published grid", fontsize=9)
    spread = (
        f"; under it, the {runs} replications' min–max" + (" (as errors, right)" if compare else "")
        if runs > 1
        else ""
    )
    fig.suptitle(
        "Mean ttcp throughput over send × receive buffer (Mbit/s, 2^20 bit/s)\n"
        + subtitle(result, picked),
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
    snd, rcv, z, lock, _, _ = grid_means(df)
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
            pub = published_grid(result, snd, rcv)
        except PlotError:
            pub = None
        if pub is not None:
            i, j = np.unravel_index(np.nanargmax(pub), pub.shape)
            published = (i, j, float(pub[i, j]))
    im = heat(ax, snd, rcv, z, text)
    fig.colorbar(im, ax=ax, label="mean " + MBIT)
    handles = _mark_maximum(ax, z, "Mbit/s (2^20)", published, " (the study's grid)")
    handles.append(note("* = Nagle/delayed-ACK lock-step (most replications)"))
    _surface_legend(fig, handles)
    ax.set_title(
        "Throughput over send × receive buffer (Mbit/s, 2^20 bit/s)\n" + subtitle(result, picked),
        fontsize=10,
    )


def equal_buffers(df: pd.DataFrame) -> bool:
    """Every run set its send and receive buffers alike, and the message size varies."""
    return bool((df["sndbuf"] == df["rcvbuf"]).all()) and df["blocksize"].nunique() > 1


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
    pub = hetero_published(result, df)
    top = max(float(np.nanmax(z)), pub[1] if pub else 0.0)
    im = heat(ax, buf, msg, z, text, vmin=0.0, vmax=top)
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
        + subtitle(result, picked),
        fontsize=10,
    )


def _fit_buffers(df: pd.DataFrame, kind: str, params: list[str], by, swept: str) -> pd.DataFrame:
    """Both buffers swept (a grid may be one row or one column), and swept apart: a
    window sweep pairs each send buffer with its own receive buffer."""
    check_fit(
        df,
        kind,
        {"sndbuf": "the send buffer (SO_SNDBUF)", "rcvbuf": "the receive buffer (SO_RCVBUF)"},
        params,
        by,
        swept=swept,
    )
    pairs = df[["sndbuf", "rcvbuf"]].drop_duplicates()
    if len(pairs) > 1 and len(pairs) == pairs["sndbuf"].nunique() == pairs["rcvbuf"].nunique():
        raise PlotError(
            f"{kind} needs the send and receive buffers swept apart: in this result each "
            "send buffer comes with its own receive buffer (a window sweep: --kind window)"
        )
    return df


def fit_grid(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    """A grid may be one row or one column of the buffers."""
    return _fit_buffers(df, "buffer-grid", params, by, swept="any")


def fit_surface(df: pd.DataFrame, params: list[str], by) -> pd.DataFrame:
    """Both axes swept, over socket buffer × message size or send × receive buffer."""
    if equal_buffers(df):
        # Socket buffers set equal at both ends (netperf -s/-S): the surface is over
        # the one buffer and the message size (hetero-lan).
        check_fit(
            df,
            "buffer-surface",
            {
                "sndbuf": "the socket buffer (SO_SNDBUF = SO_RCVBUF)",
                "blocksize": "the message size",
            },
            params,
            by,
        )
        return df
    return _fit_buffers(df, "buffer-surface", params, by, swept="all")


def surface(result, fig, request: Request) -> None:
    """buffer-surface: over socket buffer × message size where both ends' buffers are
    equal, else over send × receive buffer."""
    if equal_buffers(request.rows):
        message_surface(result, fig, request.rows, request.picked)
    else:
        buffer_surface(result, fig, request.rows, request.picked)
