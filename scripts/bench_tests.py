"""The Python test suite's wall and CPU time, at one or more worker counts, side by side.

    python scripts/bench_tests.py [--workers W ...] [-- PYTEST ARGS...]

Runs the suite as scripts/test.sh does, once per W: `pytest -n W -m "not system and
not alone"`, then the marked tests one at a time (`-m "system or alone"`,
tests/conftest.py); W = 0 is one pytest without xdist, every test in one process.
Per W it prints the wall time, the CPU time of pytest and every process it started
(user + system, from the kernel's accounting of reaped children: xdist's workers, the
CLI runs, the daemons), the CPU per wall second (the cores the suite kept busy), the
load average before and after, and pytest's summary line(s); then each W's ratio to
the first. The machine (cores, CPU model) is printed beside the numbers: on a shared
machine the wall time and its ratios depend on what else runs, the CPU time much
less. Arguments after `--` go to pytest (a few files, `-k`, `--durations=20`), so a
part of the suite can be watched.
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


#: pytest's exit codes that still give a timing: 1 some tests failed, 5 none selected
#: (a file given after -- may hold no marked test).
TIMED = (0, 1, 5)


def run(workers: str, args: list[str]) -> dict:
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if workers == "0":
        cmds = [base + args]
    else:
        cmds = [
            base + ["-n", workers, "-m", "not system and not alone"] + args,
            base + ["-m", "system or alone"] + args,
        ]
    load0 = os.getloadavg()[0]
    cpu0 = children_cpu()
    wall0 = time.perf_counter()
    outs = []
    for cmd in cmds:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode not in TIMED:
            sys.exit(f"bench_tests: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
        outs.append(p.stdout)
    wall = time.perf_counter() - wall0
    cpu = children_cpu() - cpu0
    return {
        "workers": workers,
        "wall": wall,
        "cpu": cpu,
        "load": (load0, os.getloadavg()[0]),
        "summary": " + ".join(summary(out) for out in outs),
        "durations": [
            line
            for out in outs
            for line in out.splitlines()
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
