"""Issue 31 §1: nothing a daemon sends back runs on the controller.

An honest daemon for host a hosts the scheduler on loopback; host b's "daemon" is a
stock Dask worker holding b's certificate (what root on b has), whose agents answer
with what the attacker likes: an object whose ``__reduce__`` would create a marker
file when unpickled, or data of the wrong shape. A real controller (``cellbench
run --engine real``) asks them; the test shows the marker file is never made, the
controller refuses in one line naming the host, and nothing is stored.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from real_fixtures import CELLBENCH, Daemons, cellbench, processes_mentioning

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the real engine is Linux-only")

#: The hostile worker: cellbench's agents replaced by the attacker's, then a stock
#: Dask worker named b with b's certificate. argv: credentials, scheduler, attack, marker.
HOSTILE = r"""
import asyncio, json, os, sys, time
from pathlib import Path
from distributed import Security, Worker
from cellbench.real import agents

creds, scheduler, attack, marker = sys.argv[1:5]
d = Path(creds)


class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {marker}",))


def probe():
    if attack == "pickle":
        return Evil()
    if attack == "pickle-in-data":
        return {"time": time.time(), "version": Evil()}
    if attack == "shape":
        return json.dumps({"time": "soon", "version": [1]}).encode()
    raise AssertionError(attack)


agents.probe = probe
sec = Security(require_encryption=True, tls_ca_file=str(d / "ca.pem"),
               tls_worker_cert=str(d / "daemon-b.pem"), tls_worker_key=str(d / "daemon-b-key.pem"))


async def main():
    async with Worker(scheduler, name="b", security=sec, nthreads=2, dashboard_address=":0"):
        print("hostile worker ready", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""

EXPERIMENT = """
testbed { host a { address = 127.0.0.1; } host b { address = 127.0.0.1; } }
cluster {
    test a1 { type = full (blocksize=64K, nbytes=1M); own = a:%(p)d; peer = b:%(p)d; }
    test b1 { type = sink (blocksize=64K); own = b:%(p)d; peer = a:%(p)d; }
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hostile(tmp_path):
    """An honest daemon a hosting the scheduler; yields a function that starts the
    hostile worker b for an attack and returns (scheduler, credentials)."""
    creds = tmp_path / "creds"
    assert cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b").returncode == 0
    port = _free_port()
    daemons = Daemons(tmp_path)
    workers: list[subprocess.Popen] = []
    sched = f"tls://127.0.0.1:{port}"

    def start(attack: str, marker) -> None:
        log = tmp_path / f"hostile-{attack}.log"
        with open(log, "w") as f:
            p = subprocess.Popen(
                [sys.executable, "-c", HOSTILE, str(creds), sched, attack, str(marker)],
                stdout=f,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        workers.append(p)
        deadline = time.monotonic() + 60
        while "ready" not in log.read_text():
            assert p.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)

    try:
        daemons.start("a", ["--listen", f"127.0.0.1:{port}", "--credentials", str(creds)])
        yield start, sched, creds
    finally:
        for p in workers:
            p.kill()
            p.wait()
        daemons.stop()
    assert processes_mentioning(str(creds)) == []


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("pickle", "posix.system"),
        ("pickle-in-data", "posix.system"),
        ("shape", "time = 'soon': expected a finite number"),
    ],
)
def test_a_hostile_daemon_runs_nothing_on_the_controller(hostile, tmp_path, attack, said):
    start, sched, creds = hostile
    marker = tmp_path / f"pwned-{attack}"
    start(attack, marker)
    f = tmp_path / "x.netspec"
    f.write_text(EXPERIMENT % {"p": _free_port()})
    out = tmp_path / "x.result"
    r = subprocess.run(
        [*CELLBENCH, "run", str(f), "--engine", "real", "--scheduler", sched,
         "--credentials", str(creds), "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    time.sleep(0.5)  # anything the controller's threads unpickled late would have run
    assert not marker.exists(), "the hostile daemon's object ran on the controller"
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cellbench: error:"), r.stderr
    assert "daemon for host b" in lines[0] and said in lines[0], lines[0]
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())
    json.dumps(lines)  # the message is text, whatever the daemon sent
