"""The experiment language's named assumptions: ``assume(DEFAULT, range=[LOW, HIGH] |
among=[...], source="...")`` in a sweep (experiment/sweep.py), and the studies' open
setup values written so (reproduce/*.netspec, the study pages' tables)."""

from __future__ import annotations

import re
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
        # 4.3BSD's ftp writes BUFSIZ (1 KB), SunOS 4.1.3's BUFSIZ*8: 000's 4.1.1 is open.
        ("lan-buffers-ftp", "write"),
        ("wan-mismatch-case3a", "window"),
        ("wan-mismatch-case3a", "testbed.host.sparc10-ks.flavour"),
        ("wan-mismatch-case1", "testbed.switch.buffer_cells"),
        ("wan-contention-offered-load", "testbed.switch.buffer_cells"),
        ("wan-contention-offered-load", "block"),
        ("wan-contention-offered-load", "window"),
        ("wan-contention-offered-load", "cell_pacing"),
        ("wan-contention-offered-load", "nrl_receiver"),
        ("wan-contention-offered-load", "seconds"),
        ("wan-contention-full-load", "block"),
        ("wan-contention-five-pairs", "w5"),
        ("wan-contention-ftp", "backbone_ms"),
        ("wan-contention-ftp", "disk"),
        # 004 gives no window, test length or path length for Table 3 and Fig. 7.
        ("wan-contention-credits", "window"),
        ("wan-contention-credits", "seconds"),
        ("wan-contention-burst", "trunk_ms"),
    ]:
        assert key in found, key


#: What a source of a range names: a paper's place ("004 Fig. 8", "000 §2.2", "003 gives
#: no ..."), an OS or tool source file (tcp_usrreq.c, stdio.h), a standard, or a vendor's
#: or tool's page.
CITES = re.compile(r"\b00[0-4]\b|\b\w+\.[ch]\b|\bRFC \d+|\bANSI X3\.|\bwww\.[\w.-]+")


def _cites(a: sweep.Assumption, same_file: dict[str, sweep.Assumption], seen=()) -> bool:
    """Whether the source names where its range comes from; "as NAME: ..." counts the
    source of the file's other assumption NAME names (a key, or the host in its key)."""
    if CITES.search(a.source):
        return True
    m = re.match(r"as ([\w.-]+):", a.source)
    if m is None:
        return False
    named = [b for k, b in same_file.items() if m[1] in (k, *k.split(".")[-2:])]
    return any(_cites(b, same_file, (*seen, a.key)) for b in named if b.key not in seen)


def test_every_assumption_cites_its_range_and_holds_its_default() -> None:
    """Every ``assume`` of the studies' files: a source naming where its range comes from,
    and a range (or choice) holding the default the scoreboard runs at."""
    files = sorted(HERE.glob("*.netspec"))
    assert files
    n = 0
    for path in files:
        mine = {a.key: a for a in envelope.file_assumptions(path.stem)}
        for a in mine.values():
            n += 1
            where = f"{path.name}: {a.key}"
            assert _cites(a, mine), f"{where}: the source names no paper, file or page"
            if a.among:
                assert any(lang.render(v) == lang.render(a.default) for v in a.among), where
            else:
                assert a.low is not None and a.high is not None, where
                assert a.low.value <= a.default.value <= a.high.value, where
                assert a.low.value < a.high.value, f"{where}: a range of one value"
            values = [lang.render(v) for v in a.values()]
            assert len(values) >= 2 and len(set(values)) == len(values), where
    assert n >= 40


def test_a_source_without_a_citation_is_caught() -> None:
    doc = lang.parse(GOOD.replace('source="BUFSIZ to st_blksize"', 'source="a guess"'), "x")
    write, flavour = sweep.assumptions(doc)
    mine = {"write": write, "flavour": flavour}
    assert not _cites(write, mine) and not _cites(flavour, mine)
    doc = lang.parse(GOOD.replace('"the paper names no OS"', '"as write: the same"'), "x")
    write, flavour = sweep.assumptions(doc)
    assert not _cites(flavour, {"write": write, "flavour": flavour})
    text = GOOD.replace('"BUFSIZ to st_blksize"', '"BUFSIZ (stdio.h) to st_blksize"')
    write, flavour = sweep.assumptions(
        lang.parse(text.replace('"the paper names no OS"', '"as write: x"'), "x")
    )
    assert _cites(flavour, {"write": write, "flavour": flavour})


@pytest.mark.parametrize("page", ["lan-buffers", "wan-mismatch", "wan-contention"])
def test_each_study_page_lists_its_assumptions(page) -> None:
    """The study pages' assumption tables are what the experiment files say."""
    text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    assert envelope.assumption_table(page) in text


def test_every_declaration_with_assumptions_is_in_the_envelope() -> None:
    parts = {name for name, _ in envelope.all_axes()}
    assert {"lan-buffers ftp", "wan-mismatch cases", "wan-mismatch case3",
            "wan-contention offered-load", "wan-contention five-pairs",
            "wan-contention ftp", "wan-contention credits",
            "wan-contention burst"} <= parts  # fmt: skip
    # A calculation has no experiment file, so no assumption.
    calcs = [c for *_, c in fidelity.declarations() if c.what.startswith("calc")]
    assert calcs and all(c.compute is not None for c in calcs)
