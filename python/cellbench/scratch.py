"""Temporary directories a killed process does not leave behind.

``tempfile.TemporaryDirectory`` removes its directory when the process ends
normally or by a signal Python handles; SIGKILL (the OOM killer, ``kill -9``) leaves
it, and a study's or a daemon's directories piled up in /tmp. Each directory made
here holds a lock file that its process keeps locked (``flock``) while it uses it;
the kernel drops the lock when the process dies, however it dies. The next process
that makes one of the same kind first removes those whose lock is free: only
directories of that prefix, owned by this user, not links, holding the lock file,
and older than a grace (the moment between making a directory and locking it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: The lock file in every directory made here.
LOCK = ".cellbench-lock"
#: A directory younger than this is never removed as stale (seconds).
GRACE_S = 5.0


def remove_stale(prefix: str, parent: str | None = None) -> list[Path]:
    """Remove the directories ``prefix*`` under ``parent`` (the temporary directory)
    that a process made here and left when it died; the ones removed."""
    parent = parent or tempfile.gettempdir()
    removed = []
    try:
        names = [n for n in os.listdir(parent) if n.startswith(prefix)]
    except OSError:
        return removed
    for name in names:
        path = Path(parent) / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (
            not stat.S_ISDIR(st.st_mode)
            or st.st_uid != os.getuid()
            or time.time() - st.st_mtime < GRACE_S
        ):
            continue
        try:
            fd = os.open(path / LOCK, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue  # not one of ours (no lock file), or gone already
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # its process is alive
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def make(prefix: str) -> tuple[Path, int]:
    """A new directory ``prefix*`` in the temporary directory, and the descriptor of
    its lock, held: closing it (or dying) lets a later process remove the directory.
    Stale ones of the same prefix are removed first."""
    remove_stale(prefix)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0))
    fcntl.flock(fd, fcntl.LOCK_EX)
    return path, fd


def release(path: Path, fd: int) -> None:
    """Remove a directory made by ``make`` and let its lock go."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(fd)


@contextlib.contextmanager
def directory(prefix: str) -> Iterator[str]:
    """``with scratch.directory("cellbench-study-") as tmp:``: as
    ``tempfile.TemporaryDirectory``, and removed by a later process if this one is
    killed."""
    path, fd = make(prefix)
    try:
        yield str(path)
    finally:
        release(path, fd)
