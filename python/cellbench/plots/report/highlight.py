"""The experiment file on the page, highlighted by the language's own lexer (up to a
size past which the spans would cost more than the page is worth)."""

from __future__ import annotations

import html


def highlight(text: str) -> str:
    """The experiment text as HTML, each token in a span of its class: block kinds
    (``k``), setting names (``a``), numbers (``n``), strings (``s``), variables
    (``v``), comments (``c``), punctuation (``p``). The language's own lexer cuts
    the tokens; a character it would refuse is kept as plain text."""
    from cellbench.experiment.lang import _NUMBER, _TOKEN, BLOCKS

    kinds = set(BLOCKS) - {""} | {k for v in BLOCKS.values() for k in v[0]}
    lexemes: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            lexemes.append(("", text[i]))
            i += 1
            continue
        lexemes.append((m.lastgroup or "", m.group()))
        i = m.end()
    significant = [j for j, (k, _) in enumerate(lexemes) if k not in ("nl", "blank", "comment")]
    cls = {}
    for n, j in enumerate(significant):
        kind, word = lexemes[j]
        nxt = lexemes[significant[n + 1]][1] if n + 1 < len(significant) else ""
        if kind == "word":
            if _NUMBER.match(word):
                cls[j] = "n"
            elif word in kinds and nxt != "=":
                cls[j] = "k"
            elif nxt == "=":
                cls[j] = "a"
        elif kind in ("string", "var", "punct"):
            cls[j] = {"string": "s", "var": "v", "punct": "p"}[kind]
    out = []
    for j, (kind, s) in enumerate(lexemes):
        c = "c" if kind == "comment" else cls.get(j)
        out.append(
            f'<span class="{c}">{html.escape(s, False)}</span>' if c else html.escape(s, False)
        )
    return "".join(out)


#: The largest experiment file the page highlights. A span per token costs ~9x the text
#: (a 1 MB generated file made a 10.7 MB page, 8 s to load in Chromium); past this the
#: file is shown as plain text, the size it is on disk.
HIGHLIGHT_MAX_CHARS = 64 * 1024


def experiment_file(text: str) -> str:
    """The experiment file as run, folded under its name (the page leads with results),
    highlighted up to HIGHLIGHT_MAX_CHARS."""
    if len(text) <= HIGHLIGHT_MAX_CHARS:
        shown, note = highlight(text), ""
    else:
        shown = html.escape(text, False)
        note = f" ({len(text) // 1024} KB: shown without highlighting)"
    return (
        f"<details><summary>experiment file{note}</summary>"
        f'<pre class="netspec">{shown}</pre></details>'
    )
