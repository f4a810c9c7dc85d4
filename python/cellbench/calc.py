"""Closed-form calculators for sizing ATM paths (the ``model`` engine).

Times are in µs (the RTT in ms), rates in Mb/s = 10^6 bit/s. The arithmetic is
done by the Rust core in integer picoseconds and bits/s. Bad values raise
``ValueError`` with a one-line message naming the value and what is allowed.

Physical layers: ``oc3c``, ``oc12c``, ``taxi100``, ``taxi140``, ``e3``, ``ds3``
or ``rate:<Mb/s>``. Encapsulations: ``llc-snap`` (RFC 1483, 8-byte header,
default MTU 9180) and ``vc-mux`` (no header, default MTU 9188).
"""

from __future__ import annotations

from typing import Any

from cellbench import _native

LAYERS = ("line", "atm", "aal5", "ip", "tcp_payload")


def phy_rates(phy: str, framing: bool = True) -> dict[str, Any]:
    """Line rate, cell-carrying rate and cell time of a physical layer.

    ``framing=False`` neglects the framing overhead (cells get the line rate).
    """
    line, cell, cell_time, cells_per_sec = _native.calc_phy(phy, framing)
    return {
        "phy": phy,
        "framing": framing,
        "line_mbps": line,
        "cell_mbps": cell,
        "cell_time_us": cell_time,
        "cells_per_sec": cells_per_sec,
    }


def layer_table(
    phy: str, encap: str = "llc-snap", mtu: int | None = None, framing: bool = True
) -> dict[str, Any]:
    """`layers` with its context: the MTU used, cells per PDU, header length."""
    rows, cells, mtu_used, header = _native.calc_layers(phy, encap, mtu, framing)
    return {
        "phy": phy,
        "encap": encap,
        "encap_header_bytes": header,
        "mtu": mtu_used,
        "cells_per_pdu": cells,
        "framing": framing,
        "layers": [{"layer": name, "mbps": mbps} for name, mbps in rows],
    }


def layers(
    phy: str, encap: str = "llc-snap", mtu: int | None = None, framing: bool = True
) -> list[dict[str, Any]]:
    """Bandwidth (Mb/s) left to each layer: line, atm, aal5, ip, tcp_payload.

    Full-MTU IP datagrams in AAL5 over ``phy``; ``mtu`` defaults to the
    encapsulation's (9180 llc-snap, 9188 vc-mux). Counts header, trailer and
    padding overhead only. Returns ``[{"layer": ..., "mbps": ...}, ...]``.
    """
    return layer_table(phy, encap, mtu, framing)["layers"]


def buffer_burst(buffer_cells: int, in_cell_us: float, out_cell_us: float) -> dict[str, Any]:
    """Longest burst a buffer of ``buffer_cells`` absorbs: L / (1 − T_i/T_o).

    Cells arrive every ``in_cell_us`` and leave every ``out_cell_us``; floored
    to whole cells. When T_i ≥ T_o the buffer never fills: ``max_burst_cells``
    is None and ``unbounded`` True.
    """
    n = _native.calc_buffer_burst(buffer_cells, in_cell_us, out_cell_us)
    return {
        "max_burst_cells": n,
        "unbounded": n is None,
        "buffer_cells": buffer_cells,
        "in_cell_us": in_cell_us,
        "out_cell_us": out_cell_us,
    }


def gcra_burst(t_us: float, tau_us: float, cell_us: float) -> dict[str, Any]:
    """Longest burst at cell interval ``cell_us`` that GCRA(T, τ) passes.

    ``max_burst_cells`` = 1 + ⌊τ/(T − T_j)⌋. Idle times count beyond the cell
    interval (the next burst's first cell comes ``cell_us + idle`` after the
    burst's last): ``idle_after_us`` is the least idle after which one more
    such burst passes in full, N(T − T_j) − (τ mod (T − T_j));
    ``idle_to_repeat_us`` = N(T − T_j) lets such bursts repeat for ever. When
    T_j ≥ T every cell conforms: the burst is unbounded and these are None.
    """
    r = _native.calc_gcra_burst(t_us, tau_us, cell_us)
    n, idle, repeat = r if r is not None else (None, None, None)
    return {
        "max_burst_cells": n,
        "idle_after_us": idle,
        "idle_to_repeat_us": repeat,
        "unbounded": r is None,
    }


def _cell(c: tuple[int, int, float] | None) -> dict[str, Any] | None:
    return None if c is None else {"pdu": c[0], "cell": c[1], "time_us": c[2]}


def train(
    cells_per_pdu: int,
    cell_us: float,
    gap_us: float,
    t_us: float,
    tau_us: float,
    pdus: int | None = None,
) -> dict[str, Any]:
    """Does a train of PDUs conform to GCRA(T, τ)? Which cell fails first?

    Each PDU is ``cells_per_pdu`` cells ``cell_us`` apart; ``gap_us`` is idle
    time beyond the cell interval, so the next PDU's first cell arrives
    ``cell_us + gap_us`` after the previous PDU's last (gap 0: one unbroken
    stream). ``pdus`` PDUs are run through the GCRA cell by cell; without it,
    the steady state (indefinitely many PDUs). PDUs and cells count from 0;
    ``time_us`` is the cell's arrival time, the train starting at 0. The
    steady-state verdict is always included.
    """
    steady, _ = _native.calc_train(cells_per_pdu, cell_us, gap_us, t_us, tau_us, None)
    if pdus is None:
        first, failures = steady, None
    else:
        first, failures = _native.calc_train(cells_per_pdu, cell_us, gap_us, t_us, tau_us, pdus)
    return {
        "conforming": first is None,
        "first_failure": _cell(first),
        "pdus": pdus,
        "non_conforming_cells": failures,
        "steady_state_conforming": steady is None,
        "steady_state_first_failure": _cell(steady),
    }


def window_bound(
    window_bytes: int, rtt_ms: float, rate_mbps: float | None = None
) -> dict[str, Any]:
    """Throughput bound of a window-limited transfer: window / RTT (Mb/s).

    With a link rate: the lesser of the two, and the bandwidth-delay product
    rate × RTT (bytes, rounded up: the least window that fills the link).
    """
    window_rate, bound, limit, bdp = _native.calc_window(window_bytes, rtt_ms, rate_mbps)
    return {
        "throughput_mbps": bound,
        "window_rate_mbps": window_rate,
        "link_mbps": rate_mbps,
        "limited_by": limit,
        "bdp_bytes": bdp,
        "window_bytes": window_bytes,
        "rtt_ms": rtt_ms,
    }


def window_model(window_bytes: int, mss: int, rtt_ms: float, rate_mbps: float) -> dict[str, Any]:
    """The simple model of TCP over a policed VP: for each ACK policy the usable
    window (the whole window up to 2 MSS; beyond it whole segments only, an even
    number when every second segment is ACKed) and min(rate, usable / RTT)."""
    rows = _native.calc_window_model(window_bytes, mss, rtt_ms, rate_mbps)
    return {
        "window_bytes": window_bytes,
        "mss": mss,
        "rtt_ms": rtt_ms,
        "rate_mbps": rate_mbps,
        "policies": [
            {"ack": name, "usable_window_bytes": usable, "throughput_mbps": mbps, "limited_by": lim}
            for name, usable, mbps, lim in rows
        ],
    }


__all__ = [
    "LAYERS",
    "window_model",
    "buffer_burst",
    "gcra_burst",
    "layer_table",
    "layers",
    "phy_rates",
    "train",
    "window_bound",
]
