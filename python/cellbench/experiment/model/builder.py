"""A parsed experiment file made into its Experiment: tests paired into connections
on the testbed's hosts, each checked, in the order and tree the blocks give.
"""

from __future__ import annotations

from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import Block, Document, ExperimentError, Pos, expected
from cellbench.experiment.model.checks import _check_connection, clamp_sockbuf
from cellbench.experiment.model.endpoints import _endpoint
from cellbench.experiment.model.hosts import _resolve_interfaces
from cellbench.experiment.model.limits import DEFAULT_READ, DEFAULT_SOCKBUF
from cellbench.experiment.model.records import (
    TRAFFIC_SETTINGS,
    Connection,
    Endpoint,
    Experiment,
    Group,
)
from cellbench.experiment.model.tester import _tester
from cellbench.experiment.model.timing import _earliest_starts, _schedule, _starts_no_later, _tree


def _collect_tests(b: Block, eps: dict[int, Endpoint]) -> None:
    for c in b.blocks():
        if c.kind == "test":
            eps[id(c)] = _endpoint(c)
        else:
            _collect_tests(c, eps)


def build(doc: Document, testbed: tbmod.Testbed | None = None) -> Experiment:
    """Check the document and make the experiment; raises ExperimentError."""
    clusters = [b for b in doc.blocks if b.kind == "cluster"]
    if not clusters:
        raise ExperimentError(Pos(doc.file, 1, 1), "found no 'cluster' block, expected one")
    if len(clusters) > 1:
        raise expected(clusters[1].pos, "a second 'cluster' block", "one cluster per experiment")
    # The file's testbed block applies on top of the command line's (--testbed), if any.
    base = testbed
    testbed = tbmod.from_document(doc, base=base) or base or tbmod.preset("lan-buffers")
    notes: list[str] = []
    block = next((b for b in doc.blocks if b.kind == "testbed"), None)
    if base is not None and block is not None and block.name not in (None, base.name):
        notes.append(
            f"{block.name_pos}: --testbed {base.name} replaces the file's preset "
            f"{block.name}; the block's settings apply on top of it"
        )
    eps: dict[int, Endpoint] = {}
    _collect_tests(clusters[0], eps)
    if not eps:
        raise expected(clusters[0].pos, "an empty cluster", "at least one test")
    names: dict[str, Endpoint] = {}
    _resolve_interfaces(eps.values(), testbed)
    owns: dict[tuple[str, int, str | None], Endpoint] = {}
    for ep in eps.values():
        if ep.name in names:
            raise expected(
                ep.pos,
                f"test '{ep.name}' a second time",
                f"unique test names (first at {names[ep.name].pos})",
            )
        names[ep.name] = ep
        key = (ep.own.host, ep.own.port, ep.own.interface)
        if key in owns:
            raise expected(
                ep.own.pos,
                f"own = {ep.own} a second time",
                f"unique addresses (first at {owns[key].own.pos})",
            )
        owns[key] = ep
    ordered: list[Endpoint] = []
    _schedule(clusters[0], [], eps, ordered)
    host_order: list[str] = []
    for ep in ordered:
        for h in (ep.own, ep.peer):
            if h.host not in host_order:
                testbed.host(h.host, h.pos)  # unknown host: an error with its position
                host_order.append(h.host)
    if testbed.order is not None:
        for n in testbed.order:
            testbed.host(n, testbed.order_pos)  # unknown host: an error naming the setting
        host_order = [n for n in testbed.order if n in host_order] + [
            n for n in host_order if n not in testbed.order
        ]
    hosts = [testbed.host(n, None) for n in host_order]
    flavour = {h.name: h.flavour for h in hosts}
    conns: list[Connection] = []
    paired: set[int] = set()
    earliest = _earliest_starts(ordered)
    for ep in ordered:
        if ep.is_sink:
            continue
        if ep.own.host == ep.peer.host:
            raise expected(
                ep.peer.pos,
                f"peer host {ep.peer.host}, the test's own host",
                "another host: a connection joins two hosts",
            )
        sink = owns.get((ep.peer.host, ep.peer.port, ep.peer.interface))
        if (
            sink is None
            or not sink.is_sink
            or (sink.peer.host, sink.peer.port, sink.peer.interface)
            != (ep.own.host, ep.own.port, ep.own.interface)
        ):
            raise ExperimentError(
                ep.peer.pos,
                f"found no sink test with own = {ep.peer} and peer = {ep.own}, expected one "
                f"for transmitter test {ep.name}",
            )
        # The sink may start earlier (ttcp -r listening first), never later.
        if not _starts_no_later(sink, ep):
            raise ExperimentError(
                sink.pos,
                f"sink test {sink.name} starts after its transmitter {ep.name}: put them in one "
                "parallel block",
            )
        if sink.protocol != ep.protocol:
            raise expected(
                sink.protocol_pos, sink.protocol, f"{ep.protocol} as its transmitter {ep.name}"
            )
        paired.add(id(sink))
        _check_connection(
            ep,
            sink,
            testbed.host(ep.own.host, None),
            testbed.host(sink.own.host, None),
            earliest,
        )
        tx_host = testbed.host(ep.own.host, None)
        rx_host = testbed.host(sink.own.host, None)
        interface = ep.own.interface or tx_host.interface
        rx_interface = ep.peer.interface or rx_host.interface
        if interface != rx_interface:
            raise expected(
                ep.peer.pos,
                f"peer = {ep.peer} ({rx_host.name}'s {rx_interface} interface) for a test "
                f"from {tx_host.name}'s {interface} interface",
                "both ends on one network: the same interface (the host's interface = ..., "
                "or its ethernet_name)",
            )
        snd = ep.sndbuf or ep.window or DEFAULT_SOCKBUF
        rcv = sink.rcvbuf or sink.window or DEFAULT_SOCKBUF
        snd = clamp_sockbuf(snd, flavour[ep.own.host], "SO_SNDBUF", ep.protocol_pos, notes)
        rcv = clamp_sockbuf(rcv, flavour[sink.own.host], "SO_RCVBUF", sink.protocol_pos, notes)
        # The keys the tests give (a buffer its flavour clamped counts as given).
        given = {
            "protocol": "protocol" in ep.where,
            "sndbuf": bool(ep.sndbuf or ep.window) or snd != DEFAULT_SOCKBUF,
            "rcvbuf": bool(sink.rcvbuf or sink.window) or rcv != DEFAULT_SOCKBUF,
            "nodelay": "nodelay" in ep.where,
            "receiver_blocksize": sink.traffic.sets("blocksize"),
        }
        conns.append(
            Connection(
                index=len(conns),
                name=ep.name,
                transmitter=ep.own.host,
                receiver=ep.peer.host,
                protocol=ep.protocol,
                sndbuf=snd,
                rcvbuf=rcv,
                nodelay=ep.nodelay,
                traffic=ep.traffic,
                receiver_blocksize=sink.traffic.blocksize
                if given["receiver_blocksize"]
                else DEFAULT_READ,
                pos=ep.pos,
                pacing_mbps=ep.pacing_mbps,
                congestion=ep.congestion,
                mss=ep.mss,
                abr=ep.abr,
                interface=interface,
                port=ep.peer.port,
                sndbuf_asked=ep.sndbuf or ep.window,
                rcvbuf_asked=sink.rcvbuf or sink.window,
                positions=_positions(ep, sink),
                given=frozenset(k for k, v in given.items() if v),
            )
        )
        if ep.congestion is not None or ep.mss is not None:
            # One file runs on both engines: the simulator's TCP is its host's flavour.
            asked = " and ".join(
                f"{k}={v}" for k, v in (("congestion", ep.congestion), ("mss", ep.mss)) if v
            )
            notes.append(
                f"{ep.protocol_pos}: {asked} set the kernel's TCP for --engine real; the "
                f"simulator runs {ep.own.host}'s flavour {flavour[ep.own.host]} with the MTU's MSS"
            )
    # Transmitters come in document order, so a connection waits only for earlier ones.
    index = {c.name: c.index for c in conns}
    for c, ep in zip(conns, (e for e in ordered if not e.is_sink)):
        c.after = sorted({index[e.name] for e in ep.after})
    for ep in ordered:
        if ep.is_sink and id(ep) not in paired:
            raise ExperimentError(
                ep.peer.pos,
                f"found no transmitter test with own = {ep.peer} and peer = {ep.own}, expected "
                f"one for sink test {ep.name}",
            )
    tester, tester_pos, slot_us = _tester(doc)
    tree = _tree(clusters[0], eps, index)
    assert isinstance(tree, Group)  # a cluster has a transmitter (checked above)
    return Experiment(
        doc.file, doc.text, testbed, hosts, conns, notes, tester, tester_pos, slot_us, tree
    )


def _positions(ep: Endpoint, sink: Endpoint) -> dict[str, Pos]:
    """Where the transmitter's and the sink's tests set each key of their connection's
    run spec: the socket buffers (or the ``window`` that sets both), pacing, the ABR
    service, each traffic key (else the test's ``type``), and the test for the rest."""
    tx, t = ep.where, ep.traffic.where
    out = {
        "": ep.pos,
        "protocol": ep.protocol_pos,
        "sndbuf": tx.get("sndbuf") or tx.get("window") or ep.protocol_pos,
        "rcvbuf": sink.where.get("rcvbuf") or sink.where.get("window") or sink.protocol_pos,
        "nodelay": tx.get("nodelay") or ep.protocol_pos,
        "receiver_blocksize": sink.traffic.where.get("blocksize", sink.type_pos),
        "pacing_mbps": t.get("pacing", ep.protocol_pos),
        "abr": ep.service_pos or ep.pos,
    }
    for key, settings in TRAFFIC_SETTINGS.items():
        out[f"traffic.{key}"] = next((t[s] for s in settings if s in t), ep.type_pos)
    return out
