"""The result of a run: one self-describing directory that checks itself.

::

    RESULT/
      result.json          format, format_version, cellbench_version, the experiment text,
                           the --set values, seed, replications, the resolved testbed, the
                           sweep, notes, complete (false while runs are missing)
      experiment.netspec   the experiment text, as run (the same text as in result.json)
      manifest.json        every part: the runs it holds, and per table its file, rows,
                           bytes and SHA-256 (checked on every read)
      runs/part-FIRST-LAST.parquet    one row per connection per run, runs FIRST..LAST
      ports/part-FIRST-LAST.parquet   one row per switch output port per run (cells in/out/
                                      lost, peak, CLP=1 cells lost at the CLP-1 threshold,
                                      cells tagged by a UPC, cells lost by cause: overflow,
                                      PPD, EPD, policed; PDUs damaged)
      traces/...           (--trace) one row per trace line: run, connection, line, and the
                           segment as data (t_s, from_sender, flags, seq, len, ack, win, reason)
      policers/...         one row per UPC policer per run: its trunk, cells judged,
                           conforming and not, whether the stream met its contract
      cwnd/...             (--series) one row per sample of a TCP sender's congestion state:
                           run, connection, t_s, cwnd, ssthresh, flight (bytes; a
                           sample whenever one of them changed; --engine real: TCP_INFO
                           at a fixed interval, with srtt_us)
      queue/...            (--series) one row per sample of a switch port's occupancy: run,
                           port, host, t_s, cells (just after accepted arrivals, and
                           0 when the buffer empties)
      .incoming/           where a part is written before it is renamed into place, and the
                           journal of finished runs not yet in a part; no reader looks here

A run is one point of the sweep × one replication (run = point × replications +
replication). Runs are gathered in run order into parts of up to ``PART_RUNS`` runs
or ``PART_ROWS`` rows (whichever comes first, so the cut depends only on the
results: the same seed gives the same files at any worker count). Each finished run
is appended at once to the journal, so a killed sweep loses no finished run; an
interrupted one (Ctrl-C, SIGTERM, an error) puts every finished run in parts before
it exits. ``--resume`` reads the journal back, checks every part against the manifest,
sets aside whatever is damaged or does not belong (into ``.damaged/``), takes apart
the parts an interruption cut short (so the parts are those of an uninterrupted run,
byte for byte) and re-runs exactly the runs that are missing. The parts have one fixed schema, so
``pandas.read_parquet("RESULT/runs")``, ``polars.read_parquet("RESULT/runs/*.parquet")``
and DuckDB's ``read_parquet('RESULT/runs/*.parquet')`` read them as one table.

A sweep on a cluster (``cluster``) hands over a batch of runs at once
(``write_batch``): their rows as Arrow IPC, one stream per table, journalled as one
line (the streams in base64) and kept columnar until a part is written; parts are cut
by run as always, so their bytes do not depend on the batches.

``format_version`` 1 is what ``cellbench reproduce --out`` once wrote (result.json
and runs.csv), 2 a part per run without a manifest; both are still read (version 2
checked as far as it can be: every file a part of a run of the result holding that
run's rows, none missing from a complete result), and ``--resume`` puts a version 2
result's runs in parts (version 3), keeps its files in ``.format2/`` and extends it. A
newer version than ``FORMAT_VERSION`` is refused. Adding a column to ``ROW_COLUMNS``
(or another table) keeps the version: readers fill a column that older parts lack with
nulls (``limited_by`` and ``limit_evidence``, what bound each connection, came so, and
every simulator field the vocabulary added), and older readers carry a newer column
along. The simulator's columns come from its vocabulary (``cellbench.vocab``), in the
order they were first stored; the real engine and the emulator declare theirs
(``real/columns.py``, ``emu/columns.py``).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from cellbench import vocab
from cellbench.engines.emu import columns as emu_columns
from cellbench.engines.real import columns as real_columns
from cellbench.files import FileRefused, read_bounded

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "cellbench-result"
FORMAT_VERSION = 3
MANIFEST_FORMAT = "cellbench-manifest"

#: A part is cut after this many runs...
PART_RUNS = 1000
#: ... or once its tables hold this many rows together (traces and series are long).
PART_ROWS = 200_000
#: The largest result.json or manifest.json read: an experiment's text is at most 1 MiB
#: (``lang.MAX_TEXT_BYTES``) and a manifest's part some 1 KB, so this holds the
#: manifest of a sweep at the language's 10^5-value bound many times over.
MAX_JSON_BYTES = 64 << 20

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

INCOMING = ".incoming"
DAMAGED = ".damaged"
#: Where --resume keeps a format 2 result's files once their runs are in parts.
LEGACY_KEPT = ".format2"
_PART_NAME = re.compile(r"part-(\d+)-(\d+)\.parquet\Z")


class ResultError(ValueError):
    """A result directory that cannot be read or extended."""


class ResultDamage(ResultError):
    """A result directory whose files do not match its manifest."""


def _arrow():
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


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


def _schema(columns: list[tuple[str, str]]):
    pa, _ = _arrow()
    types = {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "string": pa.string(),
        "bool": pa.bool_(),
    }
    return pa.schema([(n, types[t]) for n, t in columns])


def _columns(meta: dict) -> dict[str, list[tuple[str, str]]]:
    """Each table's columns; the runs table ends with one column per sweep parameter."""
    return {"runs": ROW_COLUMNS + [tuple(c) for c in meta["param_columns"]], **PARTS}


def _table(rows: list[list], columns: list[tuple[str, str]]):
    """An Arrow table of rows given as lists in column order."""
    pa, _ = _arrow()
    schema = _schema(columns)
    data = list(zip(*rows)) if rows else [[] for _ in columns]
    return pa.Table.from_arrays(
        [pa.array(col, type=f.type) for col, f in zip(data, schema)], schema=schema
    )


class _Slice(NamedTuple):
    """A run's rows in a batch's Arrow table (``write_batch``): rows start..stop."""

    table: Any
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def _joined(pieces: list, columns: list[tuple[str, str]]):
    """A part's table from its runs' pieces: rows as lists (a run stored here) or
    slices of a batch's Arrow table (from a cluster, ``write_batch``); the same Arrow
    table, and so the same Parquet bytes, either way."""
    pa, _ = _arrow()
    if all(isinstance(p, list) for p in pieces):
        return _table([row for p in pieces for row in p], columns)
    # Neighbouring runs of one batch as one slice: a chunk per batch, not per run.
    merged: list = []
    for p in pieces:
        last = merged[-1] if merged else None
        if isinstance(p, _Slice) and isinstance(last, _Slice) and last.table is p.table:
            if last.stop == p.start:
                merged[-1] = _Slice(p.table, last.start, p.stop)
                continue
        merged.append(p)
    tables = [
        p.table.slice(p.start, len(p)) if isinstance(p, _Slice) else _table(p, columns)
        for p in merged
    ]
    return pa.concat_tables(tables).combine_chunks()


def to_ipc(tables: dict[str, list[dict]], columns: dict[str, list[tuple[str, str]]]) -> dict:
    """Runs' rows, table by table, as Arrow IPC stream bytes in the stored schema
    (``write_batch`` takes them): how a cluster's worker hands a batch back."""
    pa, _ = _arrow()
    out = {}
    for t, rows in tables.items():
        if rows:
            table = _table(_as_lists(rows, columns[t]), columns[t])
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as w:
                w.write_table(table)
            out[t] = sink.getvalue().to_pybytes()
    return out


def _from_ipc(data: bytes, columns: list[tuple[str, str]]):
    """An IPC stream's table, refused (ValueError) unless it has the stored schema."""
    pa, _ = _arrow()
    try:
        table = pa.ipc.open_stream(data).read_all()
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"not an Arrow stream: {e}") from None
    if not table.schema.equals(_schema(columns)):
        raise ValueError("its columns are not the stored table's")
    return table


def _by_run(runs: list[int], tables: dict) -> list[dict]:
    """A batch's tables (rows in run order, ``run`` their first column) cut into each
    run's slices; a run without rows in a table has no entry for it."""
    import numpy as np

    out: list[dict] = [{} for _ in runs]
    for t, table in tables.items():
        col = table.column(0).to_numpy()
        lo = np.searchsorted(col, runs, "left")
        hi = np.searchsorted(col, runs, "right")
        if bool((col[1:] < col[:-1]).any()) or int((hi - lo).sum()) != table.num_rows:
            raise ValueError(f"{t}: rows of runs outside the batch, or out of run order")
        for i, (a, b) in enumerate(zip(lo.tolist(), hi.tolist())):
            if b > a:
                out[i][t] = _Slice(table, a, b)
    return out


def _empty(columns) -> pd.DataFrame:
    return _schema(columns).empty_table().to_pandas()


# --- gathering finished runs into parts ------------------------------------------------------


class RunSet:
    """Run numbers as sorted, disjoint ranges ``[first, last]``: a sweep of a million
    runs costs a few ranges, not a million set entries."""

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()):
        self._firsts: list[int] = []
        self._lasts: list[int] = []
        for first, last in sorted(ranges):
            self.add(first, last)

    def add(self, first: int, last: int) -> None:
        i = bisect.bisect_left(self._firsts, first)
        self._firsts.insert(i, first)
        self._lasts.insert(i, last)
        # Merge with touching neighbours so the lists stay short.
        j = max(i - 1, 0)
        while j + 1 < len(self._firsts):
            if self._lasts[j] + 1 >= self._firsts[j + 1]:
                self._lasts[j] = max(self._lasts[j], self._lasts[j + 1])
                del self._firsts[j + 1], self._lasts[j + 1]
            elif j >= i:
                break
            else:
                j += 1

    def __contains__(self, run: int) -> bool:
        i = bisect.bisect_right(self._firsts, run) - 1
        return i >= 0 and run <= self._lasts[i]

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in zip(self._firsts, self._lasts))

    def __str__(self) -> str:
        """``0-9,17``, as ``--cells-runs`` takes it."""
        return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in zip(self._firsts, self._lasts))


class _Gatherer:
    """Puts finished runs in run order and cuts them into parts.

    A run finished early waits in ``ready`` until every run before it is in;
    the runner submits at most its look-ahead past the oldest unfinished run,
    so ``ready`` stays that small. ``seal(first, last, tables)`` stores a part.
    """

    def __init__(self, sealed: Iterable[tuple[int, int]], seal, part_runs: int, part_rows: int):
        self.sealed_at = dict(sealed)  # first run of a stored part -> its last
        self.seal = seal
        self.part_runs, self.part_rows = part_runs, part_rows
        self.ready: dict[int, tuple[dict, bytes | None]] = {}
        self.open: list[tuple[int, dict]] = []
        self.open_rows = 0
        self.next = self._skip(0)

    def _skip(self, run: int) -> int:
        while run in self.sealed_at:
            run = self.sealed_at[run] + 1
        return run

    def add(self, run: int, tables: dict, journal_line: bytes | None = None) -> None:
        self.ready[run] = (tables, journal_line)
        while self.next in self.ready:
            tables, _ = self.ready.pop(self.next)
            self.open.append((self.next, tables))
            self.open_rows += sum(len(t) for t in tables.values())
            after = self._skip(self.next + 1)
            # A part ends at the thresholds, or where a part stored earlier begins.
            if (
                after != self.next + 1
                or len(self.open) >= self.part_runs
                or self.open_rows >= self.part_rows
            ):
                self._seal_open()
            self.next = after

    def _seal_open(self) -> None:
        if not self.open:
            return
        first, last = self.open[0][0], self.open[-1][0]
        tables = {t: [run[t] for _, run in self.open if t in run] for t in TABLES}
        self.open, self.open_rows = [], 0
        self.seal(first, last, tables)
        self.sealed_at[first] = last

    def flush(self) -> None:
        """Put every finished run in a part: the open one, then each unbroken
        stretch of runs that finished ahead of a missing one."""
        self._seal_open()
        for run in sorted(self.ready):
            tables, _ = self.ready.pop(run)
            if self.open and self.open[-1][0] != run - 1:
                self._seal_open()
            self.open.append((run, tables))
            self.open_rows += sum(len(t) for t in tables.values())
            if len(self.open) >= self.part_runs or self.open_rows >= self.part_rows:
                self._seal_open()
        self._seal_open()

    def pending_lines(self) -> list[bytes]:
        """The journal lines of finished runs not yet in a part (a batch's once)."""
        return list(dict.fromkeys(line for _, line in self.ready.values() if line is not None))

    def done(self) -> RunSet:
        runs = RunSet(self.sealed_at.items())
        for run, _ in self.open:
            runs.add(run, run)
        for run in self.ready:
            runs.add(run, run)
        return runs


def _as_lists(rows: list[dict], columns: list[tuple[str, str]]) -> list[list]:
    return [[r.get(n) for n, _ in columns] for r in rows]


def _stored_rows(file: Path, columns: list[tuple[str, str]]) -> list[list]:
    """A stored Parquet file's rows as lists in column order, as ``write_run`` takes
    them (a column the file lacks, null)."""
    _, pq = _arrow()
    table = pq.ParquetFile(file).read()
    n = table.num_rows
    cols = [
        table.column(c).to_pylist() if c in table.column_names else [None] * n for c, _ in columns
    ]
    return [list(r) for r in zip(*cols)]


class _Store:
    """What ResultDir and MemoryResult share: a run's tables in, parts out."""

    def _start(self, meta: dict, sealed) -> None:
        self.meta = meta
        self.columns = _columns(meta)
        self.gatherer = _Gatherer(sealed, self._seal, PART_RUNS, PART_ROWS)

    def done(self) -> RunSet:
        """The runs finished (in a part, or waiting for an earlier run)."""
        return self.gatherer.done()

    def write_run(
        self,
        run: int,
        rows: list[dict],
        traces: list[dict] = (),
        ports: list[dict] = (),
        cwnd: list[dict] = (),
        queue: list[dict] = (),
        policers: list[dict] = (),
        acr: list[dict] = (),
    ) -> None:
        given = dict(zip(TABLES, (rows, traces, ports, cwnd, queue, policers, acr)))
        tables = {t: _as_lists(v, self.columns[t]) for t, v in given.items() if v}
        self.gatherer.add(run, tables, self._journal(run, tables))

    def write_batch(self, runs: list[int], ipc: dict[str, bytes]) -> None:
        """Finished runs from a cluster (``cluster``): ``runs`` in order and their rows
        as one Arrow IPC stream per table (``to_ipc``), journalled as one line and kept
        columnar: no Python object per row."""
        tables = {t: _from_ipc(data, self.columns[t]) for t, data in ipc.items()}
        line = self._journal_batch(runs, ipc)
        for run, pieces in zip(runs, _by_run(runs, tables)):
            self.gatherer.add(run, pieces, line)

    def _journal(self, run: int, tables: dict) -> bytes | None:
        return None

    def _journal_batch(self, runs: list[int], ipc: dict[str, bytes]) -> bytes | None:
        return None

    def _seal(self, first: int, last: int, tables: dict) -> None:
        raise NotImplementedError


class MemoryResult(_Store):
    """The same interface, kept in memory (``cellbench.run`` without ``out``): parts
    are Arrow tables, a tenth of the memory of the rows as Python objects."""

    def __init__(self, meta: dict):
        self.path = None
        self.parts: dict[str, list] = {t: [] for t in TABLES}
        self._start(meta, ())

    def _seal(self, first: int, last: int, tables: dict) -> None:
        for t, pieces in tables.items():
            if pieces:
                self.parts[t].append(_joined(pieces, self.columns[t]))

    def close(self) -> None:
        self.gatherer.flush()

    def finish(self) -> None:
        self.gatherer.flush()
        self.meta["complete"] = True


def _digest(data) -> str:
    return hashlib.sha256(data).hexdigest()


#: The largest part file hashed to name a copy that is not in the manifest (a part is
#: cut at ``PART_ROWS`` rows: some tens of MB).
MAX_PART_BYTES = 1 << 30


def _file_digest(file: Path, limit: int) -> str | None:
    """The SHA-256 of a regular file of at most ``limit`` bytes, else None."""
    try:
        return _digest(read_bounded(file, limit, "a part"))
    except (OSError, FileRefused):
        return None


def _meta_digest(meta: dict) -> str:
    """The SHA-256 of result.json as ``_write_json`` writes ``meta`` (a reader hashes
    what it parsed, written out again the same way)."""
    return _digest((json.dumps(meta, indent=2) + "\n").encode())


def _write_json(path: Path, obj: dict, tmp_dir: Path) -> None:
    """Atomically: write beside, then rename over."""
    tmp = tmp_dir / (path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)


class ResultDir(_Store):
    """Writes a result directory as runs finish; ``resume`` checks, repairs and
    extends a started one (``repairs`` says what it set aside)."""

    def __init__(
        self,
        path: Path,
        meta: dict,
        *,
        resume: bool,
        overwrite: bool = False,
    ):
        _arrow()  # imported now, not when Ctrl-C puts the finished runs in a part (~1 s)
        self.path = Path(path)
        self.repairs: list[str] = []
        self.legacy = False  # format_version 2, put in parts on resume
        self._fd: int | None = None
        started = self.path.exists() and (not self.path.is_dir() or any(self.path.iterdir()))
        if started and self.path.is_file():
            raise ResultError(f"{self.path} is a file, not a result directory")
        manifest: dict | None = None
        if started and resume:
            manifest = self._check_resumable(meta)
        elif started and not overwrite:
            raise ResultError(
                f"{self.path} exists: --resume to finish it, --overwrite to replace it, "
                "or --out another path"
            )
        elif started:
            if not (self.path / "result.json").exists():
                raise ResultError(
                    f"{self.path} exists and is not a cellbench result: not overwriting"
                )
            self._clear()
        self.incoming = self.path / INCOMING
        self.incoming.mkdir(parents=True, exist_ok=True)
        for t in TABLES:
            (self.path / t).mkdir(exist_ok=True)
        self.manifest = manifest or {
            "format": MANIFEST_FORMAT,
            "plan_digest": meta["plan_digest"],
            "parts": [],
        }
        # Parts cut short by an interruption are taken apart again, so the resumed
        # result has the parts an uninterrupted run makes, byte for byte.
        short = [p for p in self.manifest["parts"] if not self._full(p)] if manifest else []
        kept = [p for p in self.manifest["parts"] if p not in short]
        self._start(meta, [(p["first_run"], p["last_run"]) for p in kept])
        recovered = self._recover_journal() if manifest is not None else []
        recovered += self._reopen(short)
        for f in self.incoming.iterdir():
            f.unlink()  # a part or a journal a killed run left half written
        if self.legacy:
            self._convert_legacy()
        (self.path / "experiment.netspec").write_text(meta["experiment"]["text"])
        self.meta["complete"] = False
        self._write_meta()
        _write_json(self.path / "manifest.json", self.manifest, self.incoming)
        # The journal of runs finished but not in a part; appended once per run.
        self._fd = os.open(self.incoming / "journal", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        written = None
        for run, tables, line in recovered:
            if run not in self.gatherer.done():
                if line is not written:  # a batch's line once for all its runs
                    os.write(self._fd, line)
                    written = line
                self.gatherer.add(run, tables, line)
        if short:
            # Their runs are in the journal now: the manifest drops them, then the files go.
            self.manifest["parts"] = [p for p in self.manifest["parts"] if p not in short]
            _write_json(self.path / "manifest.json", self.manifest, self.incoming)
            for p in short:
                for t, f in p["files"].items():
                    (self.path / t / f["name"]).unlink(missing_ok=True)

    def print_repairs(self) -> None:
        """What --resume found damaged and set aside, one line each on stderr."""
        for note in self.repairs:
            print(f"cellbench: repair: {self.path}: {note}", file=sys.stderr)

    # --- starting over, resuming -------------------------------------------------------------

    def _clear(self) -> None:
        for name in (*TABLES, INCOMING, "manifest.json", "cells"):
            f = self.path / name
            if f.is_dir():
                shutil.rmtree(f)
            elif f.exists():
                f.unlink()

    def _check_resumable(self, meta: dict) -> dict:
        """The manifest of a started result made from the same plan, with every part
        that does not check out set aside (``repairs`` says which)."""
        old, why = _read_json(self.path / "result.json")
        manifest, mwhy = _read_json(self.path / "manifest.json")
        self.legacy = isinstance(old, dict) and old.get("format_version") == 2
        if isinstance(old, dict) and old.get("format") == FORMAT:
            if old.get("format_version") == 1:
                raise ResultError(
                    f"{self.path}: written by `cellbench reproduce --out` before it stored "
                    "experiments (format_version 1): read, but not extended; run it again "
                    "into a new --out"
                )
            if self.legacy:
                manifest, mwhy = {"format": MANIFEST_FORMAT, "parts": []}, None
                manifest["plan_digest"] = old.get("plan_digest")
        digests = {
            d
            for d in (
                old.get("plan_digest") if isinstance(old, dict) else None,
                manifest.get("plan_digest") if isinstance(manifest, dict) else None,
            )
            if d is not None
        }
        if not digests:
            raise ResultError(
                f"{self.path}: cannot tell what it was run with (result.json: {why or 'no plan'}; "
                f"manifest.json: {mwhy or 'no plan'}): --overwrite to start it again"
            )
        if not isinstance(old, dict) and why is None:
            why = "not a JSON object"
        if digests != {meta["plan_digest"]}:
            raise ResultError(
                f"{self.path}: was started with a different experiment, --set, seed, "
                "replications or testbed: it cannot be resumed with these"
            )
        if why:
            self.repairs.append(f"result.json: {why}: written again")
        problems = _meta_problems(old) if isinstance(old, dict) else []
        self.repairs += [f"result.json: {p}: written again" for p in problems]
        if self.legacy:
            return manifest  # its files are put in parts once the store is open
        if not isinstance(manifest, dict) or not _manifest_ok(manifest):
            self.repairs.append(
                f"manifest.json: {mwhy or 'not a manifest of parts'}: every part set aside"
            )
            manifest = {"format": MANIFEST_FORMAT, "plan_digest": meta["plan_digest"], "parts": []}
        good, damage = _verify(self.path, manifest, _columns(meta), digests=True)
        for d in damage:
            self._set_aside(d)
        manifest["parts"] = good
        return manifest

    def _set_aside(self, d: Damage) -> None:
        """Move a damaged or foreign file out of the way (never delete what may be
        someone's data); its runs, if any, run again."""
        self.repairs.append(f"{d.message}: {d.repair}")
        if d.file is None or not d.file.exists():
            return
        aside = self.path / DAMAGED
        aside.mkdir(exist_ok=True)
        target = aside / d.file.relative_to(self.path).as_posix().replace("/", "-")
        n = 1
        while target.exists():
            target = target.with_name(f"{target.name}.{n}")
            n += 1
        os.replace(d.file, target)

    @staticmethod
    def _full(part: dict) -> bool:
        """Whether a part was cut where the gatherer cuts (``PART_RUNS`` runs or
        ``PART_ROWS`` rows), not short by an interruption or at the result's end."""
        runs = part["last_run"] - part["first_run"] + 1
        return runs >= PART_RUNS or sum(f["rows"] for f in part["files"].values()) >= PART_ROWS

    def _reopen(self, parts: list[dict]) -> list[tuple[int, dict, bytes]]:
        """The runs of ``parts`` (checked against the manifest already), as the
        journal holds them."""
        out = []
        for p in parts:
            runs: dict[int, dict] = {}
            for t, f in p["files"].items():
                for row in _stored_rows(self.path / t / f["name"], self.columns[t]):
                    runs.setdefault(row[0], {}).setdefault(t, []).append(row)
            for run, tables in sorted(runs.items()):
                line = json.dumps([run, tables], separators=(",", ":")).encode() + b"\n"
                out.append((run, tables, line))
        return out

    def _convert_legacy(self) -> None:
        """Format 2 (a file per run, ``part-NNNNNN.parquet``, no manifest) into parts,
        so that --resume extends it as any other: each file checked as ``load`` checks
        it, what does not check out set aside, and the originals kept in ``.format2/``
        (this store did not write them: it deletes none)."""
        files: dict[int, dict[str, Path]] = {}
        for t in TABLES:
            found, damage = _legacy_parts(self.path, {**self.meta, "complete": False}, t)
            for d in damage:
                self._set_aside(d)
            for run, (f, _) in found.items():
                files.setdefault(run, {})[t] = f
        converted = [run for run in sorted(files) if "runs" in files[run]]
        for run in converted:  # (a run without rows was never finished: it runs again)
            tables = {t: _stored_rows(f, self.columns[t]) for t, f in files[run].items()}
            self.gatherer.add(run, tables)
        self.gatherer.flush()
        kept = self.path / LEGACY_KEPT
        for run in sorted(files):
            for t, f in files[run].items():
                kept.mkdir(exist_ok=True)
                os.replace(f, kept / f"{t}-{f.name}")
        self.repairs.append(
            f"{len(converted)} run(s) of format_version 2 (a file per run) put in parts; "
            f"the original files kept in {LEGACY_KEPT}/"
        )
        for d in _verify(self.path, self.manifest, self.columns, digests=False)[1]:
            self._set_aside(d)  # whatever else was in the folders

    def _recover_journal(self) -> list[tuple[int, dict, bytes]]:
        """The runs a killed process finished but had not put in a part yet."""
        journal = self.path / INCOMING / "journal"
        out = []
        if not journal.is_file():
            return out
        with journal.open("rb") as f:
            for line in f:
                batch = self._journal_batch_line(line)
                if batch is not None:
                    out += batch
                    continue
                try:
                    run, tables = json.loads(line)
                    ok = (
                        line.endswith(b"\n")
                        and isinstance(run, int)
                        and isinstance(tables, dict)
                        and all(
                            t in self.columns and all(len(r) == len(self.columns[t]) for r in rows)
                            for t, rows in tables.items()
                        )
                    )
                except (ValueError, TypeError, RecursionError):
                    ok = False  # the line a kill cut short: that run runs again
                if ok and 0 <= run < self.meta["runs_total"]:
                    out.append((run, tables, line))
        if out:
            self.repairs.append(f"{len(out)} finished run(s) recovered from the journal")
        return out

    def _journal_batch_line(self, line: bytes) -> list[tuple[int, dict, bytes]] | None:
        """A batch's line (``_journal_batch``) as its runs; [] if it does not check out
        (cut short by a kill: those runs run again); None if it is a run's line."""
        if not line.startswith(b'{"runs":'):
            return None
        try:
            obj = json.loads(line)
            runs = obj["runs"]
            total = self.meta["runs_total"]
            if not (
                line.endswith(b"\n")
                and runs == sorted(set(runs))
                and all(isinstance(r, int) and 0 <= r < total for r in runs)
                and set(obj["arrow"]) <= set(self.columns)
            ):
                return []
            tables = {
                t: _from_ipc(base64.b64decode(b, validate=True), self.columns[t])
                for t, b in obj["arrow"].items()
            }
            return [(r, p, line) for r, p in zip(runs, _by_run(runs, tables))]
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return []

    # --- writing -----------------------------------------------------------------------------

    def _write_meta(self) -> None:
        _write_json(self.path / "result.json", self.meta, self.incoming)
        # The manifest covers result.json too: an edited seed or param_columns would
        # change what show prints without a word (load checks it).
        self.manifest["result_json_sha256"] = _meta_digest(self.meta)
        _write_json(self.path / "manifest.json", self.manifest, self.incoming)

    def _journal(self, run: int, tables: dict) -> bytes:
        line = json.dumps([run, tables], separators=(",", ":")).encode() + b"\n"
        os.write(self._fd, line)  # one write per run: a kill leaves whole lines and a torn tail
        return line

    def _journal_batch(self, runs: list[int], ipc: dict[str, bytes]) -> bytes:
        # One line per batch, its Arrow streams as base64: one write, as a run's line.
        # JSON put together here: json.dumps scans every character of the base64 text
        # for escapes (milliseconds a batch); base64 needs none.
        arrow = b",".join(
            json.dumps(t).encode() + b':"' + base64.b64encode(data) + b'"'
            for t, data in ipc.items()
        )
        runs_text = json.dumps(runs, separators=(",", ":")).encode()
        line = b'{"runs":' + runs_text + b',"arrow":{' + arrow + b"}}\n"
        os.write(self._fd, line)
        return line

    def _seal(self, first: int, last: int, tables: dict) -> None:
        pa, pq = _arrow()
        name = f"part-{first:06d}-{last:06d}.parquet"
        files = {}
        for t in TABLES:
            pieces = tables.get(t)
            if not pieces:
                continue
            table = _joined(pieces, self.columns[t])
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink)
            data = sink.getvalue()
            tmp = self.incoming / f"{t}-{name}"
            tmp.write_bytes(data)
            os.replace(tmp, self.path / t / name)
            files[t] = {
                "name": name,
                "rows": table.num_rows,
                "bytes": data.size,
                "sha256": _digest(data),
            }
        # The manifest last: a kill before it leaves a part the manifest does not list,
        # which --resume sets aside (its runs are still in the journal).
        self.manifest["parts"].append({"first_run": first, "last_run": last, "files": files})
        self.manifest["parts"].sort(key=lambda p: p["first_run"])
        _write_json(self.path / "manifest.json", self.manifest, self.incoming)
        self._rotate_journal()

    def _rotate_journal(self) -> None:
        """Keep in the journal only the runs not yet in a part."""
        if self._fd is None:
            return
        tmp = self.incoming / "journal.new"
        tmp.write_bytes(b"".join(self.gatherer.pending_lines()))
        os.close(self._fd)
        os.replace(tmp, self.incoming / "journal")
        self._fd = os.open(self.incoming / "journal", os.O_WRONLY | os.O_APPEND)

    def stored_runs(self) -> int:
        return len(self.done())

    def close(self) -> None:
        """After an interruption: every finished run into a part; the rest stays missing."""
        self.gatherer.flush()
        self._close_journal()

    def _close_journal(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        (self.incoming / "journal").unlink(missing_ok=True)

    def finish(self) -> None:
        self.gatherer.flush()
        self._close_journal()
        self.meta["complete"] = len(self.done()) == self.meta["runs_total"]
        self._write_meta()
        if self.meta["complete"]:
            for f in self.incoming.iterdir():
                f.unlink()
            self.incoming.rmdir()


# --- reading and checking --------------------------------------------------------------------


class Damage:
    """One thing wrong with a stored result: what (``message``), the file to set aside
    (if any) and what --resume does about it (``repair``)."""

    def __init__(self, message: str, file: Path | None = None, repair: str = "set aside"):
        self.message, self.file, self.repair = message, file, repair


def _read_json(path: Path) -> tuple[Any, str | None]:
    """(the JSON value, None), or (None, why it could not be read)."""
    try:
        return json.loads(read_bounded(path, MAX_JSON_BYTES, "a result's JSON")), None
    except FileNotFoundError:
        return None, "missing"
    except OSError as e:
        return None, f"unreadable ({e.strerror or e})"
    except FileRefused as e:
        return None, e.reason
    except UnicodeDecodeError as e:
        return None, f"unreadable ({e})"
    except json.JSONDecodeError as e:
        return None, f"not valid JSON ({e.msg} at line {e.lineno})"
    except RecursionError:  # (json's decoder recurses per level of nesting)
        return None, "not a result's JSON: nested too deeply"


def _meta_problems(meta: dict) -> list[str]:
    """The keys a reader needs, present and of the right shape."""
    out = []
    cols = meta.get("param_columns")
    if cols is None:
        out.append("'param_columns' (the sweep's columns) is missing")
    elif not (
        isinstance(cols, list)
        and all(
            isinstance(c, list) and len(c) == 2 and c[1] in ("int64", "float64", "string", "bool")
            for c in cols
        )
    ):
        out.append("'param_columns' is not a list of [name, type] pairs")
    total, points, reps = (meta.get(k) for k in ("runs_total", "points", "replications"))
    if not isinstance(total, int) or isinstance(total, bool) or total < 1:
        out.append(f"'runs_total' is {total!r}, not a whole number of runs >= 1")
    elif isinstance(points, int) and isinstance(reps, int) and total != points * reps:
        out.append(f"'runs_total' is {total}, not points x replications = {points} x {reps}")
    return out


def read_meta(path: Path) -> dict:
    path = Path(path)
    info = path / "result.json" if path.is_dir() else path
    meta, why = _read_json(info)
    if why == "missing":
        raise ResultError(f"{path}: no result.json: not a cellbench result")
    if why:
        raise ResultError(f"{info}: {why}")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ResultError(f"{info}: format is not {FORMAT!r}: not a cellbench result")
    version = meta.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ResultError(f"{info}: format_version {version!r}: expected a whole number >= 1")
    if version > FORMAT_VERSION:
        raise ResultError(
            f"{info}: format_version {version} is newer than this cellbench reads "
            f"(1..{FORMAT_VERSION}): upgrade cellbench to read it"
        )
    return meta


def _manifest_ok(manifest: dict) -> bool:
    parts = manifest.get("parts")
    if manifest.get("format") != MANIFEST_FORMAT or not isinstance(parts, list):
        return False
    after = 0  # parts in run order, none overlapping
    for p in parts:
        if not (
            isinstance(p, dict)
            and isinstance(p.get("first_run"), int)
            and isinstance(p.get("last_run"), int)
            and after <= p["first_run"] <= p["last_run"]
            and isinstance(p.get("files"), dict)
            and all(
                isinstance(f, dict)
                and {"name", "rows", "bytes", "sha256"} <= f.keys()
                and _PART_NAME.match(str(f["name"]))
                for f in p["files"].values()
            )
        ):
            return False
        after = p["last_run"] + 1
    return True


def _runs_label(first: int, last: int) -> str:
    return f"run {first}" if first == last else f"runs {first}-{last}"


def _verify(
    path: Path, manifest: dict, columns: dict, *, digests: bool
) -> tuple[list[dict], list[Damage]]:
    """The manifest's parts that check out, and what is wrong: a part missing, of
    the wrong size or digest (``digests``: read and hash every file), a file the
    manifest does not list, a table folder that is not a folder."""
    damage: list[Damage] = []
    bad_parts: set[int] = set()
    listed: dict[str, dict[str, tuple[int, dict]]] = {t: {} for t in TABLES}
    for i, p in enumerate(manifest["parts"]):
        for t, f in p["files"].items():
            if t not in listed:
                bad_parts.add(i)
                damage.append(Damage(f"manifest.json: a part of an unknown table {t!r}"))
                continue
            listed[t][f["name"]] = (i, f)
    by_digest = {f["sha256"]: f"{t}/{n}" for t in TABLES for n, (_, f) in listed[t].items()}
    for t in TABLES:
        folder = path / t
        if not folder.is_dir():
            again = "; its runs run again" if listed[t] else ""
            if folder.exists():
                damage.append(
                    Damage(f"{t} is a file where the folder of {t} parts belongs", folder,
                           "set aside" + again)
                )  # fmt: skip
            elif listed[t]:
                damage.append(
                    Damage(f"{t}/ is missing ({len(listed[t])} part(s))", None, again[2:])
                )
            for i, _ in listed[t].values():
                bad_parts.add(i)
            continue
        present = {f.name: f for f in folder.iterdir()}
        for name, (i, f) in sorted(listed[t].items()):
            p = manifest["parts"][i]
            runs = _runs_label(p["first_run"], p["last_run"])
            file = present.get(name)
            if file is None:
                damage.append(Damage(f"{t}/{name} is missing ({runs})", None, "its runs run again"))
                bad_parts.add(i)
                continue
            size = file.stat().st_size
            if size != f["bytes"]:
                cut = " (truncated)" if size < f["bytes"] else ""
                damage.append(
                    Damage(f"{t}/{name} has {size} bytes, the manifest says {f['bytes']}{cut} "
                           f"({runs})", file, "set aside; its runs run again")
                )  # fmt: skip
                bad_parts.add(i)
            elif digests and _file_digest(file, f["bytes"]) != f["sha256"]:
                damage.append(
                    Damage(f"{t}/{name} differs from its SHA-256 in the manifest ({runs})",
                           file, "set aside; its runs run again")
                )  # fmt: skip
                bad_parts.add(i)
        for name in sorted(set(present) - set(listed[t])):
            file = present[name]
            if _PART_NAME.match(name) and file.is_file():
                copy = by_digest.get(_file_digest(file, MAX_PART_BYTES) or "")
                what = f"a copy of {copy}" if copy else "copied in from elsewhere?"
                damage.append(Damage(f"{t}/{name} is not in the manifest ({what})", file))
            else:
                damage.append(Damage(f"{t}/{name} is a stray file, not a part of the result", file))
    # A part is whole or not at all: every table of a damaged part goes.
    good = []
    for i, p in enumerate(manifest["parts"]):
        if i not in bad_parts:
            good.append(p)
            continue
        for t, f in p["files"].items():
            file = path / t / f["name"]
            if t in listed and file.is_file() and not any(d.file == file for d in damage):
                damage.append(
                    Damage(f"{t}/{f['name']} belongs to a damaged part", file, "set aside")
                )
    return good, damage


def resume_command(meta: dict, path: Path | str) -> str | None:
    """The ``cellbench run`` command that finishes or repairs ``path``, from what
    result.json says it was run with (None if it does not say)."""
    exp = meta.get("experiment")
    if not isinstance(exp, dict) or not isinstance(exp.get("file"), str):
        return None
    if not Path(exp["file"]).is_file():
        return None  # run from text (cellbench.run("cluster { ... }")): no command to give
    cmd = ["cellbench", "run", exp["file"]]
    for s in meta.get("set") or []:
        cmd += ["--set", str(s)]
    cmd += ["--replications", str(meta.get("replications")), "--seed", str(meta.get("seed"))]
    if meta.get("testbed_arg"):
        cmd += ["--testbed", str(meta["testbed_arg"])]
    cmd += ["--trace"] if meta.get("trace") else []
    cmd += ["--series"] if meta.get("series") else []
    # (What the plan's digest holds: a resume without them is another plan.)
    cmd += ["--cells", str(meta["cells"])] if meta.get("cells") else []
    cmd += ["--cells-runs", str(meta["cells_runs"])] if meta.get("cells_runs") else []
    return shlex.join([*cmd, "--out", str(path), "--resume"])


def _damage_error(path: Path, meta: dict | None, damage: list[Damage]) -> ResultDamage:
    shown = [d.message for d in damage[:6]]
    more = f"; and {len(damage) - 6} more" if len(damage) > 6 else ""
    cmd = resume_command(meta, path) if meta else None
    fix = (
        f"repair it with: {cmd}"
        if cmd
        else "repair it with the command that made it, plus --resume"
    )
    return ResultDamage(f"{path} is damaged: {'; '.join(shown)}{more}: {fix}")


class Result:
    """A stored (or in-memory) result: metadata, rows, and the other tables, read
    when first asked for."""

    def __init__(
        self,
        meta: dict,
        rows: pd.DataFrame | Callable[[], pd.DataFrame],
        path: Path | None = None,
        tables: dict[str, pd.DataFrame | Callable[[], pd.DataFrame]] | None = None,
        *,
        summary_rows: Callable[[], pd.DataFrame] | None = None,
        num_rows: int | None = None,
        column_reader: Callable[[str, list[str]], pd.DataFrame] | None = None,
    ):
        self.meta = meta
        self._rows_or_reader = rows
        self._summary_rows = summary_rows
        self._column_reader = column_reader
        self._num_rows = num_rows
        self._tables = dict(tables or {})
        self.path = path
        #: Its name on a report page when it has no path to go by (a study's part).
        self.label: str | None = None

    @property
    def _rows(self) -> pd.DataFrame:
        """The rows, read when first asked for (a stored result's summary needs not)."""
        if callable(self._rows_or_reader):
            self._rows_or_reader = self._rows_or_reader()
        return self._rows_or_reader

    @property
    def num_rows(self) -> int:
        """How many rows (connections x runs), without reading them."""
        if self._num_rows is None or not callable(self._rows_or_reader):
            return len(self._rows)
        return self._num_rows

    def _table(self, name: str) -> pd.DataFrame:
        t = self._tables.get(name)
        if t is None:
            t = _empty(PARTS[name])
        elif callable(t):
            t = t()
        self._tables[name] = t
        return t.copy()

    def to_pandas(self) -> pd.DataFrame:
        """One row per connection per run, sorted by run and connection."""
        return self._rows.copy()

    def rows_columns(self, names: Iterable[str], table: str = "runs") -> pd.DataFrame:
        """Table ``table``'s columns ``names`` (those it has), for a view of a few of
        them (``show``'s contention tables): a stored result not yet read reads only
        those, so memory does not grow with the rows' evidence (10^5 runs)."""
        names = list(dict.fromkeys(names))
        loaded = self._rows_or_reader if table == "runs" else self._tables.get(table)
        if (loaded is None or callable(loaded)) and self._column_reader is not None:
            stored = {n for n, _ in _columns(self.meta).get(table, [])}
            return self._column_reader(table, [n for n in names if n in stored])
        df = self._rows if table == "runs" else self._table(table)
        return df[[n for n in names if n in df]]

    def rows_view(self) -> pd.DataFrame:
        """The rows as ``to_pandas``, without the copy: for a reader that changes
        nothing (``report`` and ``plot`` of a 100k-run result: a copy is ~120 MB)."""
        return self._rows

    def traces(self) -> pd.DataFrame:
        """One row per trace line (runs made with trace=True / --trace)."""
        return self._table("traces")

    def ports(self) -> pd.DataFrame:
        """One row per switch output port per run: cells in, out, lost; peak occupancy."""
        return self._table("ports")

    def cwnd_series(self) -> pd.DataFrame:
        """One row per sample of a TCP sender's cwnd, ssthresh and flight (bytes) over
        time (runs made with series=True / --series)."""
        return self._table("cwnd")

    def queue_series(self) -> pd.DataFrame:
        """One row per sample of a switch port's occupancy in cells over time (runs
        made with series=True / --series)."""
        return self._table("queue")

    def acr_series(self) -> pd.DataFrame:
        """One row per sample of an ABR circuit's allowed cell rate (bit/s of cells)
        over time (runs made with series=True / --series)."""
        return self._table("acr")

    def policers(self) -> pd.DataFrame:
        """One row per UPC policer per run: its trunk, the cells it judged, how many
        conformed, and whether the stream met its contract."""
        return self._table("policers")

    @property
    def params(self) -> list[str]:
        return [c[0] for c in self.meta.get("param_columns", [])]

    def summary(self) -> pd.DataFrame:
        """Per sweep point and connection: throughput over the replications, and
        the limit most of them had (``limited_by``) with its evidence."""
        lean = callable(self._rows_or_reader) and self._summary_rows is not None
        df = self._summary_rows() if lean else self._rows
        if df.empty:
            return df
        keys = _summary_keys(self.meta, df.columns)
        mbps = df["throughput_bps"] / 1e6
        # A run the simulated-time limit cut (not completed) counts here, and the
        # summary says how many there were: its rate is the rate so far.
        cut = df["completed"].eq(False).fillna(False).astype(int)
        g = df.assign(mbps=mbps, cut=cut).groupby(keys, sort=False, dropna=False)
        out = g.agg(
            runs=("run", "count"),
            truncated=("cut", "sum"),
            mean_mbps=("mbps", "mean"),
            min_mbps=("mbps", "min"),
            max_mbps=("mbps", "max"),
            mean_mbit_ttcp=("throughput_mbit_ttcp", "mean"),
            retransmits=("retransmitted_segments", "mean"),
            lockstep=("lockstep", "mean"),
        ).reset_index()
        if not out["truncated"].any():
            out = out.drop(columns="truncated")
        if "transaction_rate" in df and df["transaction_rate"].notna().any():
            # Request/response connections: netperf's figure, transactions per second.
            out.insert(
                out.columns.get_loc("mean_mbit_ttcp"),
                "mean_trans_per_s",
                g["transaction_rate"].mean().to_numpy(),
            )
        if len(out) == len(df):
            # A row per group (one run of 10,000 connections): each its own limit, in
            # the rows' order, without a pandas step per group (~1.3 ms each: 13 s).
            known = df["limited_by"].notna().to_numpy()
            limits = [
                (lim, why) if ok else (None, None)
                for lim, why, ok in zip(df["limited_by"], df["limit_evidence"], known)
            ]
        else:
            limits = [most_common_limit(rows) for _, rows in g]
        out["limited_by"] = [lim for lim, _ in limits]
        out["limit_evidence"] = [why for _, why in limits]
        return out

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return (
            f"<cellbench Result{where}: {self.num_rows} rows, {self.meta.get('runs_total')} runs>"
        )

    @classmethod
    def from_memory(cls, mem: MemoryResult) -> Result:
        pa, _ = _arrow()

        def frame(t: str):
            parts = mem.parts[t]
            if not parts:
                return _empty(mem.columns[t])
            return pa.concat_tables(parts).to_pandas()

        return cls(mem.meta, frame("runs"), None, {t: frame(t) for t in PARTS})


def most_common_limit(rows: pd.DataFrame) -> tuple[str | None, str | None]:
    """The limit most of the runs of one point had (ties: the first run's), and
    the evidence of the first run that had it."""
    known = rows[rows["limited_by"].notna()]
    if known.empty:
        return None, None
    counts = known["limited_by"].value_counts(sort=False)
    top = counts[counts == counts.max()].index
    first = known[known["limited_by"].isin(top)].iloc[0]
    return first["limited_by"], first["limit_evidence"]


def _read_checked(
    path: Path,
    meta: dict,
    manifest: dict,
    table: str,
    keep: list[str] | None = None,
    part: Callable = lambda t: t,
) -> pd.DataFrame:
    """A table's parts, each checked against its digest and row count as it is read;
    with ``keep``, only those columns, each part's Arrow table passed through ``part``."""
    pa, pq = _arrow()
    columns = _columns(meta)[table]
    tables = []
    for p in manifest["parts"]:
        f = p["files"].get(table)
        if f is None:
            continue
        file = path / table / f["name"]
        runs = _runs_label(p["first_run"], p["last_run"])
        try:
            data = read_bounded(file, f["bytes"], "a part of the size the manifest gives")
        except (OSError, FileRefused) as e:
            why = e.strerror if isinstance(e, OSError) else e.reason
            raise _damage_error(
                path, meta, [Damage(f"{table}/{f['name']} cannot be read ({why}; {runs})")]
            ) from None
        if _digest(data) != f["sha256"]:
            raise _damage_error(
                path,
                meta,
                [Damage(f"{table}/{f['name']} differs from its SHA-256 in the manifest ({runs})")],
            )
        # (ParquetFile: read_table would need pyarrow.dataset too.)
        pf = pq.ParquetFile(pa.BufferReader(data))
        if pf.metadata.num_rows != f["rows"]:
            raise _damage_error(
                path,
                meta,
                [Damage(f"{table}/{f['name']} has {pf.metadata.num_rows} rows, the manifest "
                        f"says {f['rows']} ({runs})")],
            )  # fmt: skip
        if keep is None:
            tables.append(pf.read())
        else:
            names = set(pf.schema_arrow.names)
            tables.append(part(pf.read(columns=[c for c in keep if c in names])))
    if keep is not None:
        columns = [c for c in columns if c[0] in keep]
    if not tables:
        return _empty(columns)
    return _concat(tables, path, meta, table)


_LEGACY_PART = re.compile(r"part-(\d+)\.parquet\Z")


def _wrong_type(t, columns: list[tuple[str, str]]) -> str | None:
    """The first column of the Arrow table ``t`` whose type is not of the kind the
    result declares for it (a number, text or a truth value; all null fits any), in
    words; None if each fits. Parts whose types disagree cannot be put together."""
    pa, _ = _arrow()
    fits = {
        "int64": lambda ty: pa.types.is_integer(ty) or pa.types.is_floating(ty),
        "float64": lambda ty: pa.types.is_integer(ty) or pa.types.is_floating(ty),
        "string": lambda ty: pa.types.is_string(ty) or pa.types.is_large_string(ty),
        "bool": pa.types.is_boolean,
    }
    have = dict(zip(t.column_names, t.schema.types))
    for name, kind in columns:
        ty = have.get(name)
        if ty is not None and not pa.types.is_null(ty) and not fits[kind](ty):
            return f"column {name} is of type {ty}, expected {kind}"
    return None


def _concat(tables: list, path: Path, meta: dict, table: str) -> pd.DataFrame:
    """The parts of a table as one frame; parts whose columns cannot be merged (a
    type changed in a column the result does not declare) are damage, not a
    traceback."""
    pa, _ = _arrow()
    try:
        return pa.concat_tables(tables, promote_options="default").to_pandas()
    except pa.ArrowException as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise _damage_error(path, meta, [Damage(f"{table}/: its parts disagree ({why})")]) from None


def _legacy_parts(path: Path, meta: dict, table: str) -> tuple[dict[int, tuple], list[Damage]]:
    """Format 2 (a file per run, ``part-NNNNNN.parquet``, no manifest), checked as
    far as it can be without one: run -> (file, its Arrow table), and what is wrong
    (a stray file, a run beyond ``runs_total``, an unreadable file, a file whose rows
    are another run's: a copy; for the runs table of a complete result, runs missing)."""
    pa, pq = _arrow()
    folder = path / table
    found: dict[int, tuple] = {}
    damage: list[Damage] = []
    total = meta["runs_total"]
    columns = _columns(meta)[table]
    if folder.exists() and not folder.is_dir():
        damage.append(
            Damage(f"{table} is a file where the folder of {table} parts belongs", folder)
        )
    for f in sorted(folder.iterdir()) if folder.is_dir() else []:
        m = _LEGACY_PART.match(f.name)
        if m is None or not f.is_file():
            damage.append(Damage(f"{table}/{f.name} is a stray file, not a part of the result", f))
            continue
        run = int(m.group(1))
        if run >= total:
            damage.append(Damage(f"{table}/{f.name}: run {run} is past the result's {total}", f))
            continue
        try:
            t = pq.ParquetFile(f).read()
            runs = set(t.column("run").to_pylist()) if "run" in t.column_names else set()
        except (OSError, pa.ArrowException) as e:
            damage.append(
                Damage(f"{table}/{f.name} is not a readable Parquet part ({e})", f,
                       "set aside; its run runs again")
            )  # fmt: skip
            continue
        wrong = _wrong_type(t, columns)
        if wrong:
            damage.append(
                Damage(f"{table}/{f.name}: {wrong} (copied in from elsewhere?)", f,
                       "set aside; its run runs again")
            )  # fmt: skip
            continue
        if runs != {run}:
            held = ", ".join(str(r) for r in sorted(runs, key=str)[:3]) or "none"
            damage.append(
                Damage(f"{table}/{f.name} holds the rows of run(s) {held}, not of run {run} "
                       "(copied in from elsewhere?)", f, "set aside; its run runs again")
            )  # fmt: skip
            continue
        found[run] = (f, t)
    if table == "runs" and meta.get("complete") is not False and len(found) < total:
        first = next(r for r in range(total) if r not in found)
        damage.append(
            Damage(f"runs/ holds {len(found)} of the result's {total} runs (run {first} is "
                   "missing)", None, "the missing runs run again")
        )  # fmt: skip
    return found, damage


def _read_legacy_parts(path: Path, meta: dict, table: str) -> pd.DataFrame:
    """A format 2 table, every part checked (``_legacy_parts``): any damage is an error."""
    found, damage = _legacy_parts(path, meta, table)
    if damage:
        raise _damage_error(path, meta, damage)
    if not found:
        return _empty(_columns(meta)[table])
    tables = [t for _, (_, t) in sorted(found.items())]
    return _concat(tables, path, meta, table)


def _fill_columns(rows: pd.DataFrame, columns: list[tuple[str, str]] | None = None) -> pd.DataFrame:
    """The columns added since this result was written (to the runs table, or the one
    ``columns`` describes), empty; in one step (one column at a time fragments the
    frame, which pandas warns about past 100 columns)."""
    import pandas as pd

    missing = [
        name for name, _ in (ROW_COLUMNS if columns is None else columns) if name not in rows
    ]
    if not missing:
        return rows
    added = pd.DataFrame({name: [None] * len(rows) for name in missing}, index=rows.index)
    return pd.concat([rows, added], axis=1)


def load(path: str | Path) -> Result:
    """Read a result directory (format_version 1, 2 or 3), checking a version 3
    result against its manifest: any damage is an error naming it."""
    path = Path(path)
    if not path.exists():
        raise ResultError(f"{path}: no such result")
    meta = read_meta(path)
    if meta["format_version"] == 1:
        return _load_v1(path, meta)
    problems = _meta_problems(meta)
    if problems:
        raise _damage_error(path, meta, [Damage(f"result.json: {p}") for p in problems])
    columns = _columns(meta)
    if meta["format_version"] == 2:
        rows = _fill_columns(_read_legacy_parts(path, meta, "runs"))
        if not rows.empty:
            # Connection numbers are unique within a run (also in older results, whose
            # serial "stages" ran as separate simulations and carry a stage column).
            rows = rows.sort_values(["run", "connection"], kind="stable")
            rows = rows.reset_index(drop=True)
        tables = {
            t: (lambda t=t: _fill_columns(_read_legacy_parts(path, meta, t), PARTS[t]))
            for t in PARTS
        }
        return Result(meta, rows, path, tables)
    manifest, why = _read_json(path / "manifest.json")
    if why or not isinstance(manifest, dict) or not _manifest_ok(manifest):
        damage = [Damage(f"manifest.json: {why or 'not a manifest of parts'}")]
        raise _damage_error(path, meta, damage)
    if manifest.get("plan_digest") != meta.get("plan_digest"):
        raise _damage_error(
            path, meta, [Damage("manifest.json belongs to another result (its plan differs)")]
        )
    _, damage = _verify(path, manifest, columns, digests=False)
    want = manifest.get("result_json_sha256")  # (older manifests do not cover it)
    if want is not None and want != _meta_digest(meta):
        damage.append(
            Damage(
                "result.json differs from its SHA-256 in the manifest (changed since the "
                "run: its seed, parameters or experiment may not say what ran)"
            )
        )
    if damage:
        raise _damage_error(path, meta, damage)
    tables = {
        t: (lambda t=t: _fill_columns(_read_checked(path, meta, manifest, t), PARTS[t]))
        for t in PARTS
    }
    count = sum(p["files"]["runs"]["rows"] for p in manifest["parts"] if "runs" in p["files"])
    # The rows are read when asked for; the summary reads only its own columns.
    return Result(
        meta,
        lambda: _fill_columns(_read_checked(path, meta, manifest, "runs")),
        path,
        tables,
        summary_rows=lambda: _summary_rows(path, meta, manifest),
        num_rows=count,
        column_reader=lambda table, names: _read_checked(path, meta, manifest, table, names),
    )


#: The columns of the runs table a summary reads besides its keys (``Result.summary``).
SUMMARY_COLUMNS = [
    "run",
    "completed",
    "throughput_bps",
    "throughput_mbit_ttcp",
    "retransmitted_segments",
    "lockstep",
    "transaction_rate",
    "limited_by",
    "limit_evidence",
]


def _summary_keys(meta: dict, have) -> list[str]:
    keys = [c[0] for c in meta.get("param_columns", [])]
    return [k for k in [*keys, "connection", "test", "transmitter", "receiver"] if k in have]


def _summary_rows(path: Path, meta: dict, manifest: dict) -> pd.DataFrame:
    """The runs table as ``summary`` needs it, in memory that does not grow with the
    runs' evidence: only its columns, and a limit's evidence only on the first row of
    each point, connection and limit (the row ``most_common_limit`` quotes), so a
    sweep of 10^5 runs costs some 100 bytes a run, not the whole rows' 2-3 KB."""
    pa, _ = _arrow()
    import pyarrow.compute as pc

    keys = _summary_keys(meta, [n for n, _ in _columns(meta)["runs"]])
    seen: set[tuple] = set()

    def thin(t):
        if "limit_evidence" not in t.column_names or "limited_by" not in t.column_names:
            return t
        ident = [t.column(k).to_pylist() for k in [*keys, "limited_by"] if k in t.column_names]
        first = []
        for key in zip(*ident):
            first.append(key not in seen)
            seen.add(key)
        i = t.column_names.index("limit_evidence")
        evidence = pc.if_else(pa.array(first), t.column(i), pa.scalar(None, pa.string()))
        return t.set_column(i, "limit_evidence", evidence)

    rows = _read_checked(path, meta, manifest, "runs", [*keys, *SUMMARY_COLUMNS], thin)
    missing = [c for c in SUMMARY_COLUMNS if c not in rows]  # (columns added since)
    return rows.assign(**{c: [None] * len(rows) for c in missing}) if missing else rows


def _load_v1(path: Path, meta: dict) -> Result:
    """`cellbench reproduce --out` once: result.json + runs.csv, one row per transfer."""
    import pandas as pd

    csv = path / "runs.csv"
    if not csv.exists():
        raise ResultError(f"{path}: format_version 1 result without runs.csv")
    rows = pd.read_csv(csv)
    if "send_buffer" in rows and "sndbuf" not in rows:
        rows["sndbuf"] = rows["send_buffer"]
        rows["rcvbuf"] = rows["recv_buffer"]
    if "run" not in rows:
        rows.insert(0, "run", range(len(rows)))
    meta.setdefault("param_columns", [["send_buffer", "int64"], ["recv_buffer", "int64"]])
    meta.setdefault("runs_total", len(rows))
    return Result(meta, _fill_columns(rows), path)


def stored_runs(path: Path) -> int:
    """How many runs a version 3 result holds in parts (0 if it cannot tell)."""
    manifest, _ = _read_json(Path(path) / "manifest.json")
    if not isinstance(manifest, dict) or not _manifest_ok(manifest):
        return 0
    return sum(p["last_run"] - p["first_run"] + 1 for p in manifest["parts"])
