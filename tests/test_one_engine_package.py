"""One package per engine (issue 30): an engine is a package of ``cellbench.engines``
whose ``ENGINE`` is its class. It declares its own ``run`` options (``Option``) and the
column groups it stores (``ColumnGroup``); ``--engine``'s choices and help, ``run``'s
options and refusals and the store's runs columns come from the engine table, so a new
engine needs nothing else."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cellbench import engines
from cellbench.cli import build_parser, main
from cellbench.engines import table as engine_table
from cellbench.experiment import results

ROOT = Path(__file__).resolve().parents[1]

#: An engine as a newcomer writes it: one package (here a temporary one), nothing
#: registered anywhere. It runs the simulator and adds one measure of its own, taken
#: from one option of its own.
TOY = """
from cellbench.engines.base import Option, engine_meta
from cellbench.engines.sim import SimEngine
from cellbench.experiment.results.columns import ColumnGroup

TOY_COLUMNS = ColumnGroup("toy", (("toy_knob_seen", "int64"),))


class ToyEngine(SimEngine):
    name = "toy"
    about = "the simulator with a knob"
    label = "cellbench run (toy)"
    studies = False
    tools = False
    options = (
        *SimEngine.options,
        Option(
            "--toy-knob",
            type=int,
            metavar="N",
            help="--engine toy: the knob each row records",
            refusal="--toy-knob needs --engine toy, not {engine}",
        ),
    )
    columns = (TOY_COLUMNS,)

    def __init__(self, knob=None):
        super().__init__()
        self.knob = knob

    @classmethod
    def from_options(cls, args):
        return cls(args.toy_knob)

    def meta(self, plan):
        return engine_meta(plan, "toy")

    def tables(self, plan, task, out):
        t = super().tables(plan, task, out)
        for row in t.rows:
            row["toy_knob_seen"] = self.knob
        return t


ENGINE = ToyEngine
"""

EXPERIMENT = """
testbed lan-buffers { }
cluster {
    test sender {
        type = full (blocksize=8K, nbytes=64K);
        protocol = tcp (window=32K);
        own = ipc1.atm:5001;
        peer = ipc2.atm:5001;
    }
    test receiver {
        type = sink (blocksize=8K);
        protocol = tcp (window=32K);
        own = ipc2.atm:5001;
        peer = ipc1.atm:5001;
    }
}
"""


@pytest.fixture
def with_toy(tmp_path, monkeypatch):
    """The engine table as it is once the package ``toy`` sits among the engines."""
    before = list(results.ROW_COLUMNS)
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text(TOY)
    monkeypatch.setattr(engines, "__path__", [*engines.__path__, str(tmp_path)])
    importlib.reload(engine_table)
    yield before
    monkeypatch.undo()
    sys.modules.pop("cellbench.engines.toy", None)
    importlib.reload(engine_table)
    assert results.ROW_COLUMNS == before and "toy" not in results.columns.ENGINE_COLUMNS


def _run_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]


def test_a_new_package_is_a_new_engine_everywhere(with_toy, tmp_path, capsys, monkeypatch):
    assert engine_table.NAMES == ("sim", "real", "emu", "toy")
    # --engine's choices and help, and the option in run --help.
    run = _run_parser()
    engine = next(a for a in run._actions if a.dest == "engine")
    assert list(engine.choices) == ["sim", "real", "emu", "toy"]
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "toy: the simulator with a knob" in text
    assert "--toy-knob N --engine toy: the knob each row records" in text
    # Refused by every other engine, with the toy's words.
    exp = tmp_path / "toy.netspec"
    exp.write_text(EXPERIMENT)
    for other in ("sim", "real", "emu"):
        assert main(["run", str(exp), "--engine", other, "--toy-knob", "3", "--check"]) == 2
        assert f"--toy-knob needs --engine toy, not {other}" in capsys.readouterr().err
    # Its column ends the runs table (it names no column to follow), after the others.
    assert results.ROW_COLUMNS == [*with_toy, ("toy_knob_seen", "int64")]
    # A tiny run on it stores its measure, in its type.
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "toy.result"
    args = ["run", str(exp), "--engine", "toy", "--toy-knob", "7", "--out", str(out)]
    assert main([*args, "--workers", "1"]) == 0
    capsys.readouterr()
    df = results.load(out).to_pandas()
    assert list(df.columns[: len(with_toy) + 1]) == [n for n, _ in results.ROW_COLUMNS]
    assert list(df.toy_knob_seen) == [7]
    [part] = (out / "runs").glob("*.parquet")
    assert pq.read_schema(part).field("toy_knob_seen").type == pa.int64()
    assert (df.throughput_bps > 0).all()
    assert results.load(out).meta["engine"] == "toy"
    # A simulator's run stores the column too, empty.
    sim = tmp_path / "sim.result"
    assert main(["run", str(exp), "--out", str(sim), "--workers", "1"]) == 0
    assert results.load(sim).to_pandas().toy_knob_seen.isna().all()


def test_the_store_refuses_a_group_it_cannot_place():
    from cellbench.experiment.results.columns import ColumnGroup, use_engine_groups

    groups = [g for e in engine_table.ENGINES.values() for g in e.columns]
    try:
        with pytest.raises(ValueError, match="'x': after 'nowhere', which no runs column"):
            use_engine_groups([*groups, ColumnGroup("x", (("x", "int64"),), after="nowhere")])
        with pytest.raises(ValueError, match="'y': mss taken"):
            use_engine_groups([*groups, ColumnGroup("y", (("mss", "int64"),))])
    finally:
        engine_table.give_the_store_its_columns()
    assert [n for n, _ in results.ROW_COLUMNS].count("mss") == 1
