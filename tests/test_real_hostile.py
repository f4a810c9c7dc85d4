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
from cellbench.engines.real import agents

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


def test_answers_are_checked_as_data():
    """What the controller accepts of a daemon's answer (real/answers.py), without
    daemons: JSON bytes of the right shape, else one line saying what was wrong."""
    import pickle

    from cellbench.engines.real import agents, answers, guard

    def refused(check, raw, *args) -> str:
        with pytest.raises(answers.BadAnswer) as e:
            check(raw, *args)
        return str(e.value)

    assert answers.probe(agents.probe())["version"]
    assert "not JSON" in refused(answers.probe, b"\x80\x05K\x01.")
    assert "sent a dict where" in refused(answers.probe, {"time": 1.0, "version": "x"})
    assert refused(answers.probe, agents.refuse("why")) == "refused by the daemon: why"
    assert answers.admissions(b'[null, "too fast"]', 2) == [None, "too fast"]
    assert "answered 2 admission" in refused(answers.admissions, b"[null]", 2)
    source = {"seconds": 1.0, "throughput_bps": 8e6, "started_at": 1.0, "ended_at": 2.0,
              "bytes": 10**6, "blocks": 10, "send_errors": 0}  # fmt: skip
    ok = json.dumps([{"report": source}, {"error": "connection refused"}]).encode()
    assert answers.reports(ok, 2, "source")[1] == {"error": "connection refused"}
    bad = json.dumps([{"report": source | {"bytes": -1}}]).encode()
    assert "a source's report's bytes = -1: expected a count" in refused(
        answers.reports, bad, 1, "source"
    )
    sink = json.dumps([{"report": {"seconds": 1.0}}]).encode()
    assert "a sink's report has no throughput_bps" in refused(answers.reports, sink, 1, "sink")
    # The controller's unpickler takes bytes, and nothing that names a callable.
    assert guard.controller_loads(pickle.dumps(bytes)) is bytes
    with pytest.raises(guard.RefusedPickle, match="posix.system"):
        guard.controller_loads(b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix"
                               b"\x94\x8c\x06system\x94\x93\x94.")  # fmt: skip
