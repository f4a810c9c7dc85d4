"""The result of a run: one self-describing directory.

::

    RESULT/
      result.json          format, format_version, cellbench_version, the experiment text,
                           the --set values, seed, replications, the resolved testbed, the
                           sweep, notes, complete (false while runs are missing)
      experiment.netspec   the experiment text, as run (the same text as in result.json)
      runs/part-NNNNNN.parquet    one row per connection per run, one file per run
      ports/part-NNNNNN.parquet   one row per switch output port per run (cells in/out/lost, peak,
                                  CLP=1 cells lost at the CLP-1 threshold, cells tagged by a UPC)
      traces/part-NNNNNN.parquet  (--trace) one row per trace line: run, stage, connection, line
      cwnd/part-NNNNNN.parquet    (--series) one row per sample of a TCP sender's congestion
                                  state: run, stage, connection, t_s, cwnd, ssthresh, flight
                                  (bytes; a sample whenever one of them changed)
      queue/part-NNNNNN.parquet   (--series) one row per sample of a switch port's occupancy:
                                  run, stage, port, host, t_s, cells (just after accepted
                                  arrivals, and 0 when the buffer empties)

A run is one point of the sweep × one replication (run = point × replications +
replication). Each run's rows are written, atomically, as soon as it finishes, so
an interrupted sweep keeps every finished run and ``--resume`` runs the rest. The
parts have one fixed schema, so ``pandas.read_parquet("RESULT/runs")``,
``polars.read_parquet("RESULT/runs/*.parquet")`` and DuckDB's
``read_parquet('RESULT/runs/*.parquet')`` read them as one table.

``format_version`` 1 is what ``cellbench reproduce --out`` wrote (result.json and
runs.csv); it is still read. A newer version than ``FORMAT_VERSION`` is refused.
Adding a column to ``ROW_COLUMNS`` keeps the version: readers fill a column that
older parts lack with nulls (``limited_by`` and ``limit_evidence``, what bound
each connection, came so), and older readers carry a newer column along.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

FORMAT = "cellbench-result"
FORMAT_VERSION = 2

#: Columns of every row, in order: identity and configuration, then the simulator's measures.
#: (name, arrow type name); a measure the engine does not report is null.
ROW_COLUMNS: list[tuple[str, str]] = [
    ("run", "int64"),
    ("point", "int64"),
    ("replication", "int64"),
    ("seed", "int64"),
    ("stage", "int64"),
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
    ("start_s", "float64"),
    ("completed", "bool"),
    ("bytes", "int64"),
    ("sender_seconds", "float64"),
    ("receiver_seconds", "float64"),
    ("throughput_bps", "float64"),
    ("throughput_mbit_ttcp", "float64"),
    ("goodput_bps", "float64"),
    ("lockstep", "bool"),
    ("circular_wait_seconds", "float64"),
    ("data_segments", "int64"),
    ("retransmitted_segments", "int64"),
    ("timeouts", "int64"),
    ("receiver_acks", "int64"),
    ("delayed_acks", "int64"),
    ("window_updates", "int64"),
    ("cells_lost", "int64"),
    ("data_pdus_sent", "int64"),
    ("data_pdus_lost", "int64"),
    ("cells_policed", "int64"),
    ("cells_tagged", "int64"),
    ("cells_lost_clp", "int64"),
    ("pdus_dropped_at_adapter", "int64"),
    ("datagrams_sent", "int64"),
    ("datagrams_received", "int64"),
    ("datagrams_dropped_no_buffer", "int64"),
    ("events", "int64"),
    ("sim_seconds", "float64"),
    ("cycle_bytes_per_tick", "float64"),
    ("cycle_period_s", "float64"),
    ("cycle_predicted_bps", "float64"),
    ("cycle_pattern", "string"),
    # What bound the connection (application, lockstep, link, host-cpu, window,
    # policing, cell-loss, nagle, undetermined) and the evidence, in one sentence.
    ("limited_by", "string"),
    ("limit_evidence", "string"),
    # Whether every UPC of the run's path saw a conforming cell stream (null: no UPC).
    ("met_contract", "bool"),
    # The engine that ran the row (null: the simulator); the real engine's clock and pacing.
    ("engine", "string"),
    ("started_s", "float64"),
    ("ended_s", "float64"),
    ("late_blocks", "int64"),
    ("timing_error_p99_us", "float64"),
]


def cycle_columns(connection: dict) -> dict:
    """A simulated connection's lock-step evidence (its ``lockstep_cycle``, kept with a
    trace) as flat ``cycle_*`` values; None where the trace shows no timer-paced cycle."""
    cycle = connection.get("lockstep_cycle") or {}
    return {
        "cycle_bytes_per_tick": cycle.get("bytes_per_tick"),
        "cycle_period_s": cycle.get("period_s"),
        "cycle_predicted_bps": cycle.get("predicted_bps"),
        "cycle_pattern": cycle.get("pattern"),
        "cycle_repeats": cycle.get("pattern_repeats"),
    }


PORT_COLUMNS = [
    ("run", "int64"),
    ("point", "int64"),
    ("replication", "int64"),
    ("stage", "int64"),
    ("port", "int64"),
    ("host", "string"),
    ("cells_in", "int64"),
    ("cells_out", "int64"),
    ("cells_lost", "int64"),
    ("peak_occupancy", "int64"),
    ("cells_lost_clp", "int64"),
    ("cells_tagged", "int64"),
]
TRACE_COLUMNS = [
    ("run", "int64"),
    ("point", "int64"),
    ("replication", "int64"),
    ("stage", "int64"),
    ("connection", "int64"),
    ("line_no", "int64"),
    ("line", "string"),
]

_SERIES_IDENT = [("run", "int64"), ("point", "int64"), ("replication", "int64"), ("stage", "int64")]
CWND_COLUMNS = [
    *_SERIES_IDENT,
    ("connection", "int64"),
    ("t_s", "float64"),
    ("cwnd", "int64"),
    ("ssthresh", "int64"),
    ("flight", "int64"),
]
QUEUE_COLUMNS = [
    *_SERIES_IDENT,
    ("port", "int64"),
    ("host", "string"),
    ("t_s", "float64"),
    ("cells", "int64"),
]
#: The per-run tables besides ``runs``: folder -> columns.
PARTS = {
    "ports": PORT_COLUMNS,
    "traces": TRACE_COLUMNS,
    "cwnd": CWND_COLUMNS,
    "queue": QUEUE_COLUMNS,
}


class ResultError(ValueError):
    """A result directory that cannot be read or extended."""


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


def _write_table(path: Path, rows: list[dict], columns: list[tuple[str, str]]) -> None:
    """Write atomically: a reader (or --resume) never sees half a part."""
    pa, pq = _arrow()
    schema = _schema(columns)
    table = pa.Table.from_pylist([{n: r.get(n) for n, _ in columns} for r in rows], schema=schema)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


class ResultDir:
    """Writes a result directory run by run; ``resume`` picks up a started one."""

    def __init__(self, path: Path, meta: dict, *, resume: bool, overwrite: bool = False):
        self.path = Path(path)
        self.meta = meta
        self.columns = ROW_COLUMNS + [tuple(c) for c in meta["param_columns"]]
        info = self.path / "result.json"
        if self.path.exists() and any(self.path.iterdir()):
            if resume:
                old = read_meta(self.path)
                if old.get("plan_digest") != meta["plan_digest"]:
                    raise ResultError(
                        f"{self.path}: was started with a different experiment, --set, seed, "
                        "replications or testbed: it cannot be resumed with these"
                    )
            elif not overwrite:
                raise ResultError(
                    f"{self.path} exists: --resume to finish it, or --out another path"
                )
            elif not info.exists():
                raise ResultError(
                    f"{self.path} exists and is not a cellbench result: not overwriting"
                )
            else:
                for sub in ("runs", *PARTS):
                    for f in (self.path / sub).glob("*"):
                        f.unlink()
        (self.path / "runs").mkdir(parents=True, exist_ok=True)
        for sub in PARTS:
            (self.path / sub).mkdir(exist_ok=True)
        (self.path / "experiment.netspec").write_text(meta["experiment"]["text"])
        self._write_meta(complete=False)

    def _write_meta(self, complete: bool) -> None:
        self.meta["complete"] = complete
        tmp = self.path / "result.json.tmp"
        tmp.write_text(json.dumps(self.meta, indent=2, sort_keys=False) + "\n")
        os.replace(tmp, self.path / "result.json")

    def done(self) -> set[int]:
        return {int(p.stem.split("-")[1]) for p in (self.path / "runs").glob("part-*.parquet")}

    def write_run(
        self,
        run: int,
        rows: list[dict],
        traces: list[dict],
        ports: list[dict],
        cwnd: list[dict] = (),
        queue: list[dict] = (),
    ) -> None:
        # The other tables first: a run counts as done once its rows exist.
        for sub, part in (("traces", traces), ("ports", ports), ("cwnd", cwnd), ("queue", queue)):
            if part:
                _write_table(self.path / sub / f"part-{run:06d}.parquet", part, PARTS[sub])
        _write_table(self.path / "runs" / f"part-{run:06d}.parquet", rows, self.columns)

    def finish(self) -> None:
        self._write_meta(complete=True)


class MemoryResult:
    """The same interface, kept in memory (``cellbench.run`` without ``out``)."""

    def __init__(self, meta: dict):
        self.meta = meta
        self.path = None
        self.columns = ROW_COLUMNS + [tuple(c) for c in meta["param_columns"]]
        self.rows: dict[int, list[dict]] = {}
        self.traces: dict[int, list[dict]] = {}
        self.ports: dict[int, list[dict]] = {}
        self.cwnd: dict[int, list[dict]] = {}
        self.queue: dict[int, list[dict]] = {}

    def done(self) -> set[int]:
        return set(self.rows)

    def write_run(
        self,
        run: int,
        rows: list[dict],
        traces: list[dict],
        ports: list[dict],
        cwnd: list[dict] = (),
        queue: list[dict] = (),
    ) -> None:
        self.rows[run] = rows
        self.traces[run] = traces
        self.ports[run] = ports
        self.cwnd[run] = list(cwnd)
        self.queue[run] = list(queue)

    def finish(self) -> None:
        self.meta["complete"] = True


def read_meta(path: Path) -> dict:
    path = Path(path)
    info = path / "result.json" if path.is_dir() else path
    try:
        meta = json.loads(info.read_text())
    except FileNotFoundError:
        raise ResultError(f"{path}: no result.json: not a cellbench result") from None
    except json.JSONDecodeError as e:
        raise ResultError(f"{info}: not valid JSON ({e.msg} at line {e.lineno})") from None
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


def _frame(rows: list[dict], columns) -> pd.DataFrame:
    pa, _ = _arrow()
    table = pa.Table.from_pylist(
        [{n: r.get(n) for n, _ in columns} for r in rows], schema=_schema(columns)
    )
    return table.to_pandas()


class Result:
    """A stored (or in-memory) result: metadata, rows, traces."""

    def __init__(
        self,
        meta: dict,
        rows: pd.DataFrame,
        traces: pd.DataFrame,
        path: Path | None,
        ports: pd.DataFrame | None = None,
        cwnd: pd.DataFrame | None = None,
        queue: pd.DataFrame | None = None,
    ):
        self.meta = meta
        self._rows = rows
        self._traces = traces
        self._ports = ports if ports is not None else _frame([], PORT_COLUMNS)
        self._cwnd = cwnd if cwnd is not None else _frame([], CWND_COLUMNS)
        self._queue = queue if queue is not None else _frame([], QUEUE_COLUMNS)
        self.path = path

    def to_pandas(self) -> pd.DataFrame:
        """One row per connection per run, sorted by run and connection."""
        return self._rows.copy()

    def traces(self) -> pd.DataFrame:
        """One row per trace line (runs made with trace=True / --trace)."""
        return self._traces.copy()

    def ports(self) -> pd.DataFrame:
        """One row per switch output port per run: cells in, out, lost; peak occupancy."""
        return self._ports.copy()

    def cwnd_series(self) -> pd.DataFrame:
        """One row per sample of a TCP sender's cwnd, ssthresh and flight (bytes) over
        time (runs made with series=True / --series)."""
        return self._cwnd.copy()

    def queue_series(self) -> pd.DataFrame:
        """One row per sample of a switch port's occupancy in cells over time (runs
        made with series=True / --series)."""
        return self._queue.copy()

    @property
    def params(self) -> list[str]:
        return [c[0] for c in self.meta.get("param_columns", [])]

    def summary(self) -> pd.DataFrame:
        """Per sweep point and connection: throughput over the replications, and
        the limit most of them had (``limited_by``) with its evidence."""
        df = self._rows
        if df.empty:
            return df
        keys = [*self.params, "stage", "connection", "test", "transmitter", "receiver"]
        keys = [k for k in keys if k in df.columns]
        mbps = df["throughput_bps"] / 1e6
        g = df.assign(mbps=mbps).groupby(keys, sort=False, dropna=False)
        out = g.agg(
            runs=("run", "count"),
            mean_mbps=("mbps", "mean"),
            min_mbps=("mbps", "min"),
            max_mbps=("mbps", "max"),
            mean_mbit_ttcp=("throughput_mbit_ttcp", "mean"),
            retransmits=("retransmitted_segments", "mean"),
            lockstep=("lockstep", "mean"),
        ).reset_index()
        limits = [most_common_limit(rows) for _, rows in g]
        out["limited_by"] = [lim for lim, _ in limits]
        out["limit_evidence"] = [why for _, why in limits]
        return out

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return (
            f"<cellbench Result{where}: {len(self._rows)} rows, {self.meta.get('runs_total')} runs>"
        )

    @classmethod
    def from_memory(cls, mem: MemoryResult) -> Result:
        rows = [r for run in sorted(mem.rows) for r in mem.rows[run]]
        traces = [t for run in sorted(mem.traces) for t in mem.traces[run]]
        ports = [p for run in sorted(mem.ports) for p in mem.ports[run]]
        cwnd = [x for run in sorted(mem.cwnd) for x in mem.cwnd[run]]
        queue = [x for run in sorted(mem.queue) for x in mem.queue[run]]
        return cls(
            mem.meta,
            _frame(rows, mem.columns),
            _frame(traces, TRACE_COLUMNS),
            None,
            _frame(ports, PORT_COLUMNS),
            _frame(cwnd, CWND_COLUMNS),
            _frame(queue, QUEUE_COLUMNS),
        )


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


def _read_parts(folder: Path, columns) -> pd.DataFrame:
    pa, pq = _arrow()
    parts = sorted(folder.glob("part-*.parquet"))
    if not parts:
        return _frame([], columns)
    tables = [pq.read_table(p) for p in parts]
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def load(path: str | Path) -> Result:
    """Read a result directory (format_version 1 or 2)."""
    path = Path(path)
    if not path.exists():
        raise ResultError(f"{path}: no such result")
    meta = read_meta(path)
    if meta["format_version"] == 1:
        # `cellbench reproduce --out`: result.json + runs.csv, one row per transfer.
        csv = path / "runs.csv"
        if not csv.exists():
            raise ResultError(f"{path}: format_version 1 result without runs.csv")
        rows = pd.read_csv(csv)
        if "send_buffer" in rows and "sndbuf" not in rows:
            rows["sndbuf"] = rows["send_buffer"]
            rows["rcvbuf"] = rows["recv_buffer"]
        if "run" not in rows:
            rows.insert(0, "run", range(len(rows)))
        for name, _ in ROW_COLUMNS:
            if name not in rows:
                rows[name] = None
        meta.setdefault("param_columns", [["send_buffer", "int64"], ["recv_buffer", "int64"]])
        meta.setdefault("runs_total", len(rows))
        return Result(meta, rows, _frame([], TRACE_COLUMNS), path)
    rows = _read_parts(path / "runs", ROW_COLUMNS + [tuple(c) for c in meta["param_columns"]])
    for name, _ in ROW_COLUMNS:
        if name not in rows:
            rows[name] = None  # a column added since this result was written
    if not rows.empty:
        rows = rows.sort_values(["run", "stage", "connection"], kind="stable").reset_index(
            drop=True
        )
    traces = _read_parts(path / "traces", TRACE_COLUMNS)
    ports = _read_parts(path / "ports", PORT_COLUMNS)
    cwnd = _read_parts(path / "cwnd", CWND_COLUMNS)
    queue = _read_parts(path / "queue", QUEUE_COLUMNS)
    return Result(meta, rows, traces, path, ports, cwnd, queue)
