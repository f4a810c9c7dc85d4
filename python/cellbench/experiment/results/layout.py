"""A result directory's format: what it is called and versioned by, the names of its
folders, the bounds on what a reader takes in, the SHA-256 digests its manifest holds,
and the errors of a result that cannot be read or extended (the directory itself is
drawn in ``results/__init__.py``)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from cellbench.files import FileRefused, read_bounded

FORMAT = "cellbench-result"
FORMAT_VERSION = 3
MANIFEST_FORMAT = "cellbench-manifest"

#: The largest result.json or manifest.json read: an experiment's text is at most 1 MiB
#: (``lang.MAX_TEXT_BYTES``) and a manifest's part some 1 KB, so this holds the
#: manifest of a sweep at the language's 10^5-value bound many times over.
MAX_JSON_BYTES = 64 << 20

INCOMING = ".incoming"
DAMAGED = ".damaged"
#: Where --resume keeps a format 2 result's files once their runs are in parts.
LEGACY_KEPT = ".format2"
_PART_NAME = re.compile(r"part-(\d+)-(\d+)\.parquet\Z")
#: A format 2 part: one file per run.
_LEGACY_PART = re.compile(r"part-(\d+)\.parquet\Z")


class ResultError(ValueError):
    """A result directory that cannot be read or extended."""


class ResultDamage(ResultError):
    """A result directory whose files do not match its manifest."""


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
