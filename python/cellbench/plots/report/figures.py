"""The figures on the page: each kind ``cellbench plot`` draws that fits the result,
tried as the command draws it, then per value of a parameter; inline SVG whose ids
are made unique per figure, since every figure shares one page."""

from __future__ import annotations

import re
from pathlib import Path

from cellbench import scratch
from cellbench.plots.kinds import KINDS

#: The sweep figure kinds a report tries, in the table's order (each refuses a result it
#: would misdraw); measurements is not among them: it needs its cells picked by hand.
SWEEP_KINDS = tuple(k for k in KINDS if k.source == "sweep" and k.on_page)


def _svg(result, kind: str, **options) -> str:
    """One figure as inline SVG, drawn by ``draw.plot`` as ``cellbench plot`` draws it.
    Text stays text (svg.fonttype none); ids are made unique per figure, since every
    figure's clip paths share one page."""
    import matplotlib

    from cellbench.plots import draw

    with scratch.directory("cellbench-report-") as tmp:
        out = Path(tmp) / "figure.svg"
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cellbench"}):
            draw.plot(result, kind, out, **options)
        svg = out.read_text()
    return svg[svg.index("<svg") :]


def unique_ids(svg: str, prefix: str) -> str:
    """``svg`` with every id (and every reference to one) prefixed, scaled to the page."""
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
    from cellbench.plots.buffers import equal_buffers
    from cellbench.plots.figure import PlotError

    out = []
    rows = result.rows_view()
    if rows.empty:
        return out
    params = [p for p in result.params if p in rows and rows[p].nunique(dropna=True) > 1]
    for k in SWEEP_KINDS:
        kind = k.name
        if kind == "buffer-surface" and not equal_buffers(rows):
            continue  # over send x receive buffer it is the buffer grid again
        tries: list[dict] = [{}]
        if k.compare and result.meta.get("testbed", {}).get("name") == "lan-buffers":
            tries.insert(0, {"compare": "published"})
        if k.by == "line":
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
            except PlotError:
                continue
            out.append((kind, f"cellbench plot --kind {kind}{_options_text(options)}", svg))
            break
    for kind in (k for k in KINDS if k.source == "run"):
        stored = getattr(result, kind.stored)()
        if stored.empty:
            continue
        run = int(stored["run"].iloc[0])
        try:
            svg = _svg(result, kind.name, run=run)
        except PlotError:
            continue
        runs = stored["run"].nunique()
        more = f" (of {runs} runs stored; --run N draws another)" if runs > 1 else ""
        out.append((kind.name, f"cellbench plot --kind {kind.name} --run {run}{more}", svg))
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
