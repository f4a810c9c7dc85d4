"""Every plot kind, drawn from stored results (real simulator runs, small) into files."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cellbench
from cellbench.cli import main
from cellbench.data.published import lan_buffer_table
from cellbench.experiment.results import Result
from cellbench.plots import buffers, draw, figure, lines, trace
from cellbench.plots.figure import PlotError
from cellbench.plots.load import load_points

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def lan(tmp_path_factory):
    out = tmp_path_factory.mktemp("lan") / "r"
    cellbench.run(
        EXAMPLES / "lan-buffers.netspec",
        set=["snd=16K,32K,48K", "rcv=16K,48K", "nbytes=1M", "sender.type.blocksize=4K,8K"],
        replications=2,
        trace=True,
        out=out,
    )
    return out


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    out = tmp_path_factory.mktemp("load") / "r"
    cellbench.run(
        EXAMPLES / "offered-load.netspec", set=["period=20000,4000,1000"], replications=1, out=out
    )
    return out


def check(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 2000
    if path.suffix == ".png":
        assert data[:8] == PNG
    elif path.suffix == ".svg":
        assert (
            data.startswith(b"<?xml")
            and b"<svg" in data[:1000]
            and data.rstrip().endswith(b"</svg>")
        )
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


#: Each sweep kind on the lan fixture (send x receive x write size), with the picks
#: that make the result fit it.
FITS = {
    "buffer-grid": ["--where", "sender.type.blocksize=8K"],
    "buffer-surface": ["--where", "blocksize=4096"],
    "window": ["--where", "rcv=48K", "--by", "sender.type.blocksize"],
    "message-size": ["--where", "snd=32K", "--where", "rcv=48K"],
    "time-sequence": [],
}


@pytest.mark.parametrize(
    "kind, suffix",
    [
        ("buffer-grid", ".png"),
        ("buffer-surface", ".svg"),
        ("window", ".pdf"),
        ("message-size", ".png"),
        ("time-sequence", ".svg"),
    ],
)
def test_lan_kinds(lan, tmp_path, kind, suffix):
    out = tmp_path / f"{kind}{suffix}"
    assert main(["plot", str(lan), "--kind", kind, *FITS[kind], "-o", str(out)]) == 0
    check(out)


@pytest.mark.parametrize(
    "kind, args, message",
    [
        # Three parameters swept, two drawn: the third would be averaged in.
        ("buffer-grid", [], "buffer-grid: sender.type.blocksize (4096, 8192) varies besides"),
        ("buffer-surface", [], "sender.type.blocksize (4096, 8192) varies besides"),
        # The window is min(send, receive): a send x receive sweep mixes configurations.
        (
            "window",
            [],
            "window: snd (16384, 32768, 49152), rcv (16384, 49152), sender.type.blocksize",
        ),
        ("window", ["--by", "snd", "--where", "blocksize=8K"], "window: rcv (16384, 49152) varies"),
        ("message-size", [], "message-size: snd (16384, 32768, 49152), rcv (16384, 49152) vary"),
        ("offered-load", [], "offered-load needs constant-rate traffic"),
    ],
)
def test_each_sweep_kind_refuses_a_result_that_does_not_fit(lan, tmp_path, capsys, kind, args,
                                                            message):  # fmt: skip
    assert main(["plot", str(lan), "--kind", kind, *args, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "kind, message",
    [
        ("buffer-grid", "buffer-grid needs the send buffer (SO_SNDBUF) swept: the result has"),
        ("buffer-surface", "buffer-surface needs the send buffer (SO_SNDBUF) swept"),
        ("window", "window needs the window (min of SO_SNDBUF, SO_RCVBUF) swept"),
        ("message-size", "message-size needs the message (write) size swept"),
        ("time-sequence", "the result holds no trace: run it with --trace"),
        ("cwnd", "the result holds no cwnd series: run it with --series"),
        ("queue", "the result holds no queue series: run it with --series"),
    ],
)
def test_each_kind_refuses_the_offered_load_result(load, tmp_path, capsys, kind, message):
    assert main(["plot", str(load), "--kind", kind, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("kind", ["buffer-grid", "window", "message-size", "offered-load"])
def test_sweep_kinds_refuse_request_response_results(tmp_path, capsys, kind):
    """traffic rr measures transactions, not throughput: no throughput figure of it."""
    out = tmp_path / "rr.result"
    rr = Path(__file__).resolve().parents[1] / "examples" / "rr.netspec"
    assert main(["run", str(rr), "--set", "response=1,1K", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["plot", str(out), "--kind", kind, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "are request/response (traffic rr)" in err and err.count("\n") == 1, err


def test_offered_load_refuses_a_second_varying_parameter(load, tmp_path, capsys):
    res = cellbench.experiment.load(load)
    rows = res.to_pandas()
    # The runs twice over, as if a second parameter had been swept beside the period.
    again = rows.assign(run=rows["run"] + rows["run"].max() + 1, replication=1)
    extra = pd.concat([rows.assign(window=16384), again.assign(window=49152)])
    meta = dict(res.meta, param_columns=[*res.meta["param_columns"], ["window", "int64"]])
    fake = Result(meta, extra, res.traces(), None)
    with pytest.raises(PlotError, match=r"offered-load: window \(16384, 49152\) varies"):
        draw.plot(fake, "offered-load", tmp_path / "x.png")
    draw.plot(fake, "offered-load", tmp_path / "x.svg", by="window")
    assert "window=16384" in (tmp_path / "x.svg").read_text()


def test_where_and_by_errors(lan, tmp_path, capsys):
    png = str(tmp_path / "x.png")
    cases = [
        (["--where", "nosuch=1"], "--where nosuch: not a parameter of the result; its param"),
        (["--where", "snd=20K"], "--where snd=20K: no run has it; snd takes 16384, 32768, 49152"),
        (["--where", "snd"], "--where 'snd': expected KEY=VALUE"),
        (["--where", "snd=big"], "--where snd=big: snd is a number, not 'big'"),
        (["--by", "nosuch"], "--by nosuch: not a parameter of the result"),
    ]  # fmt: skip
    for args, message in cases:
        assert main(["plot", str(lan), "--kind", "buffer-grid", *args, "-o", png]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert main(["plot", str(lan), "--kind", "cwnd", "--by", "snd", "-o", png]) == 2
    assert "--by: cwnd draws one run" in capsys.readouterr().err


def test_buffer_grid_in_ttcp_units_beside_the_published_grid(lan, tmp_path):
    res = cellbench.experiment.load(lan)
    out = tmp_path / "g.svg"
    draw.plot(res, "buffer-grid", out, where=["blocksize=8192"], compare="published")
    svg = out.read_text()
    for text in ("2^20 bit/s", "error per cell against the published grid", "lock-step"):
        assert text in svg, text
    rows = res.to_pandas()
    cell = rows[(rows.sndbuf == 16384) & (rows.rcvbuf == 16384) & (rows.blocksize == 8192)]
    # Each cell: the simulated mean in ttcp's Mbit, the published mean under it, the error.
    sim = cell.throughput_mbit_ttcp.mean()
    pub = lan_buffer_table()[(16384, 16384)]
    assert f"{sim:.1f}" in svg and f"({pub:.1f})" in svg
    assert f"{round(100 * (sim - pub) / pub):+d}%" in svg
    # The study's anomalous cells are marked: send 16K with receive 48K is one.
    assert f"({lan_buffer_table()[(16384, 49152)]:.1f}†)" in svg
    # The figure unit is the table's: `show` prints the same mean as mean_mbit_ttcp.
    assert f"{sim:.1f}" != f"{cell.throughput_bps.mean() / 1e6:.1f}"
    with pytest.raises(PlotError, match="--compare published: cwnd has no published"):
        draw.plot(res, "cwnd", out, compare="published")


def test_grid_panels_by_a_parameter(lan, tmp_path):
    out = tmp_path / "p.svg"
    assert (
        main(["plot", str(lan), "--kind", "buffer-grid", "--by", "blocksize", "-o", str(out)]) == 0
    )
    svg = out.read_text()
    assert "blocksize=4096" in svg and "blocksize=8192" in svg


@pytest.fixture(scope="module")
def wan(tmp_path_factory):
    out = tmp_path_factory.mktemp("wan") / "r"
    assert main(["reproduce", "wan-window", "--out", str(out)]) == 0
    return out


def test_wan_window_figure_beside_the_published_points(wan, tmp_path, capsys):
    out = tmp_path / "w.svg"
    assert main(["plot", str(wan), "--kind", "window", "-o", str(out)]) == 0
    svg = out.read_text()
    for text in ("published (the study", "window / RTT (8.8 ms round trip)",
                 "oc3c TCP payload rate"):  # fmt: skip
        assert text in svg, text
    assert "propagation" not in svg  # 8.8 ms is the measured round trip
    # A power-of-two sweep: log2 axis with the sweep's windows as ticks, in K.
    for tick in ("<!-- 512 -->", "<!-- 1K -->", "<!-- 64K -->", "<!-- 128K -->"):
        assert tick in svg, tick
    # A window sweep is no grid.
    assert main(["plot", str(wan), "--kind", "buffer-grid", "-o", str(tmp_path / "g.png")]) == 2
    assert "swept apart" in capsys.readouterr().err


def test_plot_text_has_titles_units_and_legends(lan, load, tmp_path):
    grid = tmp_path / "g.svg"
    draw.plot(cellbench.experiment.load(lan), "buffer-grid", grid, where=["blocksize=8192"])
    svg = grid.read_text()
    for text in ("Mean ttcp throughput over send", "SO_SNDBUF", "SO_RCVBUF", "Mbit/s",
                 "lock-step", "blocksize=8192"):  # fmt: skip
        assert text in svg, text
    # Two replications: each cell shows their min–max under the mean.
    rows = cellbench.experiment.load(lan).to_pandas()
    cell = rows[(rows.sndbuf == 49152) & (rows.rcvbuf == 16384) & (rows.blocksize == 8192)]
    lo, hi = cell.throughput_mbit_ttcp.min(), cell.throughput_mbit_ttcp.max()
    assert len(cell) == 2 and f"{lo:.1f}–{hi:.1f}" in svg
    ol = tmp_path / "o.svg"
    assert main(["plot", str(load), "--kind", "offered-load", "-o", str(ol)]) == 0
    check(ol)
    text = ol.read_text()
    for label in (
        "offered load (Mb/s",
        "carried load (Mb/s",
        "highest carried of these loads (",
        "lossless point: largest offered load with no cell lost in any of 1 replication",
        "carried = offered",
    ):
        assert label in text, label
    ts = tmp_path / "t.svg"
    assert main(["plot", str(lan), "--kind", "time-sequence", "--run", "3", "-o", str(ts)]) == 0
    text = ts.read_text()
    assert "run 3" in text and "cumulative ACK" in text and "receive window edge" in text
    # --where picks the run a one-run figure draws.
    assert main(["plot", str(lan), "--kind", "time-sequence", "--where", "snd=48K",
                 "--where", "rcv=16K", "-o", str(ts)]) == 0  # fmt: skip
    rows = cellbench.experiment.load(lan).to_pandas()
    first = rows[(rows.snd == 49152) & (rows.rcv == 16384)].run.min()
    assert f"run {first}," in ts.read_text()


def test_trace_segments(lan):
    res = cellbench.experiment.load(lan)
    tr = res.traces()
    first = tr[(tr.run == 0) & (tr.connection == 0)]
    data, acks = trace.segments(first)
    row = res.to_pandas().iloc[0]
    # Every byte of the transfer was sent, and the last ACK covers it and the FIN.
    assert int(data.end.max() - data.start.min()) == row.bytes
    assert int(acks.ack.max() - data.start.min()) == row.bytes + 1
    assert len(data) == row.data_segments


def test_plot_errors(lan, load, tmp_path, capsys):
    assert main(["plot", str(lan), "--kind", "window", "-o", str(tmp_path / "x.gif")]) == 2
    assert "expected a .png, .svg or .pdf" in capsys.readouterr().err


def drawn(monkeypatch, result, kind: str, tmp_path: Path, **options):
    """The matplotlib Figure ``draw.plot`` drew (and wrote to a file)."""
    figures = []
    make = figure.new_figure

    def keep(*args, **kwargs):
        figures.append(make(*args, **kwargs))
        return figures[-1]

    monkeypatch.setattr(draw, "new_figure", keep)
    draw.plot(result, kind, tmp_path / f"{kind}.png", **options)
    (fig,) = figures
    return fig


def legend_texts(fig) -> list[str]:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def test_offered_load_over_a_decade_is_drawn_on_log_axes(load, monkeypatch, tmp_path):
    res = cellbench.experiment.load(load)
    fig = drawn(monkeypatch, res, "offered-load", tmp_path)
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert ax.get_xlabel() == "aggregate offered load (Mb/s, 10^6 bit/s) (log scale)"
    assert ax.get_ylabel() == "aggregate carried load (Mb/s, 10^6 bit/s) (log scale)"
    texts = legend_texts(fig)
    for start in ("lossless point: ", "highest carried of these loads (", "highest offered load: "):
        assert any(t.startswith(start) for t in texts), (start, texts)
    # Not the study's peak and full-load figures (those count full blast, not swept here).
    assert not any(t.startswith(("peak", "full load")) for t in texts), texts
    # Ticks in plain numbers (1, 2, 5 of each decade), never "6×10^0".
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    ticks = [t.get_text() for a in (ax.xaxis, ax.yaxis) for t in a.get_ticklabels(which="both")]
    shown = [t for t in ticks if t]
    assert shown and all(re.fullmatch(r"[0-9.]+", t) for t in shown), shown
    # Every point is in view: the smallest carried load and the highest offered one.
    pts = load_points(res.to_pandas())
    assert ax.get_ylim()[0] < pts["carried"].min() / 1e6
    assert ax.get_xlim()[1] >= pts["offered"].max() / 1e6


def test_buffer_surface_is_a_heat_map_with_its_maximum_and_the_published_one(
    lan, monkeypatch, tmp_path
):
    res = cellbench.experiment.load(lan)
    fig = drawn(monkeypatch, res, "buffer-surface", tmp_path, where=["blocksize=8192"])
    ax = fig.axes[0]
    assert ax.name == "rectilinear" and ax.images  # a heat map, not a 3-D surface
    rows = res.to_pandas()
    rows = rows[rows.blocksize == 8192]
    means = rows.groupby(["sndbuf", "rcvbuf"]).throughput_mbit_ttcp.mean()
    cells = {t.get_text().rstrip("*") for t in ax.texts}
    assert {f"{m:.1f}" for m in means} <= cells
    pub = lan_buffer_table()
    best_pub = max(pub[k] for k in means.index)
    texts = legend_texts(fig)
    assert f"maximum: {means.max():.2f} Mbit/s (2^20)" in texts
    assert f"published maximum: {best_pub:.2f} Mbit/s (2^20) (the study's grid)" in texts
    assert ax.get_xlabel() == "receiver SO_RCVBUF (bytes; K = 1024)"
    assert ax.get_ylabel() == "sender SO_SNDBUF (bytes; K = 1024)"


#: What an axis label says its unit with.
UNITS = ("Mb/s", "Mbit/s", "bytes", "(s)", "(cells)", "(%)")


@pytest.mark.parametrize(
    "fixture, kind, options",
    [
        ("lan", "buffer-grid", {"where": ["blocksize=8192"], "compare": "published"}),
        ("lan", "buffer-surface", {"where": ["blocksize=8192"]}),
        ("lan", "window", {"where": ["rcv=48K"], "by": "sender.type.blocksize"}),
        ("lan", "message-size", {"where": ["snd=32K", "rcv=48K"]}),
        ("lan", "time-sequence", {}),
        ("load", "offered-load", {}),
        ("wan", "window", {}),
    ],
)
def test_every_axis_says_its_unit(request, monkeypatch, tmp_path, fixture, kind, options):
    res = cellbench.experiment.load(request.getfixturevalue(fixture))
    fig = drawn(monkeypatch, res, kind, tmp_path, **options)
    labelled = 0
    for ax in fig.axes:
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if label:
                labelled += 1
                assert any(u in label for u in UNITS), f"{kind}: {label!r} has no unit"
    assert labelled >= 2


def test_window_marks_lock_step_points_and_refuses_one_point_lines(lan, monkeypatch, tmp_path):
    """Where most runs locked (16K send buffer into a 48K receiver, docs/lan-buffers.md)
    the point is ringed and the legend says why; lines of one point each (one window
    per send buffer at a fixed receive buffer) are refused, not drawn as a legend."""
    res = cellbench.experiment.load(lan)
    fig = drawn(monkeypatch, res, "window", tmp_path, where=["rcv=48K"],
                by="sender.type.blocksize")  # fmt: skip
    assert lines.LOCKSTEP_LABEL in legend_texts(fig)
    rows = res.to_pandas()
    locked = rows[(rows.rcvbuf == 49152) & rows.lockstep.astype(bool)].sndbuf.unique()
    assert list(locked) == [16384]
    (rings,) = [c for c in fig.axes[0].collections if c.get_label() == lines.LOCKSTEP_LABEL]
    assert {x for x, _ in rings.get_offsets()} == {16384}
    with pytest.raises(PlotError, match=r"window --by snd: every line would be one point"):
        draw.plot(res, "window", tmp_path / "w.png", where=["rcv=48K", "blocksize=8192"],
                   by="snd")  # fmt: skip


def _overlapping_labels(fig, axis) -> list[tuple[str, str]]:
    """Pairs of neighbouring tick labels whose drawn boxes overlap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    labels = [t for t in axis.get_ticklabels() if t.get_text() and t.get_visible()]
    boxes = sorted(((t.get_window_extent(renderer), t.get_text()) for t in labels),
                   key=lambda b: b[0].x0)  # fmt: skip
    return [(a[1], b[1]) for a, b in zip(boxes, boxes[1:]) if a[0].overlaps(b[0])]


def test_size_ticks_do_not_collide():
    """A message-size sweep of 512 .. 64K with a 9K among it (not a pure doubling) once
    went on a linear axis, its small sizes' labels on top of each other."""
    sizes = [512, 1024, 2048, 4096, 8192, 9216, 16384, 32768, 65536]
    fig = figure.new_figure()
    ax = fig.add_subplot()
    ax.plot(sizes, sizes, marker="o")
    figure.size_axis(ax, sizes)
    assert ax.get_xscale() == "log"
    assert _overlapping_labels(fig, ax.xaxis) == []
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown[0] == "512" and shown[-1] == "64K"


def test_a_sixteen_column_grid_keeps_its_labels_apart():
    """The Ultra-1 surface's 16 message sizes (hetero-lan: the small messages and 1 .. 7
    MSS of 9148 bytes, labelled in bytes), drawn as message_surface draws them."""
    from cellbench.reproduce.hetero_lan import SMALL_MESSAGES

    rcv = sorted(set(SMALL_MESSAGES) | {k * 9148 for k in range(1, 8)})
    assert len(rcv) == 16
    snd = [8192, 9148, 18296]
    z = np.arange(len(snd) * len(rcv), dtype=float).reshape(len(snd), len(rcv))
    fig = figure.new_figure()
    fig.set_size_inches(8.5, 6.5)
    ax = fig.add_subplot()
    fig.colorbar(buffers.heat(ax, snd, rcv, z, [[""] * len(rcv) for _ in snd]), ax=ax)
    assert len([t for t in ax.get_xticklabels() if t.get_text()]) == 16
    assert _overlapping_labels(fig, ax.xaxis) == []


def test_the_kinds_table_names_what_each_kind_needs(capsys):
    """One record per kind: its draw function (and a sweep kind's fit check) exists, a
    one-run kind names a stored table of ``Result``; ``plot --kind`` offers exactly
    the table's kinds and its help lists each with what it shows."""
    import argparse

    from cellbench.cli import build_parser
    from cellbench.plots import kinds

    assert len(set(kinds.NAMES)) == len(kinds.KINDS)
    for k in kinds.KINDS:
        assert k.source in kinds.SOURCES, k
        assert callable(k.function("draw")), k
        if k.source == "sweep":
            assert callable(k.function("fit")), k
        if k.source == "run":
            assert callable(getattr(Result, k.stored)) and k.missing, k
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    kind = next(a for a in sub.choices["plot"]._actions if a.dest == "kind")
    assert tuple(kind.choices) == kinds.NAMES
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for k in kinds.KINDS:
        assert f"{k.name} {k.shows}" in text, k.name
