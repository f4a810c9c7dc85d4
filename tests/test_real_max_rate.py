"""A full blast held at the daemon's --max-rate says so (issue 24): in ttcp's last line,
the row's limited_by and evidence, and its notes. Two daemons on loopback, capped at
40 Mb/s, far below what loopback carries."""

from __future__ import annotations

import socket
import subprocess
import sys

import pandas as pd
import pytest
from real_fixtures import CELLBENCH, Daemons, cellbench, processes_mentioning

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the real engine is Linux-only")

CAP_MBPS = 40


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("capped")
    creds = tmp / "creds"
    assert cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b").returncode == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    daemons = Daemons(tmp)
    cap = ["--max-rate", str(CAP_MBPS), "--credentials", str(creds)]
    try:
        daemons.start("a", ["--listen", f"127.0.0.1:{port}", *cap])
        sched = f"tls://127.0.0.1:{port}"
        daemons.start("b", ["--scheduler", sched, *cap])
        yield {"tmp": tmp, "real": ["--scheduler", sched, "--credentials", str(creds)]}
    finally:
        daemons.stop()
    assert processes_mentioning(str(creds)) == []


def test_ttcp_says_the_daemons_cap_held_it(capped):
    hosts = ["--engine", "real", "--host", "a=127.0.0.1", "--host", "b=127.0.0.1"]
    r = cellbench("ttcp", "-t", "-n", "500", "-f", "m", "b", *hosts, *capped["real"])
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-1]
    assert last.startswith("# limited by max-rate: "), last
    assert "write(s) waited for the transmitter's daemon's --max-rate" in last
    assert "the cap, not the path, set the pace; measured" in last


def test_a_capped_row_says_so_in_its_notes(capped):
    f = capped["tmp"] / "blast.netspec"
    f.write_text(
        "testbed { host a { address = 127.0.0.1; } host b { address = 127.0.0.1; } }\n"
        "cluster {\n"
        "    test t { type = full (blocksize=64K, nbytes=4M); own = a:5301; peer = b:5301; }\n"
        "    test r { type = sink (blocksize=64K); own = b:5301; peer = a:5301; }\n"
        "}\n"
    )
    out = capped["tmp"] / "blast.result"
    r = cellbench("run", str(f), "--engine", "real", "--out", str(out), *capped["real"])
    assert r.returncode == 0, r.stderr
    row = pd.read_parquet(out / "runs").set_index("test").loc["t"]
    # At the cap, give or take the burst it lets through at the start (4 blocks, 256 KB
    # of the 4 MB here) and the first write's time.
    assert CAP_MBPS * 1e6 * 0.8 <= row["throughput_bps"] <= CAP_MBPS * 1e6 * 1.15
    assert row["limited_by"] == "max-rate"
    assert "held this full blast at its --max-rate" in row["notes"]
    assert "t (a -> b): max-rate: " in r.stdout


PACED = """
testbed { host a { address = 127.0.0.1; profile = alpha-3000; }
          host b { address = 127.0.0.1; profile = alpha-3000; } }
cluster {
    test t { type = burst (blocksize=8K, period=2185, duration=4); own = a:%(p)d; peer = b:%(p)d; }
    test r { type = sink (blocksize=8K); own = b:%(p)d; peer = a:%(p)d; }
}
"""


def test_paced_streams_a_shared_cap_held_say_max_rate(capped):
    """Issue 31: two paced streams of 30 Mb/s (8 KB every 2185 µs), each admitted on its
    own, from two runs at once through a daemon whose --max-rate of 40 Mb/s all its
    sources share: each falls short of its rate, and the cap, not the host or the path,
    held it, which its row says."""
    procs, outs = [], []
    for i in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        f = capped["tmp"] / f"paced{i}.netspec"
        f.write_text(PACED % {"p": port})
        outs.append(capped["tmp"] / f"paced{i}.result")
        args = ["run", str(f), "--engine", "real", "--out", str(outs[-1]), "--overwrite"]
        procs.append(subprocess.Popen([*CELLBENCH, *args, *capped["real"]], text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))  # fmt: skip
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    for out in outs:
        row = pd.read_parquet(out / "runs").set_index("test").loc["t"]
        assert row["throughput_bps"] < 0.9 * 30e6, row["throughput_bps"]
        assert row["limited_by"] == "max-rate", row["limit_evidence"]
        assert "--max-rate of 40 Mb/s" in row["limit_evidence"]
