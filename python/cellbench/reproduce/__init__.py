"""The classic testbeds, runnable as reproductions (``cellbench reproduce NAME``)."""

from __future__ import annotations

from cellbench.reproduce import lan_buffers

#: name -> module with ``run(...)`` returning a DataFrame and ``report(df)`` for the CLI.
STUDIES = {"lan-buffers": lan_buffers}

__all__ = ["STUDIES", "lan_buffers"]
