"""Helpers for the real engine's tests: daemons as processes, always stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

CELLBENCH = [sys.executable, "-m", "cellbench"]


class Daemons:
    """Processes started by a test; ``stop()`` ends every one (TERM, then KILL)."""

    def __init__(self, logdir: Path):
        self.logdir = logdir
        self.procs: list[subprocess.Popen] = []
        self.by_name: dict[str, subprocess.Popen] = {}

    def start(self, name: str, args: list[str], netns: str | None = None) -> subprocess.Popen:
        log = self.logdir / f"daemon-{name}-{len(self.procs)}.log"
        prefix = ["ip", "netns", "exec", netns] if netns else []
        with open(log, "wb") as f:
            p = subprocess.Popen(
                prefix + CELLBENCH + ["daemon", "--name", name, *args],
                stdout=f,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(p)
        self.by_name[name] = p
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            if "ready" in text:
                return p
            if p.poll() is not None:
                raise RuntimeError(f"daemon {name} exited {p.returncode}:\n{text}")
            time.sleep(0.1)
        raise RuntimeError(f"daemon {name} not ready in 60 s:\n{log.read_text()}")

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line contains ``text`` (to check nothing is left behind)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append(int(d.name))
    return found


def cellbench(*args: str, netns: str | None = None, cwd: Path | None = None, timeout: int = 120):
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.run(
        prefix + CELLBENCH + list(args),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


#: The star network's addresses: b - a - c, a forwarding between its two links.
STAR = {"a": "10.77.1.1", "b": "10.77.1.2", "c": "10.77.2.2"}
#: a's address on its link to c (c's gateway).
STAR_A_TO_C = "10.77.2.1"


def _ip(*args: str, netns: str | None = None) -> None:
    cmd = ["ip", *(["-n", netns] if netns else []), *args]
    subprocess.run(cmd, check=True, capture_output=True)


def netns_list() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


@contextlib.contextmanager
def star_network(tag: str, tbf_mbps: float | None = None) -> Iterator[dict[str, str]]:
    """Namespaces a, b, c named with ``tag``: b - a - c over veth pairs, with a tbf of
    ``tbf_mbps`` on a's egress towards c. Yields {host: namespace}; removes them all
    on the way out, whatever happened (deleting a namespace deletes its veths)."""
    ns = {h: f"cb{h}{tag}" for h in "abc"}
    if any(n in netns_list() for n in ns.values()):
        raise RuntimeError(f"namespaces {sorted(ns.values())} exist already")
    try:
        for n in ns.values():
            _ip("netns", "add", n)
            _ip("link", "set", "lo", "up", netns=n)
        _ip("link", "add", f"vab{tag}", "netns", ns["a"], "type", "veth", "peer", "name",
            f"vba{tag}", "netns", ns["b"])  # fmt: skip
        _ip("link", "add", f"vac{tag}", "netns", ns["a"], "type", "veth", "peer", "name",
            f"vca{tag}", "netns", ns["c"])  # fmt: skip
        for n, dev, addr in (
            (ns["a"], f"vab{tag}", STAR["a"]),
            (ns["b"], f"vba{tag}", STAR["b"]),
            (ns["a"], f"vac{tag}", STAR_A_TO_C),
            (ns["c"], f"vca{tag}", STAR["c"]),
        ):
            _ip("addr", "add", f"{addr}/24", "dev", dev, netns=n)
            _ip("link", "set", dev, "up", netns=n)
        _ip("route", "add", "10.77.2.0/24", "via", STAR["a"], netns=ns["b"])
        _ip("route", "add", "10.77.1.0/24", "via", STAR_A_TO_C, netns=ns["c"])
        subprocess.run(
            ["ip", "netns", "exec", ns["a"], "sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True
        )
        if tbf_mbps is not None:
            subprocess.run(
                ["tc", "-n", ns["a"], "qdisc", "add", "dev", f"vac{tag}", "root", "tbf", "rate",
                 f"{tbf_mbps}mbit", "burst", "64kb", "latency", "20ms"],
                check=True,
            )  # fmt: skip
        yield ns
    finally:
        for n in ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


#: The star network's addresses, for the daemons' --allow.
STAR_NETWORK = "10.77.0.0/16"


def start_star_daemons(
    daemons: Daemons, ns: dict[str, str], creds: Path, port: int, extra: tuple[str, ...] = ()
) -> str:
    """A daemon per namespace, a's hosting the scheduler; returns the scheduler's address.
    ``extra``: more daemon options (e.g. --max-rate)."""
    sched = f"tls://{STAR['a']}:{port}"
    common = ["--credentials", str(creds), "--allow", STAR_NETWORK, *extra]
    daemons.start("a", ["--listen", f"{STAR['a']}:{port}", *common], ns["a"])
    for h in "bc":
        daemons.start(h, ["--listen", STAR[h], "--scheduler", sched, *common], ns[h])
    return sched
