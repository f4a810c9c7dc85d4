"""What the emulator's rows add to the runs table (``results.columns.ColumnGroup``),
besides the real engine's groups, which its agents fill (``real.columns``)."""

from __future__ import annotations

from cellbench.experiment.results.columns import ColumnGroup

#: The namespace kernel's congestion control and retransmissions (TCP_INFO), and the
#: emulator's lateness (actual minus ideal delivery of each PDU, over the run);
#: real_time: its p99 within one cell time of the slowest link. First stored after the
#: real engine's evidence.
EMU = ColumnGroup(
    "emu",
    (
        ("kernel_cc", "string"),
        ("retransmits", "int64"),
        ("lateness_p50_us", "float64"),
        ("lateness_p99_us", "float64"),
        ("lateness_max_us", "float64"),
        ("real_time", "bool"),
        ("emu_cpu_seconds", "float64"),
        # How long the emulator's TUN writes took (the receiving kernel's input run on
        # its thread): what delays the deliveries after each, so what bounds the
        # lateness. Of the emulator's run, the seconds it spent reading its TUN devices
        # (and encapsulating) and writing them: the datagrams' own cost (the rest of
        # emu_cpu_seconds is its spin before each cell event).
        ("emu_read_seconds", "float64"),
        ("emu_write_seconds", "float64"),
        ("emu_write_p50_us", "float64"),
        ("emu_write_p99_us", "float64"),
        # PDUs the emulator timed, and those later than one cell time of the slowest
        # link by what its thread was doing when each fell due (writing another PDU,
        # reading a TUN device, sleeping past its wake-up, or anything else).
        ("emu_pdus_timed", "int64"),
        ("emu_late_write", "int64"),
        ("emu_late_read", "int64"),
        ("emu_late_sleep", "int64"),
        ("emu_late_other", "int64"),
        # How often the kernel took the CPU from the emulator's thread (involuntary
        # context switches): the late PDUs that waited on none of the above.
        ("emu_preemptions", "int64"),
        # The transmitter's transmit queue (emu/ifq.rs): the emulator reads its TUN
        # device only while the modelled adapter's interface queue has room, as a Linux
        # driver stops its queue; meanwhile its kernel holds up to txqueuelen packets
        # and drops beyond. The packets it dropped at its TUN device (tx_dropped: the
        # whole interface's, every connection that host sends), and the seconds its
        # queue was stopped.
        ("sender_tx_dropped", "int64"),
        ("sender_queue_stopped_s", "float64"),
    ),
    after="pacing_realtime",
)

#: The window in force and the retransmission timeouts, as the namespaces' kernels ran
#: them (``kernel``): the largest congestion window and advertised window the sender's
#: TCP_INFO showed while it wrote and drained, the send buffer autotuning grew
#: (SO_SNDBUF's largest) and the receive buffer it reached (SO_RCVBUF at the end, and
#: tcpi_rcv_space, the per-round-trip estimate it grew from); the RTO recoveries the
#: timeouts began and the time spent in them (TCP_INFO, Linux 6.7+); how many TCP_INFO
#: reads the peaks are of; the transmitter's namespace's retransmission timeouts
#: (TcpExt TCPTimeouts: every connection of that host, as ``sender_tx_dropped``), which
#: stand in for ``timeouts`` before Linux 6.7. With the simulator's ``timeouts``,
#: ``min_rtt_s`` and ``peak_flight_bytes``, which the emulator fills from the same
#: reads. First stored after every other column.
EMU_KERNEL = ColumnGroup(
    "emu-kernel",
    (
        ("peak_cwnd_bytes", "int64"),
        ("peak_adv_window_bytes", "int64"),
        ("kernel_sndbuf", "int64"),
        ("kernel_rcvbuf", "int64"),
        ("rcv_space_bytes", "int64"),
        ("rto_recoveries", "int64"),
        ("rto_recovery_s", "float64"),
        ("window_samples", "int64"),
        ("sender_ns_timeouts", "int64"),
    ),
    after="receiver_read_seconds",
)
