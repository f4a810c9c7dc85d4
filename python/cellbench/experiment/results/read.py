"""Reading a stored result (``load``): format 1, 2 or 3, each part checked against
the manifest as it is read, the columns added since it was written filled empty,
and for a summary only the columns it needs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cellbench.experiment.results.arrow import _arrow, _empty
from cellbench.experiment.results.check import (
    Damage,
    _damage_error,
    _legacy_parts,
    _manifest_ok,
    _meta_problems,
    _read_json,
    _runs_label,
    _verify,
    read_meta,
)
from cellbench.experiment.results.columns import ROW_COLUMNS
from cellbench.experiment.results.layout import ResultError, _digest, _meta_digest
from cellbench.experiment.results.result import SUMMARY_COLUMNS, Result, _summary_keys
from cellbench.experiment.results.tables import PARTS, _columns
from cellbench.files import FileRefused, read_bounded

if TYPE_CHECKING:
    import pandas as pd


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
