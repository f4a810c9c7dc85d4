"""europe-vp's tester part (docs/europe-vp.md): the SBA-200's own cells as the study's
ATM tester recorded them, once per driver, from the capture of the cell tester
(``europe-vp-tester.netspec``, its ``tester { }`` block).

The histogram and the pattern are read back from the capture (``cellbench.cells``),
never from the adapter's parameters: what a tester on that link would have seen.
"""

from __future__ import annotations

from typing import Any

from cellbench import cells
from cellbench.reproduce import study

#: The study's two drivers and the spacing mode each is (docs/europe-vp.md, docs/design.md §5).
DRIVERS = {"cell-level": "2.2.9", "cell-burst": "2.3.0"}
#: What the study saw (docs/design.md §5, from its IAT figures), printed beside each histogram.
PUBLISHED = {
    "2.2.9": "the spacing interval, plus 7-8 slots after every 21-22 cells",
    "2.3.0": "bursts of 6 cells back to back, burst starts ~40 slots apart",
}
NAME = "europe-vp-tester"


def collect(ran: list[study.Ran]) -> list[dict[str, Any]]:
    """Per driver its capture and pattern, read back from the tester's files."""
    [r] = ran
    assert r.cells_dir is not None
    df = r.result.to_pandas().drop_duplicates("run").sort_values("run")
    parts = []
    for row in df.itertuples(index=False):
        pcap = r.cells_dir / f"run{row.run}.pcap"
        c = cells.read(pcap)
        spacing = str(row.spacing)
        parts.append(
            {
                "driver": DRIVERS.get(spacing, spacing),
                "spacing": spacing,
                "capture": c,
                "pattern": cells.pattern(c),
                "stored": str(pcap) if r.stored else None,
            }
        )
    return parts


def _counts(values) -> str:
    from collections import Counter

    return ", ".join(f"{k} ({n}x)" for k, n in sorted(Counter(values).items())) or "none"


def summary(part: dict) -> str:
    """The pattern, in the study's words."""
    p: cells.Pattern = part["pattern"]
    if part["spacing"] == "cell-burst":
        return (
            f"bursts of {_counts(p.bursts)} cells back to back; burst starts "
            f"{_counts(p.burst_starts)} slots apart"
        )
    increases = _counts(k for k, _ in p.stalls)
    every = _counts(n for _, n in p.stalls)
    return (
        f"regular interval {p.regular} slots ({p.regular_us:.2f} µs); longer by "
        f"{increases} slots, after every {every} cells"
    )


def report(parts: list[dict]) -> str:
    slot = parts[0]["capture"].link.slot_us if parts else 0.0
    lines = [
        "europe-vp, tester: an SBA-200 on TAXI 140 sends 8 KB UDP datagrams (172 cells) at a",
        "requested 22.3 Mb/s (a cell every 19.01 µs) through a switch to a cell tester on 155 Mb/s",
        f"SDH; each cell's inter-arrival time (IAT) in the tester's cell slots ({slot:g} µs), read",
        "from its capture",
    ]
    for part in parts:
        c, p = part["capture"], part["pattern"]
        lines += [
            "",
            f"driver {part['driver']} (spacing = {part['spacing']}): {c.cells} cells, {c.pdus} "
            f"PDUs; between PDUs {_counts(p.pdu_gaps)} slots",
            f"  simulated: {summary(part)}",
            f"  published: {PUBLISHED.get(part['driver'], '-')}",
        ]
        if part["stored"]:
            lines.append(f"  capture: {part['stored']} (cellbench cells, plot --kind iat)")
        lines += ["  " + x for x in cells.report(c).splitlines()[2:]]
    return "\n".join(lines)


def to_json(parts: list[dict]) -> dict:
    out = []
    for part in parts:
        p: cells.Pattern = part["pattern"]
        out.append(
            {
                "driver": part["driver"],
                "spacing": part["spacing"],
                "capture": part["stored"],
                "published": PUBLISHED.get(part["driver"]),
                "regular_slots": p.regular,
                "regular_us": p.regular_us,
                "stalls": [{"increase_slots": k, "after_cells": n} for k, n in p.stalls],
                "bursts": p.bursts,
                "burst_start_slots": p.burst_starts,
                "pdu_gap_slots": p.pdu_gaps,
            }
            | {k: v for k, v in cells.to_json(part["capture"]).items() if k != "file"}
        )
    return {"study": "europe-vp", "part": "tester", "drivers": out}


def _figures(parts: list[dict]) -> dict[str, study.Simulated]:
    """002 §2.5 (Figs. 3a, 3b): the 2.2.9 stall's spacing in cells, the 2.3.0 bursts."""
    by = {part["driver"]: part["pattern"] for part in parts}
    old, new = by["2.2.9"], by["2.3.0"]
    after = [n for _, n in old.stalls]

    def mode(xs: list[int]) -> int:
        return max(set(xs), key=xs.count)

    return {
        "002-s25-229-stall": study.Simulated(
            sum(after) / len(after),
            detail=f"increases of {min(k for k, _ in old.stalls)}-{max(k for k, _ in old.stalls)} "
            f"slots after {min(after)}-{max(after)} cells",
        ),
        "002-s25-230-burst": study.Simulated(mode(list(new.bursts)), detail="most common burst"),
        "002-s25-230-period": study.Simulated(
            mode(list(new.burst_starts)), detail="most common gap between burst starts"
        ),
    }


def _frame(parts: list[dict]):
    """Per driver its pattern and capture's figures (``to_json``'s ``drivers``)."""
    import pandas as pd

    return pd.DataFrame(to_json(parts)["drivers"])


#: europe-vp's tester part: beside the vp part, stored in OUT/tester.
PART = study.Part(
    "tester",
    "the adapter's own cells on a cell tester, both drivers' IAT histograms",
    lambda o: [study.Run(NAME, where="tester" if len(o.parts) > 1 else "", cells=True)],
    collect=lambda o, ran: collect(ran),
    report=lambda o, parts: report(parts),
    to_json=lambda o, parts: to_json(parts),
    frame=lambda o, parts: _frame(parts),
    published=(
        study.Compares(
            ("002-s25-229-stall", "002-s25-230-burst", "002-s25-230-period"),
            lambda parts: _figures(parts),
            what="both drivers' cells",
        ),
    ),
)
