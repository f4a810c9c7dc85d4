"""The simulator's defaults and limits an experiment is checked against.

Socket buffers, block size and read size when a test sets none, a run's simulated-time limit,
the largest write, datagram and period come from the simulator's vocabulary
(``vocab``); the largest seed and a cell's payload share are stated here, each with
its reason (the integer widths in ``experiment.values``, which reads every number).
"""

from __future__ import annotations

from cellbench import vocab

#: Socket buffers when a test sets none: the largest SunOS 4.1.1 accepts (lan-buffers'
#: default), the block size, the sink's read size, and the simulated-time limit of one
#: simulation (seconds): the simulator's defaults (``vocab.DEFAULTS``).
DEFAULT_SOCKBUF: int = vocab.DEFAULTS["connection"]["sndbuf"]
DEFAULT_BLOCKSIZE = int(vocab.DEFAULTS["traffic"]["blocksize"])
#: What a sink reads at a time when its test sets no block size (ttcp -r's buffer length).
DEFAULT_READ: int = vocab.DEFAULTS["connection"]["receiver_blocksize"]
TIME_LIMIT_S: float = vocab.DEFAULTS["run"]["time_limit_s"]
#: The simulator's limits (``vocab.LIMITS``) for what does not pass through its checks:
#: the largest TCP write (a drawn block size is capped by it) and UDP datagram (what
#: --engine real's agents write; ttcp/netperf's options), the longest block period
#: (µs: the longest time a spec may give). An experiment's values are the core's to
#: refuse, at their setting (``model.refusals``).
MAX_BLOCK: int = vocab.LIMITS["max_block_bytes"]
MAX_DATAGRAM: int = vocab.LIMITS["max_datagram_bytes"]
MAX_PERIOD_US: float = vocab.spec_range("traffic", "period_us")[1]
#: The longest time a spec may give, µs (a tester's cell slot).
MAX_TIME_US: float = vocab.LIMITS["max_seconds"] * 1e6
#: Linux's TCP_MAXSEG range, what --engine real's kernels take (include/net/tcp.h:
#: TCP_MIN_MSS 88 to MAX_TCP_WINDOW 32767); the simulator's MSS is the MTU's.
TCP_MIN_MSS = 88
MAX_TCP_WINDOW = 32767
#: The largest master seed: the simulator takes a u64, but a result stores the seed in
#: an int64 column (as pandas, DuckDB and polars read integers), so 2^63-1; a larger
#: one would fail only when the first part is written, after the runs.
SEED_MAX = (1 << 63) - 1
#: An ATM cell carries 48 bytes of its 53: no transfer moves data faster than this
#: share of its link's cell rate.
CELL_PAYLOAD_SHARE = 48 / 53
