"""The whole lan-buffers study on 1 and 2 workers: wall, CPU, and the speed-up (issue 13).

    python scripts/bench_study.py [--replications N]

Each study runs in a process of its own (`cellbench reproduce lan-buffers --workers W`
as a user runs it, in-process here so that the phases can be told apart). Besides
wall and CPU time it prints the serial CPU (start-up, planning, the table: what
only one core can do) and the parallel CPU (the runs, on every worker), and from
them the wall time an idle 2-core machine would take: serial + parallel / W. On a
shared machine the wall times and their ratio read low (other jobs take the cores);
the CPU figures and the estimate do not depend on what else runs.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
from cellbench.engines import loop
spans = []
execute_plan = loop.execute_plan
def timed(*args, **kwargs):
    start = cpu()
    try:
        return execute_plan(*args, **kwargs)
    finally:
        spans.append(cpu() - start)
loop.execute_plan = timed
from cellbench.cli import main
wall = time.perf_counter()
if main(["reproduce", "lan-buffers", "--workers", sys.argv[1], *sys.argv[2:]]):
    sys.exit("bench_study: cellbench reproduce lan-buffers failed")
wall = time.perf_counter() - wall
print(json.dumps({"wall": wall, "cpu": cpu(), "parallel": sum(spans)}), file=sys.stderr)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def study(workers: int, extra: list[str]) -> dict:
    start, cpu = time.perf_counter(), children_cpu()
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(workers), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    out = json.loads(p.stderr.strip().splitlines()[-1])
    # The whole process: interpreter start-up and imports too.
    out["wall"] = time.perf_counter() - start
    out["cpu"] = children_cpu() - cpu
    out["serial"] = out["cpu"] - out["parallel"]
    out["idle"] = out["serial"] + out["parallel"] / workers
    return out


def main() -> None:
    extra = sys.argv[1:]
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"lan-buffers {' '.join(extra)}: load average before {load}")
    head = ["workers", "wall s", "CPU s", "serial", "parallel", "idle est. s"]
    print("  " + " ".join(f"{h:>11}" for h in head))
    runs = []
    for workers in (1, 2):
        r = study(workers, extra)
        runs.append(r)
        cols = [r["wall"], r["cpu"], r["serial"], r["parallel"], r["idle"]]
        print(f"  {workers:>11} " + " ".join(f"{c:11.2f}" for c in cols))
    one, two = runs
    print(
        f"  speed-up on 2 workers: {one['wall'] / two['wall']:.2f}x measured (wall), "
        f"{one['idle'] / two['idle']:.2f}x on an idle machine (serial + parallel / workers); "
        f"CPU 2/1: {two['cpu'] / one['cpu']:.2f}"
    )


if __name__ == "__main__":
    main()
