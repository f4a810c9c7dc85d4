"""The page itself: results grouped by experiment, one group's results side by side
(named apart, compared per point where they sweep the same parameters), each with its
lead grid, metadata, summary, tables and figures."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from cellbench.plots.pick import drawn_columns
from cellbench.plots.report.figures import figures, unique_ids
from cellbench.plots.report.highlight import experiment_file
from cellbench.plots.report.lead import lead_grid
from cellbench.plots.report.style import SCRIPT, STYLE, TEMPLATE
from cellbench.plots.report.tables import (
    TABLE_COLUMNS,
    contention_tables,
    summary_frame,
    table,
    varying_params,
)

if TYPE_CHECKING:
    from cellbench.experiment.results import Result


def engine(result) -> str:
    return result.meta.get("engine") or "sim"


def _experiment_name(result) -> str:
    """What groups results side by side: the experiment file's name (a study's
    emulated file, NAME-emu, with the study's own)."""
    m = result.meta
    exp = m.get("experiment") if isinstance(m.get("experiment"), dict) else {}
    stem = Path(str(exp.get("file") or m.get("study") or "result")).stem
    return stem[: -len("-emu")] if stem.endswith("-emu") else stem


def labels(results: list) -> list[str]:
    """Each result's name on the page, distinct from every other's: its engine and its
    ``label`` (a study's part) or path, by as many of the path's last folders as tell
    it from the others (``A/base``, ``B/base``; the last folder alone made two columns
    of one name), else numbered."""
    where = []
    for r in results:
        if r.label:
            where.append([r.label])
        elif r.path is not None:
            where.append(list(Path(r.path).absolute().parts[1:]))
        else:
            where.append([_experiment_name(r)])
    depth = [1] * len(results)

    def name(i: int) -> str:
        return f"{engine(results[i])}: {'/'.join(where[i][-depth[i] :])}"

    while True:
        seen: dict[str, list[int]] = {}
        for i in range(len(results)):
            seen.setdefault(name(i), []).append(i)
        longer = [
            i
            for same in seen.values()
            if len({tuple(where[j]) for j in same}) > 1  # (one place twice: numbered)
            for i in same
            if depth[i] < len(where[i])
        ]
        if not longer:
            break
        for i in longer:
            depth[i] += 1
    names = [name(i) for i in range(len(results))]
    out, counts = [], dict.fromkeys(names, 0)
    for n in names:
        if names.count(n) > 1:  # the same directory twice, or results without one
            counts[n] += 1
            n = f"{n} #{counts[n]}"
        out.append(n)
    return out


def _meta_list(result) -> str:
    m = result.meta
    tb = m.get("testbed", {}) or {}
    exp = m.get("experiment") if isinstance(m.get("experiment"), dict) else {}
    items = [
        ("engine", engine(result)),
        ("result", str(result.path) if result.path else None),
        ("experiment", exp.get("file") or m.get("study")),
        ("testbed", f"{tb.get('name', '?')}: {tb.get('description', '')}".rstrip(": ")),
        ("seed", m.get("seed")),
        ("replications", m.get("replications")),
        ("runs", f"{len(result.rows_view()['run'].unique())} of {m.get('runs_total')}"
                 + ("" if m.get("complete", True) else " (incomplete: --resume finishes it)")),
        ("--set", ", ".join(map(str, m.get("set") or [])) or None),
        ("cellbench", m.get("cellbench_version")),
    ]  # fmt: skip
    out = "".join(
        f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>"
        for k, v in items
        if v not in (None, "")
    )
    notes = "".join(f"<li>{html.escape(str(n))}</li>" for n in m.get("notes") or [])
    return f'<dl class="meta">{out}</dl>' + (
        f'<p class="note">notes:</p><ul class="notes">{notes}</ul>' if notes else ""
    )


def _result_section(result, label: str, fig_prefix: str) -> str:
    show, fixed = summary_frame(result)
    fixed_text = ", ".join(f"{k} = {v}" for k, v in fixed.items())
    parts = [f'<section class="result" data-engine="{html.escape(engine(result))}">']
    parts.append(f"<h3>{html.escape(label)}</h3>")
    parts.append(lead_grid(result))
    parts.append(_meta_list(result))
    testbed = result.meta.get("testbed")
    if isinstance(testbed, dict):
        # The preset as the run resolved it: hosts, links, switch, every value in force.
        parts.append(
            "<details><summary>testbed as run</summary>"
            f'<pre class="testbed">{html.escape(json.dumps(testbed, indent=1))}</pre></details>'
        )
    if show.empty:
        parts.append('<p class="note">no runs stored yet</p>')
    else:
        parts.append(
            table(
                show,
                "per sweep point and connection: throughput over the replications "
                "(Mb/s = 10^6 bit/s; mbit_ttcp in ttcp's Mbit/s, 2^20 bit/s), what bound it "
                "(most runs' limit) and the evidence of the first such run; click a "
                "header to sort",
                "summary",
            )
        )
        if fixed_text:
            parts.append(f'<p class="note">fixed over the result: {html.escape(fixed_text)}</p>')
        parts += contention_tables(result)
    for k, (kind, caption, svg) in enumerate(figures(result)):
        parts.append(
            f'<figure data-kind="{kind}">{unique_ids(svg, f"{fig_prefix}f{k}-")}'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    parts.append("</section>")
    return "".join(parts)


def _comparison(results: list, labels: list[str]) -> str:
    """Results of one experiment from several engines: their means and limits per
    point and connection, side by side (the points and tests they share)."""
    frames = []
    for r, label in zip(results, labels):
        s = r.summary()
        if s.empty:
            continue
        frames.append((r, label, s))
    if len(frames) < 2:
        return ""
    swept = [set(varying_params(r, r.rows_view())[0]) for r, _, _ in frames]
    if any(s != swept[0] for s in swept):
        # A mean over one result's points beside another's single point would mislead.
        return (
            '<p class="note">the results sweep different parameters ('
            + html.escape("; ".join(", ".join(sorted(s)) or "none" for s in swept))
            + "): compare their tables below</p>"
        )
    keys = [*sorted(swept[0]), "test"]
    merged = None
    for _, label, s in frames:
        part = s.groupby(keys, dropna=False, sort=False).agg(
            mean_mbps=("mean_mbps", "mean"), limited_by=("limited_by", "first")
        )
        part.columns = [f"{label} Mb/s", f"{label} limited_by"]
        merged = part if merged is None else merged.join(part, how="outer")
    merged = merged.reset_index()
    return table(
        merged,
        "the same experiment on each engine: mean throughput (Mb/s, 10^6 bit/s) and what "
        "bound it, per point and test",
        "compare",
    )


def page(results: list[Result], title: str | None = None) -> str:
    """The HTML page of ``results`` (grouped by experiment; one group's results side by side)."""
    from cellbench import __version__

    # Only the columns the page reads: a stored result of 10^5 runs is ~1.2 KB a run
    # in all its columns, some 0.2 KB in these.
    results = [r.narrowed(drawn_columns(r, TABLE_COLUMNS)) for r in results]
    groups: dict[str, list[int]] = {}
    named = labels(results)
    for i, r in enumerate(results):
        groups.setdefault(_experiment_name(r), []).append(i)
    title = title or "cellbench report: " + ", ".join(groups)
    body = []
    for g, (name, members) in enumerate(groups.items()):
        rs = [results[i] for i in members]
        group_labels = [named[i] for i in members]
        engines = ", ".join(dict.fromkeys(engine(r) for r in rs))
        body.append(f'<section class="experiment"><h2>{html.escape(name)}</h2>')
        body.append(f'<p class="note">{len(rs)} result(s); engines: {html.escape(engines)}</p>')
        texts = dict.fromkeys(_text(r) for r in rs if _text(r))
        for text in texts:
            body.append(experiment_file(text))
        body.append(_comparison(rs, group_labels))
        body.append('<div class="side-by-side">')
        for i in members:
            body.append(_result_section(results[i], named[i], f"g{g}r{i}"))
        body.append("</div></section>")
    return TEMPLATE.format(
        title=html.escape(title),
        version=html.escape(__version__),
        style=STYLE,
        script=SCRIPT,
        body="".join(body),
    )


def _text(result) -> str | None:
    exp = result.meta.get("experiment")
    return exp.get("text") if isinstance(exp, dict) else None


def write(results: list[Result], output: str | Path, title: str | None = None) -> Path:
    """Write the page of ``results`` to ``output``."""
    output = Path(output)
    output.write_text(page(results, title), encoding="utf-8")
    return output
