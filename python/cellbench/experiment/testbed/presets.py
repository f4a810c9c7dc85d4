"""The named testbeds (docs/design.md §10): lan-buffers' LAN, written as a record, and the
others written in the testbed language itself, from ``geometry.py``'s lengths and delays.
"""

from __future__ import annotations

from dataclasses import dataclass

from cellbench.experiment.testbed.geometry import (
    CAMPUS_TRUNK_MS,
    FIBRE_US_PER_KM,
    MAGIC_EQUIPMENT_MS,
    MAGIC_FIBRE_MS,
    MAGIC_KC_SOUTH_DAKOTA_MS,
    MAGIC_KM,
    MAGIC_LAWRENCE_KC_KM,
    MAGIC_LAWRENCE_KC_MS,
    MAGIC_ONE_WAY_MS,
    MAGIC_RTT_MS,
    UTP5_M,
    WAN_CONTENTION_HOSTS,
    WAN_CONTENTION_SITES,
)
from cellbench.experiment.testbed.schema import HostSpec, Testbed


def _lan_buffers() -> Testbed:
    return Testbed(
        name="lan-buffers",
        description="two SPARCstation IPCs (SunOS 4.1.1) on 100 Mb/s TAXI through one "
        "256-cell-per-port switch, VC-mux, MTU 9188; any host name maps onto this hardware",
        defaults=HostSpec(name="*"),
    )


@dataclass(frozen=True)
class Written:
    """A preset written in the testbed language itself (only the hosts it names): read
    by ``block.preset``, since reading a block resolves presets too."""

    name: str
    description: str
    pair: tuple[str, str]
    text: str


def _written(name: str, description: str, pair: tuple[str, str], text: str) -> Written:
    return Written(name, description, pair, text)


_MAGIC_TRUNK = f"""
    # The MAGIC path: {MAGIC_KM} km of fibre ({MAGIC_FIBRE_MS:g} ms one way at
    # {FIBRE_US_PER_KM:g} us/km) plus {MAGIC_EQUIPMENT_MS:g} ms of WAN equipment, from the
    # measured {MAGIC_RTT_MS:g} ms round trip (testbed/geometry.py: MAGIC_EQUIPMENT_MS says how).
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
    # The Alphas' OC-3c adapters (DEC OTTO) pace per VC by a schedule of cell slots
    # ("schedule-based cell pacing": the MAGIC TCP overview, www.ittc.ku.edu/MAGIC/tcp/
    # overview.html). That a rate so set counts cells with their headers is the project's
    # reading of a slot schedule, which the page does not state (docs/wan-mismatch.md).
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
_MAGIC_SITES = f"""
    encap = llc-snap; mtu = 9180;
    # The Alphas' OC-3c adapters (DEC OTTO) pace per VC by a slot schedule, counted in
    # cells with their headers (the project's reading, as in wan-mismatch's preset above).
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
#: each choice below says why (route km at FIBRE_US_PER_KM). Where the shared DS-3 lies
#: follows 004: the carrier was congestion-free and every effect was seen at the edge
#: (Network considerations), and its ITTC-NRL bursts measured the GSD switch's buffer at
#: the ITTC end (Fig. 7, 8), so ITTC reaches the carrier through GSD's edge switch. The
#: one DS-3 all three pairs cross is then GSD's access link from the carrier.
_WAN_CONTENTION_AAI = """
    encap = llc-snap; mtu = 9180;
    # DEC Alphas (OSF/1, OC-3c adapters) as on the rest of the study's WAN.
    host wpafb1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = wpafb; }
    host nrl1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = nrl; }
    host arl1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = arl; }
    host ittc1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = ittc; }
    host ittc2 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = ittc; }
    host gsd1 { profile = alpha-3000; phy = oc3c; flavour = osf1; site = gsd; }
    # The carrier (Sprint): its Washington switch (east) and its Kansas City switch (kc),
    # joined by OC-3c (no rate given; the least that keeps the carrier congestion-free
    # for three DS-3s' worth, as 004 found it).
    # WPAFB (Dayton, Ohio) to the carrier's Washington switch: 600 km of route (access
    # rate not given: OC-3c).
    trunk { from = wpafb; to = east; phy = oc3c; delay_ms = 3; }
    # NRL (Washington, DC): a metro link, 20 km; a DS-3, as 004 gives NRL's access (FTP
    # section, Fig. 7).
    trunk { from = nrl; to = east; phy = ds3; delay_ms = 0.1; }
    # ARL (Aberdeen Proving Ground, Maryland) to Washington: 120 km (access rate not
    # given: OC-3c).
    trunk { from = arl; to = east; phy = oc3c; delay_ms = 0.6; }
    # The carrier's backbone, Washington to Kansas City: 1700 km of route (1550 km great
    # circle).
    trunk { from = east; to = kc; phy = oc3c; delay_ms = 8.5; }
    # The shared DS-3: GSD's access link from the carrier's Kansas City switch (GSD's
    # place is not given: a metro link, 20 km, as NRL's), queued in kc's output port.
    trunk { from = kc; to = gsd; phy = ds3; delay_ms = 0.1; }
    # ITTC (Lawrence, Kansas) behind GSD's switch: 60 km to Kansas City.
    trunk { from = gsd; to = ittc; phy = oc3c; delay_ms = 0.3; }
    # The two edge switches 004 Fig. 8 measured: 3.5 MB at GSD, 35 KB at NRL (cells of
    # 48 payload bytes, as wan-contention-burst.netspec counts them).
    switch gsd { buffer_cells = 76458; }
    switch nrl { buffer_cells = 746; }
"""


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
