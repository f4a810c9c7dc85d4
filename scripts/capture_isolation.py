"""The isolating runs of docs/mechanisms.md ("Many TCPs through one congested port"):
four DEC Alphas on their own OC-3c links, 48 KB-window bulk TCP for 5 s into one OC-3c
port of 256 cells, each run changing one thing. Prints one line per run: Jain's index,
the starved connections, each sender's goodput (Mb/s) / timeouts / longest backoff, and
the congested port's lost, wasted and idle.

    PYTHONPATH=python python3 scripts/capture_isolation.py
"""

from __future__ import annotations

from cellbench import _native
from cellbench.experiment.plan import make_plan


def experiment(
    n=4,
    order=None,
    dist=None,
    flavour="reno",
    mtu=9180,
    buffer=256,
    policy="tail-drop",
    window="48K",
    seconds=5,
    phy="oc3c",
    dstphy="oc3c",
) -> str:
    order = order or list(range(n))
    hosts = " ".join(f"host h{i} {{ distance_m = {dist[i] if dist else 20}; }}" for i in range(n))
    full = "type = full (blocksize=64K, duration={s}); protocol = tcp (window={w});"
    sink = "type = sink (blocksize=64K); protocol = tcp (window={w});"
    tests = [
        f"test s{i} {{ {full.format(s=seconds, w=window)} own = h{i}:{7000 + i}; "
        f"peer = dst:{7000 + i}; }}"
        for i in order
    ] + [
        f"test k{i} {{ {sink.format(w=window)} own = dst:{7000 + i}; peer = h{i}:{7000 + i}; }}"
        for i in order
    ]
    return (
        f"testbed lan {{ encap = llc-snap; mtu = {mtu};\n"
        f"  defaults {{ profile = alpha-3000; phy = {phy}; flavour = {flavour}; }}\n"
        f"  switch {{ buffer_cells = {buffer}; policy = {policy}; }}\n"
        f"  {hosts} host dst {{ phy = {dstphy}; }} }}\n"
        "cluster { parallel {\n" + "\n".join(tests) + "\n} }\n"
    )  # fmt: skip


def run(label: str, per_cell: bool = False, seed: int = 1, **kw) -> dict:
    plan = make_plan(experiment(**kw), file="capture.netspec", seed=seed)
    spec = next(iter(plan.tasks())).spec
    out = _native.simulate({**spec, "per_cell": per_cell})
    senders = [c for c in out["connections"] if c["bytes"] > 0]
    each = " ".join(
        f"{c['transmitter']} {c['goodput_bps'] / 1e6:.2f} ({c['timeouts']}/{c['max_backoff']})"
        for c in sorted(senders, key=lambda c: c["transmitter"])
    )
    port = max(out["ports"], key=lambda p: p["cells_lost"])
    print(
        f"{label:52s} Jain {out['fairness_jain'] or 0:.2f}, {len(out['starved'])} starved | "
        f"{each} | lost {port['cells_lost']}, wasted {port['cells_wasted']}, "
        f"idle {port['idle_s'] or 0:.2f} s of {out['sim_seconds']:.1f} s"
    )
    return out


if __name__ == "__main__":
    run("as above")
    run("the per-cell network", per_cell=True)
    run("tests listed h3..h0", order=[3, 2, 1, 0])
    run("fibre 433, 291, 137, 20 m", dist=[433, 291, 137, 20])
    for seed in (2, 4, 5):
        run(f"seed {seed}", seed=seed)
    run("sunos411 (4.3BSD-Tahoe)", flavour="sunos411")
    run("modern (NewReno, SACK, 200 ms RTO floor)", flavour="modern")
    run("window 8 KB", window="8K")
    run("PPD", policy="ppd")
    run("buffer 1024", buffer=1024)
    run("buffer 4096", buffer=4096)
    run("two senders on TAXI into the OC-3c port", n=2, phy="taxi100")
