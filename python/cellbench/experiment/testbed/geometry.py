"""The testbeds' geometry: light in fibre, the MAGIC path's length and round trip and
how its delay divides between fibre and equipment, the wan-contention WAN's sites and
routes, the hetero-lan campus. The presets (``presets.py``) are written with these.
"""

from __future__ import annotations

from cellbench import vocab

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

#: wan-mismatch's case 3 and experiments 5 and 6 (docs/wan-mismatch.md: the slides' experiments
#: 4-6) on the MAGIC network's sites: Lawrence and Kansas City in Kansas, and South
#: Dakota, as the slides place the hosts. The lengths the slides do not give are chosen
#: so that Lawrence to South Dakota is the MAGIC path the other cases use (600 km,
#: 8.8 ms round trip: MAGIC_KM, MAGIC_RTT_MS).
MAGIC_LAWRENCE_KC_KM = 60
MAGIC_LAWRENCE_KC_MS = MAGIC_LAWRENCE_KC_KM * FIBRE_US_PER_KM / 1000
MAGIC_KC_SOUTH_DAKOTA_MS = round(MAGIC_ONE_WAY_MS - MAGIC_LAWRENCE_KC_MS, 6)
# --- wan-contention: several transfers sharing WAN links -------------------------------------
#: The study (docs/wan-contention.md) gives sites on DS-3 and OC-3c access links and
#: round trips of 2 to 70 ms with a coast-to-coast path among them, not the sites. This
#: WAN is a star around a carrier hub (kc, Kansas City): each site's edge switch (256
#: cells per output port) reaches the hub by its access link. One-way delays are fibre
#: routes at
#: FIBRE_US_PER_KM, their lengths chosen so that the pairs' round trips span the
#: setup's range: lawrence<->kclab 2 ms (100 km each), the coast-to-coast pair
#: san-diego<->washington 70 ms (4000 + 3000 km). These lengths are the project's own
#: (004 Fig. 5 is not in the text it holds): the coast-to-coast 70 ms is longer than 004's
#: own coast-to-coast example implies (about 58 ms, 004 Window management) and the great
#: circle (about 37 ms, wan-contention-ftp.netspec's NRL->JPL, whose backbone range
#: spans the two).
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


# --- hetero-lan (docs/hetero-lan.md): the hosts of docs/design.md §6.3, each with its OS's TCP
#: A campus backbone: the two switches are a building apart; 1 km of fibre at 5 µs/km
#: (an assumption: the setup gives no length; at 5 µs it is far below one cell time's
#: worth of effect on a LAN transfer).
CAMPUS_TRUNK_MS = 1 * FIBRE_US_PER_KM / 1000
#: OC-3c over UTP-5 reaches at most 100 m (ATM Forum af-phy-0015); the longest is taken.
UTP5_M = 100
