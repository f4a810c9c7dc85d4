"""What the real engine measured besides bytes, as result columns: each host's CPU
and interface counters over the connection, the kernel's TCP_INFO summary and (with
``--series``) its samples as the cwnd table's rows; and, from that evidence, what
bound each connection (``limited_by``, ``limit_evidence``) in the simulator's
categories where they apply.

The agents (Rust, ``cellbench-core``'s ``real::measure``) read the host figures:
/proc/stat for the share of all CPUs that was busy, getrusage for the agent's own
thread, /proc/net/dev for the interface the host routes the peer's address through.
An interface carries every connection that uses it, so its counters are the
interface's over the connection's time, not this connection's alone.
"""

from __future__ import annotations

from cellbench import vocab

#: --series: the sender's TCP_INFO is sampled this often (µs).
SERIES_INTERVAL_US = 10_000.0
#: A connection's share of the kernel's busy time that rwnd/sndbuf limited it that names the limit.
LIMITED_SHARE = 0.5
#: A paced source within this fraction of its offered rate ran at the application's rate.
RATE_MET = 0.02
#: The share of a source's span spent waiting for the daemon's rate cap from which
#: the cap, not the path, set its rate (half: the cap took more time than all else).
CAP_HELD = 0.5
#: An agent using this much of one core was bound by its CPU (the copy, the stack).
AGENT_SATURATED = 0.9
#: The kernel had data to send less than this share of the writes' span: the
#: application, not the network, set the pace.
APP_IDLE_SHARE = 0.5
#: A full blast within this fraction of the daemon's --max-rate ran at the cap, even
#: where no write had to wait for it (the writes' own time kept it just under).
CAP_NEAR = 0.05


def held_at_cap(sent: dict, offered: float | None = None) -> bool:
    """A full blast (nothing offered, no pacing timing) that the transmitter's daemon
    held at its --max-rate: its writes waited for the cap half its span or more, or it
    ran within CAP_NEAR of the cap the source ran under (``cap_bps``, where the agent's
    report carries it)."""
    if offered is not None:
        return _paced_held(sent, offered)
    if sent.get("timing") is not None:
        return False
    cap = sent.get("cap_bps")
    near = bool(cap) and sent.get("throughput_bps", 0) >= cap * (1 - CAP_NEAR)
    # Writes that waited are not enough: the first writes into an empty send buffer
    # outrun any cap, then the path may set the pace. The cap held the source when it
    # took half its span or more (the cap is shared by all the daemon's sources).
    waited = (sent.get("cap_wait_s") or 0.0) >= CAP_HELD * sent.get("seconds", 0.0)
    return near or (bool(sent.get("cap_waits")) and waited)


def _paced_held(sent: dict, offered: float) -> bool:
    """A paced source was admitted within the cap (agents.refusal), but the cap is shared
    by all the daemon's sources, so others' traffic can hold it back: it did when it
    fell short of its rate and its writes' waits for the cap make up CAP_HELD or more of
    the time it fell behind (the share of its span its missing bytes stand for)."""
    rate, seconds = sent.get("throughput_bps", 0), sent.get("seconds") or 0.0
    if not sent.get("cap_waits") or offered <= 0 or rate >= offered * (1 - RATE_MET):
        return False
    behind = seconds * (1 - rate / offered)
    return (sent.get("cap_wait_s") or 0.0) >= CAP_HELD * behind


def cap_note(sent: dict) -> str:
    """The sentence a capped row's notes and ttcp's report carry."""
    cap = sent.get("cap_bps")
    at = f" of {cap / 1e6:g} Mb/s" if cap else ""
    return (
        f"the transmitter's daemon held this full blast at its --max-rate{at} "
        "(cellbench daemon --max-rate MBPS raises it)"
    )


def _s(us: float | None) -> float | None:
    return None if us is None else us / 1e6


def columns(protocol: str, sent: dict, got: dict) -> dict:
    """The row's measurement columns from a source's and a sink's reports."""
    info = sent.get("tcp_info") or {}
    tx, rx = sent.get("host") or {}, got.get("host") or {}
    return {
        "congestion": sent.get("congestion"),
        "mss": info.get("snd_mss") or None,
        "tcp_busy_s": _s(info.get("busy_us")),
        "rwnd_limited_s": _s(info.get("rwnd_limited_us")),
        "sndbuf_limited_s": _s(info.get("sndbuf_limited_us")),
        "tx_cpu_busy": tx.get("cpu_busy"),
        "rx_cpu_busy": rx.get("cpu_busy"),
        "tx_agent_cpu": tx.get("agent_cpu"),
        "rx_agent_cpu": rx.get("agent_cpu"),
        "tx_interface": tx.get("interface"),
        "tx_if_bytes": tx.get("if_tx_bytes"),
        "tx_if_drops": tx.get("if_tx_drops"),
        "rx_interface": rx.get("interface"),
        "rx_if_bytes": rx.get("if_rx_bytes"),
        "rx_if_drops": rx.get("if_rx_drops"),
        "rx_udp_rcvbuf_errors": rx.get("udp_rcvbuf_errors") if protocol == "udp" else None,
        "notes": "; ".join([*(sent.get("notes") or []), *_cap_notes(sent)]) or None,
    }


def _cap_notes(sent: dict) -> list[str]:
    # A paced source's rate was checked against the cap before it ran (agents.refusal).
    return [cap_note(sent)] if held_at_cap(sent) else []


def series_rows(ident: dict, connection: int, sent: dict, shift: float) -> list[dict]:
    """The sender's TCP_INFO samples as cwnd rows; ``shift`` takes a sample's epoch
    time on the transmitter's clock to the run's seconds on the controller's."""
    return [
        {**ident, "connection": connection, "t_s": t - shift, "cwnd": cwnd}
        | {"ssthresh": ssthresh, "flight": flight, "srtt_us": float(srtt)}
        for t, cwnd, ssthresh, flight, srtt in sent.get("series") or []
    ]


def _cpu(role: str, h: dict) -> str:
    """An agent's CPU in words (either figure may be missing: a span under a tick)."""
    agent, busy = h.get("agent_cpu"), h.get("cpu_busy")
    used = f"used {agent:.2f} of a core" if agent is not None else "CPU time not measured"
    host = f", host CPUs {busy:.0%} busy" if busy is not None else ""
    return f"the {role}'s agent {used}{host}"


def _drops(tx: dict, rx: dict) -> str:
    parts = [
        f"{n} dropped at {h['interface']} ({side})"
        for h, n, side in (
            (tx, tx.get("if_tx_drops"), "sender, out"),
            (rx, rx.get("if_rx_drops"), "receiver, in"),
        )
        if n
    ]
    return f"; interface drops: {', '.join(parts)}" if parts else ""


def throughput_bps(protocol: str, sent: dict, got: dict) -> float:
    """A row's throughput: over TCP the sender's rate (ttcp -t's: what it wrote was
    delivered), over UDP what arrived, at the sink's rate (ttcp -r's): a datagram
    written may be dropped on the way, and the sender's rate stands beside it."""
    return got["throughput_bps"] if protocol == "udp" else sent["throughput_bps"]


def udp_losses(sent: dict, got: dict) -> str:
    """A UDP row's offered load and where its datagrams were lost, for its evidence."""
    n, refused, arrived = sent["blocks"], sent["send_errors"], got["datagrams"]
    tx, rx = sent.get("host") or {}, got.get("host") or {}
    s = f"; offered {sent['throughput_bps'] / 1e6:.2f} Mb/s: {arrived} of {n} datagrams arrived"
    if arrived >= n:
        return s
    places = [
        (refused, "refused by the sender's kernel (ENOBUFS)"),
        (tx.get("if_tx_drops"), f"dropped at {tx.get('interface')} (sender, out)"),
        (rx.get("if_rx_drops"), f"dropped at {rx.get('interface')} (receiver, in)"),
        (rx.get("udp_rcvbuf_errors"), "dropped at the receiver's full socket (RcvbufErrors)"),
    ]
    said = [f"{k} {what}" for k, what in places if k]
    where = f": {', '.join(said)}" if said else ""
    return s + f" ({(n - arrived) / max(n, 1):.0%} lost{where})"


def explain(protocol: str, sent: dict, got: dict, offered: float | None) -> tuple[str, str]:
    """What bound a real connection, from the kernel's own evidence: TCP_INFO's busy,
    rwnd-limited and sndbuf-limited times and retransmissions, each agent's CPU time,
    the interfaces' drops, the pacer's schedule, the datagrams lost."""
    limited_by, evidence = _explain(protocol, sent, got, offered)
    if protocol == "udp":
        evidence += udp_losses(sent, got)
    return limited_by, evidence


def _explain(protocol: str, sent: dict, got: dict, offered: float | None) -> tuple[str, str]:
    measured = throughput_bps(protocol, sent, got)
    mbps = measured / 1e6
    tx, rx = sent.get("host") or {}, got.get("host") or {}
    if held_at_cap(sent, offered):
        cap = sent.get("cap_bps")
        of = f" of {cap / 1e6:g} Mb/s" if cap else ""
        waits = sent.get("cap_waits") or 0
        how = (
            f"{waits} write(s) waited for the transmitter's daemon's --max-rate{of}"
            if waits
            else f"ran within {CAP_NEAR:.0%} of the transmitter's daemon's --max-rate{of}"
        )
        if offered is not None:
            how = (
                f"paced at {offered / 1e6:.2f} Mb/s offered, {how} ({sent.get('cap_wait_s', 0):.2f}"
                " s in all; the cap is shared by all the daemon's sources)"
            )
        return "max-rate", f"{how}: the cap, not the path, set the pace; measured {mbps:.2f} Mb/s"
    # The offered rate is met by what arrived (the sink's interval, from accept over
    # TCP as ttcp -r's, from the first datagram over UDP, to the last byte), over TCP
    # too: the sender's rate counts what the socket buffer still held when the writes
    # ended, which no path had carried (docs/mechanisms.md, "What bound a transfer").
    received = got.get("throughput_bps") or 0.0
    if offered is not None and received >= offered * (1 - RATE_MET):
        late = (sent.get("timing") or {}).get("late_blocks", 0)
        return vocab.APPLICATION, (
            f"paced at {offered / 1e6:.2f} Mb/s offered and received {received / 1e6:.2f} "
            f"Mb/s ({late} late block(s))"
        )
    drops = _drops(tx, rx)
    cpu_bound = [
        (role, h)
        for role, h in (("sender", tx), ("receiver", rx))
        if (h.get("agent_cpu") or 0) >= AGENT_SATURATED
    ]
    if protocol == "udp":
        lost = sent["bytes"] - got["bytes"]
        if lost > 0:
            share = lost / max(sent["bytes"], 1)
            missing = sent["blocks"] - sent["send_errors"] - got["datagrams"]
            overflowed = rx.get("udp_rcvbuf_errors") or 0
            if missing > 0 and overflowed >= missing / 2:
                # The datagrams crossed the path and were dropped at the receiving socket.
                return vocab.HOST_CPU, (
                    f"{share:.1%} of the bytes sent never arrived: the receiver's socket "
                    f"buffer overflowed {overflowed} time(s) for {missing} datagram(s) lost "
                    f"(RcvbufErrors): the receiving application did not keep up; "
                    f"{_cpu('receiver', rx)}"
                )
            return (
                vocab.LINK,
                f"{share:.1%} of the bytes sent never arrived (datagrams dropped)",
            )
        if cpu_bound:
            role, h = cpu_bound[0]
            return vocab.HOST_CPU, f"{_cpu(role, h)}; {mbps:.2f} Mb/s, every datagram arrived"
        return vocab.UNDETERMINED, f"{mbps:.2f} Mb/s, every datagram arrived"
    info = sent.get("tcp_info") or {}
    busy = info.get("busy_us")
    retrans = info.get("total_retrans", 0)
    if busy:
        rwnd = (info.get("rwnd_limited_us") or 0) / busy
        sndbuf = (info.get("sndbuf_limited_us") or 0) / busy
    else:
        rwnd = sndbuf = None
    out_drops, in_drops = tx.get("if_tx_drops") or 0, rx.get("if_rx_drops") or 0

    def cpu_limit() -> tuple[str, str]:
        role, h = cpu_bound[0]
        beside = [f"{retrans} retransmission(s)"]
        beside += [
            f"{what}-limited {share:.0%} of the kernel's busy time"
            for what, share in (("rwnd", rwnd), ("sndbuf", sndbuf))
            if share
        ]
        return vocab.HOST_CPU, f"{_cpu(role, h)}; TCP_INFO: {', '.join(beside)}{drops}"

    if cpu_bound and not out_drops:
        # A saturated CPU first, as the simulator's rules order it (sim/explain/
        # classify.rs): busy all along, it paces the segments (a receiver's reads
        # that fall behind close the window, a sender's copies leave the path idle), so
        # a window held or a path that lost packets beside it is its consequence or
        # too little to matter. Not where the sender's interface dropped: its queue
        # was full, the path backlogged, not waiting on the CPU.
        return cpu_limit()
    if busy:
        if rwnd >= LIMITED_SHARE:
            return vocab.WINDOW, (
                f"the receiver's window held the sender back {rwnd:.0%} of its busy time "
                f"(TCP_INFO rwnd_limited), {retrans} retransmission(s)"
            )
        if sndbuf >= LIMITED_SHARE:
            return vocab.WINDOW, (
                f"the send buffer held the sender back {sndbuf:.0%} of its busy time "
                f"(TCP_INFO sndbuf_limited), {retrans} retransmission(s)"
            )
    if retrans and out_drops > in_drops and 2 * out_drops >= retrans:
        # As the simulator's rule (sim/explain/classify.rs): where the losses were
        # decides. The sender's own interface dropped at least half as many packets as
        # were resent, more than the receiver's took in: its transmit queue, not the
        # path, lost them (the counters are the interface's, every connection on it).
        return vocab.INTERFACE_QUEUE, (
            f"{retrans} retransmitted segment(s); the sender's interface {tx.get('interface')} "
            f"dropped {out_drops} outgoing packet(s) (its transmit queue full), the "
            f"receiver's {in_drops}: the window let out more than the sender's queue holds "
            f"at its link's rate, srtt {info.get('rtt_us', 0) / 1000:.2f} ms"
        )
    if retrans:
        return vocab.LINK, (
            f"{retrans} retransmitted segment(s): losses on the path set the congestion "
            f"window, srtt {info.get('rtt_us', 0) / 1000:.2f} ms{drops}"
        )
    if cpu_bound:
        return cpu_limit()
    if busy is None:
        return vocab.UNDETERMINED, (
            "the kernel reports no busy time (TCP_INFO before Linux 4.10), no retransmission"
        )
    if busy == 0:
        # The kernel counts its busy time in clock ticks (1-10 ms).
        return vocab.UNDETERMINED, (
            f"over before the kernel's busy time counted a clock tick ({sent['seconds'] * 1e3:.2f}"
            " ms of writes), no retransmission"
        )
    seconds = sent.get("seconds") or 0
    if seconds > 0 and busy / 1e6 < APP_IDLE_SHARE * seconds:
        return vocab.APPLICATION, (
            f"the kernel had data to send {busy / 1e6 / seconds:.0%} of the writes' span "
            "(TCP_INFO busy): the application's writes set the pace"
        )
    return vocab.LINK, (
        f"congestion window over the path: neither the receive window ({rwnd:.0%}) nor the "
        f"send buffer ({sndbuf:.0%}) limited the sender, no retransmission, "
        f"srtt {info.get('rtt_us', 0) / 1000:.2f} ms{drops}"
    )
