"""cellbench fidelity: every result the five papers publish beside the simulated one.

What is tested is that the scoreboard is the papers' whole list (data/published_results.csv)
built from the registry's declarations, and that each verdict is computed from the run and
the published figures: a doctored published value, or a doctored run, flips it. Nothing
here asserts that the scoreboard passes; its misses carry their causes.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cellbench.data import published
from cellbench.reproduce import REGISTRY, envelope, europe_vp, fidelity, lan_ethernet, spread
from cellbench.reproduce.study import Options, Simulated, run_parts
from cellbench.reproduce.wan_contention import offered_load

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs():
    return fidelity.measure(seed=1, workers=2)


@pytest.fixture(scope="module")
def spreads(runs):
    return spread.measure(runs, seed=1, replications=spread.DEFAULT_REPLICATIONS, workers=2)


@pytest.fixture(scope="module")
def lines(runs, spreads):
    return fidelity.score(runs, spreads)


def find(lines, rid: str) -> fidelity.Line:
    [line] = [x for x in lines if x.id == rid]
    return line


def test_every_published_result_is_one_line_in_the_papers_order(lines) -> None:
    results = published.published_results()
    assert [x.id for x in lines] == [r.id for r in results]
    assert len({r.id for r in results}) == len(results) >= 100
    assert {r.paper for r in results} == {"000", "001", "002", "003", "004"}
    for x in lines:
        assert x.verdict in fidelity.VERDICTS and x.kind in fidelity.KINDS
        assert (x.cause is not None) == (x.verdict == "miss"), x
        assert x.tolerance and x.tolerance_reason and x.place.startswith(x.paper)
        if x.published is None:
            assert x.verdict != "within tolerance"  # a claim in words is qualitative
    # The 100-cell grid is two summary lines whose cells are in --json.
    grid = [x for x in lines if x.place == "000 Table 1"]
    assert sorted(len(x.cells) for x in grid) == [14, 86]
    assert len(published.lan_buffer_table()) == 100


def test_lines_are_built_from_the_registry_declarations() -> None:
    """Every id a part declares is a published result, declared once; every result of the
    list no part declares is a not-scored line, never an omission."""
    ids = [r for *_, c in fidelity.declarations() for r in c.results]
    assert len(ids) == len(set(ids))
    assert set(ids) <= {r.id for r in published.published_results()}
    for r in published.published_results():
        assert r.tolerance in fidelity.TOLERANCES, r.id
    names = {name for name, *_ in fidelity.declarations()}
    # ubr is the era's UBR experiment (issue 34), which none of the five papers publishes:
    # it compares no published figure (docs/ubr.md); every other study does.
    assert names == set(REGISTRY) - {"ubr"}


def test_counts_per_paper_and_kind(lines) -> None:
    c = fidelity.counts(lines)
    assert list(c) == ["000", "001", "002", "003", "004", "overall"]
    assert sum(sum(v.values()) for v in c["overall"].values()) == len(lines)
    for kind in fidelity.KINDS:
        for v in fidelity.VERDICTS:
            assert c["overall"][kind][v] == sum(c[p][kind][v] for p in c if p != "overall")
    text = fidelity.report(lines, seed=1).splitlines()
    assert text[1].startswith("paper 000: predictions") and text[6].startswith("overall:")


def _doctor_value(monkeypatch, rid: str, value: float) -> None:
    real = published.published_results

    def doctored():
        return [dataclasses.replace(r, value=value) if r.id == rid else r for r in real()]

    monkeypatch.setattr(published, "published_results", doctored)


@pytest.mark.parametrize(
    "rid",
    [
        "003-e1-512",
        "003-e1-131072",
        "001-t3-ultra1-ultra1",
        "001-t3-sparc10-challenge",
        "001-t1-tcp-vc",
        "000-s415-16k-24k-rate",
        "002-s42-1650-19",
        "003-e2-unpaced",
        "004-fig4-full",
        "004-s3-ftp",
    ],
)
def test_a_doctored_published_value_flips_its_verdict(runs, lines, monkeypatch, rid) -> None:
    before = find(lines, rid)
    assert before.verdict in ("within tolerance", "miss")
    # Within tolerance -> twice the value; a miss -> the simulated value itself.
    value = before.published * 2 if before.verdict != "miss" else before.simulated
    _doctor_value(monkeypatch, rid, value)
    after = find(fidelity.score(runs), rid)
    assert after.verdict == ("miss" if before.verdict != "miss" else "within tolerance")


def test_a_referenced_table_is_read_when_scoring(runs, lines, monkeypatch) -> None:
    """A line whose value lives in another table (@FILE:KEY) reads that table."""
    real = published.wan_window_table
    monkeypatch.setattr(published, "wan_window_table", lambda: {**real(), 512: 2 * real()[512]})
    assert find(lines, "003-e1-512").verdict == "within tolerance"
    assert find(fidelity.score(runs), "003-e1-512").verdict == "miss"


@pytest.mark.parametrize(
    "cell, rid",
    [
        ((16384, 16384), "000-t1-flowing"),
        ((52428, 52428), "000-t1-flowing"),
        ((16384, 24576), "000-t1-collapsed"),
    ],
)
def test_a_doctored_grid_cell_flips_its_class(runs, lines, monkeypatch, cell, rid) -> None:
    """Each cell of a summary line is held to the line's tolerance."""
    before = find(lines, rid)
    real = published.lan_buffer_table
    monkeypatch.setattr(published, "lan_buffer_table", lambda: {**real(), cell: 2 * real()[cell]})
    after = find(fidelity.score(runs), rid)
    if before.verdict == "within tolerance":
        assert after.verdict == "miss"
    assert after.published != before.published


def _part(study: str, part: str, **params):
    opts = Options(seed=1, workers=2, parts=(part,), params=params)
    return run_parts(REGISTRY[study], opts)[part]


def test_claims_are_computed_from_the_run() -> None:
    """A claim in words has no number to doctor: doctor the run and watch it flip."""
    # 000's footnote: 3K/6K no longer locks.
    rows = _part("lan-buffers", "ethernet-footnote")
    was = lan_ethernet._footnote_figures(rows)["000-s5-ethernet-footnote"].holds
    doctored = [
        dict(r, lockstep=not was if r["send_buffer"] == 3072 else r["lockstep"]) for r in rows
    ]
    assert lan_ethernet._footnote_figures(doctored)["000-s5-ethernet-footnote"].holds != was
    # 004 Fig. 4: full load as high as the peak (or nothing at full load).
    got = _part("wan-contention", "offered-load")
    was = offered_load._offered_load_figures(got)["004-fig4-drop"].holds
    f = dict(got["offered_load"])
    f["full_load_bps"] = 0.0 if not was else f["peak_bps"]
    now = offered_load._offered_load_figures({**got, "offered_load": f})["004-fig4-drop"].holds
    assert now != was
    # 002 §4.1: an unspaced transfer that carried data.
    df = _part("europe-vp", "vp")
    assert europe_vp._vp_figures(df)["002-s41-unspaced"].holds
    df.loc[df.spacing_us.isna(), "throughput_bps"] = 5e6
    assert not europe_vp._vp_figures(df)["002-s41-unspaced"].holds


def test_verdicts_of_each_tolerance() -> None:
    t = fidelity.TOLERANCES
    assert fidelity.verdict(t["wire5"], 10.0, Simulated(10.4)) == "within tolerance"
    assert fidelity.verdict(t["wire5"], 10.0, Simulated(10.6)) == "miss"
    assert fidelity.verdict(t["below"], 1.0, Simulated(0.99)) == "within tolerance"
    assert fidelity.verdict(t["below"], 1.0, Simulated(1.0)) == "miss"
    assert fidelity.verdict(t["range_2_4"], 3.0, Simulated(4.5)) == "miss"
    assert fidelity.verdict(t["factor2"], 3.5, Simulated(1.8)) == "within tolerance"
    assert fidelity.verdict(t["claim"], None, Simulated(holds=False)) == "miss"
    assert fidelity.verdict(t["claim"], None, Simulated(missing="no run")) == "not scored"
    # A number that also needs a condition (each cell locks) misses without it.
    assert fidelity.verdict(t["lockstep10"], 0.3125, Simulated(0.31, holds=False)) == "miss"


def test_json_keys_are_stable(lines) -> None:
    d = fidelity.to_json(lines, seed=1)
    assert list(d) == ["seed", "counts", "lines", "spread"]
    assert list(d["counts"]["overall"]) == list(fidelity.KINDS)
    assert sum(sum(v.values()) for v in d["counts"]["overall"].values()) == len(d["lines"])
    assert list(d["spread"]) == [
        "replications", "seeds", "lines", "misses", "misses_published_inside",
        "misses_held_at_some_seed",
    ]  # fmt: skip
    assert d["spread"]["replications"] == spread.DEFAULT_REPLICATIONS
    for x in d["lines"]:
        assert list(x) == list(fidelity.JSON_KEYS)
        if x["published"] is not None and x["simulated"] is not None and x["published"]:
            assert x["ratio"] == pytest.approx(x["simulated"] / x["published"], rel=1e-5)
        if x["spread"] is not None:
            assert list(x["spread"]) == list(spread.JSON_KEYS)
            assert x["spread"]["seeds"] == list(range(1, 1 + spread.DEFAULT_REPLICATIONS))
    assert sum(x["spread"] is not None for x in d["lines"]) == d["spread"]["lines"] > 0
    json.dumps(d)  # plain JSON types only


# --- the seed spread ------------------------------------------------------------------------


def test_seeded_results_are_declared_with_the_results_they_compare() -> None:
    seeded = [(rid, c) for *_, c in fidelity.declarations() for rid in c.seeded]
    assert seeded, "no study declares a result the seed moves"
    for rid, c in seeded:
        assert rid in c.results, rid
    assert len({rid for rid, _ in seeded}) == len(seeded)


def test_a_seed_dependent_line_has_a_spread_and_a_deterministic_one_none(runs, lines) -> None:
    """003 Exp. 4(a) (two TCPs at one port) is declared seeded: its spread's first seed is
    the verdict's own run and the others are the same declaration at the next seeds. A
    calculation (001 Table 1) and a paced run that loses nothing (003 Exp. 4(b), from the
    same runs as 4(a)) are declared nowhere and get none."""
    e4a = find(lines, "003-e4a-aggregate")
    s = e4a.spread
    assert s is not None and s.seeds == tuple(range(1, 1 + spread.DEFAULT_REPLICATIONS))
    assert s.simulated[0] == e4a.simulated
    assert s.verdicts[0] == e4a.verdict
    assert len(set(s.simulated)) > 1  # the seed moves it
    assert s.min == min(s.simulated) and s.max == max(s.simulated)
    assert s.mean == pytest.approx(sum(s.simulated) / len(s.simulated))
    [(study_name, part, _i, c)] = [d for d in fidelity.declarations() if d[1] == "case3"]
    seed3 = fidelity.run_declaration(study_name, part, c, seed=3, workers=2)
    assert s.simulated[2] == seed3["003-e4a-aggregate"].value
    for rid in ("001-t1-tcp-vc", "003-e4b-aggregate", "003-e1-512"):
        assert find(lines, rid).spread is None, rid
    assert fidelity.to_json([find(lines, "001-t1-tcp-vc")], seed=1)["lines"][0]["spread"] is None
    # The text gives it a second line under the row; the deterministic line has none.
    text = fidelity.report(lines, seed=1).splitlines()
    [i] = [i for i, t in enumerate(text) if t.startswith("003 Exp. 4") and "(a) two SPARC" in t]
    assert text[i + 1].lstrip().startswith("seeds 1-8: min ")
    [j] = [j for j, t in enumerate(text) if t.startswith("003 Exp. 4") and "(b) two Alphas" in t]
    assert not text[j + 1].lstrip().startswith("seeds")


def test_narrowed_seed_runs_give_the_full_runs_figures() -> None:
    """A declaration's ``seeded_sets`` only leave out points its seeded results do not
    read: at a seed other than the verdict's, their figures are the full run's."""
    narrowed = [d for d in fidelity.declarations() if d[3].seeded_sets]
    assert narrowed
    for study_name, part, _i, c in narrowed:
        full = fidelity.run_declaration(study_name, part, c, seed=2, workers=2)
        less = fidelity.run_declaration(study_name, part, c, seed=2, workers=2, sets=c.seeded_sets)
        for rid in c.seeded:
            assert less[rid] == full[rid], rid


def test_published_inside_and_held_are_computed(runs, spreads, lines, monkeypatch) -> None:
    """Doctor the published value: inside, then outside the spread; the flag, the seeds
    within tolerance and the summary count follow."""
    rid = "003-e4a-aggregate"
    s = find(lines, rid).spread
    assert s is not None and s.min is not None and s.max is not None
    _doctor_value(monkeypatch, rid, s.max * 1.5)
    out = fidelity.score(runs, spreads)
    after = find(out, rid).spread
    assert after is not None and after.published_inside is False and after.held == 0
    assert after.simulated == s.simulated
    below = fidelity.spread_counts(out)["misses_published_inside"]
    _doctor_value(monkeypatch, rid, (s.min + s.max) / 2)
    out = fidelity.score(runs, spreads)
    inside = find(out, rid).spread
    assert inside is not None and inside.published_inside is True and inside.held > 0
    counts = fidelity.spread_counts(out)
    misses = [x for x in out if x.spread is not None and x.verdict == "miss"]
    assert counts["misses"] == len(misses)
    assert counts["misses_published_inside"] == sum(
        x.spread.published_inside is True for x in misses if x.spread is not None
    )
    if find(out, rid).verdict == "miss":
        assert counts["misses_published_inside"] == below + 1


def test_spread_statistics() -> None:
    s = spread.Spread(
        seeds=(4, 5, 6),
        simulated=(10.0, 14.0, 30.0),
        holds=(None, None, None),
        verdicts=("miss", "within tolerance", "miss"),
        published=12.0,
    )
    assert (s.min, s.mean, s.max, s.published_inside, s.held) == (10.0, 18.0, 30.0, True, 1)
    assert s.text(fidelity._fmt) == (
        "seeds 4-6: min 10, mean 18, max 30; published 12 inside; within tolerance at 1 of 3"
    )
    claim = spread.Spread((1, 2), (None, None), (True, False), ("qualitative", "miss"), None)
    assert claim.published_inside is None
    assert claim.text(str) == "seeds 1-2: the claim holds at 1 of 2"
    assert spread.seeds(5, 3) == [5, 6, 7] and spread.seeds(1, 0) == []
    with pytest.raises(ValueError, match="--replications -1"):
        spread.seeds(1, -1)
    with pytest.raises(ValueError, match="2\\^63-1"):
        spread.seeds(2**63 - 1, 2)
    assert spread.seeds(2**63 - 1, 1) == [2**63 - 1]


def test_no_replications_no_spread(runs) -> None:
    assert spread.measure(runs, seed=1, replications=0) == {}
    out = fidelity.score(runs, {})
    assert all(x.spread is None for x in out)
    assert fidelity.spread_counts(out)["lines"] == 0
    assert "seed spread: none" in fidelity.report(out, seed=1)


def test_docs_fidelity_md_is_what_the_code_prints(lines) -> None:
    """docs/fidelity.md is generated (cellbench fidelity --markdown); a change that moves
    a verdict or a figure regenerates it in the same commit."""
    assert (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8") == fidelity.markdown(
        lines, seed=1
    )


def test_envelope_places_a_result_against_its_assumptions() -> None:
    """wan-mismatch's cases: the port buffer, what the pacing rate counts and the test
    length are open; the paced Experiment 2 figure is reached when the rate counts
    payload."""
    [(study, part, _i, c)] = [d for d in fidelity.declarations() if d[1] == "cases"]
    axes = envelope.axes(study, part, c)
    assert {a.key for a in axes} == {
        "testbed.switch.buffer_cells",
        "testbed.host.alpha1.pacing_counts",
        "testbed.host.alpha2.pacing_counts",
        "seconds",
    }
    port = [a for a in axes if a.key == "testbed.switch.buffer_cells"][0]
    assert port.files == ["wan-mismatch-case1", "wan-mismatch-case2"]
    envs = {e.id: e for e in envelope.run(seed=1, workers=2, only={("wan-mismatch", "cases")})}
    paced = envs["003-e2-paced"]
    assert paced.corners == 16 and paced.where == "inside the envelope"
    assert all(corner["testbed.host.alpha1.pacing_counts"] == "payloads" for corner in paced.at)
    unpaced = envs["003-e2-unpaced"]
    assert unpaced.where == "outside the envelope" and unpaced.cause


def test_cli_json_and_progress_on_stderr() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "fidelity", "--json", "--workers", "2",
         "--replications", "0"],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["seed"] == 1 and d["lines"]
    assert "fidelity: lan-buffers grid" in p.stderr and "results in" in p.stderr
    # --replications 0: no seed spread, and no run for it.
    assert all(x["spread"] is None for x in d["lines"]) and d["spread"]["lines"] == 0
    assert "fidelity: spread of" not in p.stderr
    assert {x["verdict"] for x in d["lines"]} <= set(fidelity.VERDICTS)


def test_cli_bad_input_is_one_line() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "fidelity", "--workers", "-1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "--workers -1" in p.stderr
