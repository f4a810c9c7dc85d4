"""The seam every engine fits: ``Engine``, and what one run gives, ``Tables``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from cellbench.experiment.results.columns import ColumnGroup


@dataclass
class Tables:
    """One run's stored rows, table by table (``results.ResultDir.write_run``), and
    what the loop does with it besides."""

    rows: list[dict]
    traces: list[dict] = field(default_factory=list)
    ports: list[dict] = field(default_factory=list)
    cwnd: list[dict] = field(default_factory=list)
    queue: list[dict] = field(default_factory=list)
    policers: list[dict] = field(default_factory=list)
    #: ABR circuits' ACR samples (--series).
    acr: list[dict] = field(default_factory=list)
    #: Lines for stderr once the run is stored (through the progress bar).
    lines: list[str] = field(default_factory=list)
    #: Additions to the result's metadata (merged one level deep), e.g. a run's origin.
    meta: dict = field(default_factory=dict)

    def stored(self) -> tuple[list[dict], ...]:
        """The tables in ``results.TABLES``' order."""
        return self.rows, self.traces, self.ports, self.cwnd, self.queue, self.policers, self.acr


class Option:
    """One of ``cellbench run``'s options that not every engine takes: its flags and
    ``argparse``'s keywords, and what an engine that does not take it says when given
    it (``refusal``; ``{engine}``: that engine's name; None: the others ignore it).

    An engine lists in ``Engine.options`` every such option it takes. One written with
    its ``help`` is the engine's own: ``cellbench run`` adds it from the engine table
    and the engine reads it in ``from_options``. One without is ``run``'s (the plan or
    the loop reads it: ``--trace``, ``--dask``) or another engine's, taken by this one
    too."""

    __slots__ = ("flags", "refusal", "argparse", "dest")

    def __init__(self, *flags: str, refusal: str | None = None, **argparse: Any):
        self.flags = flags
        self.refusal = refusal
        #: ``ArgumentParser.add_argument``'s keywords (help, metavar, type, action, ...).
        self.argparse = argparse
        #: Its name on the parsed options, as ``argparse`` makes it.
        self.dest: str = argparse.get("dest") or flags[0].lstrip("-").replace("-", "_")

    @property
    def own(self) -> bool:
        """Whether the engine that lists it adds it to ``cellbench run``."""
        return "help" in self.argparse

    def __repr__(self) -> str:
        return f"Option({', '.join(map(repr, self.flags))}, refusal={self.refusal!r})"


class Engine(Protocol):
    """An engine: what the run loop (``loop.execute_plan``) and the command line ask
    of the simulator, the emulator and real hosts alike. What the command line and the
    store take from an engine is data on its class; ``table`` lists the engines."""

    #: Its ``--engine`` name.
    name: ClassVar[str]
    #: What it is, in ``--engine``'s help (``NAME: ABOUT``).
    about: ClassVar[str]
    #: The ``cellbench run`` options that only some engines take, which this one takes
    #: (``Option``): its own, with their help, which ``run`` adds from the engine table,
    #: and others' it takes too; ``run --engine OTHER`` given one that OTHER does not
    #: take says the option's ``refusal``.
    options: ClassVar[tuple[Option, ...]]
    #: Whether ``cellbench reproduce NAME --engine`` offers it.
    studies: ClassVar[bool]
    #: Whether ``cellbench ttcp`` and ``netperf`` offer it (``connection_report``).
    tools: ClassVar[bool]
    #: The options it adds to ``ttcp`` and ``netperf`` (its own, with their help).
    tool_options: ClassVar[tuple[Option, ...]]
    #: The traffic types (a test's ``type``) it cannot run yet, each with why: its
    #: ``check`` refuses a plan holding one, and a tool that would send one refuses it
    #: before anything runs (``netperf -t TCP_RR``: ``rr``).
    traffic_not_yet: ClassVar[dict[str, str]]
    #: The groups of the runs table's columns this engine fills
    #: (``results.columns.ColumnGroup``: names, Arrow types and place), besides the
    #: identity and configuration every engine fills and the simulator's vocabulary;
    #: the engine table hands every engine's to the store.
    columns: ClassVar[tuple[ColumnGroup, ...]]

    @classmethod
    def from_options(cls, args) -> Engine:
        """The engine made from ``cellbench run``'s options (its own ``options``' values,
        by their ``dest``)."""
        ...

    #: Simulated time: runs go to a pool of workers (threads, Dask) and a signal asks
    #: them to stop; otherwise one run at a time on the real clock, and a signal ends
    #: the run at once (its agents stopped, the run not stored).
    simulated: ClassVar[bool]
    #: What ends a transfer that does not complete (``ttcp``'s message).
    time_limit: ClassVar[str]
    #: The progress bar's words.
    label: ClassVar[str]

    def check(self, plan) -> list[str]:
        """Everything the engine would refuse, refused before anything is written;
        the notes to print."""
        ...

    def check_line(self, plan) -> str:
        """``run --check``'s line after the plan's size: what would run where."""
        ...

    def meta(self, plan) -> dict:
        """The result's metadata (``experiment.plan.Plan.meta`` and the engine's own)."""
        ...

    def open(self) -> None:
        """Before the result is made: what the engine needs held (a connection)."""
        ...

    def begin(self, plan, store, dask=None) -> None:
        """Before the first run is started (the hosts checked, a capture directory
        made); ``dask``: the simulator's Dask client, if any."""
        ...

    def payload(self, task) -> Any:
        """What ``work`` takes for one task (plain data, for a pool or a cluster)."""
        ...

    def work(self, payload) -> Any:
        """Run one task, wherever the pool puts it; its raw outcome."""
        ...

    def tables(self, plan, task, out) -> Tables:
        """A run's outcome (``work``'s) as the stored tables, in this process."""
        ...

    def interrupt(self, signum: int) -> None:
        """A signal came while runs go on (the loop notes it and stops after)."""
        ...

    def stop_runs(self) -> None:
        """Stop every run of this engine going on in this process now (the loop
        failed or was stopped; it stores what finished)."""
        ...

    def allow_runs(self) -> None:
        """Let runs start again after ``stop_runs`` (or a signal's ``interrupt``)."""
        ...

    def close(self) -> None:
        """Everything the engine holds released (a connection, a client)."""
        ...

    @staticmethod
    def summary_lines(result) -> list[str]:
        """What a stored result of this engine adds to its summary (``cellbench show``)."""
        ...

    def connection_report(self, plan, out) -> dict:
        """A one-connection run's outcome (``work``'s) in the simulator's connection
        keys (``_native.simulate``'s): what ``ttcp`` and ``netperf`` print, whatever
        the engine (``tools``)."""
        ...

    @staticmethod
    def tool_hosts(args, receiver: str | None) -> tuple[str, str, str]:
        """For ``ttcp`` and ``netperf`` on an engine on the real clock that offers them
        (``tools``): the transmitter, the receiver and the experiment's testbed block,
        from the tool's options (``tool_options``) and its host argument. (A simulated
        engine runs the tool between the --testbed preset's hosts instead.)"""
        ...


class OnTheClock:
    """What the engines on the real clock (the emulator, real hosts) share: one run at
    a time, handed over as its task, and a signal that ends it at once."""

    simulated = False
    time_limit = "its sink's deadline"
    tool_options: tuple[Option, ...] = ()

    def payload(self, task):
        return task

    def interrupt(self, signum: int) -> None:
        # The run stops its agents (and removes what it made) as this unwinds.
        from cellbench.errors import Interrupted

        raise Interrupted(signum)

    def stop_runs(self) -> None:
        pass  # (the one run, in the loop's thread, is what unwinds)

    def allow_runs(self) -> None:
        pass

    def close(self) -> None:
        pass

    @staticmethod
    def summary_lines(result) -> list[str]:
        return []


def engine_meta(plan, engine: str, **extra: Any) -> dict:
    """The metadata of a result ``engine`` made: the plan's, named, with the engine's
    own keys (``extra``) and a digest of its own, so that a result resumes only on
    the engine that started it."""
    m = plan.meta()
    m["engine"] = engine
    m.update(extra)
    m["plan_digest"] = hashlib.sha256(f"{m['plan_digest']}:{engine}".encode()).hexdigest()
    return m


def check_line(plan, engine_words: str, connections: int | None = None, where: str = "") -> str:
    """``run --check``'s line, every engine alike: the plan's size, then the engine's
    words (``where``: the hosts, after the connections)."""
    n = len(plan.experiments[0].connections) if connections is None else connections
    return (
        f"{plan.file}: ok: {n} connection(s){where}, "
        f"{len(plan.points)} point(s) x {plan.replications} replication(s) = "
        f"{plan.runs_total} run(s), {engine_words}"
    )


def run_error(plan, task, e: Exception) -> Exception:
    """A run that failed (``e``), named by its number, sweep point and replication."""
    from cellbench.experiment.lang import ExperimentError

    point = ", ".join(f"{k}={v}" for k, v in plan.param_values(task.point).items())
    where = f"run {task.run} ({point + ', ' if point else ''}replication {task.replication})"
    return ExperimentError(None, f"{where}: {e}")


def merge_meta(into: dict, more: dict) -> None:
    """``more`` into ``into``, dicts merged key by key (a run's entry among others)."""
    for k, v in more.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            merge_meta(into[k], v)
        else:
            into[k] = v
