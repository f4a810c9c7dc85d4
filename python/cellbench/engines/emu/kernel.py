"""What the namespaces' kernels say of a TCP connection beyond its retransmissions:
the window in force and the retransmission timeouts, as row columns and as the facts
the simulator's rules read (sim/explain/classify.rs).

Under Linux autotuning no socket option gives the window: the kernel grows the send
buffer (tcp_sndbuf_expand) and the receive buffer (tcp_rcv_space_adjust) as the
transfer runs. The source reads TCP_INFO as it writes and drains (real/watch.rs) and
keeps the peaks: the data in flight (snd_nxt − snd_una), the congestion window, the
window the receiver advertised, the send buffer; the sink reports the receive buffer
autotuning reached. TCP_INFO's RTO counts (Linux 6.7+: tcpi_total_rto,
tcpi_total_rto_recoveries, tcpi_total_rto_time) give the connection's own timeouts;
the sender's namespace's TcpExt TCPTimeouts (/proc/net/netstat, from 0 in a namespace
made for the run) stands in on an older kernel where the host has no other connection.
"""

from __future__ import annotations

from cellbench import vocab


def columns(sent: dict, got: dict) -> dict:
    """A TCP connection's kernel evidence from its source's and sink's reports: the
    simulator's columns where they mean the same (``timeouts``, ``min_rtt_s``,
    ``peak_flight_bytes``) and the emulator's own (``columns.EMU_KERNEL``)."""
    info = sent.get("tcp_info") or {}
    w = sent.get("window") or {}
    rto_ms = info.get("total_rto_time_ms")
    min_rtt = info.get("min_rtt_us")
    return {
        "timeouts": info.get("total_rto"),
        "min_rtt_s": min_rtt / 1e6 if min_rtt else None,
        "peak_flight_bytes": w.get("flight_bytes"),
        "peak_cwnd_bytes": w.get("cwnd_bytes"),
        "peak_adv_window_bytes": w.get("snd_wnd"),
        "kernel_sndbuf": w.get("sndbuf"),
        "kernel_rcvbuf": got.get("rcvbuf_end"),
        "rcv_space_bytes": got.get("rcv_space"),
        "rto_recoveries": info.get("total_rto_recoveries"),
        "rto_recovery_s": rto_ms / 1e3 if rto_ms is not None else None,
        "window_samples": w.get("samples"),
    }


def namespace_timeouts(row: dict, sharing: int) -> None:
    """``timeouts`` from the sender's namespace's TCPTimeouts (``sender_ns_timeouts``)
    where TCP_INFO has no count (before Linux 6.7) and the host sends and receives
    only this connection: the counter is the namespace's, every connection's."""
    if row.get("timeouts") is None and sharing == 1:
        row["timeouts"] = row.get("sender_ns_timeouts")


def window_bound(row: dict) -> float | None:
    """The window in flight over the shortest round trip, bit/s (the simulator's
    ``Facts::window_bound``): None without both."""
    flight, rtt = row.get("peak_flight_bytes"), row.get("min_rtt_s")
    if not flight or not rtt:
        return None
    return flight * 8 / rtt


def window_below_offer(row: dict) -> bool:
    """Whether the window lets through less than a paced source offered (its peak
    flight over the shortest round trip below ``offered_bps``): the simulator's rule 1
    names the source ``application`` only where its offer was the fullest bound, so
    here the window's rule decides, the source's writes waiting on the window."""
    bound, offered = window_bound(row), row.get("offered_bps")
    return bound is not None and offered is not None and bound < offered


def window_limit(row: dict) -> dict:
    """The simulator's rule 6, ``window``: what was delivered (the receiver's bytes
    over its interval, ``goodput_bps``) is at least ``WINDOW_SHARE`` of the peak data
    in flight over the shortest round trip; in the simulator's words, with what the
    kernel grew the buffers to and the window it ran (TCP_INFO). Otherwise nothing."""
    bound = window_bound(row)
    if row.get("protocol") != "tcp" or bound is None:
        return {}
    delivered = row.get("goodput_bps") or 0.0
    if delivered < vocab.LIMIT_SHARES["window"] * bound:
        return {}
    return {"limited_by": vocab.WINDOW, "limit_evidence": window_evidence(row, bound)}


def _buffer(asked: int | None, kernel: int | None) -> str:
    """A socket buffer as the evidence gives it: the file's, or autotuning's."""
    if asked:
        return str(asked)
    return f"autotuned to {kernel}" if kernel else "autotuned"


def window_evidence(row: dict, bound: float) -> str:
    """``window B in flight (sndbuf S, rcvbuf R) / RTT T ms = X Mb/s; delivered Y
    (share)``, as the simulator's rule says it, then the kernel's window."""
    delivered = row.get("goodput_bps") or 0.0
    s = (
        f"window {row['peak_flight_bytes']} B in flight (sndbuf "
        f"{_buffer(row.get('sndbuf'), row.get('kernel_sndbuf'))}, rcvbuf "
        f"{_buffer(row.get('rcvbuf'), row.get('kernel_rcvbuf'))}) / RTT "
        f"{row['min_rtt_s'] * 1e3:.2f} ms = {bound / 1e6:.2f} Mb/s; delivered "
        f"{delivered / 1e6:.2f} Mb/s ({delivered / bound:.0%})"
    )
    return s + "; " + kernel_window(row)


def kernel_window(row: dict) -> str:
    """The window the sender's kernel ran, for any rule's evidence."""
    parts = []
    if row.get("peak_adv_window_bytes") is not None:
        parts.append(f"receiver's advertised window up to {row['peak_adv_window_bytes']} B")
    if row.get("peak_cwnd_bytes") is not None:
        parts.append(f"congestion window up to {row['peak_cwnd_bytes']} B")
    if row.get("kernel_sndbuf") is not None:
        parts.append(f"send buffer {row['kernel_sndbuf']} B")
    if row.get("kernel_rcvbuf") is not None:
        parts.append(f"receive buffer {row['kernel_rcvbuf']} B")
    return "the kernel's window: " + ", ".join(parts) + " (TCP_INFO, SO_SNDBUF/SO_RCVBUF)"


def timeouts_text(row: dict) -> str:
    """``N retransmitted, M timeouts`` as the simulator's loss rules say it, with the
    time the kernel spent recovering from them; the count unknown, ``timeouts n/a``."""
    n = row.get("timeouts")
    s = f"{row.get('retransmits') or 0} retransmitted, "
    s += f"{n} timeouts" if n is not None else "timeouts n/a"
    if row.get("rto_recoveries"):
        s += f" ({row['rto_recoveries']} RTO recoveries, {row['rto_recovery_s']:.2f} s in them)"
    return s + " (TCP_INFO)"
