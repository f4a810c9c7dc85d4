"""The real engine: an experiment file on real hosts, NetSpec's architecture.

- A daemon per host (``cellbench daemon``): a Dask distributed worker whose name
  is the testbed host's name; the first daemon may host the scheduler too.
- The controller (``cellbench run FILE --engine real``): a Dask client that
  resolves each test's ``own``/``peer`` through the testbed's host addresses,
  pins each connection's sink to its receiver's daemon and its source to its
  transmitter's, agrees a start time, and stores the reports as result rows.
- The agents are Rust (``cellbench-core``'s ``real`` module), off the GIL.
- The control channel is Dask's TLS with certificates that ``cellbench daemon
  --make-credentials DIR --hosts ...`` creates, one per party (controller,
  scheduler, each daemon): a controller without them runs nothing, and a daemon
  lets each party do only its role's part and runs nothing but its agents
  (``guard``).

Modules: ``credentials`` (TLS material), ``agents`` (what runs on a daemon),
``daemon`` (starting one, and giving up root), ``guard`` (what a daemon lets
through), ``plan`` (the experiment as connections and groups), ``controller``
(one run on the daemons, and its rows), ``measure`` (the hosts' evidence as
columns, the TCP_INFO series, and what bound each connection). The engine seam's
``cellbench.engines.real`` runs a plan on them.
"""
