"""The experiment's records: a test's traffic, a test, a connection, the block tree
and the experiment, each with the simulator's run spec it turns into.

A record holds every value resolved (what the engines and the stored rows read), the
run spec's default where the file sets none, read from the core's vocabulary; its
run spec names only the keys the file sets, so the core's default stands for the
others (sim::spec's serde defaults, each with its source).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cellbench import vocab
from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import HostPort, Pos
from cellbench.experiment.model.limits import TIME_LIMIT_S
from cellbench.experiment.testbed.keys import HOST_KEYS

#: What a traffic key of the run spec reads as when a test leaves it out (every type's).
_TRAFFIC = vocab.DEFAULTS["traffic"]

#: The settings of a test's ``type = ...`` that give each traffic key of the run spec,
#: the first written one taken (a burst's ``size`` gives its blocks and blocksize, a
#: ``rate`` or an ftp ``disk_rate`` its period).
TRAFFIC_SETTINGS = {
    "blocksize": ("blocksize", "size"),
    "nbytes": ("nbytes",),
    "duration_s": ("duration",),
    "period_us": ("period", "rate", "disk_rate"),
    "blocks": ("blocks", "size"),
    "request": ("request",),
    "response": ("response",),
}
#: Each traffic type's keys in the run spec (an ftp transfer runs as a burstq).
_SPEC_TRAFFIC_KEYS = {
    "full": ("blocksize", "nbytes", "duration_s"),
    "burst": ("blocksize", "period_us", "duration_s", "blocks"),
    "burstq": ("blocksize", "period_us", "duration_s", "blocks"),
    "rr": ("request", "response", "duration_s"),
}


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
    blocksize: int = int(_TRAFFIC["blocksize"])
    nbytes: int | None = None
    duration_s: float | None = None
    period_us: float | None = None
    #: rr: the request's and the response's size, bytes.
    request: int = _TRAFFIC["request"]
    response: int = _TRAFFIC["response"]
    #: Blocks written back to back every period (a burst of several datagrams).
    blocks: int = _TRAFFIC["blocks"]
    #: ftp: the disk's read rate, bytes/s.
    disk_rate: float | None = None
    #: burst: bytes per burst (then blocks = size / blocksize), and a mean rate (bit/s)
    #: that sets the period.
    burst_bytes: int | None = None
    rate_bps: float | None = None
    random: dict[str, Distribution] = field(default_factory=dict)
    #: Where each value was written: key -> position (for errors found when building).
    where: dict[str, Pos] = field(default_factory=dict)

    def sets(self, key: str) -> bool:
        """Whether the test gives the run spec's traffic ``key`` (a setting, a random law,
        or a setting it follows from: ``size``, ``rate``, ``disk_rate``)."""
        law = "period" if key == "period_us" else key
        return law in self.random or any(s in self.where for s in TRAFFIC_SETTINGS[key])

    def to_spec(self) -> dict:
        """The keys the test gives: fixed values as numbers, random ones (``random``) as
        their law. The stored ``blocksize``/``period_us`` of a random parameter is its
        mean. A byte count, duration or period given is always named (a full transfer
        has one of the first two, a burst both of the last), also when a ``--set`` or a
        study gave it rather than a setting."""
        kind = "burstq" if self.type == "ftp" else self.type
        values = {
            "blocksize": self.random["blocksize"].to_spec()
            if "blocksize" in self.random
            else self.blocksize,
            "nbytes": self.nbytes,
            "duration_s": self.duration_s,
            "period_us": self.random["period"].to_spec()
            if "period" in self.random
            else self.period_us,
            "blocks": self.blocks,
            "request": self.request,
            "response": self.response,
        }
        # These are None until something gives them; the others hold the core's default.
        unset_is_none = {"nbytes", "duration_s", "period_us"}
        return {"type": kind} | {
            k: values[k]
            for k in _SPEC_TRAFFIC_KEYS[kind]
            if (values[k] is not None if k in unset_is_none else self.sets(k))
        }


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
    #: The hosts' interface it runs over: "atm" or "ethernet" (the testbed's ``interface``).
    interface: str
    pacing_mbps: float | None = None
    #: --engine real: the kernel's congestion control (TCP_CONGESTION) and MSS (TCP_MAXSEG).
    congestion: str | None = None
    mss: int | None = None
    #: Indices of the (earlier) connections that must all end before this one starts.
    after: list[int] = field(default_factory=list)
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
    #: The run spec's keys among ``SET_KEYS`` that the tests give (a setting, or a
    #: socket buffer the host's flavour clamped): only these are sent.
    given: frozenset[str] = frozenset()

    #: The connection's keys that have a default in the run spec and a setting in a test:
    #: the protocol, the socket buffers (or the window that sets both), TCP_NODELAY and
    #: the sink's read size.
    SET_KEYS = ("protocol", "sndbuf", "rcvbuf", "nodelay", "receiver_blocksize")

    def to_spec(self, tb: tbmod.Testbed) -> dict:
        """The simulator's connection: its ends and traffic, and each key the tests (or
        the testbed: its MTU and encapsulation) give; the core's default for the rest."""
        values = {k: getattr(self, k) for k in self.SET_KEYS}
        return (
            {"transmitter": self.transmitter, "receiver": self.receiver}
            | {k: v for k, v in values.items() if k in self.given}
            | self._link_spec(tb)
            | {"traffic": self.traffic.to_spec()}
            | ({"pacing_mbps": self.pacing_mbps} if self.pacing_mbps is not None else {})
            | ({"after": list(self.after)} if self.after else {})
            | ({"abr": self.abr} if self.abr is not None else {})
        )

    def _link_spec(self, tb: tbmod.Testbed) -> dict:
        """The interface and the testbed's encapsulation and MTU where the core's defaults
        (VC-mux at its MTU; Ethernet II's MTU over Ethernet) do not stand for them."""
        encap = {"encap": tb.encap} if tb.encap != vocab.DEFAULTS["connection"]["encap"] else {}
        if self.interface == "ethernet":
            # Over Ethernet the core takes Ethernet II's MTU; the testbed's is the ATM one.
            return encap | {"interface": "ethernet"}
        mtu = {"mtu": tb.mtu} if tb.mtu != vocab.ENCAP_MTU[tb.encap] else {}
        return encap | mtu


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
    for key in HOST_KEYS.values():
        if key.spec is None or key.spec in out:
            continue
        value = getattr(h, key.field)
        if value != defaults.get(key.spec):
            out[key.spec] = value
    return out
