"""Every plot kind, drawn from stored results (real simulator runs, small) into files."""

from __future__ import annotations

from pathlib import Path

import pytest

import cellbench
from cellbench.cli import main
from cellbench.experiment import plots

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
    assert main(["plot", str(lan), "--kind", kind, "-o", str(out)]) == 0
    check(out)


def test_plot_text_has_titles_units_and_legends(lan, load, tmp_path):
    grid = tmp_path / "g.svg"
    plots.plot(cellbench.experiment.load(lan), "buffer-grid", grid)
    svg = grid.read_text()
    for text in ("Throughput over send", "SO_SNDBUF", "SO_RCVBUF", "Mb/s", "lock-step"):
        assert text in svg, text
    ol = tmp_path / "o.svg"
    assert main(["plot", str(load), "--kind", "offered-load", "-o", str(ol)]) == 0
    check(ol)
    text = ol.read_text()
    for label in (
        "offered load (Mb/s",
        "carried load (Mb/s",
        "peak (",
        "lossless point",
        "carried = offered",
    ):
        assert label in text, label
    ts = tmp_path / "t.svg"
    assert main(["plot", str(lan), "--kind", "time-sequence", "--run", "3", "-o", str(ts)]) == 0
    assert "run 3" in ts.read_text() and "cumulative ACK" in ts.read_text()


def test_trace_parsing(lan):
    res = cellbench.experiment.load(lan)
    tr = res.traces()
    first = tr[(tr.run == 0) & (tr.connection == 0)]
    data, acks = plots.parse_trace(list(first.line))
    row = res.to_pandas().iloc[0]
    # Every byte of the transfer was sent, and the last ACK covers it and the FIN.
    assert int(data.end.max() - data.start.min()) == row.bytes
    assert int(acks.ack.max() - data.start.min()) == row.bytes + 1
    assert len(data) == row.data_segments


def test_plot_errors(lan, load, tmp_path, capsys):
    assert main(["plot", str(load), "--kind", "buffer-surface", "-o", str(tmp_path / "x.png")]) == 2
    assert "at least 2 send and 2 receive buffer sizes" in capsys.readouterr().err
    assert main(["plot", str(lan), "--kind", "offered-load", "-o", str(tmp_path / "x.png")]) == 2
    assert "offered-load needs constant-rate traffic" in capsys.readouterr().err
    assert main(["plot", str(lan), "--kind", "window", "-o", str(tmp_path / "x.gif")]) == 2
    assert "expected a .png, .svg or .pdf" in capsys.readouterr().err
