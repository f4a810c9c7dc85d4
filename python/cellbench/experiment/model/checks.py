"""A connection checked before it runs against what the simulator would refuse or
cut: a run's time limit, the largest datagram, the links' cell rate, a host's
fastest write, the flavour's socket buffers and the run's event budget.
"""

from __future__ import annotations

import math

from cellbench import _native
from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import ExperimentError, Pos, expected
from cellbench.experiment.model.limits import CELL_PAYLOAD_SHARE, MAX_DATAGRAM, TIME_LIMIT_S
from cellbench.experiment.model.records import Endpoint, Traffic


def _cell_mbps(h: tbmod.HostSpec) -> float:
    """The cell rate of a host's adapter, Mb/s: the framed link's, or with cell-level
    spacing the unframed cell grid the adapter counts (as sim::spec builds it)."""
    return tbmod.cell_mbps(h.phy, framed=h.spacing_us is None)


def _check_connection(
    tx: Endpoint,
    sink: Endpoint,
    tx_host: tbmod.HostSpec,
    rx_host: tbmod.HostSpec,
    earliest: dict[int, float],
) -> None:
    """What the simulator would refuse, or could not finish in a run's simulated time,
    refused here at the value's position with the limit (the simulator checks again)."""
    t = tx.traffic
    where = t.where
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
    if t.type == "rr" and tx.protocol != "tcp":
        raise expected(tx.protocol_pos, tx.protocol, "protocol tcp for rr (netperf's TCP_RR)")
    if tx.protocol == "udp" and "blocksize" not in t.random and t.blocksize > MAX_DATAGRAM:
        raise expected(
            where.get("blocksize", tx.type_pos),
            f"blocksize={t.blocksize}",
            f"at most {MAX_DATAGRAM} bytes, the largest UDP datagram",
        )
    link = _cell_mbps(tx_host)
    if tx.abr is not None:
        if tx.pacing_mbps is not None:
            raise expected(
                where["pacing"], f"pacing={tx.pacing_mbps:g}", "no pacing on ABR: ACR is its rate"
            )
    # ABR's rates and a pacing rate against the adapter's cell rate (of what the host's
    # pacing_counts counts) are the core's checks alone: the refusal names the rates and
    # lands on the service or the pacing setting (its key path, model.refusals).
    if t.period_us is not None:
        floor = tbmod.WRITE_US[tx_host.profile]
        dist = t.random.get("period")
        least = t.period_us if dist is None else dist.params.get("min", dist.params.get("mean"))
        if least < floor:
            raise expected(
                where.get("period", tx.type_pos),
                f"period {dist or f'{t.period_us:g}'} µs",
                f"at least {floor:g} µs, the time one write() takes on {tx_host.profile}: "
                "no host writes blocks more often",
            )
    if t.nbytes is not None:
        # No transfer beats its links' cell payload rate (nor its pacing): a byte count
        # that even that rate cannot carry in the time left is refused, not cut silently.
        rate = min(link, _cell_mbps(rx_host), tx.pacing_mbps or math.inf)
        bps = rate * 1e6 * CELL_PAYLOAD_SHARE
        left = TIME_LIMIT_S - earliest.get(id(tx), 0.0)
        most = int(bps / 8 * left)
        if t.nbytes > most:
            raise expected(
                where.get("nbytes", tx.type_pos),
                f"nbytes={t.nbytes}",
                f"at most {most} bytes: at {rate:g} Mb/s of cells ({bps / 1e6:.2f} Mb/s of "
                f"payload) no transfer moves more in the {left:g} s left of a run's "
                f"simulated-time limit ({TIME_LIMIT_S:g} s)",
            )


def clamp_sockbuf(value: int, flavour: str, what: str, pos: Pos | str, notes: list[str]) -> int:
    """A socket buffer the host's TCP flavour accepts: beyond its largest, that
    largest, with a note saying so (`run` and the ttcp/netperf front ends alike)."""
    limit = tbmod.FLAVOUR_MAX_SOCKBUF.get(flavour)
    window = tbmod.FLAVOUR_MAX_WINDOW.get(flavour)
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


def _check_event_budget(transmitters: list[Endpoint]) -> None:
    """A run its event budget would cut, refused before it runs where the count can
    be known: each write is at least one step of the simulator's loop (measured:
    1.0-1.8 steps a write), so the writes are a floor on the steps the run needs;
    past the budget (sim::guard, a spec's max_events) the run would end cut."""
    budget = _native.DEFAULT_EVENT_BUDGET
    writes = [(*_writes(ep.traffic), ep) for ep in transmitters]
    total = sum(n for n, _, _ in writes)
    if total > budget:
        n, how, ep = max(writes, key=lambda w: w[0])
        t = ep.traffic
        pos = t.where.get("nbytes" if t.nbytes is not None else "period", ep.type_pos)
        raise expected(
            pos,
            f"test {ep.name}: {n:.4g} writes ({how}), {total:.4g} in the run",
            f"at most {budget:.4g} (each write is at least one event, and a run ends "
            f"when it has spent its event budget of {budget:.4g}): larger writes, longer "
            "periods, fewer bytes or a shorter duration",
        )
