"""lan-buffers: the ATM LAN send x receive buffer sweep (docs/lan-buffers.md).

Two SPARCstation IPCs (SunOS 4.1.1 TCP) on 100 Mb/s TAXI through one switch,
MTU 9188, ttcp 32 MB in 8 KB writes; send and receive buffers each 16K..48K
and 51K. Compared with the published grid (ttcp's Mbit/s, 2^20 bit/s).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable

from cellbench import _native
from cellbench.data.published import LAN_ANOMALOUS, lan_buffer_table, size_label
from cellbench.experiment.model import TIME_LIMIT_S
from cellbench.experiment.results import cycle_columns, most_common_limit
from cellbench.reproduce import study

if TYPE_CHECKING:
    import pandas as pd

#: The study's buffer sizes: 16K, 20K, ... 48K and 51K (52428, SunOS 4.1.1's largest).
SIZES = [k * 1024 for k in range(16, 49, 4)] + [52428]
DEFAULT_REPLICATIONS = 50
TRANSFER_BYTES = 32 * 1024 * 1024
#: The study as an experiment file.
EXPERIMENT = study.experiment_file("lan-buffers")


def run(
    *,
    send_buffers: Iterable[int] = SIZES,
    recv_buffers: Iterable[int] = SIZES,
    replications: int = DEFAULT_REPLICATIONS,
    seed: int = 1,
    workers: int = 0,
    progress: Callable[[int], None] | bool | None = None,
    out: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    dask: str | None = None,
    trace: bool = False,
    series: bool = False,
    buflen: int = 8192,
    nbytes: int = TRANSFER_BYTES,
    mtu: int = 9188,
    profile: str = "sparc-ipc",
    flavour: str = "sunos411",
    nodelay: bool = False,
    port_buffer_cells: int = 256,
) -> pd.DataFrame:
    """Run the sweep; one row per configuration and replication.

    The study is an experiment like any other (``lan-buffers.netspec`` beside
    this module, run by ``cellbench.run``): ``out``/``resume``/``overwrite``/``dask``/``workers``
    mean what they mean there, and a stored result can be shown and plotted.
    With ``trace`` the transfers run straight on the simulator, each from the
    study's run spec (``_native.lan_buffers_spec``, run by ``_native.simulate_many``),
    and keep their segment trace (``trace``) and the lock-step evidence: the steady
    timer-driven cycle (``cycle_*`` columns; None where timer ACKs do not pace it).
    """
    if replications < 1:
        raise ValueError(f"replications {replications}: must be at least 1")
    sends, recvs = list(send_buffers), list(recv_buffers)
    options = dict(
        buflen=buflen, nbytes=nbytes, mtu=mtu, profile=profile, flavour=flavour,
        nodelay=nodelay, port_buffer_cells=port_buffer_cells,
    )  # fmt: skip
    # Check every configuration with the simulator's own rules before anything runs
    # (the experiment would clamp a buffer the TCP flavour refuses; the study refuses it).
    for snd in sends:
        for rcv in recvs:
            _native.lan_buffers_spec(snd, rcv, seed=seed, **options)
    if trace:
        return _traced(sends, recvs, replications, seed, workers, **options)
    result = study.run(
        "lan-buffers",
        out=out,
        resume=resume,
        overwrite=overwrite,
        dask=dask,
        workers=workers,
        replications=replications,
        seed=seed,
        progress=bool(progress),
        series=series,
        snd=sends,
        rcv=recvs,
        nbytes=nbytes,
        nodelay=int(nodelay),
        set={
            "sender.type.blocksize": buflen,
            "receiver.type.blocksize": buflen,
            "testbed.mtu": mtu,
            "testbed.defaults.profile": profile,
            "testbed.defaults.flavour": flavour,
            "testbed.switch.buffer_cells": port_buffer_cells,
        },
    )
    df = result.to_pandas()
    df["send_buffer"] = df["sndbuf"].astype(int)
    df["recv_buffer"] = df["rcvbuf"].astype(int)
    df = df.sort_values(["send_buffer", "recv_buffer", "replication"], kind="stable")
    first = ["send_buffer", "recv_buffer", "seed", "replication"]
    return df[first + [c for c in df.columns if c not in first]].reset_index(drop=True)


def _traced(sends, recvs, replications, seed, workers, **options) -> pd.DataFrame:
    import pandas as pd

    rows = []
    # One batch per configuration: only its traces are held twice (as results and rows).
    for snd in sends:
        for rcv in recvs:
            specs = [
                _native.lan_buffers_spec(
                    snd, rcv, seed=seed, replication=rep, trace=True, **options
                )
                for rep in range(replications)
            ]
            for rep, out in enumerate(_native.simulate_many(specs, workers=workers)):
                [conn] = out["connections"]
                measures = {k: v for k, v in conn.items() if k not in _NOT_COLUMNS}
                rows.append(
                    {
                        "send_buffer": snd,
                        "recv_buffer": rcv,
                        "seed": seed,
                        "replication": rep,
                        **measures,
                        "events": out["events"],
                        "sim_seconds": out["sim_seconds"],
                        **cycle_columns(conn),
                    }
                )
    return pd.DataFrame(rows)


#: Keys of a simulated connection that are not columns of the traced rows: the
#: ends (always A and B here), the cycle, flattened into ``cycle_*``, and the trace
#: as data (the rows keep its lines).
_NOT_COLUMNS = {"transmitter", "receiver", "lockstep_cycle", "trace_records"}


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: mean throughput beside the published mean."""
    published = lan_buffer_table()
    # Transfers the simulated-time limit cut: their rate is the rate so far, not the
    # transfer's; a cell with any is not compared with the published figure.
    cut = df["completed"].eq(False).fillna(False).astype(int)
    g = df.assign(cut=cut).groupby(["send_buffer", "recv_buffer"], sort=True)
    out = g.agg(
        throughput_mbit_ttcp=("throughput_mbit_ttcp", "mean"),
        min_mbit_ttcp=("throughput_mbit_ttcp", "min"),
        max_mbit_ttcp=("throughput_mbit_ttcp", "max"),
        lockstep_fraction=("lockstep", "mean"),
        replications=("replication", "count"),
        truncated=("cut", "sum"),
    ).reset_index()
    out["lockstep"] = out["lockstep_fraction"] > 0.5
    # What bound most of a cell's transfers (ties: the first replication's).
    out["limited_by"] = [most_common_limit(rows)[0] for _, rows in g]
    out["published"] = [
        published.get((int(s), int(r))) for s, r in zip(out.send_buffer, out.recv_buffer)
    ]
    out["published_anomalous"] = [
        (int(s), int(r)) in LAN_ANOMALOUS for s, r in zip(out.send_buffer, out.recv_buffer)
    ]
    return out


def to_json(summary: pd.DataFrame) -> dict:
    """The issue's contract: {"cells": [{send_buffer, recv_buffer, throughput_mbit_ttcp,
    published, lockstep}, ...]} (bytes; throughput is the mean over replications),
    and what bound most of each cell's transfers (``limited_by``)."""
    cells = []
    for row in summary.itertuples(index=False):
        cells.append(
            {
                "send_buffer": int(row.send_buffer),
                "recv_buffer": int(row.recv_buffer),
                "throughput_mbit_ttcp": round(float(row.throughput_mbit_ttcp), 6),
                "published": row.published,
                "lockstep": bool(row.lockstep),
                "lockstep_fraction": round(float(row.lockstep_fraction), 4),
                "replications": int(row.replications),
                "truncated": int(row.truncated),
                "limited_by": row.limited_by,
            }
        )
    return {"unit": "Mbit/s (2^20 bit/s, as ttcp prints)", "cells": cells}


def _grid(summary: pd.DataFrame, value: Callable[[Any], str]) -> list[str]:
    sends = sorted(summary.send_buffer.unique())
    recvs = sorted(summary.recv_buffer.unique())
    by = {(int(r.send_buffer), int(r.recv_buffer)): r for r in summary.itertuples(index=False)}
    lines = ["snd\\rcv " + "".join(f"{size_label(int(r)):>7}" for r in recvs)]
    for s in sends:
        cells = "".join(f"{value(by[(int(s), int(r))]):>7}" for r in recvs)
        lines.append(f"{size_label(int(s)):>7} " + cells)
    return lines


def report(summary: pd.DataFrame, replications: int, seed: int) -> str:
    """The two grids side by side, lock-step cells marked, and the comparison."""

    def sim(row: Any) -> str:
        mark = "t" if row.truncated else "*" if row.lockstep else " "
        return f"{row.throughput_mbit_ttcp:.2f}" + mark

    def pub(row: Any) -> str:
        if row.published is None:
            return "-  "
        return f"{row.published:.2f}" + ("*" if row.published_anomalous else " ")

    left = _grid(summary, sim)
    right = _grid(summary, pub)
    width = max(len(x) for x in left)
    out = [
        f"lan-buffers: mean ttcp throughput in Mbit/s (2^20 bit/s, ttcp's unit), "
        f"{replications} replication(s) per cell, seed {seed}",
        "rows: sender SO_SNDBUF; columns: receiver SO_RCVBUF; "
        "* = Nagle/delayed-ACK lock-step (simulated) / marked anomalous (published)",
        "",
        f"{'simulated (cellbench)':<{width}}   published",
    ]
    out += [f"{a:<{width}}   {b}" for a, b in zip(left, right)]
    cut = summary[summary.truncated > 0]
    if len(cut):
        out += [
            "",
            f"t = cut by the simulated-time limit ({TIME_LIMIT_S:g} s) before its bytes were "
            f"sent: {len(cut)} cell(s), their rate so far, not compared with the published "
            "figure (fewer --nbytes)",
        ]
    normal = summary[
        ~summary.published_anomalous & summary.published.notna() & (summary.truncated == 0)
    ]
    if len(normal):
        err = (normal.throughput_mbit_ttcp - normal.published) / normal.published
        worst = err.abs().idxmax()
        w = summary.loc[worst]
        out += [
            "",
            f"un-anomalous cells: {len(normal)}; mean |error| {100 * err.abs().mean():.1f}%, "
            f"worst {100 * err[worst]:+.1f}% at send {size_label(int(w.send_buffer))} / "
            f"recv {size_label(int(w.recv_buffer))} "
            f"({w.throughput_mbit_ttcp:.2f} vs {w.published:.2f})",
        ]
    anomalous = summary[summary.published_anomalous]
    if len(anomalous):
        agree = (anomalous.lockstep & (anomalous.throughput_mbit_ttcp < 2)).sum()
        out.append(f"published anomalous cells reproduced as lock-steps: {agree}/{len(anomalous)}")
    extra = summary[summary.lockstep & ~summary.published_anomalous]
    if len(extra):
        out.append(f"lock-steps not in the published table: {len(extra)}")
    limits = summary.limited_by.value_counts()
    if len(limits):
        out.append("limited by (cells): " + ", ".join(f"{name} {n}" for name, n in limits.items()))
    return "\n".join(out)
