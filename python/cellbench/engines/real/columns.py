"""The columns the real engine adds to a result's runs table (``experiment.results``
puts them where they were first stored; the emulator's agents fill them too)."""

#: The engine that ran the row (null: the simulator); the real engine's clock and pacing.
CLOCK_COLUMNS: list[tuple[str, str]] = [
    ("engine", "string"),
    ("started_s", "float64"),
    ("ended_s", "float64"),
    ("late_blocks", "int64"),
    ("timing_error_p99_us", "float64"),
]

#: The real engine's evidence: the kernel's TCP (congestion control that ran, MSS,
#: TCP_INFO's busy and limited times), each host's CPU over the connection (busy
#: share of all CPUs, null under one 10 ms clock tick; the agent's own CPU, 1.0 =
#: one core) and the interface the connection used (its counters over the
#: connection: every connection on it counts; for UDP, datagrams the receiving host
#: dropped at a full socket buffer), and what the kernel refused (notes).
MEASURE_COLUMNS: list[tuple[str, str]] = [
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
]
