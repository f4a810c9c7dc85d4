"""What the real engine's rows add to the runs table (``results.columns.ColumnGroup``):
its clock and pacing, and its evidence. The emulator runs the real engine's agents, so it
fills both too."""

from __future__ import annotations

from cellbench.experiment.results.columns import ColumnGroup

#: The engine that ran the row (null: the simulator); the real engine's clock and pacing.
#: First stored before the simulator's request/response measures.
REAL_CLOCK = ColumnGroup(
    "real-clock",
    (
        ("engine", "string"),
        ("started_s", "float64"),
        ("ended_s", "float64"),
        ("late_blocks", "int64"),
        ("timing_error_p99_us", "float64"),
    ),
    after="met_contract",
)

#: The real engine's evidence: the kernel's TCP (congestion control that ran, MSS,
#: TCP_INFO's busy and limited times), each host's CPU over the connection (busy
#: share of all CPUs, null under one 10 ms clock tick; the agent's own CPU, 1.0 =
#: one core) and the interface the connection used (its counters over the
#: connection: every connection on it counts; for UDP, datagrams the receiving host
#: dropped at a full socket buffer), and what the kernel refused (notes).
REAL = ColumnGroup(
    "real",
    (
        ("congestion", "string"),
        ("mss", "int64"),
        ("tcp_busy_s", "float64"),
        ("rwnd_limited_s", "float64"),
        ("sndbuf_limited_s", "float64"),
        ("tx_cpu_busy", "float64"),
        ("rx_cpu_busy", "float64"),
        ("tx_agent_cpu", "float64"),
        ("rx_agent_cpu", "float64"),
        ("tx_interface", "string"),
        ("tx_if_bytes", "int64"),
        ("tx_if_drops", "int64"),
        ("rx_interface", "string"),
        ("rx_if_bytes", "int64"),
        ("rx_if_drops", "int64"),
        ("rx_udp_rcvbuf_errors", "int64"),
        ("notes", "string"),
        ("timing_error_p50_us", "float64"),
        ("timing_error_max_us", "float64"),
        ("pacing_realtime", "bool"),
    ),
    after="transaction_rate",
)

#: What the receiver's interval (``receiver_seconds``, ``goodput_bps``) measured, as
#: ttcp -r times: ``receiver_clock`` ``accept`` over TCP (ttcp.c's prep_timer() follows
#: accept(); netperf's recv_tcp_stream starts there too), ``first datagram`` over UDP;
#: when it started on the run's clock (``receiver_started_s``, as ``started_s``), and
#: the reads' own span, first read to last (``receiver_read_seconds``: the receiver's
#: interval before the sink timed from accept). A group of its own, after every
#: column, so that a stored part's schema only grows at its end.
REAL_RECEIVER = ColumnGroup(
    "real-receiver",
    (
        ("receiver_clock", "string"),
        ("receiver_started_s", "float64"),
        ("receiver_read_seconds", "float64"),
    ),
)
