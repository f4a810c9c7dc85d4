"""The published values a figure draws beside the simulated ones, from the tables the
repository carries (``data.published``): lan-buffers' grid, hetero-lan's maxima (Table
3), wan-window's points with its two bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellbench.plots.figure import PlotError


def published_grid(result, snd, rcv):
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


def hetero_published(result, df: pd.DataFrame):
    """(pair, published maximum Mb/s, its percent of the TCP payload rate) or None."""
    from cellbench.data.published import hetero_lan_maxima

    pair = hetero_pair(result, df)
    published = hetero_lan_maxima().get(pair.name) if pair is not None else None
    if published is None:
        return None
    return pair, published["max_bps"] / 1e6, published["percent_of_theoretical"]


def wan_window_published(result, ax, windows: pd.Series) -> None:
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
