"""The published results cellbench carries and tests against (python/cellbench/data).

Each CSV is a study's published table as the study reported it, with a header comment
saying what was measured and on what setup; the setups are the classic testbeds the
simulator's presets describe (testbeds.rs, reproduce/*.netspec)."""

from __future__ import annotations

import csv
from importlib import resources


def _rows(name: str) -> list[list[str]]:
    text = resources.files("cellbench.data").joinpath(name).read_text()
    return [
        row for row in csv.reader(line for line in text.splitlines() if not line.startswith("#"))
    ]


def size_label(nbytes: int) -> str:
    """The study's labels: 16K, 20K, ... and 51K for 52428 bytes."""
    return "51K" if nbytes == 52428 else f"{nbytes // 1024}K"


def label_size(label: str) -> int:
    return 52428 if label == "51K" else int(label.rstrip("K")) * 1024


def lan_buffer_table() -> dict[tuple[int, int], float]:
    """(send buffer bytes, receive buffer bytes) -> mean Mbit/s in ttcp's unit (2^20)."""
    rows = _rows("lan_buffer_table.csv")
    header = rows[0][1:]
    table = {}
    for row in rows[1:]:
        for label, value in zip(header, row[1:]):
            table[(label_size(row[0]), label_size(label))] = float(value)
    return table


#: The cells the study itself marks anomalous (the table's comment line).
LAN_ANOMALOUS = (
    {
        (16 * 1024, r)
        for r in [
            24 * 1024,
            28 * 1024,
            32 * 1024,
            36 * 1024,
            40 * 1024,
            44 * 1024,
            48 * 1024,
            52428,
        ]
    }
    | {(20 * 1024, r) for r in [40 * 1024, 44 * 1024, 48 * 1024, 52428]}
    | {(24 * 1024, r) for r in [48 * 1024, 52428]}
)


def wan_window_table() -> dict[int, float]:
    """Window bytes -> published throughput in bits/s (the table gives 10^6 bit/s)."""
    rows = _rows("wan_window_table.csv")
    return {int(w): float(v) * 1e6 for w, v in rows[1:]}


def hetero_lan_maxima() -> dict[str, tuple[float, float]]:
    """Pair ("ultra1->ultra1", as reproduce.hetero_lan names it) -> (the study's maximum
    netperf throughput in Mb/s, 10^6 bit/s, its percent of the TCP payload rate)."""
    rows = _rows("hetero_lan_maxima.csv")
    return {f"{s}->{r}": (float(mbps), float(pct)) for s, r, _, mbps, pct in rows[1:]}
