"""cellbench: a laboratory for TCP/IP performance over ATM networks.

The heavy lifting is in the Rust core (``cellbench._native``); this package holds
the command line, the experiment language, the engines and the result formats.

- ``cellbench.wire``: byte-exact ATM cells, AAL5, RFC 1483, pcap.
- ``cellbench.calc``: closed-form calculators (layer bandwidth, bursts, GCRA, windows).
- ``cellbench.reproduce(name, parts=..., **options)``: a classic study (``cellbench reproduce
  NAME``), its rows as a DataFrame; ``cellbench.reproduce.REGISTRY`` lists the studies.
- ``cellbench.run(path_or_text, **overrides)``: an experiment, as a result with ``.to_pandas()``.
"""

from cellbench import _native, calc, reproduce, wire
from cellbench.engines import table as _engine_table  # noqa: F401 (see below)
from cellbench.engines.sim.api import run

# The engine table, imported, has given the store every engine's column groups
# (``engines.table.give_the_store_its_columns``), whatever part of cellbench one uses.

__version__: str = _native.__version__

__all__ = ["__version__", "calc", "reproduce", "run", "wire"]
