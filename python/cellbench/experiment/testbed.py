"""The testbed as data: hosts (profile, phy, TCP flavour, adapter), the switch.

Written as a block, in the experiment file or a file of its own::

    testbed lan-buffers {              # start from a preset (default lan-buffers), then override
        mtu = 9188;                     # IP MTU, bytes
        encap = vc-mux;                 # vc-mux | llc-snap
        switch { buffer_cells = 256; policy = tail-drop; epd_threshold_cells = 200;
                 clp1_threshold_cells = 192; }  # tagged (CLP=1) cells go from 192 queued; off
                                        # epd_threshold_share = 0.5: half of buffer_cells
        switch east { buffer_cells = 4096;      # site east's switch, where it differs
                      flow_control = credit; credits = 400; }  # AN2 credits per VC per hop
        switch south { abr = erica (target = 0.9, interval_us = 1000); }  # ABR (experiment/abr.py)
        defaults { profile = sparc-ipc; phy = taxi100; flavour = sunos411; }   # any other host
        host roadrunner.atm { profile = sparc-10; distance_m = 20; site = west; }
        host sparc10.atm { phy = oc3c; spacing_us = 19.45; stall = 1; }  # cells 19.45 µs apart; off
        host burst.atm { adapter = sba200; spacing = cell-burst; spacing_us = 19.01; }
        host pc.atm { profile = pentium-90; adapter = pca200; pdu_gap_us = 10; }  # gap: override
        host alpha.atm { phy = oc3c; pacing_counts = cells; }  # or payloads, datagrams
        host ipc1 { ethernet = ethernet10; interface = ethernet; }  # also on a 10 Mb/s Ethernet,
                                                 # which its connections use (default atm)
        trunk { from = west; to = east; phy = oc3c; delay_ms = 4.4; }   # a WAN link, both ways
    }

A host's ``adapter`` (sba100, sba200, pca200, vma200, otto) defaults to the one its
profile had in its study; the adapter and its spacing mode give the gap between PDUs
(only the SBA-200 with cell-level spacing has one published: 52 µs; the SPARCstation
20's Solaris 2.4 driver is taken to leave it unspaced too) unless ``pdu_gap_us`` says
otherwise. ``spacing`` is how ``spacing_us`` is met: ``cell-level``
(default; the SBA-200's driver 2.2.9, with its stalls, ``stall = 0`` to leave them
out) or ``cell-burst`` (driver 2.3.0: bursts of 6-11 cells, ``spacing_us`` the mean
cell interval). docs/mechanisms.md has the sources.

A host may also have an Ethernet interface: ``ethernet = ethernet10`` (the era's
shared 10 Mb/s segment, half duplex), ``ethernet100`` or ``"ethernet:<Mb/s>"`` (full
duplex, point to point; ``ethernet_duplex = half | full`` says otherwise). The hosts'
Ethernet interfaces at one site share one segment; ``interface = ethernet`` makes the
host's connections run over it (both ends must say so), with Ethernet II's MTU of
1500 and no encapsulation header. ``phy = ethernet10`` (or any Ethernet above) is
short for both: a host on an Ethernet only. docs/mechanisms.md says what a segment
models.

Every host hangs off its site's switch (site ``lan`` unless it says otherwise);
trunks join sites' switches, and connections follow the fewest trunks. A host
name the testbed does not list takes ``defaults`` when there is one, else it is
an error. Unknown keys are errors, with their position.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import asdict, dataclass, field

from cellbench import _native, vocab
from cellbench.experiment import abr as abrmod
from cellbench.experiment.lang import (
    Block,
    Document,
    ExperimentError,
    List,
    Name,
    Number,
    Pos,
    Setting,
    String,
    expected,
    parse,
    read,
    render,
)

#: Host profiles of docs/design.md §6.3, as the core knows them.
PROFILES = tuple(_native.host_profiles())
#: The named physical layers and the switch's drop policies, as the simulator names them.
PHYS = vocab.PHYS
#: Ethernet interfaces by name (any rate: "ethernet:<Mb/s>"), the interfaces a host's
#: connections may use, and the MTU over Ethernet, as the core's sim::spec::ether names them.
ETHERNET_PHYS = vocab.ETHERNET_PHYS
INTERFACES = vocab.INTERFACES
ETHERNET_MTU = vocab.ETHERNET_MTU
#: Per profile, the time of one write() system call, µs: the shortest block period.
WRITE_US = dict(_native.host_write_us())
#: TCP flavours of docs/design.md §6.1 and the largest socket buffer each kernel accepts.
FLAVOUR_MAX_SOCKBUF = dict(_native.tcp_flavours())
#: The largest window each flavour can advertise (65535 without RFC 1323 scaling).
FLAVOUR_MAX_WINDOW = dict(_native.tcp_max_windows())
ENCAPS = ("vc-mux", "llc-snap")
#: Host adapter models (docs/design.md §5), as the core knows them, and the spacing modes.
ADAPTERS = tuple(name for name, _ in _native.adapter_models())
SPACINGS = ("cell-level", "cell-burst")
POLICIES = vocab.POLICIES
SWITCH_KEYS = (
    "buffer_cells",
    "policy",
    "epd_threshold_cells",
    "epd_threshold_share",
    "clp1_threshold_cells",
    "flow_control",
    "credits",
    "abr",
)
#: Hop-by-hop flow control at a switch's output ports (docs/design.md §4; none: off).
FLOW_CONTROLS = ("none", "credit")


@dataclass
class HostSpec:
    name: str
    profile: str = "sparc-ipc"
    phy: str = "taxi100"
    distance_m: float = 20.0
    #: The adapter's idle time between PDUs, µs (None: the adapter model's for its
    #: spacing mode, from the core's one table; docs/design.md §5).
    pdu_gap_us: float | None = None
    flavour: str = "sunos411"
    #: The site (one switch) the host hangs off; sites are joined by trunks.
    site: str = "lan"
    #: Adapter cell spacing: one cell every this many µs (None: back to back).
    spacing_us: float | None = None
    #: The host adapter (ADAPTERS; None: its profile's, docs/design.md §5).
    adapter: str | None = None
    #: How ``spacing_us`` is met: cell-level (None, the default) or cell-burst.
    spacing: str | None = None
    #: With cell-level spacing on an SBA-200, its stall where each 1 KB cluster mbuf
    #: a PDU is gathered from ends (docs/design.md §5).
    stall: bool = True
    #: What the adapter's per-VC pacing rate counts: cells (with headers), payloads
    #: (48-byte cell payloads) or datagrams (IP datagrams). Default cells: the per-VC
    #: pacing the setups describe is the MAGIC hosts' DEC OTTO adapter's, a schedule of
    #: cell slots (ittc.ku.edu/MAGIC/tcp: "schedule-based cell pacing").
    pacing_counts: str = "cells"
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
    interface: str = "atm"
    #: A name for the host's Ethernet interface: an address with it (``own =
    #: ipc1-le:20``) uses that interface whatever ``interface`` says (multi-homing).
    ethernet_name: str | None = None


#: ``--engine emu``'s per-namespace kernel TCP settings: testbed key -> sysctl, and what
#: a value must be (a congestion control name, 0/1, or a socket buffer limit in bytes).
KERNEL_SYSCTLS = {
    "kernel_cc": ("net.ipv4.tcp_congestion_control", "name"),
    "kernel_sack": ("net.ipv4.tcp_sack", "flag"),
    "kernel_timestamps": ("net.ipv4.tcp_timestamps", "flag"),
    "kernel_window_scaling": ("net.ipv4.tcp_window_scaling", "flag"),
    "kernel_rmem": ("net.ipv4.tcp_rmem", "bytes"),
    "kernel_wmem": ("net.ipv4.tcp_wmem", "bytes"),
}


@dataclass
class Testbed:
    name: str
    switch: dict = field(
        default_factory=lambda: {
            "buffer_cells": 256,
            "policy": "tail-drop",
            "epd_threshold_cells": 200,
            # CLP-selective discard: None (off) or 1..buffer_cells.
            "clp1_threshold_cells": None,
        }
    )
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    defaults: HostSpec | None = None
    #: A site's switch where it differs from ``switch`` (the whole resolved switch).
    sites: dict[str, dict] = field(default_factory=dict)
    #: Links between sites' switches: {"from", "to", "phy", "delay_ms"}.
    trunks: list[dict] = field(default_factory=list)
    mtu: int = 9188
    encap: str = "vc-mux"
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
    #: The host blocks a user's testbed file gave (name -> position), not a preset's:
    #: the runner checks that the tests run on each (model.check_host_blocks).
    given: dict[str, Pos | None] = field(default_factory=dict)
    #: The hosts this file's own ``host NAME { }`` blocks set, and whether it set the
    #: ``defaults``: a testbed whose every host is the file's no longer has the
    #: preset's hosts, so its description must not say it does (``to_dict``).
    written: set[str] = field(default_factory=set)
    defaults_written: bool = False

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
            "switch": dict(self.switch),
            "hosts": [_host_dict(self.host(n, None)) for n in names],
            "trunks": [dict(t) for t in self.trunks],
        }
        if self.sites:
            d["sites"] = {k: dict(v) for k, v in self.sites.items()}
        return d

    def description_of(self, names: list[str]) -> str:
        """The preset's description, unless the file replaced every host ``names``
        holds (a host block each, or new defaults for those the preset does not name)."""

        def replaced(n: str) -> bool:
            return n in self.written or (self.defaults_written and n not in self.hosts)

        if names and all(replaced(n) for n in names):
            return (
                f"the experiment file's own hosts ({', '.join(names)}) on the {self.name} "
                f"preset's switch, MTU {self.mtu} and {self.encap}"
            )
        return self.description


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
    if d["interface"] == "atm":
        del d["interface"]
    if not d["kernel"]:
        del d["kernel"]
    return d


def cell_mbps(phy: str, framed: bool = True) -> float:
    """A physical layer's cell rate, Mb/s (with its framing overhead, or without)."""
    return _native.calc_phy(phy, framed)[1]


def _lan_buffers() -> Testbed:
    return Testbed(
        name="lan-buffers",
        description="two SPARCstation IPCs (SunOS 4.1.1) on 100 Mb/s TAXI through one "
        "256-cell-per-port switch, VC-mux, MTU 9188; any host name maps onto this hardware",
        defaults=HostSpec(name="*"),
    )


def _written(name: str, description: str, pair: tuple[str, str], text: str) -> Testbed:
    """A preset written in the testbed language itself: only the hosts it names."""
    doc = parse(f"testbed {{\n{text}\n}}", f"<testbed preset {name}>")
    tb = from_block(doc.blocks[0], Testbed(name=name, description=description, pair=pair))
    tb.given = {}  # a preset's hosts are the testbed's, not a user's blocks
    tb.written, tb.defaults_written = set(), False  # the preset's own hosts
    return tb


# --- the MAGIC path (wan-window and wan-mismatch describe the same one) ---------------------
#: Light in fibre: about 5 µs per km (refractive index ~1.5), as the simulator counts
#: a host's distance_m (``vocab.FIBRE_PS_PER_M``).
FIBRE_US_PER_KM = vocab.FIBRE_PS_PER_M * 1000 / 1e6
#: The path's length and its measured round trip (docs/wan-window.md).
MAGIC_KM = 600
MAGIC_RTT_MS = 8.8
#: One way, the fibre alone: 600 km x 5 µs/km = 3.0 ms.
MAGIC_FIBRE_MS = MAGIC_KM * FIBRE_US_PER_KM / 1000
#: One way, what the rest of the path adds: 8.8 / 2 - 3.0 = 1.4 ms. The equipment the
#: setups describe (OC-3c adapters, 256-cell switches, a 20 m machine-room link at each
#: end) is modelled and adds about one cell time per store-and-forward hop at zero
#: load, ~0.01 ms one way, below the 0.05 ms the published 8.8 ms resolves; so the 1.4 ms
#: is the WAN's own: the carrier's SONET multiplexers and switches between the sites
#: and a fibre route longer than the 600 km, which the testbed does not model as
#: elements of their own. The trunk carries it with the fibre.
MAGIC_EQUIPMENT_MS = round(MAGIC_RTT_MS / 2 - MAGIC_FIBRE_MS, 6)
MAGIC_ONE_WAY_MS = round(MAGIC_FIBRE_MS + MAGIC_EQUIPMENT_MS, 6)

_MAGIC_TRUNK = f"""
    # The MAGIC path: {MAGIC_KM} km of fibre ({MAGIC_FIBRE_MS:g} ms one way at
    # {FIBRE_US_PER_KM:g} us/km) plus {MAGIC_EQUIPMENT_MS:g} ms of WAN equipment, from the
    # measured {MAGIC_RTT_MS:g} ms round trip (testbed.py: MAGIC_EQUIPMENT_MS says how).
    trunk {{ from = west; to = east; phy = oc3c; delay_ms = {MAGIC_ONE_WAY_MS:g}; }}
"""

#: The WAN setups of docs/design.md §10, as the reproductions build them.
_WAN_WINDOW = (
    """
    encap = llc-snap; mtu = 9180;
    host alpha-west { profile = alpha-3000; phy = oc3c; flavour = osf1; site = west; }
    host alpha-east { profile = alpha-3000; phy = oc3c; flavour = osf1; site = east; }
"""
    + _MAGIC_TRUNK
)
_WAN_MISMATCH = (
    """
    encap = llc-snap; mtu = 9180;
    # The Alphas' OC-3c adapters (DEC OTTO) pace per VC by a schedule of cell slots:
    # a pacing rate counts cells with their headers (ittc.ku.edu/MAGIC/tcp).
    host alpha1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = west;
                  pacing_counts = cells; }
    host alpha2 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = west;
                  pacing_counts = cells; }
    host taxi-sender { profile = sparc-10; phy = taxi100; flavour = osf1; site = west; }
    host sparc10 { profile = sparc-10; phy = taxi100; flavour = osf1; site = east; }
    # The 256-cell port where OC-3c meets TAXI is east's switch's port to sparc10.
"""
    + _MAGIC_TRUNK
)
#: wan-mismatch's case 3 and experiments 5 and 6 (docs/wan-mismatch.md: the slides' experiments
#: 4-6) on the MAGIC network's sites: Lawrence and Kansas City in Kansas, and South
#: Dakota, as the slides place the hosts. The lengths the slides do not give are chosen
#: so that Lawrence to South Dakota is the MAGIC path the other cases use (600 km,
#: 8.8 ms round trip: MAGIC_KM, MAGIC_RTT_MS).
MAGIC_LAWRENCE_KC_KM = 60
MAGIC_LAWRENCE_KC_MS = MAGIC_LAWRENCE_KC_KM * FIBRE_US_PER_KM / 1000
MAGIC_KC_SOUTH_DAKOTA_MS = round(MAGIC_ONE_WAY_MS - MAGIC_LAWRENCE_KC_MS, 6)
_MAGIC_SITES = f"""
    encap = llc-snap; mtu = 9180;
    # The Alphas' OC-3c adapters (DEC OTTO) pace per VC, counting cells with headers.
    host alpha-law1 {{ profile = alpha-3000; phy = oc3c; flavour = osf1; site = lawrence;
                      pacing_counts = cells; }}
    host alpha-law2 {{ profile = alpha-3000; phy = oc3c; flavour = osf1; site = lawrence;
                      pacing_counts = cells; }}
    # SPARC-10s with 100 Mb/s TAXI Fore adapters (no pacing), TCP as wan-mismatch's
    # SPARC-10 (128 KB windows). "One in Kansas": the slides name no town; Lawrence.
    host sparc10-ks {{ profile = sparc-10; phy = taxi100; flavour = osf1; site = lawrence; }}
    host sparc10-sd {{ profile = sparc-10; phy = taxi100; flavour = osf1; site = south-dakota; }}
    # The SGI Onyx (IRIX, TAXI Fore adapter): the Power Challenge's profile, the same
    # SGI machine family and IRIX (the era's profiles have no Onyx of its own).
    host onyx {{ profile = power-challenge; phy = taxi100; flavour = irix601; site = kc; }}
    # Lawrence to Kansas City: {MAGIC_LAWRENCE_KC_KM} km of route.
    trunk {{ from = lawrence; to = kc; phy = oc3c;
            delay_ms = {MAGIC_LAWRENCE_KC_MS:g}; }}
    # Kansas City to South Dakota: the rest of the 600 km MAGIC path, with its
    # {MAGIC_EQUIPMENT_MS:g} ms of WAN equipment, so Lawrence-South Dakota is 8.8 ms round trip.
    trunk {{ from = kc; to = south-dakota; phy = oc3c;
            delay_ms = {MAGIC_KC_SOUTH_DAKOTA_MS:g}; }}
"""
_EUROPE_VP = """
    # The sender's SBus adapter, an SBA-200 (the sparc-10 profile's): with cell-level
    # spacing (driver 2.2.9) docs/design.md §5's 52 µs firmware gap between PDUs, idle time beyond
    # the spacing interval, and the 7-8 slot stall where a 1 KB cluster mbuf ends
    # (stall = 1), which TCP segments never meet (an assumption: each 4 KB append to
    # SunOS's send buffer is one host buffer; 000 §4.1.1 has its mbufs point to 1 KB
    # blocks); unspaced, no gap (none published). docs/mechanisms.md.
    host sparc10-a { profile = sparc-10; adapter = sba200; phy = oc3c; site = lan-a;
                     stall = 1; }
    host sparc10-b { profile = sparc-10; phy = taxi100; site = lan-b; }
    # 400 km: 2 ms of fibre each way; the 8 ms ping RTT leaves 2 ms each way to the
    # public network's equipment, put on the long hop, whose switch polices the VP.
    trunk { from = lan-a; to = public; phy = e3; delay_ms = 0.05; }
    trunk { from = public; to = lan-b; phy = e3; delay_ms = 3.95;
            upc_t_us = 16.39; upc_tau_us = 101; upc_action = discard; }
"""

# --- wan-contention: several transfers sharing WAN links -------------------------------------
#: The study (docs/wan-contention.md) gives sites on DS-3 and OC-3c access links and
#: round trips of 2 to 70 ms with a coast-to-coast path among them, not the sites. This
#: WAN is a star around a carrier hub (kc, Kansas City): each site's edge switch (256
#: cells per output port) reaches the hub by its access link. One-way delays are fibre
#: routes at
#: FIBRE_US_PER_KM, their lengths chosen so that the pairs' round trips span the
#: setup's range: lawrence<->kclab 2 ms (100 km each), the coast-to-coast pair
#: san-diego<->washington 70 ms (4000 + 3000 km).
WAN_CONTENTION_SITES = {
    # site: (access link, route km to the hub)
    "lawrence": ("ds3", 100),
    "kclab": ("oc3c", 100),
    "minneapolis": ("ds3", 1000),
    "washington": ("oc3c", 3000),
    "san-diego": ("ds3", 4000),
}
#: Hosts (DEC Alphas, OSF/1 with RFC 1323, OC-3c adapters, as on the MAGIC WAN) per site.
WAN_CONTENTION_HOSTS = {
    "lawrence": ("law1", "law2", "law3", "law4"),
    "kclab": ("kclab1", "kclab2"),
    "minneapolis": ("mpls1", "mpls2"),
    "washington": ("dc1", "dc2", "dc3"),
    "san-diego": ("sd1",),
}


def _wan_contention_text() -> str:
    lines = ["encap = llc-snap; mtu = 9180;"]
    for site, hosts in WAN_CONTENTION_HOSTS.items():
        for h in hosts:
            lines.append(
                f"host {h} {{ profile = alpha-3000; phy = oc3c; flavour = osf1; site = {site}; }}"
            )
    for site, (phy, km) in WAN_CONTENTION_SITES.items():
        ms = km * FIBRE_US_PER_KM / 1000
        lines.append(f"trunk {{ from = {site}; to = kc; phy = {phy}; delay_ms = {ms:g}; }}")
    return "\n".join(lines)


_WAN_CONTENTION = _wan_contention_text()

#: wan-contention's offered-load part (docs/wan-contention.md): three source-destination pairs on
#: the AAI network, WPAFB-ITTC, NRL-ITTC and ARL-GSD, whose paths share one DS-3 link.
#: The paper names the sites and the shared DS-3, not the other links' rates or lengths;
#: each choice below says why (route km at FIBRE_US_PER_KM).
_WAN_CONTENTION_AAI = """
    encap = llc-snap; mtu = 9180;
    # DEC Alphas (OSF/1, OC-3c adapters) as on the rest of the study's WAN.
    host wpafb1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = wpafb; }
    host nrl1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = nrl; }
    host arl1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = arl; }
    host ittc1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = ittc; }
    host ittc2 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = ittc; }
    # GSD: the paper gives no place; on the carrier's Kansas City switch (kc), so that
    # ARL-GSD crosses the same east-to-Kansas-City DS-3 as the two pairs into ITTC.
    host gsd1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = kc; }
    # Every link but the shared one is OC-3c (no rate given): the DS-3 is then the only
    # narrow link, so whatever is lost is lost where the three paths meet.
    # WPAFB (Dayton, Ohio) to the carrier's eastern switch in Washington: 600 km of route.
    trunk { from = wpafb; to = east; phy = oc3c; delay_ms = 3; }
    # NRL (Washington, DC): a metro link, 20 km.
    trunk { from = nrl; to = east; phy = oc3c; delay_ms = 0.1; }
    # ARL (Aberdeen Proving Ground, Maryland) to Washington: 120 km.
    trunk { from = arl; to = east; phy = oc3c; delay_ms = 0.6; }
    # The shared DS-3, Washington to Kansas City: 1700 km of route (1550 km great circle).
    trunk { from = east; to = kc; phy = ds3; delay_ms = 8.5; }
    # ITTC (Lawrence, Kansas) to Kansas City: 60 km.
    trunk { from = kc; to = ittc; phy = oc3c; delay_ms = 0.3; }
"""


# --- hetero-lan (docs/hetero-lan.md): the hosts of docs/design.md §6.3, each with its OS's TCP
#: A campus backbone: the two switches are a building apart; 1 km of fibre at 5 µs/km
#: (an assumption: the setup gives no length; at 5 µs it is far below one cell time's
#: worth of effect on a LAN transfer).
CAMPUS_TRUNK_MS = 1 * FIBRE_US_PER_KM / 1000
#: OC-3c over UTP-5 reaches at most 100 m (ATM Forum af-phy-0015); the longest is taken.
UTP5_M = 100
_HETERO_LAN = f"""
    # Each host's adapter is its profile's (docs/design.md §5): SBA-200 on the SPARCs and
    # Ultra-1s, PCA-200 on the Pentiums, VMA-200 on the Power Challenge; unspaced, none
    # has a published gap between PDUs (the Ultra-1 pair's 97% of OC-3c bounds the
    # SBA-200's to ~16 µs), so none is modelled but the SPARCstation 20s' driver's, 52 µs
    # (their profile's, an assumption: docs/hetero-lan.md, "Host limits").
    # Testbed 1: one switch, OC-3c (SONET framing) on UTP-5. Two Pentium-90s (Windows
    # NT 3.51, PCI adapters, VC-mux only) and two SPARCstation 20s (Solaris 2.4).
    host pentium90-a {{ profile = pentium-90; flavour = nt351; phy = oc3c; site = tb1;
                       distance_m = {UTP5_M}; }}
    host pentium90-b {{ profile = pentium-90; flavour = nt351; phy = oc3c; site = tb1;
                       distance_m = {UTP5_M}; }}
    host sparc20-a {{ profile = sparc-20; flavour = solaris24; phy = oc3c; site = tb1;
                     distance_m = {UTP5_M}; }}
    host sparc20-b {{ profile = sparc-20; flavour = solaris24; phy = oc3c; site = tb1;
                     distance_m = {UTP5_M}; }}
    # Testbed 2: the campus backbone switch with the Power Challenge (IRIX 6.0.1), joined
    # over OC-3c fibre to a second switch with a Pentium-100 (NT 3.51), a SPARCstation
    # 10/512 (SunOS 4.1.3) and two Ultra-1s (Solaris 2.5).
    host challenge {{ profile = power-challenge; flavour = irix601; phy = oc3c; site = campus; }}
    host pentium100 {{ profile = pentium-100; flavour = nt351; phy = oc3c; site = dept; }}
    host sparc10 {{ profile = sparc-10; flavour = sunos413; phy = oc3c; site = dept; }}
    host ultra1-a {{ profile = ultra-1; flavour = solaris25; phy = oc3c; site = dept; }}
    host ultra1-b {{ profile = ultra-1; flavour = solaris25; phy = oc3c; site = dept; }}
    trunk {{ from = campus; to = dept; phy = oc3c; delay_ms = {CAMPUS_TRUNK_MS:g}; }}
"""

#: Named presets: the classic testbeds of docs/design.md §10. ``lan`` is lan-buffers' hardware.
PRESETS = {
    "lan-buffers": _lan_buffers,
    "lan": _lan_buffers,
    "wan-window": lambda: _written(
        "wan-window",
        "MAGIC WAN: two DEC Alphas (OSF/1), OC-3c, 600 km, 8.8 ms RTT",
        ("alpha-west", "alpha-east"),
        _WAN_WINDOW,
    ),
    "wan-mismatch": lambda: _written(
        "wan-mismatch",
        "MAGIC WAN: OC-3c (and TAXI) senders into a TAXI receiver 600 km away",
        ("alpha1", "sparc10"),
        _WAN_MISMATCH,
    ),
    "magic": lambda: _written(
        "magic",
        "MAGIC WAN sites: OC-3c Alphas and a TAXI SPARC-10 in Lawrence, a TAXI SPARC-10 in "
        "South Dakota, a TAXI SGI Onyx in Kansas City",
        ("alpha-law1", "sparc10-sd"),
        _MAGIC_SITES,
    ),
    "europe-vp": lambda: _written(
        "europe-vp",
        "two ATM LANs joined by a 23.42 Mb/s VP policed by GCRA(16.39, 101)",
        ("sparc10-a", "sparc10-b"),
        _EUROPE_VP,
    ),
    "hetero-lan": lambda: _written(
        "hetero-lan",
        "heterogeneous ATM LAN on OC-3c: NT PCs and SPARCstation 20s on one switch; "
        "a Power Challenge, a Pentium-100, a SPARCstation 10 and Ultra-1s on two",
        ("ultra1-a", "ultra1-b"),
        _HETERO_LAN,
    ),
    "wan-contention": lambda: _written(
        "wan-contention",
        "a carrier WAN: five sites on DS-3 and OC-3c access links around one hub, "
        "round trips of 2 to 70 ms",
        ("kclab1", "law1"),
        _WAN_CONTENTION,
    ),
    "wan-contention-aai": lambda: _written(
        "wan-contention-aai",
        "the AAI WAN: WPAFB, NRL and ARL into ITTC and GSD over one shared DS-3",
        ("wpafb1", "ittc1"),
        _WAN_CONTENTION_AAI,
    ),
}


def preset(name: str, pos: Pos | None = None) -> Testbed:
    if name not in PRESETS:
        raise ExperimentError(
            pos, f"found testbed preset {name!r}, expected one of {', '.join(sorted(PRESETS))}"
        )
    tb = PRESETS[name]()
    if name == "lan":
        tb.name = "lan"
    return tb


def _number(s: Setting, what: str, lo: float, hi: float, integer: bool = True) -> int | float:
    v = s.value
    if not isinstance(v, Number) or (integer and not isinstance(v.value, int)):
        kind = "a whole number" if integer else "a number"
        raise expected(v.pos, render(v), f"{kind} {lo:g}..{hi:g} for {what}")
    if not lo <= v.value <= hi:
        raise expected(v.pos, render(v), f"{what} in {lo:g}..{hi:g}")
    return v.value


def _choice(s: Setting, what: str, choices: tuple[str, ...]) -> str:
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    if text not in choices:
        raise expected(v.pos, render(v), f"{what}: one of {', '.join(choices)}")
    return text  # type: ignore[return-value]


def _clp1_threshold(s: Setting) -> int | None:
    """``clp1_threshold_cells = N;`` (CLP=1 cells dropped from N queued) or ``off``."""
    v = s.value
    if isinstance(v, Name) and v.text == "off":
        return None
    if isinstance(v, Number) and isinstance(v.value, int) and v.value >= 1:
        return v.value
    raise expected(v.pos, render(v), "a CLP-1 threshold in cells (a whole number >= 1) or off")


def _spacing(s: Setting) -> float | None:
    """``spacing_us = N;`` (one cell every N µs) or ``off`` (back to back), so a
    sweep can hold the unspaced adapter beside the spacings."""
    v = s.value
    if isinstance(v, Name) and v.text == "off":
        return None
    if isinstance(v, Number) and 0.1 <= v.value <= 1e6:
        return float(v.value)
    raise expected(v.pos, render(v), "the adapter's cell spacing in µs (0.1..1e+06) or off")


def _unknown(s: Setting, where: str, keys) -> ExperimentError:
    return expected(s.pos, f"key '{s.key}'", f"a {where} key: {', '.join(keys)}")


HOST_KEYS = (
    "profile",
    "phy",
    "distance_m",
    "pdu_gap_us",
    "flavour",
    "site",
    "adapter",
    "spacing",
    "spacing_us",
    "stall",
    "pacing_counts",
    "address",
    "ifq_pdus",
    "ethernet",
    "ethernet_duplex",
    "interface",
    "ethernet_name",
    *KERNEL_SYSCTLS,
)
#: What a pacing rate can count (the core's names).
PACING_COUNTS = ("cells", "payloads", "datagrams")
TRUNK_KEYS = ("from", "to", "phy", "delay_ms", "upc_t_us", "upc_tau_us", "upc_action")


def _site(s: Setting) -> str:
    v = s.value
    if not isinstance(v, (Name, String)):
        raise expected(v.pos, render(v), "a site name")
    return v.text


def _address(s: Setting) -> str:
    """``address = 10.1.0.1;`` (or a quoted IPv6 address): where the real engine finds the host."""
    import ipaddress

    v = s.value
    try:
        return str(ipaddress.ip_address(v.text if isinstance(v, (Name, String)) else ""))
    except ValueError:
        raise expected(v.pos, render(v), "an IP address such as 10.1.0.1") from None


def _kernel_value(s: Setting) -> str | int:
    """A ``kernel_*`` setting: a congestion control name (cubic, reno, bbr), 0 or 1, or a
    socket buffer limit in bytes."""
    kind = KERNEL_SYSCTLS[s.key][1]
    v = s.value
    if kind == "name":
        if isinstance(v, (Name, String)) and v.text.replace("_", "").isalnum():
            return v.text
        raise expected(v.pos, render(v), "a Linux congestion control name such as cubic or reno")
    if kind == "flag":
        return int(_number(s, f"{s.key} (0 or 1)", 0, 1))
    return int(_number(s, f"{s.key}: the socket buffer limit in bytes", 4096, 1 << 30))


def _trunk(block: Block) -> dict:
    """``trunk { from = west; to = east; phy = oc3c; delay_ms = 4.4; }``: a link
    between two sites' switches (an output port each way)."""
    t: dict = {"phy": "oc3c"}
    upc: dict = {}
    for s in block.settings():
        if s.key in ("from", "to"):
            t[s.key] = _site(s)
        elif s.key == "phy":
            t["phy"] = _choice(s, "a physical layer", PHYS)
        elif s.key == "delay_ms":
            t["delay_ms"] = float(_number(s, "the one-way delay in ms", 0, 1e6, integer=False))
        elif s.key in ("upc_t_us", "upc_tau_us"):
            what = (
                "the UPC's GCRA increment T in µs"
                if s.key == "upc_t_us"
                else "its tolerance τ in µs"
            )
            upc[s.key[4:]] = float(_number(s, what, 0, 1e9, integer=False))
        elif s.key == "upc_action":
            upc["action"] = _choice(s, "a UPC action", ("discard", "tag"))
        else:
            raise _unknown(s, "trunk", TRUNK_KEYS)
    if upc:
        if "t_us" not in upc or "tau_us" not in upc:
            raise expected(block.pos, "trunk { }", "both upc_t_us and upc_tau_us for a UPC")
        t["upc"] = upc
    for key in ("from", "to", "delay_ms"):
        if key not in t:
            raise expected(block.pos, "trunk { }", f"a trunk with {key} = ...")
    if t["from"] == t["to"]:
        raise expected(
            _setting_pos(block, "to") or block.pos,
            f"trunk from {t['from']} to itself",
            "two different sites",
        )
    return t


#: Host settings of its ATM adapter: nothing to set on a host on an Ethernet only.
ATM_ADAPTER_KEYS = ("spacing_us", "spacing", "adapter", "pdu_gap_us", "pacing_counts", "stall")


def _host(block: Block, h: HostSpec) -> HostSpec:
    interface_pos: Pos | None = None
    #: This block's settings by key (the last of each), for the checks after them all.
    given: dict[str, Setting] = {}
    for s in block.settings():
        given[s.key] = s
        if s.key == "profile":
            h.profile = _choice(s, "a host profile", PROFILES)
        elif s.key == "phy" and _names_ethernet(s):
            # ``phy = ethernet10`` (issue 22's spelling): a host on an Ethernet only, its
            # connections over it; the same as ``ethernet = ethernet10; interface =
            # ethernet;`` (a multi-homed host names both interfaces instead).
            h.ethernet = _ethernet(s)
            h.interface = "ethernet"
        elif s.key == "phy":
            h.phy = _choice(s, "a physical layer (or an Ethernet: ethernet10, ...)", PHYS)
        elif s.key == "distance_m":
            h.distance_m = float(_number(s, "the fibre length in metres", 0, 2e7, integer=False))
        elif s.key == "pdu_gap_us":
            h.pdu_gap_us = float(_number(s, "the adapter's gap between PDUs in µs", 0, 1e6, False))
        elif s.key == "flavour":
            h.flavour = _choice(s, "a TCP flavour", tuple(FLAVOUR_MAX_SOCKBUF))
        elif s.key == "site":
            h.site = _site(s)
        elif s.key == "spacing_us":
            h.spacing_us = _spacing(s)
        elif s.key == "adapter":
            h.adapter = _choice(s, "a host adapter", ADAPTERS)
        elif s.key == "spacing":
            h.spacing = _choice(s, "an adapter spacing mode", SPACINGS)
        elif s.key == "stall":
            h.stall = bool(_number(s, "stall (0 or 1)", 0, 1))
        elif s.key == "pacing_counts":
            h.pacing_counts = _choice(s, "what the adapter's pacing rate counts", PACING_COUNTS)
        elif s.key == "address":
            h.address = _address(s)
        elif s.key == "ifq_pdus":
            h.ifq_pdus = int(_number(s, "the adapter's interface queue in PDUs", 1, 1 << 20))
        elif s.key in KERNEL_SYSCTLS:
            h.kernel = {**h.kernel, s.key: _kernel_value(s)}
        elif s.key == "ethernet":
            h.ethernet = _ethernet(s)
        elif s.key == "ethernet_duplex":
            h.ethernet_duplex = _choice(s, "an Ethernet duplex", ("half", "full"))
        elif s.key == "interface":
            h.interface = _choice(s, "the interface the host's connections use", INTERFACES)
            interface_pos = s.value.pos
        elif s.key == "ethernet_name":
            h.ethernet_name = _site(s)
            interface_pos = s.value.pos
        else:
            raise _unknown(s, "host", HOST_KEYS)
    if (h.interface == "ethernet" or h.ethernet_name) and h.ethernet is None:
        what = "interface = ethernet" if h.interface == "ethernet" else "ethernet_name"
        raise expected(
            interface_pos or block.pos,
            f"{what} on host {h.name}",
            "an Ethernet interface to use: ethernet = ethernet10 (or ethernet100, "
            '"ethernet:<Mb/s>")',
        )
    _check_adapter_settings(h, given)
    return h


def _check_adapter_settings(h: HostSpec, given: dict[str, Setting]) -> None:
    """An ATM adapter's settings on a host whose connections use its Ethernet do
    nothing; cell-burst spacing keeps a mean spacing, which it needs."""
    atm = [given[k] for k in ATM_ADAPTER_KEYS if k in given]
    if h.interface == "ethernet" and atm and h.name != "*":
        s = atm[0]
        raise expected(
            s.pos,
            f"{s.key} = {render(s.value)} on host {h.name}, whose connections use its "
            f"Ethernet ({h.ethernet})",
            "ATM adapter settings on a host whose connections use ATM (phy = oc3c, ...; "
            "or interface = atm)",
        )
    s = given.get("spacing")
    if s is not None and h.spacing == "cell-burst" and h.spacing_us is None:
        raise expected(
            s.pos,
            f"spacing = cell-burst on host {h.name} without a spacing",
            "spacing_us = US too: the mean cell spacing its bursts keep (ENI driver 2.3.0)",
        )


def _names_ethernet(s: Setting) -> bool:
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    return text is not None and (text in ETHERNET_PHYS or text.startswith("ethernet:"))


def _ethernet(s: Setting) -> str:
    """``ethernet = ethernet10;`` (or ``ethernet100``, ``"ethernet:<Mb/s>"``): the host's
    Ethernet interface."""
    v = s.value
    text = v.text if isinstance(v, (Name, String)) else None
    if text in ETHERNET_PHYS:
        return text
    if text is not None and text.startswith("ethernet:"):
        try:
            mbps = float(text.removeprefix("ethernet:"))
        except ValueError:
            mbps = math.nan
        if 0.001 <= mbps <= 100_000:
            return text
    raise expected(
        v.pos,
        render(v),
        'an Ethernet interface: ethernet10, ethernet100 or "ethernet:<Mb/s>" (0.001..100000)',
    )


def from_block(block: Block, base: Testbed | None = None) -> Testbed:
    """A testbed from a ``testbed [PRESET] { ... }`` block (checked against the schema)."""
    if block.name is not None and base is not None:
        # --testbed replaces the preset the file names (model.build notes it); a
        # misspelt name is still an error.
        preset(block.name, block.name_pos)
        tb = copy.deepcopy(base)
        tb.pos = block.name_pos
    elif block.name is not None:
        tb = preset(block.name, block.name_pos)
        tb.pos = block.name_pos
    else:
        # No preset named: start from the command line's testbed, else lan-buffers.
        tb = copy.deepcopy(base) if base is not None else preset("lan-buffers")
    mtu_pos: Pos | None = None
    # What this block writes (a preset's own blocks are its hosts, not a file's).
    tb.written, tb.defaults_written = set(), False
    for s in block.settings():
        if s.key == "mtu":
            tb.mtu = int(_number(s, "the IP MTU in bytes", *vocab.MTU_RANGE))
            mtu_pos = s.value.pos
        elif s.key == "encap":
            tb.encap = _choice(s, "an encapsulation", ENCAPS)
        elif s.key == "hosts":
            tb.order, tb.order_pos = _host_names(s), s.pos
        else:
            raise _unknown(
                s, "testbed", ("mtu", "encap", "hosts") + ("switch { }", "host NAME { }")
            )
    least, most = vocab.MTU_RANGE[0], vocab.MTU_RANGE[1] - vocab.ENCAP_HEADER[tb.encap]
    if mtu_pos is not None and tb.mtu > most:
        raise expected(
            mtu_pos,
            f"mtu = {tb.mtu}",
            f"an MTU of {least}..{most}: what one AAL5 PDU carries with {tb.encap} "
            f"({vocab.ENCAP_HEADER[tb.encap]} bytes of header)",
        )
    clp1_pos = block.pos
    buffer_pos = block.pos
    # A site's switch block changes only what it says; resolved once the testbed-wide
    # block (wherever it stands) is known.
    site_blocks: list[Block] = []
    # Connections take the first trunk between two sites: a second is never used.
    joined = {frozenset((t["from"], t["to"])): f"testbed {tb.name}'s trunk" for t in tb.trunks}
    new_trunks: list[tuple[dict, Block]] = []
    for b in block.blocks():
        if b.kind == "switch" and b.name is not None:
            site_blocks.append(b)
        elif b.kind == "switch":
            clp1_pos = _switch(b, tb.switch) or clp1_pos
            buffer_pos = _setting_pos(b, "buffer_cells", "epd_threshold_cells") or buffer_pos
        elif b.kind == "trunk":
            t = _trunk(b)
            pair = frozenset((t["from"], t["to"]))
            if pair in joined:
                raise expected(
                    b.pos,
                    f"a second trunk between {t['from']} and {t['to']}",
                    f"one per pair of sites: {joined[pair]} joins them already and every "
                    "connection takes it (this one would change nothing)",
                )
            joined[pair] = f"the trunk at {b.pos}"
            tb.trunks.append(t)
            new_trunks.append((t, b))
        elif b.kind == "defaults":
            tb.defaults = _host(b, copy.copy(tb.defaults) if tb.defaults else HostSpec(name="*"))
            tb.defaults_written = True
        elif b.kind == "host":
            assert b.name is not None
            # Keys the block leaves out come from the preset's entry, else from defaults.
            start = tb.hosts.get(b.name) or (
                copy.copy(tb.defaults) if tb.defaults else HostSpec(name=b.name)
            )
            start.name = b.name
            tb.hosts[b.name] = _host(b, start)
            tb.given[b.name] = b.name_pos or b.pos
            tb.written.add(b.name)
    _check_flow_control(block, tb.switch)
    _check_abr(block, tb.switch)
    _check_ethernet_names(block, tb)
    sites = {h.site for h in tb.hosts.values()} | {
        x for t in tb.trunks for x in (t["from"], t["to"])
    }
    if tb.defaults is not None:
        sites.add(tb.defaults.site)
    _check_trunk_sites(tb, new_trunks)
    for b in site_blocks:
        assert b.name is not None
        if b.name not in sites:
            raise expected(
                b.name_pos or b.pos,
                f"switch {b.name}",
                f"a site of the testbed: {', '.join(sorted(sites)) or 'none'}",
            )
        tb.sites[b.name] = sw = dict(tb.sites.get(b.name) or tb.switch)
        _switch(b, sw)
        _check_flow_control(b, sw)
        _check_abr(b, sw)
        # (A site's switch was not checked: its threshold past its buffer was taken.)
        _check_epd(sw, _setting_pos(b, "buffer_cells", "epd_threshold_cells") or b.pos)
    for sw in (tb.switch, *tb.sites.values()):
        share = sw.pop("_epd_share", None)
        if share is not None:
            if not 0 < share[0] <= 1:
                raise expected(share[1], f"epd_threshold_share {share[0]:g}", "a share in (0, 1]")
            sw["epd_threshold_cells"] = max(1, round(share[0] * sw["buffer_cells"]))
    _check_epd(tb.switch, buffer_pos)
    clp1 = tb.switch.get("clp1_threshold_cells")
    if clp1 is not None and clp1 > tb.switch["buffer_cells"]:
        raise expected(
            clp1_pos,
            f"switch clp1_threshold_cells {clp1}",
            f"1..{tb.switch['buffer_cells']} (at most buffer_cells) or off",
        )
    return tb


def _check_epd(sw: dict, pos: Pos) -> None:
    if sw["epd_threshold_cells"] > sw["buffer_cells"]:
        raise ExperimentError(
            pos,
            f"switch epd_threshold_cells {sw['epd_threshold_cells']} exceeds "
            f"buffer_cells {sw['buffer_cells']}: the threshold must fit in the buffer",
        )


def _setting_pos(b: Block, *keys: str) -> Pos | None:
    """Where the block's last setting of one of ``keys`` is written, if any."""
    found = [s.pos for s in b.settings() if s.key in keys]
    return found[-1] if found else None


def _check_trunk_sites(tb: Testbed, trunks: list[tuple[dict, Block]]) -> None:
    """A trunk joins sites with hosts, or a transit site on two trunks or more (the
    hub of a star); one to a site nothing else reaches carries nothing: a misspelt site."""
    hosted = {h.site for h in tb.hosts.values()}
    if tb.defaults is not None:
        hosted.add(tb.defaults.site)
    ends = [x for t in tb.trunks for x in (t["from"], t["to"])]
    for t, b in trunks:
        for key in ("from", "to"):
            site = t[key]
            if site not in hosted and ends.count(site) < 2:
                known = ", ".join(sorted(hosted | {x for x in ends if ends.count(x) > 1}))
                raise expected(
                    _setting_pos(b, key) or b.pos,
                    f"{key} = {site}, a site with no host and no other trunk",
                    f"a site of the testbed ({known}): a trunk to nowhere else carries nothing",
                )


def _host_names(s: Setting) -> list[str]:
    """``hosts = [a, b, ...]``: host names, each once (checked against the testbed's
    hosts where the experiment is built: a host block may come after)."""
    items = s.value.items if isinstance(s.value, List) else [s.value]
    names: list[str] = []
    for v in items:
        if not isinstance(v, Name) or v.text in names:
            raise expected(v.pos, render(v), "a list of host names, each once: [a, b, ...]")
        names.append(v.text)
    return names


def _check_ethernet_names(block: Block, tb: Testbed) -> None:
    """An Ethernet interface's name is its own: no host's, no other interface's."""
    seen: dict[str, str] = {}
    for h in tb.hosts.values():
        n = h.ethernet_name
        if n is None:
            continue
        if n in tb.hosts or n in seen:
            other = f"host {n}" if n in tb.hosts else f"host {seen[n]}'s Ethernet interface"
            where = [
                _setting_pos(b, "ethernet_name")
                for b in block.blocks()
                if b.kind == "host" and b.name == h.name
            ]
            raise expected(
                next((w for w in where if w is not None), block.pos),
                f"ethernet_name = {n} on host {h.name}",
                f"a name of its own ({other} has it)",
            )
        seen[n] = h.name


def _switch(b: Block, sw: dict) -> Pos | None:
    """A ``switch [SITE] { }`` block's settings into ``sw``; the position of its CLP-1
    threshold, if it sets one. ``flow_control``/``credits`` keys appear only when set,
    so a result of a testbed without them names the switch as before."""
    clp1_pos = None
    for s in b.settings():
        if s.key == "buffer_cells":
            sw["buffer_cells"] = int(_number(s, "cells per output port", 1, 1 << 24))
        elif s.key == "policy":
            sw["policy"] = _choice(s, "a drop policy", POLICIES)
        elif s.key == "epd_threshold_cells":
            sw["epd_threshold_cells"] = int(_number(s, "the EPD threshold in cells", 1, 1 << 24))
        elif s.key == "epd_threshold_share":
            # The threshold as a share of the buffer, so that a sweep of buffer_cells
            # keeps EPD's headroom in proportion (reproduce/ubr.py).
            share = _number(s, "the EPD threshold as a share of buffer_cells", 0.0, 1.0, False)
            sw["_epd_share"] = (share, s.value.pos)
        elif s.key == "clp1_threshold_cells":
            sw["clp1_threshold_cells"] = _clp1_threshold(s)
            clp1_pos = s.value.pos
        elif s.key == "flow_control":
            sw["flow_control"] = _choice(s, "hop-by-hop flow control", FLOW_CONTROLS)
            sw["_flow_pos"] = s.pos
        elif s.key == "credits":
            sw["credits"] = int(_number(s, "credits per VC per hop (cells)", 1, 1 << 24))
            sw["_credits_pos"] = s.value.pos
        elif s.key == "abr" and isinstance(s.value, Name) and s.value.text == "none":
            sw.pop("abr", None)  # a site's switch without the testbed's ABR behaviour
        elif s.key == "abr":
            sw["abr"] = abrmod.switch(s)  # experiment/abr.py: efci, relative, erica
            sw["_abr_pos"] = s.value.pos
        else:
            raise _unknown(s, "switch", SWITCH_KEYS)
    return clp1_pos


def _check_abr(b: Block, sw: dict) -> None:
    """An ABR queue threshold fits in the switch's buffer."""
    pos = sw.pop("_abr_pos", None)
    t = (sw.get("abr") or {}).get("threshold_cells")
    if t is not None and "buffer_cells" in sw and t > sw["buffer_cells"]:
        raise expected(
            pos or b.pos,
            f"abr threshold = {t}",
            f"a threshold within the switch's buffer_cells ({sw['buffer_cells']})",
        )


def _check_flow_control(b: Block, sw: dict) -> None:
    """Credits belong to credit flow control, and it needs them."""
    pos = sw.pop("_credits_pos", None)
    flow_pos = sw.pop("_flow_pos", None)
    if sw.get("flow_control") == "none":
        del sw["flow_control"]
    credits = sw.get("credits")
    if pos is None and credits is not None and sw.get("flow_control") != "credit":
        # A site's switch that turns off the testbed's flow control drops its credits.
        del sw["credits"]
        credits = None
    if credits is not None and sw.get("flow_control") != "credit":
        raise expected(
            pos or b.pos,
            f"credits = {credits}",
            "credits only on a switch with flow_control = credit",
        )
    if sw.get("flow_control") == "credit" and credits is None:
        raise expected(
            flow_pos or b.pos, "flow_control = credit", "credits = N (cells per VC per hop) too"
        )


def load(spec: str) -> Testbed:
    """``--testbed``: a preset name, or a file holding one ``testbed { }`` block."""
    if spec in PRESETS:
        return preset(spec)
    try:
        os.stat(spec)  # (not open: a FIFO's open waits for a writer; read() refuses it)
    except (OSError, ValueError) as e:
        raise ExperimentError(
            None,
            f"testbed {spec!r}: neither a preset ({', '.join(sorted(PRESETS))}) "
            f"nor a readable file ({getattr(e, 'strerror', None) or e})",
        ) from None
    text = read(spec, spec, "the testbed")
    doc = parse(text, spec)
    return from_document(doc, required=True)


def from_document(
    doc: Document, required: bool = False, base: Testbed | None = None
) -> Testbed | None:
    blocks = [b for b in doc.blocks if b.kind == "testbed"]
    if len(blocks) > 1:
        raise expected(blocks[1].pos, "a second 'testbed' block", "one testbed per experiment")
    others = [b for b in doc.blocks if b.kind != "testbed"]
    if required:
        if others:
            raise expected(others[0].pos, f"'{others[0].kind}'", "only a 'testbed' block")
        if not blocks:
            raise ExperimentError(Pos(doc.file, 1, 1), "found no 'testbed' block, expected one")
    return from_block(blocks[0], base) if blocks else None
