"""The port-phase experiment of docs/mechanisms.md ("Determinism or the network? What
holds the port"): the capture runs in the per-cell network, with the ports as the model
has them and, where the native module was built with scripts/port_slot_clock.patch
applied, with each port sending on a slot clock of its own (phases drawn per port from
$CB_SLOT_SEED; without the patch the variable changes nothing).

    PYTHONPATH=python python3 scripts/capture_phase.py            # the model as it is
    git apply scripts/port_slot_clock.patch && bash scripts/dev-build.sh
    for s in 1 2 3; do CB_SLOT_SEED=$s PYTHONPATH=python python3 scripts/capture_phase.py; done
    git apply -R scripts/port_slot_clock.patch && bash scripts/dev-build.sh

Prints per run the senders' sum, Jain's index and the starved count, then each sender's
goodput (Mb/s), cells lost and timeouts; some 15 s a port phase.
"""

from __future__ import annotations

import os
from pathlib import Path

from capture_isolation import experiment

from cellbench import _native
from cellbench.experiment.plan import make_plan

STUDIES = Path(__file__).resolve().parent.parent / "python" / "cellbench" / "reproduce"


def runs(source: str, file: str, seed: int = 1, replications: int = 1, sets=()):
    plan = make_plan(source, file=file, seed=seed, replications=replications, sets=list(sets))
    for task in plan.tasks():
        out = _native.simulate({**task.spec, "per_cell": True})
        yield task, out


def show(label: str, out: dict) -> None:
    senders = [c for c in out["connections"] if c["bytes"] > 0]
    each = " ".join(
        f"{c['transmitter']} {c['goodput_bps'] / 1e6:.2f} ({c['cells_lost']}/{c['timeouts']})"
        for c in senders
    )
    total = sum(c["goodput_bps"] for c in senders) / 1e6
    jain = out["fairness_jain"] or 0
    print(f"{label:34s} sum {total:6.1f}, Jain {jain:.2f}, {len(out['starved'])} starved | {each}")


if __name__ == "__main__":
    print(f"port clock seed: {os.environ.get('CB_SLOT_SEED', 'none (no clock)')}")
    for seed in range(1, 7):
        for _, s in runs(experiment(n=2), "capture.netspec", seed=seed):
            show(f"two senders, seed {seed}", s)
    for seed in range(1, 4):
        for _, s in runs(experiment(), "capture.netspec", seed=seed):
            show(f"four senders, seed {seed}", s)
    tcp = "tcp (window=64K)"
    credits = STUDIES / "wan-contention-credits.netspec"
    for task, s in runs(credits, None, replications=4, sets=[f"local={tcp}", f"remote={tcp}"]):
        show(f"credits tcp-tcp, replication {task.replication}", s)
    pairs = STUDIES / "wan-contention-five-pairs.netspec"
    for task, s in runs(pairs, None, replications=3):
        show(f"five pairs, replication {task.replication}", s)
    load = STUDIES / "wan-contention-offered-load.netspec"
    sums = []
    for _, out in runs(load, None):
        senders = [c for c in out["connections"] if c["bytes"] > 0]
        lost = sum(c["cells_lost"] for c in senders)
        sums.append(f"{sum(c['throughput_bps'] for c in senders) / 1e6:.1f}/{lost}")
    print("offered load 6 to 90 Mb/s, carried Mb/s / cells lost:", " ".join(sums))
