"""The result store: parts of many runs, a manifest checked on every read, every kind
of damage named and repaired by --resume (which re-runs exactly the runs concerned),
a journal that keeps finished runs across a kill, the resume hints, --dask to nowhere,
a bounded look-ahead, and the light commands' imports."""

from __future__ import annotations

import json
import random
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import cellbench
from cellbench import _native
from cellbench.cli import main
from cellbench.engines.cluster import DASK_TIMEOUT_S
from cellbench.engines.loop import execute_plan, lookahead
from cellbench.engines.sim import SimEngine
from cellbench.experiment import results
from cellbench.experiment.plan import make_plan

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LAN = EXAMPLES / "lan-buffers.netspec"
SETS = ["snd=16K,32K", "rcv=16K,32K", "nbytes=256K"]
#: 4 points x 2 replications = 8 runs, in parts of 3: runs 0-2, 3-5, 6-7.
ARGS = ["run", str(LAN), *sum((["--set", s] for s in SETS), []), "--replications", "2"]
PARTS = ["part-000000-000002.parquet", "part-000003-000005.parquet", "part-000006-000007.parquet"]


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setattr(results.store, "PART_RUNS", 3)


@pytest.fixture
def simulations(monkeypatch):
    """The runs simulated (each run is one simulate call: one stage), by seed order."""
    calls: list[dict] = []
    real = _native.simulate

    def counted(spec):
        calls.append(spec)
        return real(spec)

    monkeypatch.setattr(_native, "simulate", counted)
    return calls


@pytest.fixture
def stored(tmp_path):
    """A complete result of 8 runs in 3 parts, and the rows an undamaged one reads."""
    out = tmp_path / "r"
    assert main([*ARGS, "--out", str(out), "--workers", "1"]) == 0
    assert sorted(p.name for p in (out / "runs").iterdir()) == PARTS
    return out, results.load(out).to_pandas()


def damaged(out: Path, capsys) -> str:
    """What `show` says of a damaged result: one line, exit 2."""
    capsys.readouterr()
    assert main(["show", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"cellbench: error: {out} is damaged: ")
    assert "Traceback" not in err
    return err


def resume(out: Path, simulations: list, capsys) -> str:
    """--resume; what it printed about repairs."""
    capsys.readouterr()
    simulations.clear()
    assert main([*ARGS, "--out", str(out), "--workers", "1", "--resume"]) == 0
    return capsys.readouterr().err


def test_run_set_is_a_set_of_ranges():
    rng = random.Random(1)
    for _ in range(200):
        runs, expected = results.RunSet(), set()
        for _ in range(rng.randrange(1, 12)):
            first = rng.randrange(40)
            last = first + rng.randrange(5)
            runs.add(first, last)
            expected.update(range(first, last + 1))
        assert len(runs) == len(expected)
        assert [r for r in range(50) if r in runs] == sorted(expected)


def test_parts_and_manifest(stored):
    out, rows = stored
    assert len(rows) == 8 and list(rows.run) == list(range(8))
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(p["first_run"], p["last_run"]) for p in manifest["parts"]] == [(0, 2), (3, 5), (6, 7)]
    assert [p["files"]["runs"]["rows"] for p in manifest["parts"]] == [3, 3, 2]
    assert not (out / ".incoming").exists()
    # Plain Parquet: the folder reads as one table.
    assert len(pd.read_parquet(out / "runs")) == 8


def test_deleted_part_is_named_and_resume_reruns_its_runs(stored, simulations, capsys):
    out, rows = stored
    (out / "runs" / PARTS[1]).unlink()
    err = damaged(out, capsys)
    assert f"runs/{PARTS[1]} is missing (runs 3-5)" in err
    # The hint is the command that made it, with --resume: it works as printed.
    hint = err.split("repair it with: ")[1].strip()
    assert hint.startswith("cellbench run ") and hint.endswith("--resume")
    simulations.clear()
    assert main(shlex.split(hint)[1:]) == 0
    assert len(simulations) == 3  # runs 3, 4, 5 and no other
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_copied_in_part_is_named_and_set_aside(stored, simulations, capsys):
    out, rows = stored
    shutil.copy(out / "runs" / PARTS[0], out / "runs" / "part-000100-000102.parquet")
    err = damaged(out, capsys)
    assert (
        f"runs/part-000100-000102.parquet is not in the manifest (a copy of runs/{PARTS[0]})" in err
    )
    notes = resume(out, simulations, capsys)
    assert "set aside" in notes and len(simulations) == 0
    assert (out / ".damaged" / "runs-part-000100-000102.parquet").exists()
    assert len(pd.read_parquet(out / "runs")) == 8
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_stray_file_is_named_and_set_aside(stored, simulations, capsys):
    out, rows = stored
    (out / "runs" / "part-abc.parquet").write_text("not a part")
    err = damaged(out, capsys)
    assert "runs/part-abc.parquet is a stray file, not a part of the result" in err
    resume(out, simulations, capsys)
    assert len(simulations) == 0
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_runs_folder_replaced_by_a_file(stored, simulations, capsys):
    out, rows = stored
    shutil.rmtree(out / "runs")
    (out / "runs").write_text("oops")
    err = damaged(out, capsys)
    assert "runs is a file where the folder of runs parts belongs" in err
    notes = resume(out, simulations, capsys)
    assert "runs is a file" in notes and len(simulations) == 8
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_param_columns_missing_from_result_json(stored, simulations, capsys):
    out, rows = stored
    meta = json.loads((out / "result.json").read_text())
    del meta["param_columns"]
    (out / "result.json").write_text(json.dumps(meta))
    err = damaged(out, capsys)
    assert "result.json: 'param_columns' (the sweep's columns) is missing" in err
    notes = resume(out, simulations, capsys)
    assert "written again" in notes and len(simulations) == 0
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(seed=7),
        lambda m: m["param_columns"].reverse(),
        lambda m: m.update(cellbench_version="9.9"),
    ],
    ids=["seed", "param_columns-order", "version"],
)
def test_an_edited_result_json_is_named(stored, simulations, capsys, edit):
    """Issue 31: result.json was not covered by the manifest, so an edited seed or
    param_columns changed what show printed without a word."""
    out, rows = stored
    meta = json.loads((out / "result.json").read_text())
    edit(meta)
    (out / "result.json").write_text(json.dumps(meta, indent=2) + "\n")
    err = damaged(out, capsys)
    assert "result.json differs from its SHA-256 in the manifest" in err
    notes = resume(out, simulations, capsys)
    assert len(simulations) == 0, notes
    assert json.loads((out / "result.json").read_text())["seed"] == 1
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_truncated_part_is_named_and_resume_reruns_its_runs(stored, simulations, capsys):
    out, rows = stored
    part = out / "runs" / PARTS[2]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    err = damaged(out, capsys)
    assert f"runs/{PARTS[2]} has {len(data) // 2} bytes, the manifest says {len(data)} " in err
    assert "(truncated) (runs 6-7)" in err
    notes = resume(out, simulations, capsys)
    assert "(truncated)" in notes and len(simulations) == 2
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def test_altered_part_fails_its_digest(stored, simulations, capsys):
    out, rows = stored
    part = out / "ports" / PARTS[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    results.load(out)  # the runs table is whole; the ports are checked when read
    with pytest.raises(results.ResultDamage, match="differs from its SHA-256"):
        results.load(out).ports()
    resume(out, simulations, capsys)
    assert len(simulations) == 3
    assert len(results.load(out).ports()) == len(results.load(out).ports().drop_duplicates())


def test_lost_manifest_is_named_and_resume_runs_everything_again(stored, simulations, capsys):
    out, rows = stored
    (out / "manifest.json").unlink()
    assert "manifest.json: missing" in damaged(out, capsys)
    notes = resume(out, simulations, capsys)
    assert "every part set aside" in notes and len(simulations) == 8
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), rows)


def _killed_run(out: Path, after: int) -> subprocess.CompletedProcess:
    """A sweep killed (SIGKILL) while the run after ``after`` runs."""
    script = f"""
import os, signal
from cellbench import _native
from cellbench.cli import main
from cellbench.experiment import results
results.store.PART_RUNS = 3
real, n = _native.simulate, [0]
def dying(spec):
    if n[0] == {after}:
        # A part half written where the kill found it.
        open(os.path.join({str(out)!r}, ".incoming", "runs-part-x.parquet"), "wb").write(b"PAR1")
        os.kill(os.getpid(), signal.SIGKILL)
    n[0] += 1
    return real(spec)
_native.simulate = dying
main({[*ARGS, "--out", str(out), "--workers", "1"]!r})
"""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)


def test_killed_sweep_keeps_every_finished_run(tmp_path, simulations, capsys):
    out = tmp_path / "k"
    r = _killed_run(out, after=5)
    assert r.returncode == -9, r.stderr
    # Runs 0-2 in a part, 3 and 4 in the journal; the half-written part where no reader looks.
    assert len(pd.read_parquet(out / "runs")) == 3
    assert results.load(out).meta["complete"] is False
    notes = resume(out, simulations, capsys)
    assert "2 finished run(s) recovered from the journal" in notes
    assert len(simulations) == 3  # runs 5, 6, 7
    assert not (out / ".incoming").exists()
    fresh = cellbench.run(LAN, set=SETS, replications=2, workers=1).to_pandas()
    pd.testing.assert_frame_equal(results.load(out).to_pandas(), fresh)


def test_torn_journal_line_runs_again(tmp_path, simulations, capsys):
    out = tmp_path / "k"
    _killed_run(out, after=5)
    journal = out / ".incoming" / "journal"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(lines[0] + lines[1][:40])  # a kill in the middle of a write
    resume(out, simulations, capsys)
    assert len(simulations) == 4  # run 4 again, and 5, 6, 7
    assert len(results.load(out).to_pandas()) == 8


def _interrupt_after(monkeypatch, n: int) -> None:
    real, calls = _native.simulate, []

    def interrupted(spec):
        if len(calls) == n:
            raise KeyboardInterrupt
        calls.append(1)
        return real(spec)

    monkeypatch.setattr(_native, "simulate", interrupted)


def test_ctrl_c_hint_is_the_exact_command(tmp_path, monkeypatch, capsys):
    out = tmp_path / "c"
    _interrupt_after(monkeypatch, 4)
    assert main([*ARGS, "--out", str(out), "--workers", "1", "--overwrite"]) == 130
    err = capsys.readouterr().err
    assert f"interrupted: 4/8 runs kept in {out}; finish with: " in err
    hint = err.split("finish with: ")[1].strip()
    expected = ["cellbench", *ARGS, "--out", str(out), "--workers", "1", "--resume"]
    assert shlex.split(hint) == expected
    monkeypatch.undo()
    monkeypatch.setattr(results.store, "PART_RUNS", 3)  # (undo restored it too)
    assert main(shlex.split(hint)[1:]) == 0
    assert len(results.load(out).to_pandas()) == 8


def test_reproduce_out_interrupted_prints_the_hint(tmp_path, monkeypatch, capsys):
    out = tmp_path / "lan"
    args = ["reproduce", "lan-buffers", "--send-buffer", "16384", "--recv-buffer", "16384"]
    args += ["--replications", "3", "--nbytes", "262144", "--workers", "1", "--out", str(out)]
    _interrupt_after(monkeypatch, 2)
    assert main(args) == 130
    err = capsys.readouterr().err
    assert f"interrupted: 2/3 runs kept in {out}; finish with: " in err
    hint = err.split("finish with: ")[1].strip()
    assert shlex.split(hint) == ["cellbench", *args, "--resume"]
    monkeypatch.undo()
    assert main(shlex.split(hint)[1:]) == 0
    assert "lan-buffers: mean ttcp throughput" in capsys.readouterr().out


def test_dask_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    out = tmp_path / "never"
    start = time.monotonic()
    assert main([*ARGS, "--out", str(out), "--dask", "tcp://127.0.0.1:9"]) == 2
    assert time.monotonic() - start < DASK_TIMEOUT_S + 10
    err = capsys.readouterr().err
    assert err.startswith("cellbench: error: --dask tcp://127.0.0.1:9: no Dask scheduler reached ")
    assert f"within {DASK_TIMEOUT_S} s" in err and err.count("\n") == 1
    assert not out.exists()


def test_dask_by_address_needs_no_default_client(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = cellbench.run(LAN, set=SETS, replications=2, dask=cluster.scheduler_address)
    local = cellbench.run(LAN, set=SETS, replications=2, workers=1)
    pd.testing.assert_frame_equal(on_dask.to_pandas(), local.to_pandas())


def test_huge_sweep_is_planned_lazily_with_a_bounded_look_ahead(tmp_path, monkeypatch):
    plan = make_plan(LAN, sets=SETS, replications=100_000)
    assert plan.runs_total == 400_000
    made = []
    task = plan.task
    monkeypatch.setattr(plan, "task", lambda run: made.append(run) or task(run))
    _interrupt_after(monkeypatch, 40)
    store = results.ResultDir(tmp_path / "huge", plan.meta(), resume=False)
    with pytest.raises(KeyboardInterrupt):
        execute_plan(plan, store, SimEngine(), workers=2)
    # Never more than the look-ahead past the oldest unfinished run was made.
    assert 40 <= len(made) <= 40 + lookahead(2) + 2
    assert len(pd.read_parquet(tmp_path / "huge" / "runs")) >= 40


def test_format_2_results_still_read_and_resume_converts_them(stored, tmp_path, capsys):
    out, rows = stored
    old = tmp_path / "v2"
    (old / "runs").mkdir(parents=True)
    for run, g in rows.groupby("run"):
        g.to_parquet(old / "runs" / f"part-{run:06d}.parquet", index=False)
    meta = json.loads((out / "result.json").read_text()) | {"format_version": 2}
    (old / "result.json").write_text(json.dumps(meta))
    pd.testing.assert_frame_equal(results.load(old).to_pandas(), rows, check_dtype=False)
    # --resume puts its runs in parts, and runs the ones it lacks.
    (old / "runs" / "part-000004.parquet").unlink()
    res = cellbench.run(
        LAN, set=SETS, replications=2, out=old, resume=True, progress=True,
        workers=1, dask=None,
    )  # fmt: skip
    assert results.read_meta(old)["format_version"] == results.FORMAT_VERSION
    pd.testing.assert_frame_equal(res.to_pandas(), rows)
    assert sorted(p.name for p in (old / "runs").iterdir()) == [
        "part-000000-000002.parquet",
        "part-000003-000003.parquet",
        "part-000004-000004.parquet",
        "part-000005-000007.parquet",
    ]
    assert "7 run(s) of format_version 2 (a file per run) put in parts" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["calc", "layers", "--phy", "oc3c"],
        ["wire", "--help"],
        ["ttcp", "-t", "-s", "-n", "16", "-l", "8192", "-f", "m"],
    ],
)
def test_light_commands_import_no_data_frame_or_plotting_library(argv):
    script = f"""
import sys
from cellbench.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(sorted(m for m in ("pandas", "pyarrow", "matplotlib", "tqdm", "numpy", "dask")
             if m in sys.modules), file=sys.stderr)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr


def _files(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_ctrl_c_then_resume_gives_the_files_of_an_uninterrupted_run(tmp_path, monkeypatch):
    """Ctrl-C puts the finished runs in a part cut short (runs 3-3 here); --resume takes
    such parts apart again, so the result's files equal an uninterrupted run's, as
    after a kill (before: parts 0-2, 3-3, 4-6, 7-7 against 0-2, 3-5, 6-7)."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main([*ARGS, "--out", str(whole), "--workers", "1"]) == 0
    _interrupt_after(monkeypatch, 4)
    assert main([*ARGS, "--out", str(cut), "--workers", "1"]) == 130
    assert sorted(p.name for p in (cut / "runs").iterdir()) == PARTS[:1] + [
        "part-000003-000003.parquet"
    ]
    assert len(results.load(cut).to_pandas()) == 4  # an interrupted result shows its runs
    monkeypatch.undo()
    monkeypatch.setattr(results.store, "PART_RUNS", 3)
    assert main([*ARGS, "--out", str(cut), "--workers", "1", "--resume"]) == 0
    assert _files(cut) == _files(whole)


def _format_2(stored, tmp_path) -> tuple[Path, pd.DataFrame]:
    """The stored result as format 2 wrote it: a file per run, no manifest."""
    out, rows = stored
    old = tmp_path / "v2"
    (old / "runs").mkdir(parents=True)
    for run, g in rows.groupby("run"):
        g.to_parquet(old / "runs" / f"part-{run:06d}.parquet", index=False)
    meta = json.loads((out / "result.json").read_text()) | {"format_version": 2}
    (old / "result.json").write_text(json.dumps(meta))
    return old, rows


def test_format_2_results_are_checked_as_they_are_read(stored, tmp_path, capsys):
    """Format 2 was read with no checks: a copied part counted twice, a deleted one
    dropped silently, runs_total never looked at ("-5 run(s))."""
    old, _ = _format_2(stored, tmp_path)
    runs = old / "runs"
    shutil.copy(runs / "part-000003.parquet", runs / "part-000009.parquet")
    assert "runs/part-000009.parquet: run 9 is past the result's 8" in damaged(old, capsys)
    shutil.move(runs / "part-000009.parquet", runs / "part-000004 (copy).parquet")
    assert "runs/part-000004 (copy).parquet is a stray file" in damaged(old, capsys)
    (runs / "part-000004 (copy).parquet").unlink()
    (runs / "part-000004.parquet").unlink()
    shutil.copy(runs / "part-000003.parquet", runs / "part-000004.parquet")
    assert "runs/part-000004.parquet holds the rows of run(s) 3, not of run 4" in damaged(
        old, capsys
    )
    (runs / "part-000004.parquet").unlink()
    assert "runs/ holds 7 of the result's 8 runs (run 4 is missing)" in damaged(old, capsys)
    meta = json.loads((old / "result.json").read_text())
    (old / "result.json").write_text(json.dumps(meta | {"runs_total": -5}))
    assert "result.json: 'runs_total' is -5, not a whole number of runs >= 1" in damaged(
        old, capsys
    )
    (old / "result.json").write_text(json.dumps(meta | {"runs_total": 9}))
    assert "'runs_total' is 9, not points x replications = 4 x 2" in damaged(old, capsys)


def test_resume_of_format_2_sets_foreign_files_aside_and_deletes_nothing(
    stored, tmp_path, simulations, capsys
):
    """--resume imported any part-N.parquet as run N and deleted the originals."""
    old, rows = _format_2(stored, tmp_path)
    foreign = pd.DataFrame({"run": [99, 99], "x": [1.0, 2.0]})
    foreign.to_parquet(old / "runs" / "part-000005.parquet", index=False)  # someone's data
    before = {p.name: p.read_bytes() for p in (old / "runs").iterdir()}
    notes = resume(old, simulations, capsys)
    assert "runs/part-000005.parquet holds the rows of run(s) 99, not of run 5" in notes
    assert "7 run(s) of format_version 2 (a file per run) put in parts" in notes
    assert len(simulations) == 1  # run 5 only
    pd.testing.assert_frame_equal(results.load(old).to_pandas(), rows)
    # Every file it found is still there: converted ones kept, the foreign one set aside.
    kept = {p.name: p.read_bytes() for p in (old / results.LEGACY_KEPT).iterdir()}
    aside = {p.name: p.read_bytes() for p in (old / results.DAMAGED).iterdir()}
    assert aside == {"runs-part-000005.parquet": before.pop("part-000005.parquet")}
    assert kept == {f"runs-{name}": data for name, data in before.items()}


@pytest.mark.parametrize("name", ["result.json", "manifest.json"])
def test_deeply_nested_json_is_one_line_error_not_recursion_error(stored, capsys, name):
    out, _ = stored
    (out / name).write_text("[" * 100_000 + "]" * 100_000)
    for argv in (["show", str(out)], ["plot", str(out), "--kind", "window", "-o", "x.png"]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1, err[-500:]
        assert f"{name}: not a result's JSON: nested too deeply" in err


def test_a_format_2_part_with_a_column_of_another_type_is_damage_not_a_traceback(
    stored, tmp_path, simulations, capsys
):
    """A part whose column changed type was an ArrowTypeError from concat_tables: a
    declared column's type is checked as the part is read (and --resume sets the part
    aside), and parts that disagree in a column the result does not declare are one
    line too."""
    old, rows = _format_2(stored, tmp_path)
    part = old / "runs" / "part-000003.parquet"
    g = pd.read_parquet(part)
    g.assign(throughput_bps=g["throughput_bps"].astype(str)).to_parquet(part, index=False)
    assert (
        "runs/part-000003.parquet: column throughput_bps is of type large_string, expected "
        "float64 (copied in from elsewhere?)"
    ) in damaged(old, capsys)
    g.assign(extra="x").to_parquet(part, index=False)
    other = old / "runs" / "part-000004.parquet"
    pd.read_parquet(other).assign(extra=1.5).to_parquet(other, index=False)
    assert "runs/: its parts disagree (Unable to merge: Field extra has incompatible types" in (
        damaged(old, capsys)
    )
    g.assign(throughput_bps=g["throughput_bps"].astype(str)).to_parquet(part, index=False)
    notes = resume(old, simulations, capsys)
    assert "column throughput_bps is of type large_string, expected float64" in notes
    assert len(simulations) == 1  # run 3 only
    pd.testing.assert_frame_equal(results.load(old).to_pandas(), rows)


def test_a_summary_of_one_row_per_point_takes_each_rows_limit_at_once(monkeypatch, tmp_path):
    """One run of 10,000 connections was silent for 25 s after its bar reached 100%:
    the summary took a pandas step per connection to find a majority of one. A row
    per group now takes its own limit and evidence, the same as before."""
    from cellbench.experiment import results

    res = cellbench.run(
        EXAMPLES / "lan-buffers.netspec",
        set=["snd=16K", "rcv=16K,24K", "nbytes=256K"],
        replications=1,
        out=tmp_path / "r",
    )
    rows = res.to_pandas()
    expected = [results.most_common_limit(rows.iloc[[i]]) for i in range(len(rows))]

    def per_group(rows):
        raise AssertionError("a group of one row needs no majority")

    monkeypatch.setattr(results.result, "most_common_limit", per_group)
    s = results.load(tmp_path / "r").summary()
    assert list(zip(s["limited_by"], s["limit_evidence"])) == expected
    assert len(s) == 2 and s["limited_by"].notna().all()
