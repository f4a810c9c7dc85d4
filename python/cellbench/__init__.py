"""cellbench: a laboratory for TCP/IP performance over ATM networks.

The heavy lifting is in the Rust core (``cellbench._native``); this package holds
the command line, the experiment language, the engines and the result formats.

- ``cellbench.wire``: byte-exact ATM cells, AAL5, RFC 1483, pcap.
- ``cellbench.calc``: closed-form calculators (layer bandwidth, bursts, GCRA, windows).
- ``cellbench.reproduce_study(name, **options)``: a classic study on the simulator, as a DataFrame.
- ``cellbench.run(path_or_text, **overrides)``: an experiment, as a result with ``.to_pandas()``.
"""

from cellbench import _native, calc, wire
from cellbench.engines.sim.api import run
from cellbench.reproduce import reproduce_study

__version__: str = _native.__version__

__all__ = ["__version__", "calc", "reproduce_study", "run", "wire"]
