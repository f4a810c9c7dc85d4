"""cellbench fidelity: every published result beside the simulated one.

What is tested is that each verdict is computed from the run and the published
figures: a doctored published value, or a doctored run, flips it. Nothing here
asserts that the scoreboard passes; its misses are the known deviations, each with
its cause (the same text the tests' xfail marks give).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cellbench.data import published
from cellbench.reproduce import fidelity, hetero_lan

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs():
    return fidelity.measure(seed=1, workers=2)


@pytest.fixture(scope="module")
def lines(runs):
    return fidelity.score(runs)


def find(lines, study: str, quantity_part: str) -> fidelity.Line:
    [line] = [x for x in lines if x.study == study and quantity_part in x.quantity]
    return line


def test_one_line_per_published_result(lines) -> None:
    by = {}
    for x in lines:
        by.setdefault(x.study, []).append(x)
    assert len(by["wan-window"]) == len(published.wan_window_table()) == 9
    assert len(by["hetero-lan"]) == len(published.hetero_lan_maxima()) == 6
    assert len(by["layers"]) == sum(len(v) for v in published.layer_bandwidth().values()) == 10
    # The grid's two classes (its 100 cells between them) and the study's remedy.
    assert len(by["lan-buffers"]) == 3
    collapsed, flowing = (int(x.quantity.split()[0]) for x in by["lan-buffers"][:2])
    assert collapsed + flowing == len(published.lan_buffer_table()) == 100
    # The class the table's values give is the study's own marking of the anomalous cells.
    assert collapsed == len(published.LAN_ANOMALOUS) == 14
    assert {"europe-vp", "wan-mismatch", "wan-contention"} <= set(by)
    for x in lines:
        assert x.verdict in fidelity.VERDICTS
        # A miss says why; nothing else carries a cause.
        assert (x.cause is not None) == (x.verdict == "miss"), x
        assert x.tolerance and x.tolerance_reason
        if x.published is None:
            assert x.verdict != "within tolerance"  # a claim in words is qualitative


def test_the_tests_xfails_are_scoreboard_lines_with_their_cause(lines) -> None:
    remedy = find(lines, "lan-buffers", "remedy")
    large = [x for x in lines if x.study == "wan-window" and x.published >= 7]
    for line, key in [(remedy, "lan-buffers remedy")] + [
        (x, "wan-window large windows") for x in large
    ]:
        if line.verdict == "miss":
            assert line.cause == fidelity.KNOWN_DEVIATIONS[key]


def test_every_known_deviation_is_a_miss_of_todays_run(lines) -> None:
    """A cause kept for a deviation the code no longer shows would be stale text: a
    change that closes one removes its cause (and its xfail) in the same commit."""
    causes = {x.cause for x in lines if x.verdict == "miss"}
    assert set(fidelity.KNOWN_DEVIATIONS.values()) <= causes


def _doctor(monkeypatch, name: str, edit) -> None:
    """Replace published.NAME() with a copy of its table that ``edit`` changed."""
    real = getattr(published, name)

    def doctored():
        table = copy.deepcopy(real())
        edit(table)
        return table

    monkeypatch.setattr(published, name, doctored)


def _flip(verdict: str) -> str:
    return "miss" if verdict != "miss" else "within tolerance"


@pytest.mark.parametrize("window", [512, 8192, 131072])
def test_a_doctored_wan_window_point_flips_its_verdict(runs, lines, monkeypatch, window) -> None:
    before = find(lines, "wan-window", f"window {window} B")

    def edit(t):
        # Within tolerance -> a point 50% higher; a miss -> the simulated value itself.
        t[window] = t[window] * 1.5 if before.verdict != "miss" else before.simulated * 1e6

    _doctor(monkeypatch, "wan_window_table", edit)
    after = find(fidelity.score(runs), "wan-window", f"window {window} B")
    assert after.verdict == _flip(before.verdict)
    assert after.published != before.published


@pytest.mark.parametrize("pair", hetero_lan.PAIR_NAMES)
def test_a_doctored_hetero_lan_maximum_flips_its_verdict(runs, lines, monkeypatch, pair) -> None:
    before = find(lines, "hetero-lan", f"maximum {pair}")

    def edit(t):
        t[pair]["max_bps"] = (
            before.simulated * 1e6 if before.verdict == "miss" else t[pair]["max_bps"] * 2
        )

    _doctor(monkeypatch, "hetero_lan_maxima", edit)
    after = find(fidelity.score(runs), "hetero-lan", f"maximum {pair}")
    assert after.verdict == _flip(before.verdict)


def test_a_doctored_layer_figure_flips_its_verdict(runs, lines, monkeypatch) -> None:
    before = find(lines, "layers", "tcp_payload, OC-3c VC-mux 9188")
    _doctor(
        monkeypatch, "layer_bandwidth", lambda t: t[("vc-mux", 9188)].update(tcp_payload=134.632)
    )
    after = find(fidelity.score(runs), "layers", "tcp_payload, OC-3c VC-mux 9188")
    assert before.verdict == "within tolerance" and after.verdict == "miss"


@pytest.mark.parametrize(
    "cell, line",
    [
        # A flowing cell published as collapsed: the collapsed class no longer holds.
        ((16384, 16384), "published collapsed"),
        # A collapsed cell published as flowing: the other cells' class no longer holds.
        ((16384, 24576), "other cells"),
        # A flowing cell published at twice its value: outside +-25%.
        ((52428, 52428), "other cells"),
    ],
)
def test_a_doctored_lan_buffers_cell_flips_its_class(runs, lines, monkeypatch, cell, line) -> None:
    before = find(lines, "lan-buffers", line)
    assert before.verdict == "within tolerance", before  # (flipped below)

    def edit(t):
        t[cell] = {
            "published collapsed": 0.3,
            "other cells": 15.0 if t[cell] < 2 else 2 * t[cell],
        }[line]

    _doctor(monkeypatch, "lan_buffer_table", edit)
    after = find(fidelity.score(runs), "lan-buffers", line)
    assert after.verdict == "miss"


def test_europe_vp_lines_read_the_published_figures(runs, lines, monkeypatch) -> None:
    conforming = find(lines, "europe-vp", "spacing 16.50")
    tight = find(lines, "europe-vp", "spacing 16.01")

    def edit(claim):
        # "from 19 Mb/s": doctored to 30 (or to the simulated rate when it missed).
        claim["from_mbps"] = 30.0 if conforming.verdict != "miss" else conforming.simulated
        # "to 1 Mb/s": doctored to a tenth of the simulated rate (or to the rate itself).
        claim["to_mbps"] = tight.simulated / 10 if tight.verdict != "miss" else tight.simulated

    _doctor(monkeypatch, "europe_vp_claim", edit)
    after = fidelity.score(runs)
    assert find(after, "europe-vp", "spacing 16.50").verdict == _flip(conforming.verdict)
    assert find(after, "europe-vp", "spacing 16.01").verdict == (
        "qualitative" if tight.verdict == "miss" else "miss"
    )


def test_qualitative_lines_are_computed_from_the_run(runs, lines) -> None:
    """A claim in words has no published number to doctor: doctor the run instead."""
    doctored = copy.deepcopy(runs)
    # wan-mismatch: a paced sender that lost cells.
    mm = doctored["wan-mismatch"]
    mm.loc[(mm.case == 1) & (mm.pacing_mbps == 70), "cells_lost"] = 5
    # europe-vp: an unspaced transfer that did not collapse.
    vp = doctored["europe-vp"]
    vp.loc[vp.spacing_us.isna(), "throughput_bps"] = 5e6
    # wan-contention: full load as high as the peak (or, if that is what the run gave,
    # nothing at full load).
    f = doctored["wan-contention"]["offered_load"]
    was_drop = find(lines, "wan-contention", "offered load").verdict != "miss"
    f["full_load_bps"] = f["peak_bps"] if was_drop else 0.0
    # lan-buffers' remedy: every 3 x MSS transfer locked, or none did.
    rem = doctored["lan-buffers remedy"]
    rem["lockstep"] = not find(lines, "lan-buffers", "remedy").verdict == "miss"
    after = fidelity.score(doctored)
    for study, part in [
        ("wan-mismatch", "1 sender"),
        ("europe-vp", "unspaced"),
        ("wan-contention", "offered load"),
        ("lan-buffers", "remedy"),
    ]:
        was, now = find(lines, study, part).verdict, find(after, study, part).verdict
        assert {was, now} == {"qualitative", "miss"}, (study, was, now)
    # Untouched lines stay as they were.
    assert (
        find(after, "wan-mismatch", "2 senders").verdict
        == find(lines, "wan-mismatch", "2 senders").verdict
    )


def test_json_keys_are_stable(lines) -> None:
    d = fidelity.to_json(lines, seed=1)
    assert list(d) == ["seed", "replications", "counts", "lines"]
    assert list(d["counts"]) == list(fidelity.VERDICTS)
    assert sum(d["counts"].values()) == len(d["lines"]) == len(lines)
    for x in d["lines"]:
        assert list(x) == [
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
        ]
        if x["published"] is not None and x["simulated"] is not None and x["published"]:
            assert x["ratio"] == pytest.approx(x["simulated"] / x["published"], rel=1e-5)
    json.dumps(d)  # plain JSON types only


def test_docs_fidelity_md_is_what_the_code_prints(lines) -> None:
    """docs/fidelity.md is generated (cellbench fidelity --markdown); a change that moves
    a verdict or a figure regenerates it in the same commit."""
    assert (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8") == fidelity.markdown(
        lines, seed=1
    )


def test_cli_json_and_progress_on_stderr() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "fidelity", "--json", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["seed"] == 1 and d["lines"]
    assert "fidelity: lan-buffers:" in p.stderr and "results in" in p.stderr
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
