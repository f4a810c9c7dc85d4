"""``cellbench fidelity``: every result the five papers publish, beside the simulator's, each
with its kind, its tolerance and a verdict computed from the run (docs/fidelity.md).

The published results are data (``data/published_results.csv``, with the tables it
references); what runs for them is declared by the study parts (``study.Part.published``:
the results each part compares and how it reads them from its rows). So the scoreboard is
built from the registry, not from a list of its own, in two steps, a verdict being visibly
a function of the run and of the published figures and nothing else:

- ``measure()`` runs every part that declares published results (at the replications its
  declaration gives) and keeps each declaration's figures (``study.Simulated``);
- ``score(runs)`` reads the published results (at call time) and compares: one line per
  published result, in the papers' order. A result no part produces is a line that says
  so (``not scored``), never an omission.

A result the seed moves (its declaration's ``seeded``) also gets its figures at the next
seeds (``spread.measure``, ``--replications``), scored alike: the line's ``spread``.

Kinds (published_results.csv): ``prediction``; ``calibration`` (a parameter was fitted to
the figure: shown and scored, never counted among the predictions); ``figure-only`` (no
number in the text: the line scores the text's claim about the figure, or says that
nothing can be scored). Every tolerance and its reason is in ``TOLERANCES``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from cellbench.data import published
from cellbench.reproduce import spread as seed_spread
from cellbench.reproduce.study import Compares, Options, Simulated, run_parts

VERDICTS = ("within tolerance", "qualitative", "miss", "not scored")
KINDS = published.KINDS


@dataclass(frozen=True)
class Tolerance:
    """How a simulated figure is held to a published one, and why."""

    #: ``rel`` (|sim - pub| <= value x pub), ``abs`` (|sim - pub| <= value), ``below``
    #: (sim < pub), ``above`` (sim > pub), ``between`` (value[0] <= sim <= value[1]),
    #: ``factor`` (pub / value <= sim <= pub x value), ``claim`` (the run bears out a
    #: claim in words: ``Simulated.holds``).
    how: str
    value: Any
    reason: str

    def text(self) -> str:
        v = self.value
        return {
            "rel": lambda: f"±{100 * v:.3g}%",
            "abs": lambda: f"±{v:g}",
            "below": lambda: "below",
            "above": lambda: "above",
            "between": lambda: f"{v[0]:g}..{v[1]:g}",
            "factor": lambda: f"x/{v:g}",
            "claim": lambda: "the claim",
        }[self.how]()

    def holds(self, sim: float, pub: float) -> bool:
        v = self.value
        if self.how == "rel":
            return abs(sim - pub) <= v * abs(pub) + 1e-12
        if self.how == "abs":
            return abs(sim - pub) <= v + 1e-12
        if self.how == "below":
            return sim < pub
        if self.how == "above":
            return sim > pub
        if self.how == "between":
            return v[0] <= sim <= v[1]
        if self.how == "factor":
            return pub / v <= sim <= pub * v
        raise ValueError(f"tolerance {self.how!r} compares no numbers")


#: Every tolerance a published result names (published_results.csv's ``tolerance``), with
#: its reason: the one place they are given.
TOLERANCES: dict[str, Tolerance] = {
    "wire5": Tolerance(
        "rel",
        0.05,
        "a rate the wire, the window or the pacing sets (window / RTT, the link, a pacer): "
        "±5%, what the model's cell and timer arithmetic holds on a path with no other bound",
    ),
    "host25": Tolerance(
        "rel",
        0.25,
        "a rate the hosts' processing sets, from profiles calibrated to other figures (their "
        "loopback, or the LAN grid): ±25%, the spread one profile shows across the grid it "
        "was fitted to (scripts/calibrate_lan.py's acceptance)",
    ),
    "lockstep10": Tolerance(
        "rel",
        0.10,
        "a lock-step's rate is the data one 200 ms delayed-ACK tick releases, a mechanism's "
        "figure: ±10% (the issue's bound for the lock-step cells)",
    ),
    "loss25": Tolerance(
        "rel",
        0.25,
        "a rate set by losses, retransmission timers or an assumed window and round trip, "
        "measured once in the paper: ±25% (as host-bound rates); the envelope shows the "
        "assumptions' share",
    ),
    "rounded10": Tolerance(
        "rel",
        0.10,
        'a figure the text rounds or reads off a graph ("19 Mb/s", "around 28", "about 9", '
        '"almost 40"): ±10%',
    ),
    "digit": Tolerance(
        "abs",
        0.0005,
        "a calculated or fitted figure given to its last printed digit (3 decimals): that digit",
    ),
    "bisected": Tolerance(
        "rel",
        0.001,
        "a figure a profile's speed was bisected to (examples/calibrate_loopback.rs, the "
        "factor kept to 4 decimals): ±0.1%",
    ),
    "digit_us": Tolerance("abs", 0.5, "a time the text gives in whole µs: half a µs"),
    "exact": Tolerance("abs", 0, "a whole number of cells from the paper's own equation: exact"),
    "points1": Tolerance(
        "abs", 1.0, 'a share or count the text gives to a whole unit ("about 87%"): ±1'
    ),
    "points5": Tolerance(
        "abs",
        5.0,
        "a change in percent between two measured figures, each with its own spread "
        '("about 10%", "25 percent", "15 percent"): ±5 points',
    ),
    "buffer_step": Tolerance(
        "abs",
        9.0,
        "a socket buffer read off a surface swept in MSS steps (9148 bytes): within one step "
        "(9 KB)",
    ),
    "factor2": Tolerance(
        "factor",
        2.0,
        "a buffer estimated from the knee of a curve swept in doubling bursts: within the "
        "sweep's step, a factor 2",
    ),
    "below": Tolerance("below", None, 'the text gives an upper bound ("lower than", "below")'),
    "above": Tolerance("above", None, 'the text gives a lower bound ("exceeds")'),
    "range_2_4": Tolerance("between", (2, 4), 'the text gives a range ("two to four")'),
    "none_lost": Tolerance("between", (0, 0), "the text says none: zero"),
    "claim": Tolerance(
        "claim",
        None,
        "a claim in words: the run's own check, which each line's detail states",
    ),
}

UNEXPLAINED = "no known cause: a deviation the project has not explained yet"
NOT_PRODUCED = "no study part produces this result yet"


@dataclass
class Line:
    """One published result beside the simulated one (JSON: ``JSON_KEYS``)."""

    id: str
    paper: str
    place: str
    kind: str
    study: str
    quantity: str
    unit: str
    published: float | None  # None for a claim in words
    simulated: float | None
    published_text: str
    simulated_text: str
    tolerance: str  # short, as the table prints it
    tolerance_reason: str  # TOLERANCES' reason
    verdict: str  # one of VERDICTS
    detail: str = ""
    cause: str | None = None  # why it misses (only for a miss)
    note: str = ""  # published_results.csv's note (OCR doubts, units)
    cells: list[dict[str, Any]] = field(default_factory=list)
    #: Its figures over several seeds, for a result the seed moves (reproduce/spread.py).
    spread: seed_spread.Spread | None = None

    @property
    def ratio(self) -> float | None:
        if self.published is None or self.simulated is None or self.published == 0:
            return None
        return self.simulated / self.published

    def to_json(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in JSON_KEYS if k not in ("ratio", "spread")}
        ratio = self.ratio
        d["ratio"] = None if ratio is None else float(f"{ratio:.6g}")
        d["spread"] = None if self.spread is None else self.spread.to_json()
        return {k: d[k] for k in JSON_KEYS}


#: The JSON lines' keys, in order (stable: add, never rename).
JSON_KEYS = (
    "id",
    "paper",
    "place",
    "kind",
    "study",
    "quantity",
    "unit",
    "published",
    "simulated",
    "ratio",
    "published_text",
    "simulated_text",
    "tolerance",
    "tolerance_reason",
    "verdict",
    "detail",
    "cause",
    "note",
    "cells",
    "spread",
)


# --- the runs -----------------------------------------------------------------------------


def declarations() -> list[tuple[str, str, int, Compares]]:
    """Every (study, part, index, declaration) of the registry, in its order."""
    from cellbench.reproduce import REGISTRY

    return [
        (s.name, p.name, i, c)
        for s in REGISTRY.values()
        for p in s.parts
        for i, c in enumerate(p.published)
    ]


def causes() -> dict[str, str]:
    """Why each result that misses does, as far as the project knows (result id -> cause):
    its declaration's ``causes``."""
    return {rid: why for _s, _p, _i, c in declarations() for rid, why in c.causes.items()}


def run_declaration(
    study_name: str, part: str, c: Compares, *, seed: int, workers: int, sets: tuple[str, ...] = ()
) -> dict[str, Simulated]:
    """One declaration's figures: its part run as it says (or its calculation)."""
    from cellbench.reproduce import REGISTRY

    if c.compute is not None:
        return c.simulate(c.compute())
    opts = Options(
        seed=seed, workers=workers, replications=c.replications, parts=(part,),
        params=dict(c.params), sets=(*c.sets, *sets),
    )  # fmt: skip
    return c.simulate(run_parts(REGISTRY[study_name], opts)[part])


def measure(
    *, seed: int = 1, workers: int = 0, progress: Callable[[str], None] | None = None
) -> dict[str, tuple[str, Simulated]]:
    """Run every declaration; result id -> (study, its figure)."""
    say = progress or (lambda _text: None)
    runs: dict[str, tuple[str, Simulated]] = {}
    for study_name, part, _i, c in declarations():
        name = f"{study_name} {part}" + (f" ({c.what})" if c.what else "")
        say(f"fidelity: {name} ...")
        t0 = time.monotonic()
        for rid, sim in run_declaration(study_name, part, c, seed=seed, workers=workers).items():
            runs[rid] = (study_name, sim)
        say(f"fidelity: {name}: {time.monotonic() - t0:.1f} s")
    return runs


# --- the comparison -----------------------------------------------------------------------


def _fmt(x: float) -> str:
    """A figure to 4 significant places (whole numbers as they are)."""
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:.0f}"


def verdict(tol: Tolerance, pub: float | None, sim: Simulated) -> str:
    """The verdict a tolerance gives a published figure and a run's."""
    if sim.missing is not None:
        return "not scored"
    if tol.how == "claim" or pub is None:
        if sim.holds is None:
            return "not scored"
        return "qualitative" if sim.holds else "miss"
    if sim.value is None:
        return "not scored"
    ok = (
        tol.holds(sim.value, pub)
        if not sim.cells
        else all(tol.holds(s, p) for _, p, s in sim.cells)
    )
    return "within tolerance" if ok and sim.holds is not False else "miss"


def with_published_cells(r: published.PublishedResult, sim: Simulated) -> Simulated:
    """A summary line's figure with its published cells (the table read now: a doctored
    table counts)."""
    if not (r.cells and sim.cells):
        return sim
    pub_cells = dict(r.cells)
    cells = tuple((label, pub_cells[label], s) for label, _, s in sim.cells)
    return Simulated(sim.value, sim.text, sim.holds, sim.detail, cells, sim.missing)


def score(
    runs: dict[str, tuple[str, Simulated]],
    spreads: dict[str, list[tuple[int, Simulated]]] | None = None,
) -> list[Line]:
    """Every published result beside its run, in the papers' order; ``spreads`` (from
    ``spread.measure``): a seed-dependent result's figures at each seed, scored alike."""
    out = []
    known = causes()
    for r in published.published_results():
        tol = TOLERANCES[r.tolerance]
        study_name, sim = runs.get(r.id, ("", Simulated(missing=NOT_PRODUCED)))
        sim = with_published_cells(r, sim)
        cells = sim.cells
        v = verdict(tol, r.value, sim)
        detail = sim.detail
        if sim.missing is not None:
            detail = "; ".join(x for x in (sim.missing, detail) if x)
        elif cells:
            bad = [label for label, p, s in cells if not tol.holds(s, p)]
            errs = [(s / p - 1, label, p, s) for label, p, s in cells]
            e, label, p, s = max(errs, key=lambda x: abs(x[0]))
            detail = "; ".join(
                x
                for x in (
                    detail,
                    f"{len(cells) - len(bad)}/{len(cells)} cells within",
                    f"worst {100 * e:+.1f}% at {label} ({_fmt(s)} vs {_fmt(p)})",
                    ("outside: " + ", ".join(bad)) if bad else "",
                )
                if x
            )
        line = Line(
            id=r.id,
            paper=r.paper,
            place=r.place,
            kind=r.kind,
            study=study_name or "-",
            quantity=r.quantity,
            unit=r.unit,
            published=r.value,
            simulated=sim.value,
            published_text=(
                (f"{r.value:.4g}" + (" mean" if r.cells else ""))
                if r.value is not None
                else "claim"
            ),
            simulated_text=(
                sim.text
                if sim.text is not None
                else (_fmt(sim.value) + (" mean" if cells else ""))
                if sim.value is not None
                else ("holds" if sim.holds else "does not hold")
                if sim.holds is not None and sim.missing is None
                else "-"
            ),
            tolerance=tol.text(),
            tolerance_reason=tol.reason,
            verdict=v,
            detail=detail,
            note=r.note,
            cells=[{"cell": c[0], "published": c[1], "simulated": round(c[2], 6)} for c in cells],
        )
        if v == "miss":
            line.cause = known.get(r.id, UNEXPLAINED)
        if spreads and r.id in spreads:
            line.spread = seed_spread.summarise(
                [(s, with_published_cells(r, d)) for s, d in spreads[r.id]],
                r.value,
                lambda d, tol=tol, pub=r.value: verdict(tol, pub, d),
            )
        out.append(line)
    return out


# --- counts and output --------------------------------------------------------------------


def counts(lines: list[Line]) -> dict[str, dict[str, dict[str, int]]]:
    """Per paper and overall: per kind, how many lines of each verdict."""
    papers = sorted({x.paper for x in lines})
    out: dict[str, dict[str, dict[str, int]]] = {}
    for paper in [*papers, "overall"]:
        chosen = [x for x in lines if paper in ("overall", x.paper)]
        out[paper] = {
            kind: {v: sum(1 for x in chosen if x.kind == kind and x.verdict == v) for v in VERDICTS}
            for kind in KINDS
        }
    return out


def _count_text(c: dict[str, int]) -> str:
    n = sum(c.values())
    parts = [
        f"{c['within tolerance']} within",
        f"{c['qualitative']} claims held",
        f"{c['miss']} miss",
        f"{c['not scored']} not scored",
    ]
    return f"{n}: " + ", ".join(parts)


def count_lines(lines: list[Line]) -> list[str]:
    """The counts, one line per paper and one overall: predictions, calibrations and
    figure-only results apart."""
    rows = []
    for paper, by_kind in counts(lines).items():
        name = paper if paper == "overall" else f"paper {paper}"
        rows.append(
            f"{name}: predictions {_count_text(by_kind['prediction'])} | calibrations "
            f"{_count_text(by_kind['calibration'])} | figure-only "
            f"{_count_text(by_kind['figure-only'])}"
        )
    return rows


def header(seed: int) -> list[str]:
    return [
        "cellbench fidelity: every result the five papers publish, beside the simulator's "
        f"(seed {seed}); a calibration is shown, never counted as a prediction",
    ]


def spread_counts(lines: list[Line]) -> dict[str, Any]:
    """The seed spread's counts (``spread.summary``) over the lines that have one."""
    return seed_spread.summary([(x.verdict, x.spread) for x in lines if x.spread is not None])


def to_json(lines: list[Line], seed: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "counts": counts(lines),
        "lines": [x.to_json() for x in lines],
        "spread": spread_counts(lines),
    }


def _causes(lines: list[Line]) -> dict[str, int]:
    """Each distinct cause of a miss, numbered in order of appearance."""
    out: dict[str, int] = {}
    for x in lines:
        if x.cause and x.cause not in out:
            out[x.cause] = len(out) + 1
    return out


def _ratio_text(line: Line) -> str:
    r = line.ratio
    return "-" if r is None else f"{r:.2f}"


COLUMNS = ["place", "kind", "quantity", "unit", "published", "simulated", "ratio", "tolerance",
           "verdict"]  # fmt: skip


def _cells(x: Line, causes: dict[str, int]) -> list[str]:
    return [
        x.place,
        x.kind,
        x.quantity,
        x.unit,
        x.published_text,
        x.simulated_text,
        _ratio_text(x),
        x.tolerance,
        x.verdict + (f" [{causes[x.cause]}]" if x.cause else ""),
    ]


def report(lines: list[Line], seed: int) -> str:
    """The counts, then one line per published result; each miss points to its cause."""
    causes = _causes(lines)
    rows = [_cells(x, causes) for x in lines]
    width = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    right = {"published", "simulated", "ratio"}

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if name in right else c.ljust(w) for name, c, w in zip(COLUMNS, cells, width)
        ).rstrip()

    # A seed-dependent result's spread: a second line, under the quantity.
    indent = " " * (width[0] + width[1] + 4)
    table = [
        line
        for x, r in zip(lines, rows)
        for line in [fmt(r)] + ([indent + x.spread.text(_fmt)] if x.spread else [])
    ]
    out = [*header(seed), *count_lines(lines), seed_spread.summary_text(spread_counts(lines))]
    out += ["", fmt(COLUMNS), *table, ""]
    out += [f"[{n}] {cause}" for cause, n in causes.items()]
    out.append(
        "Mb/s = 10^6 bit/s, Mbit/s as each paper writes it (000's: 2^20 bit/s, ttcp's); each "
        "tolerance's reason, each line's detail and per-cell figures: --json, docs/fidelity.md"
    )
    return "\n".join(out)


def markdown(lines: list[Line], seed: int) -> str:
    """docs/fidelity.md: the counts, the scoreboard, the misses' causes, the tolerances."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    causes = _causes(lines)
    out = [
        "# Fidelity: every published result beside the simulator's",
        "",
        "<!-- Generated: `cellbench fidelity --markdown > docs/fidelity.md` (do not edit by",
        "hand; tests/test_fidelity.py checks that this page is what the code prints). -->",
        "",
        "`cellbench fidelity` lists every result the five papers publish",
        "(python/cellbench/data/published_results.csv, which references the tables beside it)",
        "and runs the study parts that declare them (each `Part.published` in",
        "python/cellbench/reproduce/). Each line gives the result's place in its paper, its",
        "kind, the published and simulated figures, their ratio, the tolerance and a verdict",
        "computed from the run: `within tolerance`, `qualitative` (a claim in words the run",
        "bears out), `miss` (with its cause) or `not scored` (no run produces it yet, or a",
        "figure with nothing in the text to score). A `calibration` is a figure a parameter",
        "was fitted to: shown and scored, never counted among the predictions.",
        "`cellbench fidelity --envelope` runs each result that depends on a value its paper",
        "leaves open (an `assume` of the experiment files: default, range, source; each study",
        "page lists them) at every corner of the assumed ranges, and says whether the",
        "published value falls inside at the default, inside the envelope (at which values)",
        "or outside it (a mechanism miss, with its cause).",
        "Every verdict is the run at one seed. Where the seed decides what happens (several",
        "TCPs at one congested port: the hosts' timer phases and processing jitter, drawn",
        "from the seed, decide which cells are lost and when the timers fire), one run is one",
        "draw: the study declares those results (`Compares.seeded`) and the scoreboard runs",
        "them at the next seeds too (`--replications N`, 8 by default, 0: none), giving each",
        "its [seed spread](#seed-spread): lowest, mean and highest figure, whether the",
        "published figure lies between, and at how many seeds the tolerance holds.",
        "",
        f"Seed {seed}. Mb/s = 10^6 bit/s; Mbit/s as each paper writes it (000's is ttcp's, "
        "2^20 bit/s).",
        "",
        "## Counts",
        "",
        "| paper | kind | lines | within tolerance | qualitative | miss | not scored |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for paper, by_kind in counts(lines).items():
        for kind, c in by_kind.items():
            name = f"**{paper}**" if paper == "overall" else paper
            out.append(
                f"| {name} | {kind} | {sum(c.values())} | {c['within tolerance']} | "
                f"{c['qualitative']} | {c['miss']} | {c['not scored']} |"
            )
    out += ["", seed_spread.summary_text(spread_counts(lines)) + "."]
    out += [
        "",
        "## Every published result",
        "",
        "| place | kind | quantity | unit | published | simulated | ratio | tolerance | verdict |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for x in lines:
        c = _cells(x, causes)
        if x.cause:
            c[-1] = f"**miss** [{causes[x.cause]}]"
        out.append("| " + " | ".join(cell(t) for t in c) + " |")
    spread = [x for x in lines if x.spread is not None]
    if spread:
        first = spread[0].spread
        assert first is not None
        out += [
            "",
            "## Seed spread",
            "",
            f"Each result the seed moves, run at seeds {first.seeds_text()} (the verdict is "
            f"seed {seed}'s; `cellbench fidelity --seed K` prints seed K's figure); `within` "
            "counts the seeds whose figure the line's tolerance holds (a claim: holds). Each "
            "study names these results in its declaration (`Compares.seeded`); every other "
            "line either does not depend on the seed (a calculation) or has no losses to "
            "contention for the draws to decide (the seed moves it by the hosts' jitter), "
            "and gets no spread.",
            "",
            "| place | quantity | unit | published | seed " + str(seed) + " | min | mean | max "
            "| published inside | within | verdict |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
        ]
        for x in spread:
            s = x.spread
            assert s is not None
            n = len(s.seeds)
            figs = (
                [_fmt(v) for v in (s.min, s.mean, s.max)]
                if s.min is not None and s.mean is not None and s.max is not None
                else ["-", "-", "-"]
            )
            inside = {True: "yes", False: "no", None: "-"}[s.published_inside]
            row = [x.place, x.quantity, x.unit, x.published_text, x.simulated_text, *figs,
                   inside, f"{s.held} of {n}", x.verdict]  # fmt: skip
            out.append("| " + " | ".join(cell(t) for t in row) + " |")
    out += ["", "## Misses and their causes", ""]
    if not causes:
        out.append("None.")
    for cause, n in causes.items():
        ids = ", ".join(x.place + " " + x.quantity for x in lines if x.cause == cause)
        out += [f"{n}. {ids}: {cause}.", ""]
    out += ["## Tolerances and why", ""]
    for name, tol in TOLERANCES.items():
        used = [x for x in lines if TOLERANCES[_tol_name(x)] is tol]
        if used:
            out.append(f"- `{tol.text()}` ({name}, {len(used)} lines): {tol.reason}.")
    out += ["", "## What each run showed beyond the two figures", ""]
    out += [
        f"- {x.place} {x.quantity}: {x.detail}" + (f" (note: {x.note})" if x.note else "") + "."
        for x in lines
        if x.detail or x.note
    ]
    return "\n".join(out) + "\n"


def _tol_name(line: Line) -> str:
    for name, tol in TOLERANCES.items():
        if tol.text() == line.tolerance and tol.reason == line.tolerance_reason:
            return name
    raise KeyError(line.tolerance)


def run(
    *,
    seed: int = 1,
    workers: int = 0,
    progress: bool = False,
    replications: int = seed_spread.DEFAULT_REPLICATIONS,
) -> tuple[list[Line], float]:
    """Measure and score, with each seed-dependent result's spread over ``replications``
    seeds (0: none); the lines and the seconds the runs took."""
    seed_spread.seeds(seed, replications)  # a bad count fails before anything runs
    t0 = time.monotonic()

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    report = say if progress else None
    runs = measure(seed=seed, workers=workers, progress=report)
    spreads = seed_spread.measure(
        runs, seed=seed, replications=replications, workers=workers, progress=report
    )
    return score(runs, spreads), time.monotonic() - t0
