"""The emulator engine (``--engine emu``, Linux, as root): every testbed host is a
network namespace whose kernel TCP is the one measured; the datagrams between them
cross the simulator's own ATM network (adapters, links, switch ports, UPC) in real
time, through one TUN device per namespace (``cellbench-core``'s ``emu`` module).

Modules: ``netns`` (namespaces, TUN addresses, kernel settings; all removed on every
exit), ``engine`` (one run: the emulator, the real engine's agents in the namespaces,
the stored rows). The engine seam's ``cellbench.engines.emu`` runs a plan on it
(``cellbench run FILE --engine emu``).
"""
