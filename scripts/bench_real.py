#!/usr/bin/env python3
"""The real engine against iperf3 on the same network namespaces, side by side.

Run as root (it builds namespaces b - a - c like tests/test_real_netns.py, without a
bottleneck, and removes them at the end): ``python3 scripts/bench_real.py [SECONDS]``.
Needs iperf3 (Debian package iperf3). Prints, in one run:

- one TCP stream a -> b: cellbench's goodput over iperf3's (receiver side both);
- 100 parallel streams a -> b: the aggregates, cellbench over ``iperf3 -P 100``;
- a constant-rate stream at 10,000 blocks/s: the pacer's timing error p50/p99/max;
- 100 connections: from launching the controller to the first byte;

each beside issue 10's target. A benchmark, not a test: the figures depend on the
machine and its load, so it prints the load average before and after. The daemons
run with a --max-rate above anything veth carries, so the cap holds nothing back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from real_fixtures import (  # noqa: E402
    CELLBENCH,
    STAR,
    Daemons,
    cellbench,
    star_network,
    start_star_daemons,
)

PORT = 8786


def _conn(name: str, traffic: str, port: int) -> str:
    return (
        f"test {name}t {{ type = {traffic}; own = a:{port}; peer = b:{port}; }}\n"
        f"test {name}r {{ type = sink (blocksize=128K); own = b:{port}; peer = a:{port}; }}\n"
    )


def _file(tmp: Path, name: str, conns: list[str]) -> Path:
    # The file is checked against the simulator's host model too: alpha-3000's write()
    # (2 µs) lets a block go every 100 µs; the default sparc-ipc's takes 127 µs.
    hosts = "".join(
        f"host {h} {{ address = {a}; profile = alpha-3000; }} " for h, a in STAR.items()
    )
    f = tmp / f"{name}.netspec"
    f.write_text(f"testbed {{ {hosts}}}\ncluster {{ parallel {{\n{''.join(conns)}}} }}\n")
    return f


def _run(tmp: Path, ns: dict, sched: str, creds: Path, f: Path) -> tuple[pd.DataFrame, dict]:
    out = tmp / (f.stem + ".result")
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out), "--overwrite",
        "--scheduler", sched, "--credentials", str(creds), netns=ns["a"], timeout=600,
    )  # fmt: skip
    if r.returncode != 0:
        sys.exit(f"bench: cellbench run failed: {r.stderr}")
    meta = json.loads((out / "result.json").read_text())
    return pd.read_parquet(out / "runs"), meta


def _iperf3(ns: dict, seconds: float, parallel: int) -> float:
    """iperf3's receiver-side throughput a -> b, bit/s."""
    server = subprocess.Popen(
        ["ip", "netns", "exec", ns["b"], "iperf3", "-s", "-1", "-B", STAR["b"]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        r = subprocess.run(
            ["ip", "netns", "exec", ns["a"], "iperf3", "-c", STAR["b"], "-t", str(seconds),
             "-P", str(parallel), "-J"],
            capture_output=True, text=True, timeout=seconds + 60, check=True,
        )  # fmt: skip
        return json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]
    finally:
        server.terminate()
        server.wait()


def _aggregate(rows: pd.DataFrame) -> float:
    """Bytes the sinks received over the span from the first byte to the last."""
    span = rows["ended_s"].max() - rows["started_s"].min()
    return rows["bytes"].sum() * 8 / span


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    if os.geteuid() != 0:
        sys.exit("bench: run as root (it builds network namespaces)")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as d, star_network(f"bench{os.getpid()}") as ns:
        tmp = Path(d)
        creds = tmp / "creds"
        subprocess.run(
            CELLBENCH + ["daemon", "--make-credentials", str(creds), "--hosts", "a,b,c"], check=True
        )
        daemons = Daemons(tmp)
        try:
            sched = start_star_daemons(daemons, ns, creds, PORT, ("--max-rate", "1000000"))
            one = _file(
                tmp, "one", [_conn("s", f"full (blocksize=128K, duration={seconds})", 5001)]
            )
            rows, _ = _run(tmp, ns, sched, creds, one)
            ours1 = rows["goodput_bps"].iloc[0]
            theirs1 = _iperf3(ns, seconds, 1)

            many = [
                _conn(f"p{i}", f"full (blocksize=128K, duration={seconds})", 6000 + i)
                for i in range(100)
            ]
            t_launch = time.time()
            rows, meta = _run(tmp, ns, sched, creds, _file(tmp, "many", many))
            first_byte = meta["real"]["origins"]["0"] + rows["started_s"].min()
            ours100 = _aggregate(rows)
            theirs100 = _iperf3(ns, seconds, 100)

            paced = [_conn("c", "burst (blocksize=1K, period=100, duration=2)", 5002)]
            rows, _ = _run(tmp, ns, sched, creds, _file(tmp, "paced", paced))
            p = rows.iloc[0]
        finally:
            daemons.stop()
    load_after = os.getloadavg()
    print(f"# cellbench --engine real vs iperf3, {seconds:g} s each, namespaces over veth")
    print(
        f"# {os.cpu_count()} CPU(s); load average (1 min) {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after"
    )
    print("# Mb/s = 10^6 bit/s, receiver side for both tools")
    print(f"{'measure':44} {'cellbench':>11} {'iperf3':>11} {'ratio':>7}  target")
    print(
        f"{'1 TCP stream, Mb/s':44} {ours1 / 1e6:11.1f} {theirs1 / 1e6:11.1f} "
        f"{ours1 / theirs1:7.3f}  ratio >= 0.95"
    )
    print(
        f"{'100 parallel streams, aggregate Mb/s':44} {ours100 / 1e6:11.1f} "
        f"{theirs100 / 1e6:11.1f} {ours100 / theirs100:7.3f}  ratio >= 0.90"
    )
    mode = "real-time" if p["pacing_realtime"] else "normal priority"
    for q in ("p50", "p99", "max"):
        target = "<= 50" if q == "p99" else ""
        print(f"{f'10,000 blocks/s: timing error {q}, µs':44} {p[f'timing_error_{q}_us']:11.1f}"
              f" {'':>11} {'':>7}  {target}")  # fmt: skip
    print(
        f"#   pacing at {mode}; late blocks (more than a period) {int(p['late_blocks'])} of "
        f"{int(p['bytes'] // 1024)}; rate {p['throughput_bps'] / p['offered_bps']:.4f} x offered"
    )
    print(
        f"{'100 connections: launch to first byte, s':44} {first_byte - t_launch:11.2f} "
        f"{'':>11} {'':>7}  < 1"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
