"""One list of studies (issue 30): ``cellbench.reproduce.REGISTRY``. A study is a module
of ``cellbench.reproduce`` whose ``STUDY`` is a ``Study``, its experiment files and its
docs page; the command line, ``cellbench fidelity``, ``--engine emu``, the row hashes and
the Python API all come from the registry, so a new study needs nothing else."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import cellbench
from cellbench import reproduce
from cellbench.cli import build_parser, main
from cellbench.reproduce import emu, fidelity

ROOT = Path(__file__).resolve().parents[1]

#: A study of two parts, as a newcomer writes it: one module (its experiments are texts
#: it writes, since a temporary directory holds it), nothing registered anywhere.
TOY = '''
from cellbench.reproduce import study

EXPERIMENT = """
testbed lan-buffers { }
cluster {
    test sender {
        type = full (blocksize=8K, nbytes=$n);
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
sweep { n = NBYTES; replications = 1; }
"""


def _part(name, nbytes):
    def runs(o):
        return [study.Run(text=EXPERIMENT.replace("NBYTES", str(nbytes)), where=name)]

    def collect(o, ran):
        return ran[0].result.to_pandas()[["nbytes", "throughput_bps", "limited_by"]]

    def figures(df):
        return {"toy-" + name: study.Simulated(float(df.throughput_bps.iloc[0]) / 1e6)}

    return study.Part(
        name, f"one transfer of {nbytes} bytes", runs, collect,
        report=lambda o, df: f"{name}: {df.throughput_bps.iloc[0] / 1e6:.3f} Mb/s",
        to_json=lambda o, df: {"rows": df.to_dict(orient="records")},
        published=(study.Compares(("toy-" + name,), figures, what=name),),
    )


STUDY = study.Study(
    "toy", "a newcomer's study of two parts", (_part("small", 65536), _part("large", 262144))
)
'''


def _row_hashes():
    path = ROOT / "scripts" / "row-hashes.py"
    spec = importlib.util.spec_from_file_location("row_hashes", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def with_toy(tmp_path, monkeypatch):
    """The registry as it is once ``toy_study.py`` sits among the studies' modules."""
    (tmp_path / "toy_study.py").write_text(TOY)
    monkeypatch.setattr(reproduce, "__path__", [*reproduce.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "cellbench.reproduce.toy_study", raising=False)
    found = reproduce._discover()
    monkeypatch.setattr(reproduce, "REGISTRY", found)
    yield found
    sys.modules.pop("cellbench.reproduce.toy_study", None)


def test_a_new_module_is_a_new_study_everywhere(with_toy, capsys):
    assert list(with_toy)[-1] == "toy"
    # The command line: its subcommand, its parts as --part's choices.
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    studies = next(a for a in sub.choices["reproduce"]._actions if a.dest == "name")
    assert list(studies.choices) == list(with_toy)
    part = next(a for a in studies.choices["toy"]._actions if a.dest == "part")
    assert part.choices == ["small", "large"]
    assert main(["reproduce", "toy", "--part", "large", "--json", "--workers", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["study"] == "toy" and [r["nbytes"] for r in doc["rows"]] == [262144]
    # cellbench fidelity's declarations, the row hashes' items, the emulator's list.
    assert [(s, p) for s, p, _, _ in fidelity.declarations() if s == "toy"] == [
        ("toy", "small"),
        ("toy", "large"),
    ]
    items = [args for _, args in _row_hashes().study_items()]
    assert ["reproduce", "toy", "--part", "small"] in items
    assert ["reproduce", "toy", "--part", "large"] in items
    assert "toy" not in emu.studies()
    # The Python API: both parts' rows, each named by its part.
    df = cellbench.reproduce("toy", workers=1)
    assert isinstance(df, pd.DataFrame)
    assert list(df.part) == ["small", "large"] and list(df.nbytes) == [65536, 262144]
    assert (df.throughput_bps > 0).all()


def test_every_derived_list_is_the_registry():
    registry = reproduce.REGISTRY
    pairs = [(s.name, p.name) for s in registry.values() for p in s.parts]
    # Row hashes: every part of every study, each once.
    items = _row_hashes().study_items()
    assert [tuple(args[1::2]) for _, args in items] == pairs
    # The emulator: the studies that say how they run on it, in the registry's order.
    assert emu.studies() == [s.name for s in registry.values() if s.emulated is not None]
    for name in emu.studies():
        e = registry[name].emulated
        assert e.sim_part in [p.name for p in registry[name].parts]
        assert (ROOT / "python/cellbench/reproduce" / f"{e.file}.netspec").is_file()
    # Fidelity: every declaration of every part, and nothing else.
    declared = [(s, p) for s, p, _, _ in fidelity.declarations()]
    assert declared == [(s.name, p.name) for s in registry.values() for p in s.parts
                        for _ in p.published]  # fmt: skip
    # Each study has its page.
    for name in registry:
        assert (ROOT / "docs" / f"{name}.md").is_file(), name


def test_the_api_refuses_what_the_study_does_not_have():
    with pytest.raises(ValueError, match="unknown study 'nope': expected one of lan-buffers"):
        cellbench.reproduce("nope")
    with pytest.raises(ValueError, match="unknown part 'grids' of lan-buffers"):
        cellbench.reproduce("lan-buffers", "grids")
    with pytest.raises(ValueError, match="wan-window: unknown option 'window'"):
        cellbench.reproduce("wan-window", window=[4096])
