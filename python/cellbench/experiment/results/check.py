"""Checking a stored result: its result.json (format, version, the keys a reader
needs), its manifest and every part against it (size, SHA-256, files it does not
list), a format 2 result's files as far as they can be checked without one, and the
error that names the damage with the command that repairs it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from cellbench.experiment.results.arrow import _arrow
from cellbench.experiment.results.layout import (
    _LEGACY_PART,
    _PART_NAME,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST_FORMAT,
    MAX_JSON_BYTES,
    MAX_PART_BYTES,
    ResultDamage,
    ResultError,
    _file_digest,
)
from cellbench.experiment.results.tables import TABLES, _columns
from cellbench.files import FileRefused, read_bounded


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
