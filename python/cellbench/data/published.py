"""The published results cellbench carries and tests against (python/cellbench/data).

Each CSV is a study's published table as the study reported it, with a header comment
saying what was measured and on what setup; the setups are the classic testbeds the
simulator's presets describe (testbeds.rs, reproduce/*.netspec)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
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


#: The hetero-lan table's encapsulation names as cellbench's (Classical IP is RFC 1483
#: LLC/SNAP at MTU 9180; VC-mux at 9188).
_ENCAP = {"classical-ip": "llc-snap", "vc-mux": "vc-mux"}


def hetero_lan_maxima() -> dict[str, dict]:
    """Pair as hetero-lan names it ("sparc10->challenge") -> {"encap": llc-snap | vc-mux,
    "max_bps": the pair's published maximum in bit/s (the table gives 10^6 bit/s),
    "percent_of_theoretical": its share of the TCP payload rate}."""
    rows = _rows("hetero_lan_maxima.csv")
    header = rows[0]
    out = {}
    for row in rows[1:]:
        r = dict(zip(header, row))
        out[f"{r['sender']}->{r['receiver']}"] = {
            "encap": _ENCAP[r["encapsulation"]],
            "max_bps": float(round(float(r["max_mbps"]) * 1e6)),
            "percent_of_theoretical": float(r["percent_of_theoretical"]),
        }
    return out


@dataclass(frozen=True)
class Pair:
    name: str  # as the JSON names it: "ultra1->ultra1"
    transmitter: str  # hosts of the hetero-lan preset
    receiver: str
    encap: str  # llc-snap (Classical IP, MTU 9180) or vc-mux (MTU 9188)

    @property
    def mtu(self) -> int:
        return 9180 if self.encap == "llc-snap" else 9188

    @property
    def mss(self) -> int:
        return self.mtu - 40

    @property
    def slug(self) -> str:
        """The pair as a file name (its result under ``out``)."""
        return self.name.replace("->", "-")


#: hetero-lan's pairs, in the study's order (docs/hetero-lan.md), on the hosts of the
#: ``hetero-lan`` testbed preset.
PAIRS = (
    Pair("sparc10->challenge", "sparc10", "challenge", "llc-snap"),
    Pair("pentium90->pentium90", "pentium90-a", "pentium90-b", "vc-mux"),
    Pair("challenge->pentium100", "challenge", "pentium100", "vc-mux"),
    Pair("ultra1->challenge", "ultra1-a", "challenge", "llc-snap"),
    Pair("sparc20->sparc20", "sparc20-a", "sparc20-b", "vc-mux"),
    Pair("ultra1->ultra1", "ultra1-a", "ultra1-b", "vc-mux"),
)


#: layer_bandwidth.csv's columns: (encapsulation, MTU) on OC-3c with SONET framing.
LAYER_COLUMNS = {"classical_ip_mtu_9180": ("llc-snap", 9180), "vc_mux_mtu_9188": ("vc-mux", 9188)}


def layer_bandwidth() -> dict[tuple[str, int], dict[str, float]]:
    """(encapsulation, MTU) -> layer -> Mb/s (10^6 bit/s) left to it on OC-3c, SONET
    framing counted: the published per-layer table, for the two configurations it gives."""
    rows = _rows("layer_bandwidth.csv")
    header = rows[0]
    out: dict[tuple[str, int], dict[str, float]] = {key: {} for key in LAYER_COLUMNS.values()}
    for row in rows[1:]:
        for col, value in zip(header[1:], row[1:]):
            out[LAYER_COLUMNS[col]][row[0]] = float(value)
    return out


def europe_vp_claim() -> dict[str, float]:
    """europe-vp's published figures, from the paper's text (docs/europe-vp.md): "a 3%
    change in the cell rate took TCP from 19 Mb/s to 1 Mb/s". The 3% is the adapter's
    16.50 µs spacing (under the contract's cell rate) against its 16.01 µs (over it): the
    settings on either side of GCRA T = 16.39 µs its 0.492 µs granularity allows."""
    return {"from_spacing_us": 16.50, "to_spacing_us": 16.01, "from_mbps": 19.0, "to_mbps": 1.0}


#: The studies' claims in words, as their reports print them beside the rows.
CLAIMS = {
    "europe-vp": (
        "published: a 3% change in the cell rate (spacing 16.50 -> 16.01 µs) took TCP from "
        "19 Mb/s to 1 Mb/s; unspaced, the UPC discards and TCP collapses (docs/europe-vp.md)"
    ),
    "wan-mismatch": (
        "published: without pacing, cells are lost where OC-3c meets TAXI and where senders "
        "share a link; with cell-level pacing, none (docs/wan-mismatch.md)"
    ),
    "wan-contention offered-load": (
        "published: past a point the switch buffers overflow, cells are lost, and throughput "
        "drops sharply (docs/wan-contention.md)"
    ),
}


# --- every published result (published_results.csv) ----------------------------------------

#: The kinds of published result (published_results.csv's header says what each means).
KINDS = ("prediction", "calibration", "figure-only")


@dataclass(frozen=True)
class PublishedResult:
    """One row of published_results.csv, its value resolved (``@FILE:KEY`` read from the
    table that holds it)."""

    id: str
    paper: str
    place: str
    quantity: str
    unit: str
    value: float | None
    kind: str
    tolerance: str
    note: str
    #: A line that summarises a table: (label, published) per cell.
    cells: tuple[tuple[str, float], ...] = ()


def _lan_cells(shaded: bool) -> tuple[tuple[str, float], ...]:
    """Table 1's cells the study shades (the lock-step), or the others."""
    table = lan_buffer_table()
    return tuple(
        (f"{size_label(s)}/{size_label(r)}", v)
        for (s, r), v in table.items()
        if ((s, r) in LAN_ANOMALOUS) == shaded
    )


def _reference(ref: str) -> tuple[float, tuple[tuple[str, float], ...]]:
    """``@FILE:KEY[:KEY]``: a value (or a table's cells and their mean) from another table."""
    file, *keys = ref[1:].split(":")
    if file == "lan_buffer_table.csv" and keys in (["collapsed"], ["flowing"]):
        cells = _lan_cells(keys[0] == "collapsed")
        return sum(v for _, v in cells) / len(cells), cells
    if file == "layer_bandwidth.csv" and len(keys) == 2 and keys[0] in LAYER_COLUMNS:
        return layer_bandwidth()[LAYER_COLUMNS[keys[0]]][keys[1]], ()
    if file == "hetero_lan_maxima.csv" and len(keys) == 1:
        return hetero_lan_maxima()[keys[0]]["max_bps"] / 1e6, ()
    if file == "wan_window_table.csv" and len(keys) == 1:
        return wan_window_table()[int(keys[0])] / 1e6, ()
    raise ValueError(f"published_results.csv: {ref}: expected @FILE:KEY of a table here")


def published_results() -> list[PublishedResult]:
    """Every published result of the five papers, in the papers' order."""
    rows = _rows("published_results.csv")
    header = rows[0]
    out = []
    for row in rows[1:]:
        r = dict(zip(header, row))
        cells: tuple[tuple[str, float], ...] = ()
        text = r["published"]
        if text.startswith("@"):
            value, cells = _reference(text)
        else:
            value = float(text) if text else None
        if r["kind"] not in KINDS:
            raise ValueError(
                f"published_results.csv: {r['id']}: kind {r['kind']!r}, expected {KINDS}"
            )
        out.append(
            PublishedResult(
                r["id"],
                r["paper"],
                r["place"],
                r["quantity"],
                r["unit"],
                value,
                r["kind"],
                r["tolerance"],
                r["note"],
                cells,
            )  # fmt: skip
        )
    return out
