"""The experiment object: connections, their traffic and timing, on a testbed.

A NetSpec ``test`` is one end of a connection. A transmitter test (type ``full``,
``burst``, ``burstq``, or netperf's request/response ``rr``) and the ``sink`` test
whose ``own`` address is the transmitter's ``peer`` (and whose ``peer`` is the
transmitter's ``own``) make one connection. ``protocol = tcp (window=W)`` sets both
socket buffers to W; ``sndbuf``/``rcvbuf`` set one. The connection takes the
transmitter's SO_SNDBUF and the sink's SO_RCVBUF.

Timing. An experiment is one simulation on one timeline. ``cluster { }`` and
``parallel { }`` start their children together; ``serial { }`` starts each child
when every connection of the previous one has ended (both applications finished:
the transmitter's last write and close, the sink's last read), at that simulated
instant, on the network as it is then: its queues, the hosts' timers and the
connections still running beside it. So a step's start is an event of the run,
not a time known in advance (a ``full (nbytes=...)`` transfer ends only when it
has run; one with a duration ends once its data has drained); the simulator is
told, per connection, which connections it waits for (``after``), and reports
when each started and ended (``start_s``, ``end_s``). A sink ends with its
connection: a step holding only sinks does not delay the next one.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field, replace

from cellbench import _native, vocab
from cellbench.experiment import abr as abrmod
from cellbench.experiment import testbed as tbmod
from cellbench.experiment.lang import (
    Block,
    Call,
    Document,
    ExperimentError,
    HostPort,
    List,
    Name,
    Number,
    Pos,
    Setting,
    String,
    Value,
    expected,
    parse,
    render,
)

#: Socket buffers when a test sets none: the largest SunOS 4.1.1 accepts (lan-buffers'
#: default), the block size, and the simulated-time limit of one simulation (seconds):
#: the simulator's defaults (``vocab.DEFAULTS``).
DEFAULT_SOCKBUF: int = vocab.DEFAULTS["connection"]["sndbuf"]
DEFAULT_BLOCKSIZE = int(vocab.DEFAULTS["traffic"]["blocksize"])
TIME_LIMIT_S: float = vocab.DEFAULTS["run"]["time_limit_s"]
#: The simulator's limits (``vocab.LIMITS``), checked here first so that a bad
#: value is named at its position before anything runs: the largest TCP write (a
#: drawn block size is capped by it), the largest UDP datagram, the longest block
#: period (µs: the longest time a spec may give).
MAX_BLOCK: int = vocab.LIMITS["max_block_bytes"]
MAX_DATAGRAM: int = vocab.LIMITS["max_datagram_bytes"]
MAX_PERIOD_US: float = vocab.LIMITS["max_seconds"] * 1e6
U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1
#: The largest master seed: the simulator takes a u64, but a result stores the seed in
#: an int64 column (as pandas, DuckDB and polars read integers), so 2^63-1; a larger
#: one would fail only when the first part is written, after the runs.
SEED_MAX = (1 << 63) - 1
#: An ATM cell carries 48 bytes of its 53: no transfer moves data faster than this
#: share of its link's cell rate.
CELL_PAYLOAD_SHARE = 48 / 53

TRAFFIC_KEYS = {
    "full": ("blocksize", "duration", "nbytes"),
    # blocks: written back to back each period; or size: a burst of that many bytes in
    # blocks of at most blocksize; rate (bit/s): the period that gives that mean rate.
    "burst": ("blocksize", "period", "duration", "blocks", "size", "rate"),
    "burstq": ("blocksize", "period", "duration", "blocks", "size", "rate"),
    # A file transfer: blocks read from a disk at disk_rate bytes/s and written to the
    # socket as they come (a burstq whose period is the time one block takes to read).
    "ftp": ("blocksize", "disk_rate", "duration"),
    # netperf's TCP_RR: request/response transactions for a duration (bytes each way;
    # netperf's default -r 1,1). The transmitter's socket buffers size both of its
    # ends' buffers, the sink's both of the receiver's, as netperf -s and -S do.
    "rr": ("request", "response", "duration"),
    "sink": ("blocksize", "duration"),
}
#: NetSpec parameters cellbench knows but does not run yet.
TRAFFIC_LATER = ("repeats", "buffer")
PROTOCOL_KEYS = ("window", "sndbuf", "rcvbuf", "nodelay", "pacing", "congestion", "mss")
#: A kernel's congestion control module name (TCP_CONGESTION takes up to 15 bytes).
_CONGESTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,14}\Z")
TEST_KEYS = ("type", "protocol", "own", "peer", "service")
#: Test keys that may be left out.
_OPTIONAL_TEST_KEYS = ("protocol", "service")
#: NetSpec's application models (tcplib-derived), lower-cased.
APP_MODELS = {
    m.lower()
    for m in (
        "ftpItemSize",
        "ftpNOfItems",
        "ftpSessionInterarrival",
        "telnetPacketSize",
        "telnetPacketInterarrival",
        "telnetSessionInterarrival",
        "telnetSessionDuration",
        "voiceSessionInterarrival",
        "voiceSessionDuration",
        "videoTeleConferenceFrameSize",
        "videoMPEGFrameSize",
        "wwwItemSize",
        "wwwRequestInterarrival",
        "wwwSessionInterarrival",
        "httpItemSize",
    )
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


def check_with_engine(exp: Experiment, seed: int) -> None:
    """The run's spec through the simulator's own checks, without running it: what
    this module does not check yet is still refused before the first run, at the test
    of the connection it names (``connection I (A -> B): ...``)."""
    try:
        _native.check_spec(exp.spec(seed, 0))
        if exp.tester is not None:
            check_tester(exp, exp.tester, exp.tester_pos)
    except ExperimentError:
        raise
    except ValueError as e:
        text = str(e)
        m = re.match(r"(?:connection|transfer) (\d+)\b", text)
        conns = exp.connections
        pos = conns[int(m.group(1))].pos if m and int(m.group(1)) < len(conns) else None
        raise ExperimentError(
            pos or _testbed_pos(exp, text) or Pos(exp.file, 1, 1),
            f"the simulator refuses it: {text}",
        ) from None


#: A simulator refusal of a host's or a trunk's value (its words) -> the setting.
_HOST_WORDS = (
    ("cell interval", "spacing_us"), ("PDU gap", "pdu_gap_us"), ("spacing", "spacing"),
    ("distance", "distance_m"), ("tx_queue_pdus", "ifq_pdus"), ("pacing_counts", "pacing_counts"),
    ("adapter", "adapter"), ("ethernet_duplex", "ethernet_duplex"), ("Ethernet", "ethernet"),
)  # fmt: skip
_TRUNK_WORDS = (("UPC T", "upc_t_us"), ("UPC τ", "upc_tau_us"), ("delay", "delay_ms"))


def _testbed_pos(exp: Experiment, text: str) -> Pos | None:
    """Where the file sets what a simulator refusal names (``host "a": cell interval
    ...``, ``trunk 0 (w -> e): UPC T ...``): the setting in the host's block (or the
    defaults block) or the trunk's, else that block, else the testbed block; None
    when the refusal names no host or trunk of the file."""
    host = re.match(r'host "([^"]+)": (.*)', text)
    trunk = re.match(r"trunk \d+ \((\S+) -> (\S+)\): (.*)", text)
    if not (host or trunk):
        return None
    try:
        doc = parse(exp.text, exp.file)
    except ExperimentError:
        return None
    testbeds = [b for b in doc.blocks if b.kind == "testbed"]
    if not testbeds:
        return None
    inner = testbeds[0].blocks()
    if host:
        name, rest = host.groups()
        blocks = [b for b in inner if b.kind == "host" and b.name == name]
        blocks += [b for b in inner if b.kind == "defaults"]
        words = _HOST_WORDS
    else:
        a, b_, rest = trunk.groups()

        def joins(b: Block) -> bool:
            ends = {s.key: s.value for s in b.settings() if s.key in ("from", "to")}
            return {render(v) for v in ends.values()} == {a, b_}

        blocks = [b for b in inner if b.kind == "trunk" and joins(b)]
        words = _TRUNK_WORDS
    for b in blocks:
        for phrase, key in words:
            if phrase in rest:
                found = [st for st in b.settings() if st.key == key]
                if found:
                    return found[-1].pos
    return blocks[0].pos if blocks else testbeds[0].name_pos or testbeds[0].pos


def check_tester(exp: Experiment, place: str, pos: Pos | None) -> None:
    """A tester's place is a switch output port or an adapter of the experiment's
    network (``_native.tester_places``); else an error listing every one."""
    from cellbench import _native

    try:
        _native.tester_places(exp.spec(0, 0), place)
    except ValueError as e:
        raise ExperimentError(pos, str(e)) from None


def _tester(doc: Document) -> tuple[str | None, Pos | None, float | None]:
    """The ``tester { port = PLACE; slot_us = US; }`` block, if any: PLACE as a name or
    a string (``"adapter:HOST"``, ``"trunk a->b"``) or a port's number; ``slot_us``
    (optional) the slot the tester counts inter-arrival times in."""
    blocks = [b for b in doc.blocks if b.kind == "tester"]
    if not blocks:
        return None, None, None
    if len(blocks) > 1:
        raise expected(blocks[1].pos, "a second 'tester' block", "one tester per experiment")
    port: tuple[str, Pos] | None = None
    slot_us: float | None = None
    for st in blocks[0].settings():
        if st.key == "slot_us":
            slot_us = float(
                _number(st.value, "the tester's cell slot in µs", lo=0, integer=False, hi=1e6)
            )
            if slot_us <= 0:
                raise expected(st.value.pos, render(st.value), "a cell slot > 0 µs")
            continue
        if st.key != "port":
            raise expected(
                st.pos, f"setting '{st.key}'", "'port' (the tester's place) or 'slot_us'"
            )
        v = st.value
        if isinstance(v, (Name, String)):
            port = (v.text, v.pos)
        elif isinstance(v, Number) and isinstance(v.value, int) and v.value >= 0:
            port = (str(v.value), v.pos)
        else:
            raise expected(
                st.pos,
                render(v),
                'a switch output port or adapter: a host\'s name, "trunk A->B", '
                '"adapter:HOST" or a port\'s number',
            )
    if port is None:
        raise expected(blocks[0].pos, "a tester block without 'port'", "port = PLACE;")
    return port[0], port[1], slot_us


def host_spec(h: tbmod.HostSpec) -> dict:
    """A testbed host as the simulator's run spec names it."""
    return {
        "name": h.name,
        "profile": h.profile,
        "phy": h.phy,
        "distance_m": h.distance_m,
        "pdu_gap_us": h.pdu_gap_us,
        "flavour": h.flavour,
        "site": h.site,
        "spacing_us": h.spacing_us,
        "stall": h.stall,
        "pacing_counts": h.pacing_counts,
    } | {
        k: v
        for k, v in (
            ("tx_queue_pdus", h.ifq_pdus),
            ("adapter", h.adapter),
            ("spacing", h.spacing),
            ("ethernet", h.ethernet),
            ("ethernet_duplex", h.ethernet_duplex),
        )
        if v is not None
    }


# --- checking values --------------------------------------------------------------------------


def _number(
    v: Value, what: str, *, lo: float, integer: bool, hi: float | None = None
) -> int | float:
    """A number lo..hi (a whole one when ``integer``: ``1e6`` counts as whole)."""
    x = v.value if isinstance(v, Number) else None
    if integer and isinstance(x, float) and x.is_integer():
        x = int(x)
    if x is not None and (isinstance(x, int) or not integer) and lo <= x < math.inf:
        if hi is None or x <= hi:
            return x
    kind = "a whole number" if integer else "a number"
    bound = f" and <= {_shown(hi)}" if hi is not None else ""
    raise expected(v.pos, render(v), f"{kind} >= {_shown(lo)}{bound} for {what}")


def _shown(x: float) -> str:
    """A limit as a message gives it: whole numbers in full (1048576), others as %g."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e20 else f"{x:g}"


def _flag(v: Value, what: str) -> bool:
    if isinstance(v, Number) and v.value in (0, 1):
        return bool(v.value)
    if isinstance(v, Name) and v.text.lower() in ("yes", "no", "true", "false", "on", "off"):
        return v.text.lower() in ("yes", "true", "on")
    raise expected(v.pos, render(v), f"0, 1, yes or no for {what}")


#: The range of a random parameter's values (blocksize in bytes, period in µs); key
#: names that cannot be random never get this far.
_LAW_MIN = {"blocksize": 1.0, "period": 0.0}
_LAW_MAX = {"blocksize": float(MAX_BLOCK), "period": MAX_PERIOD_US}
_LAW_MIN.update({k: 0.0 for k in ("duration", "nbytes")})
_LAW_MAX.update({k: float("inf") for k in ("duration", "nbytes")})


def _distribution(call: Call, key: str) -> Distribution:
    name = call.name.lower()
    pos_args = [a.value for a in call.args if a.key is None]
    kw = {a.key: a.value for a in call.args if a.key is not None}
    if name == "uniform":
        if (
            pos_args
            and kw
            or len(pos_args) not in (0, 2)
            or (not pos_args and set(kw) != {"min", "max"})
        ):
            raise expected(call.pos, render(call), "uniform(min, max) or uniform(min=A, max=B)")
        lo_v, hi_v = pos_args if pos_args else (kw["min"], kw["max"])
        lo = _number(lo_v, f"the minimum of {key}", lo=0, integer=False, hi=_LAW_MAX[key])
        hi = _number(hi_v, f"the maximum of {key}", lo=0, integer=False, hi=_LAW_MAX[key])
        if lo < _LAW_MIN[key]:
            raise expected(
                lo_v.pos, render(lo_v), f"a minimum >= {_shown(_LAW_MIN[key])} for {key}"
            )
        if lo > hi:
            raise expected(call.pos, render(call), f"min <= max in uniform() for {key}")
        return Distribution("uniform", {"min": lo, "max": hi}, call.pos)
    if name == "exponential":
        if len(call.args) != 1 or (kw and set(kw) not in ({"mean"}, {"lambda"})):
            raise expected(
                call.pos,
                render(call),
                "exponential(mean), exponential(mean=M) or exponential(lambda=L)",
            )
        a = call.args[0]
        x = _number(a.value, f"the {a.key or 'mean'} of {key}", lo=0, integer=False)
        if x <= 0:
            raise expected(a.value.pos, render(a.value), f"a {a.key or 'mean'} > 0 for {key}")
        mean = 1 / x if a.key == "lambda" else x
        if mean > _LAW_MAX[key]:
            raise expected(
                a.value.pos, render(a.value), f"a mean <= {_shown(_LAW_MAX[key])} for {key}"
            )
        return Distribution("exponential", {"mean": mean}, call.pos)
    if name in APP_MODELS:
        raise ExperimentError(
            call.pos,
            f"not implemented: NetSpec application model {call.name}(...) for {key} "
            "(cellbench has uniform(min, max) and exponential(mean) so far)",
        )
    raise expected(
        call.pos, render(call), f"a number, uniform(min, max) or exponential(mean) for {key}"
    )


def _traffic(s: Setting) -> Traffic:
    v = s.value
    call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
    if not isinstance(call, Call) or call.name not in TRAFFIC_KEYS:
        if isinstance(call, (Call, Name)) and call.name.lower() in APP_MODELS | {
            "telnet",
            "www",
            "http",
            "mpeg",
            "voice",
        }:
            raise ExperimentError(v.pos, f"not implemented: NetSpec traffic type {render(v)}")
        raise expected(v.pos, render(v), "a traffic type: full, burst, burstq, ftp, rr or sink")
    t = Traffic(call.name)
    allowed = TRAFFIC_KEYS[call.name]
    seen: set[str] = set()
    for a in call.args:
        if a.key is None:
            raise expected(
                a.pos, render(a.value), f"KEY=VALUE in {call.name}(): {', '.join(allowed)}"
            )
        if a.key in seen:
            raise expected(a.pos, f"'{a.key}' a second time", f"each {call.name}() key once")
        seen.add(a.key)
        t.where[a.key] = a.value.pos
        if a.key in TRAFFIC_LATER:
            raise ExperimentError(a.pos, f"not implemented: {call.name}() parameter '{a.key}'")
        if a.key not in allowed:
            raise expected(a.pos, f"key '{a.key}'", f"a {call.name}() key: {', '.join(allowed)}")
        if a.key in ("nbytes", "duration") and isinstance(a.value, Name) and a.value.text == "off":
            # None: one file gives a byte count or a time (full() takes exactly one), the
            # other set by --set (a timed transfer for the emulator: reproduce.emu).
            del t.where[a.key]
            continue
        if isinstance(a.value, (Call, Name)) and a.key in ("request", "response"):
            raise expected(a.value.pos, render(a.value), f"a number of bytes for {a.key}")
        if isinstance(a.value, (Call, Name)):
            dist = _distribution(
                a.value if isinstance(a.value, Call) else Call(a.value.text, [], a.value.pos), a.key
            )
            if a.key == "blocksize":
                t.blocksize = max(1, round(dist.mean))
            elif a.key == "period":
                t.period_us = dist.mean
            else:
                raise ExperimentError(
                    dist.pos, f"not implemented: a random {a.key} (only blocksize and period)"
                )
            t.random[a.key] = dist
            continue
        if a.key == "blocksize":
            t.blocksize = int(
                _number(a.value, "blocksize (bytes)", lo=1, integer=True, hi=MAX_BLOCK)
            )
        elif a.key in ("request", "response"):
            n = int(_number(a.value, f"{a.key} (bytes)", lo=1, integer=True, hi=MAX_BLOCK))
            setattr(t, a.key, n)
        elif a.key == "nbytes":
            t.nbytes = int(_number(a.value, "nbytes (bytes)", lo=1, integer=True, hi=U64_MAX))
        elif a.key == "duration":
            t.duration_s = float(
                _number(
                    a.value,
                    f"duration (seconds; a run's simulated-time limit is {TIME_LIMIT_S:g} s)",
                    lo=0,
                    integer=False,
                    hi=TIME_LIMIT_S,
                )
            )
            if t.duration_s <= 0:
                raise expected(a.value.pos, render(a.value), "a duration > 0 seconds")
        elif a.key == "period":
            t.period_us = float(
                _number(a.value, "period (µs)", lo=0, integer=False, hi=MAX_PERIOD_US)
            )
            if t.period_us <= 0:
                raise expected(a.value.pos, render(a.value), "a period > 0 µs")
        elif a.key == "blocks":
            t.blocks = int(
                _number(
                    a.value, "blocks written back to back per period", lo=1, integer=True, hi=1e6
                )
            )
        elif a.key == "size":
            t.burst_bytes = int(_number(a.value, "bytes per burst", lo=1, integer=True, hi=1e12))
        elif a.key == "rate":
            t.rate_bps = float(_number(a.value, "the mean rate (bit/s)", lo=0, integer=False))
            if t.rate_bps <= 0:
                raise expected(a.value.pos, render(a.value), "a rate > 0 bit/s")
        elif a.key == "disk_rate":
            t.disk_rate = float(
                _number(a.value, "the disk's read rate (bytes/s)", lo=0, integer=False, hi=1e12)
            )
            if t.disk_rate <= 0:
                raise expected(a.value.pos, render(a.value), "a disk rate > 0 bytes/s")
    if call.name == "full" and (t.nbytes is None) == (t.duration_s is None):
        raise expected(
            call.pos, render(call), "full() with exactly one of duration= (s) or nbytes= (bytes)"
        )
    if call.name == "rr":
        if t.duration_s is None:
            raise expected(call.pos, render(call), "rr() with duration= (s)")
        # The request is what the transmitter writes.
        t.blocksize = t.request
    if call.name == "ftp":
        for k, val in (("disk_rate", t.disk_rate), ("duration", t.duration_s)):
            if val is None:
                raise expected(call.pos, render(call), f"ftp() with {k}=")
        if "blocksize" in t.random:
            raise ExperimentError(
                t.where["blocksize"], "not implemented: ftp() with a random blocksize"
            )
        # One block read per period: the disk's rate, whatever the network does.
        t.period_us = t.blocksize / t.disk_rate * 1e6  # type: ignore[operator]
        if t.period_us > MAX_PERIOD_US:
            raise expected(t.where["disk_rate"], f"{t.disk_rate:g}", "a faster disk (bytes/s)")
    if call.name in ("burst", "burstq"):
        _burst_shape(call, t)
        for k, val in (("period", t.period_us), ("duration", t.duration_s)):
            if val is None:
                raise expected(call.pos, render(call), f"{call.name}() with {k}=")
    return t


def _burst_shape(call: Call, t: Traffic) -> None:
    """``size``: a burst of that many bytes, as equal blocks of at most ``blocksize``;
    ``rate``: the period that makes the mean rate (bit/s). Each says one thing once."""
    if t.burst_bytes is not None:
        if "blocks" in t.where:
            raise expected(t.where["size"], f"size={t.burst_bytes}", "size= or blocks=, not both")
        if "blocksize" in t.random:
            raise ExperimentError(t.where["size"], "not implemented: size= with a random blocksize")
        t.blocks = -(-t.burst_bytes // t.blocksize)
        t.blocksize = -(-t.burst_bytes // t.blocks)
    if t.rate_bps is not None:
        if t.period_us is not None:
            raise expected(t.where["rate"], f"rate={t.rate_bps:g}", "rate= or period=, not both")
        if "blocksize" in t.random:
            raise ExperimentError(t.where["rate"], "not implemented: rate= with a random blocksize")
        t.period_us = t.blocks * t.blocksize * 8 / t.rate_bps * 1e6
        if not 0 < t.period_us <= MAX_PERIOD_US:
            raise expected(
                t.where["rate"], f"rate={t.rate_bps:g}", "a rate giving a period in range"
            )


def _endpoint(b: Block) -> Endpoint:
    got: dict[str, Setting] = {}
    for s in b.settings():
        if s.key not in TEST_KEYS:
            raise expected(s.pos, f"key '{s.key}'", f"a test key: {', '.join(TEST_KEYS)}")
        if s.key in got:
            raise expected(
                s.pos, f"'{s.key}' a second time", f"each key once (first at {got[s.key].pos})"
            )
        got[s.key] = s
    name = b.name or f"test@{b.pos.line}"
    for k in TEST_KEYS:
        if k not in got and k not in _OPTIONAL_TEST_KEYS:
            where = b.name_pos or b.pos
            raise ExperimentError(where, f"test {name}: found no '{k}', expected '{k} = ...;'")
    traffic = _traffic(got["type"])
    proto = got.get("protocol")
    pname, window, sndbuf, rcvbuf, nodelay, pacing = "tcp", None, None, None, False, None
    congestion, mss = None, None
    ppos = proto.value.pos if proto else b.pos
    if proto is not None:
        v = proto.value
        call = Call(v.text, [], v.pos) if isinstance(v, Name) else v
        if not isinstance(call, Call) or call.name not in ("tcp", "udp"):
            raise expected(v.pos, render(v), "a protocol: tcp (...) or udp (...)")
        pname = call.name
        for a in call.args:
            if a.key not in PROTOCOL_KEYS:
                shown = f"key '{a.key}'" if a.key else render(a.value)
                raise expected(a.pos, shown, f"a {call.name}() key: {', '.join(PROTOCOL_KEYS)}")
            if a.key == "nodelay":
                nodelay = _flag(a.value, "nodelay")
            elif a.key == "pacing" and isinstance(a.value, Name) and a.value.text == "off":
                pacing = None  # no pacing: a sweep may set a rate at one point, none at another
            elif a.key == "pacing":
                pacing = float(_number(a.value, "pacing (Mb/s)", lo=0, integer=False))
                if pacing <= 0:
                    raise expected(a.value.pos, render(a.value), "a pacing rate > 0 Mb/s")
                traffic.where["pacing"] = a.value.pos
            elif a.key == "congestion":
                if not (isinstance(a.value, Name) and _CONGESTION_NAME.match(a.value.text)):
                    raise expected(
                        a.value.pos,
                        render(a.value),
                        "a kernel congestion control name for congestion (cubic, reno, bbr ...)",
                    )
                congestion = a.value.text
            elif a.key == "mss":
                # Linux's TCP_MAXSEG range: TCP_MIN_MSS (88) to MAX_TCP_WINDOW (32767).
                mss = int(_number(a.value, "mss (bytes)", lo=88, integer=True, hi=32767))
            else:
                n = int(_number(a.value, f"{a.key} (bytes)", lo=1, integer=True, hi=U32_MAX))
                window, sndbuf, rcvbuf = (
                    n if a.key == "window" else window,
                    n if a.key == "sndbuf" else sndbuf,
                    n if a.key == "rcvbuf" else rcvbuf,
                )
            if pname == "udp" and a.key in ("congestion", "mss"):
                raise expected(
                    a.pos, f"key '{a.key}'", "a udp() key (congestion and mss are TCP's)"
                )
    addrs = []
    for k in ("own", "peer"):
        v = got[k].value
        if not isinstance(v, HostPort):
            raise expected(v.pos, render(v), f"HOST:PORT for {k}")
        addrs.append(v)
    return Endpoint(
        name,
        b.pos,
        traffic,
        got["type"].value.pos,
        pname,
        ppos,
        window,
        sndbuf,
        rcvbuf,
        nodelay,
        *addrs,
        pacing_mbps=pacing,
        congestion=congestion,
        mss=mss,
        abr=abrmod.service(got["service"]) if "service" in got else None,
        service_pos=got["service"].value.pos if "service" in got else None,
    )


# --- timing ---------------------------------------------------------------------------------


def _schedule(
    b: Block, after: list[Endpoint], eps: dict[int, Endpoint], out: list[Endpoint]
) -> list[Endpoint]:
    """Give every test under ``b`` the transmitters whose connections it waits for
    (``after``: those that end the previous serial step); return the transmitters
    whose connections end ``b`` (none when ``b`` holds only sinks)."""
    if b.kind == "test":
        ep = eps[id(b)]
        ep.after = after
        out.append(ep)
        return [] if ep.is_sink else [ep]
    if b.kind in ("cluster", "parallel"):
        return [e for c in b.blocks() for e in _schedule(c, after, eps, out)]
    # serial: each step waits for the last one that has connections of its own.
    ends: list[Endpoint] = []
    for c in b.blocks():
        step_ends = _schedule(c, after, eps, out)
        if step_ends:
            after = ends = step_ends
    return ends


def _starts_no_later(sink: Endpoint, tx: Endpoint) -> bool:
    """Whether every connection ``sink`` waits for has surely ended when ``tx``
    starts: one ``tx`` waits for, or one those waited for (and so on)."""
    wanted = {id(e) for e in sink.after} - {id(e) for e in tx.after}
    seen: set[int] = set()
    todo = list(tx.after)
    while wanted and todo:
        e = todo.pop()
        if id(e) not in seen:
            seen.add(id(e))
            wanted.discard(id(e))
            todo.extend(e.after)
    return not wanted


def _tree(b: Block, eps: dict[int, Endpoint], index: dict[str, int]) -> Group | int | None:
    """The block tree under ``b`` with each transmitter test as its connection's index;
    a block holding only sinks is left out."""
    if b.kind == "test":
        ep = eps[id(b)]
        return None if ep.is_sink else index[ep.name]
    g = Group("serial" if b.kind == "serial" else "parallel")
    for child in b.blocks():
        t = _tree(child, eps, index)
        if t is not None:
            g.children.append(t)
    return g if g.children else None


def _collect_tests(b: Block, eps: dict[int, Endpoint]) -> None:
    for c in b.blocks():
        if c.kind == "test":
            eps[id(c)] = _endpoint(c)
        else:
            _collect_tests(c, eps)


# --- building ---------------------------------------------------------------------------------


def _cell_mbps(h: tbmod.HostSpec) -> float:
    """The cell rate of a host's adapter, Mb/s: the framed link's, or with cell-level
    spacing the unframed cell grid the adapter counts (as sim::spec builds it)."""
    return tbmod.cell_mbps(h.phy, framed=h.spacing_us is None)


def _earliest_starts(eps: list[Endpoint]) -> dict[int, float]:
    """For each test, the earliest simulated time it can start: a serial step starts
    when its predecessors end, which is no earlier than their durations say (a byte
    count's end is known only once it runs, so it counts as instant here)."""
    earliest: dict[int, float] = {}
    for ep in eps:  # predecessors come earlier in the file
        earliest[id(ep)] = max(
            (earliest.get(id(p), 0.0) + (p.traffic.duration_s or 0.0) for p in ep.after),
            default=0.0,
        )
    return earliest


def _check_connection(
    tx: Endpoint,
    sink: Endpoint,
    tx_host: tbmod.HostSpec,
    rx_host: tbmod.HostSpec,
    earliest: dict[int, float],
) -> None:
    """What the simulator would refuse, or could not finish in a run's simulated time,
    refused here at the value's position with the limit (the simulator checks again)."""
    t = tx.traffic
    where = t.where
    for ep in (tx, sink):
        start = earliest.get(id(ep), 0.0)
        if start >= TIME_LIMIT_S:
            raise ExperimentError(
                ep.pos,
                f"test {ep.name} starts no earlier than {start:g} s (after the tests before "
                f"it), at or after the simulated-time limit of a run ({TIME_LIMIT_S:g} s): "
                "expected a start before it",
            )
        d = ep.traffic.duration_s
        if d is not None and start + d > TIME_LIMIT_S:
            raise expected(
                ep.traffic.where.get("duration", ep.pos),
                f"duration={d:g} from a start no earlier than {start:g} s",
                f"an end by the simulated-time limit of a run, {TIME_LIMIT_S:g} s "
                f"(a duration of at most {TIME_LIMIT_S - start:g} s here)",
            )
    if t.type == "rr" and tx.protocol != "tcp":
        raise expected(tx.protocol_pos, tx.protocol, "protocol tcp for rr (netperf's TCP_RR)")
    if tx.protocol == "udp" and "blocksize" not in t.random and t.blocksize > MAX_DATAGRAM:
        raise expected(
            where.get("blocksize", tx.type_pos),
            f"blocksize={t.blocksize}",
            f"at most {MAX_DATAGRAM} bytes, the largest UDP datagram",
        )
    link = _cell_mbps(tx_host)
    if tx.abr is not None:
        if tx.pacing_mbps is not None:
            raise expected(
                where["pacing"], f"pacing={tx.pacing_mbps:g}", "no pacing on ABR: ACR is its rate"
            )
        abrmod.check_rates(tx.abr, link * 1e6, tx.service_pos, tx_host.name)
    if tx.pacing_mbps is not None and tx.pacing_mbps > link:
        raise expected(
            where["pacing"],
            f"pacing={tx.pacing_mbps:g}",
            f"at most {link:g} Mb/s, the cell rate of {tx_host.name}'s adapter ({tx_host.phy})",
        )
    if t.period_us is not None:
        floor = tbmod.WRITE_US[tx_host.profile]
        dist = t.random.get("period")
        least = t.period_us if dist is None else dist.params.get("min", dist.params.get("mean"))
        if least < floor:
            raise expected(
                where.get("period", tx.type_pos),
                f"period {dist or f'{t.period_us:g}'} µs",
                f"at least {floor:g} µs, the time one write() takes on {tx_host.profile}: "
                "no host writes blocks more often",
            )
    if t.nbytes is not None:
        # No transfer beats its links' cell payload rate (nor its pacing): a byte count
        # that even that rate cannot carry in the time left is refused, not cut silently.
        rate = min(link, _cell_mbps(rx_host), tx.pacing_mbps or math.inf)
        bps = rate * 1e6 * CELL_PAYLOAD_SHARE
        left = TIME_LIMIT_S - earliest.get(id(tx), 0.0)
        most = int(bps / 8 * left)
        if t.nbytes > most:
            raise expected(
                where.get("nbytes", tx.type_pos),
                f"nbytes={t.nbytes}",
                f"at most {most} bytes: at {rate:g} Mb/s of cells ({bps / 1e6:.2f} Mb/s of "
                f"payload) no transfer moves more in the {left:g} s left of a run's "
                f"simulated-time limit ({TIME_LIMIT_S:g} s)",
            )


def clamp_sockbuf(value: int, flavour: str, what: str, pos: Pos | str, notes: list[str]) -> int:
    """A socket buffer the host's TCP flavour accepts: beyond its largest, that
    largest, with a note saying so (`run` and the ttcp/netperf front ends alike)."""
    limit = tbmod.FLAVOUR_MAX_SOCKBUF.get(flavour)
    window = tbmod.FLAVOUR_MAX_WINDOW.get(flavour)
    if what == "SO_RCVBUF" and window is not None and limit is not None:
        # The kernel would take the buffer, but the 16-bit window field (no RFC 1323
        # scaling) cannot say it: an error rather than a window silently smaller.
        if value > window and limit >= window:
            at = pos if isinstance(pos, Pos) else None
            lead = "" if at is not None else f"{pos}: "
            raise ExperimentError(
                at,
                f"{lead}SO_RCVBUF {value} is a window {flavour} cannot advertise: at most "
                f"{window} (no RFC 1323 window scaling)",
            )
    if limit is not None and value > limit:
        notes.append(
            f"{pos}: {what} {value} exceeds {limit}, the largest socket buffer {flavour} "
            f"accepts: using {limit}"
        )
        return limit
    return value


#: How alike (difflib's ratio) an unused host block's name and a used host's must be
#: to call it a misspelling: one character of an 8-character name differs at 0.875.
MISSPELT = 0.8


def _meant(name: str, used: set[str]) -> str | None:
    """The host of the tests a host block's name most likely means: one the name is
    the stem of (``ipc2`` for ``ipc2.atm``: host names include the interface), else
    a close spelling (``ipc1.atn``)."""
    stems = sorted(u for u in used if u.startswith(name + "."))
    if stems:
        return stems[0]
    close = difflib.get_close_matches(name, sorted(used), n=1, cutoff=MISSPELT)
    return close[0] if close else None


def check_host_blocks(
    doc: Document, used: set[str], base: tbmod.Testbed | None = None
) -> list[str]:
    """A ``host NAME { }`` that no test runs on (at any point of the sweep) changes
    nothing. In the file's testbed block, or among the host blocks of a ``--testbed``
    file (``base``, the testbed it puts in the preset's place; ``Testbed.given``): one
    whose name is the stem of a host a test runs on (``ipc2`` for ``ipc2.atm``) or close
    to one (``ipc1.atn``) is refused at its position, and so is one in a preset's block
    (``testbed lan-buffers { host zz { } }``) that names no host of the preset; any
    other is returned as a note naming the hosts the tests use (a testbed may describe
    hosts no test uses: a real testbed's addresses). A name in ``hosts = [...]``, which
    orders the tests' hosts, must be one of them."""
    hosts = ", ".join(sorted(used))
    notes: list[str] = []

    def judge(name: str, pos: Pos | None, preset_hosts: set[str] | None, testbed: str) -> None:
        meant = _meant(name, used)
        if meant is not None:
            raise expected(
                pos,
                f"host {name}, on which no test runs",
                f"a host of the tests ({hosts}): is it {meant}? "
                "A host block for any other changes nothing",
            )
        if preset_hosts is not None and name not in preset_hosts:
            raise expected(
                pos,
                f"host {name}, a host of neither testbed {testbed} nor the tests",
                f"one of them ({', '.join(sorted(preset_hosts | used))}): a host block "
                "for any other changes nothing",
            )
        notes.append(
            f"{pos}: host {name}: no test runs on it, so its block changes nothing "
            f"(the tests run on {hosts})"
        )

    for tb in (b for b in doc.blocks if b.kind == "testbed"):
        preset_hosts: set[str] | None = None
        if base is not None:
            preset_hosts = set(base.hosts)
        elif tb.name in tbmod.PRESETS:
            preset_hosts = set(tbmod.preset(tb.name).hosts)
        for st in tb.settings():
            items = st.value.items if isinstance(st.value, List) else [st.value]
            for v in items if st.key == "hosts" else []:
                if render(v) not in used:
                    raise expected(
                        v.pos,
                        f"host {render(v)} in hosts = [...], on which no test runs",
                        f"hosts of the tests ({hosts}): the list orders them",
                    )
        for b in tb.blocks():
            if b.kind == "host" and b.name is not None and b.name not in used:
                name = base.name if base is not None else tb.name
                judge(b.name, b.name_pos or b.pos, preset_hosts, name)
    for name, pos in (base.given if base is not None else {}).items():
        if name not in used:
            judge(name, pos, None, base.name)
    return notes


def _resolve_interfaces(eps, testbed: tbmod.Testbed) -> None:
    """Addresses that name a host's Ethernet interface by its ``ethernet_name``
    (``own = ipc1-le:20``) become that host's, marked ``ethernet``; the others name
    the host, whose ``interface`` setting says which of its interfaces they use."""
    alias = {h.ethernet_name: h.name for h in testbed.hosts.values() if h.ethernet_name}
    if not alias:
        return
    for ep in eps:
        for k in ("own", "peer"):
            hp = getattr(ep, k)
            if hp.host in alias:
                setattr(ep, k, replace(hp, host=alias[hp.host], interface="ethernet"))


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
                receiver_blocksize=sink.traffic.blocksize,
                pos=ep.pos,
                pacing_mbps=ep.pacing_mbps,
                congestion=ep.congestion,
                mss=ep.mss,
                abr=ep.abr,
                interface=interface,
                port=ep.peer.port,
                sndbuf_asked=ep.sndbuf or ep.window,
                rcvbuf_asked=sink.rcvbuf or sink.window,
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
    _check_event_budget([e for e in ordered if not e.is_sink])
    tester, tester_pos, slot_us = _tester(doc)
    tree = _tree(clusters[0], eps, index)
    assert isinstance(tree, Group)  # a cluster has a transmitter (checked above)
    return Experiment(
        doc.file, doc.text, testbed, hosts, conns, notes, tester, tester_pos, slot_us, tree
    )


def _writes(t: Traffic) -> tuple[float, str]:
    """The writes a transmitter's traffic asks for when it can be known before it
    runs (a byte count in fixed blocks; blocks every period for a duration), and how
    they come; 0 otherwise."""
    if t.nbytes is not None and "blocksize" not in t.random and t.type != "rr":
        return math.ceil(t.nbytes / t.blocksize), f"{t.nbytes} bytes in {t.blocksize}-byte writes"
    if t.period_us and t.duration_s:
        n = t.blocks * t.duration_s / (t.period_us * 1e-6)
        return n, f"{t.blocks} write(s) every {t.period_us:g} µs for {t.duration_s:g} s"
    return 0, ""


def _check_event_budget(transmitters: list[Endpoint]) -> None:
    """A run its event budget would cut, refused before it runs where the count can
    be known: each write is at least one step of the simulator's loop (measured:
    1.0-1.8 steps a write), so the writes are a floor on the steps the run needs;
    past the budget (sim::guard, a spec's max_events) the run would end cut."""
    budget = _native.DEFAULT_EVENT_BUDGET
    writes = [(*_writes(ep.traffic), ep) for ep in transmitters]
    total = sum(n for n, _, _ in writes)
    if total > budget:
        n, how, ep = max(writes, key=lambda w: w[0])
        t = ep.traffic
        pos = t.where.get("nbytes" if t.nbytes is not None else "period", ep.type_pos)
        raise expected(
            pos,
            f"test {ep.name}: {n:.4g} writes ({how}), {total:.4g} in the run",
            f"at most {budget:.4g} (each write is at least one event, and a run ends "
            f"when it has spent its event budget of {budget:.4g}): larger writes, longer "
            "periods, fewer bytes or a shorter duration",
        )
