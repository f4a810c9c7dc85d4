"""Writing a result as its runs finish: a run's tables (or a cluster's batch) in,
parts out, in memory (``MemoryResult``) or to a directory (``ResultDir``) that
journals every finished run at once, and on ``--resume`` checks, repairs and extends
a started one."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from pathlib import Path

from cellbench.experiment.results.arrow import (
    _arrow,
    _as_lists,
    _by_run,
    _from_ipc,
    _joined,
    _stored_rows,
)
from cellbench.experiment.results.check import (
    Damage,
    _legacy_parts,
    _manifest_ok,
    _meta_problems,
    _read_json,
    _verify,
)
from cellbench.experiment.results.gather import RunSet, _Gatherer
from cellbench.experiment.results.layout import (
    DAMAGED,
    FORMAT,
    INCOMING,
    LEGACY_KEPT,
    MANIFEST_FORMAT,
    ResultError,
    _digest,
    _meta_digest,
)
from cellbench.experiment.results.tables import TABLES, _columns

#: A part is cut after this many runs...
PART_RUNS = 1000
#: ... or once its tables hold this many rows together (traces and series are long).
PART_ROWS = 200_000


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
