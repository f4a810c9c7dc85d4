"""What every figure kind shares: a matplotlib figure (Agg: files only, no display),
the units its axes are labelled in (rates in Mb/s = 10^6 bit/s except where a figure
says ttcp's Mbit/s), the subtitle naming the result, byte-size axes ticked at the
sweep's own values, and the file written without dates (the same result draws the
same bytes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

MBPS = "throughput (Mb/s, 10^6 bit/s)"
MBIT = "throughput (Mbit/s as ttcp prints it, 2^20 bit/s)"


class PlotError(ValueError):
    """The result does not hold what the figure kind needs."""


def new_figure(size=(7.5, 5.5)):
    """A figure drawn off screen (matplotlib's Agg backend), laid out to fit its text."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def size_label(n: float) -> str:
    """A byte size as the studies label it: 16K (K = 1024 bytes), 51K for 52428."""
    n = int(n)
    if n == 52428:
        return "51K"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    return str(n)


def subtitle(result, picked: dict | None = None) -> str:
    """The result a figure was drawn from: its file, testbed, replications, seed and picks."""
    m = result.meta
    exp = m.get("experiment", {}).get("file") or m.get("study", "")
    reps = m.get("replications")
    testbed = m.get("testbed", {}).get("name", "?")
    where = "".join(f", {k}={value_text(v)}" for k, v in (picked or {}).items())
    return (
        f"{Path(str(exp)).name}, testbed {testbed}, {reps} replication(s), "
        f"seed {m.get('seed')}{where}"
    )


def value_text(v) -> str:
    """A parameter's value as --where takes it (4096, not 4096.0)."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def spread_note(df: pd.DataFrame) -> str:
    """What a point of a mean figure is over, as its legend's title."""
    runs = int(df.groupby("point")["run"].nunique().max())
    return f"mean of {runs} replications, bars: min–max" if runs > 1 else "one run per point"


def note(text: str):
    """A legend entry of text only."""
    from matplotlib.patches import Patch

    return Patch(color="none", label=text)


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


def size_axis(ax, values, axis: str = "x") -> None:
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
    (ax.set_xticklabels if axis == "x" else ax.set_yticklabels)([size_label(v) for v in ticks])


def save(fig, output: str | Path) -> Path:
    """Write ``fig`` to ``output`` (.png, .svg or .pdf) with no date in the file: the
    same result draws the same bytes."""
    output = Path(output)
    meta = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(output.suffix.lower())
    fig.savefig(output, dpi=120, metadata=meta)
    return output
