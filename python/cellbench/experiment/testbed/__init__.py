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

The package, one idea a file: ``schema.py`` the records (``HostSpec``, ``Testbed``) and
their defaults, the run spec's own; ``keys.py`` the key table (key -> field, reader,
the run spec's key and its range); ``block.py`` a testbed from its block, ``--testbed``;
``presets.py`` the named testbeds; ``geometry.py`` their lengths and delays. The
package's face is a testbed read or named (``load``, ``preset``, ``from_document``,
``from_block``; ``PRESETS``) and its records; each table and constant is imported
from the module that defines it.
"""

from cellbench.experiment.testbed.block import from_block, from_document, load, preset
from cellbench.experiment.testbed.presets import PRESETS
from cellbench.experiment.testbed.schema import HostSpec, Testbed

__all__ = [
    "PRESETS",
    "HostSpec",
    "Testbed",
    "from_block",
    "from_document",
    "load",
    "preset",
]
