"""Helpers for the real engine's tests: daemons as processes, always stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

CELLBENCH = [sys.executable, "-m", "cellbench"]


class Daemons:
    """Processes started by a test; ``stop()`` ends every one (TERM, then KILL)."""

    def __init__(self, logdir: Path):
        self.logdir = logdir
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, args: list[str], netns: str | None = None) -> subprocess.Popen:
        log = self.logdir / f"daemon-{name}.log"
        prefix = ["ip", "netns", "exec", netns] if netns else []
        with open(log, "wb") as f:
            p = subprocess.Popen(
                prefix + CELLBENCH + ["daemon", "--name", name, *args],
                stdout=f,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(p)
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
