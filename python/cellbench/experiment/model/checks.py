"""A connection checked before it runs against what the simulator would cut or clamp
and cannot refuse before it runs: a run's time limit, the links' cell rate, the
flavour's socket buffers and the run's event budget. What the simulator refuses it
refuses itself, at the setting (``model.refusals``).
"""

from __future__ import annotations

import math

from cellbench import _native
from cellbench.experiment.lang import ExperimentError, Pos, expected
from cellbench.experiment.model.limits import CELL_PAYLOAD_SHARE, TIME_LIMIT_S
from cellbench.experiment.model.records import Connection, Endpoint, Traffic
from cellbench.experiment.testbed.schema import (
    FLAVOUR_MAX_SOCKBUF,
    FLAVOUR_MAX_WINDOW,
    HostSpec,
    cell_mbps,
)


def _cell_mbps(h: HostSpec) -> float:
    """The cell rate of a host's adapter, Mb/s: the framed link's, or with cell-level
    spacing the unframed cell grid the adapter counts (as sim::spec builds it)."""
    return cell_mbps(h.phy, framed=h.spacing_us is None)


def _check_connection(
    tx: Endpoint,
    sink: Endpoint,
    tx_host: HostSpec,
    rx_host: HostSpec,
    earliest: dict[int, float],
) -> None:
    """What the simulator could not finish in a run's simulated time, refused here at
    the value's position with the limit (the simulator would run it and cut it)."""
    t = tx.traffic
    for ep in (tx, sink):
        start = earliest.get(id(ep), 0.0)
        if start >= TIME_LIMIT_S:
            raise ExperimentError(
                ep.pos,
                f"test {ep.name} starts no earlier than {start:g} s (after the tests before "
                f"it), at or after the simulated-time limit of a run ({TIME_LIMIT_S:g} s): "
                "expected a start before it",
            )
        d = ep.traffic.duration_s
        if d is not None and start + d > TIME_LIMIT_S:
            raise expected(
                ep.traffic.where.get("duration", ep.pos),
                f"duration={d:g} from a start no earlier than {start:g} s",
                f"an end by the simulated-time limit of a run, {TIME_LIMIT_S:g} s "
                f"(a duration of at most {TIME_LIMIT_S - start:g} s here)",
            )
    # Protocol, datagram size, ABR against pacing and the write period are the core's
    # checks alone (sim::spec::build traffic_load, write_sizes; sim::world::validate):
    # its refusal names the key and lands on the setting (its key path, model.refusals).
    link = _cell_mbps(tx_host)
    if t.nbytes is not None:
        # No transfer beats its links' cell payload rate (nor its pacing): a byte count
        # that even that rate cannot carry in the time left is refused, not cut silently.
        # (A pacing rate of 0 or less is the core's refusal, at the pacing setting.)
        paced = tx.pacing_mbps if tx.pacing_mbps and tx.pacing_mbps > 0 else math.inf
        rate = min(link, _cell_mbps(rx_host), paced)
        bps = rate * 1e6 * CELL_PAYLOAD_SHARE
        left = TIME_LIMIT_S - earliest.get(id(tx), 0.0)
        most = int(bps / 8 * left)
        if t.nbytes > most:
            raise expected(
                t.where.get("nbytes", tx.type_pos),
                f"nbytes={t.nbytes}",
                f"at most {most} bytes: at {rate:g} Mb/s of cells ({bps / 1e6:.2f} Mb/s of "
                f"payload) no transfer moves more in the {left:g} s left of a run's "
                f"simulated-time limit ({TIME_LIMIT_S:g} s)",
            )


def clamp_sockbuf(value: int, flavour: str, what: str, pos: Pos | str, notes: list[str]) -> int:
    """A socket buffer the host's TCP flavour accepts: beyond its largest, that
    largest, with a note saying so (`run` and the ttcp/netperf front ends alike)."""
    limit = FLAVOUR_MAX_SOCKBUF.get(flavour)
    window = FLAVOUR_MAX_WINDOW.get(flavour)
    if what == "SO_RCVBUF" and window is not None and limit is not None:
        # The kernel would take the buffer, but the 16-bit window field (no RFC 1323
        # scaling) cannot say it: an error rather than a window silently smaller.
        if value > window and limit >= window:
            at = pos if isinstance(pos, Pos) else None
            lead = "" if at is not None else f"{pos}: "
            raise ExperimentError(
                at,
                f"{lead}SO_RCVBUF {value} is a window {flavour} cannot advertise: at most "
                f"{window} (no RFC 1323 window scaling)",
            )
    if limit is not None and value > limit:
        notes.append(
            f"{pos}: {what} {value} exceeds {limit}, the largest socket buffer {flavour} "
            f"accepts: using {limit}"
        )
        return limit
    return value


def _writes(t: Traffic) -> tuple[float, str]:
    """The writes a transmitter's traffic asks for when it can be known before it
    runs (a byte count in fixed blocks; blocks every period for a duration), and how
    they come; 0 otherwise."""
    if t.nbytes is not None and "blocksize" not in t.random and t.type != "rr":
        return math.ceil(t.nbytes / t.blocksize), f"{t.nbytes} bytes in {t.blocksize}-byte writes"
    if t.period_us and t.duration_s:
        n = t.blocks * t.duration_s / (t.period_us * 1e-6)
        return n, f"{t.blocks} write(s) every {t.period_us:g} µs for {t.duration_s:g} s"
    return 0, ""


def check_event_budget(connections: list[Connection]) -> None:
    """A run its event budget would cut, refused before it runs where the count can
    be known: each write is at least one step of the simulator's loop (measured:
    1.0-1.8 steps a write), so the writes are a floor on the steps the run needs;
    past the budget (sim::guard, a spec's max_events) the run would end cut. Checked
    after the core's own checks (``model.refusals``), so that the writes it counts
    are of values the core takes."""
    budget = _native.DEFAULT_EVENT_BUDGET
    writes = [(*_writes(c.traffic), c) for c in connections]
    total = sum(n for n, _, _ in writes)
    if total > budget:
        n, how, c = max(writes, key=lambda w: w[0])
        key = "traffic.nbytes" if c.traffic.nbytes is not None else "traffic.period_us"
        raise expected(
            c.positions.get(key, c.pos),
            f"test {c.name}: {n:.4g} writes ({how}), {total:.4g} in the run",
            f"at most {budget:.4g} (each write is at least one event, and a run ends "
            f"when it has spent its event budget of {budget:.4g}): larger writes, longer "
            "periods, fewer bytes or a shorter duration",
        )
