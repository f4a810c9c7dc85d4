"""The runs table's columns, engine by engine: the identity and configuration every row
has, then each engine's measures (the simulator's from its vocabulary, the real
engine's and the emulator's as they declare them) in the order they were first
stored, so a part's schema only ever grows at its end."""

from __future__ import annotations

from cellbench import vocab
from cellbench.emu import columns as emu_columns
from cellbench.real import columns as real_columns

#: What the runner knows of a row before its run: identity and configuration
#: (``engines.rows.connection_row``).
IDENTITY_COLUMNS: list[tuple[str, str]] = [
    ("run", "int64"),
    ("point", "int64"),
    ("replication", "int64"),
    ("seed", "int64"),
    ("connection", "int64"),
    ("test", "string"),
    ("transmitter", "string"),
    ("receiver", "string"),
    ("protocol", "string"),
    ("traffic", "string"),
    ("blocksize", "int64"),
    ("receiver_blocksize", "int64"),
    ("nbytes", "int64"),
    ("duration_s", "float64"),
    ("period_us", "float64"),
    ("offered_bps", "float64"),
    ("sndbuf", "int64"),
    ("rcvbuf", "int64"),
    ("nodelay", "bool"),
]


#: A vocabulary kind as an Arrow type name (a list of strings is stored joined).
_ARROW = {
    "int": "int64",
    "float": "float64",
    "bool": "bool",
    "string": "string",
    "strings": "string",
}
#: A lock-step cycle's field stored under another name than ``cycle_`` + its own
#: (the name lan-buffers' traced rows gave it first).
_CYCLE_NAMES = {"pattern_repeats": "cycle_repeats"}


def runs_column(field: dict) -> str | None:
    """The runs-table column that stores a simulator result field (``vocab``), or
    None where another table keeps it: a connection's and its run's fields under their
    own names, its lock-step cycle's as ``cycle_*``, the run's cell tester's as
    ``tester_*``, and of the policers' verdicts whether all met their contracts
    (``met_contract``; each policer's counts are the policers table's)."""
    if field["kind"] in vocab.NESTED_KINDS or field["name"] == "trace":
        return None
    record, name = field["record"], field["name"]
    if record in ("connection", "run"):
        return name
    if record == "lockstep_cycle":
        return _CYCLE_NAMES.get(name, f"cycle_{name}")
    if record == "cells":
        return f"tester_{name}"
    if record == "policer" and name == "met_contract":
        return name
    return None


def _simulator_columns() -> list[tuple[str, str]]:
    """The runs columns of the simulator's measures, in the vocabulary's order."""
    taken = {n for n, _ in IDENTITY_COLUMNS}
    out = []
    for f in vocab.RESULT_FIELDS:
        name = runs_column(f)
        if name is not None and name not in taken:
            out.append((name, _ARROW[f["kind"]]))
    return out


def _row_columns() -> list[tuple[str, str]]:
    """Every runs column in the order they were first stored, so that a part's schema
    only ever grows at its end: identity and configuration, the simulator's measures
    up to request/response (which came after the real engine's clock), the real
    engine's and the emulator's measures, then every simulator field stored since."""
    sim = _simulator_columns()
    names = [n for n, _ in sim]
    rr, since = names.index("transactions"), names.index("transaction_rate") + 1
    return [
        *IDENTITY_COLUMNS,
        *sim[:rr],
        *real_columns.CLOCK_COLUMNS,
        *sim[rr:since],
        *real_columns.MEASURE_COLUMNS,
        *emu_columns.MEASURE_COLUMNS,
        *sim[since:],
    ]


#: Columns of every row, in order: identity and configuration, then what the engines
#: measure; (name, arrow type name). A measure the engine does not report is null.
ROW_COLUMNS: list[tuple[str, str]] = _row_columns()
