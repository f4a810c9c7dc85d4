"""The real engine's command line on loopback: credentials, checks before any
traffic, a controller without credentials refused, and an end-to-end run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from real_fixtures import Daemons, cellbench, processes_mentioning

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the real engine is Linux-only")

EXPERIMENT = """
testbed { host a { address = 127.0.0.1; } host b { address = 127.0.0.1; } }
cluster {
    serial {
        parallel {
            test a1 { type = full (blocksize=64K, nbytes=3M); own = a:%(p1)d; peer = b:%(p1)d; }
            test b1 { type = sink (blocksize=64K); own = b:%(p1)d; peer = a:%(p1)d; }
        }
        parallel {
            test b2 { type = burst (blocksize=1K, period=200, duration=0.1); protocol = udp;
                      own = b:%(p2)d; peer = a:%(p2)d; }
            test a2 { type = sink (blocksize=1K); protocol = udp; own = a:%(p2)d; peer = b:%(p2)d; }
        }
    }
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line_error(r, *fragments: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cellbench: error:"), r.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_make_credentials(tmp_path):
    """A testbed CA and, signed by it, the controller's, the scheduler's and one
    certificate per daemon, each with its own key (0600), each naming its role."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    r = cellbench("daemon", "--make-credentials", str(tmp_path / "c"), "--hosts", "a,b,c")
    assert r.returncode == 0, r.stderr
    d = tmp_path / "c"
    ca = x509.load_pem_x509_certificate((d / "ca.pem").read_bytes())
    parties = {"controller": "controller", "scheduler": "scheduler"}
    parties |= {f"daemon-{h}": "daemon" for h in "abc"}
    keys = set()
    for stem, role in parties.items():
        key = d / f"{stem}-key.pem"
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
        keys.add(key.read_bytes())
        cert = x509.load_pem_x509_certificate((d / f"{stem}.pem").read_bytes())
        assert cert.issuer == ca.subject
        ca.public_key().verify(
            cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm)
        )
        ou = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
        assert [a.value for a in ou] == [role], stem
        if role == "daemon":
            cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
            assert cn == stem.removeprefix("daemon-")
    assert len(keys) == len(parties), "each party its own key"
    assert not list(d.glob("ca-key*")), "the CA's key is not kept"
    again = cellbench("daemon", "--make-credentials", str(d), "--hosts", "a,b,c")
    _one_line_error(again, "exists: not overwriting")
    _one_line_error(cellbench("daemon", "--make-credentials", str(tmp_path / "e")), "--hosts")
    r = cellbench("daemon", "--make-credentials", str(tmp_path / "f"), "--hosts", "a,a")
    _one_line_error(r, "names a twice")


def test_daemon_help_documents_security():
    r = cellbench("daemon", "--help")
    assert r.returncode == 0
    for word in ("--listen", "--name", "--credentials", "127.0.0.1", "TLS", "--make-credentials"):
        assert word in r.stdout


def test_help_says_what_scheduler_is_and_which_capability_the_daemon_keeps():
    """ttcp's and netperf's --help cut --scheduler's sentence at "the daemons'"; the
    daemon's said "no capability kept" where it keeps CAP_SYS_NICE (real.daemon)."""
    from cellbench.engines.real import daemon

    for tool in ("run", "ttcp", "netperf"):
        r = cellbench(tool, "--help")
        assert r.returncode == 0
        words = " ".join(r.stdout.split())
        assert "--engine real: the address of the daemons' scheduler (the daemon started " \
            "without --scheduler hosts it; cellbench daemon --help)" in words, tool  # fmt: skip
    words = " ".join(cellbench("daemon", "--help").stdout.split())
    assert "no capability kept" not in words
    assert "keeping one capability, CAP_SYS_NICE, for the real-time pacer's SCHED_FIFO" in words
    assert daemon.CAP_SYS_NICE == 23  # capability(7)'s number: what drop_privileges keeps


def test_daemon_limits_out_of_range_are_one_line_and_the_agents_agree():
    """`daemon --max-duration 1e300` was a PanicException from Rust's Duration."""
    from cellbench.engines.real import agents

    for option, value, want in (
        ("--max-duration", "1e300", "--max-duration must be at most 2.592e+06, got '1e300'"),
        ("--max-rate", "1e-300", "--max-rate must be at least 0.001, got '1e-300'"),
    ):
        r = cellbench("daemon", "--name", "a", "--credentials", "x", option, value)
        assert r.returncode == 2 and r.stderr == f"cellbench daemon: error: argument {option}: " \
            f"{want}\n", r.stderr  # fmt: skip
    # The agents' own limits (Rust) hold the same bounds: at them accepted, past refused.
    script = """
import sys
from cellbench import _native
d, r = float(sys.argv[1]), float(sys.argv[2])
try:
    _native.real_limits({"allow": [], "max_duration_s": d, "max_rate_bps": r, "realtime": False})
    print("ok")
except ValueError as e:
    print(e)
"""
    cap, floor = agents.MAX_DURATION_LIMIT_S, agents.MIN_RATE_LIMIT_BPS
    for d, r, want in (
        (cap, floor, "ok"),
        (cap * 1.000001, floor, "max_duration_s "),
        (1e300, floor, "max_duration_s "),
        (cap, floor * 0.999999, "max_rate_bps "),
    ):
        out = subprocess.run(
            [sys.executable, "-c", script, repr(d), repr(r)], capture_output=True, text=True
        )
        assert out.returncode == 0 and out.stdout.startswith(want), (d, r, out.stdout, out.stderr)


@pytest.mark.parametrize("listen", ["127.0.0.1:70000", "[::1]:65536", "127.0.0.1:0"])
def test_a_listen_port_outside_tcps_is_refused(tmp_path, listen):
    """Issue 31: --listen 127.0.0.1:70000 announced port 4464 (70000 mod 65536)."""
    assert cellbench("daemon", "--make-credentials", str(tmp_path), "--hosts", "a").returncode == 0
    r = cellbench("daemon", "--name", "a", "--listen", listen, "--credentials", str(tmp_path))
    port = listen.rpartition(":")[2]
    _one_line_error(r, f"--listen {listen}: port {port} is not a TCP port (1 to 65535)")


def test_bad_hosts_are_one_line_errors(tmp_path):
    f = tmp_path / "x.netspec"
    f.write_text(EXPERIMENT.replace("host b { address = 127.0.0.1; }", "") % {"p1": 1, "p2": 2})
    base = ["run", str(f), "--engine", "real", "--check", "--scheduler", "tls://127.0.0.1:1"]
    base += ["--credentials", str(tmp_path)]
    _one_line_error(cellbench(*base), "host b has no address", "--host b=ADDRESS")
    _one_line_error(cellbench(*base, "--host", "b=10.0.0.300"), "not an IP address")
    _one_line_error(cellbench(*base, "--host", "z=10.0.0.3"), "z is not a host of this experiment")
    ok = cellbench(*base, "--host", "b=127.0.0.1")
    assert ok.returncode == 0 and "engine real" in ok.stdout, ok.stderr
    no_scheduler = cellbench("run", str(f), "--engine", "real", "--host", "b=127.0.0.1")
    _one_line_error(no_scheduler, "--scheduler")


@pytest.fixture
def loopback_daemons(tmp_path):
    creds = tmp_path / "creds"
    assert cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b,c").returncode == 0
    port = _free_port()
    daemons = Daemons(tmp_path)
    try:
        daemons.start("a", ["--listen", f"127.0.0.1:{port}", "--credentials", str(creds)])
        sched = f"tls://127.0.0.1:{port}"
        daemons.start("b", ["--scheduler", sched, "--credentials", str(creds)])
        yield sched, creds
    finally:
        daemons.stop()
    assert processes_mentioning(str(creds)) == []


def test_loopback_run_and_refusals(loopback_daemons, tmp_path):
    sched, creds = loopback_daemons
    f = tmp_path / "x.netspec"
    f.write_text(EXPERIMENT % {"p1": _free_port(), "p2": _free_port()})
    out = tmp_path / "x.result"
    args = ["run", str(f), "--engine", "real", "--scheduler", sched, "--out", str(out)]
    r = cellbench(*args, "--credentials", str(creds), "--json")
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(out / "runs").set_index("test")
    assert (rows["engine"] == "real").all()
    assert rows.loc["a1", "bytes"] == 3 * 2**20
    assert rows.loc["b2", "started_s"] >= rows.loc["a1", "ended_s"]
    assert json.loads((out / "result.json").read_text())["engine"] == "real"
    # Issue 31: the header named the preset the file starts from (lan-buffers), which
    # real hosts never used.
    shown = cellbench("show", str(out))
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert "testbed real hosts (a=127.0.0.1, b=127.0.0.1)," in head, head
    assert "lan-buffers" not in shown.stdout

    # Other credentials (another CA): refused at the TLS handshake, nothing stored.
    other = tmp_path / "other"
    assert cellbench("daemon", "--make-credentials", str(other), "--hosts", "a,b,c").returncode == 0
    r = cellbench(*args[:-2], "--out", str(tmp_path / "y"), "--credentials", str(other))
    _one_line_error(r, "cannot reach the scheduler")
    assert not (tmp_path / "y").exists()


def test_daemon_refuses_what_it_was_not_asked(loopback_daemons, tmp_path):
    """Destinations outside the daemon's allow list (loopback by default), a rate above
    its --max-rate and a duration above --max-duration: refused before any traffic, in
    one line naming the connection and the daemon's flag."""
    sched, creds = loopback_daemons
    port = _free_port()

    def run(addr_b: str, traffic: str):
        f = tmp_path / "refused.netspec"
        f.write_text(
            f"testbed {{ host a {{ address = 127.0.0.1; }} host b {{ address = {addr_b}; }} }}\n"
            f"cluster {{ test t {{ type = {traffic}; own = a:{port}; peer = b:{port}; }}\n"
            f"test r {{ type = sink (blocksize=1K); own = b:{port}; peer = a:{port}; }} }}\n"
        )
        out = tmp_path / "refused.result"
        r = cellbench(
            "run", str(f), "--engine", "real", "--scheduler", sched, "--credentials", str(creds),
            "--out", str(out), "--overwrite",
        )  # fmt: skip
        assert not (out / "runs").exists() or not any((out / "runs").iterdir())
        return r

    # 192.0.2.1 (TEST-NET-1) is no host's: the daemon for a will not aim traffic there.
    r = run("192.0.2.1", "full (blocksize=1K, nbytes=1K)")
    _one_line_error(
        r, "connection t (a -> b): the daemon for host a refuses", "192.0.2.1", "--allow"
    )
    # 41.9 Gb/s paced (1 MB every 200 µs) is above the default --max-rate of 10 Gb/s.
    r = run("127.0.0.1", "burst (blocksize=1M, period=200, duration=1)")
    _one_line_error(r, "rate 41943 Mb/s exceeds its --max-rate 10000 Mb/s")
    r = run("127.0.0.1", "full (blocksize=1K, duration=1000)")
    _one_line_error(r, "duration 1000 s exceeds its --max-duration 300 s")


def test_unauthenticated_client_is_refused(loopback_daemons):
    """A plain (no TLS) Dask client, and a TLS one without a certificate, get nowhere."""
    sched, _ = loopback_daemons
    port = sched.rsplit(":", 1)[1]
    probe = (
        "from distributed import Client\n"
        "import sys\n"
        "try:\n"
        "    Client(sys.argv[1], timeout='3s')\n"
        "    print('connected')\n"
        "except Exception as e:\n"
        "    print('refused', type(e).__name__)\n"
    )
    for url in (f"tcp://127.0.0.1:{port}", f"tls://127.0.0.1:{port}"):
        r = subprocess.run(
            [sys.executable, "-c", probe, url], capture_output=True, text=True, timeout=60
        )
        assert r.stdout.startswith("refused"), url + r.stdout + r.stderr


def test_ttcp_and_netperf_engine_real(loopback_daemons):
    """The tools against two daemons print what they print on the simulator: the same
    lines and table, the real figures in them."""
    sched, creds = loopback_daemons
    port = str(_free_port())
    real = ["--engine", "real", "--host", "a=127.0.0.1", "--host", "b=127.0.0.1"]
    real += ["--scheduler", sched, "--credentials", str(creds)]

    def shape(text: str) -> list[str]:
        # Numbers and host names aside, line for line the same.
        return [re.sub(r"\d+(\.\d+)?", "N", line.replace("-> B", "-> b")) for line in text]

    r = cellbench("ttcp", "-t", "-n", "300", "-p", port, "b", *real)
    assert r.returncode == 0, r.stderr
    got = r.stdout.splitlines()
    sim = cellbench("ttcp", "-t", "-n", "300").stdout.splitlines()
    assert got[3].startswith(f"ttcp-t: {300 * 8192} bytes in "), got
    assert shape(got[:5]) == shape(sim[:5])
    assert got[-1].startswith("# limited by ")

    r = cellbench("ttcp", "-r", "-u", "-l", "1400", "-n", "20", "-p", port, *real)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2].startswith(f"ttcp-r: {20 * 1400} bytes in "), r.stdout

    r = cellbench("netperf", "-l", "0.5", *real, "--", "-s", "64K")
    assert r.returncode == 0, r.stderr
    got = r.stdout.splitlines()
    sim = cellbench("netperf", "-l", "0.5").stdout.splitlines()
    assert got[0] == "TCP STREAM TEST to b (real: a=127.0.0.1, b=127.0.0.1)"
    assert got[1:6] == sim[1:6]
    recv, send, size, secs, mbps = got[6].split()
    # Linux doubles SO_SNDBUF for its bookkeeping, and netperf prints what it reads back.
    assert (int(send), int(size)) == (2 * 65536, 8192)
    assert float(secs) == pytest.approx(0.5, abs=0.1) and float(mbps) > 1

    # Two hosts, no more: a one-line error.
    _one_line_error(
        cellbench("netperf", *real, "--host", "c=127.0.0.1"), "needs two --host NAME=ADDRESS"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="a daemon drops root to nobody only when root")
def test_a_killed_daemons_directory_is_removed_by_the_next_daemon(tmp_path, monkeypatch):
    """A daemon started as root makes its directory after dropping to nobody; killed
    (SIGKILL), it leaves it, and the next daemon, as nobody too, removes it when it
    starts. Nothing else of theirs stays in the temporary directory: the scheduler's
    Dask scratch space stayed there (dask-scratch-space, owned by nobody) even after
    a clean stop."""
    import pwd
    import tempfile
    import time

    # A temporary directory of the test's own that nobody may write (as /tmp).
    tmp = Path(tempfile.mkdtemp(prefix="cellbench-test-tmp-", dir="/tmp"))
    tmp.chmod(0o1777)
    monkeypatch.setenv("TMPDIR", str(tmp))
    creds = tmp_path / "creds"
    assert cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a").returncode == 0
    daemons = Daemons(tmp_path)
    try:
        args = ["--listen", f"127.0.0.1:{_free_port()}", "--credentials", str(creds)]
        first = daemons.start("a", args)
        made = list(tmp.glob("cellbench-daemon-*"))
        assert len(made) == 1 and made[0].stat().st_uid == pwd.getpwnam("nobody").pw_uid
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        assert made[0].is_dir()  # (SIGKILL: nothing of the daemon's runs any more)
        # Past the grace a directory is given between being made and being locked.
        os.utime(made[0], (time.time() - 60, time.time() - 60))
        daemons.start("a", args)
        now = list(tmp.glob("cellbench-daemon-*"))
        assert not made[0].exists() and len(now) == 1, now
        daemons.stop()
        assert list(tmp.iterdir()) == []
    finally:
        daemons.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    assert processes_mentioning(str(creds)) == []
