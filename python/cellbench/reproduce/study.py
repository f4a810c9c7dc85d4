"""One shape for every study: its experiment files, parameters, published comparison,
rows, report and plots, and one way to run them (``cellbench reproduce NAME``).

A ``Study`` is a list of ``Part``s. A part names the experiments it runs (``Run``:
an experiment file beside this module, or a text the study writes, with its --set
values) and turns their results into its rows, its table and its JSON. Every run goes
through the run loop (``cellbench.engines.sim.api.run``), so every part of
every study offers the run loop's options with one meaning: ``out`` stores each run's
result where ``cellbench show``/``plot`` read it (``OUT/WHERE``, the run's place),
``resume`` finishes an interrupted one (a complete one runs nothing and gives the same
rows), ``overwrite`` replaces one, ``dask`` runs on a Dask scheduler, ``workers``
threads (0: all cores), ``series`` stores cwnd and queue series, ``progress`` a bar.

The registry (``cellbench.reproduce.REGISTRY``) holds every study; the command line
is made from it (``cellbench.cli.reproduce``). docs/design.md says how to add a study
or a part.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cellbench import scratch
from cellbench.experiment.results import Result

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.reproduce.tables import DocsTable

#: The studies' experiment files.
HERE = Path(__file__).parent


def experiment_file(name: str) -> Path:
    """The experiment file of study ``name`` (``lan-buffers`` -> lan-buffers.netspec)."""
    return HERE / f"{name}.netspec"


@dataclass(frozen=True)
class Run:
    """One experiment a part runs, stored at ``OUT/where`` with --out (``""``: OUT)."""

    #: An experiment file beside this module (its name without .netspec).
    file: str | None = None
    where: str = ""
    #: --set values (``KEY=VALUE``), the study's options as values of the file; the
    #: command line's --set come after them.
    sets: tuple[str, ...] = ()
    #: A transmitting test that runs by itself in the whole experiment's network
    #: (``experiment.plan.Plan.alone``).
    alone: str | None = None
    #: An experiment the study writes (in place of ``file``); with --out stored as
    #: ``OUT/where.netspec`` beside its result, which ``cellbench run`` takes as is.
    text: str | None = None
    #: The run has a cell tester: its captures go to ``OUT/where/cells`` (a temporary
    #: directory without --out) and the part reads them (``Ran.cells_dir``).
    cells: bool = False
    #: Every connection keeps its segment trace (``Result.traces``).
    trace: bool = False


@dataclass(frozen=True)
class Ran:
    """A run's result, and where its cell tester wrote (if it has one)."""

    run: Run
    result: Result
    cells_dir: Path | None
    stored: bool


@dataclass
class Options:
    """The runner's options (one meaning in every study) and the study's own
    (``params``: ``send_buffer``, ``pair``, ``stall``, ...)."""

    seed: int | None = 1
    workers: int = 0
    out: Path | None = None
    resume: bool = False
    overwrite: bool = False
    dask: str | None = None
    progress: bool = False
    series: bool = False
    #: Runs per configuration (None: each experiment file's own).
    replications: int | None = None
    #: --set values for every experiment the parts run.
    sets: tuple[str, ...] = ()
    #: --set values for one experiment file's runs only (file name without .netspec ->
    #: values): an assumption moved where it is declared (``cellbench fidelity --envelope``).
    file_sets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The parts chosen (in the study's order).
    parts: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Simulated:
    """What a run gives for one published result (``cellbench fidelity`` scores it)."""

    #: In the published result's unit (data/published_results.csv); None for a claim.
    value: float | None = None
    #: As printed (default: ``value`` to 3 significant places).
    text: str | None = None
    #: A claim in words, or a condition the number also needs (each cell locks): whether
    #: the run bears it out.
    holds: bool | None = None
    #: What the verdict looked at beyond the two figures.
    detail: str = ""
    #: Per-cell figures of a line that summarises a table: (label, published, simulated),
    #: each held to the line's tolerance (--json: ``cells``).
    cells: tuple[tuple[str, float, float], ...] = ()
    #: Why this run cannot score the result yet (the line says so, not scored).
    missing: str | None = None


@dataclass(frozen=True)
class Compares:
    """Published results a part reproduces, and how ``cellbench fidelity`` runs it for them."""

    #: Keys of data/published_results.csv.
    results: tuple[str, ...]
    #: From the part's ``collect`` output (or ``compute``'s) to each result's figure.
    simulate: Callable[[Any], dict[str, Simulated]]
    #: The study's options for the scoreboard's run (``Options.params``) and its
    #: replications (None: the experiment files').
    params: dict[str, Any] = field(default_factory=dict)
    replications: int | None = None
    #: --set values for the scoreboard's run (a host's TCP, a second value to compare).
    sets: tuple[str, ...] = ()
    #: A calculation in place of the part's runs (``cellbench calc``'s figures).
    compute: Callable[[], Any] | None = None
    #: What the run is, for the scoreboard's progress and header.
    what: str = ""
    #: Why a result misses, as far as the project knows (result id -> the cause, in
    #: words): ``cellbench fidelity`` puts it on the line of a miss.
    causes: dict[str, str] = field(default_factory=dict)
    #: Results whose figure the seed moves: the draws (each host's timer phases and
    #: processing jitter) decide which cells a congested port drops and when timers fire.
    #: ``cellbench fidelity`` runs the declaration at more seeds and gives each its spread
    #: beside the verdict's seed (reproduce/spread.py); a result not named here gets none.
    seeded: tuple[str, ...] = ()
    #: --set values for those extra runs only: the points the seeded results read, where the
    #: declaration's run has more (their figures unchanged: tests/test_fidelity.py).
    seeded_sets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Part:
    """A part of a study: the runs it makes, and what it makes of their results."""

    name: str
    #: What it is, for --help.
    doc: str
    runs: Callable[[Options], list[Run]]
    #: The part's rows (or whatever its table and JSON are made from), from its runs.
    collect: Callable[[Options, list[Ran]], Any]
    #: Its table, as printed.
    report: Callable[[Options, Any], str]
    #: Its keys of the study's JSON document (a list extends the study's, as ``rows``).
    to_json: Callable[[Options, Any], dict]
    #: The published results it compares (``cellbench fidelity``, docs/fidelity.md).
    published: tuple[Compares, ...] = ()
    #: Its rows as a DataFrame (``cellbench.reproduce(NAME)``); default: what ``collect``
    #: made if a DataFrame, a list of rows, or a dict's ``rows``.
    frame: Callable[[Options, Any], pd.DataFrame] | None = None


@dataclass(frozen=True)
class Emulated:
    """How a study runs on the emulator (``cellbench reproduce NAME --engine emu``,
    reproduce.emu): an experiment file the emulator runs, a part of its grid by default,
    and the simulator's part beside it on the same cases."""

    #: The experiment file the emulator runs (beside this module, without .netspec).
    file: str
    #: The file's sweep parameters -> the rows' names for them (the simulator's rows').
    params: dict[str, str]
    #: The study's own options -> (the simulator's column's ``Options.params`` and
    #: --set values, the emulated file's --set values).
    options: Callable[[argparse.Namespace], tuple[dict, list[str]]]
    #: The part of the grid run by default: --set values of the file.
    reduced: dict[str, Any] = field(default_factory=dict)
    #: What the simulator's column runs: the study's own transfer.
    sim_transfer: str = ""
    #: The part whose rows the simulator's column is; ``sim_params``: which of the
    #: emulated file's parameters are that part's own options (file key -> option),
    #: the others go to it as --set values.
    sim_part: str = ""
    sim_params: dict[str, str] = field(default_factory=dict)
    #: Transfers one after another in a run (wan-mismatch's cases are one run).
    transfers_per_run: int = 1
    #: --set values always applied: a study that counts bytes timed instead (its
    #: byte count off, its sender's duration given), and the key --seconds sets.
    timed: dict[str, Any] = field(default_factory=dict)
    duration: str = "seconds"
    #: Runs per case (None: the file's).
    replications: int | None = None
    #: Variants of the file run one after another, each an emulated result of its own
    #: (``OUT/NAME`` with --out): name -> its --set values (wan-contention's flow-control
    #: schemes, which set several keys each); the rows name theirs as ``variant_key``.
    variants: Callable[[], dict[str, tuple[str, ...]]] | None = None
    variant_key: str = ""
    #: The study's names for a stored emulated row (a dict of its columns): its case
    #: (in place of ``params``' values) and any measure it reads otherwise (a UDP
    #: stream's datagrams that arrived); None: ``params``' values as the rows' numbers.
    row: Callable[[dict], dict] | None = None
    #: Keys naming a connection among several of a case (from ``row``): the simulator's
    #: column joins on them too, and the table gives each case's Jain's fairness index.
    row_keys: tuple[str, ...] = ()
    #: A line under the emulated table's header (what its cases are, what is left out).
    note: str = ""

    def keys(self) -> list[str]:
        """The row keys that name a case and a connection in it (the simulator's column
        joins on them)."""
        case = list(self.params.values()) or ["case", "pacing_mbps", "transmitter"]
        return [self.variant_key] * bool(self.variant_key) + case + list(self.row_keys)


@dataclass(frozen=True)
class Study:
    """A classic study: its parts, its command-line options and its document."""

    name: str
    #: One line for ``cellbench reproduce --help``; ``description`` for the study's own.
    help: str
    parts: tuple[Part, ...]
    description: str = ""
    #: The parts run without --part (default: all).
    default_parts: tuple[str, ...] | None = None
    #: The study's own options (added to its parser); ``params`` takes them from the
    #: parsed arguments (default: none).
    options: Callable[[argparse.ArgumentParser], None] | None = None
    params: Callable[[argparse.Namespace], dict[str, Any]] | None = None
    #: Checks of the study's own options, before anything runs (raise ValueError).
    check: Callable[[Options], None] | None = None
    #: The JSON document the parts' keys go into (default ``{"study": NAME}``).
    json_head: Callable[[Options], dict] | None = None
    #: The whole document and table where they are not the parts' one after another.
    to_json: Callable[[Options, dict[str, Any]], dict] | None = None
    report: Callable[[Options, dict[str, Any]], str] | None = None
    #: ``--replications``' help (what a replication is in this study).
    replications_help: str = "runs per configuration (default: each experiment file's)"
    #: How it runs on the emulator (``--engine emu``; None: not yet).
    emulated: Emulated | None = None
    #: The results tables its page (docs/NAME.md) shows, drawn from its command
    #: (``reproduce.tables``, scripts/docs_tables.py).
    tables: tuple[DocsTable, ...] = ()

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise ValueError(
            f"unknown part {name!r} of {self.name}: expected one of "
            f"{', '.join(p.name for p in self.parts)}"
        )

    def chosen(self, parts: Sequence[str] | None) -> tuple[str, ...]:
        """The parts to run, in the study's order (each once)."""
        if not parts:
            return tuple(self.default_parts or [p.name for p in self.parts])
        for name in parts:
            self.part(name)
        return tuple(p.name for p in self.parts if p.name in parts)


def execute(runs: list[Run], opts: Options, tmp: Path) -> list[Ran]:
    """Run each of ``runs`` through the experiment runner; ``tmp`` holds what must
    outlive a run without --out (a tester's captures) until the part has read it."""
    from cellbench.engines.sim.api import run as run_experiment

    done = []
    for r in runs:
        out = opts.out / r.where if opts.out is not None and r.where else opts.out
        source: str | Path = experiment_file(r.file) if r.file is not None else r.text or ""
        if r.text is not None and out is not None:
            # The run's experiment beside its result: `cellbench run` takes it as is. A
            # stored result keeps the file it ran (the runner refuses or resumes it).
            source = out.with_name(out.name + ".netspec")
            if not out.exists() or opts.overwrite:
                out.parent.mkdir(parents=True, exist_ok=True)
                source.write_text(r.text)
        cells_dir = None
        if r.cells:
            cells_dir = out / "cells" if out is not None else tmp / (r.where or "run") / "cells"
        result = run_experiment(
            source,
            out=out,
            resume=opts.resume,
            overwrite=opts.overwrite,
            dask=opts.dask,
            workers=opts.workers or None,
            replications=opts.replications,
            seed=opts.seed,
            progress=opts.progress,
            series=opts.series,
            trace=r.trace,
            cells_dir=cells_dir,
            set=[*r.sets, *opts.sets, *opts.file_sets.get(r.file or "", ())],
            alone=r.alone,
        )
        done.append(Ran(r, result, cells_dir, out is not None))
    return done


def run_parts(study: Study, opts: Options) -> dict[str, Any]:
    """Run the chosen parts (``opts.parts``, default the study's); part -> what its
    ``collect`` made, in the study's order."""
    if opts.replications is not None and opts.replications < 1:
        raise ValueError(f"replications {opts.replications}: must be at least 1")
    if opts.resume and opts.out is None:
        raise ValueError("resume needs out (the result to finish)")
    opts.parts = study.chosen(opts.parts)
    if study.check is not None:
        study.check(opts)
    got: dict[str, Any] = {}
    with scratch.directory("cellbench-study-") as tmp:
        for name in opts.parts:
            part = study.part(name)
            got[name] = part.collect(opts, execute(part.runs(opts), opts, Path(tmp)))
    return got


def report(study: Study, opts: Options, got: dict[str, Any]) -> str:
    """The study's tables: the parts' one after another (a blank line between)."""
    if study.report is not None:
        return study.report(opts, got)
    texts = [study.part(name).report(opts, data) for name, data in got.items()]
    return "\n\n".join(t for t in texts if t)


def to_json(study: Study, opts: Options, got: dict[str, Any]) -> dict:
    """The study's JSON document: the parts' keys in order, lists (``rows``) joined."""
    if study.to_json is not None:
        return study.to_json(opts, got)
    doc = study.json_head(opts) if study.json_head is not None else {"study": study.name}
    for name, data in got.items():
        for k, v in study.part(name).to_json(opts, data).items():
            if isinstance(v, list) and isinstance(doc.get(k), list):
                doc[k] = doc[k] + v
            else:
                doc[k] = v
    return doc


def study_options(study: Study) -> argparse.Namespace:
    """The study's own options (its command line's, by their ``dest``) at their defaults."""
    parser = argparse.ArgumentParser(add_help=False)
    if study.options is not None:
        study.options(parser)
    return parser.parse_args([])


def reproduce(
    study: Study,
    parts: str | Sequence[str] | None = None,
    *,
    seed: int | None = 1,
    workers: int = 0,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    dask: str | None = None,
    progress: bool = False,
    series: bool = False,
    replications: int | None = None,
    sets: dict[str, Any] | Sequence[str] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Run a study's parts as ``cellbench reproduce NAME`` does and return their rows
    (``frame``). ``options`` are the study's own, named as its command line's without
    the dashes (lan-buffers' ``send_buffer=[16384]``, hetero-lan's ``pair``, ...);
    ``sets`` are --set values (``{"window": [4096, 65536]}`` or ``["window=4K"]``)."""
    given = study_options(study)
    for key, value in options.items():
        if key not in vars(given):
            known = ", ".join(sorted(vars(given))) or "none"
            raise ValueError(
                f"{study.name}: unknown option {key!r} (its own options: {known}; the runner's: "
                "parts, seed, workers, out, resume, overwrite, dask, progress, series, "
                "replications, sets)"
            )
        setattr(given, key, value)
    opts = Options(
        seed=seed, workers=workers, out=None if out is None else Path(out), resume=resume,
        overwrite=overwrite, dask=dask, progress=progress, series=series,
        replications=replications,
        sets=_dict_sets(sets),
        parts=(parts,) if isinstance(parts, str) else tuple(parts or ()),
        params=study.params(given) if study.params is not None else {},
    )  # fmt: skip
    return frame(study, opts, run_parts(study, opts))


def _dict_sets(values: dict[str, Any] | Sequence[str] | str | None) -> tuple[str, ...]:
    """--set values given as a dict, a list of ``KEY=VALUE`` or one of them."""
    from cellbench.experiment.plan import as_sets

    if isinstance(values, str):
        return (values,)
    if isinstance(values, (list, tuple)):
        return tuple(values)
    return tuple(as_sets(values))


def frame(study: Study, opts: Options, got: dict[str, Any]) -> pd.DataFrame:
    """The parts' rows as one DataFrame: each part's (``Part.frame``), one after another,
    with a ``part`` column when more than one ran; a part's figures beside its rows (a
    dict's other keys: wan-contention's ``offered_load``) in ``attrs``."""
    import pandas as pd

    frames, attrs = [], {}
    for name, data in got.items():
        part = study.part(name)
        if part.frame is not None:
            df = part.frame(opts, data)
        elif isinstance(data, pd.DataFrame):
            df = data
        elif isinstance(data, dict):
            df = pd.DataFrame(data.get("rows", []))
            attrs |= {k: v for k, v in data.items() if k != "rows"}
        else:
            df = pd.DataFrame(data)
        if len(got) > 1 and "part" not in df:
            df.insert(0, "part", name)
        frames.append(df)
    out = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    out.attrs |= attrs
    return out


def sets(values: dict[str, Any] | None = None, **more: Any) -> tuple[str, ...]:
    """--set values (``KEY=VALUE``, lists as ``KEY=a,b``) as the runner takes them:
    ``values`` first, then ``more``."""
    from cellbench.experiment.plan import as_sets

    return tuple(as_sets(values) + as_sets(more))
