"""Many connections through one congested port, as a stored result shows them
(issue 34's instruments; docs/mechanisms.md, "Many TCPs through one congested
port"): per connection its goodput,
retransmit timeouts, the longest backoff reached and the time spent waiting on a
retransmit timer; per run Jain's fairness index and the starved connections; per
switch port the cells it carried of PDUs never delivered (wasted), its idle time while
a connection through it ran, and its cells lost by cause.

Shown by ``cellbench run``/``show`` under the summary and by ``report`` beside it, and
only where there is something to see: a timeout, a starved connection, a port that
lost cells."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cellbench import vocab

if TYPE_CHECKING:
    import pandas as pd

#: The runs columns this view reads (a result stored before them has none: nothing shown).
CONNECTION_COLUMNS = ("goodput_bps", "timeouts", "max_backoff", "rexmt_wait_s")
RUN_COLUMNS = ("fairness_jain", "starved")
LOSS_CAUSES = ("overflow", "ppd", "epd", "clp", "policed")


def jain_index(x: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one
    takes everything (R. Jain, D. Chiu and W. Hawe, DEC-TR-301, 1984); the stored
    ``fairness_jain`` is the simulator's, of each run's goodputs."""
    total, squares = sum(x), sum(v * v for v in x)
    return total * total / (len(x) * squares) if squares > 0 else 1.0


def _keys(result, df: pd.DataFrame) -> list[str]:
    params = [c[0] for c in result.meta.get("param_columns", [])]
    return [k for k in params if k in df]


def connections(result) -> pd.DataFrame | None:
    """Per sweep point and connection, over the replications: goodput (Mb/s),
    timeouts, the longest backoff (2^k) and the time on retransmit timers (s); and per
    point Jain's fairness index and the starved connections. None if no connection
    timed out and none starved (or the result predates these columns)."""
    # Whether anything contended, from two columns: most results show nothing, and a
    # stored one of 10^5 runs need not read the rest (memory per run, test_bounds).
    df = result.rows_columns(["timeouts", "starved"])
    if df.empty or any(c not in df for c in ("timeouts", "starved")):
        return None
    timed_out = df["timeouts"].fillna(0).gt(0).any()
    starved = df["starved"].fillna("").astype(str).ne("").any()
    if not (timed_out or starved):
        return None
    ident = ("run", "connection", "transmitter", "receiver", "limited_by")
    df = result.rows_columns([*result.params, *ident, *CONNECTION_COLUMNS, *RUN_COLUMNS])
    if any(c not in df for c in (*CONNECTION_COLUMNS, *RUN_COLUMNS)):
        return None
    keys = _keys(result, df)
    g = df.assign(goodput_mbps=df["goodput_bps"] / 1e6).groupby(
        [*keys, "connection", "transmitter", "receiver"], sort=False, dropna=False
    )
    out = g.agg(
        goodput_mbps=("goodput_mbps", "mean"),
        timeouts=("timeouts", "mean"),
        max_backoff=("max_backoff", "max"),
        rexmt_wait_s=("rexmt_wait_s", "mean"),
        jain=("fairness_jain", "mean"),
        # A list of strings is stored joined by " -> " (results.sim_rows): one per connection.
        starved=(
            "starved",
            lambda s: "; ".join(
                dict.fromkeys(str(x).replace(" -> ", ", ") for x in s.dropna() if x)
            ),
        ),
        limited_by=("limited_by", "first"),
    ).reset_index()
    return out


def ports(result) -> pd.DataFrame | None:
    """Per sweep point and switch port that lost cells, over the replications: cells
    carried, of them delivered and wasted (and the wasted share), the idle time while
    a connection through it ran, and the cells lost by cause. None if no port lost any."""
    lost = result.rows_columns(["cells_lost", "cells_wasted"], "ports")
    if lost.empty or "cells_wasted" not in lost or not lost["cells_lost"].fillna(0).gt(0).any():
        return None  # (read from two columns: most results lost nothing)
    p = result.ports()
    p = p[p["cells_lost"].fillna(0) > 0]
    rows = result.rows_columns(["run", *result.params])
    keys = _keys(result, rows)
    if keys:
        p = p.merge(rows[["run", *keys]].drop_duplicates("run"), on="run", how="left")
    agg = {
        "cells_out": ("cells_out", "mean"),
        "cells_delivered": ("cells_delivered", "mean"),
        "cells_wasted": ("cells_wasted", "mean"),
        "idle_s": ("idle_s", "mean"),
        **{f"lost_{c}": (f"cells_lost_{c}", "mean") for c in LOSS_CAUSES},
    }
    out = p.groupby([*keys, "port", "host"], sort=False, dropna=False).agg(**agg).reset_index()
    out.insert(
        out.columns.get_loc("idle_s"),
        "wasted_%",
        100 * out["cells_wasted"] / out["cells_out"].where(out["cells_out"] > 0),
    )
    return out


def lines(result) -> list[str]:
    """The summary's lines under the throughput table (empty where nothing contended)."""
    out = []
    c = connections(result)
    if c is not None:
        out.append(
            "# contention: goodput Mb/s, retransmit timeouts, longest backoff (2^k), "
            "s waiting on retransmit timers; per point Jain's fairness index and the "
            "connections under 5% of their fair share (starved)"
        )
        out += c.to_string(index=False, float_format=lambda x: f"{x:.3f}").splitlines()
    p = ports(result)
    if p is not None:
        out.append(
            "# ports that lost cells: cells carried, of PDUs delivered and not (wasted), idle "
            "s while a connection through it ran, cells lost by cause"
        )
        out += p.to_string(index=False, float_format=lambda x: f"{x:.3f}").splitlines()
    return out


def _cell_seconds(result) -> dict[str, float]:
    """Each switch port's cell time (s), by the name the ports table gives it: the port
    to a host runs at the host's physical layer, a trunk's at the trunk's."""
    from cellbench import calc

    tb = result.meta.get("testbed") or {}
    phys = {h["name"]: h.get("phy") for h in tb.get("hosts", [])}
    for t in tb.get("trunks", []):
        phys[f"trunk {t['from']}->{t['to']}"] = phys[f"trunk {t['to']}->{t['from']}"] = t["phy"]
    out = {}
    for name, phy in phys.items():
        try:
            out[name] = 1 / calc.phy_rates(phy)["cells_per_sec"]
        except (ValueError, TypeError):
            continue  # an Ethernet interface: no cells
    return out


def port_time(result) -> pd.DataFrame | None:
    """Per run, how the busiest switch port's time went (the congested port where every
    connection's data meets): its span (the connections' union, ``idle_s`` plus its cells'
    time), the shares of it spent on cells of PDUs delivered and of PDUs never delivered
    (wasted) and idle while a connection had data, in %, the rest being cells of PDUs in
    flight at the end; and the effective throughput, the bytes the run's receivers read
    over the span against the port's cell payload rate (48 bytes a cell). By
    construction delivered + wasted + idle + in flight = 100%. None for a result
    without these columns."""
    p = result.ports()
    if p.empty or "cells_wasted" not in p or p["idle_s"].isna().all():
        return None
    cell_s = _cell_seconds(result)
    p = p[p["host"].isin(cell_s) & p["idle_s"].notna()]
    busiest = p.loc[p.groupby("run")["cells_out"].idxmax()].copy()
    busiest["cell_s"] = busiest["host"].map(cell_s)
    busiest["span_s"] = busiest["cells_out"] * busiest["cell_s"] + busiest["idle_s"]
    span_cells = busiest["span_s"] / busiest["cell_s"]
    for what in ("delivered", "wasted"):
        busiest[f"{what}_pct"] = 100 * busiest[f"cells_{what}"] / span_cells
    busiest["idle_pct"] = 100 * busiest["idle_s"] / busiest["span_s"]
    rows = result.rows_columns(["run", "bytes_received"])
    received = rows.groupby("run")["bytes_received"].sum()
    payload_bps = 48 * 8 / busiest["cell_s"]
    busiest["effective"] = (
        busiest["run"].map(received) * 8 / busiest["span_s"].where(busiest["span_s"] > 0)
    ) / payload_bps
    return busiest.reset_index(drop=True)


#: A connection under this share of its fair share is starved (the simulator's
#: ``sim::explain::capture::STARVED_SHARE``).
STARVED_SHARE = 0.05


def name_capture(rows: list[dict]) -> None:
    """For an engine that runs real TCPs (the emulator), the simulator's fairness and
    capture (``sim/explain/capture.rs``) from one run's rows, in place: every row gets
    the run's Jain's index over its TCP connections' rates (the sender's) and the starved ones; a
    TCP connection starved while another with the same receiver took more than its fair
    share, at a network that lost its cells, is ``capture``. The port is taken to be the
    one to the receiver (the rows name no port), and the kernel's counts stand for the
    simulator's timers (retransmissions, from TCP_INFO)."""

    def rate(r: dict) -> float:
        # The sender's rate over the test's length: a real receiver's goodput is over
        # its own active time, which for a starved connection may be one late burst.
        return float(r.get("throughput_bps") or 0.0)

    tcp = [r for r in rows if r.get("protocol") == "tcp"]
    xs = [rate(r) for r in tcp]
    squares = sum(x * x for x in xs)
    jain = sum(xs) ** 2 / (len(xs) * squares) if squares else None
    starved = []
    for r in tcp:
        group = [o for o in tcp if o["receiver"] == r["receiver"]]
        fair = sum(rate(o) for o in group) / len(group)
        if len(group) < 2 or rate(r) >= STARVED_SHARE * fair:
            continue
        starved.append(f"{r['transmitter']}->{r['receiver']}")
        holder = max(group, key=rate)
        if not r.get("cells_lost") or rate(holder) <= fair:
            continue
        before = f"{r.get('limited_by') or 'undetermined'}: {r.get('limit_evidence') or ''}"
        r["limited_by"] = vocab.CAPTURE
        r["limit_evidence"] = (
            f"starved: {rate(r) / 1e6:.3f} Mb/s, {100 * rate(r) / fair:.1f}% of its fair "
            f"share ({fair / 1e6:.2f} Mb/s: {len(group)} connections into "
            f"{r['receiver']}); {holder['transmitter']}->{holder['receiver']} held the port "
            f"at {rate(holder) / 1e6:.2f} Mb/s while this one lost {r['cells_lost']} cells "
            f"and retransmitted {r.get('retransmits') or 0} times (TCP_INFO); {before}"
        ).rstrip(": ")
    for r in rows:
        r["fairness_jain"] = jain
        r["starved"] = " -> ".join(starved)
