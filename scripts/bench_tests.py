"""The Python test suite's wall and CPU time, at one or more worker counts, side by side.

    python scripts/bench_tests.py [--workers W ...] [-- PYTEST ARGS...]

Runs `python3 -m pytest -q -n W --dist loadgroup` (as scripts/test.sh does; W = 0 is
pytest without xdist: one process) once per W and prints, per run, the wall time,
the CPU time of pytest and every process it started (user + system, from the kernel's
accounting of reaped children: xdist's workers, the CLI runs, the daemons), the CPU
per wall second (the cores the suite kept busy), the load average before and after,
and pytest's summary line; then each run's ratio to the first. The machine (cores,
CPU model) is printed beside the numbers: on a shared machine the wall time and its
ratios depend on what else runs, the CPU time much less. Arguments after `--` go to
pytest (a few files, `-k`, `--durations=20`), so a part of the suite can be watched.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}"


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def summary(out: str) -> str:
    """pytest's last summary line ("N passed, M xfailed in S s")."""
    lines = [line.strip("= ") for line in out.splitlines() if " in " in line and "=" in line]
    lines += [line for line in out.splitlines() if line.strip() and " in " in line]
    return lines[-1].strip() if lines else "(no summary line)"


def run(workers: str, args: list[str]) -> dict:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if workers != "0":
        cmd += ["-n", workers, "--dist", "loadgroup"]
    cmd += args
    load0 = os.getloadavg()[0]
    cpu0 = children_cpu()
    wall0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - wall0
    cpu = children_cpu() - cpu0
    if p.returncode not in (0, 1):  # 1: some tests failed, still a timing
        sys.exit(f"bench_tests: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    return {
        "workers": workers,
        "wall": wall,
        "cpu": cpu,
        "load": (load0, os.getloadavg()[0]),
        "summary": summary(p.stdout),
        "durations": [
            line
            for line in p.stdout.splitlines()
            if line[:1].isdigit() and (" call " in line or " setup " in line)
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--workers",
        nargs="+",
        default=["auto"],
        help="pytest-xdist worker counts to time (0: no xdist); default auto",
    )
    ns, rest = ap.parse_known_args()
    args = rest[1:] if rest[:1] == ["--"] else rest
    print(f"machine: {machine()}")
    print(f"pytest args: {' '.join(args) or '(the whole suite)'}")
    rows = [run(w, args) for w in ns.workers]
    print(
        f"{'workers':>8} {'wall s':>8} {'CPU s':>8} {'CPU/wall':>8} "
        f"{'load before-after':>18}  summary"
    )
    for r in rows:
        load = f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"
        print(
            f"{r['workers']:>8} {r['wall']:8.1f} {r['cpu']:8.1f} {r['cpu'] / r['wall']:8.2f} "
            f"{load:>18}  {r['summary']}"
        )
    if len(rows) > 1:
        base = rows[0]
        print(f"ratios to workers={base['workers']}:")
        for r in rows[1:]:
            print(
                f"  workers={r['workers']}: wall {r['wall'] / base['wall']:.2f}x, "
                f"CPU {r['cpu'] / base['cpu']:.2f}x"
            )
    for r in rows:
        if r["durations"]:
            print(f"slowest (workers={r['workers']}):")
            print("\n".join("  " + line for line in r["durations"]))


if __name__ == "__main__":
    main()
