"""``plot``: one figure of a kind (``kinds.KINDS``) from a stored result (never by
re-running): the checks every kind shares (its options, request/response traffic),
then the kind's own fit check and draw function, and the file written."""

from __future__ import annotations

from pathlib import Path

from cellbench.plots.figure import PlotError, new_figure, save
from cellbench.plots.kinds import BY_NAME, NAMES, Request
from cellbench.plots.pick import drawn_columns, one_run, result_rows, select


def plot(
    result,
    kind: str,
    output: str | Path,
    *,
    run: int | None = None,
    connection: int | None = None,
    port: int | None = None,
    where: list[str] | tuple[str, ...] = (),
    by: str | None = None,
    compare: str | None = None,
) -> Path:
    """Draw ``kind`` from ``result`` into ``output`` (.png, .svg or .pdf).

    ``where``: ``KEY=VALUE`` picks (a sweep parameter or a row column); ``by``: a line
    or panel per value of one; ``compare="published"``: the study's published values
    (buffer-grid on lan-buffers; window on wan-window draws them always)."""
    k = BY_NAME.get(kind)
    if k is None:
        raise PlotError(f"plot kind {kind!r}: expected one of {', '.join(NAMES)}")
    if k.source == "capture":
        raise PlotError(
            f"{kind} draws a cell tester's capture: plots.capture.iat(cells.read(FILE))"
        )
    if compare not in (None, "published"):
        raise PlotError(f"--compare {compare}: expected published")
    if compare and not k.compare:
        raise PlotError(
            f"--compare published: {kind} has no published grid to compare "
            "(buffer-grid on lan-buffers; window on wan-window draws its published points itself)"
        )
    if by and k.one:
        raise PlotError(f"--by: {kind} draws one {k.one}; pick the others' values with --where")
    fig = new_figure()
    params = result.params
    named = [item.partition("=")[0].strip() for item in where] + ([by] if by else [])
    result = result.narrowed(drawn_columns(result, named))
    df, picked = select(result_rows(result), list(where), params)
    if k.source != "run" and "traffic" in df and df["traffic"].eq("rr").any():
        raise PlotError(
            f"{kind} draws throughput; the result's connections are request/response "
            "(traffic rr), measured in transactions per second (cellbench show: "
            "mean_trans_per_s)"
        )
    request = Request(df, picked, params, by, compare, run, connection, port)
    if k.source == "run":
        request.run = one_run(result, df, run, list(where))
        request.stored = getattr(result, k.stored)()
        if request.stored.empty:
            raise PlotError(k.missing)
    elif k.fit is not None:
        request.rows = k.function("fit")(df, params, by)
    k.function("draw")(result, fig, request)
    return save(fig, output)
