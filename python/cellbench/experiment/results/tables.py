"""Every table of a result and its columns: the runs table (``columns``) with one
column per sweep parameter at its end, and the tables beside it, one row per port,
trace line, policer or series sample per run (the simulator's records, ``vocab``)."""

from __future__ import annotations

from cellbench import vocab
from cellbench.experiment.results.columns import _ARROW, ROW_COLUMNS

_RUN_IDENT = [("run", "int64"), ("point", "int64"), ("replication", "int64")]


def record_columns(record: str) -> list[tuple[str, str]]:
    """A simulator record's scalar fields (``vocab``) as columns, in its order."""
    return [
        (f["name"], _ARROW[f["kind"]])
        for f in vocab.fields(record)
        if f["kind"] not in vocab.NESTED_KINDS
    ]


#: Per switch output port per run: cells in, out, lost (by cause: buffer full, PPD,
#: EPD, a UPC here; CLP = 1 cells at the CLP-1 threshold), peak occupancy, cells
#: tagged by a UPC, PDUs damaged.
PORT_COLUMNS = [*_RUN_IDENT, *record_columns("port")]
#: Per traced segment: the line as printed, and the same segment as data (time,
#: which end sent it, flags, sequence range, ACK, window, why it was sent).
TRACE_COLUMNS = [
    *_RUN_IDENT,
    ("connection", "int64"),
    ("line_no", "int64"),
    ("line", "string"),
    *record_columns("trace"),
]
#: Per UPC policer per run: its trunk and the cells it judged.
POLICER_COLUMNS = [*_RUN_IDENT, *record_columns("policer")]

CWND_COLUMNS = [
    *_RUN_IDENT,
    ("connection", "int64"),
    ("t_s", "float64"),
    ("cwnd", "int64"),
    ("ssthresh", "int64"),
    ("flight", "int64"),
    # The smoothed RTT (µs) where the engine measures one (the real engine's TCP_INFO).
    ("srtt_us", "float64"),
]
QUEUE_COLUMNS = [
    *_RUN_IDENT,
    ("port", "int64"),
    ("host", "string"),
    ("t_s", "float64"),
    ("cells", "int64"),
]
#: Per sample of an ABR circuit's allowed cell rate (``sim::net::abr``), bit/s of cells.
ACR_COLUMNS = [
    *_RUN_IDENT,
    ("connection", "int64"),
    ("t_s", "float64"),
    ("acr_bps", "float64"),
]
#: The per-run tables besides ``runs``: folder -> columns.
PARTS = {
    "ports": PORT_COLUMNS,
    "traces": TRACE_COLUMNS,
    "cwnd": CWND_COLUMNS,
    "queue": QUEUE_COLUMNS,
    "policers": POLICER_COLUMNS,
    "acr": ACR_COLUMNS,
}
#: Every table, in the order a run hands them over (``write_run``).
TABLES = ("runs", "traces", "ports", "cwnd", "queue", "policers", "acr")


def param_columns(sweep_params: list[dict]) -> list[tuple[str, str]]:
    """A column per sweep parameter, typed from its values; renamed if it would clash."""
    taken = {n for n, _ in ROW_COLUMNS}
    out = []
    for p in sweep_params:
        values = p["values"]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = "int64"
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            kind = "float64"
        else:
            kind = "string"
        name = p["key"] if p["key"] not in taken else f"param.{p['key']}"
        out.append((name, kind))
    return out


def _columns(meta: dict) -> dict[str, list[tuple[str, str]]]:
    """Each table's columns; the runs table ends with one column per sweep parameter."""
    return {"runs": ROW_COLUMNS + [tuple(c) for c in meta["param_columns"]], **PARTS}
