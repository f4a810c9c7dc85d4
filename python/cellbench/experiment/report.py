"""Stored results as one self-contained HTML page (``cellbench report``).

The page opens from disk in any browser, with no server and nothing fetched: the
experiment file as it ran (highlighted by the language's own lexer), each result's
summary per sweep point and connection (mean, min and max over the replications,
what bound it and the evidence in one sentence; the published value beside it where
the repository carries one, ``data.published``), the figures ``cellbench plot``
draws for it (the study's, with the published comparison, and one run's
time-sequence, cwnd and queue figures where stored), and the results of one
experiment from different engines (sim, emu, real) side by side.

Figures are matplotlib's SVG, inline: vectors stay sharp at any zoom, their text
stays text (searchable, and the browser test reads it), and matplotlib is already
what ``cellbench plot`` draws with, so a figure on the page is the figure the
command writes. An interactive plotting library would need its bundle (megabytes of
JavaScript) in every page to work offline. Tables sort on a click of their header
(a few lines of inline script). A result is aggregated (one row per sweep point and
connection), never dumped row by row, so the 5000-run lan-buffers result is a
100-row table and two figures.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from cellbench import scratch
from cellbench.experiment import plotkinds

if TYPE_CHECKING:
    import pandas as pd

    from cellbench.experiment.results import Result

#: The sweep figure kinds a report tries, in plot's order (each refuses a result it would
#: misdraw): all but the one-run and capture kinds, and measurements, which needs --where.
SWEEP_KINDS = tuple(
    k
    for k in plotkinds.KINDS
    if k not in plotkinds.ONE_RUN + plotkinds.CAPTURE and k != "measurements"
)
#: The one-run figure kinds a report draws, and the stored table each needs (Result's).
ONE_RUN_TABLES = {
    "time-sequence": "traces",
    "cwnd": "cwnd_series",
    "queue": "queue_series",
    "acr": "acr_series",
}
#: A summary table longer than this is cut (with a line saying so): a sweep of more
#: points than a reader scrolls through is read from its figures and `cellbench show`.
MAX_TABLE_ROWS = 2000


# --- the experiment file, highlighted ---------------------------------------------------------


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


# --- figures ----------------------------------------------------------------------------------


def _svg(result, kind: str, **options) -> str:
    """One figure as inline SVG, drawn by ``plots.plot`` as ``cellbench plot`` draws it.
    Text stays text (svg.fonttype none); ids are made unique per figure, since every
    figure's clip paths share one page."""
    import matplotlib

    from cellbench.experiment import plots

    with scratch.directory("cellbench-report-") as tmp:
        out = Path(tmp) / "figure.svg"
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cellbench"}):
            plots.plot(result, kind, out, **options)
        svg = out.read_text()
    return svg[svg.index("<svg") :]


def _unique_ids(svg: str, prefix: str) -> str:
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    # The figure scales with the page (its viewBox keeps the proportions).
    return re.sub(
        r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="figure"', svg, count=1
    )


def figures(result) -> list[tuple[str, str, str]]:
    """The figures a result has: (kind, what it shows, SVG). Each sweep kind is tried
    as ``cellbench plot`` would draw it (with the published comparison where the
    repository has one), then per value of a parameter (``--by``) when another
    parameter varies besides; a kind that fits neither way is left out. The one-run
    kinds draw the first run that stored what they need."""
    from cellbench.experiment import plots

    out = []
    rows = result.rows_view()
    if rows.empty:
        return out
    params = [p for p in result.params if p in rows and rows[p].nunique(dropna=True) > 1]
    for kind in SWEEP_KINDS:
        if kind == "buffer-surface" and not plots._equal_buffers(rows):
            continue  # over send x receive buffer it is the buffer grid again
        tries: list[dict] = [{}]
        if kind == "buffer-grid" and result.meta.get("testbed", {}).get("name") == "lan-buffers":
            tries.insert(0, {"compare": "published"})
        if kind in ("window", "message-size", "offered-load", "segment-size"):
            tries += [{"by": p} for p in params]
            # Two parameters besides the axis (europe-vp: spacing, window, write size):
            # a line per value of one at the other's largest value, which the caption says.
            tries += [
                {"by": p, "where": [f"{q}={_largest(rows[q])}"]}
                for p in params
                for q in params
                if q != p
            ]
        for options in tries:
            try:
                svg = _svg(result, kind, **options)
            except plots.PlotError:
                continue
            out.append((kind, f"cellbench plot --kind {kind}{_options_text(options)}", svg))
            break
    for kind, table in ONE_RUN_TABLES.items():
        stored = getattr(result, table)()
        if stored.empty:
            continue
        run = int(stored["run"].iloc[0])
        try:
            svg = _svg(result, kind, run=run)
        except plots.PlotError:
            continue
        runs = stored["run"].nunique()
        more = f" (of {runs} runs stored; --run N draws another)" if runs > 1 else ""
        out.append((kind, f"cellbench plot --kind {kind} --run {run}{more}", svg))
    return out


def _options_text(options: dict) -> str:
    return "".join(
        f" --{k} {w}" for k, v in options.items() for w in (v if isinstance(v, list) else [v])
    )


def _largest(column) -> str:
    """A parameter's largest value (numbers before words), as --where takes it."""
    values = [v.item() if hasattr(v, "item") else v for v in column.dropna().unique()]
    value = sorted(values, key=lambda v: (isinstance(v, str), v if isinstance(v, str) else
                                          float(v)))[-1]  # fmt: skip
    return str(int(value) if isinstance(value, float) and value.is_integer() else value)


# --- tables -----------------------------------------------------------------------------------


def _cell(value) -> tuple[str, str]:
    """(text, sort key) of one table cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "", ""
    if isinstance(value, bool):
        return ("yes" if value else "no"), str(int(value))
    if isinstance(value, float):
        text = f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
        return text, repr(value)
    if isinstance(value, int):
        return str(value), str(value)
    return str(value), ""


def table(df: pd.DataFrame, caption: str = "", cls: str = "") -> str:
    """A DataFrame as a sortable HTML table (a click on a header sorts by it)."""
    import numpy as np

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    shown = df.head(MAX_TABLE_ROWS)
    for row in shown.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, np.generic):
                v = v.item()
            text, key = _cell(v)
            attr = f' data-sort="{html.escape(key)}"' if key else ""
            num = ' class="num"' if key and not isinstance(v, bool) else ""
            if not key and len(text) > 40:
                num = ' class="prose"'
            cells.append(f"<td{attr}{num}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cut = (
        f'<p class="note">the first {MAX_TABLE_ROWS} of {len(df)} rows; cellbench show '
        "prints them all</p>"
        if len(df) > MAX_TABLE_ROWS
        else ""
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="sortable {cls}">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{cut}"
    )


def _varying(result, df: pd.DataFrame) -> tuple[list[str], dict]:
    """The parameters that vary over the result, and the fixed ones with their value."""
    varying, fixed = [], {}
    for p in result.params:
        if p not in df:
            continue
        values = df[p].dropna().unique()
        if len(values) > 1:
            varying.append(p)
        elif len(values) == 1:
            fixed[p] = values[0]
    return varying, fixed


def _per_summary_row(result, summary: pd.DataFrame, rows: pd.DataFrame, **agg) -> pd.DataFrame:
    """Row columns aggregated per summary row (``agg`` as pandas' named aggregation),
    in the summary's order: its keys are those ``Result.summary`` groups by."""
    keys = [k for k in [*result.params, "connection", "test", "transmitter", "receiver"]
            if k in summary]  # fmt: skip
    per = rows.groupby(keys, dropna=False, sort=False).agg(**agg)
    return per.reindex(summary.set_index(keys).index)


def published_column(result, summary: pd.DataFrame, rows: pd.DataFrame):
    """(column name, the published value of each summary row) where the repository
    carries the study's table: lan-buffers' grid (ttcp's Mbit/s) by send and receive
    buffer, wan-window's (Mb/s) by window; None for any other testbed."""
    import pandas as pd

    from cellbench.data.published import lan_buffer_table, wan_window_table

    name = result.meta.get("testbed", {}).get("name")
    if name not in ("lan-buffers", "wan-window") or summary.empty:
        return None
    bufs = _per_summary_row(result, summary, rows, snd=("sndbuf", "first"), rcv=("rcvbuf", "first"))
    pairs = [(int(s), int(r)) if pd.notna(s) and pd.notna(r) else None
             for s, r in zip(bufs["snd"], bufs["rcv"])]  # fmt: skip
    if name == "lan-buffers":
        table_ = lan_buffer_table()
        col, values = "published Mbit/s (2^20)", [p and table_.get(p) for p in pairs]
    else:
        table_ = {w: bps / 1e6 for w, bps in wan_window_table().items()}
        col, values = "published Mb/s", [p and table_.get(min(p)) for p in pairs]
    if not any(v is not None for v in values):
        return None
    return col, values


def summary_frame(result) -> tuple[pd.DataFrame, dict]:
    """The result's summary as the page shows it: per sweep point and connection,
    the varying parameters, the throughput over the replications, the published
    value and the error against it where there is one, what bound it and the
    evidence; and the parameters fixed over the whole result."""
    summary = result.summary()
    rows = result.rows_view()
    varying, fixed = _varying(result, rows)
    if summary.empty:
        return summary, fixed
    show = summary[[*varying]].copy()
    ends = summary["transmitter"] + " → " + summary["receiver"]
    if summary["test"].nunique(dropna=False) > 1:
        show["test"] = summary["test"]
        show["transmitter → receiver"] = ends
    else:
        # One connection: said once, under the table, with the fixed parameters.
        fixed = {"connection": f"{summary['test'].iloc[0]} ({ends.iloc[0]})", **fixed}
    for col in ("runs", "truncated", "mean_mbps", "min_mbps", "max_mbps", "mean_mbit_ttcp",
                "mean_trans_per_s", "retransmits", "lockstep"):  # fmt: skip
        if col in summary:
            show[col] = summary[col]
    pub = published_column(result, summary, rows)
    if pub is not None:
        col, values = pub
        show[col] = values
        ours = summary["mean_mbit_ttcp"] if "Mbit" in col else summary["mean_mbps"]
        show["error %"] = [
            100 * (o - p) / p if p else None for o, p in zip(ours, values)
        ]  # fmt: skip
    engine_columns(result, rows, summary, show)
    show["limited_by"] = summary["limited_by"]
    show["limit_evidence"] = summary["limit_evidence"]
    return show, fixed


def engine_columns(result, rows: pd.DataFrame, summary: pd.DataFrame, show) -> None:
    """What an emulated or real result records besides: the emulator's worst p99
    lateness per point and whether every run kept real time; the real engine's
    notes (the kernel's refusals, a daemon's rate cap)."""
    if rows["lateness_p99_us"].notna().any():
        per = _per_summary_row(
            result, summary, rows,
            p99=("lateness_p99_us", "max"),
            real=("real_time", lambda s: bool(s.fillna(False).all())),
        )  # fmt: skip
        show["worst p99 lateness µs"] = per["p99"].to_numpy()
        show["real time"] = per["real"].to_numpy()
    if rows["notes"].notna().any():
        per = _per_summary_row(
            result, summary, rows, notes=("notes", lambda s: "; ".join(dict.fromkeys(s.dropna())))
        )
        show["notes"] = per["notes"].to_numpy()


# --- the lead: simulated beside published --------------------------------------------------

#: An error this large (percent of the published value, either way) takes the grid's
#: strongest colour: the study's own spread between cells it calls alike is ~10-20%
#: (docs/lan-buffers.md), so 25% is past any cell the model claims to match.
ERROR_FULL_COLOUR_PCT = 25.0


def _error_colour(err: float) -> str:
    """A cell's background: white at 0, red above the published value, blue below,
    full at ERROR_FULL_COLOUR_PCT."""
    t = min(abs(err) / ERROR_FULL_COLOUR_PCT, 1.0)
    hue = 0 if err > 0 else 215
    return f"hsl({hue},75%,{round(97 - 30 * t)}%)"


def lead_grid(result) -> str:
    """What a reader of a buffer sweep came for, first: the send × receive buffer grid
    as a table, each cell the simulated mean (ttcp's Mbit/s) over the published one
    and their error, its background coloured by the error and lock-step cells marked.
    Empty for a result that is not lan-buffers' grid (or sweeps more than the buffers)."""
    from cellbench.data.published import LAN_ANOMALOUS
    from cellbench.experiment import plots

    rows = result.rows_view()
    if rows.empty or not {"sndbuf", "rcvbuf"} <= set(rows.columns):
        return ""
    varying, _ = _varying(result, rows)
    # The sweep's parameters (any names) must be the buffers: one point per cell.
    if not varying or (rows.groupby(["sndbuf", "rcvbuf"])[varying].nunique() > 1).any(axis=None):
        return ""
    try:
        snd, rcv, z, lock, _, runs = plots._grid(rows)
        pub = plots._published_grid(result, snd, rcv)
    except plots.PlotError:
        return ""
    head = "".join(f"<th>{plots._size(r)}</th>" for r in rcv)
    body = []
    for i, s in enumerate(snd):
        cells = []
        for j, r in enumerate(rcv):
            if not math.isfinite(z[i, j]):
                cells.append("<td></td>")
                continue
            parts = [f'<b class="sim">{z[i, j]:.1f}</b>']
            style, err_attr = "", ""
            if math.isfinite(pub[i, j]):
                err = 100 * (z[i, j] - pub[i, j]) / pub[i, j]
                odd = "†" if (int(s), int(r)) in LAN_ANOMALOUS else ""
                parts.append(f'<span class="pub">{pub[i, j]:.1f}{odd}</span>')
                parts.append(f'<span class="err">{err:+.0f}%</span>')
                style = f' style="background:{_error_colour(err)}"'
                err_attr = f' data-error="{err:.2f}"'
            if lock[i, j]:
                parts.append('<span class="lock">lock-step</span>')
            cls = "cell lockstep" if lock[i, j] else "cell"
            cells.append(f'<td class="{cls}"{err_attr}{style}>{"".join(parts)}</td>')
        body.append(f"<tr><th>{plots._size(s)}</th>{''.join(cells)}</tr>")
    spread = f"mean of {runs} replications" if runs > 1 else "one run per cell"
    return (
        '<table class="lead-grid"><caption>Simulated beside published: ttcp throughput '
        f"(Mbit/s, 2^20 bit/s; {spread}) per sender SO_SNDBUF (rows) and receiver "
        "SO_RCVBUF (columns), K = 1024 bytes. In each cell: <b>simulated</b>, the "
        "published mean under it († a cell the study marks anomalous), the error; red "
        "above the published value, blue below, full colour at "
        f"±{ERROR_FULL_COLOUR_PCT:.0f}%; a dashed border marks a Nagle/delayed-ACK "
        "lock-step (most replications).</caption>"
        f'<thead><tr><th class="corner">SNDBUF \\ RCVBUF</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


# --- the page ---------------------------------------------------------------------------------


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
        parts += _contention_tables(result)
    for k, (kind, caption, svg) in enumerate(figures(result)):
        parts.append(
            f'<figure data-kind="{kind}">{_unique_ids(svg, f"{fig_prefix}f{k}-")}'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    parts.append("</section>")
    return "".join(parts)


def _contention_tables(result) -> list[str]:
    """Where connections contended (a timeout, a starved connection, a port that lost
    cells): the instruments of ``experiment/results/contention.py`` as tables."""
    from cellbench.experiment.results import contention

    out = []
    c = contention.connections(result)
    if c is not None:
        out.append(
            table(
                c,
                "contention per connection: goodput Mb/s, retransmit timeouts, "
                "longest backoff (2^k), s waiting on retransmit timers; per point "
                "Jain's fairness index and the starved connections",
                "contention",
            )
        )
    p = contention.ports(result)
    if p is not None:
        out.append(
            table(
                p,
                "ports that lost cells: cells carried, of PDUs delivered and "
                "not (wasted), idle s while a connection through it ran, cells "
                "lost by cause",
                "ports",
            )
        )
    return out


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
    swept = [set(_varying(r, r.rows_view())[0]) for r, _, _ in frames]
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


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;
 max-width:110em;padding:0 1.5em 3em;color:#1d1d1f;background:#fff}
h1{font-size:1.5em;margin:.8em 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #ccd;
 margin-top:2em}h3{font-size:1.1em;margin:.4em 0}
.note{color:#555;font-size:.92em;margin:.3em 0}
.side-by-side{display:grid;grid-template-columns:repeat(auto-fit,minmax(38em,1fr));gap:1.5em}
.result{min-width:0}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;font-size:.92em;
 margin:.4em 0}
dl.meta dt{color:#555}dl.meta dd{margin:0;overflow-wrap:anywhere}
pre.testbed{font:11.5px/1.3 ui-monospace,monospace;max-height:20em;overflow:auto}
pre.netspec{background:#f6f7f9;border:1px solid #e1e3e8;padding:.8em;overflow:auto;
 font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:20em}
.netspec .k{color:#7c2d9e;font-weight:600}.netspec .a{color:#0b5cad}.netspec .n{color:#b35c00}
.netspec .s{color:#1a7f37}.netspec .v{color:#a3114f}.netspec .c{color:#6e7781;font-style:italic}
.netspec .p{color:#57606a}
table{border-collapse:collapse;font-size:12.5px;margin:.6em 0;display:block;overflow:auto;
 max-height:40em;max-width:100%}
table.summary{display:table;width:100%;max-height:none}
table.summary th{white-space:normal}
table.lead-grid{display:table;width:100%;font-size:13px;max-height:none;table-layout:fixed}
.lead-grid caption{font-size:13px;color:#333;padding:.3em 0 .5em}
.lead-grid th{background:#eef0f4;position:static;cursor:default;text-align:center;
 vertical-align:middle}
.lead-grid th.corner{font-size:11px;white-space:normal}
.lead-grid td.cell{text-align:center;vertical-align:middle;padding:.35em .2em;line-height:1.25}
.lead-grid .sim{display:block;font-size:17px}
.lead-grid .pub{display:block;color:#444;font-size:13px}
.lead-grid .err{display:block;font-size:13px;font-variant-numeric:tabular-nums}
.lead-grid td.lockstep{outline:2px dashed #222;outline-offset:-3px}
.lead-grid .lock{display:block;font-size:11px;font-weight:600;letter-spacing:.02em}
caption{caption-side:top;text-align:left;color:#555;padding:.2em 0}
th,td{border:1px solid #dde;padding:.2em .45em;vertical-align:top}
th{background:#eef0f4;position:sticky;top:0;cursor:pointer;white-space:nowrap}
th.asc::after{content:" ▲"}th.desc::after{content:" ▼"}
td.prose{min-width:14em;white-space:normal;overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfc}
figure{margin:1em 0}svg.figure{width:100%;height:auto;max-width:60em;display:block;overflow:visible}
figure[data-kind="buffer-grid"] svg.figure{max-width:none}
figcaption{font:12px ui-monospace,monospace;color:#555}
#script-errors{color:#b00;white-space:pre-wrap}
"""

#: Sorting by a column (numbers by value, text alphabetically; again: the other way),
#: and what the browser test reads: any script error, and the page's load time.
SCRIPT = """
"use strict";
window.addEventListener("error", function (e) {
  var p = document.getElementById("script-errors");
  if (p) p.textContent += "script error: " + e.message + "\\n";
});
function sortBy(th) {
  var table = th.closest("table"), body = table.tBodies[0];
  var col = Array.prototype.indexOf.call(th.parentNode.children, th);
  var dir = th.classList.contains("asc") ? -1 : 1;
  table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
  th.classList.add(dir > 0 ? "asc" : "desc");
  var rows = Array.prototype.slice.call(body.rows);
  function key(r) {
    var c = r.cells[col], s = c.getAttribute("data-sort");
    return s === null ? c.textContent : (s === "" ? NaN : parseFloat(s));
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (typeof x === "number" && typeof y === "number") {
      if (isNaN(x)) return 1; if (isNaN(y)) return -1;
      return dir * (x - y);
    }
    return dir * String(x).localeCompare(String(y), undefined, {numeric: true});
  });
  rows.forEach(function (r) { body.appendChild(r); });
}
document.addEventListener("click", function (e) {
  var th = e.target.closest("table.sortable th");
  if (th) sortBy(th);
});
window.addEventListener("load", function () {
  document.body.setAttribute("data-load-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "1");
});
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="cellbench {version}">
<title>{title}</title><style>{style}</style></head>
<body><h1>{title}</h1>
<p class="note">Written by cellbench {version} from stored results; nothing here was re-run.
Rates in Mb/s are 10^6 bit/s; ttcp's Mbit/s are 2^20 bit/s.</p>
<p id="script-errors"></p>
{body}
<script>{script}</script></body></html>
"""
