#!/usr/bin/env python3
"""The emulator (``--engine emu``) against its ceilings and the simulator, side by side.

Run as root: ``python3 scripts/bench_emu.py [MBYTES [RUNS [abr|flood]]]`` (default 16 MB,
OC-12c moving four times as much; 1 emulated run of each path; ``abr``: the ABR case alone;
``flood``: the UDP flood case alone, RUNS times), or
``python3 scripts/bench_emu.py --load-table [--extra 0,2] [--cases europe-vp,abr] [--runs N]``
for the lateness against the machine's load (below). Prints, in one run:

- an unconstrained OC-3c path and an unconstrained OC-12c path (two hosts of that
  phy with no gap between PDUs, one 256-cell port, 1 MB windows; the kernel's
  default congestion control):
  Linux TCP's goodput against the path's TCP payload ceiling (``cellbench calc
  layers --phy oc3c`` / ``oc12c``) and the simulator's `modern` TCP, with the
  emulator's lateness p50/p99/max, whether it kept real time (p99 within one cell
  time of the phy), what the late PDUs waited for, and its CPU cost per emulated
  Gb/s of cells (and how much of it the datagrams' own reads and writes are);
- the wan-window path (8.8 ms round trip) with 64 KB windows: Linux against the
  window/RTT bound and the simulator's `modern` TCP, and the window its kernel ran
  (the most in flight over the shortest round trip, TCP_INFO) with its limit;
- the unconstrained OC-3c path as an ABR circuit (issue 29) through a switch running
  ERICA (target 0.9): RM cells every 32 cells and the source held to its ACR; Linux
  against ERICA's share (0.9 of the cell rate) and the simulator, the emulator's own ABR
  fields (ACR, RM cells sent/returned/lost, time at MCR, as stored for its runs), and a
  verdict: whether the emulator kept real time with the RM cells flowing.
- ``flood``: a UDP source writing 8 KB datagrams as fast as its kernel takes them (far
  above OC-3c) beside a 3 s TCP transfer between two other OC-3c hosts, and the TCP
  transfer alone: the emulator's lateness p50/p99/max and verdict, the datagrams the
  source wrote, those the emulator read (``CELLBENCH_EMU_REPORT``) and those its host's
  kernel dropped at its TUN device while the adapter's interface queue was full
  (``emu/ifq.rs``), and the TCP transfer's throughput beside the flood against alone.

``--load-table``: each case (europe-vp's 19.45 µs row as ``cellbench reproduce europe-vp
--engine emu`` runs it; the ABR case above) RUNS times at the load present and under each
``--extra`` number of busy-loop processes this script starts beside it and stops after
(``--extra 0,2``: none, then two, so "load 2 on 2 cores" above what else runs is
reproducible), printing one line per run: the load average before it, the runnable
tasks sampled through it (``procs_running`` of /proc/stat, the emulator's own thread
and the busy loops included), lateness p50/p99/max against one cell time of the
slowest link, the verdict (real time: p99 within that cell time), and from the
emulator's whole report (``CELLBENCH_EMU_REPORT``) its wake-ups' lateness p99, the
largest spin margin it took, and the late PDUs by what its thread was doing.

A benchmark, not a test: real-time figures depend on the machine and its load, which is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

CELLBENCH = [sys.executable, "-m", "cellbench"]

UNCONSTRAINED = """
testbed {{
    # alpha-3000: the simulator's fastest host (docs/design.md §6.3). No gap between PDUs: the
    # SBus adapter's 52 µs would cap a 9180-byte MTU at 91% of OC-3c, 72% of OC-12c.
    host a {{ phy = {phy}; flavour = modern; profile = alpha-3000; pdu_gap_us = 0; }}
    host b {{ phy = {phy}; flavour = modern; profile = alpha-3000; pdu_gap_us = 0; }}
}}
cluster {{
    test t {{ type = full (blocksize=64K, nbytes={mb}M); protocol = tcp (window=1M);
             own = a:5001; peer = b:5001; }}
    test r {{ type = sink (blocksize=64K); protocol = tcp (window=1M);
             own = b:5001; peer = a:5001; }}
}}
"""

ABR = """
testbed {{
    host a {{ phy = oc3c; flavour = modern; profile = alpha-3000; pdu_gap_us = 0; }}
    host b {{ phy = oc3c; flavour = modern; profile = alpha-3000; pdu_gap_us = 0; }}
    switch {{ abr = erica (target = 0.9, interval_us = 1000); }}
}}
cluster {{
    test t {{ type = full (blocksize=64K, nbytes={mb}M); protocol = tcp (window=1M);
             service = abr (icr = 10M); own = a:5001; peer = b:5001; }}
    test r {{ type = sink (blocksize=64K); protocol = tcp (window=1M);
             own = b:5001; peer = a:5001; }}
}}
"""

WAN = """
testbed wan-window {{
    host alpha-west {{ flavour = modern; }}
    host alpha-east {{ flavour = modern; }}
}}
cluster {{
    test t {{ type = full (blocksize=64K, nbytes={mb}M); protocol = tcp (window=64K);
             own = alpha-west:5001; peer = alpha-east:5001; }}
    test r {{ type = sink (blocksize=64K); protocol = tcp (window=64K);
             own = alpha-east:5001; peer = alpha-west:5001; }}
}}
"""


def run(d: Path, name: str, text: str, *args: str) -> tuple[pd.Series, pd.DataFrame]:
    f = d / f"{name}.netspec"
    f.write_text(text)
    out = d / f"{name}{'-'.join(args)}.result"
    subprocess.run(
        CELLBENCH + ["run", str(f), "--out", str(out), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return pd.read_parquet(out / "runs").iloc[0], pd.read_parquet(out / "ports")


def tcp_ceiling(phy: str) -> float:
    r = subprocess.run(
        CELLBENCH + ["calc", "layers", "--phy", phy, "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(x["mbps"] for x in json.loads(r.stdout) if x["layer"] == "tcp_payload") * 1e6


#: One cell time of each benchmarked phy, µs (53 bytes at its ATM cell rate).
CELL_US = {"oc3c": 424 / 149.76, "oc12c": 424 / 599.04}


def unconstrained(d: Path, phy: str, mb: int, reps: int) -> None:
    """Two hosts of `phy` through one port: the emulator (`reps` runs) against the ceiling
    and the simulator (deterministic: one run)."""
    s, _ = run(d, phy, UNCONSTRAINED.format(phy=phy, mb=mb))
    ceiling = tcp_ceiling(phy)
    print(f"## unconstrained {phy} path, {mb} MB, 1 MB windows")
    print(
        f"simulator (modern): goodput {s['goodput_bps'] / 1e6:.2f} Mb/s = "
        f"{s['goodput_bps'] / ceiling:.1%} of the {phy} TCP payload ceiling "
        f"{ceiling / 1e6:.2f} Mb/s; cells lost {s['cells_lost']}, retransmitted segments "
        f"{s['retransmitted_segments']}"
    )
    for rep in range(reps):
        load = os.getloadavg()[0]
        e, ports = run(d, f"{phy}{rep}", UNCONSTRAINED.format(phy=phy, mb=mb), "--engine", "emu")
        seconds = max(e["ended_s"] - e["started_s"], 1e-9)
        cell_gbps = ports["cells_out"].sum() * 424 / seconds
        per_gbps = 1 / seconds / max(cell_gbps / 1e9, 1e-12)
        print(
            f"emu run {rep + 1} (load {load:.1f}), Linux {e['kernel_cc']}: goodput "
            f"{e['goodput_bps'] / 1e6:.2f} Mb/s = {e['goodput_bps'] / ceiling:.1%} of the "
            f"ceiling, emu/sim {e['goodput_bps'] / s['goodput_bps']:.3f} (sender's rate "
            f"{e['throughput_bps'] / 1e6:.2f} Mb/s); cells lost {e['cells_lost']}, "
            f"retransmits {e['retransmits']}"
        )
        late = {k: e[f"emu_late_{k}"] for k in ("write", "read", "sleep", "other")}
        print(
            f"  lateness p50 {e['lateness_p50_us']:.2f} µs, p99 {e['lateness_p99_us']:.2f} µs, "
            f"max {e['lateness_max_us']:.2f} µs (one {phy} cell: {CELL_US[phy]:.2f} µs); "
            f"real time: {bool(e['real_time'])}"
        )
        print(
            f"  PDUs later than one cell: {sum(late.values())} of {e['emu_pdus_timed']}, by "
            "what the emulator's thread was doing when each fell due: "
            + ", ".join(f"{k} {n}" for k, n in late.items())
            + f" (the thread was preempted {e['emu_preemptions']} times); each TUN write "
            f"p50 {e['emu_write_p50_us']:.2f} µs, p99 {e['emu_write_p99_us']:.2f} µs"
        )
        work = e["emu_read_seconds"] + e["emu_write_seconds"]
        print(
            f"  CPU: {e['emu_cpu_seconds']:.3f} s of the emulator's thread in {seconds:.3f} s "
            f"for {cell_gbps / 1e6:.1f} Mb/s of port cells (both ways) = "
            f"{e['emu_cpu_seconds'] * per_gbps:.3f} CPU-s per s per emulated Gb/s of cells; "
            f"of it reading {e['emu_read_seconds']:.3f} s and writing "
            f"{e['emu_write_seconds']:.3f} s (the datagrams' own cost, {work * per_gbps:.3f} "
            "per Gb/s), the rest spinning before cell events"
        )


FLOOD = """
testbed {
    host u { phy = oc3c; }
    host r1 { phy = oc3c; }
    host a { phy = oc3c; }
    host r2 { phy = oc3c; }
}
cluster {
    parallel {
        @UDP@
        test t { type = full (blocksize=64K, duration=3); protocol = tcp (window=48K);
                 own = a:5001; peer = r2:5001; }
        test st { type = sink (blocksize=64K); protocol = tcp (window=48K);
                  own = r2:5001; peer = a:5001; }
    }
}
"""
FLOOD_UDP = """test flood { type = full (blocksize=8K, duration=3); protocol = udp;
                     own = u:5002; peer = r1:5002; }
        test sf { type = sink (blocksize=8K); protocol = udp; own = r1:5002; peer = u:5002; }"""


def flood(d: Path, reps: int) -> None:
    """The UDP flood beside a TCP transfer, and the TCP transfer alone, `reps` times."""
    alone = FLOOD.replace("@UDP@", "")
    print("## UDP flood (8 KB datagrams, as fast as the kernel takes them) beside TCP, oc3c, 3 s")
    for rep in range(reps):
        load = os.getloadavg()[0]
        report = d / f"flood{rep}.jsonl"
        os.environ["CELLBENCH_EMU_REPORT"] = str(report)
        try:
            out = d / f"flood{rep}.result"
            f = d / "flood.netspec"
            f.write_text(FLOOD.replace("@UDP@", FLOOD_UDP))
            subprocess.run(
                CELLBENCH + ["run", str(f), "--out", str(out), "--engine", "emu"],
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            del os.environ["CELLBENCH_EMU_REPORT"]
        rows = pd.read_parquet(out / "runs").set_index("test")
        u, t = rows.loc["flood"], rows.loc["t"]
        r = json.loads(report.read_text().splitlines()[-1])
        solo, _ = run(d, f"alone{rep}", alone, "--engine", "emu")
        dropped = u.get("sender_tx_dropped")
        print(
            f"run {rep + 1} (load {load:.1f}): lateness p50 {u['lateness_p50_us']:.2f} µs, "
            f"p99 {u['lateness_p99_us']:.2f} µs, max {u['lateness_max_us']:.1f} µs (one oc3c "
            f"cell: {CELL_US['oc3c']:.2f} µs); real time: {bool(u['real_time'])}"
        )
        print(
            f"  the source wrote {int(u['datagrams_sent'])} datagrams; the emulator read "
            f"{r['datagrams']['read']} of all hosts' in {r['read_seconds']:.3f} s; the source's "
            f"kernel dropped {dropped} at its TUN device; the modelled interface queue "
            f"{int(u['pdus_dropped_at_adapter'])}; {int(u['datagrams_received'])} arrived"
        )
        print(
            f"  TCP beside the flood {t['throughput_bps'] / 1e6:.2f} Mb/s "
            f"({t['retransmits']} retransmits), alone {solo['throughput_bps'] / 1e6:.2f} Mb/s "
            f"(lateness p99 {solo['lateness_p99_us']:.2f} µs, max {solo['lateness_max_us']:.1f} µs)"
        )


def abr(d: Path, mb: int) -> None:
    """TCP over an ABR circuit through an ERICA port, emulated and simulated."""
    s, _ = run(d, "abr", ABR.format(mb=mb))
    e, _ = run(d, "abr-emu", ABR.format(mb=mb), "--engine", "emu")
    share = 0.9 * tcp_ceiling("oc3c")
    print(f"## ABR over oc3c, ERICA target 0.9, {mb} MB, Linux {e['kernel_cc']}")
    print(
        f"emu {e['goodput_bps'] / 1e6:.2f} Mb/s = {e['goodput_bps'] / share:.1%} of ERICA's "
        f"share of the TCP payload ceiling ({share / 1e6:.2f} Mb/s); simulator (modern) "
        f"{s['goodput_bps'] / 1e6:.2f} Mb/s (ACR {s['abr_acr_bps'] / 1e6:.2f} Mb/s of cells, "
        f"{s['abr_frm_sent']} RM cells)"
    )
    # The emulator's own ABR fields (stored like the simulator's): the RM cells it
    # carried and where its ACR ended.
    rm = e.get("abr_frm_sent")
    print(
        f"emu ABR source: ACR {e['abr_acr_bps'] / 1e6:.2f} Mb/s of cells (lowest "
        f"{e['abr_acr_min_bps'] / 1e6:.2f}), {rm} RM cells sent, {e['abr_brm_returned']} "
        f"returned, {e['abr_rm_lost']} lost, {e['abr_time_at_mcr_s']:.3f} s at MCR; lateness "
        f"p50 {e['lateness_p50_us']:.2f} µs, p99 {e['lateness_p99_us']:.2f} µs"
        if rm is not None
        else "emu ABR source: NO ABR fields in the emulator's row"
    )
    kept = bool(e["real_time"]) and bool(rm)
    print(
        f"verdict: {'kept' if kept else 'did NOT keep'} real time at OC-3c with RM cells "
        f"(real time {bool(e['real_time'])}: p99 lateness within one cell time; RM cells {rm})"
    )


@contextmanager
def busy_loops(n: int):
    """`n` processes spinning in a loop beside the benchmark (the scheduler places them),
    killed on the way out whatever ended it."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0 if n else 0.0)  # let them reach the run queues
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def procs_running() -> int:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("procs_running "):
            return int(line.split()[1])
    return 0


class RunQueue:
    """The runnable tasks sampled every 50 ms while a run lasts: its mean and peak."""

    def __init__(self):
        self.samples: list[int] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.done.wait(0.05):
            self.samples.append(procs_running())

    def __enter__(self) -> RunQueue:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def mean(self) -> float:
        return sum(self.samples) / max(len(self.samples), 1)


def europe_vp_row(d: Path, mb: int, name: str) -> pd.Series:
    """europe-vp's 19.45 µs row (the emulated study's default case), emulated only."""
    out = d / name
    subprocess.run(
        CELLBENCH
        + ["reproduce", "europe-vp", "--engine", "emu", "--set", "spacing_us=19.45"]
        + ["--no-sim", "--out", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return pd.read_parquet(out / "runs").iloc[0]


def load_table(mb: int, runs: int, extra: list[int], cases: list[str]) -> None:
    """Each case's lateness at the load present and under each number of extra busy loops."""
    cell = {"europe-vp": "europe-vp 19.45 µs row (E3 VP, 4 s)", "abr": f"ABR oc3c {mb} MB"}
    print(
        "case              extra  load1  runq  p50 µs  p99 µs     max µs  cell µs  verdict"
        "        wake p99 µs  margin µs  read p99 µs  guard µs  late (write/read/sleep/other)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        report = d / "reports.jsonl"
        os.environ["CELLBENCH_EMU_REPORT"] = str(report)
        for case in cases:
            for n in extra:
                with busy_loops(n):
                    for rep in range(runs):
                        report.unlink(missing_ok=True)
                        load = os.getloadavg()[0]
                        with RunQueue() as q:
                            if case == "europe-vp":
                                e = europe_vp_row(d, mb, f"ev{n}-{rep}")
                            else:
                                e, _ = run(d, f"abr{n}-{rep}", ABR.format(mb=mb), "--engine", "emu")
                        r = json.loads(report.read_text().splitlines()[-1])
                        # (A build before the wake-up figures has none.)
                        wake = r.get("wake_us", {}).get("p99", float("nan"))
                        margin = r.get("spin_margin_max_us", 100.0)
                        read = r.get("read_us", {}).get("p99", float("nan"))
                        guard = r.get("read_guard_max_us", 12.0)
                        late = r["late_pdus"]
                        verdict = "real time" if e["real_time"] else "NOT real time"
                        print(
                            f"{case:<17} {n:>5} {load:>6.1f} {q.mean():>5.1f} "
                            f"{e['lateness_p50_us']:>7.2f} {e['lateness_p99_us']:>7.2f} "
                            f"{e['lateness_max_us']:>10.1f} {r['slowest_cell_time_us']:>8.2f}  "
                            f"{verdict:<14} {wake:>11.1f} {margin:>10.0f} "
                            f"{read:>12.1f} {guard:>9.1f}  "
                            f"{late['write']}/{late['read']}/{late['sleep']}/{late['other']} "
                            f"of {r['pdus_timed']}",
                            flush=True,
                        )
    print("# cases: " + "; ".join(f"{c}: {cell[c]}" for c in cases))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mbytes", nargs="?", type=int, default=16)
    ap.add_argument("runs", nargs="?", type=int, default=1)
    ap.add_argument("case", nargs="?", choices=["abr", "flood"], help="that case alone")
    ap.add_argument("--load-table", action="store_true", help="lateness against load")
    ap.add_argument("--extra", default="0,2", help="busy loops to add, per row (0,2)")
    ap.add_argument("--cases", default="europe-vp,abr", help="europe-vp, abr")
    a = ap.parse_args()
    mb, reps, only_abr = a.mbytes, a.runs, a.case == "abr"
    if os.geteuid() != 0:
        print("bench_emu.py: run as root (the emulator makes network namespaces)")
        return 2
    from cellbench.engines.emu import netns

    load = os.getloadavg()
    cpu, rps = netns.cpu_layout()
    throttle = Path("/proc/sys/kernel/sched_rt_runtime_us").read_text().strip()
    print(
        f"# load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores; "
        f"the emulator's loop on CPU {cpu}, the hosts' input steered to CPUs {rps}; "
        f"sched_rt_runtime_us {throttle} (of 1 s: a loop spinning more is throttled)"
    )
    if a.load_table:
        cases = a.cases.split(",")
        bad = [c for c in cases if c not in ("europe-vp", "abr")]
        if bad:
            ap.error(f"--cases {a.cases}: no case {bad[0]!r} (europe-vp, abr)")
        load_table(mb, reps, [int(x) for x in a.extra.split(",")], cases)
        print(f"# load average after: {os.getloadavg()[0]:.1f}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if only_abr:
            abr(d, mb)
            return 0
        if a.case == "flood":
            flood(d, reps)
            return 0
        # OC-12c moves four times the bytes in about the same time.
        for phy, nbytes in (("oc3c", mb), ("oc12c", 4 * mb)):
            unconstrained(d, phy, nbytes, reps)
        e, _ = run(d, "wan", WAN.format(mb=mb // 4 or 1), "--engine", "emu")
        s, _ = run(d, "wan", WAN.format(mb=mb // 4 or 1))
        bound = 65536 * 8 / 8.8e-3
        print(f"## wan-window, 64 KB windows, {mb // 4 or 1} MB, Linux {e['kernel_cc']}")
        ratio = e["throughput_bps"] / s["throughput_bps"]
        print(
            f"emu {e['throughput_bps'] / 1e6:8.2f} Mb/s = {e['throughput_bps'] / bound:6.1%} of "
            f"window/RTT {bound / 1e6:.2f} Mb/s; simulator (modern) "
            f"{s['throughput_bps'] / 1e6:.2f} Mb/s; emu/sim {ratio:.3f}; "
            f"lateness p99 {e['lateness_p99_us']:.2f} µs"
        )
        # The window the kernels ran (TCP_INFO), as the limit's evidence reads it.
        kept = e["peak_flight_bytes"] * 8 / e["min_rtt_s"]
        print(
            f"  the kernel: {e['peak_flight_bytes']} B in flight at most, shortest RTT "
            f"{e['min_rtt_s'] * 1e3:.2f} ms ({kept / 1e6:.2f} Mb/s), {e['timeouts']} timeouts; "
            f"limited_by {e['limited_by']}"
        )
        abr(d, mb)
    load = os.getloadavg()
    print(f"# load average after: {load[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
