"""One emulated run: namespaces, the emulator, the real engine's agents, the rows.

The agents are the real engine's (``cellbench.engines.real.agents``): each runs on a thread
that has entered its host's namespace, so its sockets are that kernel's. The block
tree is kept as on real hosts (``serial { }`` starts a child when the previous one
has ended, on the real clock). Rows are the real engine's (``controller.rows``) plus
what the emulated network measured: cells lost, policed and tagged per connection,
per port cells in/out/lost (by cause) and peak occupancy, and the emulator's lateness;
of a TCP connection, the window its kernels ran and their retransmission timeouts
(``kernel``), which the simulator's window and loss rules read; with ``--series``
each port's occupancy (the network's samples, as the simulator's) and each TCP
sender's cwnd (TCP_INFO, as the real engine's).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cellbench import vocab
from cellbench.engines.base import Tables
from cellbench.engines.emu import kernel, netns
from cellbench.engines.real import agents, controller
from cellbench.engines.real import plan as rplan
from cellbench.engines.rows import ident, port_rows
from cellbench.engines.walk import wait_all, walk
from cellbench.errors import EngineError, UsageError
from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.results import contention

#: A UDP sink's wait after its source's duration (a datagram still in flight
#: arrives within milliseconds; a TCP sink waits the real engine's DRAIN_S).
UDP_DRAIN_S = 3.0
#: Time from starting the agents of a group to their agreed start.
START_MARGIN_S = 0.3
#: Addresses given to hosts the testbed gives none (they never leave the namespaces).
AUTO_NET = "10.213.0.{}"
#: --stall-timeout's default, s: a TCP connection that delivers nothing for this long
#: ends (completed = false). A path that discards every segment leaves the kernel
#: retransmitting with exponential backoff up to TCP_RTO_MAX, 120 s
#: (include/net/tcp.h), for up to tcp_retries2 = 15 tries (about 15 minutes,
#: Documentation/networking/ip-sysctl.rst); 30 s is several of the emulated paths'
#: round trips' worth of backoffs, with no claim beyond that.
STALL_TIMEOUT_S = 30.0
#: Seconds between the progress lines of a connection still running.
PROGRESS_S = 5.0
#: If set, a file each run's whole emulator report is appended to as one JSON line:
#: where the loop's time went, its wake-ups and the lateness histogram, which the
#: stored rows summarise (``scripts/bench_emu.py`` reads it).
REPORT_ENV = "CELLBENCH_EMU_REPORT"
#: Testbed host settings that only the simulator reads: hosts are real kernels here.
SIM_ONLY_HOST_KEYS = ("profile", "flavour")


class EmuError(EngineError):
    """An agent or the emulator failing: one line, naming the connection."""


def addresses(exp) -> dict[str, str]:
    """Every host's address: the testbed's, else one of AUTO_NET."""
    return {h.name: h.address or AUTO_NET.format(i + 1) for i, h in enumerate(exp.hosts)}


def notes(exp) -> list[str]:
    """One line per simulator-only setting the emulator ignores."""
    hosts = ", ".join(f"{h.name} ({h.profile}, {h.flavour})" for h in exp.hosts)
    out = [
        f"--engine emu: host profile and TCP flavour are ignored, hosts are this machine's "
        f"Linux kernel in namespaces: {hosts} (set kernel_cc, kernel_sack, ... instead)"
    ]
    ether = [h.name for h in exp.hosts if h.ethernet is not None]
    if ether:
        out.append(
            f"--engine emu: the Ethernet interfaces of {', '.join(ether)} are ignored: the "
            "emulator carries cells only (frame links run on the simulator, --engine sim)"
        )
    return out


def check_frames(exp) -> None:
    """A connection over an Ethernet interface is refused: the emulator drives the ATM
    network only (docs/mechanisms.md, frame links)."""
    for c in exp.connections:
        if c.interface == "ethernet":
            raise ExperimentError(
                c.pos,
                f"test {c.name} runs over the hosts' Ethernet interfaces: the emulator "
                "carries cells only; run it on the simulator (--engine sim)",
            )


def pcap_target(arg: str | None, spec: dict, run: int, runs_total: int) -> dict | None:
    """``--pcap PORT=FILE`` for one run: the port's number (PORT is its name in the
    ports table, e.g. a host's name for the port to it, or its number) and the file
    (FILE-runN.EXT when there is more than one run)."""
    if arg is None:
        return None
    from cellbench import _native

    name, sep, path = arg.partition("=")
    if not sep or not name or not path:
        raise UsageError(f"--pcap {arg}: expected PORT=FILE (a port of the ports table)")
    labels = _native.port_labels(spec)
    if name in labels:
        port = labels.index(name)
    elif name.isdigit() and int(name) < len(labels):
        port = int(name)
    else:
        have = ", ".join(f"{i} ({x})" for i, x in enumerate(labels))
        raise UsageError(f"--pcap {arg}: no port {name!r}; the ports are {have}")
    if runs_total > 1:
        p = Path(path)
        path = str(p.with_name(f"{p.stem}-run{run}{p.suffix}"))
    return {"port": port, "path": os.path.abspath(path), "name": labels[port]}


@dataclass
class _Run:
    """What ``controller.rows`` reads of a run: the experiment, a report pair per
    connection and each host's clock offset (one clock here)."""

    exp: rplan.RealExperiment
    offsets: dict[str, float]
    group: str = field(default_factory=lambda: uuid.uuid4().hex)
    reports: dict[int, tuple[dict, dict, float]] = field(default_factory=dict)
    #: Host -> its testbed kernel_cc, if it sets one.
    kernel_cc: dict[str, str] = field(default_factory=dict)
    #: The simulator's seed and replication: random-rate draws follow them.
    draws: dict = field(default_factory=dict)
    #: --series: the senders sample TCP_INFO (the real engine's cwnd series).
    series: bool = False
    #: A TCP sink's wait after its timed source's end (None: the real engine's DRAIN_S).
    drain_s: float | None = None
    #: A TCP connection delivering nothing this long ends (None or 0: never).
    stall_s: float | None = STALL_TIMEOUT_S
    lock: threading.Lock = field(default_factory=threading.Lock)


def run_one(
    plan,
    task,
    rexp: rplan.RealExperiment,
    *,
    drain_s: float | None = None,
    pcap: str | None = None,
    stall_s: float | None = STALL_TIMEOUT_S,
) -> Tables:
    """One run, start to end, everything it made removed: the stored tables (with the
    line saying where --pcap's cells went).
    ``drain_s``: a sink's wait after a timed source's end (None: the real engine's);
    ``pcap``: ``--pcap PORT=FILE``, the cells leaving that port into FILE;
    ``stall_s``: ``--stall-timeout``, a TCP connection delivering nothing this long
    ends as not completed (None or 0: never)."""
    from cellbench import _native

    exp = plan.experiments[task.point]
    spec = task.spec
    hosts = [h["name"] for h in spec["hosts"]]
    by_name = {h.name: h for h in exp.hosts}
    run = _Run(rexp, {h: 0.0 for h in rexp.addresses}, series=plan.series)
    run.draws = {"seed": spec["seed"], "replication": spec["replication"]}
    run.drain_s = drain_s
    run.stall_s = stall_s or None
    run.kernel_cc = {h.name: h.kernel["kernel_cc"] for h in exp.hosts if "kernel_cc" in h.kernel}
    cpu, rps_cpus = netns.cpu_layout()
    tap = pcap_target(pcap, spec, task.run, plan.runs_total)
    with netns.Namespaces(len(hosts)) as ns:
        emu = _native.Emulator(
            {
                "run": spec,
                "hosts": [
                    {"netns": ns.path(i), "tun": netns.TUN, "address": rexp.addresses[h]}
                    for i, h in enumerate(hosts)
                ],
                "ports": [rc.port for rc in rexp.connections],
                # The loop's CPU; every host's input is steered off it (below).
                "cpu": cpu,
            }
            | ({"pcap": {"port": tap["port"], "path": tap["path"]}} if tap else {})
        )
        try:
            for i, h in enumerate(hosts):
                ns.configure(i, rexp.addresses[h], exp.testbed.mtu, by_name[h].kernel)
                if rps_cpus is not None:
                    ns.steer_input(i, rps_cpus)
            where = {h: ns.path(i) for i, h in enumerate(hosts)}
            emu.start()
            origin = time.time() + START_MARGIN_S
            try:
                walk(rexp.root, origin, _Starts(run, where))
            except KeyboardInterrupt:
                _native.real_stop(run.group)
                raise
            # Every agent has ended: what the senders' kernels dropped at their TUN
            # devices while the emulator held their reads back (emu/ifq.rs), read
            # before the devices close with the emulator.
            tx_dropped = [ns.tx_dropped(i) for i in range(len(hosts))]
            ns_timeouts = [ns.tcp_timeouts(i) for i in range(len(hosts))]
            report = emu.stop()
        finally:
            emu.close()
    if os.environ.get(REPORT_ENV):
        with open(os.environ[REPORT_ENV], "a") as f:
            whole = {k: v for k, v in report.items() if k not in ("connections", "ports")}
            f.write(json.dumps(whole) + "\n")
    if report.get("pcap_error"):
        raise EmuError(f"--pcap {tap['path']}: {report['pcap_error']}")
    rows = controller.rows(plan, task, run, origin)
    # The network's time 0 is the emulator's start; the run's is the agents' origin.
    shift = report["clock_start_unix"] - origin
    acr = []
    for row, rc, c in zip(rows, rexp.connections, report["connections"]):
        sent, got = run.reports[rc.conn.index][:2]
        tx = hosts.index(rc.conn.transmitter)
        settings = by_name[rc.conn.transmitter].kernel
        data, ack = c["data"], c["ack"]
        both = {k: data[k] + ack[k] for k in data}
        row |= {
            "engine": "emu",
            "kernel_cc": sent.get("congestion") or settings.get("kernel_cc"),
            "cells_lost": both["cells_lost"],
            "cells_policed": both["cells_policed"],
            "cells_tagged": both["cells_tagged"],
            "cells_lost_clp": both["cells_lost_clp"],
            "pdus_dropped_at_adapter": both["pdus_dropped_at_adapter"],
            # Each end's adapter: the data circuit's source is the sender's.
            "pdus_dropped_at_sender_adapter": data["pdus_dropped_at_adapter"],
            "pdus_dropped_at_receiver_adapter": ack["pdus_dropped_at_adapter"],
            "data_pdus_sent": data["pdus_sent"],
            "data_pdus_lost": data["pdus_lost"],
            "lateness_p50_us": report["lateness_us"]["p50"],
            "lateness_p99_us": report["lateness_us"]["p99"],
            "lateness_max_us": report["lateness_us"]["max"],
            "real_time": report["real_time"],
            "emu_cpu_seconds": report["cpu_seconds"],
            "emu_read_seconds": report["read_seconds"],
            "emu_write_seconds": report["write_seconds"],
            "emu_write_p50_us": report["write_us"]["p50"],
            "emu_write_p99_us": report["write_us"]["p99"],
            "emu_pdus_timed": report["pdus_timed"],
            "emu_preemptions": report["preemptions"],
            **{f"emu_late_{k}": n for k, n in report["late_pdus"].items()},
            "sender_tx_dropped": tx_dropped[tx],
            "sender_queue_stopped_s": report["host_queues"][tx]["stopped_seconds"],
        }
        if rc.conn.protocol == "tcp":
            row |= kernel.columns(sent, got) | {"sender_ns_timeouts": ns_timeouts[tx]}
        if report["policers"]:
            row["met_contract"] = all(p["met_contract"] for p in report["policers"])
        # An ABR data circuit: the simulator's ABR fields, its ACR series with --series.
        abr = dict(c.get("abr") or {})
        series = abr.pop("acr_series", [])
        for t_s, bps in series if plan.series else []:
            acr.append(
                {**ident(task), "connection": rc.conn.index, "t_s": t_s + shift, "acr_bps": bps}
            )
        row.update(abr)
        # tx_dropped is the host's interface's: every connection it sends or receives on.
        sharing = sum(
            tx in (hosts.index(o.conn.transmitter), hosts.index(o.conn.receiver))
            for o in rexp.connections
        )
        queue = task.spec["hosts"][tx].get("tx_queue_pdus")
        if rc.conn.protocol == "tcp":
            kernel.namespace_timeouts(row, sharing)
        # The simulator's window rule comes after the bounds the real engine's
        # judgement applies first (a paced source's load, a saturated CPU, the
        # daemon's cap) and before its loss rules (sim/explain/classify.rs); a
        # paced source's load only where the window let through no less than it.
        held = row.get("limited_by")
        first = held in _BEFORE_WINDOW
        if held == vocab.APPLICATION and kernel.window_below_offer(row):
            first = False
        window = {} if first else kernel.window_limit(row)
        row.update(window or _network_limit(row, data, sharing, queue))
        if rc.conn.protocol == "udp" and not data["pdus_lost"]:
            row.update(_host_limit(row))
        notes = [*filter(None, [row.get("notes")]), *_timing_notes(report)]
        row["notes"] = "; ".join(notes) or None
    contention.name_capture(rows)
    ports, queue = port_rows(ident(task), report["ports"], shift)
    cwnd = controller.series(task, run, origin) if plan.series else []
    lines = []
    if tap:
        lines.append(
            f"cellbench: pcap: {report['pcap_cells']} cells leaving port {tap['port']} "
            f"({tap['name']}) in {tap['path']}"
        )
    return Tables(rows, ports=ports, cwnd=cwnd, queue=queue, acr=acr, lines=lines)


def _timing_notes(report: dict) -> list[str]:
    """What the emulator's loop ran without, as the row's notes: its lateness columns
    say how far the timing held, these say why it may not have."""
    out = []
    if not report["realtime_priority"]:
        out.append(
            "emu: the emulator's loop ran at ordinary priority (SCHED_FIFO refused: needs "
            "root or CAP_SYS_NICE), so other tasks delay its cell events on a loaded machine"
        )
    if report["cpu"] is None:
        out.append(
            "emu: the emulator's loop had no CPU of its own (one CPU, or pinning refused): "
            "the receivers' TCP input ran on its thread"
        )
    return out


#: The real engine's verdicts for bounds the simulator's rules try before the window.
_BEFORE_WINDOW = (vocab.APPLICATION, vocab.HOST_CPU, "max-rate")


def _network_limit(row: dict, data: dict, sharing: int = 1, queue: int | None = None) -> dict:
    """The simulator's word for a TCP connection whose kernel retransmitted or timed
    out (TCP_INFO), in the simulator's order (sim/explain/classify.rs): ``policing``
    where the UPC discarded cells of its lost data PDUs; ``interface-queue`` where the
    sender's own queue refused more packets than the emulated network lost of its data;
    ``cell-loss`` where the network lost its data PDUs. The kernel alone (TCP_INFO)
    cannot tell a window held by losses from one held by the receiver (a receiver
    holding data behind a lost PDU reads as rwnd-limited: the policed europe-vp
    transfer, 98% of its busy time), so the network's losses come before its
    ``window``. Otherwise nothing; and nothing where the kernel's evidence named a
    saturated CPU (``host-cpu``): as in the simulator, a transfer that reached that
    bound lost too little to matter."""
    if not (row.get("retransmits") or row.get("timeouts")) or row.get("protocol") == "udp":
        return {}
    if row.get("limited_by") == vocab.HOST_CPU:
        return {}
    if data["pdus_lost"] and data["cells_policed"]:
        return {
            "limited_by": vocab.POLICING,
            "limit_evidence": _network_losses(row, data),
        }
    queue_limit = _interface_queue(row, data, sharing, queue)
    if queue_limit:
        return queue_limit
    if not data["pdus_lost"]:
        return {}
    return {"limited_by": vocab.CELL_LOSS, "limit_evidence": _network_losses(row, data)}


def _network_losses(row: dict, data: dict) -> str:
    return (
        f"{data['pdus_lost']} of {data['pdus_sent']} data PDUs lost in the "
        f"emulated network ({data['cells_lost']} cells lost, {data['cells_policed']} of them "
        f"discarded by the UPC); {kernel.timeouts_text(row)}"
    )


def _interface_queue(row: dict, data: dict, sharing: int, queue: int | None) -> dict:
    """``interface-queue``, as the simulator's rule: the sender's kernel dropped more
    packets at its TUN device's transmit queue (held while the emulated adapter's
    interface queue was full, emu/ifq.rs), with what that adapter refused, than the
    emulated network lost of its data PDUs. The drops are the interface's count
    (``sender_tx_dropped``), of every connection the host sends or receives on: with
    more than one, the evidence says so. Otherwise nothing."""
    dropped, refused = row["sender_tx_dropped"] or 0, data["pdus_dropped_at_adapter"]
    if dropped + refused <= data["pdus_lost"]:
        return {}
    where = f"{dropped} packets dropped by the sender's kernel at its interface queue (TUN "
    where += f"tx_dropped, txqueuelen {netns.TXQUEUELEN}"
    if sharing > 1:
        where += f"; the interface's count, its {sharing} connections' packets together"
    where += ")"
    if refused:
        where += f" and {refused} PDUs refused by its adapter's interface queue"
    if data["cells_lost"]:
        network = (
            f"besides, {data['cells_lost']} cells lost in the emulated network: "
            f"{data['pdus_lost']} of {data['pdus_sent']} data PDUs"
        )
    else:
        network = "no cell lost in the emulated network"
    held = f"{queue} PDUs" if queue else "BSD's ifq_maxlen"
    window = ""
    if row.get("sndbuf") or row.get("rcvbuf"):
        window = f"; window sndbuf {row.get('sndbuf')}, rcvbuf {row.get('rcvbuf')}"
    if row.get("peak_flight_bytes") is not None:
        window += f"; {row['peak_flight_bytes']} B in flight at most, {kernel.kernel_window(row)}"
    return {
        "limited_by": vocab.INTERFACE_QUEUE,
        "limit_evidence": f"{where} ({network}); its adapter's interface queue holds {held} "
        f"and held the host's queue stopped {row['sender_queue_stopped_s']:.2f} s of the run"
        f"{window}; {kernel.timeouts_text(row)}; received "
        f"{(row.get('goodput_bps') or 0) / 1e6:.2f} Mb/s",
    }


def _host_limit(row: dict) -> dict:
    """A UDP source whose datagrams its own kernel dropped, the emulated adapter's
    interface queue full, was held by its link, as the simulator says of a source its
    interface queue refuses (``link``). Otherwise nothing."""
    dropped = row["sender_tx_dropped"]
    if not dropped:
        return {}
    return {
        "limited_by": vocab.LINK,
        "limit_evidence": f"the sending host's kernel dropped {dropped} datagrams at its "
        f"interface (TUN tx_dropped, txqueuelen {netns.TXQUEUELEN}) while its adapter's "
        f"interface queue was full ({row['sender_queue_stopped_s']:.2f} s of the run): it "
        f"writes faster than its adapter may send",
    }


class _Starts:
    """Connections as the emulator runs them (``walk.Starts``): each on a thread of a
    pool of the job's own, its agents in their hosts' namespaces."""

    def __init__(self, run: _Run, where: dict[str, str]):
        self.run, self.where = run, where

    def launch(self, conns: list[int], start_at: float) -> tuple:
        pool = ThreadPoolExecutor(max_workers=len(conns))
        return pool, [pool.submit(_connection, self.run, self.where, i, start_at) for i in conns]

    def finish(self, job: tuple) -> None:
        wait_all(*job, self.stop)

    def margin(self, n: int) -> float:
        return START_MARGIN_S

    def stop(self) -> None:
        from cellbench import _native

        _native.real_stop(self.run.group)


def _connection(run: _Run, where: dict[str, str], i: int, start_at: float) -> None:
    rc = run.exp.connections[i]
    c = rc.conn
    tx, rx = c.transmitter, c.receiver
    drain = controller.DRAIN_S if c.protocol == "tcp" else UDP_DRAIN_S
    drain = drain if run.drain_s is None else run.drain_s
    sink, source = controller.specs(
        run.exp, i, start_at, run.offsets, run.draws, run.group, series=run.series, drain_s=drain
    )
    # The source waits as long for the sink's close (a starved connection's never comes).
    source["drain_timeout_s"] = drain
    if c.protocol == "tcp":
        # Linux doubles SO_RCVBUF and advertises a share of it that depends on the
        # packets: clamp the window to the file's, as the simulator's TCP has it.
        sink["window_clamp"] = rc.rcvbuf
        if run.stall_s:
            # Both ends give up on nothing delivered (the agents' stall_timeout_s):
            # the source reports what it wrote and the kernel's counts, the sink
            # what arrived, as at a deadline; the row says completed = false.
            source["stall_timeout_s"] = sink["stall_timeout_s"] = run.stall_s
    # The test's congestion=, else the transmitter's kernel_cc, on its socket
    # (netns.kernel_sysctls says why).
    source["congestion"] = source["congestion"] or run.kernel_cc.get(tx)
    # The agents send only between the namespaces this run made.
    limits = dict(agents.LIMITS, allow=sorted(run.exp.addresses.values()))

    def send(spec: dict) -> dict:
        return agents.source(spec, limits)

    out: dict[str, dict] = {}
    errors: dict[str, BaseException] = {}

    def agent(role: str, host: str, fn, spec: dict) -> None:
        try:
            out[role] = netns.in_netns(where[host], lambda: fn(spec))
        except BaseException as e:  # noqa: BLE001 - reported below, naming the agent
            errors[role] = e
            # The other side would wait for its peer until its deadline: stop it.
            from cellbench import _native

            _native.real_stop(run.group)

    threads = [
        threading.Thread(target=agent, args=("sink", rx, agents.sink, sink), daemon=True),
        threading.Thread(target=agent, args=("source", tx, send, source), daemon=True),
    ]
    for th in threads:
        th.start()
    next_progress = start_at + PROGRESS_S
    for th in threads:
        while th.is_alive():
            th.join(0.1)
            if c.protocol == "tcp" and time.time() >= next_progress:
                next_progress += PROGRESS_S
                _progress(run, c, where[tx], source["peer"], time.time() - start_at)
    if errors:
        role, e = next(iter(errors.items()))
        host = rx if role == "sink" else tx
        raise EmuError(f"connection {c.name} ({tx} -> {rx}): the {role} on host {host}: {e}")
    with run.lock:
        run.reports[i] = (out["source"], out["sink"], start_at)


def _progress(run: _Run, c, netns_path: str, peer: str, elapsed: float) -> None:
    """A line on stderr for a TCP connection still running: what its sender's kernel
    has had acknowledged and retransmitted so far (ss -ti, TCP_INFO)."""
    counts = netns.tcp_counts(netns_path, peer)
    so_far = (
        f"{counts[0]} bytes delivered, {counts[1]} retransmission(s)"
        if counts
        else "no connection yet"
    )
    ends = (
        f"; ends after {run.stall_s:g} s without delivery (--stall-timeout)" if run.stall_s else ""
    )
    print(
        f"cellbench: emu: connection {c.name} ({c.transmitter} -> {c.receiver}) at "
        f"{elapsed:.0f} s: {so_far}{ends}",
        file=sys.stderr,
    )
