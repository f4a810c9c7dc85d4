"""An experiment's plan: every sweep point x replication, as data (``make_plan``).

``make_plan`` parses a file, applies every point of its sweep, builds and checks each
point's experiment before anything runs; a ``Plan`` then gives each run's ``Task``
(its simulation spec) when asked. A plan holds no list of its runs: each run's spec is
made when it is submitted (``engines.loop``: at most its look-ahead past the oldest
unfinished run), so memory stays bounded whatever the number of points and
replications.

Running a plan is the engines' (``cellbench.engines``): one loop
(``engines.loop.execute_plan``) drives the simulator, the emulator and real hosts
alike; a plan names no engine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cellbench import progress as bars
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
        desc = f"{bars.COMMAND} (checking points)"
        with bars.bar(len(self.points), desc, "point", progress) as checking:
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


def check_engine() -> None:
    """Before anything runs: this build has the generic simulator."""
    from cellbench import _native

    if not hasattr(_native, "simulate"):
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


def as_sets(values: dict[str, Any] | list[str] | None) -> list[str]:
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
