"""The study pages' results tables are the commands' (scripts/docs_tables.py): every
generated block in docs/ is what its command prints today, every block has a
renderer and every renderer a block. Each study's command runs once for all its
pages' blocks (about half a minute on the 2-core machine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def docs_tables():
    path = ROOT / "scripts" / "docs_tables.py"
    spec = importlib.util.spec_from_file_location("docs_tables", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["docs_tables"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_block_has_a_renderer_and_every_renderer_a_block(docs_tables):
    found = {name: page for page, text in docs_tables.pages().items()
             for name in docs_tables.blocks_in(text)}  # fmt: skip
    assert found == {name: page for name, (page, _) in docs_tables.BLOCKS.items()}
    # A marker the pattern does not pair (a misspelt end) would hide a stale table.
    for page in docs_tables.pages():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert text.count("<!-- generated: ") == text.count("<!-- end generated: "), page


def test_rewrite_replaces_only_the_blocks(docs_tables):
    text = (
        "before\n<!-- generated: x (scripts/docs_tables.py; do not edit by hand) -->\n"
        "old table\n<!-- end generated: x -->\nafter\n"
    )
    new = docs_tables.rewrite(text, lambda name: f"new {name}")
    assert new == text.replace("old table", "new x")
    assert docs_tables.rewrite(new, lambda name: f"new {name}") == new


def test_every_generated_table_is_what_its_command_prints(docs_tables):
    stale = [
        page for page, text in docs_tables.pages().items() if docs_tables.rewrite(text) != text
    ]
    assert not stale, (
        "docs pages whose tables differ from the commands (run "
        f"`python3 scripts/docs_tables.py` and read the diff): {', '.join(stale)}"
    )


def test_a_doctored_table_is_stale(docs_tables):
    page, text = next(iter(docs_tables.pages().items()))
    name = docs_tables.blocks_in(text)[0]
    head = "(scripts/docs_tables.py; do not edit by hand) -->\n"
    at = text.index(f"<!-- generated: {name} {head}") + len(f"<!-- generated: {name} {head}")
    doctored = text[:at] + "| a row by hand |\n" + text[at:]
    assert docs_tables.rewrite(doctored) == text
