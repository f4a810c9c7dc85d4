"""The real engine on a real (namespaced) network, as root.

Three network namespaces joined by veth pairs, a forwarding in the middle::

    b (10.77.1.2) ---- (10.77.1.1) a (10.77.2.1) --tbf 50 Mb/s--> (10.77.2.2) c

A daemon in each (a's hosts the scheduler). An experiment of the shape of
examples/serial-parallel.netspec runs across them; the test reads the stored
result. Everything is named with the test's pid and removed in the fixture's
teardown whatever happened, and the test checks that nothing is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from real_fixtures import (
    CELLBENCH,
    STAR,
    STAR_NETWORK,
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

TBF_MBPS = 50
SCHEDULER_PORT = 8786

EXPERIMENT = """
testbed {
    host a { address = 10.77.1.1; }
    host b { address = 10.77.1.2; }
    host c { address = 10.77.2.2; }
}
cluster {
    serial {
        parallel {
            # 4 MB a -> b, beside a paced stream a -> b (8 KB every 1 ms = 65.5 Mb/s)
            # and a transfer through the 50 Mb/s bottleneck a -> c.
            test a1 { type = full (blocksize=64K, nbytes=4M); own = a:5001; peer = b:5001; }
            test b1 { type = sink (blocksize=64K); own = b:5001; peer = a:5001; }
            test a2 { type = burst (blocksize=8K, period=1000, duration=1);
                      own = a:5002; peer = b:5002; }
            test b2 { type = sink (blocksize=8K); own = b:5002; peer = a:5002; }
            test a3 { type = full (blocksize=64K, nbytes=5M); protocol = tcp (window=64K);
                      own = a:5003; peer = c:5003; }
            test c3 { type = sink (blocksize=64K); protocol = tcp (window=64K);
                      own = c:5003; peer = a:5003; }
        }
        parallel {
            # Then b -> c through a (forwarded) and the bottleneck, beside UDP b -> a.
            test b4 { type = full (blocksize=64K, nbytes=2M); own = b:5004; peer = c:5004; }
            test c4 { type = sink (blocksize=64K); own = c:5004; peer = b:5004; }
            test b5 { type = burst (blocksize=1400, period=500, duration=0.3); protocol = udp;
                      own = b:5005; peer = a:5005; }
            test a5 { type = sink (blocksize=1400); protocol = udp; own = a:5005; peer = b:5005; }
        }
    }
}
"""


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    """The namespaces, links, bottleneck and daemons; all removed at the end."""
    tmp = tmp_path_factory.mktemp("realnet")
    creds = tmp / "creds"
    daemons = Daemons(tmp)
    with star_network(str(os.getpid()), TBF_MBPS) as ns:
        try:
            made = cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b,c")
            assert made.returncode == 0, made.stderr
            sched = start_star_daemons(daemons, ns, creds, SCHEDULER_PORT)
            yield {"ns": ns, "creds": creds, "scheduler": sched, "tmp": tmp, "daemons": daemons}
        finally:
            daemons.stop()
    # Nothing left behind: no namespace, no process of ours.
    assert not any(n in netns_list() for n in ns.values())
    assert processes_mentioning(str(creds)) == []


@pytest.fixture(scope="module")
def result(network):
    f = network["tmp"] / "serial-parallel.netspec"
    f.write_text(EXPERIMENT)
    out = network["tmp"] / "sp.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return pd.read_parquet(out / "runs").set_index("test")


def test_bytes_delivered(result):
    assert result.loc["a1", "bytes"] == 4 * 2**20
    assert result.loc["a3", "bytes"] == 5 * 2**20
    assert result.loc["b4", "bytes"] == 2 * 2**20
    assert result.loc[["a1", "a3", "b4"], "completed"].all()
    assert (result["engine"] == "real").all()


def test_serial_group_starts_after_its_predecessor_ends(result):
    first_end = result.loc[["a1", "a2", "a3"], "ended_s"].max()
    second_start = result.loc[["b4", "b5"], "started_s"].min()
    assert second_start >= first_end
    # ... and the parallel ones started together (within the pacing of task dispatch).
    starts = result.loc[["a1", "a2", "a3"], "started_s"]
    assert starts.max() - starts.min() < 0.1


def test_constant_rate_within_two_percent(result):
    row = result.loc["a2"]
    offered = 8192 * 8 / 1e-3
    assert row["offered_bps"] == pytest.approx(offered)
    assert row["throughput_bps"] == pytest.approx(offered, rel=0.02)
    assert row["limited_by"] == "application"
    assert row["bytes"] == 1000 * 8192


def test_bottleneck_shows(result):
    for test in ("a3", "b4"):
        row = result.loc[test]
        assert row["goodput_bps"] == pytest.approx(TBF_MBPS * 1e6, rel=0.1), test
        assert row["limited_by"] != "application", row["limit_evidence"]
    # ttcp's sender-side figure ends when the last write returns, with a send buffer's
    # worth still queued: near the rate with a 64 KB buffer (a3); far above it with the
    # kernel's autotuned megabytes (b4), as ttcp would print it too.
    assert result.loc["a3", "throughput_bps"] == pytest.approx(TBF_MBPS * 1e6, rel=0.15)
    # Beside it, the unshaped a -> b path carried far more.
    assert result.loc["a1", "goodput_bps"] > 2 * TBF_MBPS * 1e6


def test_measures_name_the_path(result):
    """Each end's interface is the one its routes use (b -> c crosses a), and its
    counters carried at least the connection's bytes."""
    tag = str(os.getpid())  # star_network's names
    for test, tx, rx in (("a1", "vab", "vba"), ("a3", "vac", "vca"), ("b4", "vba", "vca")):
        row = result.loc[test]
        assert (row["tx_interface"], row["rx_interface"]) == (tx + tag, rx + tag), test
        assert row["tx_if_bytes"] >= row["bytes"] and row["rx_if_bytes"] >= row["bytes"], test
        assert row["mss"] > 0, test
    # Through the 50 Mb/s bottleneck the kernel was busy for most of a second (its busy
    # time counts clock ticks: a1's 4 MB at veth speed may count none).
    for test in ("a3", "b4"):
        row = result.loc[test]
        assert row["tcp_busy_s"] >= 0.5 * row["receiver_seconds"], row
    # The constant-rate stream's agents slept between blocks: far from a whole core.
    assert result.loc["a2", "tx_agent_cpu"] < 0.5


def test_controller_without_credentials_is_refused(network, result):
    f = network["tmp"] / "serial-parallel.netspec"
    other = network["tmp"] / "other-creds"
    assert cellbench("daemon", "--make-credentials", str(other), "--hosts", "a,b,c").returncode == 0
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(network["tmp"] / "refused"),
        "--scheduler", network["scheduler"], "--credentials", str(other),
        netns=network["ns"]["b"],
    )  # fmt: skip
    assert r.returncode == 2 and "cannot reach the scheduler" in r.stderr, r.stderr
    assert not (network["tmp"] / "refused").exists()
    # A plain (no TLS) Dask client gets nowhere either.
    probe = (
        "from distributed import Client\n"
        "try:\n"
        f"    Client('tcp://10.77.1.1:{SCHEDULER_PORT}', timeout='3s')\n"
        "except Exception as e:\n"
        "    print('refused', type(e).__name__)\n"
    )
    r = subprocess.run(
        ["ip", "netns", "exec", network["ns"]["c"], sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "refused" in r.stdout, r.stdout + r.stderr


HTTP_PROBE = """
import socket, subprocess
lines = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout.splitlines()
for line in lines:
    addr, port = line.split()[3].rsplit(":", 1)
    with socket.create_connection((addr.strip("[]"), int(port)), timeout=3) as s:
        s.sendall(b"GET /json/identity.json HTTP/1.0\\r\\n\\r\\n")
        try:
            head = s.recv(64).split(b"\\r\\n")[0].decode(errors="replace")
        except OSError:
            head = ""
    print(addr, port, head or "-")
"""


def test_daemons_answer_nothing_without_tls(network):
    """Beside its TLS ports, Dask starts an HTTP server with pages about the cluster:
    a daemon's serves nothing, and only on loopback."""
    for host, ns in network["ns"].items():
        r = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, "-c", HTTP_PROBE],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        seen = [line.split(" ", 2) for line in r.stdout.splitlines()]
        assert any(addr == STAR[host] for addr, _, _ in seen), (host, seen)
        for addr, port, head in seen:
            if addr.startswith("127."):
                assert " 200 " not in head, (host, addr, port, head)
            else:
                assert not head.startswith("HTTP"), (host, addr, port, head)


def test_a_host_without_daemon_is_refused_before_traffic(network):
    f = network["tmp"] / "nodaemon.netspec"
    f.write_text(
        EXPERIMENT.replace("host c { address = 10.77.2.2; }", "host c { address = 10.77.2.2; }\n"
                           "    host d { address = 10.77.2.2; }")
        .replace("own = c:5003; peer = a:5003", "own = d:5003; peer = a:5003")
        .replace("own = a:5003; peer = c:5003", "own = a:5003; peer = d:5003")
    )  # fmt: skip
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(network["tmp"] / "nodaemon"),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("cellbench: error: no daemon for host d")


def test_120_connections(network):
    """More than 100 connections in one experiment: 120 parallel transfers a -> b."""
    head = EXPERIMENT.split("cluster {")[0]
    tests = "".join(
        f"test t{i} {{ type = full (blocksize=64K, nbytes=256K); own = a:{6000 + i}; "
        f"peer = b:{6000 + i}; }}\n"
        f"test r{i} {{ type = sink (blocksize=64K); own = b:{6000 + i}; peer = a:{6000 + i}; }}\n"
        for i in range(120)
    )
    f = network["tmp"] / "many.netspec"
    f.write_text(head + "cluster { parallel {\n" + tests + "} }\n")
    out = network["tmp"] / "many.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(out / "runs")
    assert len(rows) == 120
    assert (rows["bytes"] == 256 * 1024).all() and rows["completed"].all()
    # One agreed start: the sources began together, not one after another.
    assert rows["started_s"].max() - rows["started_s"].min() < 1.0


def test_constant_rate_at_100_mbps_and_1_gbps(network):
    """A paced stream a -> b (unshaped veth) at 100 Mb/s, then at 1 Gb/s: each within
    2% of its offered rate, every block sent, and the pacer's own timing recorded."""
    head = EXPERIMENT.split("cluster {")[0]
    f = network["tmp"] / "rates.netspec"
    f.write_text(
        head + "cluster { serial {\n"
        "parallel { test m { type = burst (blocksize=12500, period=1000, duration=1); "
        "own = a:5031; peer = b:5031; }\n"
        "test mr { type = sink (blocksize=12500); own = b:5031; peer = a:5031; } }\n"
        "parallel { test g { type = burst (blocksize=125000, period=1000, duration=1); "
        "own = a:5032; peer = b:5032; }\n"
        "test gr { type = sink (blocksize=125000); own = b:5032; peer = a:5032; } }\n} }\n"
    )
    out = network["tmp"] / "rates.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(out / "runs").set_index("test")
    for test, offered in (("m", 100e6), ("g", 1e9)):
        row = rows.loc[test]
        assert row["offered_bps"] == pytest.approx(offered)
        assert row["throughput_bps"] == pytest.approx(offered, rel=0.02), test
        assert row["bytes"] == 1000 * offered / 8 / 1000
        assert row["limited_by"] == "application", row["limit_evidence"]
        assert row["timing_error_p50_us"] <= row["timing_error_p99_us"]
        assert row["timing_error_p99_us"] <= row["timing_error_max_us"]


def test_ctrl_c_stops_every_agent(network):
    """Ctrl-C during a 20 s transfer: the controller exits within 3 s, and the link is
    free at once for the next run (the agents stopped, not just the controller)."""
    head = EXPERIMENT.split("cluster {")[0]
    f = network["tmp"] / "long.netspec"
    f.write_text(
        head + "cluster { parallel {\n"
        "test a1 { type = full (blocksize=64K, duration=20); own = a:5021; peer = c:5021; }\n"
        "test c1 { type = sink (blocksize=64K); own = c:5021; peer = a:5021; }\n} }\n"
    )
    out = network["tmp"] / "long.result"
    args = ["run", str(f), "--engine", "real", "--out", str(out)]
    args += ["--scheduler", network["scheduler"], "--credentials", str(network["creds"])]
    ctl = subprocess.Popen(
        ["ip", "netns", "exec", network["ns"]["a"], *CELLBENCH, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out / "result.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)
        ctl.send_signal(signal.SIGINT)
        t = time.monotonic()
        _, err = ctl.communicate(timeout=30)
        took = time.monotonic() - t
    finally:
        if ctl.poll() is None:
            ctl.kill()
            ctl.wait()
    assert ctl.returncode == 130, err
    assert took < 3, took
    g = network["tmp"] / "after.netspec"
    g.write_text(
        head + "cluster { parallel {\n"
        "test a1 { type = full (blocksize=64K, nbytes=3M); own = a:5022; peer = c:5022; }\n"
        "test c1 { type = sink (blocksize=64K); own = c:5022; peer = a:5022; }\n} }\n"
    )
    after = network["tmp"] / "after.result"
    r = cellbench(
        "run", str(g), "--engine", "real", "--out", str(after),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    row = pd.read_parquet(after / "runs").iloc[0]
    # Alone on the bottleneck: the whole tbf rate, not a share beside a leftover agent.
    assert row["goodput_bps"] == pytest.approx(TBF_MBPS * 1e6, rel=0.1), row["limit_evidence"]


def test_a_killed_daemon_is_reported_and_resume_finishes(network):
    """Last in the module: it kills c's daemon, then starts it again."""
    f = network["tmp"] / "killed.netspec"
    f.write_text(
        EXPERIMENT.split("cluster {")[0]
        + "cluster { parallel {\n"
        + "test a1 { type = full (blocksize=64K, duration=3); own = a:5011; peer = c:5011; }\n"
        + "test c1 { type = sink (blocksize=64K); own = c:5011; peer = a:5011; }\n"
        + "} }\n"
    )
    out = network["tmp"] / "killed.result"
    args = ["run", str(f), "--engine", "real", "--out", str(out)]
    args += ["--scheduler", network["scheduler"], "--credentials", str(network["creds"])]
    ctl = subprocess.Popen(
        ["ip", "netns", "exec", network["ns"]["a"], *CELLBENCH, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out / "result.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # into the transfer
        daemons = network["daemons"]
        os.killpg(daemons.by_name["c"].pid, signal.SIGKILL)
        _, err = ctl.communicate(timeout=30)
    finally:
        if ctl.poll() is None:
            ctl.kill()
            ctl.wait()
    assert ctl.returncode == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("cellbench: error: connection a1 (a -> c): "), last
    assert "host c" in last
    # Start c's daemon again; --resume runs what is missing.
    daemons.start(
        "c",
        ["--listen", STAR["c"], "--scheduler", network["scheduler"], "--allow", STAR_NETWORK]
        + ["--credentials", str(network["creds"])],
        network["ns"]["c"],
    )
    r = cellbench(*args, "--resume", netns=network["ns"]["a"])
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(out / "runs")
    assert len(rows) == 1 and rows["bytes"].iloc[0] > 0


def test_a_real_result_as_a_page_in_chromium(network):
    """`cellbench report` on a real engine's result: its summary with the kernel's
    evidence, and the cwnd figure from TCP_INFO, rendered from disk by Chromium."""
    from browser import headers, rendered, table_rows

    f = network["tmp"] / "one.netspec"
    f.write_text(
        """
testbed {
    host a { address = 10.77.1.1; }
    host c { address = 10.77.2.2; }
}
cluster {
    test t { type = full (blocksize=64K, nbytes=4M); own = a:5011; peer = c:5011; }
    test r { type = sink (blocksize=64K); own = c:5011; peer = a:5011; }
}
"""
    )
    out = network["tmp"] / "one.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--series", "--out", str(out),
        "--scheduler", network["scheduler"], "--credentials", str(network["creds"]),
        netns=network["ns"]["a"],
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    page = network["tmp"] / "real.html"
    r = cellbench("report", str(out), "-o", str(page))
    assert r.returncode == 0, r.stderr
    dom = rendered(page)
    assert '<section class="result" data-engine="real">' in dom
    cols = headers(dom, "summary")
    (row,) = table_rows(dom, "summary")
    # The rate the sender measured (4 MB: its socket buffer and the bottleneck's burst
    # take part of it at once, so above the 50 Mb/s), and what bound it.
    assert float(row[cols.index("mean_mbps")]) > 10
    assert row[cols.index("limited_by")] and row[cols.index("limit_evidence")]
    assert '<figure data-kind="cwnd"><svg' in dom
