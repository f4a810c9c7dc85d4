"""The result of a run: one self-describing directory that checks itself.

::

    RESULT/
      result.json          format, format_version, cellbench_version, the experiment text,
                           the --set values, seed, replications, the resolved testbed, the
                           sweep, notes, complete (false while runs are missing)
      experiment.netspec   the experiment text, as run (the same text as in result.json)
      manifest.json        every part: the runs it holds, and per table its file, rows,
                           bytes and SHA-256 (checked on every read)
      runs/part-FIRST-LAST.parquet    one row per connection per run, runs FIRST..LAST
      ports/part-FIRST-LAST.parquet   one row per switch output port per run (cells in/out/
                                      lost, peak, CLP=1 cells lost at the CLP-1 threshold,
                                      cells tagged by a UPC, cells lost by cause: overflow,
                                      PPD, EPD, policed; PDUs damaged)
      traces/...           (--trace) one row per trace line: run, connection, line, and the
                           segment as data (t_s, from_sender, flags, seq, len, ack, win, reason)
      policers/...         one row per UPC policer per run: its trunk, cells judged,
                           conforming and not, whether the stream met its contract
      cwnd/...             (--series) one row per sample of a TCP sender's congestion state:
                           run, connection, t_s, cwnd, ssthresh, flight (bytes; a
                           sample whenever one of them changed; --engine real: TCP_INFO
                           at a fixed interval, with srtt_us)
      queue/...            (--series) one row per sample of a switch port's occupancy: run,
                           port, host, t_s, cells (just after accepted arrivals, and
                           0 when the buffer empties)
      .incoming/           where a part is written before it is renamed into place, and the
                           journal of finished runs not yet in a part; no reader looks here

A run is one point of the sweep × one replication (run = point × replications +
replication). Runs are gathered in run order into parts of up to ``PART_RUNS`` runs
or ``PART_ROWS`` rows (whichever comes first, so the cut depends only on the
results: the same seed gives the same files at any worker count). Each finished run
is appended at once to the journal, so a killed sweep loses no finished run; an
interrupted one (Ctrl-C, SIGTERM, an error) puts every finished run in parts before
it exits. ``--resume`` reads the journal back, checks every part against the manifest,
sets aside whatever is damaged or does not belong (into ``.damaged/``), takes apart
the parts an interruption cut short (so the parts are those of an uninterrupted run,
byte for byte) and re-runs exactly the runs that are missing. The parts have one fixed schema, so
``pandas.read_parquet("RESULT/runs")``, ``polars.read_parquet("RESULT/runs/*.parquet")``
and DuckDB's ``read_parquet('RESULT/runs/*.parquet')`` read them as one table.

A sweep on a cluster (``cluster``) hands over a batch of runs at once
(``write_batch``): their rows as Arrow IPC, one stream per table, journalled as one
line (the streams in base64) and kept columnar until a part is written; parts are cut
by run as always, so their bytes do not depend on the batches.

``format_version`` 1 is what ``cellbench reproduce --out`` once wrote (result.json
and runs.csv), 2 a part per run without a manifest; both are still read (version 2
checked as far as it can be: every file a part of a run of the result holding that
run's rows, none missing from a complete result), and ``--resume`` puts a version 2
result's runs in parts (version 3), keeps its files in ``.format2/`` and extends it. A
newer version than ``FORMAT_VERSION`` is refused. Adding a column to ``ROW_COLUMNS``
(or another table) keeps the version: readers fill a column that older parts lack with
nulls (``limited_by`` and ``limit_evidence``, what bound each connection, came so, and
every simulator field the vocabulary added), and older readers carry a newer column
along. The simulator's columns come from its vocabulary (``cellbench.vocab``), in the
order they were first stored; the other engines' are groups (``columns.ColumnGroup``)
that each engine declares as its ``Engine.columns`` and the engine table
(``cellbench.engines.table``) hands to ``columns``, which puts them together.

The package, one idea a module:

- ``layout``: the format's names and versions, bounds, digests and errors;
- ``columns``: the runs table's columns, engine by engine;
- ``tables``: every table's columns (the runs table's with the sweep's at its end);
- ``sim_rows``: a simulator run's output as rows of those tables;
- ``arrow``: rows as Arrow tables in the stored schema, a cluster's batches as IPC;
- ``gather``: finished runs in run order, cut into parts;
- ``store``: writing (``ResultDir``, ``MemoryResult``), the journal and ``--resume``;
- ``check``: result.json, the manifest and every part checked, the damage named;
- ``result``: ``Result``, its frames and its summary;
- ``read``: ``load``, a stored result read and checked as it is read;
- ``contention``: many connections through one congested port, as a result shows them.
"""

from cellbench.experiment.results.arrow import to_ipc
from cellbench.experiment.results.check import Damage, read_meta, resume_command
from cellbench.experiment.results.columns import IDENTITY_COLUMNS, ROW_COLUMNS, runs_column
from cellbench.experiment.results.gather import RunSet
from cellbench.experiment.results.layout import (
    DAMAGED,
    FORMAT,
    FORMAT_VERSION,
    INCOMING,
    LEGACY_KEPT,
    MANIFEST_FORMAT,
    MAX_JSON_BYTES,
    MAX_PART_BYTES,
    ResultDamage,
    ResultError,
)
from cellbench.experiment.results.read import load, stored_runs
from cellbench.experiment.results.result import SUMMARY_COLUMNS, Result, most_common_limit
from cellbench.experiment.results.sim_rows import cycle_columns, simulator_measures, trace_rows
from cellbench.experiment.results.store import PART_ROWS, PART_RUNS, MemoryResult, ResultDir
from cellbench.experiment.results.tables import (
    ACR_COLUMNS,
    CWND_COLUMNS,
    PARTS,
    POLICER_COLUMNS,
    PORT_COLUMNS,
    QUEUE_COLUMNS,
    TABLES,
    TRACE_COLUMNS,
    param_columns,
    record_columns,
)

__all__ = [
    "ACR_COLUMNS",
    "CWND_COLUMNS",
    "DAMAGED",
    "FORMAT",
    "FORMAT_VERSION",
    "IDENTITY_COLUMNS",
    "INCOMING",
    "LEGACY_KEPT",
    "MANIFEST_FORMAT",
    "MAX_JSON_BYTES",
    "MAX_PART_BYTES",
    "PARTS",
    "PART_ROWS",
    "PART_RUNS",
    "POLICER_COLUMNS",
    "PORT_COLUMNS",
    "QUEUE_COLUMNS",
    "ROW_COLUMNS",
    "SUMMARY_COLUMNS",
    "TABLES",
    "TRACE_COLUMNS",
    "Damage",
    "MemoryResult",
    "Result",
    "ResultDamage",
    "ResultDir",
    "ResultError",
    "RunSet",
    "cycle_columns",
    "load",
    "most_common_limit",
    "param_columns",
    "read_meta",
    "record_columns",
    "resume_command",
    "runs_column",
    "simulator_measures",
    "stored_runs",
    "to_ipc",
    "trace_rows",
]
