"""Planning and running an experiment: every point × replication, on a pool of workers.

A run's simulations are pure functions of plain data (``execute``), so they run the
same in this process, in a thread pool (the native calls release the GIL), or on
a Dask cluster in batches (``cluster``: a worker puts its batch's rows together, as
Arrow); rows are put together here and handed to the store, which puts
them in run order, so the result does not depend on how many workers there were or
in what order runs finished.

A plan holds no list of its runs: each run's spec is made when it is submitted,
at most ``lookahead(workers)`` runs past the oldest unfinished one, so memory stays
bounded whatever the number of points and replications (the look-ahead's runs and
one part of the store; see ``results``).

``execute_plan`` is the one run loop of every engine (``cellbench.engines``). On the
simulator, the default, every run is one call of its generic runner,
``_native.simulate`` (a spec dict in, a result dict out); an experiment file of the
lan-buffers study gives the numbers of ``cellbench reproduce lan-buffers``
(tests/test_experiment_run.py). The emulator and real hosts run one run at a time on
the real clock, through the same loop, store and progress bar.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cellbench.engines.base import Engine
from cellbench.engines.sim import SimEngine, execute
from cellbench.errors import Interrupted
from cellbench.experiment import captures, lang, model, results, sweep
from cellbench.experiment import testbed as tbmod


@dataclass
class Task:
    run: int
    point: int
    replication: int
    spec: dict


class _Lazy(Sequence):
    """A sequence made item by item when asked for, so a plan of any size holds
    no list of its points or experiments; the last ``cache`` items are kept."""

    def __init__(self, n: int, item: Callable[[int], Any], cache: int = 0):
        self._n = n
        self._item = functools.lru_cache(maxsize=cache)(item) if cache else item

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._item(i % self._n)


#: Experiments a plan keeps built; past that, a point is built again when it runs.
EXPERIMENT_CACHE = 256


@dataclass
class Plan:
    file: str
    text: str
    sets: list[str]
    sweep: sweep.Sweep
    doc: lang.Document
    base: tbmod.Testbed | None
    replications: int
    seed: int
    trace: bool
    testbed_arg: str | None
    series: bool = False
    #: ``--cells PLACE``: a cell tester there in every run (over the file's
    #: ``tester { }`` block); its captures go to ``cells_dir`` (a result
    #: directory's ``cells/`` unless set), ``runN.pcap`` and ``runN.pcap.json``.
    cells: str | None = None
    cells_dir: Path | None = None
    #: ``--cells-runs``: the runs whose cells are recorded (a ``results.RunSet``; None:
    #: every run), and ``--cells-max``: the bytes their captures may take
    #: (``captures.check``; None: ``captures.DEFAULT_MAX_BYTES``).
    cells_runs: Any = None
    cells_max: int | None = None
    #: A transmitting test that runs alone: its connection only, in the network the
    #: whole experiment builds (every host of every test, in the same order), as a
    #: study measures a pair alone and then with the others (None: every connection).
    alone: str | None = None

    def __post_init__(self) -> None:
        self._lazy()
        self.notes: list[str] = []
        #: What the runs' testers wrote: the first few captures, and how many in all.
        self.captures: list[dict] = []
        self.captures_total = 0
        #: Runs whose capture holds no cell (nothing left the tester's place).
        self.captures_empty: list[int] = []
        #: What the testers would write (``captures``), estimated by ``check``.
        self.capture_bytes = 0
        self.captured_runs = 0

    def _lazy(self) -> None:
        n = self.sweep.size()  # the guard on the product, before anything is built
        self.points = _Lazy(n, self.sweep.point)
        self.experiments = _Lazy(n, self._build, cache=EXPERIMENT_CACHE)

    def __getstate__(self) -> dict:
        # Pickled for a cluster's workers (``cluster``): the points and experiments
        # are made again there, when asked for.
        return {k: v for k, v in self.__dict__.items() if k not in ("points", "experiments")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lazy()

    def _build(self, point: int) -> model.Experiment:
        return model.build(sweep.apply(self.doc, self.points[point], self.sweep.params), self.base)

    def check(self, progress: bool = False) -> None:
        """Build every point once before anything runs: every error first, and the
        notes of all of them. ``progress``: a bar while it takes long (100k points:
        half a minute)."""
        first = self.experiments[0]
        shape = [(c.name, c.after) for c in first.connections]
        notes = set(first.notes)
        used: set[str] = set()
        self.capture_bytes = self.captured_runs = 0
        desc = f"{COMMAND} (checking points)"
        with bar(len(self.points), desc, "point", progress) as checking:
            for i in range(len(self.points)):
                self._check_point(i, shape, used, notes)
                checking.update()
        notes.update(model.check_host_blocks(self.doc, used, self.base))
        self.notes = once_each(notes)
        self._check_options(first)

    def _check_point(self, i: int, shape: list, used: set[str], notes: set[str]) -> None:
        e = self.experiments[i]
        used.update(h.name for h in e.hosts)
        self._count_captures(i, e)
        if [(c.name, c.after) for c in e.connections] != shape:
            raise lang.ExperimentError(
                None, "the sweep changes which connections exist: it may change values only"
            )
        # Whatever the simulator would refuse, refused now, before anything is written.
        model.check_with_engine(e, self.seed)
        notes.update(e.notes)

    def _check_options(self, first) -> None:
        if self.alone is not None:
            names = [c.name for c in first.connections]
            if self.alone not in names:
                raise lang.ExperimentError(
                    None, f"alone {self.alone}: expected a transmitting test ({', '.join(names)})"
                )
            if self.connections(0)[0].after:
                raise lang.ExperimentError(
                    None, f"alone {self.alone}: a test that waits for others cannot run alone"
                )
        if self.cells_runs is not None and self.tester(0) is None:
            raise lang.ExperimentError(
                None, "--cells-runs chooses the runs a cell tester records: give --cells PLACE "
                "(or a tester { port = ...; } block)"
            )  # fmt: skip
        if self.cells is not None:
            try:
                model.check_tester(first, self.cells, None)
            except lang.ExperimentError as err:
                why = err.message.removeprefix(f'cells "{self.cells}": ')
                raise lang.ExperimentError(None, f"--cells {self.cells}: {why}") from None

    def _count_captures(self, point: int, e: model.Experiment) -> None:
        """Add the point's captured runs and their estimated bytes (``captures``)."""
        if self.tester(point) is None:
            return
        runs = range(point * self.replications, (point + 1) * self.replications)
        n = len(runs) if self.cells_runs is None else sum(r in self.cells_runs for r in runs)
        if n:
            self.captured_runs += n
            self.capture_bytes += n * captures.run_cells(e) * captures.RECORD_BYTES

    def captured(self, run: int) -> bool:
        """Whether run ``run`` records cells: a tester, and the run chosen (--cells-runs)."""
        if self.tester(run // self.replications) is None:
            return False
        return self.cells_runs is None or run in self.cells_runs

    def tester_words(self) -> str:
        """The tester in words, as the user set it."""
        if self.cells is not None:
            return f"--cells {self.cells}"
        pos = self.experiments[0].tester_pos
        return f"{pos.file}:{pos.line}: tester {self.tester(0)}" if pos else "the cell tester"

    def connections(self, point: int) -> list[model.Connection]:
        """The point's connections that run: all, or the one ``alone``."""
        conns = self.experiments[point].connections
        return conns if self.alone is None else [c for c in conns if c.name == self.alone]

    def tester(self, point: int) -> str | None:
        """Where the point's runs record cells: --cells, else the file's tester block."""
        return self.cells if self.cells is not None else self.experiments[point].tester

    @property
    def runs_total(self) -> int:
        return len(self.points) * self.replications

    @functools.cached_property
    def columns(self) -> dict[str, str]:
        """Sweep key -> its result column (renamed when it clashes with a stored column);
        computed once: every stored row asks for it."""
        cols = results.param_columns(self._params())
        return {p.key: c[0] for p, c in zip(self.sweep.params, cols)}

    def _params(self) -> list[dict]:
        return [
            {"key": p.key, "values": [self._column_value(p.key, v) for v in p.values]}
            for p in self.sweep.params
        ]

    @functools.cached_property
    def _text_params(self) -> set[str]:
        """Parameters whose values mix words and numbers (``off, 64``): a text column."""
        return {
            p.key
            for p in self.sweep.params
            if any(isinstance(sweep.column_value(v), str) for v in p.values)
        }

    def _column_value(self, key: str, v) -> Any:
        x = sweep.column_value(v)
        return str(x) if key in self._text_params else x

    def param_values(self, point: int) -> dict[str, Any]:
        return {k: self._column_value(k, v) for k, v in self.points[point].items()}

    def task(self, run: int) -> Task:
        """Run ``run``'s simulation spec, made when it is submitted."""
        point, r = divmod(run, self.replications)
        exp = self.experiments[point]
        spec = exp.spec(self.seed, r, trace=self.trace, series=self.series)
        if self.alone is not None:
            spec["connections"] = [c.to_spec(exp.testbed) for c in self.connections(point)]
        place = self.tester(point)
        # The simulator's runs (execute_plan) have a directory; other engines record no cells.
        if place is not None and self.cells_dir is not None and self.captured(run):
            spec["cells"] = {"place": place, "path": str(self.cells_dir / f"run{run}.pcap")}
            if self.cells is None and exp.tester_slot_us is not None:
                # The file's tester counts in slots of its own (--cells: the link's).
                spec["cells"]["slot_us"] = exp.tester_slot_us
        return Task(run, point, r, spec)

    def tasks(self) -> Iterable[Task]:
        return (self.task(run) for run in range(self.runs_total))

    def meta(self) -> dict:
        from cellbench import __version__

        first = self.experiments[0]
        params = self._params()
        hosts = [h.name for h in first.hosts]
        core = {
            "experiment": {"file": self.file, "text": self.text},
            "set": self.sets,
            "seed": self.seed,
            "replications": self.replications,
            "trace": self.trace,
            "testbed_arg": self.testbed_arg,
            # Only when on: a result without series keeps the digest it always had.
            **({"series": True} if self.series else {}),
            **({"cells": self.cells} if self.cells is not None else {}),
            **({"cells_runs": str(self.cells_runs)} if self.cells_runs is not None else {}),
            **({"alone": self.alone} if self.alone is not None else {}),
        }
        digest = hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()
        return {
            "format": results.FORMAT,
            "format_version": results.FORMAT_VERSION,
            "cellbench_version": __version__,
            **core,
            "plan_digest": digest,
            "testbed": first.testbed.to_dict(hosts),
            "sweep": params,
            "param_columns": [list(c) for c in results.param_columns(params)],
            "points": len(self.points),
            "runs_total": self.runs_total,
            "connections_per_run": len(self.connections(0)),
            "notes": self.notes,
            "units": {
                "throughput_bps": "bit/s (10^6 bit/s = 1 Mb/s)",
                "throughput_mbit_ttcp": "Mbit/s as ttcp prints it (2^20 bit/s)",
                "sndbuf": "bytes",
                "period_us": "µs",
            },
        }


_POSITION = re.compile(r"(\S+:\d+:\d+: )?(.*)", re.S)


def once_each(notes: set[str]) -> list[str]:
    """The sweep's notes, each said once: notes at one position that differ only in
    their numbers (one per point: ``SO_RCVBUF 52429 exceeds ...``) as the first of
    them with a count of the others (100,000 points printed 47,572 note lines)."""
    alike: dict[tuple, list[str]] = {}
    for note in sorted(notes):
        where, text = _POSITION.fullmatch(note).groups()  # type: ignore[union-attr]
        alike.setdefault((where, re.sub(r"\d+(\.\d+)?", "#", text)), []).append(note)
    out = []
    for group in alike.values():
        more = len(group) - 1
        out.append(group[0] + (f" (and {more} more point(s) of the sweep alike)" if more else ""))
    return sorted(out)


def _native():
    from cellbench import _native

    return _native


def check_engine() -> None:
    """Before anything runs: this build has the generic simulator."""
    if not hasattr(_native(), "simulate"):
        raise lang.ExperimentError(
            None, "this build of cellbench has no generic simulator (_native.simulate): rebuild it"
        )


def make_plan(
    source: str | os.PathLike,
    *,
    sets: list[str] | None = None,
    replications: int | None = None,
    seed: int | None = None,
    testbed: str | None = None,
    trace: bool = False,
    series: bool = False,
    file: str | None = None,
    cells: str | None = None,
    alone: str | None = None,
    cells_runs: str | None = None,
    cells_max: int | None = None,
    progress: bool = False,
) -> Plan:
    """Parse, apply every sweep point, build and check every experiment. Nothing runs.
    ``cells_runs``, ``cells_max``: ``--cells-runs`` (text) and ``--cells-max`` (bytes);
    ``progress``: the check's bar on stderr while it takes long (``Plan.check``)."""
    text, name = _source(source, file)
    doc = lang.parse(text, name)
    base = tbmod.load(testbed) if testbed else None
    sets = list(sets or [])
    sw = sweep.merge(sweep.from_document(doc), [sweep.parse_set(s) for s in sets])
    reps = replications if replications is not None else (sw.replications or 1)
    if reps < 1:
        raise lang.ExperimentError(None, f"replications {reps}: must be at least 1")
    seed = seed if seed is not None else (sw.seed if sw.seed is not None else 1)
    if not 0 <= seed <= model.SEED_MAX:
        raise lang.ExperimentError(None, f"seed {seed}: must be 0..{model.SEED_MAX} (2^63-1)")
    if reps > model.U32_MAX:
        raise lang.ExperimentError(None, f"replications {reps}: at most {model.U32_MAX}")
    check_engine()
    plan = Plan(name, text, sets, sw, doc, base, reps, seed, trace, testbed, series, cells)
    plan.alone = alone
    if cells_runs is not None:
        plan.cells_runs = captures.parse_runs(cells_runs, plan.runs_total)
    plan.cells_max = cells_max
    plan.check(progress)
    return plan


def _source(source: str | os.PathLike, file: str | None) -> tuple[str, str]:
    if isinstance(source, os.PathLike) or ("{" not in str(source) and "\n" not in str(source)):
        name = file or str(source)
        return lang.read(Path(source), name, "the experiment"), name
    return str(source), file or "<text>"


#: How long ``--dask ADDRESS`` waits for the scheduler to answer.
DASK_TIMEOUT_S = 5


def dask_client(address: str):
    """A client of the Dask scheduler at ``address``; connected before anything is
    written, so an unreachable one is a one-line error and leaves no result behind."""
    try:
        from dask.distributed import Client
        from distributed.comm import connect
        from distributed.security import Security
    except ImportError:
        raise lang.ExperimentError(
            None, "--dask needs dask.distributed: pip install 'cellbench[dask]'"
        ) from None

    # A tls:// scheduler: the certificates Dask's configuration names
    # (distributed.comm.tls.ca-file and .client.cert/.key; README, "A sweep on a Dask cluster").
    security = Security()

    async def probe() -> None:
        args = security.get_connection_args("client")
        comm = await connect(address, timeout=DASK_TIMEOUT_S, **args)
        await comm.close()

    try:
        # A probe first: a Client that fails to connect keeps retrying to close itself
        # when collected, and prints a traceback for it. (In a thread: the caller may
        # run an event loop of its own.)
        with ThreadPoolExecutor(max_workers=1) as one:
            one.submit(asyncio.run, probe()).result()
        return Client(address, timeout=DASK_TIMEOUT_S, set_as_default=False, security=security)
    except Exception as e:  # refused, timed out, not an address, not a scheduler
        if isinstance(e, (OSError, ValueError)):
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
        else:  # e.g. a length prefix of exabytes: what answered speaks another protocol
            why = "something answered that does not speak Dask's protocol"
        raise lang.ExperimentError(
            None, f"--dask {address}: no Dask scheduler reached within {DASK_TIMEOUT_S} s ({why})"
        ) from None


#: The bound on memory, as --help states it.
LOOKAHEAD_HELP = (
    "Memory stays bounded whatever the number of runs: each run is planned when it is "
    "submitted, at most max(4 x workers, 16) runs past the oldest unfinished one are "
    f"submitted or waiting, and runs are stored in parts of up to {results.PART_RUNS} runs "
    f"or {results.PART_ROWS:,} rows."
)


#: The most worker threads a sweep starts: far more than the cores of any machine it
#: runs on. Threads beyond the cores run nothing faster and each costs memory (a
#: running simulation, and four runs of look-ahead): 10^6 of them took 1.7 GB.
MAX_WORKERS = 1024


def _check_workers(workers: int | None) -> None:
    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        raise lang.ExperimentError(
            None, f"workers {workers}: must be 0 (all cores) to {MAX_WORKERS}"
        )


def lookahead(workers: int) -> int:
    """Runs submitted or finished-but-unstored past the oldest unfinished run: enough
    to keep ``workers`` busy, and what bounds memory whatever the sweep's size."""
    return max(4 * workers, 16)


#: The command being run, which the progress bar names in place of "cellbench run"
#: (``cli.main`` sets it: ``cellbench reproduce lan-buffers``).
COMMAND = "cellbench run"
#: Without a terminal (a pipe, a log), the bar is a line at most this often (seconds).
LINE_INTERVAL_S = 5.0


class _Lines:
    """tqdm's output as whole lines, for a pipe or a log file: each refresh a line of
    its own (on a terminal tqdm redraws one line in place with carriage returns)."""

    def __init__(self, stream):
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if not line or line == self.last:
            return
        # The bar's close repeats its last state with a later clock: one final line.
        m = _COUNT.search(line)
        if m and m.group(1) == m.group(2) and _said(line) == _said(self.last):
            return
        self.stream.write(line + "\n")
        self.last = line

    def flush(self) -> None:
        self.stream.flush()


#: A bar's "n/total", and its clock and rate ("[00:12<00:03, 2.51run/s"), which a
#: repeated state changes.
_COUNT = re.compile(r"\b(\d+)/(\d+)\b")
_CLOCK = re.compile(r"\[[^,\]]*(, [^,\]]*/s)?")


def _said(line: str) -> str:
    """A progress line without its clock and rate: what it says of the work."""
    return _CLOCK.sub("[", line)


#: On a terminal, a bar appears once its work has taken this long (s): a quick step
#: stays quiet, a slow one is never silent.
TTY_DELAY_S = 1.0


def bar(total: int, desc: str, unit: str, progress: bool, initial: int = 0):
    """A progress bar on stderr (tqdm), shown only when ``progress``: on a terminal
    redrawn in place, once TTY_DELAY_S have passed; elsewhere as a line every
    LINE_INTERVAL_S seconds, the first once LINE_INTERVAL_S have passed."""
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=not progress,
        file=sys.stderr if tty else _Lines(sys.stderr),
        **(
            {"delay": TTY_DELAY_S}
            if tty
            else {
                "mininterval": LINE_INTERVAL_S,
                "delay": LINE_INTERVAL_S,
                "miniters": 1,
                "ascii": True,
                "ncols": 100,
            }
        ),  # fmt: skip
    )


def progress_bar(plan: Plan, done, desc: str, progress: bool):
    """The runs' progress bar, every engine alike: the plan's runs, those already
    stored counted as done."""
    desc = desc.replace("cellbench run", COMMAND, 1)  # "(emu)", "(real)" stay
    return bar(plan.runs_total, desc, "run", progress, initial=len(done))


@contextlib.contextmanager
def heartbeat(progress_bar) -> Iterator[None]:
    """Redraw ``progress_bar`` while its work runs even when no step ends: one long run
    (0/1) shows its elapsed time grow instead of standing still; tqdm redraws only
    on an update. Every TTY_DELAY_S on a terminal, LINE_INTERVAL_S elsewhere."""
    if progress_bar.disable:
        yield
        return
    every = max(TTY_DELAY_S if sys.stderr.isatty() else LINE_INTERVAL_S, 0.05)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            if _shown(progress_bar):
                progress_bar.refresh()

    t = threading.Thread(target=beat, name="cellbench-progress", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def _shown(progress_bar) -> bool:
    """Whether the bar is past its delay (a short run's never is: it stays quiet)."""
    return not progress_bar.disable and (
        progress_bar._time() - progress_bar.start_t >= progress_bar.delay
    )


#: The CLI sets this: a second signal while a sweep stops ends the process at once
#: (os._exit) -- every finished run is in the journal (``results``), as after a kill.
#: A library caller (a notebook) gets KeyboardInterrupt instead.
EXIT_ON_SECOND_SIGNAL = False


@contextlib.contextmanager
def _signals_stop_runs(engine: Engine) -> Iterator[list[int]]:
    """While a sweep runs, SIGINT and SIGTERM are noted and handed to the engine
    (``Engine.interrupt``). The simulator only asks every simulation to stop
    (``stop_runs``); the sweep loop sees the note at its next step and stops there
    (``Interrupted``): a KeyboardInterrupt raised wherever the main thread happened to
    be could leave a lock taken -- inside ``concurrent.futures.wait``'s acquisition of
    its futures' locks -- which the workers then wait on forever while the main thread
    joins them. An engine on the real clock raises ``Interrupted`` at once: its run
    stops its agents and cleans up as it unwinds, and is not stored."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got  # only the main thread receives signals
        return

    def note(signum, frame) -> None:
        again = bool(got)
        got.append(signum)
        if again and engine.simulated:  # the user insists
            if EXIT_ON_SECOND_SIGNAL:
                os.write(2, b"cellbench: interrupted again: exiting now (--resume keeps every "
                            b"finished run)\n")  # fmt: skip
                os._exit(128 + signum)
            raise Interrupted(signum)
        engine.interrupt(signum)

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # (nohup, a background job)
            previous[sig] = signal.signal(sig, note)
    try:
        yield got
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def execute_plan(
    plan: Plan,
    store,
    *,
    workers: int | None = None,
    progress: bool = False,
    dask=None,
    executor: Callable[[dict], dict] = execute,
    engine: Engine | None = None,
):
    """Run every run not yet in ``store`` on ``engine`` (default: the simulator, its
    runs through ``executor``), in run order; each finished run goes to the store at
    once. The simulator's runs go to a pool of ``workers`` threads with a bounded
    look-ahead (``lookahead``), or with ``dask`` (a scheduler address or a connected
    client) to a cluster in batches (``cluster``; its ``SweepReport`` is returned); an
    engine on the real clock runs one at a time, here. SIGINT or SIGTERM stops the
    sweep with every finished run kept (``Interrupted``)."""
    engine = engine or SimEngine(executor)
    done = store.done()
    todo = (run for run in range(plan.runs_total) if run not in done)
    engine.begin(plan, store, dask)
    client = dask_client(dask) if isinstance(dask, str) else dask
    _check_workers(workers)
    workers = workers or os.cpu_count() or 1
    if client is not None and engine.simulated:
        return _on_cluster(plan, engine, store, todo, len(done), client, dask, progress)
    if not engine.simulated:
        pool: _Pool = _InPlacePool(engine.work)
    elif workers == 1:
        pool = _InlinePool(engine.work)
    else:
        pool = _ThreadPool(workers, engine.work)
    runs = progress_bar(plan, done, engine.label, progress)
    try:
        with _signals_stop_runs(engine) as signals, heartbeat(runs):
            try:
                with _kept_if_stopped(store, signals):
                    _drive(plan, engine, store, todo, pool, runs, signals)
            finally:
                pool.close()
                if isinstance(dask, str):
                    client.close()
        # Sealing the last part and the result's files can take long after the last
        # run (10,000 connections): the bar says so and keeps its clock.
        runs.set_postfix_str("storing the result", refresh=_shown(runs))
        with heartbeat(runs):
            store.finish()
    finally:
        runs.close()


@contextlib.contextmanager
def _kept_if_stopped(store, signals: list[int]) -> Iterator[None]:
    """A sweep that stops early (a signal, an error) puts every finished run in a part;
    the rest stays missing, for --resume."""
    try:
        yield
    except BaseException as e:
        try:
            store.close()
        except Exception:
            pass  # (the store failing again must not hide why the sweep stopped)
        if signals and isinstance(e, KeyboardInterrupt):
            raise Interrupted(signals[0]) from None
        raise


def _on_cluster(plan: Plan, engine: Engine, store, todo, done: int, client, dask, progress: bool):
    """``execute_plan`` on a Dask cluster: runs in batches (``cluster``); its report."""
    from cellbench.experiment import cluster

    bar = progress_bar(plan, range(done), engine.label, progress)
    with _signals_stop_runs(engine) as signals:
        try:
            with _kept_if_stopped(store, signals):
                report = cluster.drive(
                    plan, engine, store, todo, plan.runs_total - done, client, bar, signals
                )
        finally:
            bar.close()
            if isinstance(dask, str):
                client.close()
    store.finish()
    for line in report.lines():
        print(f"cellbench: {line}", file=sys.stderr)
    return report


def _drive(
    plan: Plan, engine: Engine, store, todo: Iterator[int], pool: _Pool, bar, signals: list[int]
) -> None:
    """Submit runs in order while they are within the look-ahead of the oldest one
    unfinished; store each as it finishes; stop at a signal (``signals``)."""
    inflight: dict[Any, Task] = {}
    nxt = next(todo, None)
    try:
        while nxt is not None or inflight:
            if signals:
                raise Interrupted(signals[0])
            oldest = min((t.run for t in inflight.values()), default=nxt)
            while nxt is not None and nxt < oldest + pool.lookahead:
                task = plan.task(nxt)
                inflight[pool.submit(engine.payload(task))] = task
                nxt = next(todo, None)
            for f in pool.wait_any(list(inflight), signals):
                _store(plan, engine, store, inflight.pop(f), f, bar)
                bar.update()
    except BaseException:
        # Drop what has not started, stop what is running here (each simulation
        # stops within a few thousand events) and keep every run that finished.
        for f in inflight:
            f.cancel()
        _native().stop_runs()
        try:
            for f, task in inflight.items():
                if not f.cancelled():
                    try:
                        _store(plan, engine, store, task, f, bar)
                    except BaseException:
                        pass  # stopped or failed: it runs again on --resume
        finally:
            _native().allow_runs()
        raise


def _store(plan: Plan, engine: Engine, store, task: Task, future, bar) -> None:
    try:
        out = future.result()
    except ValueError as e:
        raise _fail(task, plan, e) from None
    tables = engine.tables(plan, task, out)
    _merge(store.meta, tables.meta)
    store.write_run(task.run, *tables.stored())
    for line in tables.lines:
        bar.write(line, file=sys.stderr)


def _merge(into: dict, more: dict) -> None:
    """``more`` into ``into``, dicts merged key by key (a run's entry among others)."""
    for k, v in more.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


class _Pool:
    """Where runs execute: ``submit(payload)`` gives a future, ``wait_any(futures,
    signals)`` those of them that are done (at least one, unless a signal came)."""

    lookahead = 1

    def submit(self, payload): ...

    def wait_any(self, futures: list, signals: list[int]) -> list: ...

    def close(self) -> None:
        pass


class _InlinePool(_Pool):
    """One worker: each run executes when submitted, in this thread."""

    def __init__(self, executor):
        self.executor = executor

    def submit(self, payload):
        f: Future = Future()
        try:
            f.set_result(self.executor(payload))
        except Exception as e:  # a Ctrl-C is not caught: it stops the sweep at once
            f.set_exception(e)
        return f

    def wait_any(self, futures, signals):
        return futures


class _InPlacePool(_InlinePool):
    """An engine on the real clock: one run at a time, in this thread; its failure
    ends the sweep as it is (it names its host and connection)."""

    def submit(self, payload):
        f: Future = Future()
        f.set_result(self.executor(payload))
        return f


class _ThreadPool(_Pool):
    """Threads: the native calls release the GIL."""

    def __init__(self, workers: int, executor):
        self.executor = executor
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.lookahead = lookahead(workers)

    def submit(self, payload):
        return self.pool.submit(self.executor, payload)

    def wait_any(self, futures, signals):
        # A signal stops the running simulations (stop_runs): their futures end.
        return wait(futures, return_when=FIRST_COMPLETED).done

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _fail(task: Task, plan: Plan, e: Exception) -> Exception:
    point = ", ".join(f"{k}={v}" for k, v in plan.param_values(task.point).items())
    where = f"run {task.run} ({point + ', ' if point else ''}replication {task.replication})"
    return lang.ExperimentError(None, f"{where}: {e}")


def run_plan(
    plan: Plan,
    out: str | os.PathLike,
    engine: Engine,
    *,
    resume: bool = False,
    overwrite: bool = False,
    check: bool = False,
    workers: int | None = None,
    dask=None,
    progress: bool = True,
) -> bool:
    """``cellbench run FILE`` on any engine, into the result ``out``: the engine's
    notes on stderr; with ``check`` only its check line (and False); else the result
    stored (``resume``, ``overwrite``: as ``ResultDir``), what a resume repaired said,
    every run executed (``execute_plan``; ``workers``, ``dask``: the simulator's), and
    True. The engine is closed at the end."""
    for note in engine.check(plan):
        print(f"cellbench: note: {note}", file=sys.stderr)
    if engine.simulated:  # (the simulator's testers: the other engines record no cells)
        captures.check(plan, Path(out), plan.cells_max)
    if check:
        print(engine.check_line(plan))
        return False
    # The scheduler first: an unreachable one leaves nothing written.
    client = dask_client(dask) if isinstance(dask, str) else dask
    try:
        engine.open()
        store = results.ResultDir(Path(out), engine.meta(plan), resume=resume, overwrite=overwrite)
        if progress:
            store.print_repairs()
        execute_plan(plan, store, workers=workers, progress=progress, dask=client, engine=engine)
    finally:
        engine.close()
        if isinstance(dask, str) and client is not None:
            client.close()
    return True


def run(
    source: str | os.PathLike,
    *,
    out: str | os.PathLike | None = None,
    set: dict[str, Any] | list[str] | None = None,  # noqa: A002 - the CLI's word
    replications: int | None = None,
    seed: int | None = None,
    testbed: str | None = None,
    trace: bool = False,
    series: bool = False,
    workers: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    dask=None,
    cells: str | None = None,
    cells_dir: str | os.PathLike | None = None,
    alone: str | None = None,
    cells_runs: str | None = None,
    cells_max: int | None = None,
    **overrides: Any,
) -> results.Result:
    """Run an experiment (a path or the text itself) and return its result.

    ``overrides`` and ``set`` are --set values: ``window=65536``,
    ``snd=[16384, 32768]`` (a sweep), or ``set={"sender.type.blocksize": 4096}``.
    With ``out``, the result is stored there (and ``resume`` finishes or repairs a
    started one). ``trace`` keeps every connection's segment trace; ``series`` its
    sender's cwnd, ssthresh and flight over time and every switch port's queue
    occupancy. ``dask`` is a scheduler address or a ``distributed.Client``.
    ``progress`` shows a progress bar and what a resume repaired, on stderr.
    ``cells`` puts a cell tester on a place (as ``--cells``; the file's ``tester { }``
    block otherwise), its captures into ``cells_dir`` (default ``out/cells``);
    ``cells_runs`` and ``cells_max`` as ``--cells-runs`` and ``--cells-max``.
    ``alone`` names a transmitting test that runs by itself in the whole experiment's
    network (``Plan.alone``).
    """
    sets = _as_sets(set) + _as_sets(overrides)
    _check_workers(workers)  # before a result directory is made
    plan = make_plan(
        source,
        sets=sets,
        replications=replications,
        seed=seed,
        testbed=testbed,
        trace=trace,
        series=series,
        cells=cells,
        alone=alone,
        cells_runs=cells_runs,
        cells_max=cells_max,
    )
    if cells_dir is not None:
        plan.cells_dir = Path(cells_dir)
    if plan.cells_dir is not None or out is not None:
        captures.check(plan, plan.cells_dir or Path(out), cells_max)
    meta = plan.meta()
    client = dask_client(dask) if isinstance(dask, str) else dask
    try:
        if out is not None:
            store = results.ResultDir(Path(out), meta, resume=resume, overwrite=overwrite)
            if progress:
                store.print_repairs()
            execute_plan(plan, store, workers=workers, progress=progress, dask=client)
            return results.load(out)
        mem = results.MemoryResult(meta)
        execute_plan(plan, mem, workers=workers, progress=progress, dask=client)
        return results.Result.from_memory(mem)
    finally:
        if isinstance(dask, str):
            client.close()


def _as_sets(values: dict[str, Any] | list[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, list):
        return list(values)
    out = []
    for k, v in values.items():
        if isinstance(v, (list, tuple, range)):
            out.append(f"{k}=" + ",".join(str(x) for x in v))
        else:
            out.append(f"{k}={v}")
    return out
