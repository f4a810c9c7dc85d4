"""An experiment as the real engine runs it: connections with their hosts'
addresses, and the model's tree of parallel and serial groups (``model.Group``,
walked on the real clock by ``engines.walk``).

Socket buffers are the file's (``window``, ``sndbuf``, ``rcvbuf``) unclamped:
a real kernel has its own limits (``net.core.wmem_max``); a test that sets none
leaves the kernel's autotuning on.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from cellbench.experiment import model
from cellbench.experiment.lang import ExperimentError
from cellbench.experiment.model import Group


@dataclass
class RealConnection:
    conn: model.Connection
    #: The sink's port: the transmitter's ``peer`` port.
    port: int
    sndbuf: int | None
    rcvbuf: int | None


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


#: The traffic types the agents cannot run yet, and why (``Engine.traffic_not_yet``: the
#: real engine's, and the emulator's, which runs the same agents).
NOT_YET = {"rr": "the real engine's agents have no request/response traffic yet"}


def build(
    exp: model.Experiment, given: dict[str, str], *, adapters_pace: bool = False
) -> RealExperiment:
    """The real engine's view of one sweep point (``exp``, checked): its connections
    with the file's socket buffers, its block tree, its hosts' addresses (``given``:
    --host first). ``adapters_pace``: the emulator's adapters do pace (``pacing=``);
    real hosts' do not."""
    conns = []
    for c in exp.connections:
        if c.pacing_mbps is not None and not adapters_pace:
            raise ExperimentError(
                c.pos, f"test {c.name}: pacing= paces an ATM adapter; not for --engine real"
            )
        if c.traffic.type in NOT_YET:
            raise ExperimentError(
                c.pos,
                f"not implemented for --engine real yet: {c.traffic.type} traffic (test {c.name})",
            )
        assert c.port is not None  # (model.build sets it)
        conns.append(RealConnection(c, c.port, c.sndbuf_asked, c.rcvbuf_asked))
    assert exp.tree is not None
    return RealExperiment(conns, exp.tree, addresses(exp, given))
