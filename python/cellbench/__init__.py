"""cellbench: a laboratory for TCP/IP performance over ATM networks.

The heavy lifting is in the Rust core (``cellbench._native``); this package holds
the command line, the experiment runners and the result formats.
"""

from cellbench import _native

__version__: str = _native.__version__

__all__ = ["__version__"]

from cellbench import wire  # noqa: E402  (byte-exact ATM cells, AAL5, pcap)

__all__ += ["wire"]

from cellbench import calc  # noqa: E402  (closed-form calculators)

__all__ += ["calc"]
