"""``cellbench fidelity --envelope``: each published result that depends on a value its paper
leaves open, run over that value's assumed range (docs/fidelity.md).

An open value is an ``assume(...)`` of the experiment files a study part runs
(``experiment.sweep.assumptions``: default, range, source). For every declaration
(``study.Compares``) whose part runs such files, the part is run at every corner of its
assumptions' ranges (each number at its two ends, each choice at every value; one key
declared in several files of the part is one axis, moved in all of them) and the result's
figure is read at each. A line says where the published value falls:

- ``inside at the default``: the scoreboard's own run already holds it;
- ``inside the envelope``: some corner holds it (the line names which), or the published
  value lies between the lowest and highest corner (the range brackets it);
- ``outside the envelope``: no assumed value reaches it, a mechanism miss; its cause (the
  scoreboard's) goes on the line.

Corners, not a grid: the figures move monotonically with buffers, windows and round trips
in the cases seen, and 2^n runs of a part keep the whole envelope to a few minutes on
2 cores.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from cellbench.data import published
from cellbench.experiment import lang, sweep
from cellbench.reproduce import fidelity
from cellbench.reproduce.study import Compares, Options, Simulated, experiment_file

#: Where a published value falls against its assumptions' envelope.
PLACES = ("inside at the default", "inside the envelope", "outside the envelope", "not scored")


@dataclass
class Axis:
    """One assumption (a key, in the files that declare it) and the values it takes."""

    key: str
    files: list[str]
    default: str
    values: list[str]
    source: str
    range_text: str


@dataclass
class Envelope:
    """One published result over its assumptions' corners."""

    id: str
    place: str
    quantity: str
    unit: str
    published: float | None
    default: float | None
    low: float | None
    high: float | None
    where: str  # one of PLACES
    at: list[dict[str, str]] = field(default_factory=list)  # corners that hold it
    axes: list[str] = field(default_factory=list)
    corners: int = 0
    refused: int = 0
    cause: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def file_assumptions(file: str) -> list[sweep.Assumption]:
    """The named assumptions of one of the studies' experiment files."""
    path = experiment_file(file)
    doc = lang.parse(lang.read(path, f"{file}.netspec"), f"{file}.netspec")
    return sweep.assumptions(doc)


def axes(study_name: str, part: str, c: Compares) -> list[Axis]:
    """The assumptions of the files a declaration's part runs, one axis per key."""
    from cellbench.reproduce import REGISTRY

    opts = Options(parts=(part,), params=dict(c.params), replications=c.replications)
    files = [r.file for r in REGISTRY[study_name].part(part).runs(opts) if r.file is not None]
    out: dict[str, Axis] = {}
    for f in dict.fromkeys(files):
        for a in file_assumptions(f):
            if a.key in out:
                out[a.key].files.append(f)
                continue
            out[a.key] = Axis(
                a.key,
                [f],
                lang.render(a.default),
                [lang.render(v) for v in a.values()],
                a.source,
                a.range_text(),
            )
    return list(out.values())


def assumption_table(study_name: str) -> str:
    """The study's open setup values as its docs page lists them (a markdown table; the
    page's copy is checked against it by tests/test_assume.py)."""
    from cellbench.reproduce.study import HERE

    rows = [
        "| experiment file | assumption | default | range | source of the range |",
        "| --- | --- | --- | --- | --- |",
    ]
    for path in sorted(HERE.glob(f"{study_name}*.netspec")):
        for a in file_assumptions(path.stem):
            rows.append(
                f"| {path.name} | `{a.key}` | {lang.render(a.default)} | {a.range_text()} | "
                f"{a.source} |"
            )
    return "\n".join(rows)


def _holds(rid: str, sim: Simulated) -> bool | None:
    r = {x.id: x for x in published.published_results()}[rid]
    v = fidelity.verdict(
        fidelity.TOLERANCES[r.tolerance], r.value, fidelity.with_published_cells(r, sim)
    )
    return None if v == "not scored" else v in ("within tolerance", "qualitative")


def run(
    *,
    seed: int = 1,
    workers: int = 0,
    progress: Callable[[str], None] | None = None,
    only: set[tuple[str, str]] | None = None,
) -> list[Envelope]:
    """Every result of a declaration with assumptions, over their corners (``only``: the
    (study, part) pairs to run)."""
    say = progress or (lambda _text: None)
    results = {r.id: r for r in published.published_results()}
    out: list[Envelope] = []
    for study_name, part, _i, c in fidelity.declarations():
        if c.compute is not None or (only is not None and (study_name, part) not in only):
            continue
        ax = axes(study_name, part, c)
        if not ax:
            continue
        corners = list(itertools.product(*(a.values for a in ax)))
        say(f"envelope: {study_name} {part}: {len(ax)} assumptions, {len(corners)} corners ...")
        t0 = time.monotonic()
        default = fidelity.run_declaration(study_name, part, c, seed=seed, workers=workers)
        got: list[tuple[dict[str, str], dict[str, Simulated] | None]] = []
        for corner in corners:
            file_sets: dict[str, tuple[str, ...]] = {}
            for a, v in zip(ax, corner):
                for f in a.files:
                    file_sets[f] = (*file_sets.get(f, ()), f"{a.key}={v}")
            try:
                figures = _run_corner(study_name, part, c, seed, workers, file_sets)
            except (ValueError, lang.ExperimentError):
                figures = None  # a corner the simulator refuses (a window a TCP cannot take)
            got.append((dict(zip((a.key for a in ax), corner)), figures))
        say(f"envelope: {study_name} {part}: {time.monotonic() - t0:.1f} s")
        for rid in c.results:
            out.append(_envelope(results[rid], default.get(rid), got, ax))
    return out


def _run_corner(
    study_name: str, part: str, c: Compares, seed: int, workers: int,
    file_sets: dict[str, tuple[str, ...]],
) -> dict[str, Simulated]:  # fmt: skip
    from cellbench.reproduce import REGISTRY
    from cellbench.reproduce.study import run_parts

    opts = Options(
        seed=seed, workers=workers, replications=c.replications, parts=(part,),
        params=dict(c.params), sets=c.sets, file_sets=file_sets,
    )  # fmt: skip
    return c.simulate(run_parts(REGISTRY[study_name], opts)[part])


def _envelope(
    r: published.PublishedResult,
    default: Simulated | None,
    got: list[tuple[dict[str, str], dict[str, Simulated] | None]],
    ax: list[Axis],
) -> Envelope:
    values = [(corner, figs[r.id]) for corner, figs in got if figs is not None and r.id in figs]
    nums = [s.value for _, s in values if s.value is not None]
    env = Envelope(
        r.id, r.place, r.quantity, r.unit, r.value,
        default.value if default is not None else None,
        min(nums) if nums else None, max(nums) if nums else None,
        "not scored", axes=[a.key for a in ax], corners=len(got),
        refused=sum(1 for _, figs in got if figs is None),
    )  # fmt: skip
    at_default = _holds(r.id, default) if default is not None else None
    holding = [corner for corner, s in values if _holds(r.id, s)]
    env.at = holding
    bracket = r.value is not None and nums and min(nums) <= r.value <= max(nums) and not r.cells
    if at_default is None and not values:
        return env
    if at_default:
        env.where = "inside at the default"
    elif holding or bracket:
        env.where = "inside the envelope"
    elif at_default is None and not any(_holds(r.id, s) is not None for _, s in values):
        env.where = "not scored"
    else:
        env.where = "outside the envelope"
        env.cause = fidelity.causes().get(r.id, fidelity.UNEXPLAINED)
    return env


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def report(envs: list[Envelope], axes_by: list[tuple[str, list[Axis]]], seed: int) -> str:
    """The assumptions, then one line per result: published, default, envelope, where."""
    out = [
        f"cellbench fidelity --envelope (seed {seed}): every published result that depends on a "
        "value its paper leaves open, run at each corner of the assumed ranges "
        "(numbers at both ends, choices at every value)",
        "",
        "assumptions (experiment file: key = default, range; source):",
    ]
    for name, axs in axes_by:
        for a in axs:
            out.append(
                f"  {name}: {', '.join(a.files)}: {a.key} = {a.default}, {a.range_text}; {a.source}"
            )
    cols = ["place", "quantity", "unit", "published", "default", "envelope", "where"]
    rows = [
        [
            e.place,
            e.quantity,
            e.unit,
            _num(e.published) if e.published is not None else "claim",
            _num(e.default),
            f"{_num(e.low)}..{_num(e.high)}" if e.low is not None else "-",
            e.where + (f" ({e.refused}/{e.corners} corners refused)" if e.refused else ""),
        ]
        for e in envs
    ]
    width = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    out += ["", "  ".join(c.ljust(w) for c, w in zip(cols, width)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, width)).rstrip() for r in rows]
    out.append("")
    for e in envs:
        if e.where == "inside the envelope" and e.at:
            shown = "; ".join(", ".join(f"{k}={v}" for k, v in c.items()) for c in e.at[:3])
            more = f" (and {len(e.at) - 3} more)" if len(e.at) > 3 else ""
            out.append(f"{e.place} {e.quantity}: holds at {shown}{more}")
        elif e.where == "inside the envelope":
            out.append(f"{e.place} {e.quantity}: the range brackets the published value")
        elif e.where == "outside the envelope":
            out.append(f"{e.place} {e.quantity}: outside, a mechanism miss: {e.cause}")
    counts = {p: sum(1 for e in envs if e.where == p) for p in PLACES}
    out.append("")
    out.append(f"{len(envs)} results: " + ", ".join(f"{n} {p}" for p, n in counts.items()))
    return "\n".join(out)


def all_axes() -> list[tuple[str, list[Axis]]]:
    """Every declaration's assumptions, as the report lists them."""
    out = []
    for study_name, part, _i, c in fidelity.declarations():
        if c.compute is None:
            ax = axes(study_name, part, c)
            if ax:
                out.append((f"{study_name} {part}", ax))
    return out


def main(*, seed: int, workers: int, as_json: bool) -> str:
    t0 = time.monotonic()

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    envs = run(seed=seed, workers=workers, progress=say)
    say(f"envelope: {len(envs)} results in {time.monotonic() - t0:.1f} s")
    if as_json:
        import json

        return json.dumps(
            {
                "seed": seed,
                "assumptions": [
                    {"part": name, **a.__dict__} for name, axs in all_axes() for a in axs
                ],
                "lines": [e.to_json() for e in envs],
            },
            indent=2,
        )
    return report(envs, all_axes(), seed)
