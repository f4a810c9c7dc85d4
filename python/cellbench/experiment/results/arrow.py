"""Rows as Arrow tables in the stored schema: rows given as lists or dicts, slices of
a cluster's batch (Arrow IPC streams, one per table) cut by run, a part's table put
together from its runs' pieces, and a stored part's rows read back as lists."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd


def _arrow():
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


def _schema(columns: list[tuple[str, str]]):
    pa, _ = _arrow()
    types = {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "string": pa.string(),
        "bool": pa.bool_(),
    }
    return pa.schema([(n, types[t]) for n, t in columns])


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
