"""Experiments as data: the NetSpec-style language, testbeds, sweeps, results.

- ``lang``: lexer and parser (the text is data, never executed).
- ``model``: connections, traffic, serial/parallel timing.
- ``testbed``: hosts and switch as a checked block; the classic testbeds as presets.
- ``sweep``: parameters, ranges, products, --set.
- ``plan``: every sweep point x replication of a file, checked, as runs to hand an
  engine (``cellbench.engines`` runs them).
- ``results``: the self-describing result directory (Parquet).
"""

from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.results import Result, ResultError, load

__all__ = ["ExperimentError", "Result", "ResultError", "load"]
