#!/usr/bin/env python3
"""Whole runs with ABR circuits against the same runs under UBR: CPU per cell, side by side.

    python3 scripts/bench_abr.py [REPEATS]

Issue 29 asks that a run with ABR circuits cost within 1.5x per cell of the same run
under UBR. Each case is one experiment run as ``cellbench run`` plans it (one call of
the simulator per run, TCP and hosts included), under UBR and under ABR, the ABR one
also forced onto the per-cell reference (the spec's ``per_cell``, what ABR ran on
before ``sim/net/abr_train.rs``):

- ``abr.netspec``: examples/abr.netspec (four TCPs into one ERICA port) and the same
  file with its ``service = abr`` and ``abr = erica`` taken out;
- ``flow-control``: wan-contention's flow-control part (every run of its streams) as
  ``ubr-tail``, ``abr-efci`` and ``abr-er``.

The figure is the CPU time of the simulator calls (best of REPEATS, default 5, per
run) over the cells arriving at switch ports; the machine and its load are printed
with it. A benchmark, not a test.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOW = ROOT / "python/cellbench/reproduce/wan-contention-flow-control.netspec"
ABR = "service=abr (icr = 10M)"
EFCI = "testbed.switch.abr=efci (threshold = 128)"
ERICA = "testbed.switch.abr=erica (target = 0.9, interval_us = 1000)"


def cost(source, sets: list[str], repeats: int, per_cell: bool = False) -> tuple[float, int]:
    """(CPU seconds, cells arriving at ports) over every run of the plan."""
    from cellbench import _native
    from cellbench.experiment.plan import make_plan

    plan = make_plan(source, sets=sets)
    cpu, cells = 0.0, 0
    for r in range(plan.runs_total):
        spec = dict(plan.task(r).spec, per_cell=per_cell)
        best = None
        for _ in range(repeats):
            t = time.process_time()
            out = _native.simulate(spec)
            dt = time.process_time() - t
            best = dt if best is None else min(best, dt)
        cpu += best
        cells += sum(p.get("cells_in", 0) for p in out["ports"])
    return cpu, cells


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    load = os.getloadavg()
    print(
        f"# {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"best of {repeats} per run"
    )
    with tempfile.TemporaryDirectory() as tmp:
        abr = ROOT / "examples/abr.netspec"
        ubr = Path(tmp) / "ubr.netspec"
        text = abr.read_text()
        text = re.sub(r"service = abr \([^)]*\);", "", text)
        ubr.write_text(re.sub(r"abr = erica \([^)]*\);", "", text))
        cases = [
            ("abr.netspec", "UBR", ubr, [], False),
            ("abr.netspec", "ABR ERICA", abr, [], False),
            ("abr.netspec", "ABR ERICA per-cell", abr, [], True),
            ("flow-control", "UBR tail", FLOW, [], False),
            ("flow-control", "ABR EFCI", FLOW, [ABR, EFCI], False),
            ("flow-control", "ABR ERICA", FLOW, [ABR, ERICA], False),
            ("flow-control", "ABR ERICA per-cell", FLOW, [ABR, ERICA], True),
        ]
        print(
            f"{'case':<13} {'service':<19} {'cpu ms':>9} {'cells':>9} {'ns/cell':>8} {'x UBR':>6}"
        )
        ubr_ns = {}
        for case, service, source, sets, per_cell in cases:
            cpu, cells = cost(source, sets, repeats, per_cell)
            ns = cpu * 1e9 / cells
            ubr_ns.setdefault(case, ns)
            print(
                f"{case:<13} {service:<19} {cpu * 1e3:9.1f} {cells:9d} {ns:8.1f} "
                f"{ns / ubr_ns[case]:6.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
