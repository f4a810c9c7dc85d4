"""Issue 25 §1: the daemons' limits hold against any authenticated peer.

Three daemons in network namespaces (the star network of real_fixtures, a's
daemon hosting the scheduler), started with --max-rate 100 and --max-duration 20.
Each attack the audit made is made again, from inside a namespace, with the
credentials an attacker could hold (the controller's, or one daemon's key), and
the test asserts it was refused. Everything is removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest
from real_fixtures import (
    CELLBENCH,
    STAR,
    Daemons,
    cellbench,
    netns_list,
    processes_mentioning,
    star_network,
    start_star_daemons,
)

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="network namespaces are Linux's"),
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2 (ip, tc)"),
]

PORT = 8796
MAX_RATE_MBPS = 100

#: One attack per run, as a Dask client inside a namespace: prints one JSON line,
#: {"ran": repr(result)} when the daemons did it, {"refused": first line} when not.
ATTACK = r"""
import json, os, sys
from pathlib import Path
from distributed import Client, Security

creds, party, scheduler, attack, arg = sys.argv[1:6]
d = Path(creds)
stem = party  # controller, or daemon-NAME: whose certificate the attacker holds
sec = Security(require_encryption=True, tls_ca_file=str(d / "ca.pem"),
               tls_client_cert=str(d / f"{stem}.pem"), tls_client_key=str(d / f"{stem}-key.pem"))

def spec(peer, **kw):
    import time
    return {"protocol": "tcp", "peer": peer, "blocksize": 65536, "nbytes": 5 << 20,
            "start_at": time.time() + 0.2} | kw

def main():
    c = Client(scheduler, security=sec, timeout="8s", set_as_default=False)
    try:
        if attack == "run":
            return c.run(os.getuid)
        if attack == "run_on_scheduler":
            return c.run_on_scheduler(os.getuid)
        if attack == "submit":
            return c.submit(os.getuid, workers=[arg], pure=False).result(timeout=20)
        if attack == "submit-lambda":
            return c.submit(lambda: open("/etc/shadow").read(), workers=[arg],
                            pure=False).result(timeout=20)
        if attack == "agent-own-limits":
            from cellbench.engines.real import agents
            lim = {"allow": ["0.0.0.0/0"], "max_duration_s": 1e9, "max_rate_bps": 1e12,
                   "realtime": True}
            return c.submit(agents.source, spec("192.0.2.1:9"), lim, workers=[arg],
                            pure=False).result(timeout=20)
        if attack == "native-agent":
            from cellbench import _native
            return c.submit(_native.real_source, spec("192.0.2.1:9"), workers=[arg],
                            pure=False).result(timeout=20)
        if attack == "sources-outside-allow":
            from cellbench.engines.real import agents
            return c.submit(agents.sources, [spec("192.0.2.1:9")], workers=[arg],
                            pure=False).result(timeout=20)
        if attack == "sources-bad-data":
            from cellbench.engines.real import agents
            return c.submit(agents.sources, [spec("10.77.1.2:9", blocksize=10**12)],
                            workers=[arg], pure=False).result(timeout=20)
        if attack == "sources-extra-field":
            from cellbench.engines.real import agents
            return c.submit(agents.sources, [spec("10.77.1.2:9", max_rate_bps=1e12)],
                            workers=[arg], pure=False).result(timeout=20)
        if attack == "plugin":
            from distributed.diagnostics.plugin import WorkerPlugin
            class P(WorkerPlugin):
                def setup(self, worker):
                    os.system("touch /tmp/pwned-by-plugin")
            return c.register_plugin(P())
        if attack == "upload_file":
            f = Path(arg)
            f.write_text("import os\nos.system('touch /tmp/pwned-by-upload')\n")
            return c.upload_file(str(f))
        if attack == "broadcast-run":
            return c.sync(c.scheduler.broadcast, msg={"op": "run", "function": b"x"})
        if attack == "identity":
            return sorted(w["name"] for w in c.scheduler_info()["workers"].values())
    finally:
        c.close()

try:
    got = main()
    # An agent answers in JSON bytes (agents.answers_in_json): shown as its text.
    print(json.dumps({"ran": got.decode() if isinstance(got, bytes) else repr(got)}))
except BaseException as e:
    line = (str(e) or type(e).__name__).strip().splitlines()
    print(json.dumps({"refused": f"{type(e).__name__}: {line[0] if line else ''}"}))
"""


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guard")
    creds = tmp / "creds"
    daemons = Daemons(tmp)
    with star_network(f"g{os.getpid()}") as ns:
        try:
            made = cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b,c")
            assert made.returncode == 0, made.stderr
            extra = ("--max-rate", str(MAX_RATE_MBPS), "--max-duration", "20")
            sched = start_star_daemons(daemons, ns, creds, PORT, extra)
            yield {"ns": ns, "creds": creds, "scheduler": sched, "tmp": tmp, "daemons": daemons}
        finally:
            daemons.stop()
    assert not any(n in netns_list() for n in ns.values())
    assert processes_mentioning(str(creds)) == []


def attack(net, name: str, party: str = "controller", arg: str = "b", netns: str = "c") -> dict:
    r = subprocess.run(
        ["ip", "netns", "exec", net["ns"][netns], sys.executable, "-c", ATTACK,
         str(net["creds"]), party, net["scheduler"], name, arg],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    assert lines, r.stdout + r.stderr
    return json.loads(lines[-1])


def test_the_honest_controller_still_sees_the_daemons(net):
    assert attack(net, "identity") == {"ran": "['a', 'b', 'c']"}


@pytest.mark.parametrize(
    "name",
    ["run", "run_on_scheduler", "submit", "submit-lambda", "agent-own-limits", "native-agent",
     "plugin", "broadcast-run"],
)  # fmt: skip
def test_no_code_runs_on_a_daemon(net, name):
    """Client.run, run_on_scheduler, submit of any other function (os.getuid, a
    lambda, the agent with the caller's limits, the native agent), a worker plugin and
    a broadcast of Dask's `run`: all refused, with the controller's own credentials."""
    got = attack(net, name)
    assert "refused" in got, (name, got)
    assert not os.path.exists("/tmp/pwned-by-plugin")


def test_no_file_is_uploaded(net):
    got = attack(net, "upload_file", arg=str(net["tmp"] / "evil.py"))
    assert "refused" in got, got
    assert not os.path.exists("/tmp/pwned-by-upload")


@pytest.mark.parametrize(
    ("name", "why"),
    [("sources-outside-allow", "allow list"), ("sources-bad-data", "blocksize"),
     ("sources-extra-field", "unknown field 'max_rate_bps'")],
)  # fmt: skip
def test_agents_take_plain_specs_within_the_limits(net, name, why):
    got = attack(net, name)
    assert why in got.get("ran", "") + got.get("refused", ""), got
    assert "'report'" not in got.get("ran", ""), got


def test_a_daemons_key_cannot_drive_the_daemons(net):
    """Daemon c's certificate, as a client of the scheduler or of daemon b's worker."""
    got = attack(net, "identity", party="daemon-c")
    assert "refused" in got, got
    # Straight to b's worker: only the scheduler's certificate may speak to it.
    log = (net["tmp"] / "daemon-b-1.log").read_text()
    worker = log.split("worker ")[1].split(";")[0].strip()
    probe = (
        "import sys\nfrom distributed import Security\nfrom distributed.core import rpc\n"
        "import asyncio\nd = sys.argv[1]\n"
        "sec = Security(require_encryption=True, tls_ca_file=d + '/ca.pem', "
        "tls_client_cert=d + '/daemon-c.pem', tls_client_key=d + '/daemon-c-key.pem')\n"
        "async def main():\n"
        "    r = rpc(sys.argv[2], connection_args=sec.get_connection_args('client'))\n"
        "    try:\n"
        "        print('ran', await asyncio.wait_for(r.identity(), 10))\n"
        "    except Exception as e:\n"
        "        print('refused', type(e).__name__)\n"
        "    await r.close_rpc()\n"
        "asyncio.run(main())\n"
    )
    r = subprocess.run(
        ["ip", "netns", "exec", net["ns"]["c"], sys.executable, "-c", probe,
         str(net["creds"]), worker],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.stdout.startswith("refused"), r.stdout + r.stderr


def test_a_daemon_speaks_only_for_its_own_host():
    """The scheduler's check, in-process: c's certificate may register only as c and
    speak only for c's worker address."""
    from types import SimpleNamespace

    from cellbench.engines.real import guard

    server = SimpleNamespace(workers={"tls://10.77.1.2:1": SimpleNamespace(name="b")})
    p = guard.Policy(server, {"daemon": guard.SCHEDULER_OPS_DAEMON})
    assert p.refusal(("daemon", "c"), {"op": "register-worker", "name": "c"}) is None
    assert "may not register as 'b'" in p.refusal(
        ("daemon", "c"), {"op": "register-worker", "name": "b"}
    )
    why = p.refusal(("daemon", "c"), {"op": "unregister", "address": "tls://10.77.1.2:1"})
    assert "may not speak for host b" in why
    assert "not for a daemon" in p.refusal(("daemon", "c"), {"op": "update-graph"})
    assert p.admit(("controller", "x")) == "a controller may not connect to a simplenamespace"
    assert p.admit(None) is not None


def test_unauthenticated_connection_is_closed(net):
    """A raw TCP connection that sends nothing: closed after the handshake timeout
    (10 s), not left open."""
    probe = (
        "import socket, sys, time\n"
        "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)\n"
        "t = time.monotonic()\n"
        "try:\n"
        "    data = s.recv(1)\n"
        "except OSError:\n"
        "    data = b''\n"
        "print(round(time.monotonic() - t, 1), data)\n"
    )
    r = subprocess.run(
        ["ip", "netns", "exec", net["ns"]["c"], sys.executable, "-c", probe, STAR["a"],
         str(PORT)],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    waited, data = r.stdout.split(maxsplit=1)
    assert data.strip() == "b''", r.stdout + r.stderr
    assert 9 <= float(waited) <= 20, r.stdout


def _run(net, text: str, name: str):
    f = net["tmp"] / f"{name}.netspec"
    f.write_text(text)
    out = net["tmp"] / f"{name}.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out), "--overwrite",
        "--scheduler", net["scheduler"], "--credentials", str(net["creds"]),
        netns=net["ns"]["a"],
    )  # fmt: skip
    return r, out


HEAD = """
testbed {
    host a { address = 10.77.1.1; profile = alpha-3000; }
    host b { address = 10.77.1.2; profile = alpha-3000; }
}
"""


def test_max_rate_caps_the_daemons_total(net):
    """Five full blasts a -> b at once under a 100 Mb/s cap: together under it (each
    alone was held to the cap before, so five passed 5x it); and a short blast alone
    stays under it too (its first 10 ms at the cap passed at once before)."""
    tests = "".join(
        f"test t{i} {{ type = full (blocksize=64K, nbytes=3M); own = a:{7100 + i}; "
        f"peer = b:{7100 + i}; }}\n"
        f"test r{i} {{ type = sink (blocksize=64K); own = b:{7100 + i}; peer = a:{7100 + i}; }}\n"
        for i in range(5)
    )
    r, out = _run(net, HEAD + "cluster { parallel {\n" + tests + "} }\n", "five")
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(out / "runs")
    assert (rows["bytes"] == 3 * 2**20).all()
    span = rows["ended_s"].max() - rows["started_s"].min()
    total = rows["bytes"].sum() * 8 / span
    assert total <= MAX_RATE_MBPS * 1e6 * 1.02, total
    assert total >= MAX_RATE_MBPS * 1e6 * 0.5, total

    one = (
        "cluster { parallel {\n"
        "test t { type = full (blocksize=64K, nbytes=2M); own = a:7110; peer = b:7110; }\n"
        "test r { type = sink (blocksize=64K); own = b:7110; peer = a:7110; } } }\n"
    )
    r, out = _run(net, HEAD + one, "one")
    assert r.returncode == 0, r.stderr
    row = pd.read_parquet(out / "runs").iloc[0]
    assert row["throughput_bps"] <= MAX_RATE_MBPS * 1e6, row["throughput_bps"]
    assert row["limited_by"] == "max-rate" and "--max-rate" in row["limit_evidence"]


def test_paced_streams_adding_up_beyond_the_cap_are_refused(net):
    """Five 80 Mb/s paced streams under a 100 Mb/s cap: each alone is within it; the
    batch is refused in one line."""
    tests = "".join(
        f"test t{i} {{ type = burst (blocksize=10000, period=1000, duration=1); "
        f"own = a:{7200 + i}; peer = b:{7200 + i}; }}\n"
        f"test r{i} {{ type = sink (blocksize=10000); own = b:{7200 + i}; "
        f"peer = a:{7200 + i}; }}\n"
        for i in range(5)
    )
    r, _ = _run(net, HEAD + "cluster { parallel {\n" + tests + "} }\n", "paced")
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "add up to 400 Mb/s, above its --max-rate 100 Mb/s" in last, last


def test_daemons_run_without_root(net):
    """As nobody, with no capability but CAP_SYS_NICE (the pacer's real-time
    priority), and no way to gain privileges back."""
    for name, proc in net["daemons"].by_name.items():
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        mine = [
            p for p in pids
            if _status(p).get("PPid") in (str(proc.pid),) or p == proc.pid
        ]  # fmt: skip
        st = [_status(p) for p in mine if "cellbench" in _cmdline(p)]
        assert st, name
        for s in st:
            assert s["Uid"].split()[:3] == ["65534"] * 3, (name, s["Uid"])
            assert int(s["CapEff"], 16) == 1 << 23 and int(s["CapPrm"], 16) == 1 << 23, s
            assert int(s["CapBnd"], 16) == 1 << 23, s
            assert s["NoNewPrivs"] == "1"


def _status(pid: int) -> dict:
    try:
        with open(f"/proc/{pid}/status") as f:
            return {k: v.strip() for k, _, v in (line.partition(":") for line in f)}
    except OSError:
        return {}


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _start_fails(net, args: list[str], netns: str = "b", timeout: int = 90) -> str:
    r = subprocess.run(
        ["ip", "netns", "exec", net["ns"][netns], *CELLBENCH, "daemon", *args],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cellbench: error: daemon "), r.stderr
    return lines[0]


def test_start_up_failures_are_one_line(net):
    creds = str(net["creds"])
    # The scheduler's port on a is taken (by a's own daemon).
    line = _start_fails(
        net, ["--name", "a", "--listen", f"{STAR['a']}:{PORT}", "--credentials", creds], "a"
    )
    assert "address already in use" in line, line
    # b is at the scheduler already.
    line = _start_fails(
        net, ["--name", "b", "--listen", STAR["b"], "--scheduler", net["scheduler"],
              "--credentials", creds],
    )  # fmt: skip
    assert "--name is taken" in line, line
    # Another testbed's credentials: refused at the handshake, and said so in time.
    other = net["tmp"] / "other"
    assert cellbench("daemon", "--make-credentials", str(other), "--hosts", "b").returncode == 0
    t = time.monotonic()
    line = _start_fails(
        net, ["--name", "b", "--listen", STAR["b"], "--scheduler", net["scheduler"],
              "--credentials", str(other)],
    )  # fmt: skip
    assert "cannot join the scheduler" in line, line
    assert time.monotonic() - t < 60
