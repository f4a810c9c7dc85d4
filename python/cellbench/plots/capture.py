"""``iat``: the inter-arrival-time histogram of a cell tester's capture (a pcap, or a
result's cells/), the European study's figures 3a/3b."""

from __future__ import annotations

from pathlib import Path

from cellbench.plots.figure import PlotError, new_figure, save


def iat(capture, output: str | Path, driver: str | None = None) -> Path:
    """The inter-arrival-time histogram of a cell tester's capture (``cells.Capture``):
    cells against their IAT in cell slots of the captured link (the European study's
    figures 3a/3b). ``driver``: how the sender spaced its cells (the figures differ by
    driver), named in the title."""
    hist = capture.histogram()
    if not hist:
        raise PlotError(f"{capture.path}: fewer than two cells: no inter-arrival time")
    fig = new_figure()
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
    return save(fig, output)
