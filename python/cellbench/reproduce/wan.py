"""The wide-area studies, built from the described setups (docs/wan-window.md,
wan-mismatch.md, europe-vp.md).

- ``wan-window``: two DEC Alphas (OSF/1: Reno TCP with RFC 1323) on OC-3c,
  600 km of fibre, 8.8 ms round trip; windows 512 B .. 128 KB.
- ``wan-mismatch``: OC-3c senders into a 100 Mb/s TAXI receiver 600 km away,
  through a 256-cell switch port where the rates meet; with and without
  per-VC pacing (cases 1 and 2; case 3 and Experiments 5 and 6 are experiment files:
  reproduce.wan_mismatch).
- ``europe-vp``: a SPARCstation 10 on 155 Mb/s SDH, E3 into a public network
  whose switch polices a 61,000 cell/s VP with GCRA(16.39 µs, 101 µs); 8 ms
  ping RTT; adapter cell spacing 19.45/17.98/16.50/16.01 µs or none.

Every parameter comes from the setup and the physical facts; nothing is
tuned to a published number. Each study returns one row per connection per
configuration and replication, parameters named as in the experiment language.

``wan-window`` and ``europe-vp`` are experiments like any other (wan-window.netspec,
europe-vp.netspec beside this module, run by ``reproduce.study``), so they store,
resume and run on Dask as ``cellbench run`` does. ``wan-mismatch`` runs specs
built from its testbed preset straight on the simulator, for three things the
language cannot say yet: its cases change which connections exist (the runner
refuses a sweep that does), each case pairs with its own pacing rate (a sweep is
a product), and its hosts run senders first, where an experiment orders hosts as
its tests name them (own, then peer) -- and the simulator's results depend on
that order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from cellbench import _native
from cellbench.data.published import CLAIMS, wan_window_table
from cellbench.experiment import testbed
from cellbench.experiment.model import host_spec
from cellbench.experiment.results import Result
from cellbench.reproduce import study

if TYPE_CHECKING:
    import pandas as pd

# --- wan-mismatch ---------------------------------------------------------------------------


def wan_mismatch_configs(seconds: float = 10.0):
    """The cases on the wan-mismatch testbed preset: senders at west, the TAXI
    receiver at east; 128 KB windows, 64 KB writes, each sender paced or not."""
    tb = testbed.preset("wan-mismatch")
    receiver = host_spec(tb.hosts["sparc10"])
    w, write = 131072, 65536
    cases = {
        # case 1: one OC-3c sender; unpaced, or paced at 70 Mb/s.
        1: (["alpha1"], [None, 70.0]),
        # case 2: two OC-3c senders at one site; unpaced, or each paced at 35 Mb/s.
        2: (["alpha1", "alpha2"], [None, 35.0]),
        # case 3 (the slides' Experiment 4) is two runs on other hosts, experiment
        # files of their own: reproduce.wan_mismatch.
    }
    for case, (names, pacings) in cases.items():
        senders = [host_spec(tb.hosts[n]) for n in names]
        for pacing in pacings:
            conns = []
            for s in senders:
                can_pace = s["phy"] == "oc3c"
                conns.append(
                    {
                        "transmitter": s["name"],
                        "receiver": receiver["name"],
                        "encap": tb.encap,
                        "mtu": tb.mtu,
                        "sndbuf": w,
                        "rcvbuf": w,
                        "traffic": {"type": "full", "blocksize": write, "duration_s": seconds},
                    }
                    | ({"pacing_mbps": pacing} if pacing and can_pace else {})
                )
            spec = {
                "hosts": [*senders, receiver],
                "trunks": [dict(t) for t in tb.trunks],
                "connections": conns,
            }
            yield {"case": case, "pacing_mbps": pacing, "window": w, "write_size": write}, spec


#: The study that runs its specs on the simulator directly.
STUDIES: dict[str, Callable[..., Iterable]] = {"wan-mismatch": wan_mismatch_configs}


# --- the studies as experiments -----------------------------------------------------------

#: Study -> its sweep parameters, in the rows' order (named as the JSON rows name them).
EXPERIMENTS = {
    "wan-window": ["window"],
    "europe-vp": ["spacing_us", "window", "write_size"],
}


def _wan_window_sets(windows: Iterable[int] | None = None, seconds: float | None = None) -> dict:
    sets: dict[str, Any] = {}
    if windows is not None:
        sets["window"] = list(windows)
    if seconds is not None:
        sets["seconds"] = seconds
    return sets


def _europe_vp_sets(
    spacings: Iterable[float | None] | None = None,
    windows: Iterable[int] | None = None,
    writes: Iterable[int] | None = None,
    nbytes: int | None = None,
    stall: bool = True,
) -> dict:
    # Only a change is a --set: the default run's result names the file's parameters alone.
    sets: dict[str, Any] = {} if stall else {"testbed.host.sparc10-a.stall": 0}
    if spacings is not None:
        sets["spacing_us"] = ["off" if x is None else x for x in spacings]
    if windows is not None:
        sets["window"] = list(windows)
    if writes is not None:
        sets["write_size"] = list(writes)
    if nbytes is not None:
        sets["nbytes"] = nbytes
    return sets


#: Study -> its options (the Python API's names) as --set values of its experiment file.
_SETS: dict[str, Callable[..., dict]] = {
    "wan-window": _wan_window_sets,
    "europe-vp": _europe_vp_sets,
}


def _param(key: str, value: Any) -> Any:
    """A stored sweep value as the rows give it: spacing ``off`` is None (back to back)."""
    if key == "spacing_us":
        return None if value == "off" else float(value)
    return int(value)


def rows(name: str, result: Result) -> list[dict]:
    """A WAN experiment's stored (or in-memory) result as the study's rows: one per
    connection per configuration and replication, replications outermost."""
    import pandas as pd

    df = result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")
    out = []
    for r in df.to_dict(orient="records"):
        p = {k: _param(k, r[k]) for k in EXPERIMENTS[name]}
        out.append(
            _row(
                p | {"replication": int(r["replication"]), "seed": int(r["seed"])},
                {k: r[k] for k in _MEASURES},
                None if pd.isna(r["met_contract"]) else bool(r["met_contract"]),
            )
        )
    return out


#: The simulator's per-connection values a row carries (with their Python types).
_MEASURES = {
    "transmitter": str,
    "receiver": str,
    "completed": bool,
    "bytes": int,
    "throughput_bps": float,
    "data_pdus_sent": int,
    "data_pdus_lost": int,
    "cells_lost": int,
    "cells_policed": int,
    "retransmitted_segments": int,
    "timeouts": int,
    "limited_by": str,
    "limit_evidence": str,
}


def _row(params: dict, c: dict, met_contract: bool | None) -> dict:
    # Stored rows come back as numpy values: make them the simulator's own types.
    c = {k: None if c[k] is None else kind(c[k]) for k, kind in _MEASURES.items()}
    sent = c["data_pdus_sent"]
    row = params | {
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
    if met_contract is not None:
        row["met_contract"] = met_contract
    return row


def frame(name: str, rows: list[dict]) -> pd.DataFrame:
    """The study's rows as a DataFrame (wan-window: beside the published throughput)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    if name == "wan-window":
        published = wan_window_table()
        df["published_bps"] = [published.get(int(w)) for w in df.window]
    return df


def run(
    name: str,
    *,
    replications: int = 1,
    seed: int = 1,
    workers: int = 0,
    out: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    dask: str | None = None,
    progress: bool = False,
    series: bool = False,
    **options,
) -> pd.DataFrame:
    """Run a WAN study; one row per connection per configuration and replication.

    ``out``/``resume``/``overwrite``/``dask`` (wan-window and europe-vp) mean what they mean for
    ``cellbench run``; the stored result gives the same rows (``rows``)."""
    if replications < 1:
        raise ValueError(f"replications {replications}: must be at least 1")
    if name in EXPERIMENTS:
        result = study.run(
            name,
            replications=replications,
            seed=seed,
            workers=workers,
            out=out,
            resume=resume,
            overwrite=overwrite,
            dask=dask,
            progress=progress,
            series=series,
            **_SETS[name](**options),
        )
        return frame(name, rows(name, result))
    if out is not None or resume or dask is not None or series:
        raise ValueError(
            f"{name} runs on the simulator directly: it has no out, resume, dask or series"
        )
    configs = list(STUDIES[name](**options))
    specs, params = [], []
    for rep in range(replications):
        for p, spec in configs:
            specs.append(spec | {"seed": seed, "replication": rep})
            params.append(p | {"replication": rep, "seed": seed})
    results = _native.simulate_many(specs, workers=workers)
    out_rows = []
    for p, r in zip(params, results):
        policers = r["policers"]
        met = all(x["met_contract"] for x in policers) if policers else None
        out_rows.extend(_row(p, c, met) for c in r["connections"])
    return frame(name, out_rows)


def report(name: str, df: pd.DataFrame) -> str:
    """A readable table with units."""
    import pandas as pd

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
    if name in CLAIMS:
        foot += "\n" + CLAIMS[name] + "; cellbench fidelity compares"
    return head + "\n" + show[cols].to_string(index=False) + "\n" + foot
