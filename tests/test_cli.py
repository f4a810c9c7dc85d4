"""The command line's rough edges a newcomer hit (issue 24 §3): the version flag, whole
help sentences, a missing optional dependency, progress when stderr is not a terminal."""

from __future__ import annotations

import builtins
import re
import time
from pathlib import Path

import pytest

from cellbench import __version__, progress
from cellbench.cli import build_parser, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flag(flag, capsys):
    with pytest.raises(SystemExit) as e:
        main([flag])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"cellbench {__version__}\n"


def test_run_help_says_whole_sentences(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--scheduler tls://HOST:PORT --engine real: the address of the daemons' scheduler "
        "(the daemon started without --scheduler hosts it; cellbench daemon --help)"
    ) in text
    # No option's help stops on a dangling word.
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    for action in run._actions:
        if action.help:
            assert not re.search(r"(\bthe|')$", action.help.strip()), action.help


def _missing(monkeypatch, module: str) -> None:
    """Imports of ``module`` fail as they do where the extra is not installed."""
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == module or name.startswith(module + "."):
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_a_missing_optional_dependency_names_the_extra(monkeypatch, tmp_path, capsys):
    _missing(monkeypatch, "cryptography")
    assert main(["daemon", "--make-credentials", str(tmp_path / "creds")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "cellbench: error: daemon needs cryptography, an optional dependency: "
        "pip install 'cellbench[real]'\n"
    )


def test_dask_on_the_simulator_names_the_dask_extra(monkeypatch, capsys):
    _missing(monkeypatch, "distributed")
    code = main(["reproduce", "lan-buffers", "--replications", "1", "--send-buffer", "16K",
                 "--recv-buffer", "16K", "--dask", "tcp://127.0.0.1:1"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.endswith("pip install 'cellbench[dask]'\n")
    assert err.count("\n") == 1


STUDY = ["reproduce", "lan-buffers", "--replications", "2", "--send-buffer", "16K",
         "--recv-buffer", "16K", "--recv-buffer", "24K"]  # fmt: skip


def test_progress_off_a_terminal_is_lines_naming_the_command(monkeypatch, capsys):
    # capsys's stderr is no terminal: as a pipe or a log file, a line at a time.
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    assert main(STUDY) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("cellbench reproduce lan-buffers:")]
    assert lines and lines[-1].startswith("cellbench reproduce lan-buffers: 100%|")
    assert "4/4" in lines[-1]


def test_the_final_progress_line_is_printed_once(monkeypatch, capsys):
    """tqdm's close repeats the last state with a later clock; off a terminal that was
    a second 100% line."""
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    assert main(STUDY) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "4/4" in ln]
    said = [re.sub(r"\[[^,\]]*, [^,\]]*/s", "[", ln) for ln in lines]  # less the clock
    assert lines and len(set(said)) == len(said), lines
    # After the last run the bar says what it waits for.
    assert "storing the result" in lines[-1]


def test_a_long_run_shows_its_clock_before_it_ends(monkeypatch, capsys):
    """One run of a minute was "0/1" and nothing else: the heartbeat redraws the bar
    (its elapsed time) while no run ends."""
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.05)
    plan = type("Plan", (), {"runs_total": 1})()
    with progress.progress_bar(plan, set(), "cellbench run", True) as bar:
        with progress.heartbeat(bar):
            time.sleep(1.5)  # the clock shows whole seconds
        shown = [ln for ln in capsys.readouterr().err.splitlines() if "0/1" in ln]
        assert len(set(shown)) >= 2, shown  # the clock moved: 00:00, then 00:01


def test_check_of_a_large_sweep_shows_its_progress(monkeypatch, capsys, tmp_path):
    """--check builds every point (100k: half a minute): a bar says how far, not silence."""
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    exp = tmp_path / "x.netspec"
    exp.write_text((EXAMPLES / "lan-buffers.netspec").read_text())
    assert main(["run", str(exp), "--set", "snd=16384:16399:1", "--check"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"cellbench run \(checking points\): +100%\|.* 160/160 ", err), err[-800:]


def test_a_short_run_off_a_terminal_prints_no_progress(capsys):
    assert progress.LINE_INTERVAL_S >= 2
    assert main(STUDY) == 0
    assert "cellbench reproduce" not in capsys.readouterr().err
