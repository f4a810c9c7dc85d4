"""The runs table's columns, engine by engine: the identity and configuration every row
has, then each engine's measures (the simulator's from its vocabulary, the real
engine's and the emulator's groups, ``ENGINE_COLUMNS``, which each engine names as its
own) in the order they were first stored, so a part's schema only ever grows at its
end."""

from __future__ import annotations

from cellbench import vocab

#: What the runner knows of a row before its run: identity and configuration
#: (``engines.rows.connection_row``).
IDENTITY_COLUMNS: list[tuple[str, str]] = [
    ("run", "int64"),
    ("point", "int64"),
    ("replication", "int64"),
    ("seed", "int64"),
    ("connection", "int64"),
    ("test", "string"),
    ("transmitter", "string"),
    ("receiver", "string"),
    ("protocol", "string"),
    ("traffic", "string"),
    ("blocksize", "int64"),
    ("receiver_blocksize", "int64"),
    ("nbytes", "int64"),
    ("duration_s", "float64"),
    ("period_us", "float64"),
    ("offered_bps", "float64"),
    ("sndbuf", "int64"),
    ("rcvbuf", "int64"),
    ("nodelay", "bool"),
]


#: A vocabulary kind as an Arrow type name (a list of strings is stored joined).
_ARROW = {
    "int": "int64",
    "float": "float64",
    "bool": "bool",
    "string": "string",
    "strings": "string",
}
#: A lock-step cycle's field stored under another name than ``cycle_`` + its own
#: (the name lan-buffers' traced rows gave it first).
_CYCLE_NAMES = {"pattern_repeats": "cycle_repeats"}


def runs_column(field: dict) -> str | None:
    """The runs-table column that stores a simulator result field (``vocab``), or
    None where another table keeps it: a connection's and its run's fields under their
    own names, its lock-step cycle's as ``cycle_*``, the run's cell tester's as
    ``tester_*``, and of the policers' verdicts whether all met their contracts
    (``met_contract``; each policer's counts are the policers table's)."""
    if field["kind"] in vocab.NESTED_KINDS or field["name"] == "trace":
        return None
    record, name = field["record"], field["name"]
    if record in ("connection", "run"):
        return name
    if record == "lockstep_cycle":
        return _CYCLE_NAMES.get(name, f"cycle_{name}")
    if record == "cells":
        return f"tester_{name}"
    if record == "policer" and name == "met_contract":
        return name
    return None


def _simulator_columns() -> list[tuple[str, str]]:
    """The runs columns of the simulator's measures, in the vocabulary's order."""
    taken = {n for n, _ in IDENTITY_COLUMNS}
    out = []
    for f in vocab.RESULT_FIELDS:
        name = runs_column(f)
        if name is not None and name not in taken:
            out.append((name, _ARROW[f["kind"]]))
    return out


# --- the engines' groups: each engine names those it fills (``Engine.columns``;
# tests/test_engines.py holds the two to each other) -----------------------------

#: The engine that ran the row (null: the simulator); the real engine's clock and pacing.
_REAL_CLOCK: list[tuple[str, str]] = [
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
_REAL: list[tuple[str, str]] = [
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

#: The namespace kernel's congestion control and retransmissions (TCP_INFO), and the
#: emulator's lateness (actual minus ideal delivery of each PDU, over the run);
#: real_time: its p99 within one cell time of the slowest link.
_EMU: list[tuple[str, str]] = [
    ("kernel_cc", "string"),
    ("retransmits", "int64"),
    ("lateness_p50_us", "float64"),
    ("lateness_p99_us", "float64"),
    ("lateness_max_us", "float64"),
    ("real_time", "bool"),
    ("emu_cpu_seconds", "float64"),
    # How long the emulator's TUN writes took (the receiving kernel's input run on its
    # thread): what delays the deliveries after each, so what bounds the lateness.
    # Of the emulator's run, the seconds it spent reading its TUN devices (and
    # encapsulating) and writing them: the datagrams' own cost (the rest of
    # emu_cpu_seconds is its spin before each cell event).
    ("emu_read_seconds", "float64"),
    ("emu_write_seconds", "float64"),
    ("emu_write_p50_us", "float64"),
    ("emu_write_p99_us", "float64"),
    # PDUs the emulator timed, and those later than one cell time of the slowest link
    # by what its thread was doing when each fell due (writing another PDU, reading a
    # TUN device, sleeping past its wake-up, or anything else).
    ("emu_pdus_timed", "int64"),
    ("emu_late_write", "int64"),
    ("emu_late_read", "int64"),
    ("emu_late_sleep", "int64"),
    ("emu_late_other", "int64"),
    # How often the kernel took the CPU from the emulator's thread (involuntary
    # context switches): the late PDUs that waited on none of the above.
    ("emu_preemptions", "int64"),
]

#: Each engine's own measures by group name (beside the identity and configuration
#: every engine fills, and the simulator's vocabulary): what an engine declares as its
#: ``columns``. The store is below every engine, so it keeps them and the engines name
#: them, not the other way round.
ENGINE_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "real-clock": _REAL_CLOCK,
    "real": _REAL,
    "emu": _EMU,
}


def _row_columns() -> list[tuple[str, str]]:
    """Every runs column in the order they were first stored, so that a part's schema
    only ever grows at its end: identity and configuration, the simulator's measures
    up to request/response (which came after the real engine's clock), the real
    engine's and the emulator's measures, then every simulator field stored since."""
    sim = _simulator_columns()
    names = [n for n, _ in sim]
    rr, since = names.index("transactions"), names.index("transaction_rate") + 1
    return [
        *IDENTITY_COLUMNS,
        *sim[:rr],
        *ENGINE_COLUMNS["real-clock"],
        *sim[rr:since],
        *ENGINE_COLUMNS["real"],
        *ENGINE_COLUMNS["emu"],
        *sim[since:],
    ]


#: Columns of every row, in order: identity and configuration, then what the engines
#: measure; (name, arrow type name). A measure the engine does not report is null.
ROW_COLUMNS: list[tuple[str, str]] = _row_columns()
