"""plot --kind measurements: each replication's throughput against its number, a line
per chosen cell (docs/lan-buffers.md: the study plots its 50 measurements one by one)."""

from __future__ import annotations

import pytest

from cellbench.cli import main
from cellbench.experiment import results


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    out = tmp_path_factory.mktemp("lb") / "lb"
    args = ["reproduce", "lan-buffers", "--send-buffer", "24K", "--send-buffer", "32K",
            "--recv-buffer", "24K", "--recv-buffer", "48K", "--replications", "6",
            "--nbytes", "4M", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    return out


def test_a_line_per_cell_a_point_per_measurement(stored, tmp_path, capsys):
    svg = tmp_path / "m.svg"
    where = ["--where", "snd=24K"]
    assert main(["plot", str(stored), "--kind", "measurements", *where, "-o", str(svg)]) == 0
    text = svg.read_text()
    assert "measurement number" in text
    # snd is picked: the lines are the two receive buffers.
    assert "rcv=24576" in text and "rcv=49152" in text and "snd=24576, rcv" not in text
    df = results.load(stored).to_pandas()
    assert sorted(df.replication.unique()) == list(range(6))


def test_too_many_cells_says_how_to_choose(stored, tmp_path, capsys):
    from cellbench.plots import lines

    svg = tmp_path / "m.svg"
    # Four cells fit; with a limit of three the figure asks for --where.
    assert main(["plot", str(stored), "--kind", "measurements", "-o", str(svg)]) == 0
    capsys.readouterr()
    old = lines.MEASURED_CELLS
    lines.MEASURED_CELLS = 3
    try:
        assert main(["plot", str(stored), "--kind", "measurements", "-o", str(svg)]) == 2
    finally:
        lines.MEASURED_CELLS = old
    err = capsys.readouterr().err
    assert "measurements draws at most 3 cells, and 4 are picked" in err
    assert "--where" in err and err.count("\n") == 1
