"""The testbed's records: a host (``HostSpec``) and the testbed (``Testbed``), their
defaults the run spec's own (``vocab.DEFAULTS``), and the names the core knows.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

from cellbench import _native, vocab
from cellbench.experiment.lang import ExperimentError, Pos

#: Host profiles of docs/design.md §6.3, as the core knows them.
PROFILES = tuple(_native.host_profiles())
#: The named physical layers and the switch's drop policies, as the simulator names them.
PHYS = vocab.PHYS
#: Ethernet interfaces by name (any rate: "ethernet:<Mb/s>") and the interfaces a host's
#: connections may use, as the core's sim::spec::ether names them.
ETHERNET_PHYS = vocab.ETHERNET_PHYS
INTERFACES = vocab.INTERFACES
#: TCP flavours of docs/design.md §6.1 and the largest socket buffer each kernel accepts.
FLAVOUR_MAX_SOCKBUF = dict(_native.tcp_flavours())
#: The largest window each flavour can advertise (65535 without RFC 1323 scaling).
FLAVOUR_MAX_WINDOW = dict(_native.tcp_max_windows())
ENCAPS = vocab.choices("connection", "encap")
#: Host adapter models (docs/design.md §5), as the core knows them, and the spacing modes.
ADAPTERS = vocab.choices("host", "adapter")
SPACINGS = vocab.choices("host", "spacing")
POLICIES = vocab.POLICIES
#: Hop-by-hop flow control at a switch's output ports (docs/design.md §4; none: off).
FLOW_CONTROLS = vocab.choices("switch", "flow_control")
#: What a pacing rate can count (the core's names).
PACING_COUNTS = vocab.choices("host", "pacing_counts")

#: What a host the testbed leaves a key of reads as: the run spec's own defaults.
_HOST = vocab.DEFAULTS["host"]
#: The switch keys a resolved testbed (a result's ``testbed.switch``) always names, with
#: the run spec's defaults; the others (flow_control, credits, abr) only when set.
SWITCH_SHOWN = ("buffer_cells", "policy", "epd_threshold_cells", "clp1_threshold_cells")
SWITCH_DEFAULTS: dict[str, Any] = {k: vocab.DEFAULTS["switch"].get(k) for k in SWITCH_SHOWN}
#: The testbed-wide keys: the IP MTU and encapsulation every connection takes (the run
#: spec's per connection), their defaults the core's VC-mux's.
DEFAULT_ENCAP: str = vocab.DEFAULTS["connection"]["encap"]
DEFAULT_MTU: int = vocab.ENCAP_MTU[DEFAULT_ENCAP]


@dataclass
class HostSpec:
    name: str
    profile: str = _HOST["profile"]
    phy: str = _HOST["phy"]
    distance_m: float = _HOST["distance_m"]
    #: The adapter's idle time between PDUs, µs (None: the adapter model's for its
    #: spacing mode, from the core's one table; docs/design.md §5).
    pdu_gap_us: float | None = _HOST["pdu_gap_us"]
    flavour: str = _HOST["flavour"]
    #: The site (one switch) the host hangs off; sites are joined by trunks.
    site: str = _HOST["site"]
    #: Adapter cell spacing: one cell every this many µs (None: back to back).
    spacing_us: float | None = _HOST["spacing_us"]
    #: The host adapter (ADAPTERS; None: its profile's, docs/design.md §5).
    adapter: str | None = None
    #: How ``spacing_us`` is met: cell-level (None, the default) or cell-burst.
    spacing: str | None = None
    #: With cell-level spacing on an SBA-200, its stall where each 1 KB cluster mbuf
    #: a PDU is gathered from ends (docs/design.md §5).
    stall: bool = _HOST["stall"]
    #: What the adapter's per-VC pacing rate counts: cells (with headers), payloads
    #: (48-byte cell payloads) or datagrams (IP datagrams). Default cells: the per-VC
    #: pacing the setups describe is the MAGIC hosts' DEC OTTO adapter's, which paces by
    #: a schedule ("schedule-based cell pacing": the MAGIC TCP overview,
    #: www.ittc.ku.edu/MAGIC/tcp/overview.html); that its slots count whole cells, headers
    #: included, is the project's reading, which that page does not state.
    pacing_counts: str = _HOST["pacing_counts"]
    #: The host's address on a real network (``--engine real``); the simulator ignores it.
    address: str | None = None
    #: The adapter's interface queue, PDUs (None: BSD's ifq_maxlen, 50).
    ifq_pdus: int | None = None
    #: ``--engine emu``: the namespace kernel's TCP settings (``kernel_cc = cubic;``...),
    #: by their testbed key; the simulator ignores them.
    kernel: dict[str, str | int] = field(default_factory=dict)
    #: An Ethernet interface beside the ATM adapter (ETHERNET_PHYS or "ethernet:<Mb/s>");
    #: None: ATM only.
    ethernet: str | None = None
    #: "half" or "full" (None: half for ethernet10, full otherwise).
    ethernet_duplex: str | None = None
    #: The interface the host's connections use: "atm" or "ethernet".
    interface: str = INTERFACES[0]
    #: A name for the host's Ethernet interface: an address with it (``own =
    #: ipc1-le:20``) uses that interface whatever ``interface`` says (multi-homing).
    ethernet_name: str | None = None


@dataclass
class Testbed:
    name: str
    #: The switch keys the testbed sets (the run spec's defaults stand for the others:
    #: ``resolved_switch``); only these are sent to the simulator.
    switch: dict = field(default_factory=dict)
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    defaults: HostSpec | None = None
    #: A site's switch where it differs from ``switch`` (the whole resolved switch).
    sites: dict[str, dict] = field(default_factory=dict)
    #: Links between sites' switches: {"from", "to", "phy", "delay_ms"}.
    trunks: list[dict] = field(default_factory=list)
    mtu: int = DEFAULT_MTU
    encap: str = DEFAULT_ENCAP
    #: The transmitter and receiver the ttcp/netperf front ends use.
    pair: tuple[str, str] = ("A", "B")
    description: str = ""
    #: Where the file names this testbed (for errors), when it comes from a file.
    pos: Pos | None = None
    #: ``hosts = [a, b, ...]``: the order the network holds its hosts in, those named
    #: first (default: as the tests name them, own then peer). The simulator numbers
    #: hosts in this order, and its results depend on it (model.build).
    order: list[str] | None = None
    #: Where the file sets ``hosts`` (for errors about a name in it).
    order_pos: Pos | None = None
    #: The host blocks a user's testbed file gave (name -> position), not a preset's
    #: (a ``--testbed`` file's and the experiment's own): the runner checks that the
    #: tests run on each (model.check_host_blocks), and a testbed whose every host is
    #: given no longer has the preset's hosts, so its description must not say it
    #: does (``description_of``).
    given: dict[str, Pos | None] = field(default_factory=dict)
    #: Whether such a file set the ``defaults`` (the hosts no block and no preset names).
    defaults_written: bool = False
    #: Where each setting is written, by the run spec's key path: ("host", name, key),
    #: ("switch", site or None, key), ("trunk", index, key); a refusal of the core
    #: (``_native.SpecError``'s path) is shown there.
    positions: dict[tuple, Pos] = field(default_factory=dict)

    def host(self, name: str, pos: Pos | None) -> HostSpec:
        if name in self.hosts:
            return self.hosts[name]
        if self.defaults is None:
            known = ", ".join(sorted(self.hosts)) or "none"
            raise ExperimentError(
                pos, f"host {name!r} is not in testbed {self.name!r} (hosts: {known}; no defaults)"
            )
        h = copy.copy(self.defaults)
        h.name = name
        return h

    def to_dict(self, host_names: list[str] | None = None) -> dict:
        """The resolved testbed (for the result file): every host the experiment uses."""
        names = host_names if host_names is not None else sorted(self.hosts)
        d = {
            "name": self.name,
            "description": self.description_of(names),
            "mtu": self.mtu,
            "encap": self.encap,
            "switch": resolved_switch(self.switch),
            "hosts": [_host_dict(self.host(n, None)) for n in names],
            "trunks": [dict(t) for t in self.trunks],
        }
        if self.sites:
            d["sites"] = {k: resolved_switch(v) for k, v in self.sites.items()}
        return d

    def description_of(self, names: list[str]) -> str:
        """The preset's description, unless the file replaced every host ``names``
        holds (a host block each, or new defaults for those the preset does not name)."""

        def replaced(n: str) -> bool:
            return n in self.given or (self.defaults_written and n not in self.hosts)

        if names and all(replaced(n) for n in names):
            return (
                f"the experiment file's own hosts ({', '.join(names)}) on the {self.name} "
                f"preset's switch, MTU {self.mtu} and {self.encap}"
            )
        return self.description


def resolved_switch(sw: dict) -> dict:
    """A switch as a result describes it: every key of ``SWITCH_SHOWN`` (the run spec's
    default where the testbed sets none), then the others it sets."""
    return {k: sw.get(k, SWITCH_DEFAULTS[k]) for k in SWITCH_SHOWN} | {
        k: v for k, v in sw.items() if k not in SWITCH_SHOWN
    }


def _host_dict(h: HostSpec) -> dict:
    """A host for the result file; ``address`` only when the testbed gives one."""
    d = asdict(h)
    for key in (
        "address",
        "ifq_pdus",
        "adapter",
        "spacing",
        "ethernet",
        "ethernet_duplex",
        "ethernet_name",
    ):
        if d[key] is None:
            del d[key]
    if d["interface"] == INTERFACES[0]:
        del d["interface"]
    if not d["kernel"]:
        del d["kernel"]
    return d


def cell_mbps(phy: str, framed: bool = True) -> float:
    """A physical layer's cell rate, Mb/s (with its framing overhead, or without)."""
    return _native.calc_phy(phy, framed)[1]
