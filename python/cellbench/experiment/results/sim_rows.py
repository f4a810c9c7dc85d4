"""A simulator run's output as rows of the stored tables: a connection's runs columns
(its fields, its run's, its lock-step cycle's, the cell tester's, the policers'
verdict) and its trace as rows of the traces table."""

from __future__ import annotations

from collections.abc import Iterable

from cellbench import vocab
from cellbench.experiment.results.columns import runs_column


def cycle_columns(connection: dict) -> dict:
    """A simulated connection's lock-step evidence (its ``lockstep_cycle``, kept with a
    trace) as flat ``cycle_*`` values; None where the trace shows no timer-paced cycle."""
    cycle = connection.get("lockstep_cycle") or {}
    return {runs_column(f): cycle.get(f["name"]) for f in vocab.fields("lockstep_cycle")}


def simulator_measures(out: dict, connection: dict, skip: Iterable[str] = ()) -> dict:
    """One connection's runs columns from a simulator result (``out``, of its run): its
    fields, its run's, its lock-step cycle's (the pattern joined by `` -> ``), the cell
    tester's and whether every UPC of the run saw a conforming stream (null: no UPC);
    not the columns in ``skip`` (the row's identity and configuration)."""
    policers = out.get("policers") or []
    records = {
        "run": out,
        "connection": connection,
        "lockstep_cycle": connection.get("lockstep_cycle") or {},
        "cells": out.get("cells") or {},
        "policer": {"met_contract": all(p["met_contract"] for p in policers) if policers else None},
    }
    row = {}
    for f in vocab.RESULT_FIELDS:
        name = runs_column(f)
        if name is not None and name not in skip:
            value = records[f["record"]].get(f["name"])
            row[name] = " -> ".join(value) if isinstance(value, list) else value
    return row


def trace_rows(ident: dict, connection: dict) -> list[dict]:
    """A simulated connection's trace as rows of the traces table: each line, numbered,
    with its segment as data (``trace_records``: one list per field)."""
    lines = connection.get("trace") or []
    columns = connection.get("trace_records") or {}
    names = list(columns)
    return [
        {**ident, "line_no": i, "line": line, **dict(zip(names, values))}
        for i, (line, *values) in enumerate(zip(lines, *columns.values()))
    ]
