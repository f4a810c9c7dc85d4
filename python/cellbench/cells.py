"""A cell tester's capture read back: each cell's inter-arrival time in cell slots of
the link it was captured on, and their histogram (``cellbench cells``, ``plot --kind
iat``; the European study's IAT figures).

A capture is a pcap of ERF ATM cells (``cellbench run --cells``, the ``tester { }``
block, the emulator's ``--pcap``, ``wire pcap``). The link's cell time comes from the
description the simulator writes beside it (``FILE.json``: ``phy``, ``cell_time_ps``,
``link``), else from ``phy`` (a physical layer, its framing modelled, as the simulator
times its links) or ``slot_us``, which also override it. An inter-arrival time is the
time from one cell's start on the link to the next one's, in slots, rounded to the
nearest whole slot: a tester counts slots.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from cellbench import _native, wire
from cellbench.files import FileRefused, check_regular, printable, read_bounded

#: The largest capture description read (``FILE.json``: a few keys, some 200 bytes).
MAX_DESCRIPTION_BYTES = 1 << 20


class CaptureError(ValueError):
    """A capture that cannot be read, or whose link is unknown: one line."""


@dataclass
class Link:
    slot_ps: int
    #: Where the slot came from: "FILE.json", "--phy oc3c", "--slot-us 2.726".
    source: str
    phy: str | None = None
    #: The place, in words (from the description).
    description: str | None = None

    @property
    def slot_us(self) -> float:
        return self.slot_ps / 1e6


@dataclass
class Capture:
    path: str
    link: Link
    cells: int
    pdus: int
    #: Cells per (VPI, VCI), all cells of the file.
    vcs: dict[tuple[int, int], int]
    first_s: float | None
    last_s: float | None
    #: Each cell's time since the previous one, in whole slots (one fewer than cells).
    slots: list[int] = field(repr=False)
    vc: tuple[int, int] | None = None
    #: The same in picoseconds, unrounded; and the indices of the cells ending PDUs.
    iat_ps: list[int] = field(default_factory=list, repr=False)
    pdu_ends: list[int] = field(default_factory=list, repr=False)

    def histogram(self) -> list[tuple[int, int]]:
        """(IAT in slots, cells), by increasing IAT."""
        return sorted(Counter(self.slots).items())


def sidecar_path(path: str | os.PathLike) -> Path:
    return Path(f"{os.fspath(path)}.json")


def link(path: str | os.PathLike, phy: str | None = None, slot_us: float | None = None) -> Link:
    """The captured link's cell slot: ``slot_us``, else ``phy``'s cell time, else the
    capture's description (``FILE.json``)."""
    if phy is not None and slot_us is not None:
        raise CaptureError("--phy and --slot-us both give the cell slot: give one")
    if slot_us is not None:
        if not 0 < slot_us < 1e9:
            raise CaptureError(f"--slot-us {slot_us}: expected a cell slot > 0 µs")
        return Link(round(slot_us * 1e6), f"--slot-us {slot_us:g}")
    if phy is not None:
        from cellbench import calc

        us = calc.phy_rates(phy)["cell_time_us"]
        return Link(round(us * 1e6), f"--phy {phy}", phy)
    side = sidecar_path(path)
    try:
        text = read_bounded(side, MAX_DESCRIPTION_BYTES, "a capture's description").decode()
    except FileRefused as e:
        raise CaptureError(str(e)) from None
    except FileNotFoundError:
        raise CaptureError(
            f"{path}: the link's cell time is unknown ({side} not found, which the simulator "
            "writes beside its captures): give --phy PHY (e.g. oc3c) or --slot-us US"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise CaptureError(f"{side}: cannot read the capture's description ({e})") from None
    try:
        d = json.loads(text)
    except ValueError as e:
        raise CaptureError(f"{side}: not a capture description (bad JSON: {e})") from None
    except RecursionError:  # (json's decoder recurses per level of nesting)
        raise CaptureError(f"{side}: not a capture description (nested too deeply)") from None
    ps = _picoseconds(d, "cell_time_ps", side)
    # A tester that counts in a slot of its own (tester { slot_us = ...; }).
    slot = _picoseconds(d, "slot_ps", side) if "slot_ps" in d else ps
    # (Text from the file, shown escaped: it reaches the terminal.)
    phy_name = printable(d["phy"]) if isinstance(d.get("phy"), str) else None
    where = printable(d["link"]) if isinstance(d.get("link"), str) else None
    source = side.name if slot == ps else f"{side.name}: the tester's; the link's {ps / 1e6:.6g} µs"
    return Link(slot, source, phy_name, where)


def _picoseconds(d, key: str, side: Path) -> int:
    ps = d.get(key) if isinstance(d, dict) else None
    if isinstance(ps, bool) or not isinstance(ps, int) or not 0 < ps < 10**18:
        raise CaptureError(
            f"{side}: not a capture description (expected {key}, a whole number of "
            f"picoseconds > 0; found {ps!r}): give --phy or --slot-us"
        )
    return ps


def parse_vc(text: str) -> tuple[int, int]:
    """``VPI/VCI`` (``0/32``)."""
    vpi, sep, vci = text.partition("/")
    if not sep or not vpi.isdigit() or not vci.isdigit():
        raise CaptureError(f"--vc {text}: expected VPI/VCI, e.g. 0/32")
    if int(vpi) > 255 or int(vci) > 65535:
        raise CaptureError(f"--vc {text}: VPI 0..255 and VCI 0..65535 (a UNI label)")
    return int(vpi), int(vci)


def read(
    path: str | os.PathLike,
    *,
    phy: str | None = None,
    slot_us: float | None = None,
    vc: tuple[int, int] | None = None,
) -> Capture:
    """Read a capture and measure its cells' inter-arrival times (``vc``: one VC's)."""
    path = os.fspath(path)
    try:
        check_regular(path, wire.MAX_PCAP_BYTES, "a capture")
    except FileNotFoundError:
        raise CaptureError(f"{path}: no such capture file") from None
    except OSError as e:
        raise CaptureError(f"{path}: cannot read the capture ({e.strerror})") from None
    except FileRefused as e:
        raise CaptureError(f"{e} (read a part of it: editcap -c)") from None
    lk = link(path, phy, slot_us)
    vpi, vci = vc if vc is not None else (None, None)
    try:
        x = _native.pcap_cell_iats(path, lk.slot_ps, vpi, vci)
    except ValueError as e:
        raise CaptureError(str(e)) from None
    return Capture(
        path=path,
        link=lk,
        cells=x["cells"],
        pdus=x["pdus"],
        vcs={(p, c): n for p, c, n in x["vcs"]},
        first_s=None if x["first_ps"] is None else x["first_ps"] / 1e12,
        last_s=None if x["last_ps"] is None else x["last_ps"] / 1e12,
        slots=list(x["slots"]),
        vc=vc,
        iat_ps=list(x["iat_ps"]),
        pdu_ends=list(x["pdu_ends"]),
    )


@dataclass
class Pattern:
    """What a capture shows of the adapter's spacing, within its PDUs (slots)."""

    #: The most common inter-arrival time inside PDUs (the spacing interval; 1 for bursts),
    #: and the mean of the intervals that round to it, µs.
    regular: int
    regular_us: float
    #: Each longer interval inside a PDU: (its increase over ``regular``, the cells
    #: since the previous one or the PDU's first cell).
    stalls: list[tuple[int, int]]
    #: Lengths of the runs of back-to-back cells (one slot apart) inside PDUs.
    bursts: list[int]
    #: Slots from each burst's first cell to the next one's, inside PDUs.
    burst_starts: list[int]
    #: The inter-arrival time of each PDU's first cell (after the previous PDU's last).
    pdu_gaps: list[int]
    #: PDUs looked at (every one the capture ends).
    pdus: int


def pattern(c: Capture) -> Pattern:
    """The spacing pattern inside the capture's complete PDUs."""
    slot = c.link.slot_ps
    inside: list[list[int]] = []  # per PDU, the IATs (ps) between its cells
    gaps = []
    for i, end in enumerate(c.pdu_ends):
        first = c.pdu_ends[i - 1] + 1 if i else 0  # a capture starts at a PDU's first cell
        inside.append(c.iat_ps[first:end])
        if i:
            gaps.append(c.slots[first - 1])

    def whole(ps: int) -> int:
        return (2 * ps + slot) // (2 * slot)

    counts = Counter(whole(d) for pdu in inside for d in pdu)
    regular = counts.most_common(1)[0][0] if counts else 0
    at_regular = [d for pdu in inside for d in pdu if whole(d) == regular]
    regular_us = sum(at_regular) / len(at_regular) / 1e6 if at_regular else 0.0
    stalls, bursts, starts = [], [], []
    for pdu in inside:
        since, run, t, start = 0, 1, 0, 0
        for d in pdu:
            since, t, k = since + 1, t + d, whole(d)
            if k > regular:
                stalls.append((k - regular, since))
                since = 0
            if k <= 1:
                run += 1
                continue
            # A cell more than one slot after the one before starts a burst.
            bursts.append(run)
            starts.append(whole(t - start))
            run, start = 1, t
        bursts.append(run)
    return Pattern(regular, regular_us, stalls, bursts, starts, gaps, len(inside))


def report(c: Capture, max_slots: int | None = None) -> str:
    """The capture's histogram as a table, with what was measured where; ``max_slots``:
    longer inter-arrival times counted in one last row (idle periods between bursts)."""
    lk = c.link
    where = ", ".join(x for x in (lk.description, lk.phy) if x)
    vcs = ", ".join(f"{p}/{v} ({n})" for (p, v), n in sorted(c.vcs.items())) or "none"
    span = (c.last_s - c.first_s) if c.cells else 0.0
    lines = [
        f"{c.path}: {c.cells} cells{f' of VC {c.vc[0]}/{c.vc[1]}' if c.vc else ''}, "
        f"{c.pdus} PDUs (last cells), over {span * 1e3:.3f} ms; VCs (cells): {vcs}",
        f"link: {where + '; ' if where else ''}cell slot {lk.slot_us:.6g} µs (from {lk.source})",
    ]
    if len(c.slots) == 0:
        lines.append("no inter-arrival time: fewer than two cells")
        return "\n".join(lines)
    lines.append("inter-arrival time in cell slots (rounded to the nearest slot), and cells:")
    hist = c.histogram()
    longer = sum(n for k, n in hist if max_slots is not None and k > max_slots)
    hist = [(k, n) for k, n in hist if max_slots is None or k <= max_slots]
    if longer:
        hist.append((f"> {max_slots}", longer))  # type: ignore[arg-type]
    width = max(len(str(n)) for _, n in hist)
    top = max(n for _, n in hist)
    lines.append(f"{'slots':>6} {'cells':>{max(width, 5)}}")
    for k, n in hist:
        bar = "#" * max(1, round(40 * n / top))
        lines.append(f"{k:>6} {n:>{max(width, 5)}} {bar}")
    return "\n".join(lines)


def to_json(c: Capture) -> dict:
    return {
        "file": c.path,
        "cells": c.cells,
        "pdus": c.pdus,
        "vc": f"{c.vc[0]}/{c.vc[1]}" if c.vc else None,
        "vcs": [{"vpi": p, "vci": v, "cells": n} for (p, v), n in sorted(c.vcs.items())],
        "first_s": c.first_s,
        "last_s": c.last_s,
        "slot_us": c.link.slot_us,
        "slot_from": c.link.source,
        "phy": c.link.phy,
        "link": c.link.description,
        "histogram": [{"slots": k, "cells": n} for k, n in c.histogram()],
    }
