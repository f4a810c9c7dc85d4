"""The seed spread beside the scoreboard's verdict (``cellbench fidelity --replications N``,
docs/fidelity.md).

The verdict is the run at one seed (``--seed``, 1 by default), for every line alike. Where
the seed decides what happens (several TCPs at one congested port: which cells a port
drops and when each host's 500 ms timer fires are set by the draws, each host's timer
phases and processing jitter, ``rng.rs``), one run is one draw. A study declares those
results (``study.Compares.seeded``, next to the results it compares) and the scoreboard
runs each such declaration again at the next seeds, SEED+1 .. SEED+N-1, exactly as at
SEED (``cellbench fidelity --seed K`` prints draw K's figure), to give each of those lines
its ``Spread``: the simulated figure at every seed, its lowest, mean and highest, whether
the published figure lies between the lowest and the highest, and at how many seeds the
line's tolerance holds. A result the seed does not move is declared nowhere and gets none.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cellbench.reproduce.study import Simulated

#: Seeds per seed-dependent result by default (``--replications``): with the seeds after
#: it, seven more runs of five declarations, a few seconds on 2 cores.
DEFAULT_REPLICATIONS = 8

#: The verdicts a seed's figure counts as bearing out the published one.
HELD = ("within tolerance", "qualitative")


@dataclass(frozen=True)
class Spread:
    """One result's figures over the seeds, with the verdict each seed gives."""

    seeds: tuple[int, ...]
    #: The simulated figure at each seed (None for a claim in words).
    simulated: tuple[float | None, ...]
    #: Whether a claim holds at each seed (None for a figure).
    holds: tuple[bool | None, ...]
    #: ``fidelity.verdict`` at each seed, from the same tolerance as the line's.
    verdicts: tuple[str, ...]
    published: float | None

    @property
    def values(self) -> list[float]:
        return [v for v in self.simulated if v is not None]

    @property
    def min(self) -> float | None:
        return min(self.values) if self.values else None

    @property
    def max(self) -> float | None:
        return max(self.values) if self.values else None

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    @property
    def published_inside(self) -> bool | None:
        """Whether the published figure lies in [min, max] (None without two figures)."""
        lo, hi = self.min, self.max
        if self.published is None or lo is None or hi is None:
            return None
        return lo <= self.published <= hi

    @property
    def held(self) -> int:
        """At how many seeds the line's tolerance holds (or its claim does)."""
        return sum(v in HELD for v in self.verdicts)

    def seeds_text(self) -> str:
        s = self.seeds
        contiguous = list(s) == list(range(s[0], s[0] + len(s)))
        return f"{s[0]}-{s[-1]}" if contiguous and len(s) > 1 else ",".join(map(str, s))

    def text(self, fmt: Callable[[float], str]) -> str:
        """One line: ``seeds 1-8: 19.73 .. 61.37, mean 45.9; published 46.71 inside; ...``."""
        n = len(self.seeds)
        head = f"seeds {self.seeds_text()}: "
        if self.min is None or self.max is None or self.mean is None:
            return head + f"the claim holds at {self.held} of {n}"
        inside = self.published_inside
        where = (
            ""
            if inside is None or self.published is None
            else f"; published {fmt(self.published)} {'inside' if inside else 'outside'}"
        )
        return (
            head + f"min {fmt(self.min)}, mean {fmt(self.mean)}, max {fmt(self.max)}{where}; "
            f"within tolerance at {self.held} of {n}"
        )

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else float(f"{x:.6g}")

        return {
            "seeds": list(self.seeds),
            "simulated": [r(v) for v in self.simulated],
            "holds": list(self.holds),
            "verdicts": list(self.verdicts),
            "min": r(self.min),
            "mean": r(self.mean),
            "max": r(self.max),
            "published_inside": self.published_inside,
            "held": self.held,
        }


#: ``Spread.to_json``'s keys (stable: add, never rename).
JSON_KEYS = ("seeds", "simulated", "holds", "verdicts", "min", "mean", "max",
             "published_inside", "held")  # fmt: skip


def seeds(seed: int, replications: int) -> list[int]:
    """The seeds of an N-replication spread: the verdict's seed and the N-1 after it."""
    from cellbench.experiment.model import SEED_MAX

    if replications < 0:
        raise ValueError(f"--replications {replications}: expected 0 (no spread) or more")
    if seed + replications - 1 > SEED_MAX:
        raise ValueError(
            f"--seed {seed} with --replications {replications}: the spread's last seed passes "
            f"{SEED_MAX} (2^63-1); expected a lower seed or fewer replications"
        )
    return list(range(seed, seed + replications))


def measure(
    runs: dict[str, tuple[str, Simulated]],
    *,
    seed: int,
    replications: int,
    workers: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[tuple[int, Simulated]]]:
    """Each declared seed-dependent result's figure at every seed of the spread (result id
    -> [(seed, figure)]): the verdict's own from ``runs`` (``fidelity.measure``), the
    others by running its declaration again (narrowed by ``seeded_sets``)."""
    from cellbench.reproduce import fidelity

    say = progress or (lambda _text: None)
    chosen = seeds(seed, replications)
    if not chosen:
        return {}
    draws: dict[str, list[tuple[int, Simulated]]] = {}
    for study_name, part, _i, c in fidelity.declarations():
        if not c.seeded:
            continue
        for rid in c.seeded:
            draws[rid] = [(seed, runs[rid][1])]
        more = chosen[1:]
        if not more:
            continue
        name = f"{study_name} {part}" + (f" ({c.what})" if c.what else "")
        what = f"fidelity: spread of {name}, seeds {more[0]}-{more[-1]}"
        say(f"{what} ...")
        t0 = time.monotonic()
        for s in more:
            figures = fidelity.run_declaration(
                study_name, part, c, seed=s, workers=workers, sets=c.seeded_sets
            )
            for rid in c.seeded:
                draws[rid].append((s, figures[rid]))
        say(f"{what}: {time.monotonic() - t0:.1f} s")
    return draws


def summarise(
    draws: list[tuple[int, Simulated]], published: float | None, verdict: Callable[[Simulated], str]
) -> Spread:
    """A result's spread from its figures at each seed; ``verdict`` is the line's own."""
    return Spread(
        seeds=tuple(s for s, _ in draws),
        simulated=tuple(d.value for _, d in draws),
        holds=tuple(d.holds for _, d in draws),
        verdicts=tuple(verdict(d) for _, d in draws),
        published=published,
    )


def summary(spreads: list[tuple[str, Spread]]) -> dict[str, Any]:
    """The spread's counts over the scoreboard's lines ((verdict at the seed, spread) of each
    line that has one): how many lines, how many of them miss, and of those how many have
    the published figure inside their spread, or hold at some seed."""
    misses = [s for v, s in spreads if v == "miss"]
    return {
        "replications": len(spreads[0][1].seeds) if spreads else 0,
        "seeds": list(spreads[0][1].seeds) if spreads else [],
        "lines": len(spreads),
        "misses": len(misses),
        "misses_published_inside": sum(s.published_inside is True for s in misses),
        "misses_held_at_some_seed": sum(s.held > 0 for s in misses),
    }


def summary_text(c: dict[str, Any]) -> str:
    """The counts in one line (the text report's and docs/fidelity.md's)."""
    if not c["lines"]:
        return "seed spread: none (--replications 0)"
    s = c["seeds"]
    return (
        f"seed spread (seeds {s[0]}-{s[-1]}, {c['lines']} results the seed moves): of their "
        f"{c['misses']} misses at seed {s[0]}, {c['misses_published_inside']} have the published "
        f"figure inside their spread and {c['misses_held_at_some_seed']} are within tolerance "
        "at some seed"
    )
