"""Reading a file someone else wrote: a regular file only, and only up to a bound.

A result's ``result.json``, a capture's description, an experiment file or a pcap may
be a link to ``/dev/zero`` (read until memory runs out), a FIFO (an open that waits
for a writer forever) or a file of gigabytes. Every reader of such a file goes
through here: it is opened without waiting (``O_NONBLOCK``: a FIFO opens at once),
refused unless it is a regular file, refused past ``limit`` bytes before a byte is
read, and read no further than ``limit`` even if it grows meanwhile. The refusal is
a ``FileRefused`` (a ``ValueError``): one line naming the file, what it is and what
was expected. An ``OSError`` (no such file, no permission) passes through as it is.
Text taken from such a file is shown through ``printable``: a hostile file's escape
sequences never reach the terminal.
"""

from __future__ import annotations

import os
import stat

__all__ = ["FileRefused", "check_regular", "printable", "read_bounded"]

#: What a file that is not a regular file is, in words.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(ValueError):
    """A file that is not a regular file, or larger than its reader's bound: ``str()``
    is ``PATH: REASON``; ``too_large`` tells the second kind."""

    def __init__(self, path: str, reason: str, too_large: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.too_large = path, reason, too_large


def _check(path: str, st: os.stat_result, limit: int, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise FileRefused(path, f"{kind}, expected {what} in a regular file")
    if st.st_size > limit:
        raise FileRefused(
            path, f"{st.st_size} bytes, expected {what} of at most {limit} bytes", True
        )


def check_regular(path: str | os.PathLike, limit: int, what: str = "the file") -> None:
    """Refuse ``path`` unless it is a regular file of at most ``limit`` bytes, for a
    reader that opens it by name itself (the Rust pcap readers)."""
    path = os.fspath(path)
    _check(path, os.stat(path), limit, what)


def read_bounded(path: str | os.PathLike, limit: int, what: str = "the file") -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes."""
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        _check(path, os.fstat(fd), limit, what)
        data = f.read(limit + 1)  # (a file that grew since fstat)
    if len(data) > limit:
        raise FileRefused(path, f"more than {limit} bytes, expected {what} of at most that", True)
    return data


def printable(text: str) -> str:
    """``text`` with its control characters (ESC, CR, BEL, the C1 range, ...) shown as
    Python escapes (``\\x1b``), so that text from a file cannot drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
