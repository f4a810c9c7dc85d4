"""The experiment object: connections, their traffic and timing, on a testbed.

A NetSpec ``test`` is one end of a connection. A transmitter test (type ``full``,
``burst``, ``burstq``, or netperf's request/response ``rr``) and the ``sink`` test
whose ``own`` address is the transmitter's ``peer`` (and whose ``peer`` is the
transmitter's ``own``) make one connection. ``protocol = tcp (window=W)`` sets both
socket buffers to W; ``sndbuf``/``rcvbuf`` set one. The connection takes the
transmitter's SO_SNDBUF and the sink's SO_RCVBUF.

Timing. An experiment is one simulation on one timeline. ``cluster { }`` and
``parallel { }`` start their children together; ``serial { }`` starts each child
when every connection of the previous one has ended (both applications finished:
the transmitter's last write and close, the sink's last read), at that simulated
instant, on the network as it is then: its queues, the hosts' timers and the
connections still running beside it. So a step's start is an event of the run,
not a time known in advance (a ``full (nbytes=...)`` transfer ends only when it
has run; one with a duration ends once its data has drained); the simulator is
told, per connection, which connections it waits for (``after``), and reports
when each started and ended (``start_s``, ``end_s``). A sink ends with its
connection: a step holding only sinks does not delay the next one.

The package, one idea a module:

- ``limits``: the simulator's defaults and limits the file is checked against;
- ``records``: the records (Traffic, Endpoint, Connection, Group, Experiment) and the
  run spec each turns into;
- ``traffic``: a test's ``type = ...`` read into its Traffic;
- ``endpoints``: a ``test { }`` block read into an Endpoint;
- ``timing``: the block tree turned into each test's ``after`` and start;
- ``checks``: a connection checked against what the simulator would refuse or cut;
- ``hosts``: host blocks no test runs on, and Ethernet interface names;
- ``tester``: the cell tester's block and place;
- ``refusals``: the simulator's own checks, its refusals mapped onto the file;
- ``builder``: a parsed file made into its Experiment (``build``).

Each imports only modules listed before it, never the package itself; the names the
rest of cellbench uses are re-exported here. Numbers and flags are read through
``experiment.values``, below this package and the testbed's.
"""

from __future__ import annotations

from cellbench.experiment.model.builder import build
from cellbench.experiment.model.checks import clamp_sockbuf
from cellbench.experiment.model.endpoints import PROTOCOL_KEYS, TEST_KEYS
from cellbench.experiment.model.hosts import MISSPELT, check_host_blocks
from cellbench.experiment.model.limits import (
    CELL_PAYLOAD_SHARE,
    DEFAULT_BLOCKSIZE,
    DEFAULT_SOCKBUF,
    MAX_BLOCK,
    MAX_DATAGRAM,
    MAX_PERIOD_US,
    SEED_MAX,
    TIME_LIMIT_S,
)
from cellbench.experiment.model.records import (
    Connection,
    Distribution,
    Endpoint,
    Experiment,
    Group,
    Traffic,
    host_spec,
)
from cellbench.experiment.model.refusals import check_with_engine
from cellbench.experiment.model.tester import check_tester
from cellbench.experiment.model.traffic import APP_MODELS, TRAFFIC_KEYS, TRAFFIC_LATER
from cellbench.experiment.values import U32_MAX, U64_MAX

__all__ = [
    "APP_MODELS",
    "CELL_PAYLOAD_SHARE",
    "DEFAULT_BLOCKSIZE",
    "DEFAULT_SOCKBUF",
    "MAX_BLOCK",
    "MAX_DATAGRAM",
    "MAX_PERIOD_US",
    "MISSPELT",
    "PROTOCOL_KEYS",
    "SEED_MAX",
    "TEST_KEYS",
    "TIME_LIMIT_S",
    "TRAFFIC_KEYS",
    "TRAFFIC_LATER",
    "U32_MAX",
    "U64_MAX",
    "Connection",
    "Distribution",
    "Endpoint",
    "Experiment",
    "Group",
    "Traffic",
    "build",
    "check_host_blocks",
    "check_tester",
    "check_with_engine",
    "clamp_sockbuf",
    "host_spec",
]
