"""What every wan-contention part's rows share: where cells were lost (the ports on each
stream's path), what bound a stream, what a UDP stream carried, and the parts' shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cellbench import vocab
from cellbench.reproduce import study
from cellbench.reproduce.study import Run

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result


def experiment(part: str) -> str:
    return f"wan-contention-{part}"


def one(part: str) -> Callable[[study.Options], list[Run]]:
    return lambda o: [Run(experiment(part), where=part)]


def lost_at(result: Result) -> dict[int, dict[str, int]]:
    """Per run, the ports that lost cells and how many (``trunk kc->lawrence``: the
    hub's output port onto lawrence's access link; a host name: its access port)."""
    ports = result.ports()
    out: dict[int, dict[str, int]] = {}
    for r in ports[ports["cells_lost"] > 0].itertuples(index=False):
        out.setdefault(int(r.run), {})[str(r.host)] = int(r.cells_lost)
    return out


def ports_on_paths(tb: dict, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """The output ports each (transmitter, receiver)'s cells cross, named as results
    name ports: the trunks from the transmitter's site to the receiver's, then the
    receiver's access port; routed by the simulator itself (the fewest trunks:
    ``_native.connection_ports``)."""
    from cellbench import _native
    from cellbench.experiment.model import host_spec
    from cellbench.experiment.testbed import HostSpec

    pairs = list(dict.fromkeys(pairs))
    conns = [
        {"transmitter": a, "receiver": b, "traffic": {"type": "full", "blocksize": 1, "nbytes": 1}}
        for a, b in pairs
    ]
    hosts = [host_spec(HostSpec(**h)) for h in tb["hosts"]]
    spec = {"hosts": hosts, "trunks": tb["trunks"], "connections": conns}
    return dict(zip(pairs, _native.connection_ports(spec)))


def ports_on_path(tb: dict, transmitter: str, receiver: str) -> list[str]:
    """The output ports one connection's cells cross (``ports_on_paths``)."""
    return ports_on_paths(tb, [(transmitter, receiver)])[(transmitter, receiver)]


def loss_note(lost: dict[str, int], path: list[str]) -> tuple[list[str], str]:
    where = [p for p in path if p in lost]
    text = ", ".join(f"{lost[p]} cells at {p}" for p in where)
    return where, text


def streams(result: Result):
    """Each sending stream's row, with the ports on its path that lost cells and what
    bound it (``limit``): (row, lost_at, limited_by, limit_evidence)."""
    lost = lost_at(result)
    rows = senders(result).to_dict(orient="records")
    paths = ports_on_paths(
        result.meta["testbed"], [(r["transmitter"], r["receiver"]) for r in rows]
    )
    for r in rows:
        path = paths[(r["transmitter"], r["receiver"])]
        where, text = loss_note(lost.get(int(r["run"]), {}), path)
        yield (r, where, *limit(r, text))


def udp_carried_bps(r: dict) -> float:
    """A UDP stream's carried load: the datagrams that arrived, over the sender's time
    or the receiver's if longer (its throughput_bps is the sender's, as ttcp measures
    it, and counts datagrams its own interface queue refused)."""
    seconds = max(r["sender_seconds"] or 0.0, r["receiver_seconds"] or 0.0)
    received = (r["datagrams_received"] or 0) * (r["blocksize"] or 0) * 8
    return received / seconds if seconds > 0 else 0.0


def carried_bps(r: dict) -> float:
    return udp_carried_bps(r) if r["protocol"] == "udp" else float(r["throughput_bps"])


def limit(r: dict, text: str) -> tuple[str, str]:
    """What bound a stream: cell loss where it lost cells (named), unless the simulator,
    weighing where the losses were, found its own interface queue refused more of its
    PDUs than the network lost (``interface-queue``); else the simulator's verdict; a
    UDP source whose interface queue refused datagrams was held by its link (or, with
    credits, by the credits its first hop returned)."""
    if r["limited_by"] == vocab.INTERFACE_QUEUE:
        return r["limited_by"], r["limit_evidence"]
    if r["cells_lost"]:
        return vocab.CELL_LOSS, f"lost {text}"
    refused = int(r["pdus_dropped_at_adapter"] or 0)
    if r["protocol"] == "udp" and refused:
        return vocab.LINK, (
            f"the source's interface queue refused {refused} datagrams (ENOBUFS): it "
            "writes faster than its adapter may send"
        )
    return r["limited_by"], r["limit_evidence"]


def senders(result: Result) -> pd.DataFrame:
    """The transmitting connections' rows (sinks are the other end of the same
    connection in the experiment language, and not rows of their own)."""
    df = sorted_rows(result)
    return df.astype(object).where(df.notna(), None)


def sorted_rows(result: Result) -> pd.DataFrame:
    return result.to_pandas().sort_values(["replication", "point", "connection"], kind="stable")


def mbps(x: float) -> str:
    return f"{x / 1e6:.3f}"


def in_mbps(bps: float) -> float:
    return bps / 1e6


def lost_text(x: list[str]) -> str:
    return ", ".join(x) or "-"


def size(n: float) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n:g} B"


def part(
    name: str,
    doc: str,
    runs: Callable,
    collect: Callable,
    published: tuple[tuple[str, ...], Callable] | None = None,
    causes: dict[str, str] | None = None,
    seeded: tuple[str, ...] = (),
    seeded_sets: tuple[str, ...] = (),
) -> study.Part:
    """A part of the study: its tables are printed together (the study's ``report``) and
    its rows share one frame; ``published``: the results of 004 it compares (ids and
    figures), ``causes`` why any of them misses, ``seeded`` those the seed moves (and
    ``seeded_sets`` what their extra seeds' runs need: ``study.Compares``)."""
    compares = ()
    if published is not None:
        ids, figures = published
        compares = (
            study.Compares(
                ids, figures, what=name, causes=dict(causes or {}), seeded=seeded,
                seeded_sets=seeded_sets,
            ),
        )  # fmt: skip
    return study.Part(
        name, doc, runs, collect, report=lambda o, d: "", to_json=lambda o, d: d,
        published=compares,
    )  # fmt: skip
