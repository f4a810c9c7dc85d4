"""The real engine's measurements and language coverage, on loopback: the cwnd series
from TCP_INFO (--series, plot --kind cwnd), each host's CPU and interface counters,
the kernel's congestion control and MSS per connection (a refusal is a note), and
random-rate traffic drawn from the run's seed."""

from __future__ import annotations

import socket
import sys

import pandas as pd
import pytest
from real_fixtures import Daemons, cellbench, processes_mentioning

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the real engine is Linux-only")

EXPERIMENT = """
testbed { host a { address = 127.0.0.1; } host b { address = 127.0.0.1; } }
cluster {
    parallel {
        test a1 { type = full (blocksize=64K, nbytes=64M);
                  protocol = tcp (congestion=reno, mss=1000); own = a:%(p1)d; peer = b:%(p1)d; }
        test b1 { type = sink (blocksize=64K); own = b:%(p1)d; peer = a:%(p1)d; }
        test a2 { type = full (blocksize=16K, nbytes=1M); protocol = tcp (congestion=nosuchcc);
                  own = a:%(p2)d; peer = b:%(p2)d; }
        test b2 { type = sink (blocksize=16K); own = b:%(p2)d; peer = a:%(p2)d; }
        test a3 { type = burst (blocksize=uniform(500, 1500), period=exponential(1000),
                                duration=0.6);
                  own = a:%(p3)d; peer = b:%(p3)d; }
        test b3 { type = sink (blocksize=2K); own = b:%(p3)d; peer = a:%(p3)d; }
    }
}
"""

#: max-rate: loopback carries more than the daemon's default cap of 10000 Mb/s, which then
#: holds a full blast (issue 24).
CATEGORIES = {"application", "link", "host-cpu", "window", "undetermined", "max-rate"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def daemons(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("measure")
    creds = tmp / "creds"
    assert cellbench("daemon", "--make-credentials", str(creds), "--hosts", "a,b,c").returncode == 0
    port = _free_port()
    d = Daemons(tmp)
    try:
        d.start("a", ["--listen", f"127.0.0.1:{port}", "--credentials", str(creds)])
        sched = f"tls://127.0.0.1:{port}"
        d.start("b", ["--scheduler", sched, "--credentials", str(creds)])
        yield {"scheduler": sched, "creds": creds, "tmp": tmp}
    finally:
        d.stop()
    assert processes_mentioning(str(creds)) == []


def _run(daemons, name: str, text: str, *extra: str):
    f = daemons["tmp"] / f"{name}.netspec"
    f.write_text(text)
    out = daemons["tmp"] / f"{name}.result"
    r = cellbench(
        "run", str(f), "--engine", "real", "--out", str(out),
        "--scheduler", daemons["scheduler"], "--credentials", str(daemons["creds"]), *extra,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def result(daemons):
    ports = {"p1": _free_port(), "p2": _free_port(), "p3": _free_port()}
    out = _run(daemons, "measure", EXPERIMENT % ports, "--series", "--seed", "5")
    return out, ports


def test_kernel_congestion_control_and_mss(result):
    rows = pd.read_parquet(result[0] / "runs").set_index("test")
    a1 = rows.loc["a1"]
    # No refusal: the kernel took reno and TCP_MAXSEG (the daemon's rate cap may be noted).
    notes = a1["notes"] if isinstance(a1["notes"], str) else ""
    assert a1["congestion"] == "reno" and "refused" not in notes, notes
    # TCP_MAXSEG 1000: the kernel's snd_mss is that less the TCP options it sends.
    assert 900 <= a1["mss"] <= 1000
    assert a1["bytes"] == 64 * 2**20


def test_a_refused_congestion_control_is_a_note(result):
    rows = pd.read_parquet(result[0] / "runs").set_index("test")
    a2 = rows.loc["a2"]
    assert a2["bytes"] == 2**20 and a2["completed"]
    assert a2["notes"].startswith("TCP_CONGESTION nosuchcc refused by the kernel"), a2["notes"]
    assert a2["congestion"] and f"ran {a2['congestion']}" in a2["notes"]


def test_host_and_interface_measures(result):
    rows = pd.read_parquet(result[0] / "runs").set_index("test")
    for test in ("a1", "a2", "a3"):
        row = rows.loc[test]
        assert row["tx_interface"] == row["rx_interface"] == "lo"
        for side in ("tx", "rx"):
            # /proc/stat counts in clock ticks (10 ms): a shorter connection has none.
            busy = row[f"{side}_cpu_busy"]
            assert 0 < busy <= 1 if test == "a3" else pd.isna(busy) or 0 <= busy <= 1
            assert row[f"{side}_agent_cpu"] >= 0
        # lo carried this connection's bytes and headers (and its neighbours').
        assert row["rx_if_bytes"] >= row["bytes"] and row["tx_if_bytes"] >= row["bytes"]
        assert row["limited_by"] in CATEGORIES, row["limit_evidence"]
        # The kernel's busy time counts clock ticks: a short connection may have none.
        assert row["tcp_busy_s"] > 0 if test == "a3" else row["tcp_busy_s"] >= 0
    # The kernel's busy time is at least its limited times (it includes them).
    a1 = rows.loc["a1"]
    assert a1["tcp_busy_s"] >= a1["rwnd_limited_s"] + a1["sndbuf_limited_s"] - 1e-6


def test_random_rate_draws_the_simulator_laws(result, daemons):
    rows = pd.read_parquet(result[0] / "runs").set_index("test")
    a3 = rows.loc["a3"]
    # Mean block 1000 bytes every 1000 µs on average: 8 Mb/s offered.
    assert a3["offered_bps"] == pytest.approx(8e6)
    assert a3["bytes"] / 0.6 * 8 == pytest.approx(8e6, rel=0.25)
    # The draws follow the run's seed: the same seed sends the same bytes, another not.
    ports = result[1]
    text = EXPERIMENT % ports
    again = _run(daemons, "again", text, "--seed", "5")
    other = _run(daemons, "other", text, "--seed", "6")
    same = pd.read_parquet(again / "runs").set_index("test").loc["a3", "bytes"]
    diff = pd.read_parquet(other / "runs").set_index("test").loc["a3", "bytes"]
    assert same == a3["bytes"]
    assert diff != a3["bytes"]


def test_random_rate_schedule_is_the_simulators(daemons):
    """The same file and seed on both engines: the same drawn schedule, so the bytes
    agree to within the last block (which each engine cuts at the duration's end in
    its own way: the simulator when the write would start, the agent when the block
    falls due). Independent draws would differ by thousands of bytes."""
    p = _free_port()
    text = EXPERIMENT.split("cluster {")[0] + (
        "cluster {\n"
        "test a1 { type = burst (blocksize=uniform(100, 1000), period=uniform(2000, 4000),\n"
        f"                        duration=1); own = a:{p}; peer = b:{p}; }}\n"
        f"test b1 {{ type = sink (blocksize=1000); own = b:{p}; peer = a:{p}; }}\n"
        "}\n"
    )
    args = ("--seed", "3", "--replications", "2")
    real = pd.read_parquet(_run(daemons, "schedule", text, *args) / "runs")
    f = daemons["tmp"] / "schedule.netspec"
    r = cellbench("run", str(f), *args, "--out", str(daemons["tmp"] / "schedule-sim.result"))
    assert r.returncode == 0, r.stderr
    sim = pd.read_parquet(daemons["tmp"] / "schedule-sim.result" / "runs")
    got = real.sort_values("replication")["bytes"].to_numpy()
    want = sim.sort_values("replication")["bytes"].to_numpy()
    assert (abs(got - want) <= 1000).all(), (got, want)
    assert abs(got[0] - got[1]) > 1000  # replications draw anew


def test_series_from_tcp_info_plots(result, tmp_path):
    out = result[0]
    rows = pd.read_parquet(out / "runs").set_index("test")
    series = pd.read_parquet(out / "cwnd")
    a1 = rows.loc["a1"]
    mine = series[series["connection"] == a1["connection"]].sort_values("t_s")
    # Every 10 ms from the first write until the sink closed (64 MB take a while even
    # on lo with a 1000-byte MSS), and one last sample at the end.
    assert len(mine) >= 3
    steps = mine["t_s"].diff().dropna().to_numpy()[:-1]
    assert 0.005 <= float(pd.Series(steps).median()) <= 0.05, steps
    assert mine["t_s"].min() >= a1["started_s"] - 0.05
    assert mine["t_s"].max() <= a1["ended_s"] + 1.0
    assert (mine["cwnd"] > 0).all() and (mine["srtt_us"] > 0).all()
    # Bytes, in whole segments of the connection's MSS.
    assert (mine["cwnd"] % a1["mss"] == 0).all()
    # One series per TCP connection.
    assert set(series["connection"]) == set(rows["connection"])
    png = tmp_path / "cwnd.png"
    r = cellbench("plot", str(out), "--kind", "cwnd", "--out", str(png))
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 1000


def test_the_receivers_interval_starts_at_accept_as_ttcp_r(result):
    """The sink times as ttcp -r: from accept() (TCP), to the last byte read; the
    row says so (receiver_clock) and keeps the reads' own span beside it."""
    rows = pd.read_parquet(result[0] / "runs").set_index("test")
    for test in ("a1", "a2", "a3"):
        row = rows.loc[test]
        assert row["receiver_clock"] == "accept"
        # Accepted once the source's connect() went through: around its first write,
        # before its last (the clocks are the same host's).
        assert row["start_s"] - 0.05 <= row["receiver_started_s"] <= row["started_s"] + 0.05
        # From accept to the last read: the reads' span and what came before the first.
        assert row["receiver_seconds"] >= row["receiver_read_seconds"] > 0, row
        assert row["receiver_started_s"] + row["receiver_seconds"] <= row["ended_s"] + 1e-3
        assert row["goodput_bps"] == pytest.approx(8 * row["bytes"] / row["receiver_seconds"])


def test_udp_loss_at_the_receivers_socket_buffer(daemons):
    """A UDP blast into a 4 KB receive buffer: the datagrams cross lo and overflow the
    sink's socket, which the row says (RcvbufErrors), not a lossy link."""
    p = _free_port()
    text = EXPERIMENT.split("cluster {")[0] + (
        "cluster { parallel {\n"
        f"test a1 {{ type = full (blocksize=1400, nbytes=20M); protocol = udp; "
        f"own = a:{p}; peer = b:{p}; }}\n"
        f"test b1 {{ type = sink (blocksize=1400); protocol = udp (window=4K); "
        f"own = b:{p}; peer = a:{p}; }}\n"
        "} }\n"
    )
    row = pd.read_parquet(_run(daemons, "udp", text) / "runs").iloc[0]
    assert row["bytes"] < 20 * 2**20
    lost = row["datagrams_sent"] - row["datagrams_received"]
    assert row["rx_udp_rcvbuf_errors"] >= lost > 0
    assert row["limited_by"] == "host-cpu", row["limit_evidence"]
    assert "RcvbufErrors" in row["limit_evidence"]
    # UDP has no accept: the receiver's interval is its reads', from the first datagram.
    assert row["receiver_clock"] == "first datagram"
    assert row["receiver_seconds"] == row["receiver_read_seconds"] > 0


def test_the_simulator_notes_what_only_the_kernel_does(tmp_path):
    f = tmp_path / "sim.netspec"
    f.write_text(
        "cluster {\n"
        "test a1 { type = full (nbytes=64K); protocol = tcp (congestion=bbr, mss=1000);\n"
        "          own = a:1; peer = b:1; }\n"
        "test b1 { type = sink; own = b:1; peer = a:1; }\n}\n"
    )
    r = cellbench("run", str(f), "--check")
    assert r.returncode == 0, r.stderr
    assert "congestion=bbr and mss=1000 set the kernel's TCP for --engine real" in r.stderr
    f.write_text(
        f.read_text().replace(
            "protocol = tcp (congestion=bbr, mss=1000)", "protocol = udp (mss=1000)"
        )
    )
    r = cellbench("run", str(f), "--check")
    assert (
        r.returncode == 2
        and "sim.netspec:2:" in r.stderr
        and "congestion and mss are TCP's" in r.stderr
    )
    f.write_text(f.read_text().replace("protocol = udp (mss=1000)", "protocol = tcp (mss=40)"))
    r = cellbench("run", str(f), "--check")
    assert r.returncode == 2 and "mss" in r.stderr, r.stderr
