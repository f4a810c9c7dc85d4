"""Start-up and result-store figures against their baselines, side by side (issue 13).

    python scripts/bench_store.py [--quick]

- start-up: CPU time of `cellbench --help`, `calc`, `wire`, one ttcp run, against a
  bare `python -c pass` (the overhead is what cellbench adds);
- storage: `cellbench reproduce lan-buffers --workers 2` with and without `--out DIR`
  (wall, CPU, peak memory), the files written, and `cellbench show` / `plot` of it.

Wall times depend on what else the machine runs; CPU times and ratios less so.
`--quick` runs 2 replications per cell instead of the study's 50.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELLBENCH = [sys.executable, "-m", "cellbench"]


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one run of ``cmd``."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_store: failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def best_cpu(cmd: list[str], n: int = 7) -> float:
    return min(measure(cmd)[1] for _ in range(n))


def main() -> None:
    quick = "--quick" in sys.argv
    print("start-up: CPU time, best of 7 (ms)")
    bare = best_cpu([sys.executable, "-c", "pass"])
    print(f"  {'python -c pass':<28} {1e3 * bare:6.0f}")
    for name, args in [
        ("cellbench --help", ["--help"]),
        ("cellbench calc layers", ["calc", "layers", "--phy", "oc3c"]),
        ("cellbench wire --help", ["wire", "--help"]),
        ("cellbench ttcp (16 MB)", ["ttcp", "-t", "-s", "-n", "2048", "-l", "8192"]),
    ]:
        cpu = best_cpu(CELLBENCH + args)
        print(f"  {name:<28} {1e3 * cpu:6.0f}   overhead {1e3 * (cpu - bare):5.0f}")

    study = CELLBENCH + ["reproduce", "lan-buffers", "--workers", "2"]
    study += ["--replications", "2"] if quick else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lan.result"
        plain = measure(study)
        stored = measure(study + ["--out", str(out)])
        files = sum(1 for f in out.rglob("*") if f.is_file())
        show = measure(CELLBENCH + ["show", str(out)])
        figure = ["--kind", "buffer-grid", "-o", f"{tmp}/g.png"]
        plot = measure(CELLBENCH + ["plot", str(out), *figure])
    print(f"\nlan-buffers{' (--replications 2)' if quick else ''} on 2 workers")
    print(f"  {'':<28} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    for name, (wall, cpu, mb) in [("unstored", plain), ("--out DIR", stored)]:
        print(f"  {name:<28} {wall:8.2f} {cpu:8.2f} {mb:8.0f}")
    print(
        f"  --out / unstored: wall {stored[0] / plain[0]:.2f}x, CPU {stored[1] / plain[1]:.2f}x, "
        f"memory {stored[2] / plain[2]:.2f}x; {files} files"
    )
    for name, (wall, cpu, mb) in [("cellbench show", show), ("cellbench plot buffer-grid", plot)]:
        print(f"  {name:<28} {wall:8.2f} {cpu:8.2f} {mb:8.0f}")


if __name__ == "__main__":
    main()
