"""A result as Python reads it (``Result``): its metadata, its rows and other tables
as pandas frames read when first asked for, a few columns without the rest, and the
summary per sweep point and connection with the limit most of its runs had."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cellbench.experiment.results.arrow import _arrow, _empty
from cellbench.experiment.results.tables import PARTS, _columns

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results.store import MemoryResult


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
        #: Whether its rows hold every column (not so once ``narrowed``).
        self._whole = True
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
        stored = {n for n, _ in _columns(self.meta).get(table, [])}
        # (A narrowed result's rows may lack a column another view asks for.)
        unread = (
            loaded is None
            or callable(loaded)
            or any(n in stored and n not in loaded for n in names)
        )
        if unread and self._column_reader is not None:
            return self._column_reader(table, [n for n in names if n in stored])
        df = self._rows if table == "runs" else self._table(table)
        return df[[n for n in names if n in df]]

    def rows_view(self) -> pd.DataFrame:
        """The rows as ``to_pandas``, without the copy: for a reader that changes
        nothing (``report`` and ``plot`` of a 100k-run result: a copy is ~120 MB)."""
        return self._rows

    def narrowed(self, names: Iterable[str]) -> Result:
        """This result with a runs table of only the columns ``names`` (a column the
        result was stored before is there, empty): a stored result not yet read reads
        only those, so a reader of a few columns (``report``) does not hold the rows'
        other hundred. One already in memory is itself."""
        if not callable(self._rows_or_reader) or self._column_reader is None:
            return self
        names = list(dict.fromkeys(names))
        declared = {n for n, _ in _columns(self.meta)["runs"]}

        def rows() -> pd.DataFrame:
            df = self.rows_columns(names)
            missing = [n for n in names if n in declared and n not in df]
            return df.assign(**{n: [None] * len(df) for n in missing}) if missing else df

        out = Result(
            self.meta,
            rows,
            self.path,
            self._tables,
            summary_rows=self._summary_rows,
            num_rows=self._num_rows,
            column_reader=self._column_reader,
        )
        out.label, out._whole = self.label, False
        return out

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
        lean = self._summary_rows is not None and (
            callable(self._rows_or_reader) or not self._whole
        )
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
