#!/usr/bin/env python3
"""Hash every study's rows and every example experiment's stored rows.

The restructure of the house (issue 23) must not change behaviour: this script
runs every part of every study in the registry (`cellbench.reproduce.REGISTRY`:
`reproduce STUDY --part PART --json`, and `--out` where the part stores) and
each simulator example (`run ... --out`), and prints one SHA-256 per item.
An item is named by the command that runs it: `reproduce STUDY` where that
runs exactly the part (a study's only part or only default part), else
`reproduce STUDY --part PART`; a baseline's item under the other name of the
same run keeps the baseline's name. An item the baseline lacks is said and
counted (record it with --save). `--save FILE` records the hashes together with the columns and JSON
keys they covered; `--check FILE` recomputes them over those same columns and
keys only, so a column added later (a simulator field newly stored) does not
count as a change while any changed value does.

    python3 scripts/row-hashes.py --save scripts/row-hashes.baseline.json
    python3 scripts/row-hashes.py --check scripts/row-hashes.baseline.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent

# Stored columns whose values differ from run to run by design (a temporary directory's
# path), left out of a new baseline.
VOLATILE = {"tester_path"}

# The simulator's example experiments (the real-* and emulator ones need hosts
# or namespaces and measure time, so they have no fixed hash).
EXAMPLES = [
    "abr.netspec",
    "lan-buffers.netspec",
    "netspec-example.netspec",
    "offered-load.netspec",
    "rr.netspec",
    "serial-parallel.netspec",
    "window.netspec",
]


def cellbench(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "cellbench", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"cellbench {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def keys_of(doc: object, into: set[str]) -> set[str]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            into.add(k)
            keys_of(v, into)
    elif isinstance(doc, list):
        for v in doc:
            keys_of(v, into)
    return into


def project(doc: object, keys: set[str]) -> object:
    if isinstance(doc, dict):
        return {k: project(v, keys) for k, v in doc.items() if k in keys}
    if isinstance(doc, list):
        return [project(v, keys) for v in doc]
    return doc


def digest(doc: object) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def stored_tables(out: Path) -> dict[str, list[dict]]:
    """Every parquet table under a result directory, rows in stored order."""
    tables: dict[str, list[dict]] = {}
    for path in sorted(out.rglob("*.parquet")):
        name = str(path.parent.relative_to(out))
        tables.setdefault(name, []).extend(pq.read_table(path).to_pylist())
    return tables


def study_items(known: set[str] = frozenset()) -> list[tuple[str, list[str]]]:
    """(label, arguments) for every part of every study in the registry, in its order;
    a label in ``known`` (a baseline's) that runs the same part is kept."""
    sys.path.insert(0, str(ROOT / "python"))
    from cellbench.reproduce import REGISTRY

    items = []
    for s in REGISTRY.values():
        for p in s.parts:
            args = ["reproduce", s.name, "--part", p.name]
            names = [" ".join(args)]
            if s.chosen(None) == (p.name,):
                names.insert(0, f"reproduce {s.name}")
            label = next((n for n in names if n in known), names[0])
            items.append((label, args))
    return items


def measure(baseline: dict | None, known: set[str]) -> dict:
    items: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = study_items(known)
        jobs += [(f"run examples/{e}", ["run", f"examples/{e}"]) for e in EXAMPLES]
        for n, (label, args) in enumerate(jobs):
            out = Path(tmp) / f"out{n}"
            was = (baseline or {}).get(label, {})
            item: dict = {}
            if args[0] == "reproduce":
                doc = json.loads(cellbench(*args, "--json"))
                keys = set(was["json_keys"]) if was else keys_of(doc, set())
                item["json_keys"] = sorted(keys)
                item["json"] = digest(project(doc, keys))
                # The parts that store: the same run once more with --out.
                stored = subprocess.run(
                    [sys.executable, "-m", "cellbench", *args, "--out", str(out)],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                )
                if stored.returncode != 0:
                    out = None
            else:
                cellbench(*args, "--out", str(out))
            if out is not None and out.exists():
                tables = stored_tables(out)
                columns = was.get("columns") or {
                    t: sorted({c for r in rows for c in r} - VOLATILE) for t, rows in tables.items()
                }
                item["columns"] = columns
                item["tables"] = {
                    t: digest([{c: r.get(c) for c in columns.get(t, [])} for r in rows])
                    for t, rows in tables.items()
                    if t in columns
                }
            items[label] = item
            tables = sorted(item.get("tables", {}))
            print(f"{label}: {item.get('json', '-')[:16]} {tables}", file=sys.stderr)
    return items


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", metavar="FILE")
    parser.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    baseline = json.loads(Path(args.check).read_text()) if args.check else None
    # Re-recording keeps the names the file already gives its items.
    saved = Path(args.save) if args.save else None
    named = json.loads(saved.read_text()) if saved is not None and saved.exists() else {}
    items = measure(baseline, set(baseline or named))
    if args.save:
        Path(args.save).write_text(json.dumps(items, indent=1, sort_keys=True) + "\n")
    if baseline is None:
        return 0
    new = [label for label in items if label not in baseline]
    for label in new:
        print(f"NEW {label}: not in {args.check} (record it with --save)")
    changed = 0
    for label, was in baseline.items():
        now = items.get(label, {})
        if was.get("json") != now.get("json"):
            print(f"CHANGED {label}: --json")
            changed += 1
        for table, h in was.get("tables", {}).items():
            if now.get("tables", {}).get(table) != h:
                print(f"CHANGED {label}: stored {table}")
                changed += 1
    print(f"{len(baseline)} items, {changed} changed" + (f", {len(new)} new" if new else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
