"""The experiment language's named assumptions: ``assume(DEFAULT, range=[LOW, HIGH] |
among=[...], source="...")`` in a sweep (experiment/sweep.py), and the studies' open
setup values written so (reproduce/*.netspec, the study pages' tables)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cellbench.experiment import lang, sweep
from cellbench.experiment.lang import ExperimentError
from cellbench.reproduce import envelope, fidelity
from cellbench.reproduce.study import HERE

ROOT = Path(__file__).resolve().parents[1]

GOOD = """
cluster { test t { type = full (blocksize=$write); own = a:1; peer = b:1; } }
sweep {
    write = assume(8K, range=[1K, 8K], source="BUFSIZ to st_blksize");
    flavour = assume(osf1, among=[osf1, sunos413], source="the paper names no OS");
}
"""


def test_an_assumption_runs_at_its_default_and_lists_its_range() -> None:
    doc = lang.parse(GOOD, "x.netspec")
    s = sweep.from_document(doc)
    assert [(p.key, [lang.render(v) for v in p.values]) for p in s.params] == [
        ("write", ["8K"]),
        ("flavour", ["osf1"]),
    ]
    [write, flavour] = sweep.assumptions(doc)
    assert (write.key, write.range_text(), write.source) == (
        "write",
        "[1K, 8K]",
        "BUFSIZ to st_blksize",
    )
    assert [lang.render(v) for v in write.values()] == ["1K", "8K"]
    assert [lang.render(v) for v in flavour.values()] == ["osf1", "sunos413"]
    # --set moves it like any parameter.
    merged = sweep.merge(s, [sweep.parse_set("write=1K")])
    assert [lang.render(v) for v in merged.params[0].values] == ["1K"]


@pytest.mark.parametrize(
    "value, message",
    [
        (
            'assume(16K, range=[1K, 8K], source="s")',
            "x.netspec:3:20: found write default 16K, expected a default in [1K, 8K]",
        ),
        ("assume(8K, range=[1K, 8K])", 'expected source="..." saying where the range comes from'),
        ('assume(8K, range=[8K, 1K], source="s")', "found [8K, 1K], expected LOW <= HIGH"),
        ('assume(8K, range=[1K], source="s")', "expected range=[LOW, HIGH], two numbers"),
        ('assume(8K, source="s")', "expected one of range=[LOW, HIGH] or among=[...]"),
        (
            'assume(reno, among=[osf1, sunos413], source="s")',
            "found write default reno, expected one of [osf1, sunos413]",
        ),
        ('assume(8K, range=[1K, 8K], source="")', "saying where the range comes from"),
        ('assume(8K, 9K, range=[1K, 8K], source="s")', "expected assume(DEFAULT"),
    ],
)
def test_a_bad_assumption_is_one_line_naming_file_line_and_value(value, message) -> None:
    text = "cluster { test t { type = full (blocksize=$write); own = a:1; peer = b:1; } }\n"
    text += f"sweep {{\n    write = {value};\n}}\n"
    doc = lang.parse(text, "x.netspec")
    with pytest.raises(ExperimentError) as e:
        sweep.from_document(doc)
    assert message in str(e.value) and str(e.value).startswith("x.netspec:3:")
    assert "\n" not in str(e.value)


def test_the_cli_refuses_a_bad_assumption_in_one_line(tmp_path) -> None:
    f = tmp_path / "bad.netspec"
    f.write_text(GOOD.replace("range=[1K, 8K]", "range=[1K, 4K]"))
    p = subprocess.run(
        [sys.executable, "-m", "cellbench", "run", str(f)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode != 0 and p.stderr.count("\n") == 1, p.stderr
    assert "bad.netspec:4:" in p.stderr and "default 8K" in p.stderr


def test_every_study_file_assumption_is_checked_and_sourced() -> None:
    found = {}
    for path in sorted(HERE.glob("*.netspec")):
        for a in envelope.file_assumptions(path.stem):
            found[(path.stem, a.key)] = a
            assert len(a.source) > 20, (path.stem, a.key)
    # The open values the issue names (000, 003, 004), each an assumption.
    for key in [
        ("lan-buffers-ftp", "atm_sndbuf"),
        ("lan-buffers-ftp", "read"),
        ("wan-mismatch-case3a", "window"),
        ("wan-mismatch-case3a", "testbed.host.sparc10-ks.flavour"),
        ("wan-mismatch-case1", "testbed.switch.buffer_cells"),
        ("wan-contention-offered-load", "testbed.switch.buffer_cells"),
        ("wan-contention-five-pairs", "w5"),
        ("wan-contention-ftp", "backbone_ms"),
        ("wan-contention-ftp", "disk"),
    ]:
        assert key in found, key
    # ftp's write size is no longer open: 4.3BSD's ftp and ftpd write BUFSIZ (the file says).
    assert ("lan-buffers-ftp", "write") not in found


@pytest.mark.parametrize("page", ["lan-buffers", "wan-mismatch", "wan-contention"])
def test_each_study_page_lists_its_assumptions(page) -> None:
    """The study pages' assumption tables are what the experiment files say."""
    text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    assert envelope.assumption_table(page) in text


def test_every_declaration_with_assumptions_is_in_the_envelope() -> None:
    parts = {name for name, _ in envelope.all_axes()}
    assert {"lan-buffers ftp", "wan-mismatch cases", "wan-mismatch case3",
            "wan-contention offered-load", "wan-contention five-pairs",
            "wan-contention ftp"} <= parts  # fmt: skip
    # A calculation has no experiment file, so no assumption.
    calcs = [c for *_, c in fidelity.declarations() if c.what.startswith("calc")]
    assert calcs and all(c.compute is not None for c in calcs)
