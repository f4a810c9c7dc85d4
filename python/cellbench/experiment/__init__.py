"""Experiments as data: the NetSpec-style language, testbeds, sweeps, results.

- ``lang``: lexer and parser (the text is data, never executed).
- ``model``: connections, traffic, serial/parallel timing.
- ``testbed``: hosts and switch as a checked block; the classic testbeds as presets.
- ``sweep``: parameters, ranges, products, --set.
- ``runner``: plan and run on a pool of workers (or Dask); ``run(...)``.
- ``results``: the self-describing result directory (Parquet).
"""

from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.results import Result, ResultError, load
from cellbench.experiment.runner import run

__all__ = ["ExperimentError", "Result", "ResultError", "load", "run"]
