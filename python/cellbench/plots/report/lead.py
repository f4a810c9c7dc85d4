"""What a reader of a buffer sweep came for, first: lan-buffers' send × receive
buffer grid as a table, simulated beside published, each cell coloured by its error."""

from __future__ import annotations

import math

from cellbench.plots.report.tables import varying_params

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
    from cellbench.plots.buffers import grid_means
    from cellbench.plots.figure import PlotError, size_label
    from cellbench.plots.published import published_grid

    rows = result.rows_view()
    if rows.empty or not {"sndbuf", "rcvbuf"} <= set(rows.columns):
        return ""
    varying, _ = varying_params(result, rows)
    # The sweep's parameters (any names) must be the buffers: one point per cell.
    if not varying or (rows.groupby(["sndbuf", "rcvbuf"])[varying].nunique() > 1).any(axis=None):
        return ""
    try:
        snd, rcv, z, lock, _, runs = grid_means(rows)
        pub = published_grid(result, snd, rcv)
    except PlotError:
        return ""
    head = "".join(f"<th>{size_label(r)}</th>" for r in rcv)
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
        body.append(f"<tr><th>{size_label(s)}</th>{''.join(cells)}</tr>")
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
