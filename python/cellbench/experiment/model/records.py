"""The experiment's records: a test's traffic, a test, a connection, the block tree
and the experiment, each with the simulator's run spec it turns into.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cellbench import vocab
from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import HostPort, Pos
from cellbench.experiment.model.limits import DEFAULT_BLOCKSIZE, TIME_LIMIT_S


@dataclass
class Distribution:
    """A random parameter: ``uniform(min, max)`` or ``exponential(mean)``."""

    kind: str
    params: dict[str, float]
    pos: Pos

    def __str__(self) -> str:
        return f"{self.kind}(" + ", ".join(f"{k}={v:g}" for k, v in self.params.items()) + ")"

    @property
    def mean(self) -> float:
        if self.kind == "uniform":
            return (self.params["min"] + self.params["max"]) / 2
        return self.params["mean"]

    def to_spec(self):
        """The simulator's form: drawn anew for every block."""
        if self.kind == "uniform":
            return {"uniform": [self.params["min"], self.params["max"]]}
        return {"exponential": self.params["mean"]}


@dataclass
class Traffic:
    type: str
    blocksize: int = DEFAULT_BLOCKSIZE
    nbytes: int | None = None
    duration_s: float | None = None
    period_us: float | None = None
    #: rr: the request's and the response's size, bytes.
    request: int = 1
    response: int = 1
    #: Blocks written back to back every period (a burst of several datagrams).
    blocks: int = 1
    #: ftp: the disk's read rate, bytes/s.
    disk_rate: float | None = None
    #: burst: bytes per burst (then blocks = size / blocksize), and a mean rate (bit/s)
    #: that sets the period.
    burst_bytes: int | None = None
    rate_bps: float | None = None
    random: dict[str, Distribution] = field(default_factory=dict)
    #: Where each value was written: key -> position (for errors found when building).
    where: dict[str, Pos] = field(default_factory=dict)

    def to_spec(self) -> dict:
        """Fixed values as numbers; random ones (``random``) as their law. The
        stored ``blocksize``/``period_us`` of a random parameter is its mean."""

        def value(key: str, fixed):
            return self.random[key].to_spec() if key in self.random else fixed

        if self.type == "rr":
            return {
                "type": "rr",
                "request": self.request,
                "response": self.response,
                "duration_s": self.duration_s,
            }
        kind = "burstq" if self.type == "ftp" else self.type
        d: dict = {"type": kind, "blocksize": value("blocksize", self.blocksize)}
        if self.type == "full":
            d.update(
                {"nbytes": self.nbytes}
                if self.nbytes is not None
                else {"duration_s": self.duration_s}
            )
        else:
            d.update({"period_us": value("period", self.period_us), "duration_s": self.duration_s})
            if self.blocks != 1:
                d["blocks"] = self.blocks
        return d


@dataclass
class Endpoint:
    """One NetSpec test."""

    name: str
    pos: Pos
    traffic: Traffic
    type_pos: Pos
    protocol: str
    protocol_pos: Pos
    window: int | None
    sndbuf: int | None
    rcvbuf: int | None
    nodelay: bool
    own: HostPort
    peer: HostPort
    #: The transmitter tests whose connections must end before this test starts.
    after: list[Endpoint] = field(default_factory=list, repr=False, compare=False)
    #: The adapter paces this connection's cells at this rate (Mb/s).
    pacing_mbps: float | None = None
    #: The real engine's kernel congestion control (TCP_CONGESTION) and MSS (TCP_MAXSEG).
    congestion: str | None = None
    mss: int | None = None
    #: The data circuit's ABR parameters (``experiment.abr``; None: UBR), and where.
    abr: dict | None = None
    service_pos: Pos | None = None
    #: Where the protocol's keys (window, sndbuf, rcvbuf, ...) were written.
    where: dict[str, Pos] = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_sink(self) -> bool:
        return self.traffic.type == "sink"


@dataclass
class Connection:
    index: int
    name: str
    transmitter: str
    receiver: str
    protocol: str
    sndbuf: int
    rcvbuf: int
    nodelay: bool
    traffic: Traffic
    receiver_blocksize: int
    pos: Pos
    pacing_mbps: float | None = None
    #: --engine real: the kernel's congestion control (TCP_CONGESTION) and MSS (TCP_MAXSEG).
    congestion: str | None = None
    mss: int | None = None
    #: Indices of the (earlier) connections that must all end before this one starts.
    after: list[int] = field(default_factory=list)
    #: The hosts' interface it runs over: "atm" or "ethernet" (the testbed's ``interface``).
    interface: str = "atm"
    #: The sink's port (the transmitter's ``peer`` port), where a kernel's sink listens.
    port: int | None = None
    #: The data circuit as ABR (``experiment.abr``; None: UBR).
    abr: dict | None = None
    #: The file's socket buffers as written, unclamped (None: unset): what the engines
    #: on real kernels ask for, since a kernel has limits of its own (net.core.wmem_max)
    #: and autotunes a buffer nobody set.
    sndbuf_asked: int | None = None
    rcvbuf_asked: int | None = None
    #: Where the file sets each of its run spec's keys (``traffic.blocksize``, ``rcvbuf``
    #: ...): a refusal of the core naming the key lands there (``model.refusals``).
    positions: dict[str, Pos] = field(default_factory=dict, repr=False, compare=False)

    def to_spec(self, tb: tbmod.Testbed) -> dict:
        # An Ethernet interface's MTU is Ethernet II's; the testbed's is the ATM one.
        ethernet = self.interface == "ethernet"
        return (
            {
                "transmitter": self.transmitter,
                "receiver": self.receiver,
                "protocol": self.protocol,
                "flavour": None,
                "mtu": tbmod.ETHERNET_MTU if ethernet else tb.mtu,
                "encap": tb.encap,
                "sndbuf": self.sndbuf,
                "rcvbuf": self.rcvbuf,
                "nodelay": self.nodelay,
                "traffic": self.traffic.to_spec(),
                "receiver_blocksize": self.receiver_blocksize,
                "pacing_mbps": self.pacing_mbps,
                "after": list(self.after),
            }
            | ({"interface": "ethernet"} if ethernet else {})
            | self._abr_spec()
        )

    def _abr_spec(self) -> dict:
        """The data circuit's service: ABR's parameters, or nothing (UBR)."""
        return {"abr": self.abr} if self.abr else {}


@dataclass
class Group:
    """A ``parallel`` block (or the cluster: children start together) or a ``serial``
    one (each child when the previous has ended), with the connections under it by
    index: the block tree as the engines on the real clock walk it (``engines.walk``);
    the simulator is given each connection's ``after`` instead."""

    kind: str
    children: list[Group | int] = field(default_factory=list)

    def connections(self) -> list[int]:
        out: list[int] = []
        for c in self.children:
            out.extend([c] if isinstance(c, int) else c.connections())
        return out


@dataclass
class Experiment:
    file: str
    text: str
    testbed: tbmod.Testbed
    hosts: list[tbmod.HostSpec]
    connections: list[Connection]
    notes: list[str] = field(default_factory=list)
    #: The ``tester { port = ...; }`` block: where a cell tester records every cell
    #: (a place as ``cellbench run --cells`` names it), and the setting's position.
    tester: str | None = None
    tester_pos: Pos | None = None
    #: ``slot_us``: the slot the tester counts in, µs (None: the link's cell time).
    tester_slot_us: float | None = None
    #: The cluster's block tree, connections by index (sinks left out).
    tree: Group | None = None

    def spec(
        self, seed: int, replication: int, *, trace: bool = False, series: bool = False
    ) -> dict:
        """The simulator's input for one replication (simulate-contract)."""
        conns = self.connections
        used = {c.transmitter for c in conns} | {c.receiver for c in conns}
        return {
            "seed": seed,
            "replication": replication,
            "trace": trace,
            "series": series,
            "time_limit_s": TIME_LIMIT_S,
            "switch": dict(self.testbed.switch),
            "hosts": [host_spec(h) for h in self.hosts if h.name in used],
            "trunks": [dict(t) for t in self.testbed.trunks],
            "connections": [c.to_spec(self.testbed) for c in conns],
        } | (
            {"sites": {k: dict(v) for k, v in self.testbed.sites.items()}}
            if self.testbed.sites
            else {}
        )


def host_spec(h: tbmod.HostSpec) -> dict:
    """A testbed host as the simulator's run spec names it: its name and each key whose
    value is not the run spec's default (the core's own default stands for the others)."""
    defaults = vocab.DEFAULTS["host"]
    out = {"name": h.name}
    for key in tbmod.HOST_KEYS.values():
        if key.spec is None or key.spec in out:
            continue
        value = getattr(h, key.field)
        if value != defaults.get(key.spec):
            out[key.spec] = value
    return out
