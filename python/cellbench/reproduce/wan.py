"""The wide-area studies of TESTBEDS.md, built from the described setups.

- ``wan-window``: two DEC Alphas (OSF/1: Reno TCP with RFC 1323) on OC-3c,
  600 km of fibre, 8.8 ms round trip; windows 512 B .. 128 KB.
- ``wan-mismatch``: OC-3c senders into a 100 Mb/s TAXI receiver 600 km away,
  through a 256-cell switch port where the rates meet; with and without
  per-VC pacing (cases 1-3).
- ``europe-vp``: a SPARCstation 10 on 155 Mb/s SDH, E3 into a public network
  whose switch polices a 61,000 cell/s VP with GCRA(16.39 µs, 101 µs); 8 ms
  ping RTT; adapter cell spacing 19.45/17.98/16.50/16.01 µs or none.

Every parameter comes from the setup and the physical facts; nothing is
tuned to a published number. Each study returns one row per connection per
configuration and replication, parameters named as in the experiment language.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from cellbench import _native
from cellbench.reproduce.published import wan_window_table

#: One-way delay of 600 km of fibre (5 µs/km).
FIBRE_600KM_MS = 3.0


def _alpha(name: str, site: str, **extra: Any) -> dict:
    return {
        "name": name,
        "site": site,
        "profile": "alpha-3000",
        "phy": "oc3c",
        "flavour": "osf1",
    } | extra


def _tcp(tx: str, rx: str, window: int, write: int, seconds: float, **extra: Any) -> dict:
    return {
        "transmitter": tx,
        "receiver": rx,
        "encap": "llc-snap",
        "sndbuf": window,
        "rcvbuf": window,
        "traffic": {"type": "full", "blocksize": write, "duration_s": seconds},
    } | extra


# --- wan-window -----------------------------------------------------------------------------

WAN_WINDOWS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]


def wan_window_configs(windows: Iterable[int] = WAN_WINDOWS, seconds: float = 10.0):
    for w in windows:
        spec = {
            "hosts": [_alpha("alpha-west", "west"), _alpha("alpha-east", "east")],
            # The 8.8 ms round trip is the path's: the trunk carries all of it.
            "trunks": [{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": 4.4}],
            "connections": [_tcp("alpha-west", "alpha-east", w, 65536, seconds)],
        }
        yield {"window": w}, spec


# --- wan-mismatch ---------------------------------------------------------------------------


def wan_mismatch_configs(seconds: float = 10.0):
    receiver = {"name": "sparc10", "site": "east", "profile": "sparc-10", "phy": "taxi100",
                "flavour": "osf1"}  # fmt: skip
    trunk = [{"from": "west", "to": "east", "phy": "oc3c", "delay_ms": FIBRE_600KM_MS}]
    w, write = 131072, 65536
    cases = {
        # case 1: one OC-3c sender; unpaced, or paced at 70 Mb/s.
        1: ([_alpha("alpha1", "west")], [None, 70.0]),
        # case 2: two OC-3c senders at one site; unpaced, or each paced at 35 Mb/s.
        2: ([_alpha("alpha1", "west"), _alpha("alpha2", "west")], [None, 35.0]),
        # case 3: a sender that cannot pace (TAXI adapter) beside an OC-3c one
        # that paces at 35 Mb/s (or does not).
        3: (
            [
                {
                    "name": "taxi-sender",
                    "site": "west",
                    "profile": "sparc-10",
                    "phy": "taxi100",
                    "flavour": "osf1",
                },
                _alpha("alpha1", "west"),
            ],  # fmt: skip
            [None, 35.0],
        ),
    }
    for case, (senders, pacings) in cases.items():
        for pacing in pacings:
            conns = []
            for s in senders:
                can_pace = s["phy"] == "oc3c"
                extra = {"pacing_mbps": pacing} if pacing and can_pace else {}
                conns.append(_tcp(s["name"], "sparc10", w, write, seconds, **extra))
            spec = {"hosts": [*senders, receiver], "trunks": trunk, "connections": conns}
            yield {"case": case, "pacing_mbps": pacing, "window": w, "write_size": write}, spec


# --- europe-vp ------------------------------------------------------------------------------

EUROPE_SPACINGS: list[float | None] = [None, 19.45, 17.98, 16.50, 16.01]
EUROPE_WINDOWS = [16384, 32768, 49152]
EUROPE_WRITES = [4096, 8192, 16384, 32768, 65536]
#: The VP: 61,000 cells/s, GCRA(T = 16.39 µs, τ = 101 µs).
VP_T_US, VP_TAU_US = 16.39, 101.0


def europe_vp_configs(
    spacings: Iterable[float | None] = EUROPE_SPACINGS,
    windows: Iterable[int] = EUROPE_WINDOWS,
    writes: Iterable[int] = EUROPE_WRITES,
    nbytes: int = 16 << 20,
    stall: bool = True,
):
    for spacing, window, write in itertools.product(spacings, windows, writes):
        sender = {"name": "sparc10-a", "site": "lan-a", "profile": "sparc-10", "phy": "oc3c",
                  "spacing_us": spacing, "stall": stall}  # fmt: skip
        receiver = {"name": "sparc10-b", "site": "lan-b", "profile": "sparc-10", "phy": "taxi100"}
        spec = {
            "hosts": [sender, receiver],
            # 400 km: 2 ms of fibre each way; the 8 ms ping RTT leaves 2 ms each way
            # to the public network's equipment, put on the long hop.
            "trunks": [
                {"from": "lan-a", "to": "public", "phy": "e3", "delay_ms": 0.05},
                {
                    "from": "public",
                    "to": "lan-b",
                    "phy": "e3",
                    "delay_ms": 3.95,
                    "upc": {"t_us": VP_T_US, "tau_us": VP_TAU_US, "action": "discard"},
                },  # fmt: skip
            ],
            "connections": [
                {
                    "transmitter": "sparc10-a",
                    "receiver": "sparc10-b",
                    "sndbuf": window,
                    "rcvbuf": window,
                    "traffic": {"type": "full", "blocksize": write, "nbytes": nbytes},
                }
            ],  # fmt: skip
        }
        yield {"spacing_us": spacing, "window": window, "write_size": write}, spec


STUDIES: dict[str, Callable[..., Iterable]] = {
    "wan-window": wan_window_configs,
    "wan-mismatch": wan_mismatch_configs,
    "europe-vp": europe_vp_configs,
}


def run(
    name: str, *, replications: int = 1, seed: int = 1, workers: int = 0, **options
) -> pd.DataFrame:
    """Run a WAN study; one row per connection per configuration and replication."""
    if replications < 1:
        raise ValueError(f"replications {replications}: must be at least 1")
    configs = list(STUDIES[name](**options))
    specs, params = [], []
    for rep in range(replications):
        for p, spec in configs:
            specs.append(spec | {"seed": seed, "replication": rep})
            params.append(p | {"replication": rep, "seed": seed})
    results = _native.simulate_many(specs, workers=workers)
    rows = []
    for p, r in zip(params, results):
        policers = r["policers"]
        for c in r["connections"]:
            sent = c["data_pdus_sent"]
            row = p | {
                "transmitter": c["transmitter"],
                "receiver": c["receiver"],
                "completed": c["completed"],
                "bytes": c["bytes"],
                "throughput_bps": c["throughput_bps"],
                "segment_loss_rate": c["data_pdus_lost"] / sent if sent else 0.0,
                "cells_lost": c["cells_lost"],
                "cells_policed": c["cells_policed"],
                "retransmitted_segments": c["retransmitted_segments"],
                "timeouts": c["timeouts"],
                "limited_by": c["limited_by"],
                "limit_evidence": c["limit_evidence"],
            }
            if policers:
                row["met_contract"] = all(x["met_contract"] for x in policers)
            rows.append(row)
    df = pd.DataFrame(rows)
    if name == "wan-window":
        published = wan_window_table()
        df["published_bps"] = [published.get(int(w)) for w in df.window]
    return df


def report(name: str, df: pd.DataFrame) -> str:
    """A readable table with units."""
    show = df.copy()
    show["Mb/s"] = (show.throughput_bps / 1e6).round(3)
    show["seg loss"] = show.segment_loss_rate.map(lambda x: f"{100 * x:.2f}%")
    cols = [c for c in ("case", "pacing_mbps", "spacing_us", "window", "write_size") if c in show]
    cols += ["transmitter"] if name == "wan-mismatch" else []
    cols += ["Mb/s", "seg loss", "cells_lost", "cells_policed", "timeouts"]
    if name == "wan-window":
        show["published Mb/s"] = show.published_bps / 1e6
        show["error"] = (100 * (show.throughput_bps - show.published_bps) / show.published_bps).map(
            lambda x: f"{x:+.1f}%"
        )
        cols += ["published Mb/s", "error"]
    if "met_contract" in show:
        show["contract"] = show.met_contract.map({True: "met", False: "VIOLATED"})
        cols += ["contract"]
    show["limited by"] = show.limited_by
    cols += ["limited by"]
    if "pacing_mbps" in show:
        show["pacing_mbps"] = show.pacing_mbps.map(lambda x: "none" if pd.isna(x) else f"{x:g}")
    if "spacing_us" in show:
        show["spacing_us"] = show.spacing_us.map(lambda x: "none" if pd.isna(x) else f"{x:g}")
    head = f"{name}: throughput in Mb/s (10^6 bit/s); segment loss = data PDUs lost / sent"
    foot = "limited by: what bound each connection (--json: limited_by, limit_evidence)"
    return head + "\n" + show[cols].to_string(index=False) + "\n" + foot
