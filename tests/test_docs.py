"""The project cites its own documents: no tracked file points at a document outside the
repository (the brief's SPEC and TESTBEDS pages, a ../shared folder), and every
`docs/design.md §N` a file cites is a section docs/design.md has.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"

#: References to documents outside the repository: "SPEC §5", "SPEC 6.3", "SPEC.md",
#: "SPEC's", "TESTBEDS.md", "../shared/...", "/work/shared". Case matters: NETSPEC and
#: `netspec` are the experiment language's name, not a reference.
OUTSIDE = re.compile(r"\bSPEC(?:\s*§|\.md|'s\b|\s+\d)|TESTBEDS|\.\./shared\b|/work/shared\b")

#: A citation of the design document's section N or N.M.
DESIGN_SECTION = re.compile(r"design\.md §(\d+(?:\.\d+)?)")


def tracked_texts() -> list[tuple[str, str]]:
    """(path, text) of every tracked text file but this test (which spells the patterns)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of tracked files")
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    out = []
    for raw in names:
        name = raw.decode()
        path = ROOT / name
        if not name or name == "tests/test_docs.py" or not path.is_file():
            continue
        try:
            out.append((name, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue  # binary (figures, captures)
    return out


def test_no_tracked_file_cites_a_document_outside_the_repository():
    hits = [
        f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for name, text in tracked_texts()
        for m in OUTSIDE.finditer(text)
    ]
    assert not hits, "cite docs/design.md (or a study's page) instead:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_is_for_and_not_the_language_name():
    for s in ("(SPEC §5)", "SPEC 6.3", "SPEC.md", "SPEC's table", "TESTBEDS.md", "../shared/x"):
        assert OUTSIDE.search(s), s
    for s in ("NETSPEC = ...", "netspec-example.netspec", "docs/design.md §5"):
        assert not OUTSIDE.search(s), s


def test_every_cited_design_section_exists():
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", DESIGN.read_text(), re.M))
    assert {"1", "5", "6.1", "6.3", "10"} <= headings
    cited = {
        (name, m.group(1)) for name, text in tracked_texts() for m in DESIGN_SECTION.finditer(text)
    }
    assert len(cited) > 20  # the code and tests cite it throughout
    missing = sorted(f"{name}: §{n}" for name, n in cited if n not in headings)
    assert not missing, "docs/design.md has no such section:\n" + "\n".join(missing)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_into_the_design_document_name_its_headings():
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", DESIGN.read_text(), re.M)}
    links = [
        (name, m.group(1))
        for name, text in tracked_texts()
        if name.endswith(".md")
        for m in re.finditer(r"design\.md#([\w\-]+)", text)
    ]
    assert links
    missing = sorted(f"{name}: #{a}" for name, a in links if a not in anchors)
    assert not missing, "no such heading in docs/design.md:\n" + "\n".join(missing)
