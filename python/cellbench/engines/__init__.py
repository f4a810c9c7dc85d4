"""The engines an experiment runs on, behind one seam, and the loop that runs them.

- ``sim``: the simulator (``_native.simulate``), in simulated time: many runs at once
  on a pool of threads or a Dask cluster, the same bytes at any number of workers.
- ``emu``: this machine's Linux TCP in network namespaces over the simulator's cell
  network in real time, one run at a time.
- ``real``: kernel sockets on real hosts through their daemons, one run at a time.

Each is a package whose face is an ``Engine`` (``base``): it checks a plan before
anything is written, gives the result's metadata, runs one task into the stored tables
(``Tables``), says what a result of its own adds to the summary and how its runs stop.
The seam (``base``, ``rows``, ``walk``) imports no engine; each engine imports it.
One loop (``loop.execute_plan``; ``cluster`` on Dask, ``localcluster`` for tests and
benchmarks) drives any of them. ``table`` lists the engines by name (every package here
whose ``ENGINE`` is its class), with what the command line and the store take from each
(its options, its column groups); the command line never asks which one it has."""
