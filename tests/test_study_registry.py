"""Every part of every study in the registry stores, resumes and overwrites as a user
runs it: ``cellbench reproduce S --part P --out DIR``, then ``--resume`` (nothing runs
again, the same table), then ``--overwrite`` (all of it again, the same table)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cellbench import _native
from cellbench.cli import main
from cellbench.reproduce import REGISTRY

#: Options that keep a part short where the study allows (the registry's parts that
#: are not here run as they are).
FAST: dict[tuple[str, str], list[str]] = {
    ("lan-buffers", "grid"): [
        "--send-buffer", "16K", "--recv-buffer", "24K", "--replications", "1",
        "--nbytes", "256K",
    ],
    ("hetero-lan", "surfaces"): ["--pair", "sparc20-sparc20", "--seconds", "0.05"],
    ("wan-window", "window"): ["--set", "window=64K", "--set", "seconds=0.2"],
    ("wan-mismatch", "cases"): ["--set", "seconds=0.2"],
    ("wan-mismatch", "case3"): ["--set", "seconds=0.2"],
    ("wan-mismatch", "segment-size"): ["--set", "seconds=0.2", "--set", "mtu=4096,9180"],
    ("europe-vp", "vp"): [
        "--set", "spacing_us=off,19.45", "--set", "window=16K", "--set", "write_size=8K",
        "--set", "nbytes=128K",
    ],
    ("wan-contention", "offered-load"): ["--set", "seconds=0.2"],
    ("wan-contention", "offered-load-udp"): ["--set", "seconds=0.2"],
    ("wan-contention", "credits"): ["--set", "seconds=0.2"],
    ("wan-contention", "burst"): ["--set", "seconds=0.5", "--set", "burst=64K,1M"],
    ("wan-contention", "five-pairs"): ["--set", "seconds=0.2"],
    ("wan-contention", "flow-control-five-pairs"): ["--set", "seconds=0.2"],
    ("wan-contention", "ftp"): ["--set", "seconds=0.5"],
    ("ubr", "buffers"): [
        "--seconds", "0.3", "--replications", "1", "--set", "buffer=256,8192", "--set", "mtu=9180",
    ],
    ("ubr", "epd-threshold"): ["--seconds", "0.3", "--replications", "1", "--set", "epd=0.5"],
    ("ubr", "flavours"): ["--seconds", "0.3", "--replications", "1", "--set", "policy=epd"],
    ("ubr", "connections"): ["--seconds", "0.2", "--replications", "1", "--set", "policy=ppd"],
}  # fmt: skip

PARTS = [(s.name, p.name) for s in REGISTRY.values() for p in s.parts]


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` and a digest of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _counting_runs(monkeypatch) -> list[int]:
    """The simulator's runs from now on, counted (the runner calls ``_native.simulate``)."""
    runs: list[int] = []
    simulate = _native.simulate

    def counted(spec):
        runs.append(1)
        return simulate(spec)

    monkeypatch.setattr(_native, "simulate", counted)
    return runs


def _reproduce(capsys, *args: str) -> str:
    status = main(["reproduce", *args, "--workers", "2"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


@pytest.mark.parametrize(("name", "part"), PARTS, ids=[f"{s}:{p}" for s, p in PARTS])
def test_every_part_stores_resumes_and_overwrites(
    tmp_path, capsys, monkeypatch, name, part
) -> None:
    args = [name, "--part", part, *FAST.get((name, part), [])]
    out = tmp_path / "out"
    runs = _counting_runs(monkeypatch)
    first = _reproduce(capsys, *args, "--out", str(out))
    made = len(runs)
    stored = _files(out)
    assert made and any(f.endswith("result.json") for f in stored), f"{name}:{part} stored nothing"
    # A complete result: --resume runs nothing, changes no byte and prints the same.
    assert _reproduce(capsys, *args, "--out", str(out), "--resume") == first
    assert len(runs) == made
    assert _files(out) == stored
    # --overwrite runs all of it again: the same table, the same stored rows.
    assert _reproduce(capsys, *args, "--out", str(out), "--overwrite") == first
    assert len(runs) == 2 * made
    assert _files(out) == stored
    # The same part without --out prints the same table (less where it stored files).
    stored_at = [line for line in first.splitlines() if str(out) in line]
    assert all("capture:" in line for line in stored_at)
    lines = [line for line in first.splitlines() if line not in stored_at]
    assert _reproduce(capsys, *args).splitlines() == lines


def test_without_overwrite_a_stored_result_is_refused(tmp_path, capsys) -> None:
    args = ["wan-mismatch", "--part", "cases", "--set", "seconds=0.2", "--out", str(tmp_path)]
    _reproduce(capsys, *args)
    assert main(["reproduce", *args]) == 2
    assert "--overwrite" in capsys.readouterr().err
