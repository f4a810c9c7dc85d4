"""Byte counts as the command line and the studies' options take them.

A byte count is a whole number with the experiment language's K, M and G suffixes (2^10,
2^20, 2^30, as ttcp and NetSpec use them): ``--nbytes 100G`` reads as ``nbytes = 100G;``
does in a file, by the language's own number reader (``experiment.lang.number_text``), and
is checked against the simulator's integer widths (``experiment.model.limits``). The
command line (``cli/``) and a study's own options (``reproduce/``) both take it from here.
"""

from __future__ import annotations

import argparse

from cellbench.experiment.lang import number_text
from cellbench.experiment.values import U32_MAX


def byte_count(what: str, hi: int = U32_MAX):
    """An argparse type: a whole number of bytes 1..hi, with the experiment language's
    K, M and G suffixes (2^10, 2^20, 2^30): ``--nbytes 100G`` as ``nbytes=100G``."""

    def parse(text: str) -> int:
        value = number_text(text.strip())
        if value is None or isinstance(value, float):
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number of bytes (K, M, G: 2^10, 2^20, 2^30), got {text!r}"
            )
        if not 1 <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"{what} must be >= 1 and at most {hi} bytes, got {text!r}"
            )
        return value

    return parse
