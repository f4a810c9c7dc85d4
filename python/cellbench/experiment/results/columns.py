"""The runs table's columns, engine by engine: the identity and configuration every row
has, then each engine's measures (the simulator's from its vocabulary, the other
engines' column groups as each declares them, ``ColumnGroup``, handed over by the engine
table) in the order they were first stored, so a part's schema only ever grows at its
end."""

from __future__ import annotations

from dataclasses import dataclass

from cellbench import vocab

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


@dataclass(frozen=True)
class ColumnGroup:
    """Measures an engine adds to the runs table, beside the identity and configuration
    every engine fills and the simulator's vocabulary. An engine declares its groups on
    its class (``Engine.columns``); the engine table hands them to the store
    (``use_engine_groups``), which is below every engine and so never imports one."""

    #: The group's name (engines that fill the same measures share a group).
    name: str
    #: (name, Arrow type name) in the order stored.
    columns: tuple[tuple[str, str], ...]
    #: The column it was first stored after, so that a part's schema only ever grows at
    #: its end; None: after every column there is (a new group's place).
    after: str | None = None


def _row_columns(groups: list[ColumnGroup]) -> list[tuple[str, str]]:
    """Every runs column in the order they were first stored: identity and
    configuration, the simulator's measures in its vocabulary's order, each engine's
    group after the column it follows (``ColumnGroup.after``), a group that names none
    at the end."""
    out = [*IDENTITY_COLUMNS, *_simulator_columns()]
    waiting = list(groups)
    while waiting:
        names = [n for n, _ in out]
        ready = [g for g in waiting if g.after is None or g.after in names]
        if not ready:
            raise ValueError(
                f"engine column group {waiting[0].name!r}: after {waiting[0].after!r}, "
                "which no runs column or other group holds"
            )
        for g in ready:
            names = [n for n, _ in out]
            clash = sorted({n for n, _ in g.columns} & set(names))
            if clash:
                raise ValueError(f"engine column group {g.name!r}: {', '.join(clash)} taken")
            at = len(out) if g.after is None else names.index(g.after) + 1
            out[at:at] = g.columns
            waiting.remove(g)
    return out


#: Each engine's own groups by name, as the engine table gave them (``use_engine_groups``).
ENGINE_COLUMNS: dict[str, ColumnGroup] = {}

#: Columns of every row, in order: identity and configuration, then what the engines
#: measure; (name, arrow type name). A measure the engine does not report is null. The
#: engines' groups are in it once the engine table has given them, which it does as
#: ``cellbench`` is imported; the list is filled in place, so every module holding it
#: sees them.
ROW_COLUMNS: list[tuple[str, str]] = _row_columns([])


def use_engine_groups(groups) -> None:
    """The engines' column groups (each engine's ``columns``, in the engine table's
    order; a group several engines fill, once) into ``ENGINE_COLUMNS`` and
    ``ROW_COLUMNS``."""
    named: dict[str, ColumnGroup] = {}
    for g in groups:
        if named.setdefault(g.name, g) != g:
            raise ValueError(f"engine column group {g.name!r}: declared twice, differently")
    ROW_COLUMNS[:] = _row_columns(list(named.values()))
    ENGINE_COLUMNS.clear()
    ENGINE_COLUMNS.update(named)
