"""A sweep's cell captures sized before they are written, and the runs chosen to
capture (``run --cells PLACE``, ``tester { }``, ``--cells-runs``, ``--cells-max``).

A cell tester writes every cell it sees, 84 bytes a cell in the pcap (a 16-byte
record header, a 16-byte ERF header and the 52 bytes of the cell without its HEC:
``wire/pcap.rs``), in every run: lan-buffers' 32 MB transfers make some 60 MB a run
and its 5000 runs some 300 GB. So the size is estimated when the plan is checked
(``--check`` prints it) and a sweep whose captures would not fit is refused before
anything is written. The estimate counts each transfer's data and one ACK per data
segment (an ACK every two segments, 4.3BSD's delayed ACK, makes it a little less;
retransmissions make it more), each as whole AAL5 PDUs, at every place: an estimate
of the order of the size, not a bound."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

from cellbench import calc, vocab, wire
from cellbench.experiment.lang import ExperimentError

#: Bytes of a cell in a capture: pcap record header 16 + ERF header 16 + cell 52
#: (``wire/pcap.rs``, ``PcapWriter::write_cell``).
RECORD_BYTES = 16 + 16 + 52
#: The captures a sweep may write without --cells-max: 10 GiB. An assumption: a few
#: hundred runs of the studies' transfers, as much as a laptop's disk spares.
DEFAULT_MAX_BYTES = 10 << 30
#: IPv4 and TCP headers without options (RFC 791, RFC 793), and IPv4 and UDP (RFC 768).
TCP_IP_HEADERS = 40
UDP_IP_HEADERS = 28


def parse_runs(text: str, runs_total: int | None = None):
    """``--cells-runs``: run numbers and ranges, ``0-9,17`` (the runs as `show` numbers
    them, from 0), as a ``results.RunSet``."""
    from cellbench.experiment.results import RunSet

    chosen = RunSet()
    for item in text.split(","):
        first, sep, last = item.strip().partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            raise ExperimentError(
                None, f"--cells-runs {text}: expected run numbers and ranges, e.g. 0-9,17"
            )
        a, b = int(first), int(last) if sep else int(first)
        if b < a:
            raise ExperimentError(None, f"--cells-runs {text}: range {item.strip()} runs backwards")
        if runs_total is not None and b >= runs_total:
            raise ExperimentError(
                None, f"--cells-runs {text}: run {b} is past the sweep's {runs_total} runs (0..)"
            )
        chosen.add(a, b)
    return chosen


def _pdus_cells(payload: int, encap: int) -> int:
    return wire.aal5_cells_for(payload + encap)


def run_cells(exp) -> int:
    """The cells one run of ``exp`` puts on the network (the estimate above)."""
    tb = exp.testbed
    encap = vocab.ENCAP_HEADER.get(tb.encap, 8)
    phys = {h.name: h.phy for h in exp.hosts}
    total = 0
    for c in exp.connections:
        if c.interface != "atm":
            continue  # an Ethernet interface sends no cells
        t = c.traffic
        if t.nbytes:
            nbytes = float(t.nbytes)
        elif t.duration_s:
            try:
                line = calc.phy_rates(phys[c.transmitter])["cell_mbps"] * 1e6
            except (KeyError, ValueError):
                line = 0.0
            offered = None
            if t.rate_bps:
                offered = t.rate_bps
            elif t.period_us:
                offered = t.blocksize * t.blocks * 8 / (t.period_us * 1e-6)
            rate = min(offered, line) if offered and line else (offered or line)
            nbytes = rate * t.duration_s / 8
        else:
            continue
        if c.protocol == "tcp":
            mss = max(tb.mtu - TCP_IP_HEADERS, 1)
            segments = math.ceil(nbytes / mss)
            per = _pdus_cells(mss + TCP_IP_HEADERS, encap) + _pdus_cells(TCP_IP_HEADERS, encap)
            total += segments * per
        else:
            size = max(t.blocksize, 1)
            datagrams = math.ceil(nbytes / size)
            fragments = math.ceil((size + UDP_IP_HEADERS) / tb.mtu)
            per = fragments * _pdus_cells(min(size + UDP_IP_HEADERS, tb.mtu), encap)
            total += datagrams * per
    return total


def size_text(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} bytes"


def check(plan, out: Path, most: int | None) -> None:
    """Refuse a plan whose captures (``plan.capture_bytes``) would pass ``most``
    (--cells-max; default ``DEFAULT_MAX_BYTES``) or the free space where ``out``
    goes, with one line saying what to do."""
    need = plan.capture_bytes
    if not need:
        return
    where = Path(out).absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    bound = DEFAULT_MAX_BYTES if most is None else most
    if need <= min(bound, free):
        return
    if free < bound:
        limit = f"the {size_text(free)} free in {where}"
    elif most is None:
        limit = f"the {DEFAULT_MAX_BYTES >> 30} GiB captures may take without --cells-max"
    else:
        limit = f"--cells-max {size_text(most)}"
    runs = plan.captured_runs
    raise ExperimentError(
        None,
        f"{plan.tester_words()}: the captures would take some {size_text(need)} ({runs} "
        f"run(s), ~{size_text(need / runs)} each), more than {limit}: capture chosen runs "
        "(--cells-runs 0-9) or allow more (--cells-max SIZE)",
    )
