"""An experiment file as the real engine runs it: connections with their hosts'
addresses, and the tree of parallel and serial groups.

The simulator cuts a top-level serial block into stages and times everything
else from durations; on a real network NetSpec's meaning holds everywhere:
``serial { }`` starts each child when the previous one has ended, on the real
clock, whatever its length, and ``parallel { }`` (and the cluster) starts its
children together. So the real engine keeps the block tree itself.

Socket buffers are the file's (``window``, ``sndbuf``, ``rcvbuf``) unclamped:
a real kernel has its own limits (``net.core.wmem_max``); a test that sets none
leaves the kernel's autotuning on.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from cellbench.experiment import lang, model, sweep
from cellbench.experiment.lang import Block, ExperimentError


@dataclass
class RealConnection:
    conn: model.Connection
    #: The sink's port: the transmitter's ``peer`` port.
    port: int
    sndbuf: int | None
    rcvbuf: int | None


@dataclass
class Group:
    """``parallel`` (children start together) or ``serial`` (one after another)."""

    kind: str
    children: list[Group | int] = field(default_factory=list)

    def connections(self) -> list[int]:
        out: list[int] = []
        for c in self.children:
            out.extend([c] if isinstance(c, int) else c.connections())
        return out


@dataclass
class RealExperiment:
    connections: list[RealConnection]
    root: Group
    #: Host name -> IP address, for every host the experiment uses.
    addresses: dict[str, str]


def random_spec(c: model.Connection, draws: dict) -> dict | None:
    """Random-rate traffic as the agent draws it: the simulator's laws, from the stream
    the simulator gives the same connection (``draws``: the run's seed and replication)."""
    laws = c.traffic.random
    if not laws:
        return None
    out = {"connection": c.index, **draws}
    if "blocksize" in laws:
        out["blocksize"] = laws["blocksize"].to_spec()
    if "period" in laws:
        out["period_us"] = laws["period"].to_spec()
    return out


def largest_block(c: model.Connection) -> int:
    """The write buffer a drawn block size needs: a uniform law's maximum, else the
    largest write (one datagram for UDP), as the simulator caps it."""
    law = c.traffic.random["blocksize"]
    cap = model.MAX_DATAGRAM if c.protocol == "udp" else model.MAX_BLOCK
    if law.kind == "uniform":
        return max(1, min(cap, round(law.params["max"])))
    return cap


def parse_hosts(items: list[str]) -> dict[str, str]:
    """``--host NAME=ADDRESS`` (repeatable) -> {name: address}."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, addr = item.partition("=")
        if not sep or not name:
            raise ExperimentError(None, f"--host {item}: expected NAME=ADDRESS")
        try:
            out[name] = str(ipaddress.ip_address(addr))
        except ValueError:
            raise ExperimentError(
                None, f"--host {item}: {addr!r} is not an IP address (expected e.g. 10.1.0.1)"
            ) from None
    return out


def addresses(exp: model.Experiment, given: dict[str, str]) -> dict[str, str]:
    """Every host's address: --host first, else the testbed's ``address``."""
    names = [h.name for h in exp.hosts]
    for n in given:
        if n not in names:
            raise ExperimentError(
                None,
                f"--host {n}={given[n]}: {n} is not a host of this experiment "
                f"(hosts: {', '.join(names)})",
            )
    out = {}
    for h in exp.hosts:
        addr = given.get(h.name) or h.address
        if addr is None:
            raise ExperimentError(
                None,
                f"host {h.name} has no address: give it in the testbed "
                f"(host {h.name} {{ address = 10.1.0.1; }}) or with --host {h.name}=ADDRESS",
            )
        out[h.name] = addr
    return out


def build(
    text: str,
    file: str,
    point: dict[str, lang.Value],
    params: list[sweep.Param],
    exp: model.Experiment,
    given: dict[str, str],
    *,
    engine: str = "real",
) -> RealExperiment:
    """The real engine's view of one sweep point (``exp`` is the checked experiment).
    ``engine="emu"``: the same, over emulated adapters, which do pace (``pacing=``)."""
    doc = sweep.apply(lang.parse(text, file), point, params)
    cluster = next(b for b in doc.blocks if b.kind == "cluster")
    eps: dict[int, model.Endpoint] = {}
    model._collect_tests(cluster, eps)
    sinks = {(e.own.host, e.own.port): e for e in eps.values() if e.is_sink}
    by_name = {c.name: c for c in exp.connections}
    conns: dict[int, RealConnection] = {}
    for ep in eps.values():
        if ep.is_sink:
            continue
        c = by_name[ep.name]
        if c.pacing_mbps is not None and engine == "real":
            raise ExperimentError(
                c.pos, f"test {c.name}: pacing= paces an ATM adapter; not for --engine real"
            )
        if c.traffic.type == "rr":
            raise ExperimentError(
                c.pos, f"not implemented for --engine real yet: rr traffic (test {c.name})"
            )
        sink = sinks[(ep.peer.host, ep.peer.port)]
        conns[c.index] = RealConnection(
            c, ep.peer.port, ep.sndbuf or ep.window, sink.rcvbuf or sink.window
        )

    def tree(b: Block) -> Group | int | None:
        if b.kind == "test":
            ep = eps[id(b)]
            return None if ep.is_sink else by_name[ep.name].index
        g = Group("serial" if b.kind == "serial" else "parallel")
        for child in b.blocks():
            t = tree(child)
            if t is not None:
                g.children.append(t)
        return g if g.children else None

    root = tree(cluster)
    assert isinstance(root, Group)
    return RealExperiment([conns[i] for i in sorted(conns)], root, addresses(exp, given))
